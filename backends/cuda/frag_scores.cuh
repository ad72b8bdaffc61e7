/* The per-element score and mask pass on a warp's S fragment, for any fragment
 * layout: the Ampere and Hopper kernels (mma.sync m16n8's C layout; a wgmma
 * accumulator is that layout per warp) and the HIP module's MFMA kernel.
 *
 * Beside frag_softmax.cuh's members, the fragment map F says which (row, key) an
 * element is, from two per-thread values the kernel computes once:
 *   F::row(row_t, r)     the query row of the thread's row r (row_t: its first row)
 *   F::key(k0, key_t, k, x)  the key of element 2k + x of a row, in the tile at key
 *                        k0 (key_t: the lane's part of the key, e.g. mma.sync's t) */
#ifndef PA_CUDA_FRAG_SCORES_CUH
#define PA_CUDA_FRAG_SCORES_CUH

#include "block_ctx.cuh"
#include "frag_softmax.cuh"
#include "gpu_runtime.h"
#include "mask.h"

/* Scores of one warp tile: S holds raw dot products; on the general path turn them
 * into x = score * log2(e) with pa_score (scale, softcap, ALiBi, in that order), then
 * set masked entries to -inf. `range` applies the causal/window/length mask
 * (pa_mask_row_range bounds, precomputed per row), and `block` the per-element
 * block mask. */
template <typename F>
__device__ __forceinline__ void pa_tile_scores(typename F::frag &s, const pa_problem &p,
                                               const pa_block_ctx &c, bool general, float slope,
                                               bool range, bool block, int k0, int row_t,
                                               int key_t) {
  /* Opaque copies: without them the per-element column and ALiBi-distance terms
   * that do not depend on k0 are hoisted out of the key loop into ~2 registers per
   * element, and the rows' key ranges would stay live through the whole loop. This
   * code runs only on the general path and on boundary tiles: recomputing is cheap. */
  pa_opaque2(key_t, row_t);
  int row[F::rows]; /* the thread's rows */
#pragma unroll
  for (int r = 0; r < F::rows; ++r) row[r] = F::row(row_t, r);
  int lo[F::rows], hi[F::rows];
#pragma unroll
  for (int r = 0; r < F::rows; ++r) {
    int64_t l, u;
    pa_mask_row_range(&c.mask, row[r], &l, &u);
    lo[r] = (int)l;
    hi[r] = (int)u;
  }
  /* The loops visit element pairs k, then rx = 2 r + x (row r's elements 2k + x). */
  if (general) {
#pragma unroll
    for (int k = 0; k < F::elems / 2; ++k)
#pragma unroll
      for (int rx = 0; rx < 2 * F::rows; ++rx) {
        const int j = F::key(k0, key_t, k, rx & 1);
        F::at(s, rx >> 1, k, rx & 1) =
            pa_score(F::at(s, rx >> 1, k, rx & 1), p.scale, p.softcap, slope, &c.mask,
                     row[rx >> 1], j) *
            PA_LOG2E;
      }
  }
  /* Two separate passes, each entered on a tile-uniform flag: the range test is a
   * select per element with no branch. (One loop with the block-mask lookup inside
   * compiled to a convergence barrier per element: under a causal mask those BSYNCs
   * took 30% of the kernel's stall samples on the H200, bench/RESULTS.md.) */
  if (range) {
#pragma unroll
    for (int k = 0; k < F::elems / 2; ++k)
#pragma unroll
      for (int rx = 0; rx < 2 * F::rows; ++rx) {
        /* pa_mask_keep(i, j) == (lo(i) <= j < hi(i)) */
        const int r = rx >> 1, j = F::key(k0, key_t, k, rx & 1);
        F::at(s, r, k, rx & 1) =
            (j >= lo[r] && j < hi[r]) ? F::at(s, r, k, rx & 1) : -INFINITY;
      }
  }
  if (block) {
#pragma unroll
    for (int r = 0; r < F::rows; ++r) {
      if (row[r] >= c.seq.len_q) continue; /* never written; must not index the mask */
#pragma unroll
      for (int k = 0; k < F::elems / 2; ++k)
#pragma unroll
        for (int x = 0; x < 2; ++x) {
          /* keys past len_k in the last tile are -inf by the range pass already; the
           * clamp keeps their lookup inside the mask's mask_kblocks columns */
          const int j = F::key(k0, key_t, k, x);
          const int kb = min(j / p.block_k, p.mask_kblocks - 1);
          if (!pa_block_mask_keep(&p.block_mask, c.b, c.h, row[r] / p.block_q, kb))
            F::at(s, r, k, x) = -INFINITY;
        }
    }
  }
}

#endif
