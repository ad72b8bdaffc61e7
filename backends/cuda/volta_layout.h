/* Who holds what in mma.sync.aligned.m8n8k4 (Volta's HMMA.884), for the Volta
 * forward kernel (fwd_volta.cu) and its host-side check (tests/test_mma_layout.c).
 * Plain C with PA_HD, so the same functions run in the kernel and in the test.
 *
 * The instruction (PTX ISA, "Matrix Fragments for mma.m8n8k4 with .f16 floating
 * point type"; the same maps are CuTe's SM70_QuadPair, SM70_8x4_Row/_Col and
 * SM70_8x8_32b in cute/atom/mma_traits_sm70.hpp):
 *   A warp computes FOUR independent 8x8x4 products, one per quad pair (QP):
 *   QP q = lanes 4q..4q+3 (the low group) and 16+4q..16+4q+3 (the high group).
 *   Within a QP, hi = lane >= 16 and t = lane % 4:
 *     A .row [8 x 4], a0..a3 (two .f16x2):   row = t + 4 hi,  col (k) = i
 *     B .col [4 x 8], b0..b3 (two .f16x2):   row (k) = i,     col (n) = t + 4 hi
 *     B .row [4 x 8], b0..b3 (two .f16x2):   row (k) = t,     col (n) = i + 4 hi
 *     C/D .f32 [8 x 8], c0..c7:
 *       row = (lane & 1) + (i & 2) + 4 hi
 *       col = (i & 4) + (lane & 2) + (i & 1)
 *   So a thread's eight accumulators are two rows (i & 2 picks which) times four
 *   columns {0, 1, 4, 5} + (lane & 2); c[2k], c[2k+1] are adjacent columns.
 *
 * The warp tile of this project: one instruction computes a [16 x 16] block of C
 * with k = 4 by giving each QP one quadrant:
 *     QP 0: rows 0-7,  cols 0-7      QP 2: rows 0-7,  cols 8-15
 *     QP 1: rows 8-15, cols 0-7      QP 3: rows 8-15, cols 8-15
 * i.e. row offset 8 * (q & 1), column offset 8 * (q >> 1). QPs 0 and 2 (1 and 3)
 * read the same A rows; QPs 0 and 1 (2 and 3) the same B columns.
 * A thread then holds, in every [16 x 16] accumulator block, two rows
 *     pa_volta_row(lane, r) = 8 (q & 1) + (lane & 1) + 2 r + 4 hi,   r = 0, 1
 * (element i belongs to r = (i >> 1) & 1), and the four lanes lane ^ {0, 2, 8, 10}
 * hold the same two rows: a row reduction is two xor-shuffles, by 2 and by 8. */
#ifndef PA_CUDA_VOLTA_LAYOUT_H
#define PA_CUDA_VOLTA_LAYOUT_H

#include "portable.h"

/* ---- one 8x8x4 product, inside one quad pair (the ISA's maps) */

/* The quad pair of a lane, and its high-group bit. */
PA_HD static inline int pa_m884_qp(int lane) { return (lane >> 2) & 3; }
PA_HD static inline int pa_m884_hi(int lane) { return (lane >> 4) & 1; }

/* A .row: a_i = A[pa_m884_a_row(lane)][i]. */
PA_HD static inline int pa_m884_a_row(int lane) { return (lane & 3) + 4 * pa_m884_hi(lane); }

/* B .col: b_i = B[i][pa_m884_bcol_n(lane)]. */
PA_HD static inline int pa_m884_bcol_n(int lane) { return (lane & 3) + 4 * pa_m884_hi(lane); }

/* B .row: b_i = B[pa_m884_brow_k(lane)][pa_m884_brow_n(lane, i)]. */
PA_HD static inline int pa_m884_brow_k(int lane) { return lane & 3; }
PA_HD static inline int pa_m884_brow_n(int lane, int i) { return i + 4 * pa_m884_hi(lane); }

/* C/D .f32: c_i = C[pa_m884_c_row(lane, i)][pa_m884_c_col(lane, i)]. */
PA_HD static inline int pa_m884_c_row(int lane, int i) {
  return (lane & 1) + (i & 2) + 4 * pa_m884_hi(lane);
}
PA_HD static inline int pa_m884_c_col(int lane, int i) { return (i & 4) + (lane & 2) + (i & 1); }

/* ---- the [16 x 16] warp tile (quadrant of QP q: rows 8 (q & 1), cols 8 (q >> 1)) */

PA_HD static inline int pa_volta_row0(int lane) { return 8 * (pa_m884_qp(lane) & 1); }
PA_HD static inline int pa_volta_col0(int lane) { return 8 * (pa_m884_qp(lane) >> 1); }

/* A [16 x 4] .row: a_i = A[pa_volta_a_row(lane)][i]. */
PA_HD static inline int pa_volta_a_row(int lane) { return pa_volta_row0(lane) + pa_m884_a_row(lane); }

/* B [4 x 16] .col: b_i = B[i][pa_volta_bcol_n(lane)]. */
PA_HD static inline int pa_volta_bcol_n(int lane) {
  return pa_volta_col0(lane) + pa_m884_bcol_n(lane);
}

/* B [4 x 16] .row: b_i = B[pa_volta_brow_k(lane)][pa_volta_brow_n(lane, i)]; the four
 * columns i = 0..3 are consecutive, so a thread's fragment is 8 contiguous bytes of
 * a row-major B. */
PA_HD static inline int pa_volta_brow_k(int lane) { return pa_m884_brow_k(lane); }
PA_HD static inline int pa_volta_brow_n(int lane, int i) {
  return pa_volta_col0(lane) + pa_m884_brow_n(lane, i);
}

/* C [16 x 16] .f32: c_i = C[pa_volta_c_row(lane, i)][pa_volta_c_col(lane, i)]. */
PA_HD static inline int pa_volta_c_row(int lane, int i) {
  return pa_volta_row0(lane) + pa_m884_c_row(lane, i);
}
PA_HD static inline int pa_volta_c_col(int lane, int i) {
  return pa_volta_col0(lane) + pa_m884_c_col(lane, i);
}

/* The thread's two rows of every accumulator block (r = 0, 1), and which of them
 * accumulator element i lies in: pa_volta_c_row(lane, i) ==
 * pa_volta_row(lane, pa_volta_elem_row(i)). */
PA_HD static inline int pa_volta_row(int lane, int r) {
  return pa_volta_row0(lane) + (lane & 1) + 2 * r + 4 * pa_m884_hi(lane);
}
PA_HD static inline int pa_volta_elem_row(int i) { return (i >> 1) & 1; }
/* The e-th (e = 0..3, left to right) of the thread's four elements in row r of a
 * block: columns pa_volta_c_col(lane, pa_volta_elem(r, e)) increase with e. */
PA_HD static inline int pa_volta_elem(int r, int e) { return (e & 1) + 2 * r + 4 * (e >> 1); }

/* The xor-masks of the lanes that hold the same rows (row reductions). */
enum { PA_VOLTA_ROW_XOR_A = 2, PA_VOLTA_ROW_XOR_B = 8 };

#endif
