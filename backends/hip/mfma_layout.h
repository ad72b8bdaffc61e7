/* Who holds what in the AMD matrix instructions the HIP kernels use: for a lane of
 * the wave and an element index of its register fragment, the (row, column) of the
 * matrix it holds. Plain C with PA_HD, so the same functions index the fragments in
 * the kernels (fwd_mfma.cu) and run on the CPU in tests/test_mfma_layout.c, which
 * checks them against a model of each instruction (no AMD GPU needed).
 *
 * Sources: AMD's Matrix Instruction Calculator (ROCm/amd_matrix_instruction_calculator,
 * --detail-instruction / --register-layout for CDNA2 and RDNA3), the AMD lab notes
 * "AMD matrix cores", and the CDNA2 and RDNA3 ISA guides. The maps were written from
 * those descriptions; the calculator's "matrix element to register" formulae (the
 * opposite direction) are transcribed separately in the test.
 *
 * MFMA 32x32x8 (CDNA: gfx908, gfx90a; gfx94x), wavefront of 64 lanes, no CBSZ/ABID/
 * BLGP modifiers, one block:
 *   v_mfma_f32_32x32x8f16       A, B: 4 x f16 per lane (two VGPRs); gfx908 and gfx90a
 *   v_mfma_f32_32x32x8bf16_1k   A, B: 4 x bf16 per lane, same layout; gfx90a and newer
 *   D[32 x 32] (+)= A[32 x 8] . B[8 x 32], fp32 C/D, 16 VGPRs per lane.
 *   Lane l, h = l / 32 (which half of the wave):
 *     A element e (0..3):  row l % 32,              k 4h + e
 *     B element e (0..3):  k 4h + e,                col l % 32
 *     C/D register r:      row 8 (r / 4) + 4h + r % 4,  col l % 32
 *   So a lane holds one column of D, and rows {8 (r / 4) + 4h + r % 4}: registers
 *   4s..4s+3 are rows 8s + 4h .. 8s + 4h + 3, which are exactly the k = 4h + e of a
 *   B fragment of k-step s. An accumulator therefore feeds the next product as its
 *   B operand with no data movement (pa_mfma32_cd_as_b below), which fwd_mfma.cu
 *   uses to compute O^T = V^T . P^T straight from S^T = K . Q^T.
 *
 * WMMA 16x16x16 (RDNA3: gfx11), wave32:
 *   v_wmma_f32_16x16x16_f16 / _bf16: A, B: 16 x f16/bf16 per lane (8 VGPRs)
 *   D[16 x 16] (+)= A[16 x 16] . B[16 x 16], fp32 C/D, 8 VGPRs per lane.
 *     A element e (0..15): row l % 16, k e   (lanes 16..31 repeat lanes 0..15)
 *     B element e (0..15): k e, col l % 16   (likewise)
 *     C/D register r:      row 2 r + l / 16, col l % 16
 *   Debian 12's clang 15 cannot compile the gfx11 WMMA builtins (no gfx1100 device
 *   libraries, and its backend rejects the builtin), so no kernel uses this layout
 *   yet; it is here, tested, for the RDNA3 instantiation (backends/hip/README.md). */
#ifndef PA_HIP_MFMA_LAYOUT_H
#define PA_HIP_MFMA_LAYOUT_H

#include "portable.h"

/* ---- MFMA 32x32x8, wave64 */
enum {
  PA_MFMA32_LANES = 64,
  PA_MFMA32_M = 32,
  PA_MFMA32_N = 32,
  PA_MFMA32_K = 8,
  PA_MFMA32_AB_ELEMS = 4,  /* f16/bf16 elements of A (or B) per lane */
  PA_MFMA32_CD_REGS = 16   /* fp32 accumulators per lane */
};

PA_HD static inline int pa_mfma32_half(int lane) { return (lane >> 5) & 1; }

PA_HD static inline int pa_mfma32_a_row(int lane) { return lane & 31; }
PA_HD static inline int pa_mfma32_a_k(int lane, int e) { return 4 * pa_mfma32_half(lane) + e; }

PA_HD static inline int pa_mfma32_b_k(int lane, int e) { return 4 * pa_mfma32_half(lane) + e; }
PA_HD static inline int pa_mfma32_b_col(int lane) { return lane & 31; }

PA_HD static inline int pa_mfma32_cd_row(int lane, int r) {
  return 8 * (r >> 2) + 4 * pa_mfma32_half(lane) + (r & 3);
}
PA_HD static inline int pa_mfma32_cd_col(int lane, int r) {
  (void)r;
  return lane & 31;
}

/* The accumulator register of a lane that holds B element e of k-step s, when a
 * [32 x 32] accumulator is read as four [8 x 32] B operands (s = 0..3). */
PA_HD static inline int pa_mfma32_cd_as_b(int s, int e) { return 4 * s + e; }

/* ---- WMMA 16x16x16, wave32 (RDNA3) */
enum {
  PA_WMMA16_LANES = 32,
  PA_WMMA16_M = 16,
  PA_WMMA16_N = 16,
  PA_WMMA16_K = 16,
  PA_WMMA16_AB_ELEMS = 16,
  PA_WMMA16_CD_REGS = 8
};

PA_HD static inline int pa_wmma16_a_row(int lane) { return lane & 15; }
PA_HD static inline int pa_wmma16_a_k(int lane, int e) {
  (void)lane;
  return e;
}
PA_HD static inline int pa_wmma16_b_k(int lane, int e) {
  (void)lane;
  return e;
}
PA_HD static inline int pa_wmma16_b_col(int lane) { return lane & 15; }
PA_HD static inline int pa_wmma16_cd_row(int lane, int r) { return 2 * r + ((lane >> 4) & 1); }
PA_HD static inline int pa_wmma16_cd_col(int lane, int r) {
  (void)r;
  return lane & 15;
}

#endif
