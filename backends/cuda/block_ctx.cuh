/* What a forward kernel's thread block knows about its (batch entry, head, query
 * rows), and the block-mask walk over key tiles — shared by the Ampere and Volta
 * kernels (the decode kernel walks keys per split instead). */
#ifndef PA_CUDA_BLOCK_CTX_CUH
#define PA_CUDA_BLOCK_CTX_CUH

#include <stdio.h>

#include "mask.h"
#include "problem.h"

struct pa_block_ctx {
  int b, h, hk;
  pa_seq seq;
  pa_mask mask;
  int i0, i_end;     /* query rows [i0, i_end) of this block, within the sequence */
  int64_t klo, khi;  /* keys any of those rows may keep */
  int lo_last;       /* first key of the last row: tiles at or after it are kept by all rows */
  int hi_first;      /* end of the first row's keys: tiles ending at or before it likewise */
};

/* Fill c for query rows [i0, i0 + bq) of (b, h); false when i0 is past the
 * entry's end (varlen), in which case the block has nothing to do. */
__device__ __forceinline__ bool pa_block_ctx_init(pa_block_ctx &c, const pa_problem &p, int b,
                                                  int h, int i0, int bq) {
  c.b = b;
  c.h = h;
  c.seq = pa_problem_seq(&p, b);
  c.i0 = i0;
  if (c.i0 >= c.seq.len_q) return false;
  c.i_end = min(c.i0 + bq, c.seq.len_q);
  c.hk = c.h / (p.heads_q / p.heads_kv);
  c.mask = pa_problem_mask(&p, &c.seq);
  pa_mask_rows_range(&c.mask, c.i0, c.i_end, &c.klo, &c.khi);
  int64_t lo, hi;
  pa_mask_row_range(&c.mask, c.i_end - 1, &lo, &hi);
  c.lo_last = (int)lo;
  pa_mask_row_range(&c.mask, c.i0, &lo, &hi);
  c.hi_first = (int)hi;
  return true;
}

/* The block's 64-row consumer warpgroups (nwg in all) that hold a row of the sequence
 * (the Hopper kernels' idle consumers, decision 119). */
__device__ __forceinline__ int pa_block_ctx_warpgroups(const pa_block_ctx &c, int nwg) {
  return min(nwg, (c.i_end - c.i0 + 63) / 64);
}

/* Block masks: the first key tile >= n with a kept mask block, or n_hi. `partial`
 * says whether some (row, key) pair of that tile falls in a 0 block, i.e. whether
 * per-element masking is needed. A tile is skipped only when every mask block it
 * touches is 0 for every query row of the block. Called by all threads. */
template <int BK, int NT>
__device__ __forceinline__ int pa_block_mask_next(const pa_problem &p, const pa_block_ctx &c,
                                                  int n, int n_hi, int tid, bool *partial) {
  for (; n < n_hi; ++n) {
    const int64_t k0 = (int64_t)n * BK > c.klo ? (int64_t)n * BK : c.klo;
    const int64_t k1 = (int64_t)n * BK + BK < c.khi ? (int64_t)n * BK + BK : c.khi;
    const int qb0 = c.i0 / p.block_q, qb1 = (c.i_end - 1) / p.block_q;
    const int kb0 = (int)(k0 / p.block_k), kb1 = (int)((k1 - 1) / p.block_k);
    const int nk = kb1 - kb0 + 1;
    const int total = (qb1 - qb0 + 1) * nk;
    int any = 0, all = 1;
    for (int x = tid; x < total; x += NT) {
      const int keep = pa_block_mask_keep(&p.block_mask, c.b, c.h, qb0 + x / nk, kb0 + x % nk);
      any |= keep;
      all &= keep;
    }
    any = __syncthreads_or(any);
    all = __syncthreads_and(all);
    if (any) {
      *partial = !all;
      return n;
    }
  }
  *partial = false;
  return n_hi;
}

/* The support rules the tiled forward kernels (Ampere, Volta) share; each adds its
 * own (dtype, arch, alignment, shared memory). Head dims need no check here: the
 * validator already bounds them by POLYATTN_MAX_HEAD_DIM. */
static inline int pa_tiled_forward_supports(const pa_problem *p, const char *kernel,
                                            pa_error *err) {
  const char *why = NULL;
  if (p->pass != PA_PASS_FORWARD) why = "computes the forward pass only";
  else if (p->sparsity != POLYATTN_SPARSITY_NONE && p->sparsity != POLYATTN_SPARSITY_BLOCK)
    why = "supports dense and BLOCK sparsity only";
  else if (p->heads_q > 65535 || p->batch > 65535)
    why = "has a grid that takes at most 65535 heads and batch entries";
  if (!why) return 1;
  if (err) snprintf(err->msg, sizeof err->msg, "the %s kernel %s", kernel, why);
  return 0;
}

#endif
