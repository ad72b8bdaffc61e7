/* Where one loop iteration of the FP8 forward's warpgroups spends its cycles (issue 9,
 * sixteenth session): backends/cuda/fwd_hopper_fp8.cu compiled with PA_FP8_TIMELINE
 * (SM-clock stamps at the phase boundaries of the producer's and each consumer's loop,
 * for the blocks of batch entry 0 and head 0 or the one given), run on B2 H16 S8192
 * (16k tokens), fp8 random inputs, the default variant at the given head dim (or the
 * variant number given). Prints, per warpgroup, the median and the 10th / 90th percentiles over
 * blocks and iterations 2..tiles-2 of each phase's cycles, the cycles per iteration,
 * and the kernel's time (events, back to back, median of 20); built with
 * -DPA_FP8_TIMELINE=0 it times the same kernel without the stamps (the control), and with
 * -DPA_FP8_TIMELINE=0 -DPA_FP8_NO_TRANSPOSE=1 the kernel without the V transpose's work
 * (its results wrong: the time a V given already transposed would allow).
 *   nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -DPA_CUDA_HOPPER_BUILT=1 \
 *     -Ibackends/cuda -Icommon -Iapi/include -Ibackends bench/gpu/fp8_timeline.cu \
 *     -o fp8_timeline -lcuda
 *   fp8_timeline [128|64] [variant number (-1: the default)] [head whose blocks record: 0]
 * (a tuning-only variant's number needs -DPA_CUDA_TUNING_VARIANTS=1 too, else "not
 * compiled")
 * The last lines compare whole blocks (start to each consumer's end) with the loop. */
#ifndef PA_FP8_TIMELINE
#  define PA_FP8_TIMELINE 1 /* -DPA_FP8_TIMELINE=0: the same harness without stamps */
#endif
#include "fwd_hopper_fp8.cu"

#include <algorithm>
#include <vector>

#include "cuda_check.h"
#include "timeline_util.h"

/* median, p10, p90 of v (cycles) */
static void tl_print(const char *what, std::vector<double> v) {
  if (v.empty()) return;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  printf("  %-34s median %7.0f  p10 %7.0f  p90 %7.0f  (n=%zu)\n", what, v[n / 2], v[n / 10],
         v[n * 9 / 10], n);
}

