/* The MFMA layer of the HIP module: the fragment types and the one instruction
 * shape fwd_mfma.cu uses (v_mfma_f32_32x32x8{f16,bf16_1k}; who holds what is
 * backends/hip/mfma_layout.h, tested on the CPU). Everything above this layer, the
 * online softmax (common/softmax.h), masks and scores (common/mask.h), the block
 * context and support rules (backends/cuda/block_ctx.cuh), is the code the CUDA
 * kernels use.
 *
 * Which targets have the instructions (CDNA ISA guides; clang's target features
 * "mai-insts" and gfx90a-insts):
 *   gfx908 (MI100)          32x32x8f16; bf16 only as the older 32x32x4bf16 (2 per lane)
 *   gfx90a (MI200), gfx94x  32x32x8f16 and 32x32x8bf16_1k
 * Other targets (RDNA, GCN) compile the kernel to a trap, and the dispatcher never
 * picks it there (pa_hip_mfma_supports). */
#ifndef PA_HIP_MFMA_CUH
#define PA_HIP_MFMA_CUH

#include <stdint.h>

#include "gpu_runtime.h"
#include "hip/mfma_layout.h"

#if defined(__gfx908__) || defined(__gfx90a__) || defined(__gfx940__) || defined(__gfx941__) || \
    defined(__gfx942__)
#  define PA_MFMA_F16_OK 1
#else
#  define PA_MFMA_F16_OK 0
#endif
#if defined(__gfx90a__) || defined(__gfx940__) || defined(__gfx941__) || defined(__gfx942__)
#  define PA_MFMA_BF16_OK 1
#else
#  define PA_MFMA_BF16_OK 0
#endif

/* Whether this compilation target has the 32x32x8 MFMA of a dtype (a constant of
 * each device pass; false in the host pass). */
template <int DTYPE>
__host__ __device__ constexpr bool pa_mfma_has() {
  return (DTYPE == POLYATTN_DTYPE_F16 && PA_MFMA_F16_OK) ||
         (DTYPE == POLYATTN_DTYPE_BF16 && PA_MFMA_BF16_OK);
}

typedef short pa_i16x4 __attribute__((ext_vector_type(4)));     /* A or B: 4 x 16-bit */
typedef _Float16 pa_f16x4 __attribute__((ext_vector_type(4)));
typedef float pa_f32x16 __attribute__((ext_vector_type(16)));    /* C/D: 16 x fp32 */

/* acc [32 x 32] += a [32 x 8] . b [8 x 32]; a and b hold the dtype's bits. */
template <int DTYPE>
__device__ __forceinline__ pa_f32x16 pa_mfma32(pa_i16x4 a, pa_i16x4 b, pa_f32x16 acc);

template <>
__device__ __forceinline__ pa_f32x16 pa_mfma32<POLYATTN_DTYPE_F16>(pa_i16x4 a, pa_i16x4 b,
                                                                    pa_f32x16 acc) {
#if PA_MFMA_F16_OK
  return __builtin_amdgcn_mfma_f32_32x32x8f16(__builtin_bit_cast(pa_f16x4, a),
                                              __builtin_bit_cast(pa_f16x4, b), acc, 0, 0, 0);
#else
  __builtin_trap();
  return acc;
#endif
}

template <>
__device__ __forceinline__ pa_f32x16 pa_mfma32<POLYATTN_DTYPE_BF16>(pa_i16x4 a, pa_i16x4 b,
                                                                     pa_f32x16 acc) {
#if PA_MFMA_BF16_OK
  return __builtin_amdgcn_mfma_f32_32x32x8bf16_1k(a, b, acc, 0, 0, 0);
#else
  __builtin_trap();
  return acc;
#endif
}

/* fp32 -> the dtype's bits, round to nearest even (common/convert.h). */
template <int DTYPE>
__device__ __forceinline__ short pa_mfma_round(float x) {
  return (short)(DTYPE == POLYATTN_DTYPE_F16 ? pa_f32_to_f16(x) : pa_f32_to_bf16(x));
}

#endif
