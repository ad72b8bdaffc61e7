/* Shared-memory tiles of the Ampere forward kernel: the swizzled layout and the
 * cp.async loads that fill it.
 *
 * A tile is [rows x D] 16-bit elements, stored row after row (D * 2 bytes per row,
 * no padding), each row as D / 8 chunks of 16 bytes. ldmatrix reads one chunk from
 * each of 8 consecutive rows (rows 8a .. 8a+7, same logical chunk); unswizzled, those
 * land in the same 4 banks whenever the row pitch is a multiple of 128 bytes. The
 * chunk index is therefore XORed with bits of the row so the 8 chunks fall in 8
 * distinct 16-byte bank groups (addresses mod 128 bytes):
 *   chunks per row % 8 == 0 (D = 64, 128, 192, 256): chunk ^ (row & 7)
 *   chunks per row % 8 == 4 (D = 32, 96):            chunk ^ ((row >> 1) & 3)
 *     (the pitch is 64 bytes mod 128, so row parity already picks the upper or lower
 *      half of the 128 bytes; the XOR spreads the 4 rows of equal parity over the 4
 *      chunks of that half, and stays inside the aligned group of 4 chunks.)
 * The same layout serves the cp.async writes, the O staging writes (one chunk per
 * row of 8 consecutive rows) and the 16-byte O reads. */
#ifndef PA_CUDA_AMPERE_TILE_CUH
#define PA_CUDA_AMPERE_TILE_CUH

#include <stdint.h>

#include "ampere_mma.cuh"
#include "problem.h"
#include "sp24_order.h"

template <int D>
struct pa_tile_layout {
  enum { chunks = D / 8 }; /* 16-byte chunks per row */
  static_assert(chunks % 4 == 0, "the swizzle needs a multiple of 4 chunks per row");

  /* Byte offset of chunk `chunk` of row `row`. */
  __device__ __forceinline__ static uint32_t offset(int row, int chunk) {
    const int phys = (chunks % 8 == 0) ? (chunk ^ (row & 7)) : (chunk ^ ((row >> 1) & 3));
    return (uint32_t)((row * chunks + phys) * 16);
  }
  /* The same swizzle within the row, in bytes, for a caller that keeps the row pitch
   * (decode_mma.cuh's rings). (offset() keeps its own spelling: written through this,
   * ptxas 13.0 scheduled two kernels differently.) */
  __device__ __forceinline__ static int chunk_bytes(int row, int chunk) {
    return ((chunks % 8 == 0) ? (chunk ^ (row & 7)) : (chunk ^ ((row >> 1) & 3))) * 16;
  }
};

/* Copy rows [0, ROWS) x columns [0, D) of a global [rows x cols] matrix (row r at
 * src + r * row_stride elements, columns contiguous, rows 16-byte aligned) into the
 * tile at shared address `dst`. Rows >= rows_valid and columns >= cols_valid are
 * zero-filled without reading global memory (cp.async src-size), so padded rows,
 * keys and head-dim columns contribute exact zeros. `any_ptr` is a valid global
 * address given to the copies that read nothing. All NT threads of the block call
 * it; the caller commits the group. */
template <int ROWS, int D, int NT, typename T>
__device__ __forceinline__ void pa_tile_load(uint32_t dst, const T *src, int64_t row_stride,
                                             int rows_valid, int cols_valid, const T *any_ptr,
                                             int tid) {
  typedef pa_tile_layout<D> L;
  enum { per_thread = ROWS * L::chunks / NT };
  static_assert(ROWS * L::chunks % NT == 0, "every thread copies the same number of chunks");
#pragma unroll
  for (int c = 0; c < per_thread; ++c) {
    const int idx = tid + c * NT;
    const int row = idx / L::chunks, chunk = idx % L::chunks;
    int bytes = (cols_valid - chunk * 8) * 2;
    bytes = bytes < 0 ? 0 : (bytes > 16 ? 16 : bytes);
    if (row >= rows_valid) bytes = 0;
    const T *g = bytes ? src + (int64_t)row * row_stride + chunk * 8 : any_ptr;
    pa_cp_async_16(dst + L::offset(row, chunk), g, bytes);
  }
}

