/* mma_peak.cu: the throughput ceiling of mma.sync.m16n8k16 (bf16 in, fp32 accumulate)
 * on the GPU it runs on, the instruction the Ampere forward kernel is built from, and
 * how many warps per SM sub-partition (scheduler) it needs to get there.
 *
 *   nvcc -O3 -gencode arch=compute_90,code=sm_90 -gencode arch=compute_80,code=sm_80 \
 *     bench/gpu/mma_peak.cu -o mma_peak && ./mma_peak
 *
 * Every warp runs C independent accumulator chains for kIters iterations; the operands
 * are constant registers: this measures the tensor pipe alone, no shared-memory or
 * ldmatrix traffic (the kernel's real ceiling is below this). FLOPs = 2 * 16 * 8 * 16
 * per mma. Timed with events, median of 20 launches after a warm-up.
 *   Part 1, the ceiling: 8 chains, 4 blocks per SM of 4, 8 or 16 warps.
 *   Part 2, warps per scheduler (twenty-third session, issue 3's pingpong question: can
 *   one warp per scheduler keep the pipe busy while another does its softmax?): one
 *   block per SM (its dynamic shared memory keeps a second one off) of W warps, i.e.
 *   W / 4 warps per scheduler, with 2, 4, 8 or 16 chains per warp. */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>

#include <algorithm>
#include <vector>

constexpr int kIters = 4096;

template <int C>
__global__ void mma_loop(float *out, uint32_t seed) {
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

/* TFLOP/s of mma_loop<C> on `blocks` blocks of `warps` warps (median of 20). */
template <int C>
double mma_tflops(int blocks, int warps, int smem, float *out, cudaEvent_t e0, cudaEvent_t e1,
                  double *median_ms) {
  cudaFuncSetAttribute(mma_loop<C>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  mma_loop<C><<<blocks, 32 * warps, smem>>>(out, 7u);
  std::vector<float> ms;
  for (int r = 0; r < 20; ++r) {
    cudaEventRecord(e0);
    mma_loop<C><<<blocks, 32 * warps, smem>>>(out, 7u);
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    float t = 0.0f;
    cudaEventElapsedTime(&t, e0, e1);
    ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  *median_ms = ms[ms.size() / 2];
  const double flops = 2.0 * 16 * 8 * 16 * C * (double)kIters * blocks * warps;
  return flops / (*median_ms * 1e-3) / 1e12;
}

template <int C>
void per_scheduler(int sms, float *out, cudaEvent_t e0, cudaEvent_t e1) {
  for (int warps : {4, 8, 12, 16}) {
    double ms = 0.0;
    const double tf = mma_tflops<C>(sms, warps, 150 * 1024, out, e0, e1, &ms);
    printf("chains %2d, %d warps per scheduler: %6.1f TFLOP/s (median %.3f ms)\n", C, warps / 4,
           tf, ms);
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
  for (int warps : {4, 8, 16}) {
    const int blocks = sms * 4;
    double ms = 0.0;
    const double tf = mma_tflops<8>(blocks, warps, 0, out, e0, e1, &ms);
    printf("mma.sync m16n8k16 bf16: %d SMs, %d blocks x %2d warps: %.1f TFLOP/s (median %.3f ms)\n",
           sms, blocks, warps, tf, ms);
  }
  per_scheduler<2>(sms, out, e0, e1);
  per_scheduler<4>(sms, out, e0, e1);
  per_scheduler<8>(sms, out, e0, e1);
  per_scheduler<16>(sms, out, e0, e1);
  const cudaError_t e = cudaGetLastError(); /* read once: reading clears it */
  printf("%s\n", cudaGetErrorString(e));
  return e != cudaSuccess;
}
