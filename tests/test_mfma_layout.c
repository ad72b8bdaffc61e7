/* The fragment maps of backends/hip/mfma_layout.h against CPU models of the AMD
 * matrix instructions (no AMD GPU needed; runs in CI).
 *
 * The models are written from AMD's Matrix Instruction Calculator's "matrix element
 * to register mapping" formulae (--detail-instruction, CDNA2 and RDNA3), i.e. in the
 * direction opposite to the header: for every matrix element, the lane and register
 * element that hold it. A model gathers A, B and C from the wave's registers by those
 * formulae, multiplies, and writes D back the same way. The tests then distribute
 * real matrices to the lanes with the header's maps (as the kernels do), run the
 * model, read D back with the header's maps and compare with a plain matmul; and
 * they chain two products the way fwd_mfma.cu does (S^T = K . Q^T, then
 * O^T = V^T . P^T with P^T taken straight from S^T's accumulators), and check the
 * lane pairs the shared softmax reduces over (mfma_frag.cuh). A second
 * transcription, the store loop of AMD's own MFMA examples, checks the 32x32
 * accumulator map again. */
#include <criterion/criterion.h>
#include <string.h>

#include "hip/mfma_layout.h"

/* Small integers: every product and sum is exact in float, so "equal" means equal. */
static float val(unsigned *state) {
  *state = *state * 1664525u + 1013904223u;
  return (float)((int)((*state >> 24) % 9) - 4);
}

/* ------------------------------------------------ v_mfma_f32_32x32x8{f16,bf16_1k} */

enum { M32 = 32, N32 = 32, K32 = 8, L64 = 64 };

/* Calculator (CDNA2), no modifiers: A[i][k] in lane 32 * floor(k / 4) + i, 16-bit
 * element k % 4 of the lane's two VGPRs (GPR floor((k % 4) / 2), half k % 2). */
static void cal32_a(int i, int k, int *lane, int *e) {
  *lane = 32 * (k / 4) + i;
  *e = k % 4;
}
/* B[k][j] in lane 32 * floor(k / 4) + j, element k % 4. */
static void cal32_b(int k, int j, int *lane, int *e) {
  *lane = 32 * (k / 4) + j;
  *e = k % 4;
}
/* C or D[i][j]: GPR 4 * floor(i / 8) + i % 4, lane 32 * (floor(i / 4) % 2) + j. */
static void cal32_cd(int i, int j, int *lane, int *r) {
  *lane = 32 * ((i / 4) % 2) + j;
  *r = 4 * (i / 8) + i % 4;
}

static void model_mfma32(const float a[L64][4], const float b[L64][4], const float c[L64][16],
                         float d[L64][16]) {
  float A[M32][K32], B[K32][N32];
  int lane, e;
  for (int i = 0; i < M32; ++i)
    for (int k = 0; k < K32; ++k) {
      cal32_a(i, k, &lane, &e);
      A[i][k] = a[lane][e];
    }
  for (int k = 0; k < K32; ++k)
    for (int j = 0; j < N32; ++j) {
      cal32_b(k, j, &lane, &e);
      B[k][j] = b[lane][e];
    }
  for (int i = 0; i < M32; ++i)
    for (int j = 0; j < N32; ++j) {
      int r;
      cal32_cd(i, j, &lane, &r);
      float acc = c[lane][r];
      for (int k = 0; k < K32; ++k) acc += A[i][k] * B[k][j];
      d[lane][r] = acc;
    }
}

