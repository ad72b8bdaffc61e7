/* The Hopper forward kernel (sm_90a): FlashAttention-3's structure for fp16 and bf16
 * at head dims 64 and 128, with wgmma.mma_async and the tensor-memory accelerator.
 *
 * One block of 384 threads computes 128 query rows of one (batch entry, query head):
 *   warpgroup 0, the producer: one thread issues TMA copies (cp.async.bulk.tensor,
 *     128-byte swizzle) of the Q tile and then, key tile after key tile, of K and V
 *     into a two-stage shared-memory ring; each stage has "K full", "V full" and
 *     "empty" mbarriers. setmaxnreg gives its registers to the consumers.
 *   warpgroups 1 and 2, the consumers, 64 query rows each: S = Q.K^T by wgmma with
 *     both operands in shared memory (SS), the masks and the online softmax of
 *     common/softmax.h on the accumulator (the same steps and fragment code as the
 *     Ampere kernel: a wgmma accumulator is mma.sync's layout per warp), then
 *     O += P.V by wgmma with P from registers (RS) and V read MN-major from shared
 *     memory (imm-trans-b), so V needs no transposition.
 * The two consumer warpgroups run independently; the warp schedulers interleave one
 * warpgroup's softmax with the other's wgmma. Tile n + 1's K and V load while tile n
 * is computed.
 *
 * Everything but the head dim and dtype is a run-time value, with the Ampere path's
 * semantics and helpers: causal, windows, softcap, ALiBi, GQA, varlen, seqused_k, LSE,
 * block masks (the producer and the consumers walk the same per-query-tile list of
 * kept key tiles, block_list.cuh, built before the kernel; the other tiles are never
 * loaded, and a listed tile wholly inside kept mask blocks is not masked per element).
 * Keys past
 * a sequence's end inside the tensor (varlen: the next sequence; seqused_k: the unused
 * rows) are loaded but masked to p = 0; past the tensor's end TMA fills zeros.
 *
 * Compiled only for sm_90a (CMakeLists.txt: -gencode arch=compute_90a,code=sm_90a when
 * POLYATTN_CUDA_ARCHS holds 90); hopper_ptx.cuh has the PTX wrappers and the shared
 * memory layout. */
#define PA_CUDA_HOPPER_REAL 1

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <atomic>

#include <cuda.h>

#include "block_ctx.cuh"
#include "block_list.cuh"
#include "kernels.h"
#include "mask.h"

#include "ampere_mma.cuh"
#include "ampere_softmax.cuh"
#include "ampere_tile.cuh"
#include "frag_scores.cuh"
#include "hopper_ptx.cuh"

#ifndef PA_CUDA_HOPPER_BUILT
#  define PA_CUDA_HOPPER_BUILT 0
#endif

