/* Where a decode call's time goes (issue 3, eighteenth session): backends/cuda/fwd_decode.cu
 * compiled with PA_DECODE_TL (global-timer stamps at each block's start, each warp's first
 * tile and loop end, the partials written, the ticket, the merge: decode_mma.cuh), run on
 * issue 3's decode problem (B8 Hq32 Hkv8 D128 Sq1 bf16, Sk from the first argument) as
 * bench/gpu/decode_variants.py's graph timer runs it: N calls captured in one CUDA graph,
 * rotating over copies of K/V whose bytes exceed the L2 several times, median of the
 * replays / N. Prints the per-call time, then, over the calls of one more replay, where
 * each call's span goes: the gap since the previous call's last block, the blocks' start
 * spread, the first tile's arrival, the warps' loop ends, the ticket, the merge.
 * Built with -DPA_DECODE_TL=0 it times the same kernel without the stamps (the control).
 * The plan's settings (POLYATTN_CUDA_DECODE_SPLITS, _WARPS, _VARIANT, _MERGE) apply.
 *   nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -Ibackends/cuda -Icommon \
 *     -Iapi/include -Ibackends bench/gpu/decode_timeline.cu -o decode_timeline
 *   decode_timeline [Sk 4096] [calls per graph 12] [replays 21] */
#ifndef PA_DECODE_TL
#  define PA_DECODE_TL 1 /* -DPA_DECODE_TL=0: the same harness without stamps */
#endif
#include "fwd_decode.cu"

#include <algorithm>
#include <vector>

#include "cuda_check.h"