Test(mfma_layout, mfma32_maps_are_the_calculators_inverse) {
  int a_seen[M32][K32] = {{0}}, b_seen[K32][N32] = {{0}}, cd_seen[M32][N32] = {{0}};
  for (int lane = 0; lane < L64; ++lane) {
    for (int e = 0; e < PA_MFMA32_AB_ELEMS; ++e) {
      const int i = pa_mfma32_a_row(lane), k = pa_mfma32_a_k(lane, e);
      cr_assert(i >= 0 && i < M32 && k >= 0 && k < K32, "A lane %d e %d", lane, e);
      int l2, e2;
      cal32_a(i, k, &l2, &e2);
      cr_assert(l2 == lane && e2 == e, "A[%d][%d]: header lane %d e %d, calculator %d %d", i, k,
                lane, e, l2, e2);
      a_seen[i][k]++;
      const int kb = pa_mfma32_b_k(lane, e), j = pa_mfma32_b_col(lane);
      cal32_b(kb, j, &l2, &e2);
      cr_assert(l2 == lane && e2 == e, "B[%d][%d]: header lane %d e %d, calculator %d %d", kb, j,
                lane, e, l2, e2);
      b_seen[kb][j]++;
    }
    for (int r = 0; r < PA_MFMA32_CD_REGS; ++r) {
      const int i = pa_mfma32_cd_row(lane, r), j = pa_mfma32_cd_col(lane, r);
      cr_assert(i >= 0 && i < M32 && j >= 0 && j < N32);
      int l2, r2;
      cal32_cd(i, j, &l2, &r2);
      cr_assert(l2 == lane && r2 == r, "D[%d][%d]: header lane %d r %d, calculator %d %d", i, j,
                lane, r, l2, r2);
      cd_seen[i][j]++;
    }
  }
  /* every element held exactly once: 64 x 4 = 32 x 8, 64 x 16 = 32 x 32 */
  for (int i = 0; i < M32; ++i)
    for (int k = 0; k < K32; ++k) cr_assert_eq(a_seen[i][k], 1, "A[%d][%d]", i, k);
  for (int k = 0; k < K32; ++k)
    for (int j = 0; j < N32; ++j) cr_assert_eq(b_seen[k][j], 1, "B[%d][%d]", k, j);
  for (int i = 0; i < M32; ++i)
    for (int j = 0; j < N32; ++j) cr_assert_eq(cd_seen[i][j], 1, "D[%d][%d]", i, j);
}

/* A second transcription of the 32x32 accumulator: the store loop of the examples
 * in AMD's "Introduction to Matrix Core Programming on AMD CDNA3 and CDNA4" (ROCm
 * blog, 2025; every single-block 32x32 MFMA shares this C/D layout):
 *   C[lane % 32 + (lane / 32) * 4 * 32 + i * 32 * 8 + 32 * e] = c_reg[4 i + e]
 * for a row-major C [32 x 32], i = 0..3, e = 0..3. */
Test(mfma_layout, mfma32_accumulator_agrees_with_amd_example) {
  for (int lane = 0; lane < L64; ++lane)
    for (int i = 0; i < 4; ++i)
      for (int e = 0; e < 4; ++e) {
        const int idx = lane % 32 + (lane / 32) * 4 * 32 + i * 32 * 8 + 32 * e;
        const int r = 4 * i + e;
        cr_assert(pa_mfma32_cd_row(lane, r) == idx / 32 && pa_mfma32_cd_col(lane, r) == idx % 32,
                  "lane %d r %d: example (%d, %d), header (%d, %d)", lane, r, idx / 32, idx % 32,
                  pa_mfma32_cd_row(lane, r), pa_mfma32_cd_col(lane, r));
      }
}

/* D = A . B + C for a [32 x 32] x [32 x 32] product: four k-steps of the instruction,
 * the fragments filled and read with the header's maps. */
