#define _POSIX_C_SOURCE 200809L
#include "args.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int arg_is(arg_cursor *c, const char *name) {
  const char *a = c->argv[c->i];
  size_t n = strlen(name);
  if (strncmp(a, name, n) != 0) return 0;
  if (a[n] == '\0') {
    c->inline_value = NULL;
    return 1;
  }
  if (a[n] == '=') {
    c->inline_value = a + n + 1;
    return 1;
  }
  return 0;
}

const char *arg_value(arg_cursor *c) {
  if (c->inline_value) return c->inline_value;
  if (c->i + 1 >= c->argc) {
    fprintf(stderr, "polyattn: %s needs a value\n", c->argv[c->i]);
    return NULL;
  }
  return c->argv[++c->i];
}

int arg_parse_int(const char *flag, const char *text, int64_t min, int64_t max, int64_t *out) {
  if (!text) return 0;
  char *end;
  errno = 0;
  long long v = strtoll(text, &end, 10);
  if (errno || end == text || *end != '\0' || v < min || v > max) {
    fprintf(stderr, "polyattn: %s: '%s' is not an integer in [%lld, %lld]\n", flag, text,
            (long long)min, (long long)max);
    return 0;
  }
  *out = v;
  return 1;
}

int arg_parse_i32(const char *flag, const char *text, int32_t min, int32_t max, int32_t *out) {
  int64_t v;
  if (!arg_parse_int(flag, text, min, max, &v)) return 0;
  *out = (int32_t)v;
  return 1;
}

int arg_parse_float(const char *flag, const char *text, double min, double max, double *out) {
  if (!text) return 0;
  char *end;
  errno = 0;
  double v = strtod(text, &end);
  if (errno || end == text || *end != '\0' || !isfinite(v) || v < min || v > max) {
    fprintf(stderr, "polyattn: %s: '%s' is not a number in [%g, %g]\n", flag, text, min, max);
    return 0;
  }
  *out = v;
  return 1;
}

int arg_parse_list(const char *flag, const char *text, int32_t min, int32_t max, int32_t *vals,
                   int cap, int *n) {
  if (!text) return 0;
  char buf[512];
  if (strlen(text) >= sizeof buf) {
    fprintf(stderr, "polyattn: %s: list too long\n", flag);
    return 0;
  }
  strcpy(buf, text);
  *n = 0;
  for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
       tok = strtok_r(NULL, ",", &save)) {
    if (*n == cap) {
      fprintf(stderr, "polyattn: %s: at most %d values\n", flag, cap);
      return 0;
    }
    if (!arg_parse_i32(flag, tok, min, max, &vals[*n])) return 0;
    ++*n;
  }
  if (*n == 0) {
    fprintf(stderr, "polyattn: %s: empty list\n", flag);
    return 0;
  }
  return 1;
}

int arg_parse_window(const char *flag, const char *text, int32_t *left, int32_t *right) {
  if (!text) return 0;
  const char *comma = strchr(text, ',');
  if (!comma) {
    fprintf(stderr, "polyattn: %s: expected L,R (e.g. 256,0; -1 = unbounded)\n", flag);
    return 0;
  }
  char l[64];
  size_t n = (size_t)(comma - text);
  if (n >= sizeof l) n = sizeof l - 1;
  memcpy(l, text, n);
  l[n] = '\0';
  return arg_parse_i32(flag, l, -1, INT32_MAX, left) &&
         arg_parse_i32(flag, comma + 1, -1, INT32_MAX, right);
}

int arg_parse_backend(const char *text, polyattn_backend_kind *out) {
  if (!text) return 0;
  static const polyattn_backend_kind kinds[] = {POLYATTN_BACKEND_AUTO, POLYATTN_BACKEND_CPU,
                                                POLYATTN_BACKEND_CUDA, POLYATTN_BACKEND_HIP,
                                                POLYATTN_BACKEND_VULKAN};
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
    const char *name = kinds[i] == POLYATTN_BACKEND_AUTO ? "auto" : polyattn_backend_name(kinds[i]);
    if (name && !strcmp(text, name)) {
      *out = kinds[i];
      return 1;
    }
  }
  fprintf(stderr, "polyattn: --backend: '%s' is not one of auto, cpu, cuda, hip, vulkan\n", text);
  return 0;
}

int arg_parse_dtype(const char *text, polyattn_dtype *out) {
  if (!text) return 0;
  if (!strcmp(text, "f32") || !strcmp(text, "fp32") || !strcmp(text, "float32")) {
    *out = POLYATTN_DTYPE_F32;
  } else if (!strcmp(text, "f16") || !strcmp(text, "fp16") || !strcmp(text, "float16")) {
    *out = POLYATTN_DTYPE_F16;
  } else if (!strcmp(text, "bf16") || !strcmp(text, "bfloat16")) {
    *out = POLYATTN_DTYPE_BF16;
  } else if (!strcmp(text, "fp8") || !strcmp(text, "e4m3") || !strcmp(text, "fp8_e4m3")) {
    *out = POLYATTN_DTYPE_FP8_E4M3; /* q, k, v; out bf16; descales 1 */
  } else {
    fprintf(stderr, "polyattn: --dtype: '%s' is not one of f32, f16, bf16, fp8\n", text);
    return 0;
  }
  return 1;
}

static const struct {
  const char *name;
  polyattn_sparsity mode;
} sparsity_names[] = {{"none", POLYATTN_SPARSITY_NONE},
                      {"block", POLYATTN_SPARSITY_BLOCK},
                      {"auto", POLYATTN_SPARSITY_AUTO_BLOCK},
                      {"2:4", POLYATTN_SPARSITY_NM_2_4}};

int arg_parse_sparsity(const char *text, polyattn_sparsity *out) {
  if (!text) return 0;
  for (size_t i = 0; i < sizeof sparsity_names / sizeof sparsity_names[0]; i++) {
    if (!strcmp(text, sparsity_names[i].name)) {
      *out = sparsity_names[i].mode;
      return 1;
    }
  }
  fprintf(stderr, "polyattn: --sparsity: '%s' is not one of none, block, auto, 2:4\n", text);
  return 0;
}

const char *sparsity_name(polyattn_sparsity s) {
  for (size_t i = 0; i < sizeof sparsity_names / sizeof sparsity_names[0]; i++)
    if (sparsity_names[i].mode == s) return sparsity_names[i].name;
  return "?";
}

int arg_unknown(const char *command, const char *arg) {
  fprintf(stderr, "polyattn %s: unknown argument '%s' (try 'polyattn %s --help')\n", command,
          arg, command);
  return 0;
}