namespace {

/* The shape of one instantiation (head dim D; 16-bit elements): FlashAttention-3's
 * hd64/hd128 tile (128 x 128, two stages) adapted to two consumer warpgroups; measured
 * on the H200 in bench/RESULTS.md (fourth session), not tuned further yet. */
template <int D>
struct pa_hopper_cfg {
  enum {
    block_q = 128,  /* two consumer warpgroups x 64 rows */
    block_k = 128,  /* keys per K/V tile: S is 64 registers per consumer thread */
    threads = 384,  /* producer warpgroup + two consumer warpgroups */
    stages = 2,
    panels = D / 64 /* 64-column (128-byte) panels per row: the swizzle's width */
  };
  static constexpr int q_panel = block_q * 128, kv_panel = block_k * 128;
  static constexpr int q_bytes = block_q * D * 2, kv_bytes = block_k * D * 2;
  /* [Q][K0][V0][K1][V1], each 1024-byte aligned; + 1024 to align the start */
  static constexpr int smem_bytes = 1024 + q_bytes + stages * 2 * kv_bytes;
  static_assert(D % 64 == 0, "whole 128-byte swizzle panels");
  static_assert(smem_bytes <= 227 * 1024, "shared memory above the sm_90 opt-in limit");
};

/* The consumers' schedule (POLYATTN_CUDA_HOPPER_VARIANT, read on the host):
 *   serial    each product waited for: S, softmax, P.V, one tile after the other;
 *   pipe      FlashAttention-3's intra-warpgroup overlap: S of tile n + 1 and P.V of
 *             tile n issued together, the softmax of n + 1 under that P.V;
 *   pingpong  pipe, and the two consumer warpgroups take turns issuing their
 *             products (named barriers 1 and 2), so that one's softmax runs while
 *             the other's matrix work has the tensor cores. */
enum { PA_HOPPER_SERIAL = 0, PA_HOPPER_PIPE = 1, PA_HOPPER_PINGPONG = 2 };

/* The block's mbarriers (slots of one shared array; x2: one per ring stage) and the
 * consumers' named barriers for the pingpong turns (id 0 is __syncthreads). */
enum {
  PA_HOPPER_MBAR_Q_FULL = 0, /* Q landed (TMA transaction count) */
  PA_HOPPER_MBAR_K_FULL = 1, /* x2: K of the stage landed */
  PA_HOPPER_MBAR_V_FULL = 3, /* x2: V of the stage landed */
  PA_HOPPER_MBAR_EMPTY = 5,  /* x2: all 256 consumer threads are done with the stage */
  PA_HOPPER_MBARS = 7,
  PA_HOPPER_BAR_TURN0 = 1 /* consumer cw's turn: named barrier TURN0 + cw */
};

/* Register budgets after setmaxnreg: 128 x 24 + 256 x 240 = 64512 <= 65536. */
enum { PA_HOPPER_PRODUCER_REGS = 24, PA_HOPPER_CONSUMER_REGS = 240 };

struct pa_hopper_args {
  CUtensorMap tq, tk, tv; /* 64-byte aligned (CUtensorMap's own alignment) */
  pa_problem p;
  const int32_t *block_list; /* BLOCK: the key-tile list (block_list.cuh); NULL when dense */
  const int32_t *dense_gate; /* AUTO_BLOCK's dense fallback: run only if *dense_gate != 0 */
};

/* The list's row groups: one per consumer warpgroup (64 rows). A warpgroup's wgmma
 * spans all of its rows, so a warpgroup whose rows keep nothing of a listed tile
 * (its skip bit) masks the whole tile per element rather than skipping it: both
 * consumers then walk the same tiles, which the stage barriers and the pingpong
 * turns count on. */
enum { PA_HOPPER_LIST_ROWS = 64 };

static_assert((int)pa_hopper_cfg<64>::block_q == (int)PA_CUDA_HOPPER_TILE &&
                  (int)pa_hopper_cfg<64>::block_k == (int)PA_CUDA_HOPPER_TILE &&
                  (int)pa_hopper_cfg<128>::block_q == (int)PA_CUDA_HOPPER_TILE &&
                  (int)pa_hopper_cfg<128>::block_k == (int)PA_CUDA_HOPPER_TILE,
              "cuda_dispatch.c routes block masks by PA_CUDA_HOPPER_TILE");

template <typename T, int D, int SCHED>
__global__ void __launch_bounds__(pa_hopper_cfg<D>::threads, 1)
    pa_hopper_fwd_kernel(const __grid_constant__ pa_hopper_args a) {
#if PA_HOPPER_ARCH_OK
  typedef pa_hopper_cfg<D> cfg;
  enum {
    BQ = cfg::block_q,
    BK = cfg::block_k,
    S_TILES = BK / 8,   /* 8-key chunks of the S accumulator */
    O_TILES = D / 8,    /* 8-dim chunks of the O accumulator */
    QK_STEPS = D / 16,  /* k16 steps of Q.K^T */
    PV_STEPS = BK / 16, /* k16 steps of P.V */
    PANELS = cfg::panels,
    PIPE = SCHED != PA_HOPPER_SERIAL,
    PINGPONG = SCHED == PA_HOPPER_PINGPONG
  };
  const pa_problem &p = a.p;
  /* AUTO_BLOCK's dense launch: the estimate on the device said sparse, so the BLOCK
   * kernel launched beside this one computes the output (cuda_dispatch.c). */
  if (a.dense_gate && *a.dense_gate == 0) return;
  extern __shared__ __align__(1024) unsigned char pa_smem[];
  __shared__ __align__(8) uint64_t bars[PA_HOPPER_MBARS];
  __shared__ int32_t list_s[PA_BLOCK_LIST_SMEM]; /* the list's head (block_list.cuh) */
  const uint32_t s_q = (pa_hsmem(pa_smem) + 1023u) & ~1023u;
  const uint32_t s_kv = s_q + cfg::q_bytes; /* stage s: K at + 2s kv_bytes, V after it */
  const uint32_t b_q = pa_hsmem(&bars[PA_HOPPER_MBAR_Q_FULL]);
  auto b_kfull = [&](int s) { return pa_hsmem(&bars[PA_HOPPER_MBAR_K_FULL + s]); };
  auto b_vfull = [&](int s) { return pa_hsmem(&bars[PA_HOPPER_MBAR_V_FULL + s]); };
  auto b_empty = [&](int s) { return pa_hsmem(&bars[PA_HOPPER_MBAR_EMPTY + s]); };

  pa_block_ctx c;
  /* query blocks last-first: under a causal mask the later rows keep the most keys */
  const int i0 = (gridDim.x - 1 - blockIdx.x) * BQ;
  if (!pa_block_ctx_init(c, p, blockIdx.z, blockIdx.y, i0, BQ)) return; /* past the end */
  const int n_lo = (int)(c.klo / BK);
  const int n_hi = c.klo < c.khi ? (int)((c.khi + BK - 1) / BK) : n_lo;
  const bool use_block_mask = a.block_list != nullptr;
  const int tid = threadIdx.x;
  const int bcoord = p.varlen ? 0 : c.b; /* the tensor maps' batch coordinate */
  const int32_t *slot =
      use_block_mask ? pa_block_walk_slot(a.block_list, p, c, BQ, BK) : nullptr;
  if (use_block_mask) pa_block_walk_start<cfg::threads>(list_s, slot, tid); /* before the barrier */
  /* The visit-th key tile (n_hi past the last), and whether consumer group g must mask
   * it per element: dense, tiles n_lo.. in order; BLOCK, the list's entries. */
  auto walk = [&](int visit, int g, bool *partial) -> int {
    if (!use_block_mask) {
      *partial = false;
      return n_lo + visit < n_hi ? n_lo + visit : n_hi;
    }
    const int e = pa_block_walk_at(list_s, slot, visit);
    *partial = pa_block_entry_partial(e, g) || pa_block_entry_skip(e, g);
    return pa_block_entry_tile(e);
  };

  if (tid == 0) {
    pa_mbar_init(b_q, 1);
    for (int s = 0; s < 2; ++s) {
      pa_mbar_init(b_kfull(s), 1);
      pa_mbar_init(b_vfull(s), 1);
      pa_mbar_init(b_empty(s), 256); /* every consumer thread arrives once per tile */
    }
    pa_mbar_init_fence();
  }
  __syncthreads();

  if (tid < 128) {
    /* The producer. */
    pa_setmaxnreg_dec<PA_HOPPER_PRODUCER_REGS>();
    if (tid == 0) {
      pa_mbar_arrive_expect_tx(b_q, cfg::q_bytes);
#pragma unroll
      for (int x = 0; x < PANELS; ++x)
        pa_tma_load_4d(s_q + x * cfg::q_panel, &a.tq, b_q, 64 * x, (int)c.seq.q_start + c.i0, c.h,
                       bcoord);
      bool partial;
      int n = walk(0, 0, &partial);
      for (int i = 0; n < n_hi; ++i) {
        const int stage = i & 1;
        /* use i >> 1 of this stage: wait for the consumers' release of use (i >> 1) - 1 */
        pa_mbar_wait(b_empty(stage), ((i >> 1) & 1) ^ 1);
        const uint32_t s_k = s_kv + stage * 2 * cfg::kv_bytes;
        const int krow = (int)c.seq.k_start + n * BK;
        pa_mbar_arrive_expect_tx(b_kfull(stage), cfg::kv_bytes);
#pragma unroll
        for (int x = 0; x < PANELS; ++x)
          pa_tma_load_4d(s_k + x * cfg::kv_panel, &a.tk, b_kfull(stage), 64 * x, krow, c.hk,
                         bcoord);
        pa_mbar_arrive_expect_tx(b_vfull(stage), cfg::kv_bytes);
#pragma unroll
        for (int x = 0; x < PANELS; ++x)
          pa_tma_load_4d(s_k + cfg::kv_bytes + x * cfg::kv_panel, &a.tv, b_vfull(stage), 64 * x,
                         krow, c.hk, bcoord);
        n = walk(i + 1, 0, &partial);
      }
    }
    return;
  }

  /* A consumer warpgroup: 64 query rows. */
  pa_setmaxnreg_inc<PA_HOPPER_CONSUMER_REGS>();
  const int cw = tid / 128 - 1;
  const int warp = (tid % 128) / 32, lane = tid % 32, t = lane & 3;
  const int row0 = 64 * cw + 16 * warp; /* the warp's first row within the block */
  const float slope = pa_problem_alibi_slope(&p, c.b, c.h);
  const bool general = p.softcap > 0.0f || slope != 0.0f || !(p.scale > 0.0f);
  const float xscale = general ? 1.0f : p.scale * PA_LOG2E;

  float o[O_TILES][4];
#pragma unroll
  for (int d = 0; d < O_TILES; ++d) o[d][0] = o[d][1] = o[d][2] = o[d][3] = 0.0f;
  pa_softmax_row sm[2] = {pa_softmax_start(), pa_softmax_start()};
  const uint32_t s_q_wg = s_q + cw * 64 * 128; /* this warpgroup's 64 rows in each Q panel */

  auto issue_qk = [&](float (&sacc)[S_TILES][4], int stage) { /* S = Q . K^T, committed */
    const uint32_t s_k = s_kv + stage * 2 * cfg::kv_bytes;
    pa_wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < QK_STEPS; ++kk) {
      const uint32_t off = (kk % 4) * 32; /* k16 step within the 128-byte row */
      const uint64_t da = pa_wgmma_desc(s_q_wg + (kk / 4) * cfg::q_panel + off, 16, 1024);
      const uint64_t db = pa_wgmma_desc(s_k + (kk / 4) * cfg::kv_panel + off, 16, 1024);
      pa_wgmma_ss<T, BK>(sacc, da, db, kk > 0);
    }
    pa_wgmma_commit();
  };
  auto issue_pv = [&](const uint32_t (&pf)[PV_STEPS][4], int stage) { /* O += P . V, committed */
    const uint32_t s_v = s_kv + stage * 2 * cfg::kv_bytes + cfg::kv_bytes;
    pa_wgmma_fence_regs(o);
    pa_wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < PV_STEPS; ++kk) {
      const uint64_t db = pa_wgmma_desc(s_v + kk * 16 * 128, cfg::kv_panel, 1024);
      pa_wgmma_rs_tb<T, D>(o, pf[kk], db, 1);
    }
    pa_wgmma_commit();
  };
  /* Scores and masks, then softmax steps 1 and 3 of common/softmax.h (step 2 on l
   * only: the caller rescales O by alpha when no P.V is in flight). */
  auto softmax = [&](float (&sacc)[S_TILES][4], int n, bool tile_partial, float (&alpha)[2]) {
    const int k0 = n * BK;
    const bool range = !(c.lo_last <= k0 && c.hi_first >= k0 + BK);
    pa_frag_scores<S_TILES>(sacc, p, c, general, slope, range, tile_partial, k0,
                            c.i0 + row0 + (lane >> 2), t);
    pa_frag_softmax_update_max(sm, sacc, xscale, alpha);
    pa_softmax_rescale(&sm[0], alpha[0]);
    pa_softmax_rescale(&sm[1], alpha[1]);
    pa_frag_softmax_accumulate(sm, sacc, xscale);
  };
  auto rescale_o = [&](const float (&alpha)[2]) {
#pragma unroll
    for (int d = 0; d < O_TILES; ++d) {
      o[d][0] *= alpha[0];
      o[d][1] *= alpha[0];
      o[d][2] *= alpha[1];
      o[d][3] *= alpha[1];
    }
  };
  /* P to dtype: the A fragment of keys 16kk..+15 is S chunks 2kk and 2kk + 1. */
  auto pack_p = [&](const float (&sacc)[S_TILES][4], uint32_t (&pf)[PV_STEPS][4]) {
#pragma unroll
    for (int kk = 0; kk < PV_STEPS; ++kk) {
      pf[kk][0] = pa_pack2<T>(sacc[2 * kk][0], sacc[2 * kk][1]);
      pf[kk][1] = pa_pack2<T>(sacc[2 * kk][2], sacc[2 * kk][3]);
      pf[kk][2] = pa_pack2<T>(sacc[2 * kk + 1][0], sacc[2 * kk + 1][1]);
      pf[kk][3] = pa_pack2<T>(sacc[2 * kk + 1][2], sacc[2 * kk + 1][3]);
    }
  };

  pa_mbar_wait(b_q, 0);
  bool partial = false;
  int n = walk(0, cw, &partial);
  if (!PIPE) {
    /* One tile at a time: S, softmax, P.V, each waited for. */
    for (int i = 0; n < n_hi; ++i) {
      const int stage = i & 1;
      const uint32_t parity = (i >> 1) & 1;
      const bool tile_partial = partial;
      const int next = walk(i + 1, cw, &partial);
      float s[S_TILES][4];
      pa_mbar_wait(b_kfull(stage), parity);
      issue_qk(s, stage);
      pa_wgmma_wait<0>();
      pa_wgmma_fence_regs(s);
      float alpha[2];
      softmax(s, n, tile_partial, alpha);
      rescale_o(alpha);
      uint32_t pf[PV_STEPS][4];
      pack_p(s, pf);
      pa_mbar_wait(b_vfull(stage), parity);
      issue_pv(pf, stage);
      pa_wgmma_wait<0>();
      pa_wgmma_fence_regs(o);
      pa_mbar_arrive(b_empty(stage)); /* this thread is done with the stage */
      n = next;
    }
  } else if (n < n_hi) {
    /* Software-pipelined (FlashAttention-3's intra-warpgroup overlap): S of tile
     * i + 1 and O += P.V of tile i are issued together, and the softmax of i + 1
     * runs while P.V of i is still on the tensor cores. O is rescaled by i + 1's
     * alpha after that P.V has landed. */
    float s[S_TILES][4];
    uint32_t pf[PV_STEPS][4];
    /* pingpong: consumer cw issues after a sync on its named barrier, then lets the
     * other go (an arrive on the other's). Consumer 1 opens with an arrive so that consumer
     * 0 goes first, and skips its last arrive, which no sync would match: both walk
     * the same tiles, so the counts agree. */
    auto my_turn = [&] {
      if (PINGPONG) pa_named_sync(PA_HOPPER_BAR_TURN0 + cw, 256);
    };
    auto your_turn = [&](bool last) {
      if (PINGPONG && !(last && cw == 1)) pa_named_arrive(PA_HOPPER_BAR_TURN0 + (1 - cw), 256);
    };
    if (PINGPONG && cw == 1) pa_named_arrive(PA_HOPPER_BAR_TURN0, 256);
    pa_mbar_wait(b_kfull(0), 0);
    my_turn();
    issue_qk(s, 0);
    your_turn(false);
    pa_wgmma_wait<0>();
    pa_wgmma_fence_regs(s);
    {
      float alpha[2];
      softmax(s, n, partial, alpha);
      rescale_o(alpha); /* O is 0: keeps the steps as written */
      pack_p(s, pf);
    }
    n = walk(1, cw, &partial);
    int i = 1;
    for (; n < n_hi; ++i) {
      const int stage = i & 1, prev = stage ^ 1;
      const uint32_t parity = (i >> 1) & 1, prev_parity = ((i - 1) >> 1) & 1;
      const bool tile_partial = partial;
      const int next = walk(i + 1, cw, &partial);
      pa_mbar_wait(b_kfull(stage), parity);
      pa_mbar_wait(b_vfull(prev), prev_parity);
      my_turn();
      issue_qk(s, stage);
      issue_pv(pf, prev);
      your_turn(false);
      pa_wgmma_wait<1>(); /* S landed; P.V of the previous tile may still run */
      pa_wgmma_fence_regs(s);
      float alpha[2];
      softmax(s, n, tile_partial, alpha);
      pa_wgmma_wait<0>();
      pa_wgmma_fence_regs(o);
      pa_mbar_arrive(b_empty(prev));
      rescale_o(alpha);
      pack_p(s, pf);
      n = next;
    }
    const int last = (i - 1) & 1;
    pa_mbar_wait(b_vfull(last), ((i - 1) >> 1) & 1);
    my_turn();
    issue_pv(pf, last);
    your_turn(true);
    pa_wgmma_wait<0>();
    pa_wgmma_fence_regs(o);
    pa_mbar_arrive(b_empty(last));
  }

  /* Step 4: normalise; O straight from the accumulator (4-byte stores), LSE by t == 0. */
  float lse[2];
  pa_frag_softmax_normalise(sm, xscale, o, lse);
  T *o_g = (T *)p.o.ptr;
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int i = c.i0 + row0 + (lane >> 2) + 8 * r;
    if (i >= c.seq.len_q) continue;
    T *dst = o_g + pa_view_row(&p.o, c.b, i, c.seq.q_start, c.h) + 2 * t;
