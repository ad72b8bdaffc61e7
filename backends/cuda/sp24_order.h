/* The 2:4 kernel's key order (ampere_sp24.cuh), plain C with PA_HD so the kernel
 * and tests/test_mma_layout.c use the same function.
 *
 * In each 16-key block of S, K is read (ldmatrix, PA_LDSM_COL_PAIR_24) so that S
 * column c of n-tile a (a = 0, 1; c = 0..7) holds key pa_sp24_key(a, c). Thread t of
 * a quad holds columns 2t, 2t + 1 of both n-tiles, which are then the aligned group
 * of keys 4t .. 4t + 3, so it can select within the group without shuffles. Which
 * n-tile holds which half of the group alternates with t >> 1, so that the 8 key
 * rows one ldmatrix matrix reads fall in 8 distinct bank groups under the tile
 * swizzle (ampere_tile.cuh): residues mod 8 all distinct (chunk ^ (row & 7)) and
 * (row & 1, (row >> 1) & 3) all distinct (chunk ^ ((row >> 1) & 3)). The plain
 * order 4t + 2a + x read rows 0, 1, 4, 5, 8, 9, 12, 13 for a = 0: a two-way bank
 * conflict on every K read (the 2:4 kernel measured 0.79x dense at hd128 with it). */
#ifndef PA_CUDA_SP24_ORDER_H
#define PA_CUDA_SP24_ORDER_H

#include "portable.h"

/* The key (0..15 in its 16-key block) of S n-tile a, column c. */
PA_HD static inline int pa_sp24_key(int a, int c) {
  return 4 * (c >> 1) + 2 * (a ^ (c >> 2)) + (c & 1);
}

/* Key 4t + i of thread t's group is in n-tile pa_sp24_tile(t, i), column 2t + (i & 1). */
PA_HD static inline int pa_sp24_tile(int t, int i) { return (i >> 1) ^ (t >> 1); }

#endif
