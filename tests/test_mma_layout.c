/* The lane maps of backends/cuda/volta_layout.h against a CPU model of
 * mma.sync.aligned.m8n8k4 (no GPU needed; runs in CI).
 *
 * The model below is written from the PTX ISA's text ("Matrix Fragments for
 * mma.m8n8k4 with .f16 floating point type"), independently of the header: it
 * gathers each quad pair's A, B and C from the 32 lanes' registers by the ISA's
 * formulas, multiplies, and scatters D back. The kernel-side maps then distribute
 * real matrices to the lanes, run the model, gather the result and compare it with
 * a plain matmul, for both products of the kernel (S = Q.K^T with .row.col and
 * O = P.V with .row.row) and for the P round trip through shared memory. A second
 * transcription, CuTe's SM70_8x8_32b layout, checks the accumulator map again. */
#include <criterion/criterion.h>
#include <string.h>

#include "cuda/sp24_order.h"
#include "cuda/volta_layout.h"

/* ------------------------------------------------ the instruction, per the ISA */

enum { LANES = 32 };

/* ISA: the lanes of quad pair q (MMA computation q + 1): 4q..4q+3 and 16+4q..16+4q+3. */
static int isa_qp_lane(int q, int k) { return k < 4 ? 4 * q + k : 16 + 4 * q + (k - 4); }

/* ISA, A row-major: row = %laneid % 4 (+ 4 if %laneid >= 16), col = i. */
static void isa_a_row(int lane, int i, int *row, int *col) {
  *row = lane < 16 ? lane % 4 : lane % 4 + 4;
  *col = i;
}
/* ISA, B column-major: row = i, col = %laneid % 4 (+ 4 if %laneid >= 16). */
static void isa_b_col(int lane, int i, int *row, int *col) {
  *row = i;
  *col = lane < 16 ? lane % 4 : lane % 4 + 4;
}
/* ISA, B row-major: row = %laneid % 4, col = i % 4 (+ 4 if %laneid >= 16). */
static void isa_b_row(int lane, int i, int *row, int *col) {
  *row = lane % 4;
  *col = lane < 16 ? i % 4 : i % 4 + 4;
}
/* ISA, C/D .f32: row = X (+ 4 if %laneid >= 16), X = (%laneid & 0b1) + (i & 0b10);
 * col = (i & 0b100) + (%laneid & 0b10) + (i & 0b1). */
static void isa_c_f32(int lane, int i, int *row, int *col) {
  const int x = (lane & 1) + (i & 2);
  *row = lane < 16 ? x : x + 4;
  *col = (i & 4) + (lane & 2) + (i & 1);
}

/* d = a . b + c for every quad pair; b_row selects B's .row layout (else .col). */
static void isa_mma_m8n8k4(const float a[LANES][4], const float b[LANES][4], int b_row,
                           const float c[LANES][8], float d[LANES][8]) {
  for (int q = 0; q < 4; ++q) {
    float A[8][4], B[4][8], C[8][8];
    for (int k = 0; k < 8; ++k) {
      const int lane = isa_qp_lane(q, k);
      int r, col;
      for (int i = 0; i < 4; ++i) {
        isa_a_row(lane, i, &r, &col);
        A[r][col] = a[lane][i];
        if (b_row) isa_b_row(lane, i, &r, &col);
        else isa_b_col(lane, i, &r, &col);
        B[r][col] = b[lane][i];
      }
      for (int i = 0; i < 8; ++i) {
        isa_c_f32(lane, i, &r, &col);
        C[r][col] = c[lane][i];
      }
    }
    for (int k = 0; k < 8; ++k) {
      const int lane = isa_qp_lane(q, k);
      for (int i = 0; i < 8; ++i) {
        int r, col;
        isa_c_f32(lane, i, &r, &col);
        float acc = C[r][col];
        for (int kk = 0; kk < 4; ++kk) acc += A[r][kk] * B[kk][col];
        d[lane][i] = acc;
      }
    }
  }
}

/* Small integers: every product and sum is exact in float, so "equal" means equal. */
static float val(unsigned *state) {
  *state = *state * 1664525u + 1013904223u;
  return (float)((int)((*state >> 24) % 9) - 4);
}

/* ------------------------------------------------ the maps themselves */

