/* What the tensor-core backward kernels (bwd_ampere.cu, bwd_volta.cu) share: the
 * workspace's parts, a key block's context and its walk over the query tiles that
 * may reach it, and the per-element P and dS. The prep and convert kernels that
 * run before and after their main kernels are in bwd_common.cu.
 *
 * Both follow FlashAttention-2's backward: prep (D_i = rowsum(dO_i o O_i), the
 * forward's LSE in log2 units, the fp32 dQ accumulator zeroed), a main kernel per
 * block of keys (dK, dV in registers over the GQA group's query heads and tiles in
 * a fixed order, dQ by fp32 atomics), convert (dQ to the dtype); deterministic = 1
 * takes dQ from the simple backward's atomics-free kernel instead (decision 43). */
#ifndef PA_CUDA_BWD_COMMON_CUH
#define PA_CUDA_BWD_COMMON_CUH

#include <math.h>

#include "ampere_mma.cuh" /* pa_exp2 */
#include "kernels.h"
#include "mask.h"

#define PA_BWD_LOG2E 1.4426950408889634f

/* The workspace's parts (fp32). Row index r = (varlen ? q_start : b * seqlen_q) + i. */
struct pa_bwd_ws {
  float *lse2;   /* [Hq][rows]: LSE * log2(e), +inf for a row that kept nothing */
  float *dsum;   /* [Hq][rows]: D_i */
  float *dq_acc; /* [rows][Hq][head_dim]; NULL in deterministic mode */
  int64_t rows;
};

/* Workspace: [lse2][dsum] then the dQ accumulator, or in deterministic mode the
 * simple backward's dQ workspace (`tail`). Host side, bwd_common.cu. */
size_t pa_bwd_workspace(const pa_problem *p, const pa_cuda_device *dev);
pa_bwd_ws pa_bwd_ws_carve(const pa_problem *p, void *workspace, void **tail);
/* The support rules the tensor-core backward kernels share (pass, sparsity, grid
 * limits, the forward's out and lse, the deterministic dQ kernel); each adds its own
 * (dtype, arch, alignment, shared memory). 0 with the reason in err, naming `kernel`. */
int pa_bwd_tiled_supports(const pa_problem *p, const pa_cuda_device *dev, const char *kernel,
                          pa_error *err);
/* The head-dim bucket: the smaller of 64, 128 that holds max(D, Dv); 0 if none. */
int pa_bwd_bucket(const pa_problem *p);
/* prep before the main kernel; convert (or the deterministic dQ) after it. */
cudaError_t pa_bwd_prep(const pa_problem *p, const pa_bwd_ws &ws, cudaStream_t stream);
cudaError_t pa_bwd_finish(const pa_problem *p, const pa_cuda_device *dev, const pa_bwd_ws &ws,
                          void *tail, cudaStream_t stream);

/* dQ_row[col] += a, dQ_row[col + 1] += b in the fp32 accumulator (global memory), the
 * columns past head_dim dropped: one vector reduction (red.global.add.v2.f32, sm_90)
 * where rows are 8-byte aligned (`pairs`: head_dim even), else per-element atomics. */
__device__ __forceinline__ void pa_bwd_red_add2(float *at, float a, float b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("red.global.add.v2.f32 [%0], {%1, %2};\n" ::"l"(__cvta_generic_to_global(at)),
               "f"(a), "f"(b)
               : "memory");
#else
  atomicAdd(at, a);
  atomicAdd(at + 1, b);
#endif
}

__device__ __forceinline__ void pa_bwd_dq_add2(float *row, int col, int head_dim, bool pairs,
                                               float a, float b) {
  if (pairs && col < head_dim) {
    pa_bwd_red_add2(row + col, a, b);
  } else if (!pairs) {
    if (col < head_dim) atomicAdd(row + col, a);
    if (col + 1 < head_dim) atomicAdd(row + col + 1, b);
  }
}

/* The call every tensor-core backward makes: prep, its main kernel (launch_main(ws),
 * only when the problem has keys: every key row gets dK, dV, zero if unused), then
 * convert or the deterministic dQ. */
