/* The MFMA forward kernel of the HIP module: fp16/bf16 on CDNA (gfx908 fp16 only,
 * gfx90a, gfx94x), v_mfma_f32_32x32x8 with fp32 accumulators.
 *
 * Not yet run on AMD hardware (none was available): it is compiled for the CDNA
 * targets in CI, its fragment maps are tested on the CPU (tests/test_mfma_layout.c),
 * and it is opt-in (POLYATTN_HIP_KERNEL=mfma) until it has been compared with the
 * simple kernel on a device (docs/decisions.md, backends/hip/README.md).
 *
 * Shape: a block of kWaves wavefronts; wavefront w owns query rows
 * i0 + 32 w .. i0 + 32 w + 31, one row per lane pair (lanes l and l + 32 hold row
 * l % 32). Per key tile of kKeys = 32 keys (K tile row-major and V tile transposed
 * in shared memory, staged by the whole block):
 *   S^T [32 keys x 32 rows] = K [32 x D] . Q^T [D x 32]   D / 8 MFMAs; Q^T's B
 *                              fragments are loaded once and kept in registers
 *   scores, masks, softmax    element by element with common/mask.h and the steps of
 *                              common/softmax.h; a lane holds 16 keys of its row, the
 *                              other 16 are in lane l ^ 32 (one shuffle per reduction)
 *   O^T [Dv x 32 rows] += V^T [Dv x 32] . P^T [32 x 32]   P^T's B fragments are S^T's
 *                              accumulators rounded to the dtype, in place
 *                              (pa_mfma32_cd_as_b: no shuffle, no shared memory)
 * Computing the transposed products is what lets P stay in registers: the MFMA
 * accumulator layout of S^T is the B layout of P^T. Masked and padded entries are
 * -inf before the softmax, so they contribute exactly 0.
 *
 * Only the head-dim bucket (32, 64, 128, 256) and the dtype are template
 * parameters; masks, softcap, ALiBi and varlen are runtime values. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "hip/hip_kernels.h" /* first: the runtime, through backends/cuda/gpu_runtime.h */
#include "block_ctx.cuh"
#include "convert.h"
#include "hip/hip_arch.h"
#include "hip/mfma.cuh"
#include "mask.h"
#include "softmax.h"

