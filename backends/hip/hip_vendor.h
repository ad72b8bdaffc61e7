/* The CUDA runtime names the shared kernel sources (backends/cuda/ *.cu) use, mapped
 * onto HIP (ROCm 5.2 as Debian 12 ships it), in the manner of ggml's vendors/hip.h.
 * Included through backends/cuda/gpu_runtime.h when PA_HIP is defined, by hipcc for
 * the kernels and by the C compiler for the module's host side (the runtime part is
 * C; the device part only exists under __HIPCC__).
 *
 * Only names and semantics the kernels rely on are mapped; a CUDA name missing here
 * fails the HIP build, which is the point: a kernel that starts using something new
 * must say how it maps. */
#ifndef PA_HIP_VENDOR_H
#define PA_HIP_VENDOR_H

#ifndef __HIP_PLATFORM_AMD__
#  define __HIP_PLATFORM_AMD__ 1
#endif
#if defined(__HIPCC__)
#  include <hip/hip_fp16.h> /* __half, __half2, __half22float2 */
#  include <hip/hip_runtime.h>
#else
#  include <hip/hip_runtime_api.h>
#endif

/* ---- runtime (host) */
#define cudaError_t hipError_t
#define cudaSuccess hipSuccess
#define cudaErrorInvalidValue hipErrorInvalidValue
#define cudaErrorMemoryAllocation hipErrorOutOfMemory
#define cudaStream_t hipStream_t
#define cudaGetLastError hipGetLastError
#define cudaGetErrorString hipGetErrorString
#define cudaGetErrorName hipGetErrorName
#define cudaGetDevice hipGetDevice
#define cudaSetDevice hipSetDevice
#define cudaGetDeviceCount hipGetDeviceCount
#define cudaMemsetAsync hipMemsetAsync
#define cudaFuncAttributeMaxDynamicSharedMemorySize hipFuncAttributeMaxDynamicSharedMemorySize

#if defined(__HIPCC__)
/* CUDA's runtime API takes the kernel itself; HIP 5.2's only a const void *. */
template <typename F>
static inline hipError_t pa_hip_func_set_attribute(F *fn, hipFuncAttribute attr, int value) {
  return hipFuncSetAttribute(reinterpret_cast<const void *>(fn), attr, value);
}
#  define cudaFuncSetAttribute pa_hip_func_set_attribute

/* ---- device */

/* A kernel parameter in constant memory: HIP passes every kernel argument through
 * the kernarg segment already, so the qualifier has nothing to add. */
#  define __grid_constant__

/* CUDA's *_sync shuffles. The kernels pass `width` explicitly: a logical warp of
 * the shared sources is 32 lanes (kWarpSize), which on a 64-wide CDNA wavefront is
 * one half of it, and HIP's default width would be the whole wavefront. The mask
 * is not needed: HIP shuffles involve the active lanes of the width-group, and the
 * kernels only shuffle with their whole logical warp converged (a full mask). */
template <typename T>
__device__ __forceinline__ T __shfl_sync(unsigned int mask, T var, int src_lane, int width) {
  (void)mask;
  return __shfl(var, src_lane, width);
}
template <typename T>
__device__ __forceinline__ T __shfl_xor_sync(unsigned int mask, T var, int lane_mask, int width) {
  (void)mask;
  return __shfl_xor(var, lane_mask, width);
}

/* __syncwarp orders a warp's shared-memory accesses around it. A wavefront runs its
 * lanes in lockstep and its LDS operations in order; what remains is to keep the
 * compiler from moving memory operations across (a fence at wavefront scope, and a
 * scheduling barrier). A logical warp of 32 lanes inside a wave of 64 is covered. */
__device__ __forceinline__ void __syncwarp(unsigned int mask = 0xffffffffu) {
  (void)mask;
  __builtin_amdgcn_fence(__ATOMIC_SEQ_CST, "wavefront");
  __builtin_amdgcn_wave_barrier();
}
/* gpu_runtime.h's pa_opaque2: an empty asm statement over two VGPR values. */
__device__ __forceinline__ void pa_opaque2(int &a, int &b) { asm volatile("" : "+v"(a), "+v"(b)); }

/* CUDA's __ballot_sync over a logical warp of 32 lanes (the block-list builder,
 * backends/cuda/block_list.cuh): HIP's __ballot covers the whole wavefront, 64 bits
 * on CDNA, so a 32-lane warp takes its own half (lane bit 5 picks it; on a wave32
 * it is always 0). The mask is not needed, as for the shuffles above. */
__device__ __forceinline__ unsigned int __ballot_sync(unsigned int mask, int pred) {
  (void)mask;
  return (unsigned int)(__ballot(pred) >> (__lane_id() & 32));
}
#endif /* __HIPCC__ */

#endif
