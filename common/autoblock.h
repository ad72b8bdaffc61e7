/* The AUTO_BLOCK estimator's arithmetic, written once for the CPU (autoblock.c) and
 * CUDA (backends/cuda/auto_block.cu) so that both compute every value alike, bit
 * for bit, and therefore choose the same mask (decision 79):
 *
 *   - float32 throughout; every operation is one of pa_ab_add/sub/mul/div/fma below,
 *     each rounded once to nearest (the device uses the _rn intrinsics, which nvcc
 *     never contracts; common/ is C11 without extensions, so GCC does not contract,
 *     and clang contracts only inside one expression, which these never hold);
 *   - the exponential (and tanh, under softcap) are pa_ab_exp / pa_ab_tanh, a
 *     polynomial of fmas, not either side's libm;
 *   - every sum runs in a fixed order, defined here, that a GPU can compute in
 *     parallel:
 *       pooled rows:  PA_AB_POOL_CHAINS interleaved chains (chain c adds rows
 *                     r0 + c, r0 + c + 8, ... in order, from +0), combined as
 *                     ((c0 + c1) + (c2 + c3)) + ((c4 + c5) + (c6 + c7)), then
 *                     divided by the row count;
 *       dot product:  one fma chain over the dims in order, from +0;
 *       mass of a set of key blocks (pa_ab_lane_sum):  "lane" l in [0, 32) adds
 *                     the masses of the set's blocks kb = l, l + 32, l + 64, ... in
 *                     order, from +0; then five butterfly steps, o = 16, 8, 4, 2, 1:
 *                     v[l] = v[l] + v[l ^ o] (all lanes end with the same value).
 *
 * A warp computes each of these with one lane per chain or per block, so the
 * choice needs no serial walk; the CPU replays the same order. */
#ifndef PA_AUTOBLOCK_H
#define PA_AUTOBLOCK_H

#include <stdint.h>
#include <string.h>

#include "mask.h"
#include "portable.h"

enum { PA_AB_POOL_CHAINS = 8, PA_AB_LANES = 32 };

PA_HD static inline float pa_ab_add(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}
PA_HD static inline float pa_ab_sub(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fsub_rn(a, b);
#else
  return a - b;
#endif
}
PA_HD static inline float pa_ab_mul(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
PA_HD static inline float pa_ab_div(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fdiv_rn(a, b);
#else
  return a / b;
#endif
}
PA_HD static inline float pa_ab_fma(float a, float b, float c) {
#if defined(__CUDA_ARCH__)
  return __fmaf_rn(a, b, c);
#else
  return fmaf(a, b, c);
#endif
}

/* e^x for x <= 0: 2^k * p(f) with t = x * log2(e), k = rint(t), f = t - k (exact)
 * and p a degree-6 Taylor polynomial of 2^f on [-1/2, 1/2] (relative error about
 * 1e-7, plus t's rounding: ~1e-5 at x = -87). 0 below 2^-125. Only an estimate
 * needs it, so it trades accuracy for being the same function on every side. */
PA_HD static inline float pa_ab_exp(float x) {
  const float t = pa_ab_mul(x, 1.44269502f);
  if (!(t >= -125.0f)) return 0.0f;
  const float k = rintf(t > 0.0f ? 0.0f : t);
  const float f = pa_ab_sub(t > 0.0f ? 0.0f : t, k);
  float p = 1.54035304e-4f;
  p = pa_ab_fma(p, f, 1.33335581e-3f);
  p = pa_ab_fma(p, f, 9.61812911e-3f);
  p = pa_ab_fma(p, f, 5.55041087e-2f);
  p = pa_ab_fma(p, f, 2.40226507e-1f);
  p = pa_ab_fma(p, f, 6.93147182e-1f);
  p = pa_ab_fma(p, f, 1.0f);
  const uint32_t bits = (uint32_t)((int32_t)k + 127) << 23; /* 2^k, k in [-125, 0] */
  float two_k;
  PA_MEMCPY(&two_k, &bits, 4);
  return pa_ab_mul(p, two_k);
}

/* tanh x = sign(x) (1 - e) / (1 + e), e = e^(-2|x|). */
PA_HD static inline float pa_ab_tanh(float x) {
  const float a = x < 0.0f ? -x : x;
  const float e = pa_ab_exp(pa_ab_mul(-2.0f, a));
  const float r = pa_ab_div(pa_ab_sub(1.0f, e), pa_ab_add(1.0f, e));
  return x < 0.0f ? -r : r;
}

/* A block pair's score from its pooled dot product, at row i and key j (the
 * block's centres): pa_score's rules (scale, softcap, ALiBi) in this arithmetic. */
PA_HD static inline float pa_ab_score(float dot, float scale, float softcap, float slope,
                                      const pa_mask *m, int64_t i, int64_t j) {
  float s = pa_ab_mul(dot, scale);
  if (softcap > 0.0f) s = pa_ab_mul(softcap, pa_ab_tanh(pa_ab_div(s, softcap)));
  if (slope != 0.0f) {
    int64_t dist = pa_mask_diag(m, i) - j;
    if (dist < 0) dist = -dist;
    s = pa_ab_fma(-slope, (float)dist, s);
  }
  return s;
}

/* Estimated softmax mass of a key block with n allowed keys and score e, against
 * the row's largest score max_e: n e^(e - max_e). */
PA_HD static inline float pa_ab_mass(int64_t n, float e, float max_e) {
  return pa_ab_mul((float)n, pa_ab_exp(pa_ab_sub(e, max_e)));
}

/* The pooled mean from the PA_AB_POOL_CHAINS chain sums of n rows. */
PA_HD static inline float pa_ab_pool_combine(const float c[PA_AB_POOL_CHAINS], int64_t n) {
  const float s = pa_ab_add(pa_ab_add(pa_ab_add(c[0], c[1]), pa_ab_add(c[2], c[3])),
                            pa_ab_add(pa_ab_add(c[4], c[5]), pa_ab_add(c[6], c[7])));
  return pa_ab_div(s, (float)n);
}

/* The kept-set search orders candidates by (mass descending, key block ascending)
 * through a key of two words: the mass's bits (non-negative floats order like
 * their bits) and PA_AB_RANK(kb) = kb_mask - kb, kb_mask = 2^bits - 1 for the
 * fewest bits that hold every key block index. A candidate is at or above the
 * pair (t_hi, t_lo) when hi > t_hi, or hi == t_hi and rank >= t_lo. */
PA_HD static inline uint32_t pa_ab_kb_mask(int32_t nkb) {
  uint32_t m = 0;
  while (m < (uint32_t)(nkb - 1)) m = m * 2 + 1;
  return m;
}
PA_HD static inline int pa_ab_at_or_above(uint32_t hi, uint32_t rank, uint32_t t_hi,
                                          uint32_t t_lo) {
  return hi > t_hi || (hi == t_hi && rank >= t_lo);
}

#endif
