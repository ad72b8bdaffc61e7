/* The online softmax of common/softmax.h, step for step, on the Volta kernel's
 * m8n8k4 accumulators (the names follow ampere_softmax.cuh; the layout differs).
 *
 * A warp holds S [16 rows x BK keys] as BK / 16 blocks of float[8]. By
 * volta_layout.h a thread owns two rows, r = 0 and r = 1 (pa_volta_row), and in
 * each block four elements of each, pa_volta_elem(r, 0..3). Lanes lane ^ 2, ^ 8 and
 * ^ 10 own the same rows, so a row reduction is two xor-shuffles. Per row a thread
 * keeps one pa_softmax_row:
 *   m  the running maximum, in x units (below), identical in the four lanes;
 *   l  the running sum of this thread's own p; the four partial sums are added once,
 *      in step 4 (alpha is common to the four lanes, so this is exact).
 * x units: S holds x with score * log2(e) = x * xscale. Fast path (no softcap, no
 * ALiBi, scale > 0): x is the raw dot product and xscale = scale * log2(e), so
 * exp(score - m) is one FFMA and one MUFU.EX2; otherwise x = pa_score(...) * log2(e)
 * and xscale = 1. Masked scores are x = -inf and give p = exp2(-inf) = 0. */
#ifndef PA_CUDA_VOLTA_SOFTMAX_CUH
#define PA_CUDA_VOLTA_SOFTMAX_CUH

#include "softmax.h"
#include "volta_layout.h"

#define PA_VOLTA_LOG2E 1.4426950408889634f
#define PA_VOLTA_LN2 0.6931471805599453f

/* 2^x on the SFU; 2^-inf = +0, which is how masked scores vanish. */
__device__ __forceinline__ float pa_volta_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

__device__ __forceinline__ float pa_volta_row_max(float v) {
  v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, PA_VOLTA_ROW_XOR_A));
  return fmaxf(v, __shfl_xor_sync(0xffffffffu, v, PA_VOLTA_ROW_XOR_B));
}

__device__ __forceinline__ float pa_volta_row_sum(float v) {
  v += __shfl_xor_sync(0xffffffffu, v, PA_VOLTA_ROW_XOR_A);
  return v + __shfl_xor_sync(0xffffffffu, v, PA_VOLTA_ROW_XOR_B);
}

/* Step 1, update max: fold the tile's row maxima into m; alpha[r] rescales row r's
 * previous l and accumulator (1 when m did not move, 0 when the row had seen nothing). */
template <int NT>
__device__ __forceinline__ void pa_vfrag_softmax_update_max(pa_softmax_row (&row)[2],
                                                            const float (&s)[NT][8],
                                                            float xscale, float (&alpha)[2]) {
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    float tile_max = -INFINITY;
#pragma unroll
    for (int n = 0; n < NT; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) tile_max = fmaxf(tile_max, s[n][pa_volta_elem(r, e)]);
    tile_max = pa_volta_row_max(tile_max);
    const float m_new = fmaxf(row[r].m, tile_max);
    alpha[r] = row[r].m == m_new ? 1.0f : pa_volta_exp2((row[r].m - m_new) * xscale);
    row[r].m = m_new;
  }
}

/* Step 2, rescale: l and the rows' O accumulator [16 rows x D] (DT blocks) by alpha. */
template <int DT>
__device__ __forceinline__ void pa_vfrag_softmax_rescale(pa_softmax_row (&row)[2],
                                                         const float (&alpha)[2],
                                                         float (&o)[DT][8]) {
#pragma unroll
  for (int r = 0; r < 2; ++r) pa_softmax_rescale(&row[r], alpha[r]);
#pragma unroll
  for (int d = 0; d < DT; ++d)
#pragma unroll
    for (int i = 0; i < 8; ++i) o[d][i] *= alpha[pa_volta_elem_row(i)];
}

/* Step 3, accumulate: s becomes p = exp(score - m) in place, and l += sum p. (The
 * caller then adds P.V to the accumulator.) A row still at m = -inf uses the
 * reference 0 (pa_softmax_ref), so its p are exp2(-inf) = 0, never NaN. */
template <int NT>
__device__ __forceinline__ void pa_vfrag_softmax_accumulate(pa_softmax_row (&row)[2],
                                                            float (&s)[NT][8], float xscale) {
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const float ref = pa_softmax_ref(&row[r]) * xscale;
    float sum = 0.0f;
#pragma unroll
    for (int n = 0; n < NT; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int i = pa_volta_elem(r, e);
        s[n][i] = pa_volta_exp2(fmaf(s[n][i], xscale, -ref));
        sum += s[n][i];
      }
    pa_softmax_accumulate(&row[r], sum);
  }
}

/* Step 4, normalise: completes l over the four lanes, scales O by 1 / l (0 for a row
 * that kept nothing), and returns each row's natural-log LSE (-inf for such a row). */
template <int DT>
__device__ __forceinline__ void pa_vfrag_softmax_normalise(pa_softmax_row (&row)[2], float xscale,
                                                           float (&o)[DT][8], float (&lse)[2]) {
  float inv[2];
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    row[r].l = pa_volta_row_sum(row[r].l);
    inv[r] = pa_softmax_normaliser(&row[r]);
    pa_softmax_row nat; /* m in natural-log units, for pa_softmax_lse */
    nat.m = row[r].m * xscale * PA_VOLTA_LN2;
    nat.l = row[r].l;
    lse[r] = pa_softmax_lse(&nat);
  }
#pragma unroll
  for (int d = 0; d < DT; ++d)
#pragma unroll
    for (int i = 0; i < 8; ++i) o[d][i] *= inv[pa_volta_elem_row(i)];
}

#endif
