/* mma_issue.cu: how many warps per SM sub-partition (scheduler) mma.sync.m16n8k16
 * needs to reach its throughput on the GPU it runs on (issue 3's question for a
 * pingpong schedule on mma.sync: can one warp per scheduler keep the tensor pipe busy
 * while the other does its softmax?).
 *
 *   nvcc -O3 -gencode arch=compute_90,code=sm_90 bench/gpu/mma_issue.cu -o mma_issue
 *   ./mma_issue
 *
 * One block per SM (the dynamic shared memory keeps a second one off), W warps per
 * block, so W / 4 warps per scheduler; each warp runs C independent accumulator chains
 * (bf16 in, fp32 accumulate, constant operands: the tensor pipe alone, as
 * mma_peak.cu). Timed with events, median of 15 launches after a warm-up. */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>

#include <algorithm>
#include <vector>

constexpr int kIters = 2048;

template <int C>
__global__ void mma_chains(float *out, uint32_t seed) {
  uint32_t a[4] = {seed, seed ^ 1u, seed ^ 2u, seed ^ 3u}, b0 = seed * 3u, b1 = seed * 5u;
  float d[C][4] = {};
  for (int it = 0; it < kIters; ++it) {
#pragma unroll
    for (int c = 0; c < C; ++c)
      asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, "
                   "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                   : "+f"(d[c][0]), "+f"(d[c][1]), "+f"(d[c][2]), "+f"(d[c][3])
                   : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
  float s = 0.0f;
#pragma unroll
  for (int c = 0; c < C; ++c) s += d[c][0] + d[c][1] + d[c][2] + d[c][3];
  if (s == 1234.5f) out[threadIdx.x] = s; /* keeps the loop alive; never true in practice */
}

template <int C>
void run(int sms, float *out, cudaEvent_t e0, cudaEvent_t e1) {
  const int smem = 150 * 1024; /* one block per SM */
  cudaFuncSetAttribute(mma_chains<C>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  for (int warps : {4, 8, 12, 16}) {
    mma_chains<C><<<sms, 32 * warps, smem>>>(out, 7u);
    std::vector<float> ms;
    for (int r = 0; r < 15; ++r) {
      cudaEventRecord(e0);
      mma_chains<C><<<sms, 32 * warps, smem>>>(out, 7u);
      cudaEventRecord(e1);
      cudaEventSynchronize(e1);
      float t = 0.0f;
      cudaEventElapsedTime(&t, e0, e1);
      ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    const double t = ms[ms.size() / 2] * 1e-3;
    const double flops = 2.0 * 16 * 8 * 16 * C * (double)kIters * sms * warps;
    printf("chains %2d, %d warps per scheduler: %6.1f TFLOP/s (median %.3f ms)\n", C, warps / 4,
           flops / t / 1e12, t * 1e3);
  }
}

int main() {
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  float *out;
  cudaMalloc(&out, 1024 * sizeof(float));
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  run<2>(sms, out, e0, e1);
  run<4>(sms, out, e0, e1);
  run<8>(sms, out, e0, e1);
  run<16>(sms, out, e0, e1);
  printf("%s\n", cudaGetErrorString(cudaGetLastError()));
  return 0;
}
