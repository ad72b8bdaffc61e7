/* The Volta backward kernel (sm_70+; forced on newer GPUs): FlashAttention-2's
 * backward for fp16 with mma.sync m8n8k4 (HMMA.884), written, like the Volta
 * forward (fwd_volta.cu), to be simple and correct rather than fast.
 *
 * The Ampere backward's structure (bwd_common.cuh): prep, then one block per (64
 * keys, kv head, batch entry) whose 4 warps each keep the dK, dV [16 x D] of 16
 * keys in fp32 registers while walking the GQA group's query heads and 32-row
 * query tiles in a fixed order, dQ by fp32 atomics, then convert (deterministic =
 * 1: the simple backward's dQ). Per query tile, with Q and dO staged in shared
 * memory by plain loads (no cp.async or ldmatrix on sm_70):
 *   S^T = K Q^T, dP^T = V dO^T            [16 keys x 32 queries] per warp (.row.col)
 *   P^T, dS^T (pa_bwd_p_ds)               written as fp16 to the warp's shared tiles
 *                                         by the accumulator map, read back by the A
 *                                         map (the maps differ; fwd_volta.cu does the
 *                                         same with P)
 *   dV += P^T dO, dK += dS^T Q            (.row.row: dO, Q rows are B's rows)
 *   dS (transposed, the block's 64 keys)  to shared memory; after a barrier each
 *                                         warp computes a [16 x D/2] part of
 *                                         dQ_tile = dS K and adds it atomically.
 * Lane maps: volta_layout.h; tiles: volta_tune.cuh (pa_volta_bwd_cfg). */
#define PA_CUDA_VOLTA_BWD_REAL 1

#include <stdio.h>

#include "bwd_common.cuh"
#include "volta_layout.h"
#include "volta_mma.cuh"
#include "volta_tune.cuh"