#pragma unroll
    for (int d = 0; d < O_TILES; ++d)
      *(uint32_t *)(dst + 8 * d) = pa_pack2<T>(o[d][2 * r], o[d][2 * r + 1]);
    if (p.lse.buf && t == 0)
      ((float *)p.lse.ptr)[pa_lse_index(&p.lse, c.b, c.h, i, c.seq.q_start)] = lse[r];
  }
#else
  __trap(); /* never launched: pa_cuda_hopper_supports() requires the sm_90a build */
#endif
}

/* ---- host side ---- */

typedef CUresult (*pa_encode_tiled_fn)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *,
                                       const cuuint64_t *, const cuuint64_t *, const cuuint32_t *,
                                       const cuuint32_t *, CUtensorMapInterleave,
                                       CUtensorMapSwizzle, CUtensorMapL2promotion,
                                       CUtensorMapFloatOOBfill);

/* cuTensorMapEncodeTiled through the runtime's driver entry point: the module keeps
 * its static CUDA runtime and does not link libcuda. NULL when the driver lacks it. */
pa_encode_tiled_fn pa_encode_tiled() {
  static const pa_encode_tiled_fn fn = [] {
    void *f = nullptr;
    cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault,
                                         &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess)
      return (pa_encode_tiled_fn) nullptr;
    return (pa_encode_tiled_fn)f;
  }();
  return fn;
}

