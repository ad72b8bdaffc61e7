/* The Ampere backward kernel (sm_80+, also run on sm_90): FlashAttention-2's
 * backward for fp16 and bf16 with mma.sync m16n8k16, ldmatrix and cp.async.
 *
 * Three kernels per call (workspace, prep and convert from bwd_common.cuh / .cu,
 * shared with the Volta backward; the query-tile walk too):
 *   prep     per query row and head: D_i = rowsum(dO_i o O_i) in fp32, the forward's
 *            LSE as lse2 = LSE * log2(e) (+inf for a row that kept nothing, so its
 *            P = exp2(x - lse2) is 0), and the fp32 dQ accumulator zeroed.
 *   main     one block per (key block of block_k keys, kv head, batch entry); each
 *            warp owns 16 keys and keeps their dK, dV [16 x D] in fp32 registers.
 *            For every query head of the GQA group and every query tile that the
 *            masks let reach the block (in a fixed order), with Q, dO of the tile in
 *            shared memory (two cp.async stages), sub_q query columns at a time:
 *              dP^T = V dO^T, S^T = K Q^T                          (per warp, 16 keys)
 *              P = exp(score(S) - LSE), dS = P o (dP - D) o dscore/ddot
 *                (a lean path without per-element mask code where no mask, softcap
 *                or ALiBi touches the tile)
 *              dV += P^T dO, dK += dS^T Q                          (registers)
 *              dS^T -> shared memory
 *            then, after the tile's barrier, dQ_tile = dS K per (16 rows, column
 *            slice) of each warp, added to the fp32 dQ (red.global.add.v2.f32 on
 *            sm_90); finally dK, dV once, in the dtype. Tile shapes and the barrier
 *            scheme: ampere_bwd_tune.cuh, docs/decisions.md 55.
 *   convert  dQ fp32 -> dtype (dS already carries the scale).
 * deterministic = 1: the main kernel skips dQ, and the simple backward's dQ kernel
 * (bwd_simple.cu, fp32, no atomics) computes it; see docs/decisions.md 43.
 *
 * Masks: the score and keep rules are common/mask.h's (pa_score, pa_score_ddot,
 * pa_mask_keep, pa_block_mask_keep), applied per element on tiles that need it; the
 * query tiles outside the block's mask range or whose mask blocks are all 0 are
 * skipped. Everything but the head-dim bucket and dtype is a run-time value.
 *
 * Operand layouts of the five products (ampere_mma.cuh has the fragment layouts,
 * ampere_tile.cuh the ldmatrix orders; all tiles are row-major and swizzled):
 *   product          A [M x K]                          B [K x N]
 *   dP^T = V dO^T    V [keys x dv]     ldmatrix ROW_PAIR  dO [dv x queries], stored
 *                                                         [queries x dv]: COL_PAIR
 *   S^T = K Q^T      K [keys x d]      ldmatrix ROW_PAIR  Q: as dO, COL_PAIR
 *   dV += P^T dO     P^T [keys x queries]: the S^T       dO [queries x dv], stored
 *                    accumulators repacked (no smem)     k-major: ROW_PAIR .trans
 *   dK += dS^T Q     dS^T: the dP^T accumulators repacked Q [queries x d]: ROW_PAIR .trans
 *   dQ += dS K       dS [queries x keys], stored as      K [keys x d], stored
 *                    dS^T [keys x queries]: COL_PAIR .trans  k-major: ROW_PAIR .trans
 * (.trans of a k-major tile gives the B fragment, as V in the forward; .trans of the
 * stored dS^T gives the A fragment of dS: register i of COL_PAIR is keys
 * 8 (i >> 1).., queries 8 (i & 1).., i.e. a0 = rows 0-7 / k 0-7, a1 = rows 8-15 /
 * k 0-7, a2 = rows 0-7 / k 8-15, a3 = rows 8-15 / k 8-15.) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ampere_bwd_tune.cuh"
#include "ampere_mma.cuh"
#include "ampere_softmax.cuh"
#include "ampere_tile.cuh"
#include "bwd_common.cuh"
#include "convert.h"
#include "kernels.h"
#include "mask.h"
#include "warp_reduce.cuh"

namespace {

/* A compile-time int as a value (the dQ column slice of a warp). */
template <int N>
struct pa_int_c {
  enum { value = N };
};


