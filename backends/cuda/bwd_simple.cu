/* The simple CUDA backward: fp32 arithmetic on CUDA cores, every dtype, every
 * architecture, every feature of the forward's simple kernel (dense and BLOCK
 * sparsity). It is the CUDA backend's first backward and the on-device reference
 * for the tensor-core backward kernels of issue 4; like fwd_simple.cu it is written
 * for clarity, and its speed only has to be reasonable.
 *
 * It follows the CPU backward's numerics (docs/decisions.md 18): the row statistics
 * are recomputed from Q and K (LSE and O from the forward are not read), and
 * D_i = sum_j P_ij dP_ij. Two kernels, no atomics, so every run is bit-identical
 * (the `deterministic` flag costs nothing here):
 *   dq kernel   one block per (16 query rows, query head, batch entry). Three sweeps
 *               over the rows' key tiles: (1) the online max and sum of
 *               common/softmax.h -> lse_i; (2) D_i = sum_j P_ij dP_ij; (3)
 *               dQ_i = sum_j dS_ij k_j with dS_ij = P_ij (dP_ij - D_i) * dscore/ddot.
 *               Writes dQ and (lse_i, D_i) to the workspace.
 *   dkv kernel  one block per (16 keys, kv head, batch entry); walks the GQA group's
 *               query heads and every query tile that may keep those keys, and
 *               accumulates dV_j = sum_i P_ij dO_i and dK_j = sum_i dS_ij q_i in
 *               registers (summed over the group, in a fixed order).
 * P_ij = exp(score_ij - lse_i) with score = pa_score(q_i . k_j) (scale, softcap, ALiBi);
 * dscore/ddot = scale * (1 - tanh^2(scale * dot / softcap)) with a softcap, else scale. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "convert.h"
#include "kernels.h"
#include "mask.h"
#include "softmax.h"
#include "warp_reduce.cuh"

namespace {

constexpr int kWarpSize = 32;
constexpr int kWarps = 4;
constexpr int kThreads = kWarps * kWarpSize;
constexpr unsigned kFullMask = 0xffffffffu;
constexpr int kPerLane = (POLYATTN_MAX_HEAD_DIM + kWarpSize - 1) / kWarpSize; /* columns per lane */
constexpr size_t kDefaultSmem = 48 * 1024;
/* dq kernel: 4 rows per warp; key tiles of 32 keys (one per lane). */
constexpr int kRowsPerWarp = 4;
constexpr int kBlockQ = kWarps * kRowsPerWarp;
constexpr int kBlockK = kWarpSize;
/* dkv kernel: 4 keys per warp; query tiles of 32 rows (one per lane). */
constexpr int kKeysPerWarp = 4;
constexpr int kBlockKeys = kWarps * kKeysPerWarp;
static_assert(kKeysPerWarp == 4, "2:4: a warp's keys are one aligned group of four");
constexpr int kTileQ = kWarpSize;

static_assert(sizeof(pa_problem) <= 4096, "the problem is passed as a kernel parameter");

/* Shared-memory rows read by lane index get one float of padding (distinct banks). */
__host__ __device__ inline int padded(int d) { return d + 1; }

size_t dq_smem(const pa_problem *p) {
  return sizeof(float) * ((size_t)kBlockQ * (p->head_dim + p->head_dim_v) +
                          (size_t)kBlockK * (padded(p->head_dim) + padded(p->head_dim_v)));
}
size_t dkv_smem(const pa_problem *p) {
  return sizeof(float) * ((size_t)kBlockKeys * (p->head_dim + p->head_dim_v) +
                          (size_t)kTileQ * (padded(p->head_dim) + padded(p->head_dim_v)));
}
int64_t stat_rows(const pa_problem *p) {
  return p->varlen ? p->total_q : (int64_t)p->batch * p->seqlen_q;
}