namespace {

template <int D>
__global__ void __launch_bounds__(pa_volta_bwd_cfg<D>::threads, 1)
    pa_volta_bwd_kernel(const __grid_constant__ pa_problem p, pa_bwd_ws ws) {
#if PA_VOLTA_ARCH_OK
  typedef pa_volta_bwd_cfg<D> cfg;
  enum {
    NT = cfg::threads,
    BQ = cfg::block_q,
    BK = cfg::block_k,
    LD = cfg::ld,
    LDT = cfg::ld_t,
    LDS = cfg::ld_s,
    Q_BLOCKS = BQ / 16,  /* [16 x 16] blocks of S^T, dP^T [16 keys x BQ] per warp */
    D_BLOCKS = D / 16,   /* blocks of dK, dV [16 keys x D] per warp */
    DQ_BLOCKS = D / 32,  /* blocks of a warp's dQ part [16 queries x D/2] */
    D_STEPS = D / 4,     /* mma K steps over the head dim */
    Q_STEPS = BQ / 4,    /* over the query tile */
    K_STEPS = BK / 4     /* over the key block (dQ) */
  };
  extern __shared__ __align__(16) unsigned char pa_smem[];

  pa_bwd_block c;
  if (!pa_bwd_block_init<BQ>(c, p, blockIdx.z, blockIdx.y, blockIdx.x * BK)) return;
  const int X = c.G * c.n_qt;

  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int wk = 16 * warp; /* the warp's first key in the block */
  uint16_t *s_k = (uint16_t *)pa_smem;                 /* [BK x LD] */
  uint16_t *s_v = s_k + cfg::kv_elems;                 /* [BK x LD] */
  uint16_t *s_q = s_v + cfg::kv_elems;                 /* [BQ x LD] */
  uint16_t *s_do = s_q + cfg::q_elems;                 /* [BQ x LD] */
  uint16_t *s_pt = s_do + cfg::q_elems + 2 * warp * cfg::t_elems; /* this warp's P^T [16 x LDT] */
  uint16_t *s_dst = s_pt + cfg::t_elems;                          /* and dS^T */
  uint16_t *s_ds = s_do + cfg::q_elems + 2 * cfg::warps * cfg::t_elems; /* dS [BQ x LDS] */
  float *s_lse2 = (float *)(s_ds + cfg::s_elems);      /* [BQ] */
  float *s_dsum = s_lse2 + BQ;                         /* [BQ] */

  {
    const uint16_t *k_g = (const uint16_t *)p.k.ptr + pa_view_row(&p.k, c.b, c.j0, c.seq.k_start, c.hk);
    const uint16_t *v_g = (const uint16_t *)p.v.ptr + pa_view_row(&p.v, c.b, c.j0, c.seq.k_start, c.hk);
    const int rows = c.seq.len_k - c.j0; /* keys past len_k: zeros */
    pa_volta_tile_load<BK, D, NT>(s_k, k_g, p.k.stride_s, rows, p.head_dim, tid);
    pa_volta_tile_load<BK, D, NT>(s_v, v_g, p.v.stride_s, rows, p.head_dim_v, tid);
  }

  /* The lane's fixed rows and columns in the fragment maps. */
  const uint16_t *k_a = s_k + (wk + pa_volta_a_row(lane)) * LD;  /* A: K row (S^T) */
  const uint16_t *v_a = s_v + (wk + pa_volta_a_row(lane)) * LD;  /* A: V row (dP^T) */
  const uint16_t *q_bc = s_q + pa_volta_bcol_n(lane) * LD;       /* B .col: Q row */
  const uint16_t *do_bc = s_do + pa_volta_bcol_n(lane) * LD;     /* B .col: dO row */
  const int brow = pa_volta_brow_k(lane) * LD + pa_volta_brow_n(lane, 0);
  const uint16_t *pt_a = s_pt + pa_volta_a_row(lane) * LDT;      /* A: P^T row */
  const uint16_t *dst_a = s_dst + pa_volta_a_row(lane) * LDT;    /* A: dS^T row */
  const int mq = 16 * (warp & 1);       /* the warp's dQ part: query rows mq.., */
  const int c0 = (warp >> 1) * (D / 2); /* head-dim columns c0.. */
  const uint16_t *ds_a = s_ds + (mq + pa_volta_a_row(lane)) * LDS; /* A: dS row */

  float dk[D_BLOCKS][8], dv[D_BLOCKS][8];
#pragma unroll
  for (int d = 0; d < D_BLOCKS; ++d)
#pragma unroll
    for (int i = 0; i < 8; ++i) dk[d][i] = dv[d][i] = 0.0f;

  bool partial = false;
  int x = pa_bwd_next_tile<BQ, BK>(p, c, 0, &partial);
  while (x < X) {
    pa_bwd_tile t;
    t.h = c.hk * c.G + x / c.n_qt;
    const int i0 = (x % c.n_qt) * BQ;
    __syncthreads(); /* every warp is done with the last tile's Q, dO, dS (and K, V stored) */
    {
      const int rows = c.seq.len_q - i0;
      pa_volta_tile_load<BQ, D, NT>(
          s_q, (const uint16_t *)p.q.ptr + pa_view_row(&p.q, c.b, i0, c.seq.q_start, t.h),
          p.q.stride_s, rows, p.head_dim, tid);
      pa_volta_tile_load<BQ, D, NT>(
          s_do, (const uint16_t *)p.dout.ptr + pa_view_row(&p.dout, c.b, i0, c.seq.q_start, t.h),
          p.dout.stride_s, rows, p.head_dim_v, tid);
      if (tid < BQ) {
        const bool in = tid < rows;
        const int64_t at = t.h * ws.rows + c.row0 + i0 + tid;
        s_lse2[tid] = in ? ws.lse2[at] : INFINITY; /* padded rows: P = 0 */
        s_dsum[tid] = in ? ws.dsum[at] : 0.0f;
      }
    }
    __syncthreads(); /* Q, dO, statistics visible */
    t.partial = partial;
    const int next = pa_bwd_next_tile<BQ, BK>(p, c, x + 1, &partial);
    t.slope = pa_problem_alibi_slope(&p, c.b, t.h);
    t.general = p.softcap > 0.0f || p.alibi.buf;
    t.range = pa_bwd_tile_range<BQ, BK>(c, i0);
    t.xscale = p.scale * PA_BWD_LOG2E;

    /* S^T = K Q^T, dP^T = V dO^T */
    float s[Q_BLOCKS][8], dp[Q_BLOCKS][8];
#pragma unroll
    for (int n = 0; n < Q_BLOCKS; ++n)
#pragma unroll
      for (int i = 0; i < 8; ++i) s[n][i] = dp[n][i] = 0.0f;
#pragma unroll 2
    for (int kk = 0; kk < D_STEPS; ++kk) {
      const uint2 ak = pa_volta_lds64(k_a + 4 * kk), av = pa_volta_lds64(v_a + 4 * kk);
#pragma unroll
      for (int n = 0; n < Q_BLOCKS; ++n) {
        pa_mma_884_row_col(s[n], ak, pa_volta_lds64(q_bc + 16 * n * LD + 4 * kk));
        pa_mma_884_row_col(dp[n], av, pa_volta_lds64(do_bc + 16 * n * LD + 4 * kk));
      }
    }

    /* P^T and dS^T: element i of block n is key wk + c_row, query 16 n + c_col. */
#pragma unroll
    for (int n = 0; n < Q_BLOCKS; ++n)
#pragma unroll
      for (int i = 0; i < 8; ++i) {
        const int kr = pa_volta_c_row(lane, i), ql = 16 * n + pa_volta_c_col(lane, i);
        pa_bwd_p_ds(p, c, t, i0 + ql, c.j0 + wk + kr, s[n][i], dp[n][i], s_lse2[ql], s_dsum[ql],
                    &s[n][i], &dp[n][i]);
      }
#pragma unroll
    for (int n = 0; n < Q_BLOCKS; ++n)
#pragma unroll
      for (int i = 0; i < 8; i += 2) {
        const int at = pa_volta_c_row(lane, i) * LDT + 16 * n + pa_volta_c_col(lane, i);
        *(uint32_t *)(s_pt + at) = pa_volta_pack2(s[n][i], s[n][i + 1]);
        *(uint32_t *)(s_dst + at) = pa_volta_pack2(dp[n][i], dp[n][i + 1]);
      }
    if (ws.dq_acc) { /* dS [queries x keys] for dQ: the transposed element, one half each */
#pragma unroll
      for (int n = 0; n < Q_BLOCKS; ++n)
#pragma unroll
        for (int i = 0; i < 8; ++i) {
          const int kr = pa_volta_c_row(lane, i), ql = 16 * n + pa_volta_c_col(lane, i);
          const __half h = __float2half_rn(dp[n][i]);
          s_ds[ql * LDS + wk + kr] = *reinterpret_cast<const uint16_t *>(&h);
        }
    }
    __syncwarp(); /* the warp's P^T, dS^T visible to its lanes */

    /* dV += P^T dO, dK += dS^T Q */
#pragma unroll 1
    for (int kk = 0; kk < Q_STEPS; ++kk) {
      const uint2 ap = pa_volta_lds64(pt_a + 4 * kk), ads = pa_volta_lds64(dst_a + 4 * kk);
#pragma unroll
      for (int d = 0; d < D_BLOCKS; ++d) {
        pa_mma_884_row_row(dv[d], ap, pa_volta_lds64(s_do + brow + 4 * kk * LD + 16 * d));
        pa_mma_884_row_row(dk[d], ads, pa_volta_lds64(s_q + brow + 4 * kk * LD + 16 * d));
      }
    }

    if (ws.dq_acc) { /* uniform: the mode of the call */
      __syncthreads(); /* dS of every warp visible */
      float dq[DQ_BLOCKS][8];
#pragma unroll
      for (int d = 0; d < DQ_BLOCKS; ++d)
#pragma unroll
        for (int i = 0; i < 8; ++i) dq[d][i] = 0.0f;
#pragma unroll 2
      for (int kk = 0; kk < K_STEPS; ++kk) {
        const uint2 a = pa_volta_lds64(ds_a + 4 * kk);
#pragma unroll
        for (int d = 0; d < DQ_BLOCKS; ++d)
          pa_mma_884_row_row(dq[d], a, pa_volta_lds64(s_k + brow + 4 * kk * LD + c0 + 16 * d));
      }
#pragma unroll
      for (int i = 0; i < 8; ++i) {
        const int64_t qi = i0 + mq + pa_volta_c_row(lane, i);
        if (qi >= c.seq.len_q) continue;
        float *dst = ws.dq_acc + ((c.row0 + qi) * p.heads_q + t.h) * p.head_dim;
#pragma unroll
        for (int d = 0; d < DQ_BLOCKS; ++d) {
          const int col = c0 + 16 * d + pa_volta_c_col(lane, i);
          if (col < p.head_dim) atomicAdd(dst + col, dq[d][i]);
        }
      }
    }
    x = next;
  }

  /* dK, dV of the warp's 16 keys, once, in fp16. */
  __half *dk_g = (__half *)p.dk.ptr, *dv_g = (__half *)p.dv.ptr;
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int j = c.j0 + wk + pa_volta_c_row(lane, i);
    if (j >= c.rows_k) continue;
    const int64_t ka = pa_view_row(&p.dk, c.b, j, c.seq.k_start, c.hk);
    const int64_t va = pa_view_row(&p.dv, c.b, j, c.seq.k_start, c.hk);
#pragma unroll
    for (int d = 0; d < D_BLOCKS; ++d) {
      const int col = 16 * d + pa_volta_c_col(lane, i);
      if (col < p.head_dim) dk_g[ka + col] = __float2half_rn(dk[d][i]);
      if (col < p.head_dim_v) dv_g[va + col] = __float2half_rn(dv[d][i]);
    }
  }
#else
  __trap(); /* never launched: pa_cuda_volta_backward_supports() requires sm_70 */
#endif
}