template <typename T, int D, int V>
__global__ void __launch_bounds__(pa_ampere_bwd_cfg<D, V>::threads,
                                  pa_ampere_bwd_cfg<D, V>::min_blocks)
    pa_ampere_bwd_kernel(const __grid_constant__ pa_problem p, pa_bwd_ws ws) {
#if PA_AMPERE_ARCH_OK
  typedef pa_ampere_bwd_cfg<D, V> cfg;
  typedef pa_tile_layout<cfg::block_q> ds_layout;
  enum {
    NT = cfg::threads,
    BQ = cfg::block_q,
    BK = cfg::block_k,
    SQ = cfg::sub_q,     /* query columns per sub-step of a tile (S^T .. dK) */
    Q_TILES = SQ / 8,    /* n-tiles of S^T, dP^T [16 keys x SQ] per warp */
    D_TILES = D / 8,     /* n-tiles of dK, dV [16 keys x D] per warp */
    D_STEPS = D / 16,    /* mma K steps over the head dim */
    Q_STEPS = SQ / 16,   /* mma K steps over the sub-step's queries */
    K_STEPS = BK / 16,   /* mma K steps over the key block (dQ) */
    DQ_TILES = cfg::dq_cols / 8
  };
  extern __shared__ __align__(128) unsigned char pa_smem[];

  pa_bwd_block c;
  c.b = blockIdx.z;
  c.hk = blockIdx.y;
  c.G = p.heads_q / p.heads_kv;
  c.seq = pa_problem_seq(&p, c.b);
  c.j0 = blockIdx.x * BK;
  /* Every key row of the entry gets dK, dV, also those past seqused_k (zeros). */
  int rows_k = p.seqlen_k;
  if (p.varlen) {
    const int32_t *ck = (const int32_t *)p.cu_seqlens_k.ptr;
    rows_k = ck[(c.b + 1) * p.cu_seqlens_k.stride_s] - ck[c.b * p.cu_seqlens_k.stride_s];
  }
  if (c.j0 >= rows_k) return;
  c.rows_k = rows_k;
  c.mask = pa_problem_mask(&p, &c.seq);
  c.row0 = p.varlen ? c.seq.q_start : (int64_t)c.b * p.seqlen_q;
  c.n_qt = (c.seq.len_q + BQ - 1) / BQ;
  c.block_mask = p.sparsity == POLYATTN_SPARSITY_BLOCK && p.block_mask.buf;
  const int X = c.G * c.n_qt;

  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int g8 = lane >> 2, t = lane & 3;
  const int wk = 16 * warp; /* the warp's first key in the block */

  const uint32_t s_k = pa_smem_addr(pa_smem);
  const uint32_t s_v = s_k + cfg::kv_bytes;
  const uint32_t s_stage0 = s_v + cfg::kv_bytes; /* stage s: Q, dO, lse2[BQ], dsum[BQ] */
  const uint32_t s_ds0 = s_stage0 + 2 * cfg::stage_bytes; /* one or two dS^T buffers */
  unsigned char *const stage0_ptr = pa_smem + 2 * cfg::kv_bytes;
  unsigned char *const ds_ptr0 = stage0_ptr + 2 * cfg::stage_bytes;

  /* Prologue: K and V of the block (keys past len_k are zero), then the first tile. */
  {
    const T *k_g = (const T *)p.k.ptr + pa_view_row(&p.k, c.b, c.j0, c.seq.k_start, c.hk);
    const T *v_g = (const T *)p.v.ptr + pa_view_row(&p.v, c.b, c.j0, c.seq.k_start, c.hk);
    const int rows = c.seq.len_k - c.j0;
    pa_tile_load<BK, D, NT>(s_k, k_g, p.k.stride_s, rows, p.head_dim, (const T *)p.k.ptr, tid);
    pa_tile_load<BK, D, NT>(s_v, v_g, p.v.stride_s, rows, p.head_dim_v, (const T *)p.v.ptr, tid);
    pa_cp_async_commit();
  }
  /* Q, dO and the row statistics of tile x into `stage`. The statistics are plain
   * stores: the stage was released by the barrier before the call. */
  auto load_tile = [&](int x, int stage) {
    int ltid = tid;
    asm volatile("" : "+r"(ltid)); /* see fwd_ampere.cu load_kv: keep offsets out of the loop */
    const int h = c.hk * c.G + x / c.n_qt, i0 = (x % c.n_qt) * BQ;
    const uint32_t s_q = s_stage0 + stage * cfg::stage_bytes, s_do = s_q + cfg::q_bytes;
    const int rows = c.seq.len_q - i0;
    pa_tile_load<BQ, D, NT>(s_q, (const T *)p.q.ptr + pa_view_row(&p.q, c.b, i0, c.seq.q_start, h),
                            p.q.stride_s, rows, p.head_dim, (const T *)p.q.ptr, ltid);
    pa_tile_load<BQ, D, NT>(s_do,
                            (const T *)p.dout.ptr + pa_view_row(&p.dout, c.b, i0, c.seq.q_start, h),
                            p.dout.stride_s, rows, p.head_dim_v, (const T *)p.dout.ptr, ltid);
    pa_cp_async_commit();
    if (ltid < BQ) {
      float *st = (float *)(stage0_ptr + stage * cfg::stage_bytes + 2 * cfg::q_bytes);
      const bool in = ltid < rows;
      const int64_t at = h * ws.rows + c.row0 + i0 + ltid;
      st[ltid] = in ? ws.lse2[at] : INFINITY; /* padded rows: P = 0 */
      st[BQ + ltid] = in ? ws.dsum[at] : 0.0f;
    }
  };
  bool partial = false;
  int x = pa_bwd_next_tile<BQ, BK>(p, c, 0, &partial);
  if (x < X) load_tile(x, 0);

  const pa_ldsm_lane<D, PA_LDSM_ROW_PAIR> ldsm_rows(lane); /* K, V as A; Q, dO, K .trans as B */
  const pa_ldsm_lane<D, PA_LDSM_COL_PAIR> ldsm_cols(lane); /* Q, dO as B of S^T, dP^T */
  const pa_ldsm_lane<BQ, PA_LDSM_COL_PAIR> ldsm_ds(lane);  /* dS^T .trans as A of dQ */
  const bool general = p.softcap > 0.0f || p.alibi.buf;
  const float xscale = p.scale * PA_BWD_LOG2E;

  float dk[D_TILES][4], dv[D_TILES][4]; /* [16 keys x D] per warp, fp32 */
#pragma unroll
  for (int n = 0; n < D_TILES; ++n)
#pragma unroll
    for (int e = 0; e < 4; ++e) dk[n][e] = dv[n][e] = 0.0f;

  /* Barriers. Two per tile (cfg::one_barrier = 0): at the top (tile x visible, every
   * warp done with the other stage and dS) and before dQ (dS^T visible). One per
   * tile (cfg::one_barrier = 1, dS^T double-buffered): the barrier before dQ also
   * publishes the next tile, issued at the top of this one, and a warp done with its
   * dQ goes on to the next tile's S^T while others still add theirs. Then, at the
   * top of tile x: stage ^ 1 and its statistics were last read by tile x - 1's
   * S^T .. dK, before tile x - 1's barrier; dS buffer `stage` by tile x - 2's dQ,
   * also before that barrier. */
  if constexpr (cfg::one_barrier) {
    pa_cp_async_wait<0>();
    __syncthreads(); /* K, V and the first tile visible */
  }
  for (int stage = 0; x < X; stage ^= 1) {
    if constexpr (!cfg::one_barrier) {
      pa_cp_async_wait<0>();
      __syncthreads(); /* tile x (and K, V) visible; every warp is done with the other stage and dS */
    }
    const uint32_t s_ds = s_ds0 + (cfg::one_barrier ? stage * cfg::ds_bytes : 0);
    unsigned char *const ds_ptr = ds_ptr0 + (cfg::one_barrier ? stage * cfg::ds_bytes : 0);
    const bool tile_partial = partial;
    const int next = pa_bwd_next_tile<BQ, BK>(p, c, x + 1, &partial);
    if (next < X) load_tile(next, stage ^ 1);

    const int h = c.hk * c.G + x / c.n_qt, i0 = (x % c.n_qt) * BQ;
    const uint32_t s_q = s_stage0 + stage * cfg::stage_bytes, s_do = s_q + cfg::q_bytes;
    const float *lse2_s = (const float *)(stage0_ptr + stage * cfg::stage_bytes + 2 * cfg::q_bytes);
    const float *dsum_s = lse2_s + BQ;
    const float slope = pa_problem_alibi_slope(&p, c.b, h);
    /* `range`: some key of the block lies outside some row's pa_mask_row_range. */
    int64_t lo_last, hi_first, u;
    const int i_last = min(i0 + BQ, c.seq.len_q) - 1;
    pa_mask_row_range(&c.mask, i_last, &lo_last, &u);
    pa_mask_row_range(&c.mask, i0, &u, &hi_first);
    const bool range = !(lo_last <= c.j0 && hi_first >= c.j0 + BK);

    /* Query columns qs..qs+SQ-1 of the tile at a time (fewer live accumulators). */
#pragma unroll 1
    for (int qs = 0; qs < BQ; qs += SQ) {
    /* dP^T = V dO^T and S^T = K Q^T: [16 keys x SQ queries] per warp. */
    float dp[Q_TILES][4], s[Q_TILES][4];
#pragma unroll
    for (int n = 0; n < Q_TILES; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) dp[n][e] = s[n][e] = 0.0f;
#pragma unroll
    for (int kk = 0; kk < D_STEPS; ++kk) {
      uint32_t av[4], ak[4]; /* A: keys wk..+15, dims 16kk..+15 */
      pa_ldmatrix_x4(av, ldsm_rows.at(s_v, wk, kk));
      pa_ldmatrix_x4(ak, ldsm_rows.at(s_k, wk, kk));
#pragma unroll
      for (int nn = 0; nn < Q_STEPS; ++nn) {
        uint32_t b[4]; /* B: queries 16nn..+7 and +8..+15, dims 16kk..+15 */
        pa_ldmatrix_x4(b, ldsm_cols.at(s_do, qs + 16 * nn, kk));
        pa_mma_16816<T>(dp[2 * nn], av, b[0], b[1]);
        pa_mma_16816<T>(dp[2 * nn + 1], av, b[2], b[3]);
        pa_ldmatrix_x4(b, ldsm_cols.at(s_q, qs + 16 * nn, kk));
        pa_mma_16816<T>(s[2 * nn], ak, b[0], b[1]);
        pa_mma_16816<T>(s[2 * nn + 1], ak, b[2], b[3]);
      }
    }

    /* P and dS, element (key row wk + g8 + 8 (e >> 1), query column qs + 8n + 2t + (e & 1)). */
    if (!general && !range && !tile_partial) {
      /* Every (row, key) pair of the tile is kept and the score is dot * scale: the
       * statistics of the thread's two columns per n-tile as one 8-byte read each. */
#pragma unroll
      for (int n = 0; n < Q_TILES; ++n) {
        const float2 l2 = *(const float2 *)(lse2_s + qs + 8 * n + 2 * t);
        const float2 ds = *(const float2 *)(dsum_s + qs + 8 * n + 2 * t);
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const float pr = pa_exp2(fmaf(s[n][e], xscale, -((e & 1) ? l2.y : l2.x)));
          dp[n][e] = pr * (dp[n][e] - ((e & 1) ? ds.y : ds.x)) * p.scale;
          s[n][e] = pr;
        }
      }
    } else {
#pragma unroll
    for (int n = 0; n < Q_TILES; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int ql = qs + 8 * n + 2 * t + (e & 1);
        const int64_t i = i0 + ql, j = c.j0 + wk + g8 + 8 * (e >> 1);
        const float dot = s[n][e];
        const float xs = general ? pa_score(dot, p.scale, p.softcap, slope, &c.mask, i, j) * PA_BWD_LOG2E
                                 : dot * xscale;
        bool keep = !range || pa_mask_keep(&c.mask, i, j);
        if (tile_partial && keep && i < c.seq.len_q)
          keep = pa_block_mask_keep(&p.block_mask, c.b, h, (int32_t)(i / p.block_q),
                                    min((int32_t)(j / p.block_k), p.mask_kblocks - 1));
        const float pr = keep ? pa_exp2(xs - lse2_s[ql]) : 0.0f;
        const float ddot = p.softcap > 0.0f ? pa_score_ddot(dot, p.scale, p.softcap) : p.scale;
        dp[n][e] = pr * (dp[n][e] - dsum_s[ql]) * ddot;
        s[n][e] = pr;
      }
    }

    /* P^T, dS^T as A fragments [16 keys x 16 queries] per K step: n-tiles 2kk, 2kk+1. */
    uint32_t pf[Q_STEPS][4], dsf[Q_STEPS][4];
#pragma unroll
    for (int kk = 0; kk < Q_STEPS; ++kk) {
      pf[kk][0] = pa_pack2<T>(s[2 * kk][0], s[2 * kk][1]);
      pf[kk][1] = pa_pack2<T>(s[2 * kk][2], s[2 * kk][3]);
      pf[kk][2] = pa_pack2<T>(s[2 * kk + 1][0], s[2 * kk + 1][1]);
      pf[kk][3] = pa_pack2<T>(s[2 * kk + 1][2], s[2 * kk + 1][3]);
      dsf[kk][0] = pa_pack2<T>(dp[2 * kk][0], dp[2 * kk][1]);
      dsf[kk][1] = pa_pack2<T>(dp[2 * kk][2], dp[2 * kk][3]);
      dsf[kk][2] = pa_pack2<T>(dp[2 * kk + 1][0], dp[2 * kk + 1][1]);
      dsf[kk][3] = pa_pack2<T>(dp[2 * kk + 1][2], dp[2 * kk + 1][3]);
    }

    /* dS^T to shared memory for dQ: row wk + g8 (+8), n-tile 2kk (+1), columns 2t, 2t+1. */
    if (ws.dq_acc) {
#pragma unroll
      for (int kk = 0; kk < Q_STEPS; ++kk)
#pragma unroll
        for (int r = 0; r < 4; ++r) {
          const int row = wk + g8 + 8 * (r & 1), chunk = qs / 8 + 2 * kk + (r >> 1);
          *(uint32_t *)(ds_ptr + ds_layout::offset(row, chunk) + 4 * t) = dsf[kk][r];
        }
    }

    /* dV += P^T dO, dK += dS^T Q. */
#pragma unroll
    for (int kk = 0; kk < Q_STEPS; ++kk)
#pragma unroll
      for (int dd = 0; dd < D_STEPS; ++dd) {
        uint32_t b[4]; /* B (.trans): queries 16kk..+15, dims 16dd..+7 and +8..+15 */
        pa_ldmatrix_x4_trans(b, ldsm_rows.at(s_do, qs + 16 * kk, dd));
        pa_mma_16816<T>(dv[2 * dd], pf[kk], b[0], b[1]);
        pa_mma_16816<T>(dv[2 * dd + 1], pf[kk], b[2], b[3]);
        pa_ldmatrix_x4_trans(b, ldsm_rows.at(s_q, qs + 16 * kk, dd));
        pa_mma_16816<T>(dk[2 * dd], dsf[kk], b[0], b[1]);
        pa_mma_16816<T>(dk[2 * dd + 1], dsf[kk], b[2], b[3]);
      }
    } /* qs */

    if constexpr (cfg::one_barrier) {
      pa_cp_async_wait<0>();
      __syncthreads(); /* dS^T of every warp and the next tile visible */
    }
    if (ws.dq_acc) { /* uniform: the mode of the call */
      if constexpr (!cfg::one_barrier) __syncthreads(); /* dS^T of every warp visible */
      /* dQ partial [16 queries x dq_cols] per warp: query rows 16 mq.., the columns
       * of slice warp / q_mtiles. The A address of dS (rows 16 mq..) is the lane's
       * once: a 16-key step adds a whole number of 8-row swizzle periods. */
      const int mq = warp % cfg::q_mtiles, slice = warp / cfg::q_mtiles;
      const uint32_t ds_lane = ldsm_ds.at(s_ds, 0, mq);
      auto dq_step = [&](auto slice_c) {
        enum { C0 = decltype(slice_c)::value * cfg::dq_cols };
        float dq[DQ_TILES][4];
#pragma unroll
        for (int n = 0; n < DQ_TILES; ++n) dq[n][0] = dq[n][1] = dq[n][2] = dq[n][3] = 0.0f;
#pragma unroll
        for (int kk = 0; kk < K_STEPS; ++kk) {
          uint32_t a[4]; /* A = dS: queries 16mq..+15, keys 16kk..+15, from dS^T (.trans) */
          pa_ldmatrix_x4_trans(a, ds_lane + (uint32_t)(16 * kk * BQ * 2));
#pragma unroll
          for (int dd = 0; dd < DQ_TILES / 2; ++dd) {
            uint32_t b[4]; /* B (.trans): keys 16kk..+15, dims C0 + 16dd..+15 */
            pa_ldmatrix_x4_trans(b, ldsm_rows.at(s_k, 16 * kk, C0 / 16 + dd));
            pa_mma_16816<T>(dq[2 * dd], a, b[0], b[1]);
            pa_mma_16816<T>(dq[2 * dd + 1], a, b[2], b[3]);
          }
        }
        const bool pairs = (p.head_dim & 1) == 0; /* rows 8-byte aligned: vector adds */
#pragma unroll
        for (int r = 0; r < 2; ++r) {
          const int64_t i = i0 + 16 * mq + g8 + 8 * r;
          if (i >= c.seq.len_q) continue;
          float *dst = ws.dq_acc + ((c.row0 + i) * p.heads_q + h) * p.head_dim;
#pragma unroll
          for (int n = 0; n < DQ_TILES; ++n)
            pa_bwd_dq_add2(dst, C0 + 8 * n + 2 * t, p.head_dim, pairs, dq[n][2 * r],
                           dq[n][2 * r + 1]);
        }
      };
      if (slice == 0) dq_step(pa_int_c<0>());
      if constexpr (cfg::dq_slices > 1)
        if (slice == 1) dq_step(pa_int_c<1>());
      if constexpr (cfg::dq_slices > 2) {
        if (slice == 2) dq_step(pa_int_c<2>());
        if (slice == 3) dq_step(pa_int_c<3>());
      }
    }
    x = next;
  }
  pa_cp_async_wait<0>(); /* a block with no tile still has K and V in flight */

  /* dK, dV of the warp's 16 keys, once, in the dtype. */
  T *dk_g = (T *)p.dk.ptr, *dv_g = (T *)p.dv.ptr;
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int j = c.j0 + wk + g8 + 8 * r;
    if (j >= rows_k) continue;
    const int64_t ka = pa_view_row(&p.dk, c.b, j, c.seq.k_start, c.hk);
    const int64_t va = pa_view_row(&p.dv, c.b, j, c.seq.k_start, c.hk);