/* Whether (i, j) is kept: inside the sequence, the causal/window mask, the block mask. */
__device__ inline bool kept(const pa_problem &p, const pa_mask &m, int32_t b, int32_t h, int64_t i,
                            int64_t j) {
  return i < m.len_q && pa_mask_keep(&m, i, j) &&
         pa_block_mask_keep(&p.block_mask, b, h, (int32_t)(i / p.block_q), (int32_t)(j / p.block_k));
}

/* 2:4 (NM_2_4) as a fixed mask: whether score `s` (-inf when masked) survives among
 * its aligned group of four, whose scores are g[0..3], it being g[mine]: fewer than
 * two of the group beat it (larger, or equal at a lower key). The backward
 * recomputes the scores and so the pattern; no gradient flows through the choice. */
__device__ inline bool sp24_survives(const float (&g)[4], int mine) {
  int beaten = 0;
#pragma unroll
  for (int a = 0; a < 4; ++a) beaten += g[a] > g[mine] || (g[a] == g[mine] && a < mine);
  return beaten < 2;
}

/* rows x dim elements of a q/k/v-like view, from row `first`, into fp32 smem with
 * row pitch `ld`; rows at or past `valid` are zero. All threads call it. */
__device__ inline void stage_rows(float *dst, int ld, const pa_view &v, const pa_problem &p,
                                  int32_t b, int64_t seq_start, int32_t h, int64_t first, int rows,
                                  int64_t valid, int dim) {
  for (int idx = threadIdx.x; idx < rows * dim; idx += kThreads) {
    const int r = idx / dim, d = idx % dim;
    const int64_t row = first + r;
    dst[r * ld + d] =
        row < valid ? pa_load_f32(v.ptr, pa_view_row(&v, b, row, seq_start, h) + d, p.dtype) : 0.0f;
  }
}

