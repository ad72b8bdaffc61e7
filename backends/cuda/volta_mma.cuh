/* PTX wrappers and shared-memory tiles of the Volta forward kernel (fwd_volta.cu):
 * mma.sync m8n8k4 with fp32 accumulators, and plain (non-async) tile loads.
 *
 * Who holds which element of a fragment is volta_layout.h's business (the lane
 * maps, checked on the host by tests/test_mma_layout.c). Here a fragment is:
 *   A [16 x 4] .row, B [4 x 16] .col or .row: 4 halves = one uint2 (element 0 in
 *     the low half of .x), which is 8 contiguous bytes of a row-major tile;
 *   C [16 x 16] .f32: float[8].
 * Nothing here needs more than sm_70: no cp.async, no ldmatrix. On sm_80 and newer
 * the m8n8k4 instruction still assembles and computes the same result (the PTX ISA
 * notes it "may have substantially reduced performance" there). */
#ifndef PA_CUDA_VOLTA_MMA_CUH
#define PA_CUDA_VOLTA_MMA_CUH

#include <cuda_fp16.h>
#include <stdint.h>

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 700
#  define PA_VOLTA_ARCH_OK 1
#else
#  define PA_VOLTA_ARCH_OK 0
#endif

/* d[16 x 16] += a[16 x 4] . b[4 x 16], A row-major, B column-major (S = Q . K^T:
 * K's rows are B's columns). */
__device__ __forceinline__ void pa_mma_884_row_col(float (&d)[8], uint2 a, uint2 b) {
#if PA_VOLTA_ARCH_OK
  asm("mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32 {%0, %1, %2, %3, %4, %5, %6, %7}, "
      "{%8, %9}, {%10, %11}, {%0, %1, %2, %3, %4, %5, %6, %7};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
        "+f"(d[7])
      : "r"(a.x), "r"(a.y), "r"(b.x), "r"(b.y));
#endif
}

/* d[16 x 16] += a[16 x 4] . b[4 x 16], both row-major (O = P . V: V's rows are B's
 * rows, so a B fragment is 4 consecutive head-dim columns of one key). */
__device__ __forceinline__ void pa_mma_884_row_row(float (&d)[8], uint2 a, uint2 b) {
#if PA_VOLTA_ARCH_OK
  asm("mma.sync.aligned.m8n8k4.row.row.f32.f16.f16.f32 {%0, %1, %2, %3, %4, %5, %6, %7}, "
      "{%8, %9}, {%10, %11}, {%0, %1, %2, %3, %4, %5, %6, %7};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
        "+f"(d[7])
      : "r"(a.x), "r"(a.y), "r"(b.x), "r"(b.y));
#endif
}

/* Two floats rounded to fp16 and packed: `lo` in bits 0-15 (the lower column). */
__device__ __forceinline__ uint32_t pa_volta_pack2(float lo, float hi) {
  __half2 h = __floats2half2_rn(lo, hi);
  return *reinterpret_cast<uint32_t *>(&h);
}

/* A fragment: 4 halves at `p` (8-byte aligned shared memory). */
__device__ __forceinline__ uint2 pa_volta_lds64(const uint16_t *p) {
  return *reinterpret_cast<const uint2 *>(p);
}

/* Copy rows [0, ROWS) x columns [0, D) of a global fp16 matrix (row r at
 * src + r * row_stride elements, columns contiguous) into a shared tile of pitch
 * D + PA_VOLTA_PAD halves. Rows >= rows_valid and columns >= cols_valid become
 * zeros and are not read, so padded keys, rows and head-dim columns contribute
 * exact zeros (never NaN garbage into P . V). A 16-byte chunk is one vector load
 * when its address is 16-byte aligned and it lies inside the row; otherwise (odd
 * strides or offsets, the tail of a head dim) it is read element by element.
 * All NT threads of the block call it; the caller synchronises. */
enum { PA_VOLTA_PAD = 4 }; /* halves after each tile row: 8-byte fragment reads of 16
                              consecutive rows then fall in distinct banks */

template <int ROWS, int D, int NT>
__device__ __forceinline__ void pa_volta_tile_load(uint16_t *dst, const uint16_t *src,
                                                   int64_t row_stride, int rows_valid,
                                                   int cols_valid, int tid) {
  enum { chunks = D / 8, ld = D + PA_VOLTA_PAD };
#pragma unroll 2
  for (int idx = tid; idx < ROWS * chunks; idx += NT) {
    const int row = idx / chunks, col = (idx % chunks) * 8;
    uint4 x = make_uint4(0u, 0u, 0u, 0u);
    if (row < rows_valid && col < cols_valid) {
      const uint16_t *g = src + (int64_t)row * row_stride + col;
      if (col + 8 <= cols_valid && ((uintptr_t)g & 15) == 0) {
        x = *reinterpret_cast<const uint4 *>(g);
      } else {
        uint32_t w[4] = {0u, 0u, 0u, 0u};
#pragma unroll
        for (int k = 0; k < 8; ++k) /* unrolled: w stays in registers */
          if (col + k < cols_valid) w[k / 2] |= (uint32_t)g[k] << (16 * (k % 2));
        x = make_uint4(w[0], w[1], w[2], w[3]);
      }
    }
    uint2 *s = reinterpret_cast<uint2 *>(dst + row * ld + col); /* 8-byte aligned */
    s[0] = make_uint2(x.x, x.y);
    s[1] = make_uint2(x.z, x.w);
  }
}

#endif
