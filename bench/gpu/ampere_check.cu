/* Standalone check of the Ampere forward kernel (backends/cuda/fwd_ampere.cu) against
 * a float64 CPU reference, for use on a GPU machine before the CUDA backend module
 * and the test sweep can run it. It calls pa_cuda_ampere_supports/forward directly
 * with hand-built pa_problem descriptors (device pointers), so it needs no library.
 *
 * Build and run from the repository root (one GPU, sm_80 or newer):
 *   nvcc -std=c++17 -O2 -gencode arch=compute_90,code=sm_90 -gencode arch=compute_80,code=sm_80 \
 *     -I common -I api/include -I backends -I backends/cuda \
 *     bench/gpu/ampere_check.cu backends/cuda/fwd_ampere.cu -o /tmp/ampere_check
 *   /tmp/ampere_check            # correctness cases; exit status 1 on any failure
 *   /tmp/ampere_check --bench    # + bf16/fp16 hd64/hd128 S=8192 non-causal/causal TFLOP/s
 *
 * Each case: fresh random inputs in [-1, 1], outputs poisoned with NaN (padding
 * included), the kernel, then: every O element of the view finite and within
 * tolerance of the reference, padding untouched, LSE within 1e-3 (or both -inf).
 * Tolerance: O values are averages of V in [-1, 1]; the kernel rounds P to the
 * dtype before P.V, so the error scales with the dtype's epsilon: 4 * eps
 * (fp16 2^-10, bf16 2^-7), 3x with softcap. */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <vector>

#include "convert.h"
#include "kernels.h"
#include "mask.h"

#include "cuda_check.h"

struct cfg {
  const char *name;
  polyattn_dtype dtype;
  int B, Hq, Hkv, Sq, Sk, D, Dv;
  int causal, wl, wr; /* wl/wr: -1 unbounded (windows off when both -1) */
  float scale, softcap;
  int alibi;          /* 1: per-head slopes */
  int bq, bk;         /* block mask block sizes; 0: no block mask */
  double density;
  int varlen;         /* 1: packed with cu_seqlens (one empty sequence) */
  int seqused;        /* 1: seqused_k below Sk */
  int pad;            /* extra elements per token row (strided layout) and per head */
};