/* D_i once more, computed the way the main kernel computes dP (after the common
 * prep, which also wrote it as a plain dot product): C = O dO^T on m8n8k4 with O
 * rows as A and dO rows as B, over the same head-dim bucket in the same k order as
 * dP^T = V dO^T, and D_i = C_ii. Where O_i equals a key's V row bit for bit (one
 * key, or P one-hot), D_i then equals that dP bit for bit, so dS = P (dP - D) is
 * exactly 0 where the exact gradient is; a plain dot product differs from the
 * mma's accumulation order by rounding and leaves ~1e-7 there. One warp per 16
 * rows of one (batch entry, query head). */
template <int D>
__global__ void __launch_bounds__(128)
    pa_volta_bwd_dsum_kernel(const __grid_constant__ pa_problem p, pa_bwd_ws ws) {
#if PA_VOLTA_ARCH_OK
  enum { ROWS = 64, LD = D + PA_VOLTA_PAD };
  __shared__ __align__(16) uint16_t s_o[ROWS * LD], s_do[ROWS * LD];
  const int h = blockIdx.y, b = blockIdx.z;
  const pa_seq seq = pa_problem_seq(&p, b);
  const int i0 = blockIdx.x * ROWS;
  if (i0 >= seq.len_q) return;
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  pa_volta_tile_load<ROWS, D, 128>(
      s_o, (const uint16_t *)p.o.ptr + pa_view_row(&p.o, b, i0, seq.q_start, h), p.o.stride_s,
      seq.len_q - i0, p.head_dim_v, tid);
  pa_volta_tile_load<ROWS, D, 128>(
      s_do, (const uint16_t *)p.dout.ptr + pa_view_row(&p.dout, b, i0, seq.q_start, h),
      p.dout.stride_s, seq.len_q - i0, p.head_dim_v, tid);
  __syncthreads();
  const uint16_t *o_a = s_o + (16 * warp + pa_volta_a_row(lane)) * LD;
  const uint16_t *do_bc = s_do + (16 * warp + pa_volta_bcol_n(lane)) * LD;
  float c[8] = {0, 0, 0, 0, 0, 0, 0, 0};
#pragma unroll 4
  for (int kk = 0; kk < D / 4; ++kk)
    pa_mma_884_row_col(c, pa_volta_lds64(o_a + 4 * kk), pa_volta_lds64(do_bc + 4 * kk));
  const int64_t row0 = p.varlen ? seq.q_start : (int64_t)b * p.seqlen_q;
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int r = pa_volta_c_row(lane, i), i_seq = i0 + 16 * warp + r;
    if (r == pa_volta_c_col(lane, i) && i_seq < seq.len_q) ws.dsum[h * ws.rows + row0 + i_seq] = c[i];
  }
