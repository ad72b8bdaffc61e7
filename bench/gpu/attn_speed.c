/* attn_speed: one attention shape, several variants of the backend's settings,
 * each timed in one process, for the GPU rounds (bench/gpu/vulkan.sh). A variant
 * is a list of environment settings the backend reads per call ("-" for none),
 * e.g. POLYATTN_VULKAN_DECODE_U=2,POLYATTN_VULKAN_SPLITS=64; settings the backend
 * reads only when a context is made (a variant starting with '+') get a fresh
 * context.
 *
 *   attn_speed --backend vulkan --dtype f16 --batch 8 --heads 32 --kv-heads 8
 *              --dim 128 --seq-q 1 --seq-k 32768 [--causal] [--warm S] [--iters N]
 *              VARIANT...
 *
 * (--kv-heads defaults to --heads, as in `polyattn run`.)
 *
 * Inputs are uniform in (-1.73, 1.73) (variance 1), from a fast generator: the
 * CLI's Box-Muller fill takes seconds at these sizes. Per variant: forwards for
 * --warm seconds (clocks ramp up under load), then --iters forwards back to back,
 * one synchronise at the end: the mean time per call, the rate (TFLOP/s by
 * DESIGN.md's count; for Sq <= 16 also the K+V bytes per second), and the output's
 * difference from the first variant's (max |a - b| and ||a - b|| / ||b||), so a
 * variant that computes something else shows. The oracle check is the test
 * sweep's and `polyattn run`'s job, not this tool's. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "polyattn.h"

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static uint16_t f32_to_f16(float f) { /* round to nearest even; normal range only */
  uint32_t x;
  memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
  if (ax < 0x38800000u) return (uint16_t)sign; /* below fp16's normal range: 0 */
  return (uint16_t)(sign | ((ax + 0xc8000fffu + ((ax >> 13) & 1u)) >> 13));
}

static uint16_t f32_to_bf16(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

static float f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu, u;
  if (e == 0) {
    float f = ldexpf((float)m, -24);
    return sign ? -f : f;
  }
  u = e == 31 ? sign | 0x7f800000u | (m << 13) : sign | ((e + 112) << 23) | (m << 13);
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static float bf16_to_f32(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

/* Uniform values in (-1.73, 1.73) in dtype (2 or 4 bytes each). */
static void fill(void *dst, size_t n, polyattn_dtype dt, uint64_t seed) {
  uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
  for (size_t i = 0; i < n; ++i) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    float x = ((float)(s >> 40) * (1.0f / 16777216.0f) - 0.5f) * 3.46f;
    if (dt == POLYATTN_DTYPE_FP8_E4M3) /* e4m3 codes of |x| < 2 (exponent <= 7), both signs */
      ((uint8_t *)dst)[i] = (uint8_t)(((s >> 40) & 0x3f) | ((s >> 32) & 0x80));
    else if (dt == POLYATTN_DTYPE_F32) ((float *)dst)[i] = x;
    else ((uint16_t *)dst)[i] = dt == POLYATTN_DTYPE_F16 ? f32_to_f16(x) : f32_to_bf16(x);
  }
}

static float elem(const void *src, size_t i, polyattn_dtype dt) {
  if (dt == POLYATTN_DTYPE_F32) return ((const float *)src)[i];
  uint16_t h = ((const uint16_t *)src)[i];
  return dt == POLYATTN_DTYPE_F16 ? f16_to_f32(h) : bf16_to_f32(h);
}

/* Apply (set = 1) or clear a variant's NAME=VALUE,... settings. */
static void apply(const char *variant, int set) {
  if (!strcmp(variant, "-")) return;
  char buf[512];
  snprintf(buf, sizeof buf, "%s", variant[0] == '+' ? variant + 1 : variant);
  for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
    char *eq = strchr(tok, '=');
    if (!eq) continue;
    *eq = '\0';
    if (set) setenv(tok, eq + 1, 1);
    else unsetenv(tok);
  }
}

static int ok(polyattn_status st, polyattn_context *ctx, const char *what) {
  if (st == POLYATTN_OK) return 1;
  fprintf(stderr, "attn_speed: %s: %s: %s\n", what, polyattn_status_string(st), polyattn_last_error(ctx));
  return 0;
}