__global__ void __launch_bounds__(kThreads)
    bwd_dq_kernel(const __grid_constant__ pa_problem p, float *stats) {
  extern __shared__ float smem[];
  const int32_t h = blockIdx.y, b = blockIdx.z;
  const pa_seq seq = pa_problem_seq(&p, b);
  const int64_t q0 = (int64_t)blockIdx.x * kBlockQ;
  if (q0 >= seq.len_q) return;
  const int64_t q1 = q0 + kBlockQ < seq.len_q ? q0 + kBlockQ : seq.len_q;
  const int32_t hkv = h / (p.heads_q / p.heads_kv);
  const int D = p.head_dim, Dv = p.head_dim_v, ldk = padded(D), ldv = padded(Dv);
  const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;

  float *q_s = smem;                          /* [kBlockQ][D] */
  float *do_s = q_s + (size_t)kBlockQ * D;    /* [kBlockQ][Dv] */
  float *k_s = do_s + (size_t)kBlockQ * Dv;   /* [kBlockK][ldk] */
  float *v_s = k_s + (size_t)kBlockK * ldk;   /* [kBlockK][ldv] */
  stage_rows(q_s, D, p.q, p, b, seq.q_start, h, q0, kBlockQ, q1, D);
  stage_rows(do_s, Dv, p.dout, p, b, seq.q_start, h, q0, kBlockQ, q1, Dv);

  const pa_mask m = pa_problem_mask(&p, &seq);
  const float slope = pa_problem_alibi_slope(&p, b, h);
  int64_t klo, khi;
  pa_mask_rows_range(&m, q0, q1, &klo, &khi);
  const int64_t k_first = klo < khi ? klo / kBlockK * kBlockK : khi;

  pa_softmax_row row[kRowsPerWarp];
  float lse[kRowsPerWarp], dsum[kRowsPerWarp], dq[kRowsPerWarp][kPerLane];
#pragma unroll
  for (int r = 0; r < kRowsPerWarp; ++r) {
    row[r] = pa_softmax_start();
    dsum[r] = 0.0f;
#pragma unroll
    for (int t = 0; t < kPerLane; ++t) dq[r][t] = 0.0f;
  }

  /* sweep 1: statistics; 2: D_i; 3: dQ. Each recomputes the same dot products in the
   * same order, so P is identical in all three. */
  for (int sweep = 1; sweep <= 3; ++sweep) {
    for (int64_t k0 = k_first; k0 < khi; k0 += kBlockK) {
      const int nk = seq.len_k - k0 < kBlockK ? (int)(seq.len_k - k0) : kBlockK;
      if (!pa_block_mask_any(&p, b, h, q0, q1, k0, k0 + nk)) continue; /* uniform */
      __syncthreads(); /* the previous tile is consumed (and Q, dO are staged) */
      stage_rows(k_s, ldk, p.k, p, b, seq.k_start, hkv, k0, kBlockK, seq.len_k, D);
      if (sweep > 1) stage_rows(v_s, ldv, p.v, p, b, seq.k_start, hkv, k0, kBlockK, seq.len_k, Dv);
      __syncthreads();

      const int64_t j = k0 + lane;
      const float *krow = k_s + lane * ldk, *vrow = v_s + lane * ldv;
#pragma unroll
      for (int r = 0; r < kRowsPerWarp; ++r) {
        const int64_t i = q0 + warp * kRowsPerWarp + r;
        const float *qrow = q_s + (size_t)(warp * kRowsPerWarp + r) * D;
        float dot = 0.0f;
        for (int d = 0; d < D; ++d) dot = fmaf(qrow[d], krow[d], dot);
        bool keep = lane < nk && kept(p, m, b, h, i, j);
        float s = keep ? pa_score(dot, p.scale, p.softcap, slope, &m, i, j) : -INFINITY;
        if (p.sparsity == POLYATTN_SPARSITY_NM_2_4) { /* lanes 4g..4g+3: one group */
          float g[4];
#pragma unroll
          for (int a = 0; a < 4; ++a) g[a] = __shfl_sync(kFullMask, s, (lane & ~3) + a, kWarpSize);
          if (!sp24_survives(g, lane & 3)) keep = false, s = -INFINITY;
        }
        if (sweep == 1) {
          const float alpha = pa_softmax_update_max(&row[r], pa_warp_max<kWarpSize>(s));
          const float e = keep ? expf(s - pa_softmax_ref(&row[r])) : 0.0f;
          pa_softmax_rescale(&row[r], alpha);
          pa_softmax_accumulate(&row[r], pa_warp_sum<kWarpSize>(e));
          continue;
        }
        const float pr = keep && lse[r] > -INFINITY ? expf(s - lse[r]) : 0.0f;
        const float *dorow = do_s + (size_t)(warp * kRowsPerWarp + r) * Dv;
        float dp = 0.0f;
        for (int d = 0; d < Dv; ++d) dp = fmaf(dorow[d], vrow[d], dp);
        if (sweep == 2) {
          dsum[r] = fmaf(pr, dp, dsum[r]); /* this lane's keys; summed over lanes after */
          continue;
        }
        const float ds = pr * (dp - dsum[r]) * pa_score_ddot(dot, p.scale, p.softcap);
        for (int jj = 0; jj < nk; ++jj) {
          const float dsj = __shfl_sync(kFullMask, ds, jj, kWarpSize);
          const float *kr = k_s + jj * ldk;
#pragma unroll
          for (int t = 0; t < kPerLane; ++t) {
            const int d = lane + t * kWarpSize;
            if (d < D) dq[r][t] = fmaf(dsj, kr[d], dq[r][t]);
          }
        }
      }
    }
    if (sweep == 1) {
#pragma unroll
      for (int r = 0; r < kRowsPerWarp; ++r) lse[r] = pa_softmax_lse(&row[r]);
    } else if (sweep == 2) {
#pragma unroll
      for (int r = 0; r < kRowsPerWarp; ++r) dsum[r] = pa_warp_sum<kWarpSize>(dsum[r]);
    }
  }

  const int64_t row0 = p.varlen ? seq.q_start : (int64_t)b * p.seqlen_q;
#pragma unroll
  for (int r = 0; r < kRowsPerWarp; ++r) {
    const int64_t i = q0 + warp * kRowsPerWarp + r;
    if (i >= q1) continue;
    const int64_t at = pa_view_row(&p.dq, b, i, seq.q_start, h);
#pragma unroll
    for (int t = 0; t < kPerLane; ++t) {
      const int d = lane + t * kWarpSize;
      if (d < D) pa_store_f32(p.dq.ptr, at + d, p.dtype, dq[r][t]);
    }
    if (lane == 0) {
      float *st = stats + 2 * ((row0 + i) * p.heads_q + h);
      st[0] = lse[r];
      st[1] = dsum[r];
    }
  }
}