#else
  __trap();
#endif
}

int pa_volta_bwd_smem(int bucket) {
  return bucket == 64 ? pa_volta_bwd_cfg<64>::smem_bytes : pa_volta_bwd_cfg<128>::smem_bytes;
}

template <int D>
cudaError_t pa_volta_bwd_launch(const pa_problem *p, const pa_bwd_ws &ws, cudaStream_t stream) {
  typedef pa_volta_bwd_cfg<D> cfg;
  if (p->seqlen_q > 0 && p->total_q > 0) {
    const dim3 rows((unsigned)((p->seqlen_q + 63) / 64), (unsigned)p->heads_q, (unsigned)p->batch);
    pa_volta_bwd_dsum_kernel<D><<<rows, 128, 0, stream>>>(*p, ws);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return e;
  }
  /* Not a stream operation: allowed while the stream is being captured. */
  cudaError_t e = cudaFuncSetAttribute((const void *)pa_volta_bwd_kernel<D>,
                                       cudaFuncAttributeMaxDynamicSharedMemorySize, cfg::smem_bytes);
  if (e != cudaSuccess) return e;
  const dim3 grid((unsigned)((p->seqlen_k + cfg::block_k - 1) / cfg::block_k),
                  (unsigned)p->heads_kv, (unsigned)p->batch);
  pa_volta_bwd_kernel<D><<<grid, cfg::threads, cfg::smem_bytes, stream>>>(*p, ws);
  return cudaGetLastError();
}

} /* namespace */

