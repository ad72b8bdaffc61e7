/* Programmatic dependent launch (sm_90): the host launches a grid as a dependent of
 * the one before it in the stream; on the device the primary grid's blocks let it be
 * scheduled and the dependent grid waits for the primary to complete with its writes
 * visible (no-ops in code compiled for older targets, where the host never asks for
 * such a launch). Used by the decode merge (decode_mma.cuh, fwd_decode.cu) and the
 * Hopper backward's stream-K workers (bwd_hopper.cu). */
#ifndef PA_CUDA_PDL_CUH
#define PA_CUDA_PDL_CUH

#include <cuda_runtime.h>

/* kernel<<<grid, block, smem, stream>>>(args...) as a programmatic dependent launch. */
template <typename... Params, typename... Args>
cudaError_t pa_launch_dependent(void (*kernel)(Params...), dim3 grid, dim3 block, size_t smem,
                                cudaStream_t stream, Args &&...args) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  return cudaLaunchKernelEx(&cfg, kernel, static_cast<Args &&>(args)...);
}

__device__ __forceinline__ void pa_pdl_launch_dependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void pa_pdl_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}

#endif