__global__ void __launch_bounds__(kThreads)
    bwd_dkv_kernel(const __grid_constant__ pa_problem p, const float *stats) {
  extern __shared__ float smem[];
  const int32_t hkv = blockIdx.y, b = blockIdx.z;
  const pa_seq seq = pa_problem_seq(&p, b);
  /* Every key row of the entry gets dK and dV, also those past seqused_k (zeros). */
  int64_t rows_k = p.seqlen_k;
  if (p.varlen) {
    const int32_t *ck = static_cast<const int32_t *>(p.cu_seqlens_k.ptr);
    rows_k = ck[(b + 1) * p.cu_seqlens_k.stride_s] - ck[b * p.cu_seqlens_k.stride_s];
  }
  const int64_t j0 = (int64_t)blockIdx.x * kBlockKeys;
  if (j0 >= rows_k) return;
  const int64_t j1 = j0 + kBlockKeys < rows_k ? j0 + kBlockKeys : rows_k;
  const int G = p.heads_q / p.heads_kv;
  const int D = p.head_dim, Dv = p.head_dim_v, ldq = padded(D), ldo = padded(Dv);
  const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;

  float *k_s = smem;                           /* [kBlockKeys][D] */
  float *v_s = k_s + (size_t)kBlockKeys * D;   /* [kBlockKeys][Dv] */
  float *q_s = v_s + (size_t)kBlockKeys * Dv;  /* [kTileQ][ldq] */
  float *do_s = q_s + (size_t)kTileQ * ldq;    /* [kTileQ][ldo] */
  const int64_t valid = j1 < seq.len_k ? j1 : seq.len_k; /* keys past seqused_k stay zero */
  stage_rows(k_s, D, p.k, p, b, seq.k_start, hkv, j0, kBlockKeys, valid, D);
  stage_rows(v_s, Dv, p.v, p, b, seq.k_start, hkv, j0, kBlockKeys, valid, Dv);

  const pa_mask m = pa_problem_mask(&p, &seq);
  const int64_t row0 = p.varlen ? seq.q_start : (int64_t)b * p.seqlen_q;
  float dk[kKeysPerWarp][kPerLane], dv[kKeysPerWarp][kPerLane];
#pragma unroll
  for (int u = 0; u < kKeysPerWarp; ++u)
#pragma unroll
    for (int t = 0; t < kPerLane; ++t) dk[u][t] = dv[u][t] = 0.0f;

  for (int g = 0; g < G; ++g) {
    const int32_t h = hkv * G + g;
    const float slope = pa_problem_alibi_slope(&p, b, h);
    for (int64_t q0 = 0; q0 < seq.len_q; q0 += kTileQ) {
      const int64_t q1 = q0 + kTileQ < seq.len_q ? q0 + kTileQ : seq.len_q;
      int64_t lo, hi; /* keys any row of the tile may keep */
      pa_mask_rows_range(&m, q0, q1, &lo, &hi);
      if (hi <= j0 || lo >= j1 || !pa_block_mask_any(&p, b, h, q0, q1, j0, j1)) continue; /* uniform */
      __syncthreads(); /* the previous tile is consumed (and K, V are staged) */
      stage_rows(q_s, ldq, p.q, p, b, seq.q_start, h, q0, kTileQ, q1, D);
      stage_rows(do_s, ldo, p.dout, p, b, seq.q_start, h, q0, kTileQ, q1, Dv);
      __syncthreads();

      const int64_t i = q0 + lane; /* this lane's query row */
      float lse = -INFINITY, dsum = 0.0f;
      if (i < q1) {
        const float *st = stats + 2 * ((row0 + i) * p.heads_q + h);
        lse = st[0];
        dsum = st[1];
      }
      const float *qrow = q_s + lane * ldq, *dorow = do_s + lane * ldo;
      /* 2:4: the warp's kKeysPerWarp = 4 keys are one aligned group; this row's scores
       * of all four decide which survive (the dq kernel decides the same way). */
      int sp24_pruned = 0;
      if (p.sparsity == POLYATTN_SPARSITY_NM_2_4) {
        float g[kKeysPerWarp];
#pragma unroll
        for (int u = 0; u < kKeysPerWarp; ++u) {
          const int64_t j = j0 + warp * kKeysPerWarp + u;
          const float *krow = k_s + (size_t)(warp * kKeysPerWarp + u) * D;
          float dot = 0.0f;
          for (int d = 0; d < D; ++d) dot = fmaf(qrow[d], krow[d], dot);
          g[u] = j < j1 && kept(p, m, b, h, i, j) ? pa_score(dot, p.scale, p.softcap, slope, &m, i, j)
                                                   : -INFINITY;
        }
#pragma unroll
        for (int u = 0; u < kKeysPerWarp; ++u) sp24_pruned |= !sp24_survives(g, u) << u;
      }
#pragma unroll
      for (int u = 0; u < kKeysPerWarp; ++u) {
        const int64_t j = j0 + warp * kKeysPerWarp + u;
        if (j >= j1) break; /* uniform in the warp */
        const float *krow = k_s + (size_t)(warp * kKeysPerWarp + u) * D;
        const float *vrow = v_s + (size_t)(warp * kKeysPerWarp + u) * Dv;
        float dot = 0.0f, dp = 0.0f;
        for (int d = 0; d < D; ++d) dot = fmaf(qrow[d], krow[d], dot);
        for (int d = 0; d < Dv; ++d) dp = fmaf(dorow[d], vrow[d], dp);
        const bool keep = kept(p, m, b, h, i, j) && lse > -INFINITY && !(sp24_pruned >> u & 1);
        const float pr =
            keep ? expf(pa_score(dot, p.scale, p.softcap, slope, &m, i, j) - lse) : 0.0f;
        const float ds = pr * (dp - dsum) * pa_score_ddot(dot, p.scale, p.softcap);
        for (int ii = 0; ii < kTileQ; ++ii) {
          const float pi = __shfl_sync(kFullMask, pr, ii, kWarpSize),
                    dsi = __shfl_sync(kFullMask, ds, ii, kWarpSize);
          const float *qr = q_s + ii * ldq, *dr = do_s + ii * ldo;
#pragma unroll
          for (int t = 0; t < kPerLane; ++t) {
            const int d = lane + t * kWarpSize;
            if (d < Dv) dv[u][t] = fmaf(pi, dr[d], dv[u][t]);
            if (d < D) dk[u][t] = fmaf(dsi, qr[d], dk[u][t]);
          }
        }
      }
    }
  }

#pragma unroll
  for (int u = 0; u < kKeysPerWarp; ++u) {
    const int64_t j = j0 + warp * kKeysPerWarp + u;
    if (j >= j1) break;
    const int64_t ka = pa_view_row(&p.dk, b, j, seq.k_start, hkv);
    const int64_t va = pa_view_row(&p.dv, b, j, seq.k_start, hkv);
#pragma unroll
    for (int t = 0; t < kPerLane; ++t) {
      const int d = lane + t * kWarpSize;
      if (d < D) pa_store_f32(p.dk.ptr, ka + d, p.dtype, dk[u][t]);
      if (d < Dv) pa_store_f32(p.dv.ptr, va + d, p.dtype, dv[u][t]);
    }
  }
}

