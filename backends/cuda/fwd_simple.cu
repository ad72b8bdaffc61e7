/* The simple CUDA forward: fp32 arithmetic on CUDA cores, every dtype, every
 * architecture, every forward feature. It is the fallback and the reference the
 * tensor-core kernels are compared with on the device, so it is written for
 * clarity; its speed only has to be reasonable.
 *
 * One thread block per (query tile of kBlockQ rows, query head, batch entry). The
 * block stages its Q tile once, then walks the key tiles that any of its rows may
 * keep: a K tile is staged in shared memory as fp32, every lane of a warp scores
 * one key against the warp's rows, the online-softmax steps of common/softmax.h
 * fold the tile in, then the V tile replaces K in the same buffer and each lane
 * accumulates its columns of O. Masks, scores and sequence bounds come only from
 * the common/ helpers, read on the device (cu_seqlens, seqused_k, block masks). */
#include <stdint.h>
#include <stdio.h>

#include "convert.h"
#include "kernels.h"
#include "warp_reduce.cuh"
#include "mask.h"
#include "softmax.h"

namespace {

constexpr int kWarpSize = 32;
constexpr int kWarps = 4;
constexpr int kRowsPerWarp = 4;
constexpr int kThreads = kWarps * kWarpSize;
constexpr int kBlockQ = kWarps * kRowsPerWarp; // query rows per block
constexpr int kBlockK = kWarpSize;             // keys per tile: one per lane
constexpr int kDvPerLane = (POLYATTN_MAX_HEAD_DIM + kWarpSize - 1) / kWarpSize;
constexpr unsigned kFullMask = 0xffffffffu;
// Up to this much dynamic shared memory needs no opt-in.
constexpr size_t kDefaultSmem = 48 * 1024;

static_assert(sizeof(pa_problem) <= 4096, "the problem is passed as a kernel parameter");

// Shared memory: Q [kBlockQ][D], then one buffer [kBlockK][max(D, Dv) + 1] holding
// the K tile and then the V tile. The +1 keeps the lanes' K rows in distinct banks.
__host__ __device__ inline int kv_stride(int d, int dv) { return (d > dv ? d : dv) + 1; }

size_t smem_bytes(const pa_problem *p) {
  return sizeof(float) *
         ((size_t)kBlockQ * p->head_dim + (size_t)kBlockK * kv_stride(p->head_dim, p->head_dim_v));
}

__global__ void __launch_bounds__(kThreads)
    simple_forward_kernel(const __grid_constant__ pa_problem p) {
  extern __shared__ float smem[];
  const int32_t h = blockIdx.y, b = blockIdx.z;
  const pa_seq seq = pa_problem_seq(&p, b);
  const int64_t q0 = (int64_t)blockIdx.x * kBlockQ;
  if (q0 >= seq.len_q) return; // the grid covers the longest sequence
  const int64_t q1 = q0 + kBlockQ < seq.len_q ? q0 + kBlockQ : seq.len_q;
  const int32_t hkv = h / (p.heads_q / p.heads_kv);
  const int D = p.head_dim, Dv = p.head_dim_v, ld = kv_stride(D, Dv);
  const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;

  float *q_s = smem;                        // [kBlockQ][D]
  float *kv_s = smem + (size_t)kBlockQ * D; // [kBlockK][ld]: K tile, then V tile

  const pa_mask m = pa_problem_mask(&p, &seq);
  const float slope = pa_problem_alibi_slope(&p, b, h);

  for (int idx = threadIdx.x; idx < kBlockQ * D; idx += kThreads) {
    const int r = idx / D, d = idx % D;
    const int64_t i = q0 + r;
    q_s[idx] = i < q1 ? pa_load_f32(p.q.ptr, pa_view_row(&p.q, b, i, seq.q_start, h) + d, p.dtype)
                      : 0.0f;
  }

  pa_softmax_row row[kRowsPerWarp];
  float acc[kRowsPerWarp][kDvPerLane]; // [rows of this warp][columns lane + 32 t]
#pragma unroll
  for (int r = 0; r < kRowsPerWarp; ++r) {
    row[r] = pa_softmax_start();
#pragma unroll
    for (int t = 0; t < kDvPerLane; ++t) acc[r][t] = 0.0f;
  }

  // Keys any row of the tile may keep; tiles aligned to kBlockK.
  int64_t klo, khi;
  pa_mask_rows_range(&m, q0, q1, &klo, &khi);
  const int64_t k_first = klo < khi ? klo / kBlockK * kBlockK : khi;

  for (int64_t k0 = k_first; k0 < khi; k0 += kBlockK) {
    const int nk = seq.len_k - k0 < kBlockK ? (int)(seq.len_k - k0) : kBlockK;
    if (!pa_block_mask_any(&p, b, h, q0, q1, k0, k0 + nk)) continue; // uniform in the block
    __syncthreads(); // the previous tile's V is consumed (and Q is staged)
    for (int idx = threadIdx.x; idx < kBlockK * D; idx += kThreads) {
      const int jj = idx / D, d = idx % D;
      kv_s[jj * ld + d] =
          jj < nk ? pa_load_f32(p.k.ptr, pa_view_row(&p.k, b, k0 + jj, seq.k_start, hkv) + d, p.dtype)
                  : 0.0f;
    }
    __syncthreads();

    // Scores: lane = key k0 + lane, against each of the warp's rows.
    float dot[kRowsPerWarp];
#pragma unroll
    for (int r = 0; r < kRowsPerWarp; ++r) dot[r] = 0.0f;
    const float *q_w = q_s + (size_t)warp * kRowsPerWarp * D;
    for (int d = 0; d < D; ++d) {
      const float kd = kv_s[lane * ld + d];
#pragma unroll
      for (int r = 0; r < kRowsPerWarp; ++r) dot[r] = fmaf(q_w[r * D + d], kd, dot[r]);
    }

    // Online softmax, step by step (common/softmax.h); prob[r] is this lane's p.
    const int64_t j = k0 + lane;
    float prob[kRowsPerWarp];
#pragma unroll
    for (int r = 0; r < kRowsPerWarp; ++r) {
      const int64_t i = q0 + warp * kRowsPerWarp + r;
      const bool kept = i < q1 && lane < nk && pa_mask_keep(&m, i, j) &&
                        pa_block_mask_keep(&p.block_mask, b, h, (int32_t)(i / p.block_q),
                                           (int32_t)(j / p.block_k));
      float s = kept ? pa_score(dot[r], p.scale, p.softcap, slope, &m, i, j) : -INFINITY;
      if (p.sparsity == POLYATTN_SPARSITY_NM_2_4) {
        // 2:4: the group of keys 4g..4g+3 is lanes 4g..4g+3 (tiles start at multiples
        // of 32); keep this key if fewer than two of the group beat it (larger, or
        // equal at a lower key). Masked keys are -inf, so they lose to kept ones.
        int beaten = 0;
#pragma unroll
        for (int a = 0; a < 4; ++a) {
          const float other = __shfl_sync(kFullMask, s, (lane & ~3) + a, kWarpSize);
          beaten += other > s || (other == s && a < (lane & 3));
        }
        if (beaten >= 2) s = -INFINITY;
      }
      const bool live = s > -INFINITY;
      const float alpha = pa_softmax_update_max(&row[r], pa_warp_max<kWarpSize>(s));
      prob[r] = live ? expf(s - pa_softmax_ref(&row[r])) : 0.0f;
      pa_softmax_rescale(&row[r], alpha);
      pa_softmax_accumulate(&row[r], pa_warp_sum<kWarpSize>(prob[r]));
#pragma unroll
      for (int t = 0; t < kDvPerLane; ++t) acc[r][t] *= alpha;
    }

    __syncthreads(); // every warp is done with K
    for (int idx = threadIdx.x; idx < kBlockK * Dv; idx += kThreads) {
      const int jj = idx / Dv, d = idx % Dv;
      kv_s[jj * ld + d] =
          jj < nk ? pa_load_f32(p.v.ptr, pa_view_row(&p.v, b, k0 + jj, seq.k_start, hkv) + d, p.dtype)
                  : 0.0f;
    }
    __syncthreads();

    // acc[r][t] += sum_jj p[r][jj] * V[jj][lane + 32 t]; p broadcast from lane jj.
    for (int jj = 0; jj < nk; ++jj) {
      const float *v_row = kv_s + jj * ld;
#pragma unroll
      for (int r = 0; r < kRowsPerWarp; ++r) {
        const float pj = __shfl_sync(kFullMask, prob[r], jj, kWarpSize);
#pragma unroll
        for (int t = 0; t < kDvPerLane; ++t) {
          const int d = lane + t * kWarpSize;
          if (d < Dv) acc[r][t] = fmaf(pj, v_row[d], acc[r][t]);
        }
      }
    }
  }

  // Normalise and store every column of every valid row; empty rows get O = 0 and
  // LSE = -inf from the softmax steps.
#pragma unroll
  for (int r = 0; r < kRowsPerWarp; ++r) {
    const int64_t i = q0 + warp * kRowsPerWarp + r;
    if (i >= q1) continue;
    const float norm = pa_softmax_normaliser(&row[r]);
    const int64_t o_row = pa_view_row(&p.o, b, i, seq.q_start, h);
#pragma unroll
    for (int t = 0; t < kDvPerLane; ++t) {
      const int d = lane + t * kWarpSize;
      if (d < Dv) pa_store_f32(p.o.ptr, o_row + d, p.dtype, acc[r][t] * norm);
    }
    if (p.lse.buf && lane == 0)
      static_cast<float *>(p.lse.ptr)[pa_lse_index(&p.lse, b, h, i, seq.q_start)] =
          pa_softmax_lse(&row[r]);
  }
}

} // namespace