namespace {

/* Untuned first choices, not measured (no AMD GPU): two wavefronts share each K/V
 * tile; 4 elements (8 bytes) of padding after each shared-memory row keep rows
 * 8-byte aligned for the fragment loads and shift consecutive rows across banks. */
constexpr int kWave = 64;                      /* CDNA wavefront */
constexpr int kWaves = 2;                      /* wavefronts per block */
constexpr int kThreads = kWaves * kWave;
constexpr int kRowsPerWave = PA_MFMA32_N;      /* S^T's columns are query rows */
constexpr int kBlockQ = kWaves * kRowsPerWave;
constexpr int kKeys = PA_MFMA32_M;             /* S^T's rows are keys */
constexpr int kKSteps = kKeys / PA_MFMA32_K;   /* k-steps of V^T . P^T */
constexpr int kPad = 4;                        /* 16-bit elements after each smem row */
static_assert(kKSteps * 4 == PA_MFMA32_CD_REGS, "S^T's 16 accumulators are P^T's 4 k-steps");

/* Shared memory, 16-bit elements: K [kKeys][DB + kPad], then V^T [DB][kKeys + kPad]. */
__host__ __device__ constexpr int k_pitch(int db) { return db + kPad; }
__host__ __device__ constexpr int vt_pitch() { return kKeys + kPad; }
__host__ __device__ constexpr size_t smem_bytes(int db) {
  return sizeof(uint16_t) * ((size_t)kKeys * k_pitch(db) + (size_t)db * vt_pitch());
}

/* Four consecutive 16-bit elements (8-byte aligned) as an A or B fragment. */
__device__ __forceinline__ pa_i16x4 load4(const uint16_t *s) {
  return *reinterpret_cast<const pa_i16x4 *>(s);
}

template <int DTYPE, int DB>
__global__ void __launch_bounds__(kThreads)
    mfma_forward_kernel(const __grid_constant__ pa_problem p) {
#if (DTYPE == POLYATTN_DTYPE_F16 && PA_MFMA_F16_OK) || (DTYPE == POLYATTN_DTYPE_BF16 && PA_MFMA_BF16_OK)
  constexpr int QK_STEPS = DB / PA_MFMA32_K; /* k-steps of K . Q^T over the head dim */
  constexpr int O_BLOCKS = DB / PA_MFMA32_M; /* [32 x 32] blocks of O^T */
  extern __shared__ __align__(16) uint16_t smem[];
  uint16_t *k_s = smem;                              /* [kKeys][k_pitch] */
  uint16_t *vt_s = smem + (size_t)kKeys * k_pitch(DB); /* [DB][vt_pitch] */

  pa_block_ctx c;
  if (!pa_block_ctx_init(c, p, blockIdx.z, blockIdx.y, blockIdx.x * kBlockQ, kBlockQ)) return;
  const int tid = threadIdx.x, wave = tid / kWave, lane = tid % kWave;
  const int D = p.head_dim, Dv = p.head_dim_v;
  const int64_t i = (int64_t)c.i0 + wave * kRowsPerWave + pa_mfma32_b_col(lane); /* my row */
  const bool row_ok = i < c.i_end;
  const float slope = pa_problem_alibi_slope(&p, c.b, c.h);
  const bool use_block_mask = p.sparsity == POLYATTN_SPARSITY_BLOCK && p.block_mask.buf;

  /* Q^T's B fragments for every k-step: lane holds row i, dims 8 ks + b_k(lane, e). */
  const uint16_t *q_g = static_cast<const uint16_t *>(p.q.ptr);
  const int64_t q_row = row_ok ? pa_view_row(&p.q, c.b, i, c.seq.q_start, c.h) : 0;
  pa_i16x4 qf[QK_STEPS];
#pragma unroll
  for (int ks = 0; ks < QK_STEPS; ++ks)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int d = ks * PA_MFMA32_K + pa_mfma32_b_k(lane, e);
      qf[ks][e] = row_ok && d < D ? (short)q_g[q_row + d] : (short)0;
    }

  pa_softmax_row row = pa_softmax_start();
  pa_f32x16 o[O_BLOCKS];
#pragma unroll
  for (int ob = 0; ob < O_BLOCKS; ++ob)
#pragma unroll
    for (int r = 0; r < PA_MFMA32_CD_REGS; ++r) o[ob][r] = 0.0f;

  const int n_lo = (int)(c.klo / kKeys);
  const int n_hi = c.klo < c.khi ? (int)((c.khi + kKeys - 1) / kKeys) : n_lo;
  bool partial = false; /* every tile is masked element by element; unused */
  int n = use_block_mask ? pa_block_mask_next<kKeys, kThreads>(p, c, n_lo, n_hi, tid, &partial)
                         : n_lo;
  const uint16_t *k_g = static_cast<const uint16_t *>(p.k.ptr);
  const uint16_t *v_g = static_cast<const uint16_t *>(p.v.ptr);