template <typename F>
cudaError_t pa_bwd_run(const pa_problem *p, const pa_cuda_device *dev, void *workspace,
                       cudaStream_t stream, F &&launch_main) {
  if (p->batch <= 0 || p->heads_q <= 0) return cudaSuccess;
  if (pa_bwd_workspace(p, dev) > 0 && !workspace) return cudaErrorInvalidValue;
  void *tail = nullptr;
  const pa_bwd_ws ws = pa_bwd_ws_carve(p, workspace, &tail);
  cudaError_t e = pa_bwd_prep(p, ws, stream);
  if (e != cudaSuccess) return e;
  if (p->seqlen_k > 0 && p->total_k > 0) {
    e = launch_main(ws);
    if (e != cudaSuccess) return e;
  }
  return pa_bwd_finish(p, dev, ws, tail, stream);
}

/* What a main kernel's block knows about its (key block, kv head, batch entry). */
struct pa_bwd_block {
  int b, hk, G;
  pa_seq seq;
  pa_mask mask;
  int64_t row0; /* the entry's first row in the workspace's row index */
  int j0;       /* first key of the block */
  int rows_k;   /* key rows of the entry that get dK, dV (past seqused_k: zeros) */
  int n_qt;     /* query tiles of the entry */
  bool block_mask;
};

/* Fill c for keys [j0, ...) of (b, hk) with query tiles of BQ rows; false when j0 is
 * past the entry's key rows (the block has nothing to write). */
template <int BQ>
__device__ __forceinline__ bool pa_bwd_block_init(pa_bwd_block &c, const pa_problem &p, int b,
                                                  int hk, int j0) {
  c.b = b;
  c.hk = hk;
  c.G = p.heads_q / p.heads_kv;
  c.seq = pa_problem_seq(&p, b);
  c.j0 = j0;
  c.rows_k = p.seqlen_k;
  if (p.varlen) {
    const int32_t *ck = (const int32_t *)p.cu_seqlens_k.ptr;
    c.rows_k = ck[(b + 1) * p.cu_seqlens_k.stride_s] - ck[b * p.cu_seqlens_k.stride_s];
  }
  if (c.j0 >= c.rows_k) return false;
  c.mask = pa_problem_mask(&p, &c.seq);
  c.row0 = p.varlen ? c.seq.q_start : (int64_t)b * p.seqlen_q;
  c.n_qt = (c.seq.len_q + BQ - 1) / BQ;
  c.block_mask = p.sparsity == POLYATTN_SPARSITY_BLOCK && p.block_mask.buf;
  return true;
}

/* A query tile of the walk: x = g * n_qt + qt (head hk * G + g, rows qt * BQ ..). */
struct pa_bwd_at {
  int x, g, qt;
};

__device__ __forceinline__ pa_bwd_at pa_bwd_at_next(const pa_bwd_block &c, pa_bwd_at a) {
  ++a.x;
  if (++a.qt == c.n_qt) {
    a.qt = 0;
    ++a.g;
  }
  return a;
}

/* The first query tile at or after `a` that may keep a key of the block [j0, j0 + BK)
 * (x = G * n_qt if none). `partial`: some (row, key) pair of the tile falls in a 0 mask
 * block, so per-element block masking is needed. The result is the same in every
 * thread (no shared state). A tile whose rows all end before the block (a bounded right
 * window: causal) moves the walk straight to the tile of the first row that reaches it,
 * and one whose rows all start after the block (a bounded left window) to the head's
 * end, instead of testing the tiles between one by one: a causal block at key j0 used
 * to test j0 / BQ tiles before its first (~85 ns each on the H200: 21.6 µs of prologue
 * per block at S16384, bench/RESULTS.md, thirteenth session). The rows' key ranges move
 * monotonically with them, so the tiles jumped over are ones the test rejects. */