int pa_cuda_simple_supports(const pa_problem *p, const pa_cuda_device *dev, pa_error *err) {
  const char *why = nullptr;
  if (p->pass != PA_PASS_FORWARD) why = "the simple kernel is forward only";
  else if (p->dtype == POLYATTN_DTYPE_FP8_E4M3)
    why = "the simple kernel takes f32, f16 and bf16 (fp8_e4m3 runs on the hopper-fp8 kernel)";
  else if (p->head_dim > POLYATTN_MAX_HEAD_DIM || p->head_dim_v > POLYATTN_MAX_HEAD_DIM)
    why = "head dims above POLYATTN_MAX_HEAD_DIM";
  else if (p->sparsity == POLYATTN_SPARSITY_AUTO_BLOCK)
    why = "the simple kernel runs AUTO_BLOCK only as the BLOCK problem the estimator resolves";
  else if (p->heads_q > 65535 || p->batch > 65535)
    why = "more than 65535 heads or batch entries (grid limit)";
  else if (smem_bytes(p) > dev->smem_optin)
    why = "the tiles do not fit the device's shared memory";
  if (why) {
    snprintf(err->msg, sizeof err->msg, "%s", why);
    return 0;
  }
  return 1;
}

size_t pa_cuda_simple_workspace(const pa_problem *p, const pa_cuda_device *dev) {
  (void)p;
  (void)dev;
  return 0;
}

cudaError_t pa_cuda_simple_forward(const pa_problem *p, const pa_cuda_device *dev,
                                   void *workspace, cudaStream_t stream) {
  (void)dev;
  (void)workspace;
  if (p->batch == 0 || p->heads_q == 0 || p->seqlen_q == 0 || p->total_q == 0)
    return cudaSuccess; // no row to write
  const size_t smem = smem_bytes(p);
  if (smem > kDefaultSmem) {
    // Not a stream operation: allowed while the stream is being captured.
    cudaError_t e = cudaFuncSetAttribute(simple_forward_kernel,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (e != cudaSuccess) return e;
  }
  const dim3 grid((unsigned)((p->seqlen_q + kBlockQ - 1) / kBlockQ), (unsigned)p->heads_q,
                  (unsigned)p->batch);
  simple_forward_kernel<<<grid, kThreads, smem, stream>>>(*p);
  return cudaGetLastError();
}
