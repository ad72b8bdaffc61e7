/* AMD GPU target names (gfx<major><minor><stepping>[:features]) and what the HIP
 * module makes of them: the pa_cuda_device encoding (hip_kernels.h), whether the
 * module has a code object for a target, and which targets have the MFMA
 * instructions of fwd_mfma.cu (backends/hip/mfma.cuh). Plain C, host only, so
 * tests/test_hip.c checks it on any machine. */
#ifndef PA_HIP_ARCH_H
#define PA_HIP_ARCH_H

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "polyattn.h"

/* "gfx90a:sramecc+:xnack-" -> "gfx90a" (the target without its feature flags). */
static inline void pa_hip_base_arch(const char *name, char *out, size_t len) {
  snprintf(out, len, "%.63s", name);
  char *colon = strchr(out, ':');
  if (colon) *colon = '\0';
}

/* "gfx90a" -> major 9, minor 0x0a (minor and stepping as one hex byte);
 * "gfx1030" -> 10, 0x30; "gfx942" -> 9, 0x42. 0 when the name is not gfx<digits>. */
static inline int pa_hip_parse_arch(const char *name, int *major, int *minor) {
  if (strncmp(name, "gfx", 3) != 0) return 0;
  char digits[8];
  size_t n = 0;
  for (const char *s = name + 3; *s && *s != ':'; ++s) {
    if (!isxdigit((unsigned char)*s) || n == sizeof digits - 1) return 0;
    digits[n++] = *s;
  }
  digits[n] = '\0';
  if (n < 3) return 0; /* major (1-2 decimal digits), minor, stepping (hex) */
  char *end;
  const long lo = strtol(digits + n - 2, &end, 16);
  digits[n - 2] = '\0';
  const long hi = strtol(digits, &end, 10);
  if (*end != '\0' || hi <= 0) return 0;
  *major = (int)hi;
  *minor = (int)lo;
  return 1;
}

/* Whether `arch` (a base target name) is one of the ";"-separated `list`. */
static inline int pa_hip_arch_listed(const char *arch, const char *list) {
  const size_t n = strlen(arch);
  for (const char *s = list; *s;) {
    const char *end = strchr(s, ';');
    const size_t len = end ? (size_t)(end - s) : strlen(s);
    if (len == n && strncmp(s, arch, n) == 0) return 1;
    if (!end) break;
    s = end + 1;
  }
  return 0;
}

/* Whether target (major, minor) has the MFMA instructions fwd_mfma.cu uses for
 * `dtype`: v_mfma_f32_32x32x8f16 on gfx908, gfx90a, gfx94x; _32x32x8bf16_1k on
 * gfx90a and gfx94x (gfx908's bf16 MFMA has another shape). */
static inline int pa_hip_arch_has_mfma(int major, int minor, polyattn_dtype dtype) {
  if (major != 9) return 0;
  const int gfx90a = minor == 0x0a, gfx94x = minor >= 0x40 && minor <= 0x42;
  if (dtype == POLYATTN_DTYPE_F16) return minor == 0x08 || gfx90a || gfx94x;
  if (dtype == POLYATTN_DTYPE_BF16) return gfx90a || gfx94x;
  return 0;
}

#endif
