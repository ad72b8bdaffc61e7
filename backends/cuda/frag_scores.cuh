/* The per-element score and mask pass on mma-layout fragments, shared by the Ampere
 * (fwd_ampere.cu) and Hopper (fwd_hopper.cu) forward kernels: both hold S for 16
 * query rows per warp as n-tiles of 8 keys in mma.sync m16n8's C layout (a wgmma
 * accumulator is that layout per warp). */
#ifndef PA_CUDA_FRAG_SCORES_CUH
#define PA_CUDA_FRAG_SCORES_CUH

#include "ampere_softmax.cuh"
#include "block_ctx.cuh"
#include "mask.h"
#include "sp24_order.h"

/* Scores of one warp tile: S [16 rows x BK keys] holds raw dot products; on the
 * general path turn them into x = score * log2(e) with pa_score (scale, softcap,
 * ALiBi, in that order), then set masked entries to -inf. `range` applies the
 * causal/window/length mask (pa_mask_row_range bounds, precomputed per row), and
 * `block` the per-element block mask. */
/* The key of S element (n-tile n, column 2t + x) of the tile at k0: natural order,
 * or under 2:4 the permuted order of sp24_order.h (the Ampere kernel's NM_2_4
 * variant reads K in that order). */
template <bool SP24>
__device__ __forceinline__ int pa_frag_key(int k0, int n, int t, int x) {
  return SP24 ? k0 + 16 * (n >> 1) + pa_sp24_key(n & 1, 2 * t + x) : k0 + n * 8 + 2 * t + x;
}

template <int NTILES, bool SP24 = false>
__device__ __forceinline__ void pa_frag_scores(float (&s)[NTILES][4], const pa_problem &p,
                                               const pa_block_ctx &c, bool general, float slope,
                                               bool range, bool block, int k0, int row_g, int t) {
  /* Opaque copies: without them the per-element column and ALiBi-distance terms
   * that do not depend on k0 are hoisted out of the key loop into ~2 registers per
   * element, and the rows' key ranges would stay live through the whole loop. This
   * code runs only on the general path and on boundary tiles: recomputing is cheap. */
  asm volatile("" : "+r"(t), "+r"(row_g));
  const int row[2] = {row_g, row_g + 8}; /* the thread's rows g and g + 8 */
  int lo[2], hi[2];
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    int64_t l, u;
    pa_mask_row_range(&c.mask, row[r], &l, &u);
    lo[r] = (int)l;
    hi[r] = (int)u;
  }
  if (general) {
#pragma unroll
    for (int n = 0; n < NTILES; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int j = pa_frag_key<SP24>(k0, n, t, e & 1);
        s[n][e] = pa_score(s[n][e], p.scale, p.softcap, slope, &c.mask, row[e >> 1], j) * PA_LOG2E;
      }
  }
  /* Two separate passes, each entered on a tile-uniform flag: the range test is a
   * select per element with no branch. (One loop with the block-mask lookup inside
   * compiled to a convergence barrier per element: under a causal mask those BSYNCs
   * took 30% of the kernel's stall samples on the H200, bench/RESULTS.md.) */
  if (range) {
#pragma unroll
    for (int n = 0; n < NTILES; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        /* pa_mask_keep(i, j) == (lo(i) <= j < hi(i)) */
        const int r = e >> 1, j = pa_frag_key<SP24>(k0, n, t, e & 1);
        s[n][e] = (j >= lo[r] && j < hi[r]) ? s[n][e] : -INFINITY;
      }
  }
  if (block) {
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      if (row[r] >= c.seq.len_q) continue; /* never written; must not index the mask */
#pragma unroll
      for (int n = 0; n < NTILES; ++n)
#pragma unroll
        for (int x = 0; x < 2; ++x) {
          /* keys past len_k in the last tile are -inf by the range pass already; the
           * clamp keeps their lookup inside the mask's mask_kblocks columns */
          const int j = pa_frag_key<SP24>(k0, n, t, x);
          const int kb = min(j / p.block_k, p.mask_kblocks - 1);
          if (!pa_block_mask_keep(&p.block_mask, c.b, c.h, row[r] / p.block_q, kb))
            s[n][2 * r + x] = -INFINITY;
        }
    }
  }
}

#endif
