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

#endif