/* A 4-D map over a q/k/v view: (head dim, rows, heads, batch) with the view's
 * strides; boxes of 64 columns x box_rows rows, 128-byte swizzle, zeros outside. A
 * dimension of extent 1 gets a harmless stride (its coordinate is always 0). */
bool pa_tensor_map(CUtensorMap *m, const pa_view *v, const pa_problem *p, int64_t rows, int heads,
                   int box_rows) {
  pa_encode_tiled_fn fn = pa_encode_tiled();
  if (!fn || (uintptr_t)v->ptr % 16 != 0) return false;
  const int64_t batch = p->varlen ? 1 : p->batch;
  if (rows < 1) rows = 1; /* no key at all: nothing is loaded, but the map must be valid */
  const cuuint64_t dims[4] = {(cuuint64_t)p->head_dim, (cuuint64_t)rows, (cuuint64_t)heads,
                              (cuuint64_t)batch};
  int64_t st[3] = {v->stride_s * 2, v->stride_h * 2, v->stride_b * 2};
  const int64_t filler = (rows * v->stride_s * 2 + 15) / 16 * 16;
  for (int x = 0; x < 3; ++x) {
    if (dims[x + 1] == 1) st[x] = filler > 0 ? filler : 16;
    if (st[x] <= 0 || st[x] % 16 != 0 || st[x] >= (1ll << 40)) return false;
  }
  const cuuint64_t strides[3] = {(cuuint64_t)st[0], (cuuint64_t)st[1], (cuuint64_t)st[2]};
  const cuuint32_t box[4] = {64, (cuuint32_t)box_rows, 1, 1};
  const cuuint32_t estr[4] = {1, 1, 1, 1};
  const CUtensorMapDataType dt = p->dtype == POLYATTN_DTYPE_BF16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                                                                 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  return fn(m, dt, 4, v->ptr, dims, strides, box, estr, CU_TENSOR_MAP_INTERLEAVE_NONE,
            CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

template <int D>
bool pa_hopper_maps(pa_hopper_args *a, const pa_problem *p) {
  typedef pa_hopper_cfg<D> cfg;
  const int64_t rows_q = p->varlen ? p->total_q : p->seqlen_q;
  const int64_t rows_k = p->varlen ? p->total_k : p->seqlen_k;
  return pa_tensor_map(&a->tq, &p->q, p, rows_q, p->heads_q, cfg::block_q) &&
         pa_tensor_map(&a->tk, &p->k, p, rows_k, p->heads_kv, cfg::block_k) &&
         pa_tensor_map(&a->tv, &p->v, p, rows_k, p->heads_kv, cfg::block_k);
}

/* Per instantiation: the devices on which the shared-memory opt-in was set. */
template <typename T, int D, int SCHED>
std::atomic<unsigned long long> &pa_hopper_opted() {
  static std::atomic<unsigned long long> mask(0);
  return mask;
}

/* BLOCK sparsity with a mask: the kernel walks a key-tile list in the workspace. */
bool pa_hopper_uses_block_list(const pa_problem *p) {
  return p->sparsity == POLYATTN_SPARSITY_BLOCK && p->block_mask.buf;
}

template <typename T, int D, int SCHED>
cudaError_t pa_hopper_launch(const pa_problem *p, void *workspace, const int32_t *dense_gate,
                             cudaStream_t stream) {
  typedef pa_hopper_cfg<D> cfg;
  pa_hopper_args args; /* passed by value: no host state kept */
  memset(&args, 0, sizeof args);
  args.p = *p;
  args.dense_gate = dense_gate;
  if (!pa_hopper_maps<D>(&args, p)) return cudaErrorInvalidValue;
  if (pa_hopper_uses_block_list(p)) {
    if (!workspace) return cudaErrorInvalidValue; /* the plan asked for the list's bytes */
    int32_t *list = static_cast<int32_t *>(workspace);
    const cudaError_t e =
        pa_block_list_build<cfg::block_q, cfg::block_k, PA_HOPPER_LIST_ROWS>(p, list, stream);
    if (e != cudaSuccess) return e;
    args.block_list = list;
  }
  const void *fn = (const void *)pa_hopper_fwd_kernel<T, D, SCHED>;
  int device = 0;
  cudaError_t e = cudaGetDevice(&device);
  if (e != cudaSuccess) return e;
  const unsigned long long bit = device < 64 ? 1ull << device : 0;
  if (!bit || !(pa_hopper_opted<T, D, SCHED>().load(std::memory_order_acquire) & bit)) {
    e = cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, cfg::smem_bytes);
    if (e != cudaSuccess) return e;
    pa_hopper_opted<T, D, SCHED>().fetch_or(bit, std::memory_order_acq_rel);
  }
  const dim3 grid((unsigned)((p->seqlen_q + cfg::block_q - 1) / cfg::block_q),
                  (unsigned)p->heads_q, (unsigned)p->batch);
  pa_hopper_fwd_kernel<T, D, SCHED><<<grid, cfg::threads, cfg::smem_bytes, stream>>>(args);
  return cudaGetLastError();
}

/* POLYATTN_CUDA_HOPPER_VARIANT=serial|pipe|pingpong (read once per process): the
 * consumers' schedule (above). Unknown names run the default. */
enum { PA_HOPPER_VARIANT_DEFAULT = PA_HOPPER_SERIAL };

int pa_hopper_variant() {
  static const int v = [] {
    const char *env = getenv("POLYATTN_CUDA_HOPPER_VARIANT");
    if (env && !strcmp(env, "serial")) return (int)PA_HOPPER_SERIAL;
    if (env && !strcmp(env, "pipe")) return (int)PA_HOPPER_PIPE;
    if (env && !strcmp(env, "pingpong")) return (int)PA_HOPPER_PINGPONG;
    return (int)PA_HOPPER_VARIANT_DEFAULT;
  }();
  return v;
}

template <typename T, int D>
cudaError_t pa_hopper_launch_variant(const pa_problem *p, void *ws, const int32_t *gate,
                                     cudaStream_t stream) {
  switch (pa_hopper_variant()) {
  case PA_HOPPER_PIPE: return pa_hopper_launch<T, D, PA_HOPPER_PIPE>(p, ws, gate, stream);
  case PA_HOPPER_PINGPONG: return pa_hopper_launch<T, D, PA_HOPPER_PINGPONG>(p, ws, gate, stream);
  default: return pa_hopper_launch<T, D, PA_HOPPER_SERIAL>(p, ws, gate, stream);
  }
}

const char *pa_misaligned_hopper(const pa_problem *p) {
  const pa_named_view views[] = {{&p->q, "q"}, {&p->k, "k"}, {&p->v, "v"}, {&p->o, "out"}};
  return pa_first_misaligned_row(views);
}

} /* namespace */