Test(mma_layout, isa_maps_match_the_header) {
  for (int lane = 0; lane < LANES; ++lane) {
    int r, c;
    for (int i = 0; i < 4; ++i) {
      isa_a_row(lane, i, &r, &c);
      cr_assert_eq(pa_m884_a_row(lane), r, "A row, lane %d", lane);
      isa_b_col(lane, i, &r, &c);
      cr_assert_eq(pa_m884_bcol_n(lane), c, "B .col n, lane %d", lane);
      isa_b_row(lane, i, &r, &c);
      cr_assert(pa_m884_brow_k(lane) == r && pa_m884_brow_n(lane, i) == c, "B .row, lane %d i %d",
                lane, i);
    }
    for (int i = 0; i < 8; ++i) {
      isa_c_f32(lane, i, &r, &c);
      cr_assert(pa_m884_c_row(lane, i) == r && pa_m884_c_col(lane, i) == c, "C, lane %d i %d", lane,
                i);
    }
  }
}

/* CuTe's SM70_8x8_32b: (T8, V8) -> m + 8 n with shape ((2,2,2),(2,2,2)) and stride
 * ((1,16,4),(8,2,32)); logical thread T -> lane by SM70_QuadPair (4,2):(1,16). */
Test(mma_layout, cute_accumulator_layout_agrees) {
  for (int t = 0; t < 8; ++t)
    for (int v = 0; v < 8; ++v) {
      const int idx = (t & 1) * 1 + ((t >> 1) & 1) * 16 + ((t >> 2) & 1) * 4 + (v & 1) * 8 +
                      ((v >> 1) & 1) * 2 + ((v >> 2) & 1) * 32;
      const int lane = (t % 4) + 16 * (t / 4);
      cr_assert(pa_m884_c_row(lane, v) == idx % 8 && pa_m884_c_col(lane, v) == idx / 8,
                "T%d V%d: cute (%d, %d), header (%d, %d)", t, v, idx % 8, idx / 8,
                pa_m884_c_row(lane, v), pa_m884_c_col(lane, v));
    }
}

/* Each warp-tile map is a bijection of the 16 x 16 (or 16 x 4) tile, counting the
 * designed duplication (two QPs read each A row, two each B column). */
Test(mma_layout, warp_tile_coverage_and_rows) {
  int c_seen[16][16] = {{0}}, a_seen[16][4] = {{0}}, bc_seen[4][16] = {{0}}, br_seen[4][16] = {{0}};
  for (int lane = 0; lane < LANES; ++lane) {
    for (int i = 0; i < 8; ++i) {
      const int r = pa_volta_c_row(lane, i), c = pa_volta_c_col(lane, i);
      cr_assert(r >= 0 && r < 16 && c >= 0 && c < 16);
      c_seen[r][c]++;
      cr_assert_eq(r, pa_volta_row(lane, pa_volta_elem_row(i)), "lane %d i %d", lane, i);
      if (i % 2 == 0) cr_assert_eq(pa_volta_c_col(lane, i + 1), c + 1, "pairs are adjacent");
      /* the lanes that share the row hold it too */
      const int partners[3] = {lane ^ PA_VOLTA_ROW_XOR_A, lane ^ PA_VOLTA_ROW_XOR_B,
                               lane ^ PA_VOLTA_ROW_XOR_A ^ PA_VOLTA_ROW_XOR_B};
      for (int k = 0; k < 3; ++k)
        cr_assert_eq(pa_volta_row(partners[k], pa_volta_elem_row(i)), r);
    }
    for (int r = 0; r < 2; ++r)
      for (int e = 0; e < 4; ++e) {
        const int i = pa_volta_elem(r, e);
        cr_assert_eq(pa_volta_elem_row(i), r);
        if (e) cr_assert_gt(pa_volta_c_col(lane, i), pa_volta_c_col(lane, pa_volta_elem(r, e - 1)));
      }
    for (int i = 0; i < 4; ++i) {
      a_seen[pa_volta_a_row(lane)][i]++;
      bc_seen[i][pa_volta_bcol_n(lane)]++;
      br_seen[pa_volta_brow_k(lane)][pa_volta_brow_n(lane, i)]++;
      if (i) cr_assert_eq(pa_volta_brow_n(lane, i), pa_volta_brow_n(lane, 0) + i);
    }
  }
  for (int r = 0; r < 16; ++r)
    for (int c = 0; c < 16; ++c) cr_assert_eq(c_seen[r][c], 1, "C (%d, %d)", r, c);
  for (int r = 0; r < 16; ++r)
    for (int k = 0; k < 4; ++k) cr_assert_eq(a_seen[r][k], 2, "A (%d, %d)", r, k);
  for (int k = 0; k < 4; ++k)
    for (int n = 0; n < 16; ++n) {
      cr_assert_eq(bc_seen[k][n], 2, "B .col (%d, %d)", k, n);
      cr_assert_eq(br_seen[k][n], 2, "B .row (%d, %d)", k, n);
    }
}

