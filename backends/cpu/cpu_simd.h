/* Vector helpers and the one microkernel of the CPU backend, written with GCC/Clang
 * vector extensions so the same source compiles to AVX-512, AVX2, SSE2 or NEON.
 * Include once per translation unit after defining PA_VL, PA_MR and PA_NV
 * (cpu_tune.h); isa_*.c do so with their -m flags. Everything here is static. */
#ifndef PA_CPU_SIMD_H
#define PA_CPU_SIMD_H

#include <stdint.h>

#if !defined(PA_VL) || !defined(PA_MR) || !defined(PA_NV)
#error "define PA_VL, PA_MR and PA_NV (cpu_tune.h) before including cpu_simd.h"
#endif

#define PA_NR (PA_NV * PA_VL) /* microkernel columns */

typedef float pa_vf __attribute__((vector_size(PA_VL * 4)));
typedef int32_t pa_vi __attribute__((vector_size(PA_VL * 4)));
typedef uint32_t pa_vu __attribute__((vector_size(PA_VL * 4)));
/* The same vector at 4-byte alignment: loads/stores through it are unaligned-safe. */
typedef float pa_vf_u __attribute__((vector_size(PA_VL * 4), aligned(4)));

#define PA_INLINE static inline __attribute__((always_inline))

PA_INLINE pa_vf pa_vload(const float *p) { return *(const pa_vf_u *)p; }
PA_INLINE void pa_vstore(float *p, pa_vf v) { *(pa_vf_u *)p = v; }
PA_INLINE pa_vf pa_vsplat(float x) {
  /* Lane by lane rather than {0} + x, which costs a real addition (x + 0 is not
   * x for x = -0). Compilers turn this into one broadcast. */
  pa_vf v;
  for (int i = 0; i < PA_VL; ++i) v[i] = x;
  return v;
}

PA_INLINE pa_vf pa_vselect(pa_vi mask, pa_vf a, pa_vf b) { /* mask ? a : b */
  return (pa_vf)(((pa_vi)a & mask) | ((pa_vi)b & ~mask));
}
PA_INLINE pa_vf pa_vmax(pa_vf a, pa_vf b) { return pa_vselect(a > b, a, b); }
PA_INLINE pa_vf pa_vmin(pa_vf a, pa_vf b) { return pa_vselect(a < b, a, b); }

/* Horizontal max / sum by halving: a fixed order (the same bits on every run and
 * thread), in registers (indexing lanes one by one goes through the stack). */
typedef float pa_v4 __attribute__((vector_size(16)));
#if PA_VL >= 8
typedef float pa_v8 __attribute__((vector_size(32)));
#endif
PA_INLINE pa_v4 pa_vmax4(pa_v4 a, pa_v4 b) {
  pa_v4 r;
  for (int i = 0; i < 4; ++i) r[i] = a[i] > b[i] ? a[i] : b[i];
  return r;
}
PA_INLINE pa_v4 pa_vfold4(pa_vf v, int is_max) {
#if PA_VL == 16
  pa_v8 lo8, hi8;
  __builtin_memcpy(&lo8, &v, 32);
  __builtin_memcpy(&hi8, (const char *)&v + 32, 32);
  pa_v8 m8;
  if (is_max) {
    for (int i = 0; i < 8; ++i) m8[i] = lo8[i] > hi8[i] ? lo8[i] : hi8[i];
  } else {
    m8 = lo8 + hi8;
  }
#elif PA_VL == 8
  pa_v8 m8 = v;
#endif
#if PA_VL >= 8
  pa_v4 lo, hi;
  __builtin_memcpy(&lo, &m8, 16);
  __builtin_memcpy(&hi, (const char *)&m8 + 16, 16);
  return is_max ? pa_vmax4(lo, hi) : lo + hi;
#else
  (void)is_max;
  return v;
#endif
}
PA_INLINE float pa_hmax(pa_vf v) {
  pa_v4 m = pa_vfold4(v, 1);
  float a = m[0] > m[1] ? m[0] : m[1], b = m[2] > m[3] ? m[2] : m[3];
  return a > b ? a : b;
}
PA_INLINE float pa_hsum(pa_vf v) {
  pa_v4 s = pa_vfold4(v, 0);
  return (s[0] + s[2]) + (s[1] + s[3]);
}