template <int D>
static int tl_run(int variant) {
  const int B = 2, H = 16, S = 8192;
  const size_t n = (size_t)B * S * H * D;
  std::vector<uint8_t> h(3 * n);
  uint64_t seed = 12345;
  for (auto &x : h) { /* e4m3 of magnitude 0.5-3.75 (exponent fields 6-8), either sign */
    const uint32_t r = tl_rand(&seed);
    x = (uint8_t)(((r & 1) << 7) | ((6 + (r >> 1) % 3) << 3) | ((r >> 4) & 7));
  }
  uint8_t *dq, *dk, *dv;
  __nv_bfloat16 *dout;
  CK(cudaMalloc(&dq, n));
  CK(cudaMalloc(&dk, n));
  CK(cudaMalloc(&dv, n));
  CK(cudaMalloc(&dout, n * 2));
  CK(cudaMemcpy(dq, h.data(), n, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dk, h.data() + n, n, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dv, h.data() + 2 * n, n, cudaMemcpyHostToDevice));
  pa_problem p = tl_dense_problem(B, S, H, D, dq, dk, dv, dout);
  p.dtype = POLYATTN_DTYPE_FP8_E4M3;
  p.out_dtype = POLYATTN_DTYPE_BF16;
  const int v = variant >= 0 ? variant : pa_fp8_variant(&p);
  /* the library's dispatch (pa_fp8_run: which variants are compiled) */
  bool done = false;
  auto launch = [&] { return pa_fp8_run<D>(v, &p, 0, &done); };
  CK(launch());
  if (!done) {
    fprintf(stderr, "variant %d is not compiled\n", v);
    return 1;
  }
  const float med = tl_median_ms(launch);
  const double flops = 4.0 * B * H * (double)S * S * D;
  printf("fp8_timeline D=%d variant %d: kernel %s stamps%s %.4f ms (median of 20), %.1f TFLOP/s\n",
         D, v, PA_FP8_TIMELINE ? "with" : "without",
         PA_FP8_NO_TRANSPOSE ? ", V NOT transposed (wrong results)" : "", med,
         flops / (med * 1e-3) / 1e12);
  if (!PA_FP8_TIMELINE) return 0;
  std::vector<uint32_t> tl(sizeof(pa_fp8_tl) / 4);
  CK(cudaMemcpyFromSymbol(tl.data(), pa_fp8_tl, sizeof(pa_fp8_tl)));
  const int bk = pa_fp8_bk(v), tiles = (S + bk - 1) / bk, nwg = pa_fp8_nwg(D, v);
  auto at = [&](int b, int wg, int it, int k) {
    return tl[(((size_t)b * 4 + wg) * PA_FP8_TL_ITERS + it) * 16 + k];
  };
  const int it_hi = std::min(tiles - 2, (int)PA_FP8_TL_ITERS - 2);
  auto phase = [&](int wg, int k0, int k1, const char *what) {
    std::vector<double> d;
    for (int b = 0; b < PA_FP8_TL_BLOCKS && b < S / (64 * nwg); ++b)
      for (int it = 2; it < it_hi; ++it) d.push_back((double)(uint32_t)(at(b, wg, it, k1) - at(b, wg, it, k0)));
    tl_print(what, d);
  };
  auto iters = [&](int wg, int k) { /* cycles from stamp k of one iteration to the next's */
    std::vector<double> d;
    for (int b = 0; b < PA_FP8_TL_BLOCKS && b < S / (64 * nwg); ++b)
      for (int it = 2; it < it_hi; ++it) d.push_back((double)(uint32_t)(at(b, wg, it + 1, k) - at(b, wg, it, k)));
    return d;
  };
  auto per_iter = [&](int wg, int k) { tl_print("one iteration (k = key tile)", iters(wg, k)); };
  printf("producer (warp 0; thread 0 also issues the TMA copies), cycles:\n");
  phase(0, 0, 1, "issue next tile's K, V (thread 0)");
  phase(0, 1, 2, "wait: V landed");
  phase(0, 2, 3, "wait: V^T slot free");
  phase(0, 3, 4, "transpose + fence + arrive");
  phase(0, 4, 5, "producer barrier");
  per_iter(0, 0);
  for (int wg = 1; wg <= nwg; ++wg) {
    printf("consumer %d (warp 0), cycles:\n", wg - 1);
    phase(wg, 0, 1, "wait: K, V^T landed");
    phase(wg, 1, 2, "wait: turn (pingpong)");
    phase(wg, 2, 3, "issue S, rescale O, issue P.V");
    phase(wg, 3, 4, "wait: S (wgmma wait 1)");
    phase(wg, 4, 5, "softmax (scores, max, exp, sums)");
    phase(wg, 5, 6, "wait: P.V (wgmma wait 0)");
    phase(wg, 6, 7, "pack P");
    per_iter(wg, 0);
  }
  /* whole blocks: start (warpgroup 0) to each consumer's end, in SM cycles and in ns
   * (their ratio: the SM clock), and what the loop's iterations leave unexplained */
  for (int wg = 1; wg <= nwg; ++wg) {
    std::vector<double> cyc, ns, ghz, rest, it = iters(wg, 0);
    std::sort(it.begin(), it.end());
    const double it_med = it.empty() ? 0.0 : it[it.size() / 2];
    for (int b = 0; b < PA_FP8_TL_BLOCKS && b < S / (64 * nwg); ++b) {
      const double c = (double)(uint32_t)(at(b, wg, 0, 12) - at(b, 0, 0, 12));
      const double n = (double)(uint32_t)(at(b, wg, 0, 14) - at(b, 0, 0, 14));
      cyc.push_back(c), ns.push_back(n), ghz.push_back(c / n), rest.push_back(c - tiles * it_med);
    }
    printf("consumer %d, whole block (%d key tiles):\n", wg - 1, tiles);
    tl_print("start to end, cycles", cyc);
    tl_print("start to end, ns", ns);
    for (auto &x : ghz) x *= 1000;
    tl_print("SM clock, GHz x 1000", ghz);
    tl_print("cycles beyond tiles x iteration", rest);
  }
  return 0;
}

int main(int argc, char **argv) {
  if (!tl_is_sm90("fp8_timeline")) return 77;
  const int d = argc > 1 ? atoi(argv[1]) : 128;
  const int v = argc > 2 ? atoi(argv[2]) : -1;
  if (argc > 3) { /* the head whose blocks record: 8 puts them in the fourth wave */
    const int head = atoi(argv[3]);
    CK(cudaMemcpyToSymbol(pa_fp8_tl_head, &head, sizeof head));
  }
  return d == 64 ? tl_run<64>(v) : tl_run<128>(v);
}