/* pa_tile_load for a tile that is whole: all ROWS rows inside the tensor and all D
 * columns valid (rows_valid >= ROWS, cols_valid >= D), so no copy needs a zero fill or
 * a bounds test. Thread tid copies chunk tid % chunks of rows tid / chunks + k * (NT /
 * chunks); a pass of NT / chunks rows is a multiple of 8 rows, so every copy keeps the
 * first copy's swizzle and its shared address is the first one's plus a compile-time
 * constant, and its global address the first one's plus k row-steps (one 64-bit add
 * each). The general loop above recomputes row, chunk, the byte count and a 64-bit
 * product per chunk: on the H200 its 16 copies per thread and 64-key tile (hd128)
 * compiled to 533 instructions, a quarter of the forward kernel's warp samples
 * (bench/RESULTS.md, fourteenth session). Shapes without whole passes
 * (pa_tile_full_shape::ok = 0: hd 96, 192, 256 at 128 threads) keep the general loop. */
template <int ROWS, int D, int NT>
struct pa_tile_full_shape {
  enum {
    chunks = pa_tile_layout<D>::chunks,
    ok = NT % chunks == 0 && (NT / chunks) % 8 == 0 && ROWS % (NT / chunks) == 0,
    passes = ok ? ROWS / (NT / chunks) : 0 /* copies per thread */
  };
};
template <int ROWS, int D, int NT, typename T>
__device__ __forceinline__ void pa_tile_load_full(
    uint32_t dst, const T *src, int64_t row_stride, unsigned tid, int k0 = 0,
    int k1 = pa_tile_full_shape<ROWS, D, NT>::passes) {
  typedef pa_tile_layout<D> L;
  enum { pass_rows = NT / L::chunks, passes = pa_tile_full_shape<ROWS, D, NT>::passes };
  static_assert(pa_tile_full_shape<ROWS, D, NT>::ok,
                "whole passes of whole swizzle periods (8 rows)");
  const unsigned row = tid / L::chunks, chunk = tid % L::chunks;
  const char *g = (const char *)(src + (int64_t)row * row_stride + chunk * 8);
  const int64_t step = row_stride * (int64_t)(pass_rows * sizeof(T));
  const uint32_t d = dst + L::offset((int)row, (int)chunk);
#pragma unroll
  for (int k = 0; k < passes; ++k)
    if (k >= k0 && k < k1) /* passes [k0, k1) only (compile-time bounds once inlined) */
      pa_cp_async_16_full(d + k * pass_rows * L::chunks * 16, g + k * step);
}

/* ldmatrix row addresses. Every operand tile is read as 16 x 16 blocks of four 8x8
 * matrices, in one of two orders:
 *   ROW_PAIR (Q as the A operand; V with .trans as the B operand):
 *     matrix i = lane / 8 covers rows 8 * (i & 1) .. +7, chunk i >> 1:
 *     regs = {rows 0-7 / cols 0-7, rows 8-15 / cols 0-7, rows 0-7 / cols 8-15,
 *             rows 8-15 / cols 8-15}
 *   COL_PAIR (K as the B operand, not transposed):
 *     matrix i covers rows 8 * (i >> 1) .. +7, chunk i & 1:
 *     regs = {keys 0-7 / dims 0-7, keys 0-7 / dims 8-15, keys 8-15 / dims 0-7,
 *             keys 8-15 / dims 8-15} = {b0, b1} of key n-tile 0, {b0, b1} of n-tile 1.
 *   COL_PAIR_24 (K for the 2:4 kernel): as COL_PAIR with the keys of each 16-key
 *     block permuted so that S column c of n-tile a is key pa_sp24_key(a, c)
 *     (sp24_order.h): the S values a thread holds in the two n-tiles (columns 2t,
 *     2t + 1) are then keys 4t .. 4t + 3, one aligned group of four, and each
 *     matrix still reads 8 rows in 8 distinct bank groups.
 * The lane's part of the address is computed once: for a block at row0 (a multiple
 * of 16) and chunks 2kk, 2kk+1, the swizzle XOR touches only the low 3 (or 2) bits
 * of the chunk, so the address is base + off[kk % P] + a compile-time constant,
 * and the unrolled loops issue ldmatrix with immediate offsets. */