static double tl_med(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
static void tl_print(const char *what, std::vector<double> v) {
  if (v.empty()) return;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  printf("  %-46s min %7.2f  p10 %7.2f  median %7.2f  p90 %7.2f  max %7.2f us (n=%zu)\n", what,
         v[0] * 1e-3, v[n / 10] * 1e-3, v[n / 2] * 1e-3, v[n * 9 / 10] * 1e-3, v[n - 1] * 1e-3, n);
}

int main(int argc, char **argv) {
  const int Sk = argc > 1 ? atoi(argv[1]) : 4096;
  const int calls = argc > 2 ? atoi(argv[2]) : 12;
  const int reps = argc > 3 ? atoi(argv[3]) : 21;
  const int B = 8, Hq = 32, Hkv = 8, D = 128;

  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  pa_cuda_device dev;
  dev.cc_major = prop.major, dev.cc_minor = prop.minor;
  dev.sm_count = prop.multiProcessorCount;
  dev.smem_optin = prop.sharedMemPerBlockOptin;

  const size_t nkv = (size_t)B * Sk * Hkv * D, nq = (size_t)B * Hq * D;
  const size_t kv_bytes = 2 * nkv * 2;
  const int copies = (int)std::max<size_t>(2, (640ull << 20) / kv_bytes + 1);
  std::vector<uint16_t> h(nkv);
  uint64_t seed = 777;
  for (auto &x : h) { /* bf16 of magnitude < 1, either sign */
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    const uint32_t r = (uint32_t)(seed >> 33);
    x = (uint16_t)(((r & 1) << 15) | ((120 + (r >> 1) % 6) << 7) | ((r >> 8) & 127));
  }
  std::vector<void *> dk(copies), dv(copies);
  for (int c = 0; c < copies; ++c) {
    CK(cudaMalloc(&dk[c], nkv * 2));
    CK(cudaMalloc(&dv[c], nkv * 2));
    CK(cudaMemcpy(dk[c], h.data(), nkv * 2, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dv[c], h.data(), nkv * 2, cudaMemcpyHostToDevice));
  }
  void *dq, *dout;
  CK(cudaMalloc(&dq, nq * 2));
  CK(cudaMalloc(&dout, nq * 2));
  CK(cudaMemcpy(dq, h.data(), nq * 2, cudaMemcpyHostToDevice));

  pa_problem p;
  memset(&p, 0, sizeof p);
  p.pass = PA_PASS_FORWARD;
  p.dtype = p.out_dtype = POLYATTN_DTYPE_BF16;
  p.batch = B, p.seqlen_q = 1, p.seqlen_k = Sk, p.total_q = B, p.total_k = (int64_t)B * Sk;
  p.heads_q = Hq, p.heads_kv = Hkv, p.head_dim = p.head_dim_v = D;
  p.scale = 1.0f / sqrtf((float)D);
  p.window_left = p.window_right = -1;
  p.sparsity = POLYATTN_SPARSITY_NONE;
  p.block_q = p.block_k = 64;
  p.block_threshold = p.auto_density_cutoff = 1.0f;
  const pa_view q = {nullptr, 0, dq, (int64_t)Hq * D, (int64_t)Hq * D, D};
  const pa_view kv = {nullptr, 0, nullptr, (int64_t)Sk * Hkv * D, (int64_t)Hkv * D, D};
  p.q = p.o = q;
  p.o.ptr = dout;
  p.k = p.v = kv;

  p.k.ptr = dk[0], p.v.ptr = dv[0];
  decode_plan L = make_plan(&p, &dev);
  if (!L.mma) {
    fprintf(stderr, "decode_timeline: the plan is not the tensor-core kernel\n");
    return 1;
  }
  static const char *merge_name[] = {"merge kernel", "merge kernel (pdl)", "cluster merge", "ticket merge"};
  const int blocks = L.splits / L.warps * Hkv * B;
  printf("decode_timeline Sk=%d: %s stamps; %d splits of %d keys, %d warps per block, %d blocks, "
         "variant %d, %s, %d K/V copies, %d calls per graph, %d replays\n",
         Sk, PA_DECODE_TL ? "with" : "without", L.splits, L.split_keys, L.warps, blocks, L.variant,
         merge_name[L.merge],
         copies, calls, reps);
  void *ws;
  const size_t ws_bytes = std::max<size_t>(L.workspace, 256); /* the cluster merge needs none */
  CK(cudaMalloc(&ws, ws_bytes));
  CK(cudaMemset(ws, 0, ws_bytes));
  unsigned long long *tl = nullptr; /* the stamps; none in the control build */
  const size_t tl_words = (size_t)calls * blocks * kDecodeTlSlots;
  if (PA_DECODE_TL) {
    CK(cudaMalloc(&tl, tl_words * 8));
    CK(cudaMemset(tl, 0, tl_words * 8));
  }

  cudaStream_t st;
  CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  auto call = [&](int c) {
    pa_problem pc = p;
    pc.k.ptr = dk[c % copies], pc.v.ptr = dv[c % copies];
    decode_plan Lc = make_plan(&pc, &dev);
    bind_workspace(&pc, &Lc, ws);
#if PA_DECODE_TL
    Lc.tl = tl + (size_t)c * blocks * kDecodeTlSlots;
#endif
    CK(launch_mma_dtype(&pc, Lc, st));
    if (Lc.merge == kMergeKernel || Lc.merge == kMergePdl) CK(launch_merge(&pc, Lc, st));
  };
  for (int c = 0; c < calls; ++c) call(c); /* warm, and the smem opt-in outside the capture */
  CK(cudaStreamSynchronize(st));

  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
  for (int c = 0; c < calls; ++c) call(c);
  CK(cudaStreamEndCapture(st, &graph));
  CK(cudaGraphInstantiate(&exec, graph, 0));
  for (int i = 0; i < 3; ++i) CK(cudaGraphLaunch(exec, st));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  std::vector<double> per_call;
  for (int i = 0; i < reps; ++i) {
    CK(cudaEventRecord(e0, st));
    CK(cudaGraphLaunch(exec, st));
    CK(cudaEventRecord(e1, st));
    CK(cudaEventSynchronize(e1));
    float ms;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    per_call.push_back(ms * 1e3 / calls);
  }
  const double us = tl_med(per_call);
  printf("graph replay: %.2f us per call (median of %d), %.3f TB/s of K+V, %.1f%% of 4.2 TB/s\n", us,
         reps, kv_bytes / (us * 1e-6) / 1e12, kv_bytes / (us * 1e-6) / 4.2e12 * 100.0);
  if (!tl) return 0;

  /* The stamps of one more replay, on a cleared buffer (a slot never written reads 0 and
   * is left out below). */
  CK(cudaMemset(tl, 0, tl_words * 8));
  CK(cudaGraphLaunch(exec, st));
  CK(cudaStreamSynchronize(st));
  std::vector<unsigned long long> s(tl_words);
  CK(cudaMemcpy(s.data(), tl, tl_words * 8, cudaMemcpyDeviceToHost));
  auto at = [&](int c, int blk, int k) { return s[((size_t)c * blocks + blk) * kDecodeTlSlots + k]; };
  /* b - a in ns, or -1 when a slot was not written */
  auto dt = [&](unsigned long long a, unsigned long long b) { return a && b ? (double)(long long)(b - a) : -1.0; };
  auto push = [](std::vector<double> &v, double x) {
    if (x >= 0.0) v.push_back(x);
  };
  auto end_of = [&](int c, int blk) { return at(c, blk, kTlMergedFlag) ? at(c, blk, kTlMerged) : at(c, blk, kTlTicket); };
  std::vector<double> span, gap, start_spread, first_tile, loop_end, warp_spread, part_written, ticket,
      merge, after_loop_to_end, last_start;
  std::vector<int> sm_used(prop.multiProcessorCount, 0);
  for (int c = 0; c < calls; ++c) {
    unsigned long long t0 = ~0ull, t1 = 0, last_loop = 0;
    for (int blk = 0; blk < blocks; ++blk) {
      t0 = std::min(t0, at(c, blk, kTlStart));
      t1 = std::max(t1, end_of(c, blk));
      if (c == calls - 1 && at(c, blk, kTlSm) < sm_used.size()) sm_used[at(c, blk, kTlSm)]++;
    }
    unsigned long long smax = 0;
    for (int blk = 0; blk < blocks; ++blk) {
      smax = std::max(smax, at(c, blk, kTlStart));
      unsigned long long lmax = 0, lmin = ~0ull;
      for (int w = 0; w < L.warps; ++w) {
        push(first_tile, dt(at(c, blk, kTlStart), at(c, blk, kTlFirstTile + w)));
        lmax = std::max(lmax, at(c, blk, kTlLoopEnd + w));
        lmin = std::min(lmin, at(c, blk, kTlLoopEnd + w));
      }
      last_loop = std::max(last_loop, lmax);
      push(loop_end, dt(t0, lmax));
      push(warp_spread, dt(lmin, lmax));
      push(part_written, dt(lmax, at(c, blk, kTlPartials)));
      push(ticket, dt(at(c, blk, kTlPartials), at(c, blk, kTlTicket)));
      if (at(c, blk, kTlMergedFlag)) push(merge, dt(at(c, blk, kTlTicket), at(c, blk, kTlMerged)));
    }
    span.push_back((double)(t1 - t0));
    start_spread.push_back((double)(smax - t0));
    push(after_loop_to_end, dt(last_loop, t1));
    if (c > 0) {
      unsigned long long prev_end = 0;
      for (int blk = 0; blk < blocks; ++blk) prev_end = std::max(prev_end, end_of(c - 1, blk));
      gap.push_back((double)t0 - (double)prev_end);
    }
  }
  int idle = 0;
  for (int n : sm_used) idle += n == 0;
  printf("timeline of one more replay (global timer; %d of %d SMs ran no block of the last call):\n",
         idle, prop.multiProcessorCount);
  tl_print("call span (first block start to last end)", span);
  tl_print("gap (previous call's last end to first start)", gap);
  tl_print("span + gap", [&] {
    std::vector<double> v;
    for (size_t i = 0; i < gap.size(); ++i) v.push_back(span[i + 1] + gap[i]);
    return v;
  }());
  tl_print("blocks' start spread (last start - first)", start_spread);
  tl_print("first tile landed (per warp, from block start)", first_tile);
  tl_print("block's loop end (last warp, from call start)", loop_end);
  tl_print("warps' loop ends, last - first, per block", warp_spread);
  tl_print("loop end to partials written (block)", part_written);
  tl_print(L.merge == kMergeCluster ? "cluster barrier (partials in smem to passed)" : "ticket (CAS round trip)",
           ticket);
  tl_print(L.merge == kMergeCluster ? "merge (every block, to the last barrier)" : "merge (last block per pair)",
           merge);
  tl_print("last loop end to call end", after_loop_to_end);
  /* (every figure is over all calls of the replay; the gap from the second call on) */
  if (const char *path = getenv("DECODE_TL_CSV")) { /* every block of every call, raw, ns from the call's first start */
    FILE *out = fopen(path, "w");
    if (out) {
      fprintf(out, "call,block,b,hkv,bx,sm,start,first_tile_last,loop_end_first,loop_end_last,partials,ticket,end,merged\n");
      const int bx_n = L.splits / L.warps;
      for (int c = 0; c < calls; ++c) {
        unsigned long long t0 = ~0ull;
        for (int blk = 0; blk < blocks; ++blk) t0 = std::min(t0, at(c, blk, kTlStart));
        for (int blk = 0; blk < blocks; ++blk) {
          unsigned long long ft = 0, lmin = ~0ull, lmax = 0;
          for (int w = 0; w < L.warps; ++w) {
            ft = std::max(ft, at(c, blk, kTlFirstTile + w));
            lmin = std::min(lmin, at(c, blk, kTlLoopEnd + w));
            lmax = std::max(lmax, at(c, blk, kTlLoopEnd + w));
          }
          auto rel = [&](unsigned long long x) { return x ? (long long)(x - t0) : -1ll; };
          fprintf(out, "%d,%d,%d,%d,%d,%llu,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%llu\n", c, blk,
                  blk / (bx_n * Hkv), blk / bx_n % Hkv, blk % bx_n, at(c, blk, kTlSm), rel(at(c, blk, kTlStart)),
                  rel(ft), rel(lmin), rel(lmax), rel(at(c, blk, kTlPartials)), rel(at(c, blk, kTlTicket)),
                  rel(end_of(c, blk)), at(c, blk, kTlMergedFlag));
        }
      }
      fclose(out);
    }
  }
  const double med_span = tl_med(span);
  printf("streaming: %.3f TB/s over the median span; loop ends p10..max spread shows the tail\n",
         kv_bytes / (med_span * 1e-9) / 1e12);
  return 0;
}