Test(mfma_layout, mfma32_model_matmul) {
  enum { KK = 32 };
  static float A[M32][KK], B[KK][N32], C[M32][N32], ref[M32][N32];
  unsigned st = 7u;
  for (int i = 0; i < M32; ++i)
    for (int k = 0; k < KK; ++k) A[i][k] = val(&st);
  for (int k = 0; k < KK; ++k)
    for (int j = 0; j < N32; ++j) B[k][j] = val(&st);
  for (int i = 0; i < M32; ++i)
    for (int j = 0; j < N32; ++j) {
      C[i][j] = val(&st);
      float acc = C[i][j];
      for (int k = 0; k < KK; ++k) acc += A[i][k] * B[k][j];
      ref[i][j] = acc;
    }
  static float acc[L64][16], next[L64][16], a[L64][4], b[L64][4];
  for (int lane = 0; lane < L64; ++lane)
    for (int r = 0; r < 16; ++r) acc[lane][r] = C[pa_mfma32_cd_row(lane, r)][pa_mfma32_cd_col(lane, r)];
  for (int s = 0; s < KK / K32; ++s) {
    for (int lane = 0; lane < L64; ++lane)
      for (int e = 0; e < 4; ++e) {
        a[lane][e] = A[pa_mfma32_a_row(lane)][s * K32 + pa_mfma32_a_k(lane, e)];
        b[lane][e] = B[s * K32 + pa_mfma32_b_k(lane, e)][pa_mfma32_b_col(lane)];
      }
    model_mfma32(a, b, acc, next);
    memcpy(acc, next, sizeof acc);
  }
  for (int lane = 0; lane < L64; ++lane)
    for (int r = 0; r < 16; ++r) {
      const int i = pa_mfma32_cd_row(lane, r), j = pa_mfma32_cd_col(lane, r);
      cr_assert_eq(acc[lane][r], ref[i][j], "D[%d][%d] (lane %d r %d): %g, want %g", i, j, lane, r,
                   acc[lane][r], ref[i][j]);
    }
}

/* fwd_mfma.cu's chain: S^T [32 keys x 32 rows] = K . Q^T, then
 * O^T [32 dims x 32 rows] = V^T . P^T with P^T's B fragments read from S^T's
 * accumulators (pa_mfma32_cd_as_b), never moved between lanes. */
Test(mfma_layout, mfma32_accumulator_feeds_b_operand) {
  enum { D = 16, KEYS = 32, DV = 32, ROWS = 32 };
  static float K[KEYS][D], Q[ROWS][D], V[KEYS][DV], St[KEYS][ROWS], Ot[DV][ROWS];
  unsigned st = 11u;
  for (int j = 0; j < KEYS; ++j)
    for (int d = 0; d < D; ++d) K[j][d] = val(&st);
  for (int i = 0; i < ROWS; ++i)
    for (int d = 0; d < D; ++d) Q[i][d] = val(&st);
  for (int j = 0; j < KEYS; ++j)
    for (int d = 0; d < DV; ++d) V[j][d] = val(&st);
  for (int j = 0; j < KEYS; ++j)
    for (int i = 0; i < ROWS; ++i) {
      float s = 0.0f;
      for (int d = 0; d < D; ++d) s += K[j][d] * Q[i][d];
      St[j][i] = s;
    }
  for (int d = 0; d < DV; ++d)
    for (int i = 0; i < ROWS; ++i) {
      float o = 0.0f;
      for (int j = 0; j < KEYS; ++j) o += V[j][d] * St[j][i];
      Ot[d][i] = o;
    }

  static float s_acc[L64][16], o_acc[L64][16], next[L64][16], a[L64][4], b[L64][4];
  memset(s_acc, 0, sizeof s_acc);
  for (int ks = 0; ks < D / K32; ++ks) { /* A = K [key x d], B = Q^T [d x row] */
    for (int lane = 0; lane < L64; ++lane)
      for (int e = 0; e < 4; ++e) {
        a[lane][e] = K[pa_mfma32_a_row(lane)][ks * K32 + pa_mfma32_a_k(lane, e)];
        b[lane][e] = Q[pa_mfma32_b_col(lane)][ks * K32 + pa_mfma32_b_k(lane, e)];
      }
    model_mfma32(a, b, s_acc, next);
    memcpy(s_acc, next, sizeof s_acc);
  }
  memset(o_acc, 0, sizeof o_acc);
  for (int ks = 0; ks < KEYS / K32; ++ks) { /* A = V^T [d x key], B = P^T [key x row] */
    for (int lane = 0; lane < L64; ++lane)
      for (int e = 0; e < 4; ++e) {
        a[lane][e] = V[ks * K32 + pa_mfma32_a_k(lane, e)][pa_mfma32_a_row(lane)];
        b[lane][e] = s_acc[lane][pa_mfma32_cd_as_b(ks, e)];
      }
    model_mfma32(a, b, o_acc, next);
    memcpy(o_acc, next, sizeof o_acc);
  }
  for (int lane = 0; lane < L64; ++lane)
    for (int r = 0; r < 16; ++r) {
      const int d = pa_mfma32_cd_row(lane, r), i = pa_mfma32_cd_col(lane, r);
      cr_assert_eq(o_acc[lane][r], Ot[d][i], "O^T[%d][%d]: %g, want %g", d, i, o_acc[lane][r],
                   Ot[d][i]);
    }
}

