/* The GPU runtime the kernel sources of backends/cuda/ are written against: the
 * CUDA runtime, or, when the HIP module builds the same sources (PA_HIP), the HIP
 * runtime under the CUDA names (backends/hip/hip_vendor.h). Kernels and their
 * launch code include this instead of <cuda_runtime.h>; nothing else in them knows
 * which vendor compiles them, except the matrix-instruction layer. */
#ifndef PA_GPU_RUNTIME_H
#define PA_GPU_RUNTIME_H

#if defined(PA_HIP)
#  include "hip/hip_vendor.h"
#else
#  include <cuda_runtime.h>
#endif

/* Whether NVIDIA's warp-level matrix layer (mma.sync, ldmatrix, cp.async: the
 * ampere_*.cuh, volta_*.cuh and decode_mma.cuh headers) exists in this build. The
 * HIP build has its own layer (backends/hip/mfma.cuh) and compiles only the scalar
 * paths of the shared kernels. */
#if defined(PA_HIP)
#  define PA_HAS_MMA_SYNC 0
#else
#  define PA_HAS_MMA_SYNC 1
#endif

/* pa_opaque2(a, b): from here on the compiler treats a and b as unknown values, so
 * it recomputes what depends on them instead of hoisting it out of a loop into
 * registers (frag_scores.cuh). An empty asm statement; its register constraint is
 * the vendor's (HIP: hip_vendor.h). */
#if defined(__CUDACC__) && !defined(PA_HIP)
__device__ __forceinline__ void pa_opaque2(int &a, int &b) { asm volatile("" : "+r"(a), "+r"(b)); }
#endif

#endif