/* ------------------------------------------------ the kernel's two products */

enum { ROWS = 16, KEYS = 32, DIM = 12, DV = 48 };

/* S [16 x KEYS] = Q [16 x DIM] . K^T (K is [KEYS x DIM], row-major): A .row from Q's
 * rows, B .col from K's rows, as fwd_volta.cu loads them. Then P = S (a stand-in for
 * the softmax) goes through "shared memory" by the C map and comes back by the A
 * map for O [16 x DV] = P . V with B .row from V's rows. */
Test(mma_layout, warp_products_match_matmul) {
  float q[ROWS][DIM], k[KEYS][DIM], v[KEYS][DV];
  unsigned st = 12345;
  for (int r = 0; r < ROWS; ++r)
    for (int d = 0; d < DIM; ++d) q[r][d] = val(&st);
  for (int j = 0; j < KEYS; ++j) {
    for (int d = 0; d < DIM; ++d) k[j][d] = val(&st);
    for (int d = 0; d < DV; ++d) v[j][d] = val(&st);
  }

  /* S on the model, in the kernel's order: k-steps of 4 dims, n-tiles of 16 keys. */
  float s[KEYS / 16][LANES][8];
  memset(s, 0, sizeof s);
  for (int kk = 0; kk < DIM / 4; ++kk)
    for (int nn = 0; nn < KEYS / 16; ++nn) {
      float a[LANES][4], b[LANES][4];
      for (int lane = 0; lane < LANES; ++lane)
        for (int i = 0; i < 4; ++i) {
          a[lane][i] = q[pa_volta_a_row(lane)][4 * kk + i];
          b[lane][i] = k[16 * nn + pa_volta_bcol_n(lane)][4 * kk + i];
        }
      isa_mma_m8n8k4(a, b, 0, s[nn], s[nn]);
    }
  float p_smem[ROWS][KEYS];
  for (int r = 0; r < ROWS; ++r)
    for (int j = 0; j < KEYS; ++j) p_smem[r][j] = NAN;
  for (int nn = 0; nn < KEYS / 16; ++nn)
    for (int lane = 0; lane < LANES; ++lane)
      for (int i = 0; i < 8; ++i) {
        const int r = pa_volta_c_row(lane, i), j = 16 * nn + pa_volta_c_col(lane, i);
        float ref = 0.0f;
        for (int d = 0; d < DIM; ++d) ref += q[r][d] * k[j][d];
        cr_assert_eq(s[nn][lane][i], ref, "S (%d, %d): %g, expected %g", r, j, s[nn][lane][i], ref);
        p_smem[r][j] = s[nn][lane][i];
      }
  for (int r = 0; r < ROWS; ++r)
    for (int j = 0; j < KEYS; ++j) cr_assert(p_smem[r][j] == p_smem[r][j], "P (%d, %d) unset", r, j);

  /* O = P . V: A .row from P's rows, B .row from V's rows. */
  float o[DV / 16][LANES][8];
  memset(o, 0, sizeof o);
  for (int kk = 0; kk < KEYS / 4; ++kk)
    for (int dd = 0; dd < DV / 16; ++dd) {
      float a[LANES][4], b[LANES][4];
      for (int lane = 0; lane < LANES; ++lane)
        for (int i = 0; i < 4; ++i) {
          a[lane][i] = p_smem[pa_volta_a_row(lane)][4 * kk + i];
          b[lane][i] = v[4 * kk + pa_volta_brow_k(lane)][16 * dd + pa_volta_brow_n(lane, i)];
        }
      isa_mma_m8n8k4(a, b, 1, o[dd], o[dd]);
    }
  for (int dd = 0; dd < DV / 16; ++dd)
    for (int lane = 0; lane < LANES; ++lane)
      for (int i = 0; i < 8; ++i) {
        const int r = pa_volta_c_row(lane, i), c = 16 * dd + pa_volta_c_col(lane, i);
        float ref = 0.0f;
        for (int j = 0; j < KEYS; ++j) ref += p_smem[r][j] * v[j][c];
        cr_assert_eq(o[dd][lane][i], ref, "O (%d, %d): %g, expected %g", r, c, o[dd][lane][i], ref);
      }
}

