/* The MFMA forward kernel of the HIP module: the forward tile loop of the CUDA
 * module (backends/cuda/fwd_tile.cuh, also the CUDA Ampere kernel) on the MFMA
 * fragment layer (mfma_frag.cuh): fp16/bf16 on CDNA (gfx908 fp16 only, gfx90a,
 * gfx94x), v_mfma_f32_32x32x8 with fp32 accumulators.
 *
 * Not yet run on AMD hardware (none was available): it is compiled for the CDNA
 * targets in CI, its fragment maps are tested on the CPU (tests/test_mfma_layout.c),
 * and it is opt-in (POLYATTN_HIP_KERNEL=mfma) until it has been compared with the
 * simple kernel on a device (docs/decisions.md, backends/hip/README.md).
 *
 * Only the head-dim bucket (32, 64, 128, 256) and the dtype are template
 * parameters; masks, softcap, ALiBi, varlen and block masks are runtime values.
 * BLOCK sparsity walks the key-tile list of backends/cuda/block_list.cuh, built on
 * the GPU in the workspace before the kernel, as on CUDA. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "hip/hip_kernels.h" /* first: the runtime, through backends/cuda/gpu_runtime.h */
#include "block_ctx.cuh"
#include "block_list.cuh"
#include "fwd_tile.cuh"
#include "hip/hip_arch.h"
#include "hip/mfma_frag.cuh"

namespace {

/* The kernel: the forward tile loop on the MFMA layer, where the target has the
 * dtype's MFMA (backends/hip/mfma.cuh); elsewhere a trap, never launched
 * (pa_hip_mfma_supports). */
template <int DTYPE, int DB>
__global__ void __launch_bounds__((pa_mfma_frag<DTYPE, DB>::threads)) /* parenthesised: HIP's is a macro */
    pa_mfma_fwd_kernel(const __grid_constant__ pa_problem p, const int32_t *block_list) {
  if constexpr (pa_mfma_has<DTYPE>()) {
    extern __shared__ __align__(16) unsigned char pa_smem[];
    pa_fwd_tile<pa_mfma_frag<DTYPE, DB>>(p, block_list, 0, pa_smem);
  } else {
    __builtin_trap();
  }
}

/* The head-dim bucket: the smallest of 32, 64, 128, 256 that holds D and Dv. */
int bucket_of(const pa_problem *p) {
  const int d = p->head_dim > p->head_dim_v ? p->head_dim : p->head_dim_v;
  return d <= 32 ? 32 : d <= 64 ? 64 : d <= 128 ? 128 : d <= 256 ? 256 : 0;
}

/* A bucket as a type: f(pa_bucket_t<DB>()) for the compiled buckets, DB = 0 for none. */
template <int DB>
struct pa_bucket_t {
  enum { db = DB };
};
template <typename F>
auto with_bucket(int bucket, F &&f) -> decltype(f(pa_bucket_t<32>())) {
  switch (bucket) {
  case 32: return f(pa_bucket_t<32>());
  case 64: return f(pa_bucket_t<64>());
  case 128: return f(pa_bucket_t<128>());
  case 256: return f(pa_bucket_t<256>());
  }
  return f(pa_bucket_t<0>());
}

/* The tiles' shared memory (the same for both dtypes). */
int smem_bytes_of(const pa_problem *p) {
  return with_bucket(bucket_of(p), [](auto b) -> int {
    typedef decltype(b) B;
    if constexpr (B::db == 0) return 0;
    else return pa_mfma_frag<POLYATTN_DTYPE_F16, B::db>::smem_bytes;
  });
}

/* BLOCK sparsity with a mask: the kernel walks a key-tile list in the workspace. */
bool uses_block_list(const pa_problem *p) {
  return p->sparsity == POLYATTN_SPARSITY_BLOCK && p->block_mask.buf;
}

template <int DTYPE>
cudaError_t launch_bucket(const pa_problem *p, void *workspace, cudaStream_t stream) {
  return with_bucket(bucket_of(p), [&](auto b) -> cudaError_t {
    typedef decltype(b) B;
    if constexpr (B::db == 0) {
      return cudaErrorInvalidValue;
    } else {
      typedef pa_mfma_frag<DTYPE, B::db> L;
      const dim3 grid((unsigned)((p->seqlen_q + L::block_q - 1) / L::block_q),
                      (unsigned)p->heads_q, (unsigned)p->batch);
      int32_t *list = nullptr;
      if (uses_block_list(p)) {
        if (!workspace) return cudaErrorInvalidValue; /* the plan asked for the list's bytes */
        list = static_cast<int32_t *>(workspace);
        const cudaError_t e =
            pa_block_list_build<L::block_q, L::block_k, L::warp_rows>(p, list, stream);
        if (e != cudaSuccess) return e;
      }
      pa_mfma_fwd_kernel<DTYPE, B::db><<<grid, L::threads, L::smem_bytes, stream>>>(*p, list);
      return cudaGetLastError();
    }
  });
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
  else if (uses_block_list(p) && (p->seqlen_k + 31) / 32 >= (1 << (31 - PA_BLOCK_LIST_N_SHIFT)))
    why = "the MFMA kernel's BLOCK tile list indexes at most 2^15 key tiles (Sk up to 1M)";
  else if ((size_t)smem_bytes_of(p) > dev->smem_optin)
    why = "the MFMA kernel's tiles do not fit the device's shared memory";
  if (!why) return 1;
  if (err) snprintf(err->msg, sizeof err->msg, "%s", why);
  return 0;
}

size_t pa_hip_mfma_workspace(const pa_problem *p, const pa_cuda_device *dev) {
  (void)dev; /* BLOCK's key-tile list for the kernel's tile shape; nothing else */
  if (!uses_block_list(p) || bucket_of(p) == 0) return 0;
  return with_bucket(bucket_of(p), [&](auto b) -> size_t {
    typedef decltype(b) B;
    if constexpr (B::db == 0) return 0;
    else {
      typedef pa_mfma_frag<POLYATTN_DTYPE_F16, B::db> L;
      return pa_block_list_bytes(p, L::block_q, L::block_k);
    }
  });
}

cudaError_t pa_hip_mfma_forward(const pa_problem *p, const pa_cuda_device *dev, void *workspace,
                                cudaStream_t stream) {
  (void)dev;
  if (p->batch == 0 || p->heads_q == 0 || p->seqlen_q == 0 || p->total_q == 0)
    return cudaSuccess; /* no row to write */
  return p->dtype == POLYATTN_DTYPE_F16 ? launch_bucket<POLYATTN_DTYPE_F16>(p, workspace, stream)
                                        : launch_bucket<POLYATTN_DTYPE_BF16>(p, workspace, stream);
}