static const cfg cases[] = {
    {"d64_s128", POLYATTN_DTYPE_BF16, 1, 2, 2, 128, 128, 64, 64, 0, -1, -1, 0, 0},
    {"d64_s128_f16", POLYATTN_DTYPE_F16, 1, 2, 2, 128, 128, 64, 64, 0, -1, -1, 0, 0},
    {"d32_s17", POLYATTN_DTYPE_F16, 2, 2, 2, 17, 17, 32, 32, 0, -1, -1, 0, 0},
    {"d96_s113_causal", POLYATTN_DTYPE_BF16, 1, 2, 2, 113, 113, 96, 96, 1, -1, -1, 0, 0},
    {"d128_s1000_causal", POLYATTN_DTYPE_BF16, 1, 2, 2, 1000, 1000, 128, 128, 1, -1, -1, 0, 0},
    {"d128_s2048", POLYATTN_DTYPE_F16, 1, 1, 1, 2048, 2048, 128, 128, 0, -1, -1, 0, 0},
    {"d192_s255", POLYATTN_DTYPE_BF16, 1, 2, 1, 255, 255, 192, 192, 0, -1, -1, 0, 0},
    {"d256_s255_causal", POLYATTN_DTYPE_F16, 1, 1, 1, 255, 255, 256, 256, 1, -1, -1, 0, 0},
    {"d40_sq3_sk256", POLYATTN_DTYPE_BF16, 1, 2, 2, 3, 256, 40, 40, 0, -1, -1, 0, 0},
    {"d72_sq256_sk3", POLYATTN_DTYPE_F16, 1, 2, 2, 256, 3, 72, 72, 0, -1, -1, 0, 0},
    {"d36_padded_rows", POLYATTN_DTYPE_BF16, 2, 2, 1, 70, 90, 36, 36, 0, -1, -1, 0, 0, 0, 0, 0, 0.0, 0, 0, 4},
    {"dv32_d64", POLYATTN_DTYPE_F16, 1, 2, 2, 64, 113, 64, 32, 0, -1, -1, 0, 0},
    {"dv128_d32", POLYATTN_DTYPE_F16, 1, 1, 1, 17, 128, 32, 128, 0, -1, -1, 0, 0},
    {"gqa_8_2", POLYATTN_DTYPE_BF16, 2, 8, 2, 128, 255, 64, 64, 0, -1, -1, 0, 0},
    {"mqa_decode", POLYATTN_DTYPE_BF16, 2, 8, 1, 1, 2048, 128, 128, 0, -1, -1, 0, 0},
    {"causal_sq113_sk64_empty", POLYATTN_DTYPE_F16, 1, 1, 1, 113, 64, 64, 64, 1, -1, -1, 0, 0},
    {"causal_sq17_sk256", POLYATTN_DTYPE_BF16, 1, 1, 1, 17, 256, 64, 64, 1, -1, -1, 0, 0},
    {"window_300_50", POLYATTN_DTYPE_BF16, 1, 2, 1, 255, 2048, 96, 96, 0, 300, 50, 0, 0},
    {"window_0_0_sq>sk", POLYATTN_DTYPE_F16, 1, 1, 1, 64, 17, 32, 32, 0, 0, 0, 0, 0},
    {"window_causal_left20", POLYATTN_DTYPE_BF16, 1, 1, 1, 256, 256, 64, 64, 1, 20, -1, 0, 0},
    {"softcap5", POLYATTN_DTYPE_BF16, 1, 2, 2, 128, 128, 64, 64, 0, -1, -1, 0.5f, 5.0f},
    {"neg_scale", POLYATTN_DTYPE_F16, 1, 1, 1, 64, 64, 64, 64, 0, -1, -1, -0.2f, 0},
    {"alibi_causal", POLYATTN_DTYPE_F16, 2, 4, 4, 113, 113, 32, 32, 1, -1, -1, 0, 0, 1},
    {"alibi_softcap_window_gqa", POLYATTN_DTYPE_BF16, 1, 4, 1, 64, 255, 64, 64, 0, 40, 10, 0.5f, 4.0f, 1},
    {"block64_diag", POLYATTN_DTYPE_BF16, 1, 2, 2, 256, 256, 64, 64, 0, -1, -1, 0, 0, 0, 64, 64, 0.4},
    {"block32x128", POLYATTN_DTYPE_BF16, 2, 2, 2, 255, 1000, 64, 64, 0, -1, -1, 0, 0, 0, 32, 128, 0.3},
    {"block16", POLYATTN_DTYPE_F16, 1, 3, 3, 113, 64, 32, 32, 0, -1, -1, 0, 0, 0, 16, 16, 0.3},
    {"block48x80_causal_alibi", POLYATTN_DTYPE_F16, 1, 4, 2, 128, 255, 64, 64, 1, -1, -1, 0, 0, 1, 48, 80, 0.5},
    {"block_sparse_d128", POLYATTN_DTYPE_BF16, 1, 1, 1, 1000, 1000, 128, 128, 0, -1, -1, 0, 0, 0, 128, 128, 0.1},
    {"varlen_causal", POLYATTN_DTYPE_BF16, 4, 2, 1, 300, 300, 64, 64, 1, -1, -1, 0, 0, 0, 0, 0, 0.0, 1},
    {"varlen_seqused", POLYATTN_DTYPE_F16, 3, 2, 2, 200, 257, 128, 128, 0, -1, -1, 0, 0, 0, 0, 0, 0.0, 1, 1},
    {"seqused_fixed", POLYATTN_DTYPE_BF16, 2, 2, 2, 65, 300, 64, 64, 1, -1, -1, 0, 0, 0, 0, 0, 0.0, 0, 1},
    {"sk0", POLYATTN_DTYPE_BF16, 1, 2, 2, 33, 0, 64, 64, 0, -1, -1, 0, 0},
};

static uint32_t rng = 12345u;
static float frand() { /* [-1, 1) */
  rng = rng * 1664525u + 1013904223u;
  return (float)((rng >> 8) & 0xffffff) / 8388608.0f - 1.0f;
}
static uint16_t to16(float x, polyattn_dtype dt) {
  return dt == POLYATTN_DTYPE_F16 ? pa_f32_to_f16(x) : pa_f32_to_bf16(x);
}
static double from16(uint16_t h, polyattn_dtype dt) {
  return dt == POLYATTN_DTYPE_F16 ? pa_f16_to_f32(h) : pa_bf16_to_f32(h);
}