/* What the MFMA fragment layer (backends/hip/mfma_frag.cuh) assumes of S^T's and
 * O^T's accumulators when it runs the shared score pass and online softmax on them:
 * a lane's 16 registers are all in one column (its query row, pa_mfma32_b_col: the
 * row of its Q^T B fragment); the other lane holding that column is lane ^ 32 (the
 * row reductions shuffle with lane mask 32 in a 64-lane group); and the two lanes'
 * registers are 32 distinct rows (keys), each once. With the chain's S^T from the
 * model, the row maximum taken that way equals the column maximum of the matrix. */
Test(mfma_layout, mfma32_lane_pairs_hold_whole_rows) {
  for (int lane = 0; lane < L64; ++lane) {
    int seen[M32] = {0};
    for (int r = 0; r < 16; ++r) {
      cr_assert_eq(pa_mfma32_cd_col(lane, r), pa_mfma32_b_col(lane),
                   "lane %d register %d: column %d, the lane's row is %d", lane, r,
                   pa_mfma32_cd_col(lane, r), pa_mfma32_b_col(lane));
      cr_assert_eq(pa_mfma32_cd_col(lane ^ 32, r), pa_mfma32_b_col(lane),
                   "lane %d's partner %d does not hold its column", lane, lane ^ 32);
      seen[pa_mfma32_cd_row(lane, r)]++;
      seen[pa_mfma32_cd_row(lane ^ 32, r)]++;
    }
    for (int k = 0; k < M32; ++k)
      cr_assert_eq(seen[k], 1, "lanes %d and %d hold key %d %d times", lane, lane ^ 32, k, seen[k]);
    for (int other = 0; other < L64; ++other)
      if (other != lane && other != (lane ^ 32))
        cr_assert_neq(pa_mfma32_b_col(other), pa_mfma32_b_col(lane),
                      "lane %d also holds lane %d's row", other, lane);
  }

  /* S^T = K . Q^T through the model (one k-step), then each lane's row maximum over
   * its registers and its partner's, against the column maximum. */
  static float K[M32][K32], Q[N32][K32], a[L64][4], b[L64][4], c[L64][16], d[L64][16];
  unsigned st = 5u;
  for (int j = 0; j < M32; ++j)
    for (int k = 0; k < K32; ++k) K[j][k] = val(&st);
  for (int i = 0; i < N32; ++i)
    for (int k = 0; k < K32; ++k) Q[i][k] = val(&st);
  for (int lane = 0; lane < L64; ++lane)
    for (int e = 0; e < 4; ++e) {
      a[lane][e] = K[pa_mfma32_a_row(lane)][pa_mfma32_a_k(lane, e)];
      b[lane][e] = Q[pa_mfma32_b_col(lane)][pa_mfma32_b_k(lane, e)];
    }
  memset(c, 0, sizeof c);
  model_mfma32(a, b, c, d);
  float own[L64];
  for (int lane = 0; lane < L64; ++lane) {
    own[lane] = d[lane][0];
    for (int r = 1; r < 16; ++r) own[lane] = own[lane] > d[lane][r] ? own[lane] : d[lane][r];
  }
  for (int lane = 0; lane < L64; ++lane) {
    const float pair = own[lane] > own[lane ^ 32] ? own[lane] : own[lane ^ 32];
    const int i = pa_mfma32_b_col(lane);
    float want = -1e30f;
    for (int j = 0; j < M32; ++j) {
      float s = 0.0f;
      for (int k = 0; k < K32; ++k) s += K[j][k] * Q[i][k];
      want = s > want ? s : want;
    }
    cr_assert_eq(pair, want, "row %d (lane %d): max %g, want %g", i, lane, pair, want);
  }
}

