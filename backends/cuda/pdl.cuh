/* Programmatic dependent launch from the device side (sm_90; no-ops in code compiled
 * for older targets, where the host never asks for such a launch): the primary grid's
 * blocks let a dependent grid be scheduled, the dependent grid waits for the primary
 * to complete with its writes visible. Used by the decode merge (decode_mma.cuh,
 * fwd_decode.cu) and the Hopper backward's stream-K workers (bwd_hopper.cu). */
#ifndef PA_CUDA_PDL_CUH
#define PA_CUDA_PDL_CUH

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
