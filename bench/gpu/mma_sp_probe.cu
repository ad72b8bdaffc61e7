/* mma_sp_probe: check, on the GPU, the register layout the 2:4 forward kernel
 * assumes for mma.sp::ordered_metadata m16n8k32 (bf16 in, f32 out), before the
 * kernel relies on it. Standalone: nvcc -arch=sm_90 -o mma_sp_probe mma_sp_probe.cu
 *
 * Part 1 (decode): A's kept values all 1, B[k][n] = w[k % 4] if k / 4 == n else 0
 * (w = 1, 2, 4, 8), so D[r][n] is the sum of w over the two indices the metadata
 * names for row r, group n. All nibbles say (0, 1) (D = 3) except one nibble q of
 * the metadata register of quad thread tq, set to (2, 3) (D = 12); each of the 16
 * warps flips a different (tq, q) and prints which (row, group) cells changed.
 *
 * Part 2 (check): random 2:4 A and random B, A's compressed registers laid out as
 * m16n8k16's dense A (a0a1 row g, compressed cols 2t, 2t+1 = group t; a2a3 row
 * g + 8; a4a5 row g, group t + 4; a6a7 row g + 8), B as two stacked k16 B fragments,
 * metadata per hypothesis H1 (thread t = 0: rows g / g + 8 of groups 0-3 in bits
 * 0-15 / 16-31; t = 1: the same for groups 4-7) or H2 (t = 0: row g, groups 0-7; t =
 * 1: row g + 8). Prints the max error against a host product for each. */
#include <cuda_bf16.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

__device__ __forceinline__ void mma_sp(float (&d)[4], const uint32_t (&a)[4],
                                       const uint32_t (&b)[4], uint32_t meta) {
  asm volatile(
      "mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f32.bf16.bf16.f32 "
      "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9,%10,%11}, {%0,%1,%2,%3}, %12, 0x0;\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(b[2]),
        "r"(b[3]), "r"(meta));
}

/* in: per warp, per lane: a[4], b[4], meta; out: per warp, per lane d[4]. */
__global__ void probe(const uint32_t *in, float *out) {
  const int w = threadIdx.x / 32, lane = threadIdx.x % 32;
  const uint32_t *x = in + (w * 32 + lane) * 9;
  uint32_t a[4] = {x[0], x[1], x[2], x[3]}, b[4] = {x[4], x[5], x[6], x[7]};
  float d[4] = {0, 0, 0, 0};
  mma_sp(d, a, b, x[8]);
  for (int i = 0; i < 4; ++i) out[(w * 32 + lane) * 4 + i] = d[i];
}

static uint32_t pack(float lo, float hi) {
  __nv_bfloat16 l = __float2bfloat16(lo), h = __float2bfloat16(hi);
  return (uint32_t)*(unsigned short *)&l | ((uint32_t)*(unsigned short *)&h << 16);
}

/* D element (row, col) from lane's d[i] (standard C layout). */
static void d_pos(int lane, int i, int *row, int *col) {
  *row = lane / 4 + 8 * (i / 2);
  *col = 2 * (lane % 4) + (i & 1);
}

/* Fill one warp's inputs from dense A [16][32] (2:4: idx[r][G][0..1]), B [32][8]. */
static void fill(uint32_t *x, const float A[16][32], const int idx[16][8][2], const float B[32][8],
                 int hyp) {
  for (int lane = 0; lane < 32; ++lane) {
    int g = lane / 4, t = lane % 4;
    uint32_t *y = x + lane * 9;
    int rows[4] = {g, g + 8, g, g + 8}, grp[4] = {t, t, t + 4, t + 4};
    for (int r = 0; r < 4; ++r) {
      int row = rows[r], G = grp[r];
      y[r] = pack(A[row][4 * G + idx[row][G][0]], A[row][4 * G + idx[row][G][1]]);
    }
    for (int r = 0; r < 4; ++r) {
      int k = 2 * t + 8 * r;
      y[4 + r] = pack(B[k][g], B[k + 1][g]);
    }
    uint32_t m = 0;
    for (int G = 0; G < 8; ++G) {
      int row = -1, bit = 0;
      if (hyp == 1) { /* H1 */
        if (t == 0 && G < 4) row = g, bit = 4 * G;
        if (t == 0 && G < 4) m |= (uint32_t)(idx[g + 8][G][0] | idx[g + 8][G][1] << 2) << (16 + 4 * G);
        if (t == 1 && G >= 4) row = g, bit = 4 * (G - 4);
        if (t == 1 && G >= 4)
          m |= (uint32_t)(idx[g + 8][G][0] | idx[g + 8][G][1] << 2) << (16 + 4 * (G - 4));
      } else { /* H2 */
        if (t == 0) row = g, bit = 4 * G;
        if (t == 1) row = g + 8, bit = 4 * G;
      }
      if (row >= 0) m |= (uint32_t)(idx[row][G][0] | idx[row][G][1] << 2) << bit;
    }
    y[8] = m;
  }
}