#pragma unroll
    for (int n = 0; n < D_TILES; ++n)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int col = 8 * n + 2 * t + e;
        if (col < p.head_dim) dk_g[ka + col] = (T)dk[n][2 * r + e];
        if (col < p.head_dim_v) dv_g[va + col] = (T)dv[n][2 * r + e];
      }
  }
#else
  __trap(); /* never launched: pa_cuda_ampere_backward_supports() requires sm_80 */
#endif
}

/* POLYATTN_CUDA_BWD_VARIANT (ampere_bwd_tune.cuh): read once per process; an
 * unknown name runs the default (the library never prints). */
int pa_bwd_env_variant() {
  static const int v = [] {
    static const char *const names[PA_BWD_VARIANT_COUNT] = {"w8", "w4", "w8q", "auto"};
    const char *env = getenv("POLYATTN_CUDA_BWD_VARIANT");
    if (env)
      for (int i = 0; i < PA_BWD_VARIANT_COUNT; ++i)
        if (!strcmp(env, names[i])) return i;
    return (int)PA_BWD_VARIANT_DEFAULT;
  }();
  return v;
}

/* f(pa_int_c<D>(), pa_int_c<V>()) for the compiled row of (bucket, variant); a
 * variant without a row for the bucket (w8q at hd128) runs w8. */