int pa_cuda_hopper_supports(const pa_problem *p, const pa_cuda_device *dev, pa_error *err) {
#define PA_NO(...)                                             \
  do {                                                         \
    if (err) snprintf(err->msg, sizeof err->msg, __VA_ARGS__); \
    return 0;                                                  \
  } while (0)
  if (!PA_CUDA_HOPPER_BUILT)
    PA_NO("the Hopper kernel is not in this build (POLYATTN_CUDA_ARCHS has no 90, so no "
          "sm_90a code was compiled)");
  if (!pa_tiled_forward_supports(p, "Hopper", err)) return 0;
  if (p->dtype != POLYATTN_DTYPE_F16 && p->dtype != POLYATTN_DTYPE_BF16)
    PA_NO("the Hopper kernel takes fp16 or bf16 inputs only");
  if (dev->cc_major != 9 || dev->cc_minor != 0)
    PA_NO("the Hopper kernel runs on compute capability 9.0 only (sm_90a code; device is "
          "%d.%d)", dev->cc_major, dev->cc_minor);
  if (p->head_dim != p->head_dim_v || (p->head_dim != 64 && p->head_dim != 128))
    PA_NO("the Hopper kernel has head dims 64 and 128 (equal for q/k and v) only; this "
          "problem has %d and %d", p->head_dim, p->head_dim_v);
  if (pa_hopper_uses_block_list(p) &&
      (p->seqlen_k + PA_CUDA_HOPPER_TILE - 1) / PA_CUDA_HOPPER_TILE >=
          (1 << (31 - PA_BLOCK_LIST_N_SHIFT)))
    PA_NO("the Hopper kernel's BLOCK tile list indexes at most 2^15 key tiles (Sk up to 4M)");
  if ((p->varlen ? p->total_k : (int64_t)p->seqlen_k) <= 0)
    PA_NO("the Hopper kernel needs at least one key row (with none, the Ampere kernel "
          "writes the empty rows)");
  if (const char *name = pa_misaligned_hopper(p))
    PA_NO("the Hopper kernel needs 16-byte aligned rows: %s's address and strides must be "
          "multiples of 16 bytes / 8 elements", name);
  const int smem =
      p->head_dim == 64 ? pa_hopper_cfg<64>::smem_bytes : pa_hopper_cfg<128>::smem_bytes;
  if ((size_t)smem > dev->smem_optin)
    PA_NO("the Hopper kernel needs %d bytes of shared memory; the device allows %zu", smem,
          dev->smem_optin);
  if (p->q.ptr && p->k.ptr && p->v.ptr) {
    pa_hopper_args a;
    const bool ok = p->head_dim == 64 ? pa_hopper_maps<64>(&a, p) : pa_hopper_maps<128>(&a, p);
    if (!ok)
      PA_NO("the Hopper kernel could not describe q/k/v to the tensor-memory accelerator "
            "(cuTensorMapEncodeTiled refused the strides, or the driver lacks it)");
  }
#undef PA_NO
  return 1;
}