static const struct polyattn_buffer *const PRESENT = (const struct polyattn_buffer *)16;

struct dev_tensor {
  std::vector<uint16_t> h;
  void *d = nullptr;
  size_t bytes() const { return h.size() * 2; }
};

/* One case; returns 1 on pass. */
static int run_case(const cfg &c, const pa_cuda_device &dev, int repeat_check) {
  const int D = c.D, Dv = c.Dv, pad = c.pad;
  /* Sequence lengths per batch entry. */
  std::vector<int> lq(c.B, c.Sq), lk(c.B, c.Sk), used(c.B, c.Sk);
  if (c.varlen) {
    for (int b = 0; b < c.B; ++b) {
      lq[b] = b == 1 ? 0 : c.Sq - 37 * b; /* entry 1 empty */
      lk[b] = b == 1 ? 0 : c.Sk - 29 * b;
    }
  }
  if (c.seqused)
    for (int b = 0; b < c.B; ++b) used[b] = lk[b] - (b * 17 + 5) % (lk[b] > 0 ? lk[b] : 1);
  std::vector<int> cuq(c.B + 1, 0), cuk(c.B + 1, 0);
  for (int b = 0; b < c.B; ++b) {
    cuq[b + 1] = cuq[b] + lq[b];
    cuk[b + 1] = cuk[b] + lk[b];
  }
  const int64_t tq = c.varlen ? cuq[c.B] : (int64_t)c.B * c.Sq;
  const int64_t tk = c.varlen ? cuk[c.B] : (int64_t)c.B * c.Sk;

  /* [token, head, dim]: head pitch dim rounded up to 8 elements (16-byte rows), plus
   * 8 with `pad`; token pitch heads * that, plus 8 with `pad`. */
  auto geom = [&](int H, int d, int64_t tokens, pa_view *v, int64_t seq) {
    v->buf = PRESENT;
    v->offset = 0;
    v->stride_h = (d + 7) / 8 * 8 + (pad ? 8 : 0);
    v->stride_s = (int64_t)H * v->stride_h + (pad ? 8 : 0);
    v->stride_b = c.varlen ? 0 : seq * v->stride_s;
    return (size_t)(tokens * v->stride_s + 8);
  };
  pa_problem p;
  memset(&p, 0, sizeof p);
  p.pass = PA_PASS_FORWARD;
  p.dtype = c.dtype;
  p.batch = c.B;
  p.seqlen_q = c.Sq;
  p.seqlen_k = c.Sk;
  p.total_q = tq;
  p.total_k = tk;
  p.heads_q = c.Hq;
  p.heads_kv = c.Hkv;
  p.head_dim = D;
  p.head_dim_v = Dv;
  p.varlen = c.varlen;
  p.scale = c.scale != 0.0f ? c.scale : 1.0f / sqrtf((float)D);
  p.softcap = c.softcap;
  p.causal = c.causal;
  p.window_left = c.wl;
  p.window_right = c.wr;
  if (c.causal && (p.window_right < 0 || p.window_right > 0)) p.window_right = 0;

  dev_tensor q, k, v, o;
  q.h.resize(geom(c.Hq, D, tq, &p.q, c.Sq));
  k.h.resize(geom(c.Hkv, D, tk, &p.k, c.Sk) + 8);
  v.h.resize(geom(c.Hkv, Dv, tk, &p.v, c.Sk) + 8);
  o.h.resize(geom(c.Hq, Dv, tq, &p.o, c.Sq));
  for (auto &x : q.h) x = to16(frand(), c.dtype);
  for (auto &x : k.h) x = to16(frand(), c.dtype);
  for (auto &x : v.h) x = to16(frand(), c.dtype);
  const uint16_t poison = 0x7fff; /* NaN in fp16 and bf16 */
  for (auto &x : o.h) x = poison;
  for (dev_tensor *t : {&q, &k, &v, &o}) {
    CK(cudaMalloc(&t->d, t->bytes()));
    CK(cudaMemcpy(t->d, t->h.data(), t->bytes(), cudaMemcpyHostToDevice));
  }
  p.q.ptr = q.d;
  p.k.ptr = k.d;
  p.v.ptr = v.d;
  p.o.ptr = o.d;

  /* LSE [B, Hq, Sq] or varlen [Hq, total_q] */
  std::vector<float> lse((size_t)c.Hq * tq + 1, NAN);
  float *lse_d;
  CK(cudaMalloc(&lse_d, lse.size() * 4));
  CK(cudaMemcpy(lse_d, lse.data(), lse.size() * 4, cudaMemcpyHostToDevice));
  p.lse.buf = PRESENT;
  p.lse.ptr = lse_d;
  p.lse.stride_s = 1;
  p.lse.stride_h = c.varlen ? tq : c.Sq;
  p.lse.stride_b = c.varlen ? 0 : (int64_t)c.Hq * c.Sq;

  int *cuq_d = nullptr, *cuk_d = nullptr, *used_d = nullptr;
  if (c.varlen) {
    CK(cudaMalloc(&cuq_d, cuq.size() * 4));
    CK(cudaMalloc(&cuk_d, cuk.size() * 4));
    CK(cudaMemcpy(cuq_d, cuq.data(), cuq.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(cuk_d, cuk.data(), cuk.size() * 4, cudaMemcpyHostToDevice));
    p.cu_seqlens_q = {PRESENT, 0, cuq_d, 0, 1, 0};
    p.cu_seqlens_k = {PRESENT, 0, cuk_d, 0, 1, 0};
  }
  if (c.seqused) {
    CK(cudaMalloc(&used_d, used.size() * 4));
    CK(cudaMemcpy(used_d, used.data(), used.size() * 4, cudaMemcpyHostToDevice));
    p.seqused_k = {PRESENT, 0, used_d, 0, 1, 0};
  }
  std::vector<float> slopes(c.Hq);
  float *slopes_d = nullptr;
  if (c.alibi) {
    for (int h = 0; h < c.Hq; ++h) slopes[h] = powf(2.0f, -8.0f * (h + 1) / c.Hq);
    CK(cudaMalloc(&slopes_d, c.Hq * 4));
    CK(cudaMemcpy(slopes_d, slopes.data(), c.Hq * 4, cudaMemcpyHostToDevice));
    p.alibi = {PRESENT, 0, slopes_d, 0, 0, 1};
  }
  std::vector<uint8_t> bm;
  uint8_t *bm_d = nullptr;
  p.sparsity = POLYATTN_SPARSITY_NONE;
  p.block_q = c.bq > 0 ? c.bq : 64;
  p.block_k = c.bk > 0 ? c.bk : 64;
  p.mask_qblocks = (c.Sq + p.block_q - 1) / p.block_q;
  p.mask_kblocks = (c.Sk + p.block_k - 1) / p.block_k;
  if (c.bq > 0) {
    p.sparsity = POLYATTN_SPARSITY_BLOCK;
    bm.resize((size_t)c.B * c.Hq * p.mask_qblocks * p.mask_kblocks);
    for (size_t x = 0; x < bm.size(); ++x) bm[x] = (frand() * 0.5 + 0.5) < c.density;
    /* one query block of batch 0 head 0 keeps nothing (an empty row set) */
    for (int kb = 0; kb < p.mask_kblocks; ++kb) bm[kb] = 0;
    CK(cudaMalloc(&bm_d, bm.size()));
    CK(cudaMemcpy(bm_d, bm.data(), bm.size(), cudaMemcpyHostToDevice));
    p.block_mask = {PRESENT, 0, bm_d, (int64_t)c.Hq * p.mask_qblocks * p.mask_kblocks,
                    p.mask_kblocks, (int64_t)p.mask_qblocks * p.mask_kblocks};
  }

  pa_error err;
  if (!pa_cuda_ampere_supports(&p, &dev, &err)) {
    printf("%-28s SKIP  %s\n", c.name, err.msg);
    return 1;
  }
  CK(pa_cuda_ampere_forward(&p, &dev, nullptr, 0));
  CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(o.h.data(), o.d, o.bytes(), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(lse.data(), lse_d, lse.size() * 4, cudaMemcpyDeviceToHost));

  int ok = 1;
  if (repeat_check) { /* run-to-run bit identity */
    std::vector<uint16_t> o2(o.h.size());
    for (int r = 0; r < 20 && ok; ++r) {
      CK(pa_cuda_ampere_forward(&p, &dev, nullptr, 0));
      CK(cudaMemcpy(o2.data(), o.d, o.bytes(), cudaMemcpyDeviceToHost));
      if (memcmp(o2.data(), o.h.data(), o.bytes()) != 0) {
        printf("%-28s FAIL  output differs between runs (race?)\n", c.name);
        ok = 0;
      }
    }
  }

  /* float64 reference from the dtype-rounded inputs, through common/mask.h. */
  const double eps = c.dtype == POLYATTN_DTYPE_F16 ? 1.0 / 1024 : 1.0 / 128;
  const double tol = 4 * eps * (c.softcap > 0 ? 3 : 1);
  double max_err = 0, max_lse_err = 0;
  long bad = 0, pad_bad = 0;
  std::vector<char> in_view(o.h.size(), 0);
  std::vector<double> s(c.Sk > 0 ? c.Sk + 600 : 1), acc(Dv);
  for (int b = 0; b < c.B; ++b) {
    pa_seq sq;
    sq.q_start = c.varlen ? cuq[b] : 0;
    sq.k_start = c.varlen ? cuk[b] : 0;
    sq.len_q = lq[b];
    sq.len_k = c.seqused && used[b] < lk[b] ? used[b] : lk[b];
    pa_mask m = {sq.len_q, sq.len_k, p.window_left, p.window_right};
    for (int h = 0; h < c.Hq; ++h) {
      const int hk = h / (c.Hq / c.Hkv);
      for (int i = 0; i < sq.len_q; ++i) {
        const int64_t qrow = (int64_t)b * p.q.stride_b + (sq.q_start + i) * p.q.stride_s + h * p.q.stride_h;
        double mx = -INFINITY;
        for (int j = 0; j < sq.len_k; ++j) {
          const int64_t krow = (int64_t)b * p.k.stride_b + (sq.k_start + j) * p.k.stride_s + hk * p.k.stride_h;
          int keep = pa_mask_keep(&m, i, j);
          if (keep && c.bq > 0)
            keep = bm[(size_t)b * p.block_mask.stride_b + h * p.block_mask.stride_h +
                      (i / c.bq) * p.block_mask.stride_s + j / c.bk] != 0;
          if (!keep) {
            s[j] = -INFINITY;
            continue;
          }
          double dot = 0;
          for (int d = 0; d < D; ++d) dot += from16(q.h[qrow + d], c.dtype) * from16(k.h[krow + d], c.dtype);
          s[j] = pa_score_f64(dot, p.scale, p.softcap, c.alibi ? slopes[h] : 0.0, &m, i, j);
          if (s[j] > mx) mx = s[j];
        }
        double l = 0;
        for (int d = 0; d < Dv; ++d) acc[d] = 0;
        for (int j = 0; j < sq.len_k; ++j) {
          if (s[j] == -INFINITY) continue;
          const double w = exp(s[j] - mx);
          l += w;
          const int64_t vrow = (int64_t)b * p.v.stride_b + (sq.k_start + j) * p.v.stride_s + hk * p.v.stride_h;
          for (int d = 0; d < Dv; ++d) acc[d] += w * from16(v.h[vrow + d], c.dtype);
        }
        const int64_t orow = (int64_t)b * p.o.stride_b + (sq.q_start + i) * p.o.stride_s + h * p.o.stride_h;
        for (int d = 0; d < Dv; ++d) {
          const double ref = l > 0 ? acc[d] / l : 0.0;
          const double got = from16(o.h[orow + d], c.dtype);
          in_view[orow + d] = 1;
          const double e = fabs(got - ref);
          if (!(e <= tol)) ++bad; /* NaN fails too */
          if (e > max_err || e != e) max_err = e != e ? INFINITY : (e > max_err ? e : max_err);
        }
        const double lse_ref = l > 0 ? mx + log(l) : -INFINITY;
        const float got = lse[(size_t)b * p.lse.stride_b + h * p.lse.stride_h + (sq.q_start + i)];
        double le = (lse_ref == -INFINITY && got == -INFINITY) ? 0.0 : fabs((double)got - lse_ref);
        if (le != le) le = INFINITY;
        if (le > max_lse_err) max_lse_err = le;
      }
    }
  }
  for (size_t x = 0; x < o.h.size(); ++x)
    if (!in_view[x] && o.h[x] != poison) ++pad_bad;
  const int pass = ok && bad == 0 && pad_bad == 0 && max_lse_err <= 1e-3;
  printf("%-28s %s  max|O-ref| %.3g (tol %.3g, %ld bad)  max|LSE-ref| %.3g  padding %s\n", c.name,
         pass ? "ok  " : "FAIL", max_err, tol, bad, max_lse_err, pad_bad ? "WRITTEN" : "intact");

  for (dev_tensor *t : {&q, &k, &v, &o}) cudaFree(t->d);
  cudaFree(lse_d);
  cudaFree(cuq_d);
  cudaFree(cuk_d);
  cudaFree(used_d);
  cudaFree(slopes_d);
  cudaFree(bm_d);
  return pass;
}

/* FlashAttention's benchmark shape: 16k tokens, hidden 2048. */
static void bench(const pa_cuda_device &dev, polyattn_dtype dt, int D, int S, int causal) {
  const int B = 16384 / S, H = 2048 / D;
  pa_problem p;
  memset(&p, 0, sizeof p);
  p.pass = PA_PASS_FORWARD;
  p.dtype = dt;
  p.batch = B;
  p.seqlen_q = p.seqlen_k = S;
  p.total_q = p.total_k = (int64_t)B * S;
  p.heads_q = p.heads_kv = H;
  p.head_dim = p.head_dim_v = D;
  p.scale = 1.0f / sqrtf((float)D);
  p.causal = causal;
  p.window_left = -1;
  p.window_right = causal ? 0 : -1;
  p.block_q = p.block_k = 64;
  const size_t n = (size_t)B * S * H * D;
  void *buf[4];
  pa_view *views[4] = {&p.q, &p.k, &p.v, &p.o};
  for (int x = 0; x < 4; ++x) {
    CK(cudaMalloc(&buf[x], n * 2));
    std::vector<uint16_t> h(n);
    for (auto &e : h) e = to16(frand(), dt);
    CK(cudaMemcpy(buf[x], h.data(), n * 2, cudaMemcpyHostToDevice));
    *views[x] = {PRESENT, 0, buf[x], (int64_t)S * H * D, (int64_t)H * D, D};
  }
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  for (int w = 0; w < 5; ++w) CK(pa_cuda_ampere_forward(&p, &dev, nullptr, 0));
  std::vector<float> ms(30);
  for (auto &m : ms) {
    CK(cudaEventRecord(e0));
    CK(pa_cuda_ampere_forward(&p, &dev, nullptr, 0));
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    CK(cudaEventElapsedTime(&m, e0, e1));
  }
  std::sort(ms.begin(), ms.end());
  const double flops = 4.0 * B * H * (double)S * S * D * (causal ? 0.5 : 1.0);
  printf("bench %s hd%-3d S=%-5d %-9s %.3f ms  %.1f TFLOP/s\n",
         dt == POLYATTN_DTYPE_BF16 ? "bf16" : "fp16", D, S, causal ? "causal" : "noncausal",
         ms[ms.size() / 2], flops / (ms[ms.size() / 2] * 1e-3) / 1e12);
  for (int x = 0; x < 4; ++x) cudaFree(buf[x]);
}

int main(int argc, char **argv) {
  int devno = 0;
  CK(cudaGetDevice(&devno));
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, devno));
  pa_cuda_device dev;
  dev.cc_major = prop.major;
  dev.cc_minor = prop.minor;
  dev.sm_count = prop.multiProcessorCount;
  dev.smem_optin = prop.sharedMemPerBlockOptin;
  printf("device: %s (cc %d.%d, %d SMs, %zu B smem opt-in)\n", prop.name, prop.major, prop.minor,
         prop.multiProcessorCount, prop.sharedMemPerBlockOptin);
  int passed = 0, failed = 0;
  for (size_t x = 0; x < sizeof cases / sizeof cases[0]; ++x) {
    if (run_case(cases[x], dev, x == 4)) ++passed;
    else ++failed;
  }
  printf("%d passed, %d failed\n", passed, failed);
  if (argc > 1 && !strcmp(argv[1], "--bench")) {
    for (polyattn_dtype dt : {POLYATTN_DTYPE_BF16, POLYATTN_DTYPE_F16})
      for (int D : {64, 128})
        for (int causal : {0, 1})
          for (int S : {2048, 8192}) bench(dev, dt, D, S, causal);
  }
  return failed ? 1 : 0;
}