template <typename F>
auto pa_bwd_with_row(int bucket, int v, F &&f) -> decltype(f(pa_int_c<64>(), pa_int_c<0>())) {
  if (bucket == 64) {
    if (v == PA_BWD_W4) return f(pa_int_c<64>(), pa_int_c<PA_BWD_W4>());
    if (v == PA_BWD_W8Q) return f(pa_int_c<64>(), pa_int_c<PA_BWD_W8Q>());
    return f(pa_int_c<64>(), pa_int_c<PA_BWD_W8>());
  }
  if (v == PA_BWD_W4) return f(pa_int_c<128>(), pa_int_c<PA_BWD_W4>());
  return f(pa_int_c<128>(), pa_int_c<PA_BWD_W8>());
}

int pa_bwd_smem(int bucket, int v) {
  return pa_bwd_with_row(bucket, v, [](auto d, auto vc) -> int {
    return pa_ampere_bwd_cfg<decltype(d)::value, decltype(vc)::value>::smem_bytes;
  });
}

/* The variant a call runs: the process's (POLYATTN_CUDA_BWD_VARIANT, default auto:
 * ampere_bwd_tune.cuh), or w4 where its shared memory does not fit the device (w8 at
 * hd128 and w8q at hd64 take ~161 KiB: sm_80 and sm_90 have it; sm_86 / sm_89, with
 * 99 KiB, run w4's 70 / 67 KiB). */