/* ------------------------------------------------ v_wmma_f32_16x16x16_{f16,bf16} */

enum { M16 = 16, L32 = 32 };

/* Calculator (RDNA3, wave32): A[i][k] in lanes i and i + 16 (the two halves must
 * hold the same values), element k; B[k][j] in lanes j and j + 16, element k;
 * C or D[i][j] (fp32): VGPR floor(i / 2), lane 16 * (i % 2) + j. */
static void cal16_cd(int i, int j, int *lane, int *r) {
  *lane = 16 * (i % 2) + j;
  *r = i / 2;
}

/* The instruction reads A and B from lanes 0..15; the model checks that lanes
 * 16..31 repeat them, as the ISA requires of the caller. */
static int model_wmma16(const float a[L32][16], const float b[L32][16], const float c[L32][8],
                        float d[L32][8]) {
  float A[M16][M16], B[M16][M16];
  for (int i = 0; i < M16; ++i)
    for (int k = 0; k < M16; ++k) {
      if (a[i][k] != a[i + 16][k] || b[i][k] != b[i + 16][k]) return 0;
      A[i][k] = a[i][k];
      B[k][i] = b[i][k];
    }
  for (int i = 0; i < M16; ++i)
    for (int j = 0; j < M16; ++j) {
      int lane, r;
      cal16_cd(i, j, &lane, &r);
      float acc = c[lane][r];
      for (int k = 0; k < M16; ++k) acc += A[i][k] * B[k][j];
      d[lane][r] = acc;
    }
  return 1;
}

Test(mfma_layout, wmma16_maps_and_model_matmul) {
  static float A[M16][M16], B[M16][M16], C[M16][M16], ref[M16][M16];
  unsigned st = 3u;
  for (int i = 0; i < M16; ++i)
    for (int j = 0; j < M16; ++j) {
      A[i][j] = val(&st);
      B[i][j] = val(&st);
      C[i][j] = val(&st);
    }
  for (int i = 0; i < M16; ++i)
    for (int j = 0; j < M16; ++j) {
      float acc = C[i][j];
      for (int k = 0; k < M16; ++k) acc += A[i][k] * B[k][j];
      ref[i][j] = acc;
    }
  static float a[L32][16], b[L32][16], c[L32][8], d[L32][8];
  int cd_seen[M16][M16] = {{0}};
  for (int lane = 0; lane < L32; ++lane) {
    for (int e = 0; e < PA_WMMA16_AB_ELEMS; ++e) {
      a[lane][e] = A[pa_wmma16_a_row(lane)][pa_wmma16_a_k(lane, e)];
      b[lane][e] = B[pa_wmma16_b_k(lane, e)][pa_wmma16_b_col(lane)];
    }
    for (int r = 0; r < PA_WMMA16_CD_REGS; ++r) {
      const int i = pa_wmma16_cd_row(lane, r), j = pa_wmma16_cd_col(lane, r);
      int l2, r2;
      cal16_cd(i, j, &l2, &r2);
      cr_assert(l2 == lane && r2 == r, "D[%d][%d]: header lane %d r %d, calculator %d %d", i, j,
                lane, r, l2, r2);
      cd_seen[i][j]++;
      c[lane][r] = C[i][j];
    }
  }
  for (int i = 0; i < M16; ++i)
    for (int j = 0; j < M16; ++j) cr_assert_eq(cd_seen[i][j], 1, "D[%d][%d]", i, j);
  cr_assert(model_wmma16(a, b, c, d), "lanes 16..31 must repeat lanes 0..15's A and B");
  for (int lane = 0; lane < L32; ++lane)
    for (int r = 0; r < PA_WMMA16_CD_REGS; ++r) {
      const int i = pa_wmma16_cd_row(lane, r), j = pa_wmma16_cd_col(lane, r);
      cr_assert_eq(d[lane][r], ref[i][j], "D[%d][%d]: %g, want %g", i, j, d[lane][r], ref[i][j]);
    }
}