cudaError_t opt_in(const void *fn, size_t smem) {
  if (smem <= kDefaultSmem) return cudaSuccess;
  /* Not a stream operation: allowed while the stream is being captured. */
  return cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
}

} /* namespace */

int pa_cuda_simple_backward_supports(const pa_problem *p, const pa_cuda_device *dev,
                                     pa_error *err) {
  const char *why = nullptr;
  if (p->pass != PA_PASS_BACKWARD) why = "the simple backward computes the backward pass only";
  else if (p->sparsity == POLYATTN_SPARSITY_AUTO_BLOCK)
    why = "the simple backward runs AUTO_BLOCK only as the BLOCK problem the estimator resolves";
  else if (p->dtype != POLYATTN_DTYPE_F32 && p->dtype != POLYATTN_DTYPE_F16 &&
           p->dtype != POLYATTN_DTYPE_BF16)
    why = "the simple backward takes f32, f16 or bf16";
  else if (p->heads_q > 65535 || p->batch > 65535)
    why = "more than 65535 heads or batch entries (grid limit)";
  else if (dq_smem(p) > dev->smem_optin || dkv_smem(p) > dev->smem_optin)
    why = "the tiles do not fit the device's shared memory";
  if (why) {
    if (err) snprintf(err->msg, sizeof err->msg, "%s", why);
    return 0;
  }
  return 1;
}

