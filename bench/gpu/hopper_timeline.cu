/* Where the bf16 Hopper forward's warpgroups spend their cycles (issue 9, twenty-fifth
 * session): backends/cuda/fwd_hopper.cu compiled with PA_HOPPER_TIMELINE (thread 0 of
 * each warpgroup appends (event, SM clock) pairs at the points its comment lists; the
 * library build has no stamps), run on 16k tokens with hidden 2048 (batch 16384 / S,
 * heads 2048 / D), non-causal, random bf16 inputs, the default variant for the problem
 * or the variant number given. Prints, per warpgroup, the cycles between consecutive
 * events summed over the recorded blocks and split by (from, to) pair, as a share of the
 * warpgroup's recorded span, with counts and means; then the kernel's time (events, back
 * to back, median of 20). Built with -DPA_HOPPER_TIMELINE=0 it times the same kernel
 * without the stamps (the control: stamps are global stores).
 *   nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -DPA_CUDA_HOPPER_BUILT=1 \
 *     -Ibackends/cuda -Icommon -Iapi/include -Ibackends bench/gpu/hopper_timeline.cu \
 *     -o hopper_timeline -lcuda
 *   hopper_timeline [128|64] [S: 512] [variant number (-1: the default)]
 * Recorded: blocks 0..131 (the persistent kernel's whole grid; a grid kernel's blocks of
 * head 0, batch entry 0), each warpgroup's first PA_HTL_N events. */
#ifndef PA_HOPPER_TIMELINE
#  define PA_HOPPER_TIMELINE 1
#endif
#if !PA_HOPPER_TIMELINE
#  undef PA_HOPPER_TIMELINE /* the control: fwd_hopper.cu as the library compiles it */
#  define PA_HTL_CONTROL 1
#else
#  define PA_HTL_CONTROL 0
#endif
#include "fwd_hopper.cu"

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "cuda_check.h"
#include "timeline_util.h"

#if !PA_HTL_CONTROL
static const char *tl_name(int ev) {
  switch (ev) {
  case 1: return "tile taken";
  case 2: return "Q landed";
  case 3: return "K(/V) landed";
  case 4: return "turn begun";
  case 5: return "issued";
  case 6: return "S landed";
  case 7: return "softmax done";
  case 8: return "P.V landed";
  case 9: return "P packed";
  case 10: return "last V landed";
  case 11: return "O stored";
  case 21: return "tile handed over";
  case 22: return "K slot free";
  case 23: return "V slot free";
  case 24: return "K, V issued";
  case 25: return "Q buffer free";
  case 26: return "hand-off free";
  default: return "?";
  }
}
#endif

