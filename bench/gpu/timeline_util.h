/* What the kernel-timeline harnesses of bench/gpu/ share (fp8_timeline.cu,
 * hopper_timeline.cu): a small random generator, the events timer, the sm_90 check and
 * the dense problem. Include after the kernel's .cu file and cuda_check.h. */
#ifndef PA_BENCH_TIMELINE_UTIL_H
#define PA_BENCH_TIMELINE_UTIL_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <algorithm>
#include <vector>

static uint32_t tl_rand(uint64_t *s) {
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  return (uint32_t)(*s >> 33);
}

/* launch() five times to warm up, then 20 times back to back between events on the
 * default stream: the median, in ms */
template <typename F>
static float tl_median_ms(F launch) {
  for (int i = 0; i < 5; ++i) CK(launch());
  CK(cudaDeviceSynchronize());
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  std::vector<float> ms;
  for (int i = 0; i < 20; ++i) {
    CK(cudaEventRecord(e0));
    CK(launch());
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    float t;
    CK(cudaEventElapsedTime(&t, e0, e1));
    ms.push_back(t);
  }
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
  std::sort(ms.begin(), ms.end());
  return ms[10];
}

/* false (with a message) unless the current device is compute capability 9.x */
static bool tl_is_sm90(const char *tool) {
  int dev = 0, major = 0;
  CK(cudaGetDevice(&dev));
  CK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  if (major != 9) fprintf(stderr, "%s: needs sm_90\n", tool);
  return major == 9;
}

/* A dense, non-causal forward problem over BSHD tensors of B x S x H x D elements (no
 * LSE), the timeline harnesses' shape; dtype and out_dtype set by the caller after. The
 * kernels' headers (pa_problem) come before this one. */
static pa_problem tl_dense_problem(int B, int S, int H, int D, void *q, void *k, void *v,
                                   void *o) {
  pa_problem p;
  memset(&p, 0, sizeof p);
  p.pass = PA_PASS_FORWARD;
  p.batch = B, p.seqlen_q = p.seqlen_k = S, p.total_q = p.total_k = (int64_t)B * S;
  p.heads_q = p.heads_kv = H, p.head_dim = p.head_dim_v = D;
  p.scale = 1.0f / sqrtf((float)D);
  p.window_left = p.window_right = -1;
  p.sparsity = POLYATTN_SPARSITY_NONE;
  p.block_q = p.block_k = 64;
  p.block_threshold = p.auto_density_cutoff = 1.0f;
  const pa_view bshd = {nullptr, 0, nullptr, (int64_t)S * H * D, (int64_t)H * D, D};
  p.q = p.k = p.v = p.o = bshd;
  p.q.ptr = q, p.k.ptr = k, p.v.ptr = v, p.o.ptr = o;
  return p;
}

#endif