int pa_bwd_pick(const pa_problem *p, int bucket, const pa_cuda_device *dev) {
  int v = pa_bwd_env_variant();
  if (v == PA_BWD_AUTO) {
    const bool banded = p->window_left >= 0 || p->window_right >= 0; /* causal folded in */
    v = bucket == 64 && !banded ? PA_BWD_W8Q : PA_BWD_W8; /* banded: see ampere_bwd_tune.cuh */
  }
  return (size_t)pa_bwd_smem(bucket, v) <= dev->smem_optin ? v : (int)PA_BWD_W4;
}

template <typename T, int D, int V>
cudaError_t pa_bwd_launch_main(const pa_problem *p, const pa_bwd_ws &ws, cudaStream_t stream) {
  typedef pa_ampere_bwd_cfg<D, V> cfg;
  const void *fn = (const void *)pa_ampere_bwd_kernel<T, D, V>;
  /* Not a stream operation: allowed while the stream is being captured. */
  cudaError_t e = cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       cfg::smem_bytes);
  if (e != cudaSuccess) return e;
  const dim3 grid((unsigned)((p->seqlen_k + cfg::block_k - 1) / cfg::block_k),
                  (unsigned)p->heads_kv, (unsigned)p->batch);
  pa_ampere_bwd_kernel<T, D, V><<<grid, cfg::threads, cfg::smem_bytes, stream>>>(*p, ws);
  return cudaGetLastError();
}