template <int D>
static int tl_run(int S, int variant) {
  const int B = 16384 / S, H = 2048 / D;
  const size_t n = (size_t)B * S * H * D;
  std::vector<__nv_bfloat16> h(3 * n);
  uint64_t seed = 12345;
  for (auto &x : h) x = __float2bfloat16((float)(tl_rand(&seed) % 2001) / 1000.0f - 1.0f);
  __nv_bfloat16 *dq, *dk, *dv, *dout;
  CK(cudaMalloc(&dq, n * 2));
  CK(cudaMalloc(&dk, n * 2));
  CK(cudaMalloc(&dv, n * 2));
  CK(cudaMalloc(&dout, n * 2));
  CK(cudaMemcpy(dq, h.data(), n * 2, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dk, h.data() + n, n * 2, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dv, h.data() + 2 * n, n * 2, cudaMemcpyHostToDevice));
  pa_problem p = tl_dense_problem(B, S, H, D, dq, dk, dv, dout);
  p.dtype = p.out_dtype = POLYATTN_DTYPE_BF16;
  int dev = 0, sms = 0;
  CK(cudaGetDevice(&dev));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  const int v = pa_hopper_effective(variant >= 0 ? variant : pa_hopper_default(&p), &p);
  /* the library's dispatch (pa_hopper_run: which variants are compiled at D) */
  bool done = false;
  auto launch = [&] {
    return pa_hopper_run<__nv_bfloat16, D>(v, &p, sms, nullptr, nullptr, 0, &done);
  };
  CK(launch());
  if (!done) {
    fprintf(stderr, "variant %d is not compiled at D=%d\n", v, D);
    return 1;
  }
  const float med = tl_median_ms(launch);
  const double flops = 4.0 * B * H * (double)S * S * D;
  printf("hopper_timeline D=%d S=%d B=%d H=%d variant %d: kernel %s stamps %.4f ms (median of "
         "20), %.1f TFLOP/s\n",
         D, S, B, H, v, PA_HTL_CONTROL ? "without" : "with", med,
         flops / (med * 1e-3) / 1e12);
#if !PA_HTL_CONTROL
  std::vector<uint32_t> tl(sizeof(pa_htl) / 4);
  std::vector<int> cnt(sizeof(pa_htl_count) / sizeof(int));
  CK(cudaMemcpyFromSymbol(tl.data(), pa_htl, sizeof(pa_htl)));
  CK(cudaMemcpyFromSymbol(cnt.data(), pa_htl_count, sizeof(pa_htl_count)));
  const int nwg = v & PA_HV_WG3 ? 3 : 2;
  /* block b's warpgroup wg (0: the producer), its i-th stamp: the event and its clock */
  auto ev_at = [&](int b, int wg, int i) {
    return (int)tl[(((size_t)b * 4 + wg) * PA_HTL_N + i) * 2];
  };
  auto ck_at = [&](int b, int wg, int i) {
    return tl[(((size_t)b * 4 + wg) * PA_HTL_N + i) * 2 + 1];
  };
  for (int wg = 0; wg <= nwg; ++wg) {
    std::map<std::pair<int, int>, std::pair<double, long>> by; /* (from, to): cycles, count */
    double span = 0;
    long events = 0, blocks = 0, tiles = 0, full = 0;
    for (int b = 0; b < PA_HTL_BLOCKS; ++b) {
      const int m = cnt[b * 4 + wg];
      if (m < 2) continue;
      ++blocks;
      events += m;
      full += m >= PA_HTL_N;
      auto ev = [&](int i) { return ev_at(b, wg, i); };
      auto ck = [&](int i) { return ck_at(b, wg, i); };
      span += (double)(uint32_t)(ck(m - 1) - ck(0));
      for (int i = 0; i + 1 < m; ++i) {
        auto &x = by[{ev(i), ev(i + 1)}];
        x.first += (double)(uint32_t)(ck(i + 1) - ck(i));
        ++x.second;
        if (ev(i) == (wg ? 2 : 21)) ++tiles; /* Q landed: grid kernels too */
      }
    }
    if (!blocks) continue;
    printf("%s %d: %ld blocks, %ld events, %.0f cycles recorded per block (first to last "
           "event), %.1f tiles per block%s (%ld logs full)\n",
           wg ? "consumer" : "producer", wg ? wg - 1 : 0, blocks, events, span / blocks,
           (double)tiles / blocks, wg ? "" : " (persistent kernel only)", full);
    std::vector<std::pair<double, std::pair<int, int>>> rows;
    for (auto &x : by) rows.push_back({x.second.first, x.first});
    std::sort(rows.rbegin(), rows.rend());
    for (auto &r : rows) {
      const auto &x = by[r.second];
      printf("  %-16s -> %-16s %5.1f%%  count %7ld  mean %7.0f cycles\n", tl_name(r.second.first),
             tl_name(r.second.second), 100.0 * x.first / span, x.second, x.first / x.second);
    }
  }
  /* Two consumers' offset: consumer 1's "O stored" (event 11) minus consumer 0's, per
   * query tile of each recorded block (the same SM clock), and consumer 0's tile period;
   * quartiles over the blocks at the first tiles and over all tiles (twenty-ninth
   * session: does a start offset between the consumers persist?) */
  if (nwg == 2) {
    std::vector<std::vector<double>> off_at(8);
    std::vector<double> off_all, period;
    for (int b = 0; b < PA_HTL_BLOCKS; ++b) {
      std::vector<uint32_t> t[2];
      for (int c = 0; c < 2; ++c) {
        const int m = cnt[b * 4 + 1 + c];
        for (int i = 0; i < m; ++i)
          if (ev_at(b, 1 + c, i) == 11) t[c].push_back(ck_at(b, 1 + c, i));
      }
      const size_t k_n = std::min(t[0].size(), t[1].size());
      for (size_t k = 0; k < k_n; ++k) {
        const double o = (double)(int32_t)(t[1][k] - t[0][k]);
        off_all.push_back(o);
        if (k < off_at.size()) off_at[k].push_back(o);
        if (k + 1 < t[0].size()) period.push_back((double)(uint32_t)(t[0][k + 1] - t[0][k]));
      }
    }
    auto q = [](std::vector<double> v, double f) {
      if (v.empty()) return 0.0;
      std::sort(v.begin(), v.end());
      return v[(size_t)(f * (v.size() - 1))];
    };
    if (!off_all.empty()) {
      printf("consumer offset (c1 - c0 at O stored), cycles: all tiles q1/median/q3 %.0f / %.0f "
             "/ %.0f (%zu tiles); consumer 0's tile period median %.0f\n",
             q(off_all, 0.25), q(off_all, 0.5), q(off_all, 0.75), off_all.size(), q(period, 0.5));
      for (size_t k = 0; k < off_at.size(); ++k)
        if (!off_at[k].empty())
          printf("  tile %zu: q1/median/q3 %.0f / %.0f / %.0f (%zu blocks)\n", k,
                 q(off_at[k], 0.25), q(off_at[k], 0.5), q(off_at[k], 0.75), off_at[k].size());
    }
  }
#endif
  return 0;
}

int main(int argc, char **argv) {
  if (!tl_is_sm90("hopper_timeline")) return 77;
  const int d = argc > 1 ? atoi(argv[1]) : 128;
  const int s = argc > 2 ? atoi(argv[2]) : 512;
  const int v = argc > 3 ? atoi(argv[3]) : -1;
  return d == 64 ? tl_run<64>(s, v) : tl_run<128>(s, v);
}
