/* The SFU's exponentials on this GPU (issue 9, twenty-sixth session): how many 2^x one SM
 * returns per cycle with ex2.approx.ftz.f32 against the packed ex2.approx.f16x2 and
 * ex2.approx.ftz.bf16x2 (two per instruction), and how accurate the packed forms are on
 * every input of their type in [-126, 0] (the softmax's range: x - m <= 0).
 *   nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a bench/gpu/ex2_peak.cu \
 *     -o ex2_peak
 *   ex2_peak
 * Throughput: one block of W warps per SM (its dynamic shared memory keeps a second block
 * off), each thread C independent chains y = 2^(-|y|) for `iters` steps (the sign set by
 * one LOP3 per step, so the values stay finite in (0, 1]), cycles by clock64 around the
 * loop in each warp, the slowest warp of the grid; results per SM cycle = W * 32 * C *
 * iters * (1 or 2) / cycles. Whether a packed PTX instruction is one SASS MUFU or two
 * (decision 108: ex2.approx.f16x2 is two MUFU.EX2.F16 on sm_90) the SASS says:
 * ex2_s26.sh counts them with cuobjdump. Accuracy: each input's result against exp2 in
 * double, as a relative error and in units of the type's spacing at the exact result (0.5 =
 * correctly rounded), over the inputs whose exact result is at least twice the type's
 * smallest normal number (bf16: x in [-125, 0]; f16: [-13, 0]).
 * Written in the twenty-sixth session; run in the twenty-seventh (bench/RESULTS.md, that
 * session's section; decision 118): every form ~16 exponentials per SM cycle, the packed
 * ones two MUFU each. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "cuda_check.h"

enum { KIND_F32 = 0, KIND_F16X2 = 1, KIND_BF16X2 = 2 };

template <int KIND, int C>
__global__ void ex2_rate(int iters, long long *cycles, uint32_t *sink) {
  const uint32_t sign = KIND == KIND_F32 ? 0x80000000u : 0x80008000u;
  uint32_t y[C];
#pragma unroll
  for (int c = 0; c < C; ++c) y[c] = 0x3c003c00u ^ (threadIdx.x + c); /* any start */
  __syncthreads();
  const long long t0 = clock64();
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int c = 0; c < C; ++c) {
      const uint32_t x = y[c] | sign; /* -|y| */
      if (KIND == KIND_F32)
        asm volatile("ex2.approx.ftz.f32 %0, %1;" : "=r"(y[c]) : "r"(x));
      else if (KIND == KIND_F16X2)
        asm volatile("ex2.approx.f16x2 %0, %1;" : "=r"(y[c]) : "r"(x));
      else
        asm volatile("ex2.approx.ftz.bf16x2 %0, %1;" : "=r"(y[c]) : "r"(x));
    }
  }
  const long long t1 = clock64();
  uint32_t acc = 0;
#pragma unroll
  for (int c = 0; c < C; ++c) acc ^= y[c];
  if (acc == 0x12345678u) sink[0] = acc; /* keeps the chains */
  if (threadIdx.x % 32 == 0) atomicMax((unsigned long long *)&cycles[blockIdx.x], (unsigned long long)(t1 - t0));
}

/* every 16-bit pattern through the packed instruction (both halves the same input) */
__global__ void ex2_all(int bf, uint16_t *out) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= 65536) return;
  const uint32_t x = i | (i << 16);
  uint32_t y;
  if (bf)
    asm("ex2.approx.ftz.bf16x2 %0, %1;" : "=r"(y) : "r"(x));
  else
    asm("ex2.approx.f16x2 %0, %1;" : "=r"(y) : "r"(x));
  out[i] = (uint16_t)(y & 0xffffu);
}