enum pa_ldsm_order { PA_LDSM_ROW_PAIR = 0, PA_LDSM_COL_PAIR = 1, PA_LDSM_COL_PAIR_24 = 2 };

template <int D, int ORDER, bool ONE = false>
struct pa_ldsm_lane {
  enum {
    chunks = pa_tile_layout<D>::chunks,
    xmask = (chunks % 8 == 0) ? 7 : 3, /* chunk bits the swizzle XORs */
    period = (xmask + 1) / 2           /* K steps after which the XOR pattern repeats */
  };
  /* ONE: only off[0] is kept (at() below); else the lane's offset per kk % period */
  uint32_t off[ONE ? 1 : period];

  __device__ __forceinline__ explicit pa_ldsm_lane(int lane) {
    const int c = lane & 7, a = lane >> 4; /* COL_PAIR: row c of n-tile a's matrices */
    const int lr = ORDER == PA_LDSM_COL_PAIR      ? c + 8 * a
                   : ORDER == PA_LDSM_COL_PAIR_24 ? pa_sp24_key(a, c)
                                                  : (lane & 15);
    const int lc = ORDER == PA_LDSM_ROW_PAIR ? (lane >> 4) : ((lane >> 3) & 1);
    const int x = xmask == 7 ? (lr & 7) : ((lr >> 1) & 3); /* as pa_tile_layout::offset */
#pragma unroll
    for (int q = 0; q < (ONE ? 1 : period); ++q)
      off[q] = (uint32_t)((lr * chunks + ((2 * q + lc) ^ x)) * 16);
  }

  /* Address of the 16 x 16 block at rows row0.. (row0 % 16 == 0), chunks 2kk, 2kk+1.
   * ONE: with q = kk % period the lane's chunk is (2q + lc) ^ x = (lc ^ x) ^ 2q, so its
   * offset is off[0] ^ (q << 5); that XOR touches address bits 5-6 (period 4) or bit 5
   * (period 2), and every other term (lr * chunks * 16, row0 * chunks * 16, the chunk
   * group (2kk & ~xmask) * 16) is a multiple of 128 (chunks % 8 == 0) or of 64 (chunks %
   * 8 == 4), so the XOR commutes with those additions whenever `base` is such a multiple
   * too (the forward's tiles are: pa_smem is 128-aligned and every tile's size a multiple
   * of 128 bytes). One register per lane instead of `period` for the whole key loop, for
   * a LOP3 per (base, q) and tile. */
  __device__ __forceinline__ uint32_t at(uint32_t base, int row0, int kk) const {
    if constexpr (ONE)
      return ((base + off[0]) ^ (uint32_t)((kk % period) << 5)) +
             (uint32_t)((row0 * chunks + ((2 * kk) & ~xmask)) * 16);
    else
      return base + off[kk % period] + (uint32_t)((row0 * chunks + ((2 * kk) & ~xmask)) * 16);
  }
};

/* The cp.async loads copy 16-byte chunks from row starts, so every row of the tiled
 * tensors must be 16-byte aligned: base pointers 16-byte aligned, strides multiples
 * of 8 elements. The name of the first of the n views that is not, else nullptr. */
struct pa_named_view {
  const pa_view *v;
  const char *name;
};
template <int N>
inline const char *pa_first_misaligned_row(const pa_named_view (&views)[N]) {
  for (const pa_named_view &x : views)
    if ((uintptr_t)x.v->ptr % 16 != 0 || x.v->stride_b % 8 != 0 || x.v->stride_s % 8 != 0 ||
        x.v->stride_h % 8 != 0)
      return x.name;
  return nullptr;
}

#endif