int main(int argc, char **argv) {
  int64_t B = 8, H = 32, HK = 0, D = 128, SQ = 1, SK = 32768; /* HK 0: = H */
  int causal = 0, iters = 50;
  double warm = 1.0;
  polyattn_backend_kind backend = POLYATTN_BACKEND_AUTO;
  polyattn_dtype dt = POLYATTN_DTYPE_F16;
  int first_variant = argc;
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : "";
    if (!strcmp(a, "--backend")) {
      backend = !strcmp(v, "vulkan") ? POLYATTN_BACKEND_VULKAN
                : !strcmp(v, "cuda") ? POLYATTN_BACKEND_CUDA
                : !strcmp(v, "cpu")  ? POLYATTN_BACKEND_CPU
                                     : POLYATTN_BACKEND_AUTO;
      ++i;
    } else if (!strcmp(a, "--dtype")) {
      dt = !strcmp(v, "f32")    ? POLYATTN_DTYPE_F32
           : !strcmp(v, "bf16") ? POLYATTN_DTYPE_BF16
           : !strcmp(v, "fp8")  ? POLYATTN_DTYPE_FP8_E4M3 /* q, k, v; out bf16 */
                                : POLYATTN_DTYPE_F16;
      ++i;
    } else if (!strcmp(a, "--batch")) B = atoll(v), ++i;
    else if (!strcmp(a, "--heads")) H = atoll(v), ++i;
    else if (!strcmp(a, "--kv-heads")) HK = atoll(v), ++i;
    else if (!strcmp(a, "--dim")) D = atoll(v), ++i;
    else if (!strcmp(a, "--seq-q")) SQ = atoll(v), ++i;
    else if (!strcmp(a, "--seq-k")) SK = atoll(v), ++i;
    else if (!strcmp(a, "--seq")) SQ = SK = atoll(v), ++i;
    else if (!strcmp(a, "--iters")) iters = atoi(v), ++i;
    else if (!strcmp(a, "--warm")) warm = atof(v), ++i;
    else if (!strcmp(a, "--causal")) causal = 1;
    else if (a[0] == '-' && a[1] == '-') {
      fprintf(stderr, "attn_speed: unknown option %s (see the comment at the top of attn_speed.c)\n", a);
      return 2;
    } else {
      first_variant = i;
      break;
    }
  }
  if (HK <= 0) HK = H;
  if (first_variant >= argc) {
    fprintf(stderr, "attn_speed: no variant given (\"-\" for the defaults)\n");
    return 2;
  }
  const size_t es = dt == POLYATTN_DTYPE_F32 ? 4 : dt == POLYATTN_DTYPE_FP8_E4M3 ? 1 : 2;
  /* the output: bf16 for fp8 inputs */
  const polyattn_dtype dto = dt == POLYATTN_DTYPE_FP8_E4M3 ? POLYATTN_DTYPE_BF16 : dt;
  const size_t eo = dt == POLYATTN_DTYPE_F32 ? 4 : 2;
  const size_t nq = (size_t)(B * SQ * H * D), nk = (size_t)(B * SK * HK * D);
  void *hq = malloc(nq * es), *hk = malloc(nk * es), *hv = malloc(nk * es);
  void *ho = malloc(nq * eo), *ref = malloc(nq * eo);
  if (!hq || !hk || !hv || !ho || !ref) return 1;
  fill(hq, nq, dt, 1);
  fill(hk, nk, dt, 2);
  fill(hv, nk, dt, 3);
  const double flops = 4.0 * B * H * SQ * SK * D * (causal ? 0.5 : 1.0);
  const double kv_bytes = 2.0 * (double)nk * (double)es;
  printf("attn_speed B=%lld Hq=%lld Hkv=%lld D=%lld Sq=%lld Sk=%lld%s dtype %s, %d iters after %.1f s warm\n",
         (long long)B, (long long)H, (long long)HK, (long long)D, (long long)SQ, (long long)SK,
         causal ? " causal" : "", polyattn_dtype_name(dt),
         iters, warm);
  printf("%-60s %10s %12s %10s %10s %10s\n", "variant", "ms/call", "TFLOP/s", "TB/s(KV)", "max|d|", "rel");

  polyattn_context *ctx = NULL;
  polyattn_buffer *bq = NULL, *bk = NULL, *bv = NULL, *bo = NULL;
  int status = 0;
  for (int vi = first_variant; vi < argc; ++vi) {
    const char *variant = argv[vi];
    apply(variant, 1);
    if (!ctx || variant[0] == '+') { /* a new context (and buffers) */
      polyattn_buffer_free(bq), polyattn_buffer_free(bk), polyattn_buffer_free(bv), polyattn_buffer_free(bo);
      bq = bk = bv = bo = NULL;
      polyattn_context_destroy(ctx);
      ctx = NULL;
      polyattn_context_desc desc;
      polyattn_context_desc_init(&desc);
      desc.backend = backend;
      if (!ok(polyattn_context_create(&desc, &ctx), NULL, "polyattn_context_create") ||
          !ok(polyattn_buffer_alloc(ctx, nq * es, &bq), ctx, "alloc q") ||
          !ok(polyattn_buffer_alloc(ctx, nk * es, &bk), ctx, "alloc k") ||
          !ok(polyattn_buffer_alloc(ctx, nk * es, &bv), ctx, "alloc v") ||
          !ok(polyattn_buffer_alloc(ctx, nq * eo, &bo), ctx, "alloc o") ||
          !ok(polyattn_buffer_write(ctx, bq, 0, hq, nq * es), ctx, "write q") ||
          !ok(polyattn_buffer_write(ctx, bk, 0, hk, nk * es), ctx, "write k") ||
          !ok(polyattn_buffer_write(ctx, bv, 0, hv, nk * es), ctx, "write v"))
        return 1;
    }
    const int64_t sq_shape[4] = {B, SQ, H, D}, sk_shape[4] = {B, SK, HK, D};
    polyattn_tensor tq, tk, tv, to;
    polyattn_tensor_contiguous(&tq, bq, 0, dt, 4, sq_shape);
    polyattn_tensor_contiguous(&tk, bk, 0, dt, 4, sk_shape);
    polyattn_tensor_contiguous(&tv, bv, 0, dt, 4, sk_shape);
    polyattn_tensor_contiguous(&to, bo, 0, dto, 4, sq_shape);
    polyattn_params params;
    polyattn_params_init(&params);
    params.causal = causal;
    fprintf(stderr, "attn_speed: variant %s\n", variant);
    /* poison the output, one call, read it back */
    memset(ho, 0xff, nq * eo);
    int good = ok(polyattn_buffer_write(ctx, bo, 0, ho, nq * eo), ctx, "write o") &&
               ok(polyattn_forward(ctx, &params, &tq, &tk, &tv, &to, NULL, NULL), ctx, "forward") &&
               ok(polyattn_synchronize(ctx), ctx, "synchronize") &&
               ok(polyattn_buffer_read(ctx, bo, 0, ho, nq * eo), ctx, "read o");
    if (!good) {
      printf("%-60s %10s\n", variant, "FAILED");
      status = 1;
      apply(variant, 0);
      continue;
    }
    double t0 = now_s();
    while (now_s() - t0 < warm) {
      for (int i = 0; i < 8; ++i) (void)polyattn_forward(ctx, &params, &tq, &tk, &tv, &to, NULL, NULL);
      (void)polyattn_synchronize(ctx);
    }
    fprintf(stderr, "attn_speed: timed %s\n", variant);
    t0 = now_s();
    for (int i = 0; i < iters; ++i) (void)polyattn_forward(ctx, &params, &tq, &tk, &tv, &to, NULL, NULL);
    good = ok(polyattn_synchronize(ctx), ctx, "synchronize");
    const double ms = (now_s() - t0) * 1e3 / iters;
    fprintf(stderr, "attn_speed: end %s\n", variant);
    double maxd = 0, d2 = 0, r2 = 0;
    int nan = 0;
    if (vi == first_variant) memcpy(ref, ho, nq * eo);
    for (size_t i = 0; i < nq; ++i) {
      float a = elem(ho, i, dto), b = elem(ref, i, dto);
      if (a != a) nan = 1;
      double d = fabs((double)a - b);
      if (d > maxd) maxd = d;
      d2 += d * d, r2 += (double)b * b;
    }
    printf("%-60s %10.4f %12.2f %10.3f %10.2e %10.2e%s\n", variant, ms, flops / (ms * 1e-3) / 1e12,
           SQ <= 16 ? kv_bytes / (ms * 1e-3) / 1e12 : 0.0, maxd, r2 > 0 ? sqrt(d2 / r2) : 0.0,
           nan ? "  NaN!" : "");
    fflush(stdout);
    if (!good || nan) status = 1;
    apply(variant, 0);
  }
  polyattn_buffer_free(bq), polyattn_buffer_free(bk), polyattn_buffer_free(bv), polyattn_buffer_free(bo);
  polyattn_context_destroy(ctx);
  free(hq), free(hk), free(hv), free(ho), free(ref);
  return status;
}