int main(void) {
  enum { WARPS = 16 };
  uint32_t *h_in = (uint32_t *)calloc(WARPS * 32 * 9, 4);
  float *h_out = (float *)calloc(WARPS * 32 * 4, 4);
  uint32_t *d_in;
  float *d_out;
  cudaMalloc(&d_in, WARPS * 32 * 9 * 4);
  cudaMalloc(&d_out, WARPS * 32 * 4 * 4);

  /* Part 1 */
  const float wgt[4] = {1, 2, 4, 8};
  for (int w = 0; w < WARPS; ++w) {
    int tq = w / 8, q = w % 8;
    for (int lane = 0; lane < 32; ++lane) {
      int g = lane / 4, t = lane % 4;
      uint32_t *y = h_in + (w * 32 + lane) * 9;
      for (int r = 0; r < 4; ++r) y[r] = pack(1.0f, 1.0f);
      for (int r = 0; r < 4; ++r) {
        int k = 2 * t + 8 * r;
        y[4 + r] = pack(k / 4 == g ? wgt[k % 4] : 0.0f, (k + 1) / 4 == g ? wgt[(k + 1) % 4] : 0.0f);
      }
      uint32_t m = 0x44444444u; /* (0, 1) everywhere */
      if (t == tq) m = (m & ~(0xfu << (4 * q))) | (0xeu << (4 * q));
      y[8] = m;
    }
  }
  cudaMemcpy(d_in, h_in, WARPS * 32 * 9 * 4, cudaMemcpyHostToDevice);
  probe<<<1, WARPS * 32>>>(d_in, d_out);
  cudaError_t e = cudaMemcpy(h_out, d_out, WARPS * 32 * 4 * 4, cudaMemcpyDeviceToHost);
  if (e != cudaSuccess) {
    printf("mma_sp_probe: CUDA error %s\n", cudaGetErrorString(e));
    return 1;
  }
  printf("part 1: metadata thread t, nibble q -> cells (row, group) that changed\n");
  for (int w = 0; w < WARPS; ++w) {
    printf("  t=%d q=%d:", w / 8, w % 8);
    int shown = 0;
    for (int lane = 0; lane < 32; ++lane)
      for (int i = 0; i < 4; ++i) {
        int row, col;
        d_pos(lane, i, &row, &col);
        float v = h_out[(w * 32 + lane) * 4 + i];
        if (v != 3.0f && (row == 0 || row == 8 || row == 1 || row == 9)) {
          printf(" (%d,%d)=%g", row, col, v);
          ++shown;
        }
      }
    printf("%s\n", shown ? "" : " none");
  }

  /* Part 2 */
  static float A[16][32], B[32][8];
  static int idx[16][8][2];
  srand(7);
  for (int r = 0; r < 16; ++r)
    for (int G = 0; G < 8; ++G) {
      int i0 = rand() % 4, i1 = rand() % 3;
      if (i1 >= i0) ++i1;
      if (i1 < i0) { int x = i0; i0 = i1; i1 = x; }
      idx[r][G][0] = i0;
      idx[r][G][1] = i1;
      for (int k = 0; k < 4; ++k)
        A[r][4 * G + k] = (k == i0 || k == i1) ? __bfloat162float(__float2bfloat16((rand() % 2001 - 1000) / 500.0f)) : 0.0f;
    }
  for (int k = 0; k < 32; ++k)
    for (int n = 0; n < 8; ++n) B[k][n] = __bfloat162float(__float2bfloat16((rand() % 2001 - 1000) / 500.0f));
  int status = 1;
  for (int hyp = 1; hyp <= 2; ++hyp) {
    fill(h_in, A, idx, B, hyp);
    cudaMemcpy(d_in, h_in, 32 * 9 * 4, cudaMemcpyHostToDevice);
    probe<<<1, 32>>>(d_in, d_out);
    cudaMemcpy(h_out, d_out, 32 * 4 * 4, cudaMemcpyDeviceToHost);
    double err = 0;
    for (int lane = 0; lane < 32; ++lane)
      for (int i = 0; i < 4; ++i) {
        int row, col;
        d_pos(lane, i, &row, &col);
        double ref = 0;
        for (int k = 0; k < 32; ++k) ref += (double)A[row][k] * B[k][col];
        err = fmax(err, fabs(ref - h_out[lane * 4 + i]));
      }
    printf("part 2: H%d max |D - A.B| = %g -> %s\n", hyp, err, err < 1e-3 ? "MATCH" : "no");
    if (hyp == 1 && err < 1e-3) status = 0;
  }
  printf("mma_sp_probe: the kernel's layout (H1) %s\n", status ? "DOES NOT hold" : "holds");
  return status;
}