template <int BQ, int BK>
__device__ __forceinline__ pa_bwd_at pa_bwd_walk(const pa_problem &p, const pa_bwd_block &c,
                                                 pa_bwd_at a, bool *partial) {
  const int X = c.G * c.n_qt;
  for (; a.x < X; a = pa_bwd_at_next(c, a)) {
    const int i0 = a.qt * BQ, i1 = min(i0 + BQ, c.seq.len_q);
    int64_t lo, hi;
    pa_mask_rows_range(&c.mask, i0, i1, &lo, &hi);
    const int64_t jlo = max(lo, (int64_t)c.j0), jhi = min(hi, (int64_t)c.j0 + BK);
    if (jlo >= jhi) {
      int to = a.qt; /* the tile before the next one to test */
      if (c.mask.len_k <= c.j0) {
        to = c.n_qt - 1; /* the block is past the keys rows may keep (seqused_k) */
      } else if (hi <= c.j0 && c.mask.window_right >= 0) {
        /* row i reaches key j0 from i = j0 - (len_k - len_q) - window_right on */
        const int64_t i_first = (int64_t)c.j0 - ((int64_t)c.mask.len_k - c.mask.len_q) -
                                c.mask.window_right;
        to = (int)min(i_first / BQ, (int64_t)c.n_qt) - 1;
      } else if (lo >= (int64_t)c.j0 + BK && c.mask.window_left >= 0) {
        to = c.n_qt - 1; /* no later row of the head reaches the block */
      }
      if (to > a.qt) {
        a.x += to - a.qt;
        a.qt = to;
      }
      continue;
    }
    *partial = false;
    if (!c.block_mask) return a;
    const int h = c.hk * c.G + a.g;
    int any = 0, all = 1;
    for (int qb = i0 / p.block_q; qb <= (i1 - 1) / p.block_q; ++qb)
      for (int kb = (int)(jlo / p.block_k); kb <= (int)((jhi - 1) / p.block_k); ++kb) {
        const int keep = pa_block_mask_keep(&p.block_mask, c.b, h, qb, kb);
        any |= keep;
        all &= keep;
      }
    if (any) {
      *partial = !all;
      return a;
    }
  }
  return a;
}

/* pa_bwd_walk from tile x0: the tile's index only. */
template <int BQ, int BK>
__device__ __forceinline__ int pa_bwd_next_tile(const pa_problem &p, const pa_bwd_block &c, int x0,
                                                bool *partial) {
  const pa_bwd_at a = {x0, x0 / c.n_qt, x0 % c.n_qt};
  return pa_bwd_walk<BQ, BK>(p, c, a, partial).x;
}

/* Whether the query tile [i0, i0 + BQ) needs the per-element causal/window/length
 * mask against the block's keys: some key lies outside some row's pa_mask_row_range. */
template <int BQ, int BK>
__device__ __forceinline__ bool pa_bwd_tile_range(const pa_bwd_block &c, int i0) {
  int64_t lo_last, hi_first, u;
  const int i_last = min(i0 + BQ, c.seq.len_q) - 1;
  pa_mask_row_range(&c.mask, i_last, &lo_last, &u);
  pa_mask_row_range(&c.mask, i0, &u, &hi_first);
  return !(lo_last <= c.j0 && hi_first >= c.j0 + BK);
}

/* What the element loop of a query tile needs besides (i, j) and the products. */
struct pa_bwd_tile {
  int h;
  float slope;
  bool general;   /* softcap or ALiBi: the score goes through pa_score */
  bool range;     /* pa_bwd_tile_range */
  bool partial;   /* pa_bwd_next_tile's `partial`: per-element block masking */
  float xscale;   /* scale * log2(e), the fast path's score in log2 units */
};

/* P_ij = exp(score(dot) - LSE_i) (0 where masked) and dS_ij = P_ij (dP_ij - D_i)
 * dscore/ddot for query row i, key j of the sequence; `lse2` is the row's LSE in
 * log2 units (+inf for padded or empty rows, so P = 0), `dsum` its D_i. The rules
 * are common/mask.h's (pa_score, pa_score_ddot, pa_mask_keep, pa_block_mask_keep). */
__device__ __forceinline__ void pa_bwd_p_ds(const pa_problem &p, const pa_bwd_block &c,
                                            const pa_bwd_tile &t, int64_t i, int64_t j, float dot,
                                            float dp, float lse2, float dsum, float *pr,
                                            float *ds) {
  const float xs = t.general
                       ? pa_score(dot, p.scale, p.softcap, t.slope, &c.mask, i, j) * PA_BWD_LOG2E
                       : dot * t.xscale;
  bool keep = !t.range || pa_mask_keep(&c.mask, i, j);
  if (t.partial && keep && i < c.seq.len_q)
    keep = pa_block_mask_keep(&p.block_mask, c.b, t.h, (int32_t)(i / p.block_q),
                              min((int32_t)(j / p.block_k), p.mask_kblocks - 1));
  const float P = keep ? pa_exp2(xs - lse2) : 0.0f;
  const float ddot = p.softcap > 0.0f ? pa_score_ddot(dot, p.scale, p.softcap) : p.scale;
  *ds = P * (dp - dsum) * ddot;
  *pr = P;
}

#endif