size_t pa_cuda_hopper_workspace(const pa_problem *p, const pa_cuda_device *dev) {
  (void)dev; /* BLOCK's key-tile list for the 128 x 128 tiles */
  if (!pa_hopper_uses_block_list(p)) return 0;
  return pa_block_list_bytes(p, PA_CUDA_HOPPER_TILE, PA_CUDA_HOPPER_TILE);
}

cudaError_t pa_cuda_hopper_forward_gated(const pa_problem *p, const pa_cuda_device *dev,
                                         void *workspace, const int32_t *dense_gate,
                                         cudaStream_t stream) {
  (void)dev;
  if (p->seqlen_q <= 0 || p->batch <= 0 || p->heads_q <= 0) return cudaSuccess;
  if (p->head_dim == 64)
    return p->dtype == POLYATTN_DTYPE_BF16
               ? pa_hopper_launch_variant<__nv_bfloat16, 64>(p, workspace, dense_gate, stream)
               : pa_hopper_launch_variant<__half, 64>(p, workspace, dense_gate, stream);
  return p->dtype == POLYATTN_DTYPE_BF16
             ? pa_hopper_launch_variant<__nv_bfloat16, 128>(p, workspace, dense_gate, stream)
             : pa_hopper_launch_variant<__half, 128>(p, workspace, dense_gate, stream);
}

cudaError_t pa_cuda_hopper_forward(const pa_problem *p, const pa_cuda_device *dev,
                                   void *workspace, cudaStream_t stream) {
  return pa_cuda_hopper_forward_gated(p, dev, workspace, nullptr, stream);
}