/* A deliberately wrong map must fail the same comparison: the check can fail. */
Test(mma_layout, a_wrong_map_is_caught) {
  float a[LANES][4], b[LANES][4], c[LANES][8], d[LANES][8];
  float A[8][4], B[4][8];
  unsigned st = 99;
  for (int r = 0; r < 8; ++r)
    for (int kk = 0; kk < 4; ++kk) A[r][kk] = val(&st);
  for (int kk = 0; kk < 4; ++kk)
    for (int n = 0; n < 8; ++n) B[kk][n] = val(&st);
  for (int lane = 0; lane < LANES; ++lane) {
    for (int i = 0; i < 4; ++i) {
      a[lane][i] = A[pa_m884_a_row(lane)][i];
      b[lane][i] = B[i][pa_m884_bcol_n(lane)];
    }
    for (int i = 0; i < 8; ++i) c[lane][i] = 0.0f;
  }
  isa_mma_m8n8k4(a, b, 0, c, d);
  int right = 1, wrong = 1;
  for (int lane = 0; lane < LANES; ++lane)
    for (int i = 0; i < 8; ++i) {
      float ref = 0.0f, ref_t = 0.0f;
      const int r = pa_m884_c_row(lane, i), col = pa_m884_c_col(lane, i);
      for (int kk = 0; kk < 4; ++kk) {
        ref += A[r][kk] * B[kk][col];
        ref_t += A[col][kk] * B[kk][r]; /* rows and columns swapped */
      }
      right &= d[lane][i] == ref;
      wrong &= d[lane][i] == ref_t;
    }
  cr_assert(right, "the header's maps reproduce the matmul");
  cr_assert(!wrong, "a transposed accumulator map must not pass");
}

/* ------------------------------------- the 2:4 kernel's key order (sp24_order.h) */

/* S column c of n-tile a is the key ldmatrix row c of that n-tile's matrices (lane
 * 8m + c gives the address; mma puts B's row n in C's column n); a thread holds
 * columns 2t, 2t + 1 of both n-tiles. */
Test(mma_layout, sp24_key_order_groups_and_banks) {
  int seen[16] = {0};
  for (int a = 0; a < 2; ++a)
    for (int c = 0; c < 8; ++c) {
      const int k = pa_sp24_key(a, c);
      cr_assert(k >= 0 && k < 16);
      ++seen[k];
    }
  for (int k = 0; k < 16; ++k) cr_assert_eq(seen[k], 1, "key %d read once", k);
  for (int t = 0; t < 4; ++t)
    for (int i = 0; i < 4; ++i)
      cr_assert_eq(pa_sp24_key(pa_sp24_tile(t, i), 2 * t + (i & 1)), 4 * t + i,
                   "thread %d holds key 4t + %d where pa_sp24_tile says", t, i);
  /* one matrix (fixed a) reads 8 rows: conflict-free under both tile swizzles */
  for (int a = 0; a < 2; ++a) {
    int res8 = 0, res_pair = 0;
    for (int c = 0; c < 8; ++c) {
      const int r = pa_sp24_key(a, c);
      res8 |= 1 << (r & 7);
      res_pair |= 1 << ((r & 1) * 4 + ((r >> 1) & 3));
    }
    cr_assert_eq(res8, 0xff, "n-tile %d: rows & 7 all distinct (chunk ^ (row & 7))", a);
    cr_assert_eq(res_pair, 0xff, "n-tile %d: (row & 1, (row >> 1) & 3) all distinct", a);
  }
}