  while (n < n_hi) {
    const int64_t k0 = (int64_t)n * kKeys;
    const int nk = c.seq.len_k - k0 < kKeys ? (int)(c.seq.len_k - k0) : kKeys;
    __syncthreads(); /* the previous tile's K and V are consumed */
    for (int idx = tid; idx < kKeys * DB; idx += kThreads) {
      const int jj = idx / DB, d = idx % DB;
      const int64_t at = jj < nk ? pa_view_row(&p.k, c.b, k0 + jj, c.seq.k_start, c.hk) : 0;
      k_s[jj * k_pitch(DB) + d] = jj < nk && d < D ? k_g[at + d] : (uint16_t)0;
    }
    for (int idx = tid; idx < kKeys * DB; idx += kThreads) {
      const int jj = idx / DB, d = idx % DB;
      const int64_t at = jj < nk ? pa_view_row(&p.v, c.b, k0 + jj, c.seq.k_start, c.hk) : 0;
      vt_s[d * vt_pitch() + jj] = jj < nk && d < Dv ? v_g[at + d] : (uint16_t)0;
    }
    __syncthreads();

    /* S^T = K . Q^T: A = K rows (keys) from shared memory. */
    pa_f32x16 s;
#pragma unroll
    for (int r = 0; r < PA_MFMA32_CD_REGS; ++r) s[r] = 0.0f;
#pragma unroll
    for (int ks = 0; ks < QK_STEPS; ++ks)
      s = pa_mfma32<DTYPE>(load4(k_s + pa_mfma32_a_row(lane) * k_pitch(DB) + ks * PA_MFMA32_K +
                                 pa_mfma32_a_k(lane, 0)),
                           qf[ks], s);

    /* Scores and masks, then step 1 (update max) over the row's 32 keys. */
    float tile_max = -INFINITY;
#pragma unroll
    for (int r = 0; r < PA_MFMA32_CD_REGS; ++r) {
      const int64_t j = k0 + pa_mfma32_cd_row(lane, r);
      const bool kept = row_ok && j < k0 + nk && pa_mask_keep(&c.mask, i, j) &&
                        (!use_block_mask ||
                         pa_block_mask_keep(&p.block_mask, c.b, c.h, (int32_t)(i / p.block_q),
                                            (int32_t)(j / p.block_k)));
      s[r] = kept ? pa_score(s[r], p.scale, p.softcap, slope, &c.mask, i, j) : -INFINITY;
      tile_max = fmaxf(tile_max, s[r]);
    }
    tile_max = fmaxf(tile_max, __shfl_xor(tile_max, 32, kWave)); /* the row's other 16 keys */
    const float alpha = pa_softmax_update_max(&row, tile_max);

    /* Step 3's exponentials, rounded into P^T's B fragments in place. */
    const float ref = pa_softmax_ref(&row);
    float sum = 0.0f;
    pa_i16x4 pf[kKSteps];
#pragma unroll
    for (int ks = 0; ks < kKSteps; ++ks)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const float pr = expf(s[pa_mfma32_cd_as_b(ks, e)] - ref);
        sum += pr;
        pf[ks][e] = pa_mfma_round<DTYPE>(pr);
      }
    sum += __shfl_xor(sum, 32, kWave);

    /* Step 2, rescale; step 3, accumulate: l += sum p, O^T += V^T . P^T. */
    pa_softmax_rescale(&row, alpha);
    pa_softmax_accumulate(&row, sum);
#pragma unroll
    for (int ob = 0; ob < O_BLOCKS; ++ob) {
#pragma unroll
      for (int r = 0; r < PA_MFMA32_CD_REGS; ++r) o[ob][r] *= alpha;
#pragma unroll
      for (int ks = 0; ks < kKSteps; ++ks)
        o[ob] = pa_mfma32<DTYPE>(load4(vt_s + (ob * PA_MFMA32_M + pa_mfma32_a_row(lane)) * vt_pitch() +
                                       ks * PA_MFMA32_K + pa_mfma32_a_k(lane, 0)),
                                 pf[ks], o[ob]);
    }

    n = use_block_mask ? pa_block_mask_next<kKeys, kThreads>(p, c, n + 1, n_hi, tid, &partial)
                       : n + 1;
  }

  /* Step 4, normalise; a lane writes its 16 dims of each O^T block for its row. */
  if (!row_ok) return;
  const float norm = pa_softmax_normaliser(&row);
  const int64_t o_row = pa_view_row(&p.o, c.b, i, c.seq.q_start, c.h);
#pragma unroll
  for (int ob = 0; ob < O_BLOCKS; ++ob)