int pa_cuda_volta_backward_supports(const pa_problem *p, const pa_cuda_device *dev,
                                    pa_error *err) {
#define PA_NO(...)                                             \
  do {                                                         \
    if (err) snprintf(err->msg, sizeof err->msg, __VA_ARGS__); \
    return 0;                                                  \
  } while (0)
  if (!pa_bwd_tiled_supports(p, dev, "Volta", err)) return 0;
  if (p->dtype != POLYATTN_DTYPE_F16)
    PA_NO("the Volta backward takes fp16 only: mma.m8n8k4 has no bf16 form");
  if (dev->cc_major < 7)
    PA_NO("the Volta backward needs compute capability 7.0 or newer (device is %d.%d)",
          dev->cc_major, dev->cc_minor);
  const int bucket = pa_bwd_bucket(p);
  if (!bucket)
    PA_NO("the Volta backward takes head dims up to 128 (head_dim %d, head_dim_v %d)",
          (int)p->head_dim, (int)p->head_dim_v);
  if ((size_t)pa_volta_bwd_smem(bucket) > dev->smem_optin)
    PA_NO("the Volta backward needs %d bytes of shared memory for head dim %d; the device "
          "allows %zu", pa_volta_bwd_smem(bucket), bucket, dev->smem_optin);
#undef PA_NO
  return 1;
}

size_t pa_cuda_volta_backward_workspace(const pa_problem *p, const pa_cuda_device *dev) {
  return pa_bwd_workspace(p, dev);
}

cudaError_t pa_cuda_volta_backward(const pa_problem *p, const pa_cuda_device *dev,
                                   void *workspace, cudaStream_t stream) {
  return pa_bwd_run(p, dev, workspace, stream, [&](const pa_bwd_ws &ws) {
    return pa_bwd_bucket(p) == 64 ? pa_volta_bwd_launch<64>(p, ws, stream)
                                  : pa_volta_bwd_launch<128>(p, ws, stream);
  });
}