/* q, k, v and dout are read with 16-byte cp.async from row starts. */
const char *pa_bwd_misaligned(const pa_problem *p) {
  const pa_named_view views[] = {{&p->q, "q"}, {&p->k, "k"}, {&p->v, "v"}, {&p->dout, "dout"}};
  return pa_first_misaligned_row(views);
}

} /* namespace */

int pa_cuda_ampere_backward_supports(const pa_problem *p, const pa_cuda_device *dev,
                                     pa_error *err) {
#define PA_NO(...)                                             \
  do {                                                         \
    if (err) snprintf(err->msg, sizeof err->msg, __VA_ARGS__); \
    return 0;                                                  \
  } while (0)
  if (!pa_bwd_tiled_supports(p, dev, "Ampere", err)) return 0;
  if (p->dtype != POLYATTN_DTYPE_F16 && p->dtype != POLYATTN_DTYPE_BF16)
    PA_NO("the Ampere backward takes fp16 or bf16 inputs only");
  if (dev->cc_major < 8)
    PA_NO("the Ampere backward needs compute capability 8.0 or newer (device is %d.%d)",
          dev->cc_major, dev->cc_minor);
  const int bucket = pa_bwd_bucket(p);
  if (!bucket)
    PA_NO("the Ampere backward takes head dims up to 128 (head_dim %d, head_dim_v %d)",
          (int)p->head_dim, (int)p->head_dim_v);
  if (const char *name = pa_bwd_misaligned(p))
    PA_NO("the Ampere backward needs 16-byte aligned rows: %s's address and strides must be "
          "multiples of 16 bytes / 8 elements", name);
  const int variant = pa_bwd_pick(p, bucket, dev);
  if ((size_t)pa_bwd_smem(bucket, variant) > dev->smem_optin)
    PA_NO("the Ampere backward needs %d bytes of shared memory for head dim %d; the device "
          "allows %zu", pa_bwd_smem(bucket, variant), bucket, dev->smem_optin);
#undef PA_NO
  return 1;
}

size_t pa_cuda_ampere_backward_workspace(const pa_problem *p, const pa_cuda_device *dev) {
  return pa_bwd_workspace(p, dev);
}

cudaError_t pa_cuda_ampere_backward(const pa_problem *p, const pa_cuda_device *dev,
                                    void *workspace, cudaStream_t stream) {
  return pa_bwd_run(p, dev, workspace, stream, [&](const pa_bwd_ws &ws) {
    const int bucket = pa_bwd_bucket(p);
    const bool bf16 = p->dtype == POLYATTN_DTYPE_BF16;
    return pa_bwd_with_row(bucket, pa_bwd_pick(p, bucket, dev), [&](auto d, auto v) {
      enum { D = decltype(d)::value, V = decltype(v)::value };
      return bf16 ? pa_bwd_launch_main<__nv_bfloat16, D, V>(p, ws, stream)
                  : pa_bwd_launch_main<__half, D, V>(p, ws, stream);
    });
  });
}
