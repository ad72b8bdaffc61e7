/* mma.sync's C layout as a fragment map of frag_softmax.cuh / frag_scores.cuh, and
 * the online-softmax steps on it under the names the Hopper and decode kernels use.
 *
 * A warp holds S [16 rows x 8 NTILES keys] as NTILES mma accumulators; a thread owns
 * two rows of it, r = 0 (row g) and r = 1 (row g + 8), and in each n-tile n the
 * elements s[n][2r], s[n][2r + 1] (element 2n + x of row r). The four threads of a
 * quad (t = 0..3) share a row, so row reductions are two xor-shuffles. The O
 * accumulator [16 rows x D] has the same layout with D / 8 n-tiles. */
#ifndef PA_CUDA_AMPERE_SOFTMAX_CUH
#define PA_CUDA_AMPERE_SOFTMAX_CUH

#include "ampere_mma.cuh"
#include "frag_scores.cuh"
#include "frag_softmax.cuh"
#include "sp24_order.h"
#include "warp_reduce.cuh"

__device__ __forceinline__ float pa_quad_max(float v) { return pa_lanes_max<32, 3>(v); }
__device__ __forceinline__ float pa_quad_sum(float v) { return pa_lanes_sum<32, 3>(v); }

/* Two exp2 in one MUFU instruction: the arguments rounded to fp16, the results fp16
 * (ex2.approx.f16x2). For bf16 inputs only: P is rounded to bf16 (8 bits) before
 * P.V anyway; the fp16 argument x - m <= 0 carries 11 bits, so p's relative error is
 * at most |x - m| * 2^-11 * ln 2 (0.3% at x - m = -8, where p <= 2^-8), i.e. never
 * above the bf16 rounding of the row's largest p. Underflows to 0 below p = 2^-24.
 * (The Hopper kernel's `-e16` variants: frag_softmax.cuh's EXP16.) */
__device__ __forceinline__ float2 pa_exp2_pair_f16(float a, float b) {
  const __half2 h = __floats2half2_rn(a, b);
  uint32_t x = *reinterpret_cast<const uint32_t *>(&h), y;
  asm("ex2.approx.f16x2 %0, %1;\n" : "=r"(y) : "r"(x));
  return __half22float2(*reinterpret_cast<const __half2 *>(&y));
}

/* SP24: keys in the permuted order of sp24_order.h (the Ampere kernel's NM_2_4
 * variant reads K in that order): S column c of n-tile 2m + a is key
 * 16m + pa_sp24_key(a, c). */
template <int NTILES, bool SP24 = false>
struct pa_quad_map {
  typedef float frag[NTILES][4];
  enum { rows = 2, elems = 2 * NTILES };
  template <typename A>
  __device__ __forceinline__ static auto &at(A &f, int r, int n, int x) {
    return f[n][2 * r + x];
  }
  __device__ __forceinline__ static float row_max(float v) { return pa_quad_max(v); }
  __device__ __forceinline__ static float row_sum(float v) { return pa_quad_sum(v); }
  __device__ __forceinline__ static bool any(bool b) { return __any_sync(0xffffffffu, b); }
  __device__ __forceinline__ static float exp2(float x) { return pa_exp2(x); }
  __device__ __forceinline__ static float2 exp2_pair(float a, float b) {
    return pa_exp2_pair_f16(a, b);
  }
  /* row_t: the thread's row g; key_t: t */
  __device__ __forceinline__ static int row(int row_t, int r) { return row_t + 8 * r; }
  __device__ __forceinline__ static int key(int k0, int t, int n, int x) {
    return SP24 ? k0 + 16 * (n >> 1) + pa_sp24_key(n & 1, 2 * t + x) : k0 + n * 8 + 2 * t + x;
  }
};

/* The shared steps under their fragment-shaped names (fwd_hopper.cu, decode_mma.cuh). */
template <int NTILES, bool SP24 = false>
__device__ __forceinline__ void pa_frag_scores(float (&s)[NTILES][4], const pa_problem &p,
                                               const pa_block_ctx &c, bool general, float slope,
                                               bool range, bool block, int k0, int row_g, int t) {
  pa_tile_scores<pa_quad_map<NTILES, SP24>>(s, p, c, general, slope, range, block, k0, row_g, t);
}

template <int NT, bool TREE = false>
__device__ __forceinline__ void pa_frag_softmax_update_max(pa_softmax_row (&row)[2],
                                                           const float (&s)[NT][4], float xscale,
                                                           float (&alpha)[2]) {
  pa_tile_softmax_update_max<pa_quad_map<NT>, TREE>(row, s, xscale, alpha);
}

template <int DT>
__device__ __forceinline__ void pa_frag_softmax_rescale(pa_softmax_row (&row)[2],
                                                        const float (&alpha)[2],
                                                        float (&o)[DT][4]) {
  pa_tile_softmax_rescale<pa_quad_map<DT>>(row, alpha, o);
}

template <int NT, bool EXP16 = false, int LOG2_GAIN = 0, bool SUM = true>
__device__ __forceinline__ void pa_frag_softmax_accumulate(pa_softmax_row (&row)[2],
                                                           float (&s)[NT][4], float xscale) {
  pa_tile_softmax_accumulate<pa_quad_map<NT>, EXP16, LOG2_GAIN, SUM>(row, s, xscale);
}

/* Steps 1-3 with a kept maximum (frag_softmax.cuh's pa_tile_softmax_keep at p <= 2^8):
 * the Hopper kernel's PA_HV_KEEPM. (The Ampere rows' keep column calls
 * pa_tile_softmax_keep itself, fwd_tile.cuh.) */
template <int NT>
__device__ __forceinline__ bool pa_frag_softmax_keep(pa_softmax_row (&row)[2], float (&s)[NT][4],
                                                     float xscale, float (&alpha)[2]) {
  return pa_tile_softmax_keep<pa_quad_map<NT>>(row, s, xscale, PA_SOFTMAX_KEEP_LOG2, alpha);
}

/* The same decided on the row sums (frag_softmax.cuh's pa_tile_softmax_keep_sum, decision
 * 134): the Hopper kernel's PA_HV_KSUM. */
template <int NT>
__device__ __forceinline__ int pa_frag_softmax_keep_sum(pa_softmax_row (&row)[2],
                                                        float (&s)[NT][4], float xscale,
                                                        float (&alpha)[2]) {
  return pa_tile_softmax_keep_sum<pa_quad_map<NT>>(row, s, xscale, PA_SOFTMAX_KEEP_LOG2, alpha);
}

template <int DT>
__device__ __forceinline__ void pa_frag_softmax_normalise(pa_softmax_row (&row)[2], float xscale,
                                                          float (&o)[DT][4], float (&lse)[2]) {
  pa_tile_softmax_normalise<pa_quad_map<DT>>(row, xscale, o, lse);
}

#endif
