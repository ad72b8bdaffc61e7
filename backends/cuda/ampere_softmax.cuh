/* The online softmax of common/softmax.h, step for step, on one warp's fragments.
 *
 * A warp holds S [16 rows x BK keys] as BK / 8 mma accumulators; a thread owns two
 * rows of it, r = 0 (row g) and r = 1 (row g + 8), and in each n-tile the elements
 * s[n][2r], s[n][2r + 1]. The four threads of a quad (t = 0..3) share a row, so row
 * reductions are two xor-shuffles. Each thread keeps one pa_softmax_row per row:
 *   m  the running maximum, in "x units" (below), identical in the four threads;
 *   l  the running sum of this thread's own p only; the quad's partial sums are
 *      added once, in step 4 (alpha is common to the quad, so this is exact).
 * x units: the kernel keeps S as x with score * log2(e) = x * xscale. On the fast
 * path (no softcap, no ALiBi, scale > 0) x is the raw dot product and xscale =
 * scale * log2(e), so exp(score - m) = exp2(x * xscale - m * xscale) is one FFMA and
 * one MUFU.EX2 per element; otherwise x = pa_score(...) * log2(e) and xscale = 1.
 * Masked scores are x = -inf and give p = exp2(-inf) = 0. */
#ifndef PA_CUDA_AMPERE_SOFTMAX_CUH
#define PA_CUDA_AMPERE_SOFTMAX_CUH

#include "ampere_mma.cuh"
#include "softmax.h"

#define PA_LOG2E 1.4426950408889634f
#define PA_LN2 0.6931471805599453f

__device__ __forceinline__ float pa_quad_max(float v) {
  v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 1));
  return fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 2));
}

__device__ __forceinline__ float pa_quad_sum(float v) {
  v += __shfl_xor_sync(0xffffffffu, v, 1);
  return v + __shfl_xor_sync(0xffffffffu, v, 2);
}

/* Step 1, update max: fold the tile's row maxima into m; alpha[r] rescales row r's
 * previous l and accumulator (1 when m did not move, 0 when the row had seen nothing). */
/* TREE: the row's maximum as a balanced tree (depth log2(NT) + 1 instead of NT: a
 * shorter dependent chain before the exponentials; the same value, max being exact). */
template <int NT, bool TREE = false>
__device__ __forceinline__ void pa_frag_softmax_update_max(pa_softmax_row (&row)[2],
                                                           const float (&s)[NT][4], float xscale,
                                                           float (&alpha)[2]) {
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    float tile_max = s[0][2 * r];
    if (TREE) {
      float v[NT];
#pragma unroll
      for (int n = 0; n < NT; ++n) v[n] = fmaxf(s[n][2 * r], s[n][2 * r + 1]);
#pragma unroll
      for (int w = 1; w < NT; w *= 2)
#pragma unroll
        for (int n = 0; n + w < NT; n += 2 * w) v[n] = fmaxf(v[n], v[n + w]);
      tile_max = v[0];
    } else {
#pragma unroll
      for (int n = 0; n < NT; ++n)
        tile_max = fmaxf(tile_max, fmaxf(s[n][2 * r], s[n][2 * r + 1]));
    }
    tile_max = pa_quad_max(tile_max);
    const float m_new = fmaxf(row[r].m, tile_max);
    alpha[r] = row[r].m == m_new ? 1.0f : pa_exp2((row[r].m - m_new) * xscale);
    row[r].m = m_new;
  }
}

/* Step 2, rescale: l and the row's O accumulator [16 rows x D] (DT n-tiles) by alpha. */
template <int DT>
__device__ __forceinline__ void pa_frag_softmax_rescale(pa_softmax_row (&row)[2],
                                                        const float (&alpha)[2],
                                                        float (&o)[DT][4]) {
#pragma unroll
  for (int r = 0; r < 2; ++r) pa_softmax_rescale(&row[r], alpha[r]);
#pragma unroll
  for (int d = 0; d < DT; ++d) {
    o[d][0] *= alpha[0];
    o[d][1] *= alpha[0];
    o[d][2] *= alpha[1];
    o[d][3] *= alpha[1];
  }
}

/* Step 3, accumulate: s becomes p = exp(score - m) in place, and l += sum p. (The
 * caller then adds P.V to the accumulator.) A row still at m = -inf uses the
 * reference 0 (pa_softmax_ref), so its p are exp2(-inf) = 0, never NaN. */
/* Two exp2 in one MUFU instruction: the arguments rounded to fp16, the results fp16
 * (ex2.approx.f16x2). For bf16 inputs only: P is rounded to bf16 (8 bits) before
 * P.V anyway; the fp16 argument x - m <= 0 carries 11 bits, so p's relative error is
 * at most |x - m| * 2^-11 * ln 2 (0.3% at x - m = -8, where p <= 2^-8), i.e. never
 * above the bf16 rounding of the row's largest p. Underflows to 0 below p = 2^-24. */
__device__ __forceinline__ float2 pa_exp2_pair_f16(float a, float b) {
  const __half2 h = __floats2half2_rn(a, b);
  uint32_t x = *reinterpret_cast<const uint32_t *>(&h), y;
  asm("ex2.approx.f16x2 %0, %1;\n" : "=r"(y) : "r"(x));
  return __half22float2(*reinterpret_cast<const __half2 *>(&y));
}

/* EXP16: the exponentials in pairs by pa_exp2_pair_f16 (half the MUFU work). */
template <int NT, bool EXP16 = false>
__device__ __forceinline__ void pa_frag_softmax_accumulate(pa_softmax_row (&row)[2],
                                                           float (&s)[NT][4], float xscale) {
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const float ref = pa_softmax_ref(&row[r]) * xscale;
    float sum = 0.0f;
#pragma unroll
    for (int n = 0; n < NT; ++n) {
      if (EXP16) {
        const float2 e = pa_exp2_pair_f16(fmaf(s[n][2 * r], xscale, -ref),
                                          fmaf(s[n][2 * r + 1], xscale, -ref));
        s[n][2 * r] = e.x;
        s[n][2 * r + 1] = e.y;
      } else {
        s[n][2 * r] = pa_exp2(fmaf(s[n][2 * r], xscale, -ref));
        s[n][2 * r + 1] = pa_exp2(fmaf(s[n][2 * r + 1], xscale, -ref));
      }
      sum += s[n][2 * r] + s[n][2 * r + 1];
    }
    pa_softmax_accumulate(&row[r], sum);
  }
}

/* Step 4, normalise: completes l over the quad, scales O by 1 / l (0 for a row that
 * kept nothing), and returns each row's natural-log LSE (-inf for such a row). */
template <int DT>
__device__ __forceinline__ void pa_frag_softmax_normalise(pa_softmax_row (&row)[2], float xscale,
                                                          float (&o)[DT][4], float (&lse)[2]) {
  float inv[2];
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    row[r].l = pa_quad_sum(row[r].l);
    inv[r] = pa_softmax_normaliser(&row[r]);
    pa_softmax_row nat; /* m in natural-log units, for pa_softmax_lse */
    nat.m = row[r].m * xscale * PA_LN2;
    nat.l = row[r].l;
    lse[r] = pa_softmax_lse(&nat);
  }
#pragma unroll
  for (int d = 0; d < DT; ++d) {
    o[d][0] *= inv[0];
    o[d][1] *= inv[0];
    o[d][2] *= inv[1];
    o[d][3] *= inv[1];
  }
}

#endif