size_t pa_cuda_simple_backward_workspace(const pa_problem *p, const pa_cuda_device *dev) {
  (void)dev;
  return (size_t)stat_rows(p) * (size_t)p->heads_q * 2 * sizeof(float);
}

cudaError_t pa_cuda_simple_backward_dq(const pa_problem *p, const pa_cuda_device *dev,
                                       void *workspace, cudaStream_t stream) {
  (void)dev;
  if (p->batch <= 0 || p->heads_q <= 0 || p->seqlen_q <= 0 || p->total_q <= 0) return cudaSuccess;
  if (!workspace) return cudaErrorInvalidValue;
  const size_t smem = dq_smem(p);
  cudaError_t e = opt_in((const void *)bwd_dq_kernel, smem);
  if (e != cudaSuccess) return e;
  const dim3 grid((unsigned)((p->seqlen_q + kBlockQ - 1) / kBlockQ), (unsigned)p->heads_q,
                  (unsigned)p->batch);
  bwd_dq_kernel<<<grid, kThreads, smem, stream>>>(*p, static_cast<float *>(workspace));
  return cudaGetLastError();
}

cudaError_t pa_cuda_simple_backward(const pa_problem *p, const pa_cuda_device *dev,
                                    void *workspace, cudaStream_t stream) {
  if (p->batch <= 0 || p->heads_q <= 0) return cudaSuccess;
  if (stat_rows(p) > 0 && !workspace) return cudaErrorInvalidValue;
  float *stats = static_cast<float *>(workspace);
  cudaError_t e = pa_cuda_simple_backward_dq(p, dev, workspace, stream);
  if (e != cudaSuccess) return e;
  if (p->seqlen_k > 0 && p->total_k > 0) { /* every key row gets dK, dV (zero if unused) */
    const size_t smem = dkv_smem(p);
    if ((e = opt_in((const void *)bwd_dkv_kernel, smem)) != cudaSuccess) return e;
    const dim3 grid((unsigned)((p->seqlen_k + kBlockKeys - 1) / kBlockKeys), (unsigned)p->heads_kv,
                    (unsigned)p->batch);
    bwd_dkv_kernel<<<grid, kThreads, smem, stream>>>(*p, stats);
    if ((e = cudaGetLastError()) != cudaSuccess) return e;
  }
  return cudaSuccess;
}
