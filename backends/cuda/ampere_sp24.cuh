/* 2:4 sparsity (NM_2_4) in the Ampere forward kernel, on register fragments.
 *
 * Key order. With K read in PA_LDSM_COL_PAIR_24 order (ampere_tile.cuh), S column c
 * of n-tile 2m + a is key 16m + pa_sp24_key(a, c) (sp24_order.h), so a thread
 * (t = lane & 3) holds, for each 16-key block m and each of its rows r (g, g + 8),
 * the four scores of one aligned group of keys 16m + 4t .. +3: key 4t + i is
 * s[2m + pa_sp24_tile(t, i)][2r + (i & 1)]. The selection needs no other thread's data.
 *
 * Selection (docs/semantics.md step 5): keep the two largest of the four, ties to
 * the lower index; masked entries are -inf, so a group with two or fewer kept
 * entries keeps them (and a -inf partner that contributes p = 0). The kept pair,
 * in index order, is the group's compressed pair; exp runs on compressed values only.
 *
 * mma.sp operand A for the 32 keys 32q .. +31 (blocks m = 2q, 2q + 1): compressed
 * columns 2t, 2t + 1 are group t (block 2q) and 2t + 8, 2t + 9 group t + 4 (block
 * 2q + 1), exactly the pairs this thread holds:
 *   a[0] = row g, block 2q;  a[1] = row g + 8, block 2q;
 *   a[2] = row g, block 2q + 1;  a[3] = row g + 8, block 2q + 1.
 * Metadata (sparsity selector 0): quad thread 0 supplies row g's groups 0-3 in bits
 * 0-15 and row g + 8's in bits 16-31; thread 1 the same for groups 4-7; 4 bits per
 * group, the lower kept index in the lower 2 bits. Each thread contributes its
 * groups' nibbles at bit 4t (+16) and the quad ORs them (two xor-shuffles each). */
#ifndef PA_CUDA_AMPERE_SP24_CUH
#define PA_CUDA_AMPERE_SP24_CUH

#include "ampere_mma.cuh"
#include "sp24_order.h"

/* One group: v[0..3] in key order -> the kept pair (lo, hi) and its nibble. */
__device__ __forceinline__ void pa_sp24_group(float v0, float v1, float v2, float v3, bool select,
                                              float *lo, float *hi, uint32_t *nib) {
  bool k0 = true, k1 = true, k2 = false, k3 = false; /* no selection: the first two */
  if (select) {
    /* b_ij: i (< j) beats j; a key is kept when fewer than two beat it */
    const bool b01 = v0 >= v1, b02 = v0 >= v2, b03 = v0 >= v3;
    const bool b12 = v1 >= v2, b13 = v1 >= v3, b23 = v2 >= v3;
    k0 = (!b01) + (!b02) + (!b03) < 2;
    k1 = b01 + (!b12) + (!b13) < 2;
    k2 = b02 + b12 + (!b23) < 2;
    k3 = b03 + b13 + b23 < 2;
  }
  *lo = k0 ? v0 : (k1 ? v1 : v2);
  *hi = k3 ? v3 : (k2 ? v2 : v1);
  const uint32_t i_lo = k0 ? 0u : (k1 ? 1u : 2u), i_hi = k3 ? 3u : (k2 ? 2u : 1u);
  *nib = i_lo | i_hi << 2;
}

/* S [16 x 8 NT] (COL_PAIR_24 order) -> compressed c [16 x 4 NT]: c[m][2r], c[m][2r + 1]
 * are row r's kept pair of block m, the same fragment shape as S with half the
 * n-tiles, so the softmax steps run on it unchanged. nib[m] = row g's nibble | row
 * g + 8's << 4. select = false keeps keys 0, 1 of every group (timing only). */
template <int NT>
__device__ __forceinline__ void pa_sp24_select(const float (&s)[NT][4], float (&c)[NT / 2][4],
                                               uint32_t (&nib)[NT / 2], bool select, int t) {
  static_assert(NT % 2 == 0, "whole 16-key blocks");
  const bool swap = pa_sp24_tile(t, 0) != 0; /* keys 4t, 4t + 1 in the block's second n-tile */
#pragma unroll
  for (int m = 0; m < NT / 2; ++m) {
    float lo_t[4], hi_t[4]; /* keys 4t, 4t + 1 / 4t + 2, 4t + 3 (selects, not indexing) */
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      lo_t[e] = swap ? s[2 * m + 1][e] : s[2 * m][e];
      hi_t[e] = swap ? s[2 * m][e] : s[2 * m + 1][e];
    }
    uint32_t n0, n1;
    pa_sp24_group(lo_t[0], lo_t[1], hi_t[0], hi_t[1], select, &c[m][0], &c[m][1], &n0);
    pa_sp24_group(lo_t[2], lo_t[3], hi_t[2], hi_t[3], select, &c[m][2], &c[m][3], &n1);
    nib[m] = n0 | n1 << 4;
  }
}

/* P (compressed, after the softmax) -> the mma.sp A fragments and metadata of each
 * 32-key step q. */
template <typename T, int NC>
__device__ __forceinline__ void pa_sp24_fragments(const float (&p)[NC][4],
                                                  const uint32_t (&nib)[NC], int t,
                                                  uint32_t (&a)[NC / 2][4],
                                                  uint32_t (&meta)[NC / 2]) {
  static_assert(NC % 2 == 0, "whole 32-key steps");
#pragma unroll
  for (int q = 0; q < NC / 2; ++q) {
    a[q][0] = pa_pack2<T>(p[2 * q][0], p[2 * q][1]);
    a[q][1] = pa_pack2<T>(p[2 * q][2], p[2 * q][3]);
    a[q][2] = pa_pack2<T>(p[2 * q + 1][0], p[2 * q + 1][1]);
    a[q][3] = pa_pack2<T>(p[2 * q + 1][2], p[2 * q + 1][3]);
    /* what quad thread 0 (groups 0-3 = block 2q) and thread 1 (block 2q + 1) need */
    uint32_t m0 = ((nib[2 * q] & 0xfu) << (4 * t)) | ((nib[2 * q] >> 4) << (16 + 4 * t));
    uint32_t m1 = ((nib[2 * q + 1] & 0xfu) << (4 * t)) | ((nib[2 * q + 1] >> 4) << (16 + 4 * t));
    m0 |= __shfl_xor_sync(0xffffffffu, m0, 1);
    m1 |= __shfl_xor_sync(0xffffffffu, m1, 1);
    m0 |= __shfl_xor_sync(0xffffffffu, m0, 2);
    m1 |= __shfl_xor_sync(0xffffffffu, m1, 2);
    meta[q] = (t & 1) ? m1 : m0;
  }
}

#endif