#pragma unroll
    for (int r = 0; r < PA_MFMA32_CD_REGS; ++r) {
      const int d = ob * PA_MFMA32_M + pa_mfma32_cd_row(lane, r);
      if (d < Dv) pa_store_f32(p.o.ptr, o_row + d, p.dtype, o[ob][r] * norm);
    }
  if (p.lse.buf && pa_mfma32_half(lane) == 0)
    static_cast<float *>(p.lse.ptr)[pa_lse_index(&p.lse, c.b, c.h, i, c.seq.q_start)] =
        pa_softmax_lse(&row);
#else
  __builtin_trap(); /* no MFMA for this dtype on this target: never launched here */
#endif
}

/* The head-dim bucket: the smallest of 32, 64, 128, 256 that holds D and Dv. */
int bucket_of(const pa_problem *p) {
  const int d = p->head_dim > p->head_dim_v ? p->head_dim : p->head_dim_v;
  return d <= 32 ? 32 : d <= 64 ? 64 : d <= 128 ? 128 : d <= 256 ? 256 : 0;
}

template <int DTYPE, int DB>
cudaError_t launch(const pa_problem *p, cudaStream_t stream) {
  const dim3 grid((unsigned)((p->seqlen_q + kBlockQ - 1) / kBlockQ), (unsigned)p->heads_q,
                  (unsigned)p->batch);
  mfma_forward_kernel<DTYPE, DB><<<grid, kThreads, smem_bytes(DB), stream>>>(*p);
  return cudaGetLastError();
}

template <int DTYPE>
cudaError_t launch_bucket(const pa_problem *p, cudaStream_t stream) {
  switch (bucket_of(p)) {
  case 32: return launch<DTYPE, 32>(p, stream);
  case 64: return launch<DTYPE, 64>(p, stream);
  case 128: return launch<DTYPE, 128>(p, stream);
  case 256: return launch<DTYPE, 256>(p, stream);
  }
  return cudaErrorInvalidValue;
}

} // namespace

int pa_hip_has_mfma(const pa_cuda_device *dev, polyattn_dtype dtype) {
  return pa_hip_arch_has_mfma(dev->cc_major, dev->cc_minor, dtype);
}

int pa_hip_mfma_supports(const pa_problem *p, const pa_cuda_device *dev, pa_error *err) {
  if (!pa_tiled_forward_supports(p, "MFMA", err)) return 0;
  const char *why = NULL;
  if (p->dtype != POLYATTN_DTYPE_F16 && p->dtype != POLYATTN_DTYPE_BF16)
    why = "the MFMA kernel takes fp16 or bf16 inputs only";
  else if (!pa_hip_has_mfma(dev, p->dtype))
    why = p->dtype == POLYATTN_DTYPE_F16
              ? "the MFMA kernel needs gfx908, gfx90a or gfx94x"
              : "the MFMA kernel's bf16 needs gfx90a or gfx94x (v_mfma_f32_32x32x8bf16_1k)";
  else if (bucket_of(p) == 0)
    why = "the MFMA kernel takes head dims up to 256";
  else if (smem_bytes(bucket_of(p)) > dev->smem_optin)
    why = "the MFMA kernel's tiles do not fit the device's shared memory";
  if (!why) return 1;
  if (err) snprintf(err->msg, sizeof err->msg, "%s", why);
  return 0;
}

size_t pa_hip_mfma_workspace(const pa_problem *p, const pa_cuda_device *dev) {
  (void)p;
  (void)dev;
  return 0;
}

cudaError_t pa_hip_mfma_forward(const pa_problem *p, const pa_cuda_device *dev, void *workspace,
                                cudaStream_t stream) {
  (void)dev;
  (void)workspace;
  if (p->batch == 0 || p->heads_q == 0 || p->seqlen_q == 0 || p->total_q == 0)
    return cudaSuccess; /* no row to write */
  return p->dtype == POLYATTN_DTYPE_F16 ? launch_bucket<POLYATTN_DTYPE_F16>(p, stream)
                                        : launch_bucket<POLYATTN_DTYPE_BF16>(p, stream);
}