static double bf16_val(uint16_t b) {
  uint32_t u = (uint32_t)b << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static double f16_val(uint16_t h) {
  const int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
  double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(1024 + m, e - 25);
  return s ? -v : v;
}

template <int KIND, int C>
static void rate(const char *name, int sms, int warps) {
  const int iters = 4096;
  long long *cyc;
  uint32_t *sink;
  CK(cudaMalloc(&cyc, sms * sizeof(long long)));
  CK(cudaMalloc(&sink, 4));
  /* more than half an SM's shared memory per block: one block per SM */
  const int smem = 120 * 1024;
  CK(cudaFuncSetAttribute(ex2_rate<KIND, C>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  for (int rep = 0; rep < 2; ++rep) { /* the first a warm-up */
    CK(cudaMemset(cyc, 0, sms * sizeof(long long)));
    ex2_rate<KIND, C><<<sms, warps * 32, smem>>>(iters, cyc, sink);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
  }
  long long h[1024];
  CK(cudaMemcpy(h, cyc, sms * sizeof(long long), cudaMemcpyDeviceToHost));
  long long mx = 0;
  for (int b = 0; b < sms; ++b) mx = h[b] > mx ? h[b] : mx;
  const double per = (KIND == KIND_F32 ? 1.0 : 2.0) * warps * 32.0 * C * iters / (double)mx;
  printf("%-22s warps/SM %2d chains %2d: %7.2f exponentials per SM cycle (%5.2f PTX instructions)\n",
         name, warps, C, per, per / (KIND == KIND_F32 ? 1.0 : 2.0));
  CK(cudaFree(cyc));
  CK(cudaFree(sink));
}

static void accuracy(int bf) {
  uint16_t *d, h[65536];
  CK(cudaMalloc(&d, sizeof(h)));
  ex2_all<<<256, 256>>>(bf, d);
  CK(cudaGetLastError());
  CK(cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost));
  CK(cudaFree(d));
  const double min_normal = bf ? ldexp(1.0, -126) : ldexp(1.0, -14);
  const int mant = bf ? 7 : 10; /* stored fraction bits */
  double worst_rel = 0, worst_ulp = 0, at_rel = 0, at_ulp = 0;
  long n = 0, above_half = 0;
  for (int i = 0; i < 65536; ++i) {
    const double x = bf ? bf16_val((uint16_t)i) : f16_val((uint16_t)i);
    if (!(x <= 0.0)) continue;
    const double ref = exp2(x);
    if (ref < 2.0 * min_normal) continue; /* away from the flush to zero */
    const double got = bf ? bf16_val(h[i]) : f16_val(h[i]);
    const double rel = fabs(got - ref) / ref;
    const double ulp = ldexp(1.0, ilogb(ref) - mant);
    const double u = fabs(got - ref) / ulp;
    ++n;
    if (u > 0.5) ++above_half;
    if (rel > worst_rel) worst_rel = rel, at_rel = x;
    if (u > worst_ulp) worst_ulp = u, at_ulp = x;
  }
  printf("%-6s accuracy on %ld inputs in [%d, 0]: max relative error %.3g (2^%.2f) at x = %g; "
         "max %.3f spacings at x = %g; %ld results not correctly rounded\n",
         bf ? "bf16x2" : "f16x2", n, bf ? -125 : -13, worst_rel, log2(worst_rel), at_rel, worst_ulp,
         at_ulp, above_half);
}

int main() {
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  printf("%s, %d SMs\n", prop.name, prop.multiProcessorCount);
  const int sms = prop.multiProcessorCount;
  for (int w : {4, 8, 16}) {
    rate<KIND_F32, 8>("ex2.approx.ftz.f32", sms, w);
    rate<KIND_F16X2, 8>("ex2.approx.f16x2", sms, w);
    rate<KIND_BF16X2, 8>("ex2.approx.ftz.bf16x2", sms, w);
  }
  rate<KIND_F32, 16>("ex2.approx.ftz.f32", sms, 8);
  rate<KIND_BF16X2, 16>("ex2.approx.ftz.bf16x2", sms, 8);
  accuracy(1);
  accuracy(0);
  return 0;
}