/* dst[0, n) += src[0, n), n a multiple of VL. */
PA_INLINE void pa_vadd_to(float *dst, const float *src, int64_t n) {
  for (int64_t e = 0; e < n; e += PA_VL) pa_vstore(dst + e, pa_vload(dst + e) + pa_vload(src + e));
}

/* exp(x) per lane, Cephes expf: x = n ln2 + r with |r| <= ln2 / 2, then a degree-6
 * polynomial for e^r and 2^n through the exponent bits; within 2 ulp of expf on
 * [-87.33, 88.7]. Below -87.33 (where expf would go subnormal, i.e. < 1.2e-38) and
 * for -inf it returns 0, which is what masked scores need. */
PA_INLINE pa_vf pa_vexp(pa_vf x) {
  const pa_vf magic = pa_vsplat(12582912.0f); /* 1.5 * 2^23: adding it rounds to integer */
  pa_vi live = x >= pa_vsplat(-87.33f);
  pa_vf xc = pa_vmin(pa_vmax(x, pa_vsplat(-87.33f)), pa_vsplat(88.7f));
  pa_vf t = xc * 1.44269504088896341f + magic;
  pa_vf fn = t - magic;                       /* round(x / ln2) */
  pa_vi n = (pa_vi)t - (pa_vi)magic;          /* the same, as an integer */
  pa_vf r = xc - fn * 0.693359375f;           /* exact: 0.693359375 has 9 bits */
  r = r - fn * -2.12194440e-4f;
  pa_vf y = pa_vsplat(1.9875691500e-4f);
  y = y * r + 1.3981999507e-3f;
  y = y * r + 8.3334519073e-3f;
  y = y * r + 4.1665795894e-2f;
  y = y * r + 1.6666665459e-1f;
  y = y * r + 5.0000001201e-1f;
  y = y * (r * r) + r + 1.0f;
  pa_vf two_n = (pa_vf)((pa_vu)(n + 127) << 23);
  return (pa_vf)((pa_vi)(y * two_n) & live);
}

/* The microkernel: C[MR x nv*VL] (+)= A[MR x K] . B[K x nv*VL].
 * A(i, k) is the scalar a[i * ars + k * acs] (broadcast); B row k is the vector run at
 * b + k * ldb; C row i is at c + i * ldc. One source serves S = Q K^T (A = Q,
 * B = packed K^T) and O += P V (A = P, B = the V tile), and in the backward the
 * transposed products through (ars, acs). nv is a literal at every call. */
PA_INLINE void pa_mk(int nv, int64_t K, const float *a, int64_t ars, int64_t acs,
                     const float *b, int64_t ldb, float *c, int64_t ldc, int accumulate) {
  pa_vf acc[PA_MR][PA_NV];
#pragma GCC unroll 16
  for (int i = 0; i < PA_MR; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < nv; ++v)
      acc[i][v] = accumulate ? pa_vload(c + i * ldc + v * PA_VL) : pa_vsplat(0.0f);
  for (int64_t k = 0; k < K; ++k) {
    pa_vf bv[PA_NV];
#pragma GCC unroll 4
    for (int v = 0; v < nv; ++v) bv[v] = pa_vload(b + k * ldb + v * PA_VL);
#pragma GCC unroll 16
    for (int i = 0; i < PA_MR; ++i) {
      /* vector * scalar: one broadcast load (embedded {1toN} on AVX-512) */
      const float av = a[i * ars + k * acs];
#pragma GCC unroll 4
      for (int v = 0; v < nv; ++v) acc[i][v] += bv[v] * av;
    }
  }
#pragma GCC unroll 16
  for (int i = 0; i < PA_MR; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < nv; ++v) pa_vstore(c + i * ldc + v * PA_VL, acc[i][v]);
}

/* C[M x N] (+)= A[M x K] . B[K x N] with M a multiple of MR and N of VL. */
static void pa_gemm(int64_t M, int64_t N, int64_t K, const float *a, int64_t ars,
                    int64_t acs, const float *b, int64_t ldb, float *c, int64_t ldc,
                    int accumulate) {
  for (int64_t i = 0; i < M; i += PA_MR) {
    const float *ai = a + i * ars;
    float *ci = c + i * ldc;
    int64_t j = 0;
    for (; j + PA_NR <= N; j += PA_NR)
      pa_mk(PA_NV, K, ai, ars, acs, b + j, ldb, ci + j, ldc, accumulate);
    for (; j < N; j += PA_VL) pa_mk(1, K, ai, ars, acs, b + j, ldb, ci + j, ldc, accumulate);
  }
}

#endif
