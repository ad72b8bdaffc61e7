/* mma_peak.cu: the throughput ceiling of mma.sync.m16n8k16 (bf16 in, fp32 accumulate)
 * on the GPU it runs on, the instruction the Ampere forward kernel is built from.
 *
 *   nvcc -O3 -gencode arch=compute_90,code=sm_90 -gencode arch=compute_80,code=sm_80 \
 *     bench/gpu/mma_peak.cu -o mma_peak && ./mma_peak
 *
 * Every warp runs kChains independent accumulators (enough to hide the mma latency)
 * for kIters iterations; blocks x warps fill every SM several times over. FLOPs =
 * 2 * 16 * 8 * 16 per mma. Timed with events, median of 20 launches after a warm-up.
 * The operands are constant registers: this measures the tensor pipe alone, no
 * shared-memory or ldmatrix traffic (the kernel's real ceiling is below this). */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>

#include <algorithm>
#include <vector>

constexpr int kChains = 8;
constexpr int kIters = 4096;

__global__ void mma_loop(float *out, uint32_t seed) {
  uint32_t a[4] = {seed, seed ^ 1u, seed ^ 2u, seed ^ 3u}, b0 = seed * 3u, b1 = seed * 5u;
  float d[kChains][4] = {};
  for (int it = 0; it < kIters; ++it) {
#pragma unroll
    for (int c = 0; c < kChains; ++c)
      asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, "
                   "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                   : "+f"(d[c][0]), "+f"(d[c][1]), "+f"(d[c][2]), "+f"(d[c][3])
                   : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
  float s = 0.0f;
#pragma unroll
  for (int c = 0; c < kChains; ++c) s += d[c][0] + d[c][1] + d[c][2] + d[c][3];
  if (s == 1234.5f) out[threadIdx.x] = s; /* keeps the loop alive; never true in practice */
}

int main() {
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  float *out;
  cudaMalloc(&out, 1024 * sizeof(float));
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  for (int warps : {4, 8, 16}) {
    const int blocks = sms * 4;
    mma_loop<<<blocks, 32 * warps>>>(out, 7u);
    std::vector<float> ms;
    for (int r = 0; r < 20; ++r) {
      cudaEventRecord(e0);
      mma_loop<<<blocks, 32 * warps>>>(out, 7u);
      cudaEventRecord(e1);
      cudaEventSynchronize(e1);
      float t = 0.0f;
      cudaEventElapsedTime(&t, e0, e1);
      ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    const double flops = 2.0 * 16 * 8 * 16 * kChains * (double)kIters * blocks * warps;
    printf("mma.sync m16n8k16 bf16: %d SMs, %d blocks x %2d warps: %.1f TFLOP/s (median %.3f ms)\n",
           sms, blocks, warps, flops / (ms[ms.size() / 2] * 1e-3) / 1e12, ms[ms.size() / 2]);
  }
  return cudaGetLastError() != cudaSuccess;
}
