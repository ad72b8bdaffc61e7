/* The backward against the oracle's backward (same tolerance rule as the forward,
 * on dq, dk, dv), the deterministic flag, and finite differences of the library's
 * own fp32 forward. */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <criterion/parameterized.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define NM24 POLYATTN_SPARSITY_NM_2_4
#define BLOCK POLYATTN_SPARSITY_BLOCK

static const th_case cases[] = {
    /* ---- head dims, lengths */
    {.name = "bw_d64_s64_b2h2", .dtypes = TH_ALL, .batch = 2, .heads_q = 2, .seq_q = 64, .seq_k = 64, .head_dim = 64},
    {.name = "bw_d32_s1", .dtypes = TH_F32 | TH_F16, .seq_q = 1, .seq_k = 1, .head_dim = 32},
    {.name = "bw_d128_sq17_sk128", .dtypes = TH_ALL, .seq_q = 17, .seq_k = 128, .head_dim = 128},
    {.name = "bw_d256_s33", .dtypes = TH_F32 | TH_BF16, .seq_q = 33, .seq_k = 33, .head_dim = 256},
    {.name = "bw_d96_sq113_sk3", .dtypes = TH_F16, .seq_q = 113, .seq_k = 3, .head_dim = 96},
    {.name = "bw_d40_dv72", .dtypes = TH_ALL, .heads_q = 2, .seq_q = 64, .seq_k = 113, .head_dim = 40, .head_dim_v = 72},
    {.name = "bw_s1000_causal", .dtypes = TH_BF16, .seq_q = 1000, .seq_k = 1000, .head_dim = 64, .causal = 1},
    {.name = "bw_s2048_causal", .dtypes = TH_F16, .seq_q = 2048, .seq_k = 2048, .head_dim = 64, .causal = 1},
    {.name = "bw_s255_d128", .dtypes = TH_F16, .heads_q = 2, .seq_q = 255, .seq_k = 256, .head_dim = 128},

    /* ---- GQA / MQA: dk, dv summed over the group */
    {.name = "bw_gqa_8_2", .dtypes = TH_ALL, .batch = 2, .heads_q = 8, .heads_kv = 2, .seq_q = 64, .seq_k = 113, .head_dim = 64},
    {.name = "bw_mqa_4_1_causal", .dtypes = TH_F16 | TH_BF16, .heads_q = 4, .heads_kv = 1, .seq_q = 128, .seq_k = 128, .head_dim = 32, .causal = 1},

    /* ---- masks */
    {.name = "bw_causal_sq<sk", .dtypes = TH_ALL, .seq_q = 17, .seq_k = 255, .head_dim = 64, .causal = 1},
    {.name = "bw_causal_sq>sk_emptyrows", .dtypes = TH_F32 | TH_F16, .heads_q = 2, .seq_q = 113, .seq_k = 64, .head_dim = 64, .causal = 1},
    {.name = "bw_window_16_4", .dtypes = TH_F16 | TH_BF16, .heads_q = 2, .seq_q = 128, .seq_k = 128, .head_dim = 64, .window = 1, .window_left = 16, .window_right = 4},
    {.name = "bw_window_causal_left8", .dtypes = TH_F32, .seq_q = 64, .seq_k = 113, .head_dim = 32, .causal = 1, .window = 1, .window_left = 8, .window_right = -1},
    {.name = "bw_softcap", .dtypes = TH_ALL, .heads_q = 2, .seq_q = 64, .seq_k = 128, .head_dim = 64, .scale = 0.5f, .softcap = 5.0f},
    {.name = "bw_alibi_heads", .dtypes = TH_F16 | TH_F32, .heads_q = 4, .seq_q = 113, .seq_k = 113, .head_dim = 64, .alibi = TH_ALIBI_HEADS},
    {.name = "bw_alibi_bh_softcap_causal_gqa", .dtypes = TH_BF16, .batch = 2, .heads_q = 4, .heads_kv = 2, .seq_q = 64, .seq_k = 64, .head_dim = 32, .causal = 1, .scale = 0.5f, .softcap = 4.0f, .alibi = TH_ALIBI_BATCH_HEADS},
    {.name = "bw_block64_diag", .dtypes = TH_F16 | TH_F32, .heads_q = 2, .seq_q = 255, .seq_k = 255, .head_dim = 64, .sparsity = BLOCK, .mask_keep_diag = 1},
    {.name = "bw_block32x16_bh_emptyrows", .dtypes = TH_BF16, .batch = 2, .heads_q = 2, .heads_kv = 1, .seq_q = 113, .seq_k = 128, .head_dim = 64, .sparsity = BLOCK, .block_q = 32, .block_k = 16, .mask_per_batch = 1, .mask_per_head = 1, .mask_empty_rows = 1},
    {.name = "bw_nm24", .dtypes = TH_ALL, .seq_q = 64, .seq_k = 64, .head_dim = 64, .sparsity = NM24},
    {.name = "bw_nm24_sk17_causal_gqa", .dtypes = TH_F16, .heads_q = 2, .heads_kv = 1, .seq_q = 17, .seq_k = 17, .head_dim = 32, .causal = 1, .sparsity = NM24},

    /* ---- varlen, seqused_k, empty keys */
    {.name = "bw_varlen_empty", .dtypes = TH_ALL, .batch = 4, .heads_q = 2, .head_dim = 64, .varlen = 1, .seqlens_q = {17, 0, 64, 5}, .seqlens_k = {33, 0, 64, 0}},
    {.name = "bw_varlen_causal_gqa_window", .dtypes = TH_F16, .batch = 3, .heads_q = 4, .heads_kv = 2, .head_dim = 64, .causal = 1, .window = 1, .window_left = 20, .window_right = -1, .varlen = 1, .seqlens_q = {113, 1, 64}, .seqlens_k = {128, 3, 64}},
    {.name = "bw_varlen_block", .dtypes = TH_BF16, .batch = 2, .heads_q = 2, .head_dim = 32, .sparsity = BLOCK, .block_q = 32, .block_k = 32, .mask_per_head = 1, .varlen = 1, .seqlens_q = {64, 100}, .seqlens_k = {70, 33}},
    {.name = "bw_seqused_k", .dtypes = TH_F16 | TH_F32, .batch = 3, .heads_q = 2, .seq_q = 17, .seq_k = 128, .head_dim = 64, .seqused = 1, .seqused_k = {128, 40, 0}},
    {.name = "bw_seqlen_k_0", .dtypes = TH_F32, .batch = 2, .seq_q = 17, .seq_k = 0, .head_dim = 32},

    /* ---- layouts */
    {.name = "bw_strided_gqa", .dtypes = TH_F16 | TH_F32, .batch = 2, .heads_q = 4, .heads_kv = 2, .seq_q = 64, .seq_k = 113, .head_dim = 64, .layout = TH_STRIDED},
    {.name = "bw_strided_odd", .dtypes = TH_BF16, .heads_q = 2, .seq_q = 33, .seq_k = 17, .head_dim = 40, .layout = TH_STRIDED_ODD},
    {.name = "bw_packed_qkv_causal", .dtypes = TH_ALL, .batch = 2, .heads_q = 2, .seq_q = 64, .seq_k = 64, .head_dim = 64, .causal = 1, .layout = TH_PACKED_QKV},
    {.name = "bw_bhsd_varlen", .dtypes = TH_F16, .batch = 2, .heads_q = 2, .head_dim = 64, .varlen = 1, .seqlens_q = {17, 64}, .seqlens_k = {64, 64}, .layout = TH_BHSD},
    {.name = "bw_null_workspace", .dtypes = TH_BF16, .heads_q = 2, .heads_kv = 1, .seq_q = 64, .seq_k = 128, .head_dim = 64, .causal = 1, .no_workspace = 1},
    {.name = "bw_d96_gqa_window", .dtypes = TH_ALL, .batch = 2, .heads_q = 6, .heads_kv = 2, .seq_q = 113, .seq_k = 64, .head_dim = 96, .window = 1, .window_left = 30, .window_right = 30},
    {.name = "bw_d256_f16", .dtypes = TH_F16, .seq_q = 64, .seq_k = 64, .head_dim = 256, .causal = 1},
    /* ---- the Ampere tensor-core backward (f16/bf16, head dims <= 128): several key
     * blocks (64 keys) and query tiles (32/64 rows) per case, partial tiles at both ends */
    {.name = "bw_mma_d128_s300_causal_gqa", .dtypes = TH_F16 | TH_BF16, .batch = 2, .heads_q = 4, .heads_kv = 2, .seq_q = 300, .seq_k = 300, .head_dim = 128, .causal = 1},
    {.name = "bw_mma_d128_sq200_sk333", .dtypes = TH_BF16, .heads_q = 2, .seq_q = 200, .seq_k = 333, .head_dim = 128},
    {.name = "bw_mma_d128_softcap_alibi_window", .dtypes = TH_F16 | TH_BF16, .heads_q = 4, .heads_kv = 1, .seq_q = 257, .seq_k = 190, .head_dim = 128, .scale = 0.3f, .softcap = 8.0f, .alibi = TH_ALIBI_HEADS, .window = 1, .window_left = 70, .window_right = 20},
    {.name = "bw_mma_d64_s513_window_causal", .dtypes = TH_BF16, .batch = 2, .heads_q = 2, .seq_q = 513, .seq_k = 513, .head_dim = 64, .causal = 1, .window = 1, .window_left = 100, .window_right = -1},
    {.name = "bw_mma_d64_block48x80", .dtypes = TH_F16, .heads_q = 2, .seq_q = 300, .seq_k = 400, .head_dim = 64, .sparsity = BLOCK, .block_q = 48, .block_k = 80, .mask_per_head = 1},
    {.name = "bw_mma_d128_varlen_seqused", .dtypes = TH_BF16, .batch = 3, .heads_q = 4, .heads_kv = 2, .head_dim = 128, .causal = 1, .varlen = 1, .seqlens_q = {130, 0, 257}, .seqlens_k = {200, 70, 257}},
    {.name = "bw_mma_d128_seqused_k", .dtypes = TH_F16, .batch = 2, .heads_q = 2, .seq_q = 100, .seq_k = 300, .head_dim = 128, .seqused = 1, .seqused_k = {300, 77}},
    {.name = "bw_deterministic_flag", .dtypes = TH_F16, .batch = 2, .heads_q = 4, .heads_kv = 1, .seq_q = 128, .seq_k = 255, .head_dim = 64, .deterministic = 1},
};

ParameterizedTestParameters(backward, sweep) {
  th_param *p;
  size_t n = th_make_params(cases, sizeof cases / sizeof cases[0], &p);
  return cr_make_param_array(th_param, p, n, NULL);
}

ParameterizedTest(th_param *p, backward, sweep, .timeout = 300) { th_backward_test(cases, p); }

/* ------------------------------------------------------------ determinism */

static const th_case det_cases[] = {
    /* many query blocks and a GQA group writing the same dk/dv rows */
    {.name = "bw_det_gqa", .dtypes = TH_BF16 | TH_F32, .batch = 2, .heads_q = 8, .heads_kv = 1, .seq_q = 384, .seq_k = 384, .head_dim = 64, .causal = 1, .deterministic = 1},
    {.name = "bw_det_d128_bf16_window", .dtypes = TH_BF16, .batch = 2, .heads_q = 4, .heads_kv = 2, .seq_q = 300, .seq_k = 300, .head_dim = 128, .softcap = 10.0f, .window = 1, .window_left = 90, .window_right = 30, .deterministic = 1},
    {.name = "bw_det_varlen", .dtypes = TH_F16, .batch = 3, .heads_q = 4, .heads_kv = 2, .head_dim = 128, .varlen = 1, .seqlens_q = {255, 1, 300}, .seqlens_k = {255, 400, 300}, .deterministic = 1},
};

ParameterizedTestParameters(backward, deterministic) {
  th_param *p;
  size_t n = th_make_params(det_cases, sizeof det_cases / sizeof det_cases[0], &p);
  return cr_make_param_array(th_param, p, n, NULL);
}

/* deterministic = 1: dq, dk, dv bit-identical over repeats, and right. */
ParameterizedTest(th_param *p, backward, deterministic, .timeout = 300) {
  if (p->case_index < 0) (void)th_context_or_skip(p->backend);
  th_case c = th_case_resolve(&det_cases[p->case_index], p->dtype);
  char label[200];
  th_case_label(&c, p->backend, label, sizeof label);
  polyattn_context *ctx = th_context_or_skip(p->backend);
  th_run *r = th_run_create(ctx, &c, 1);
  polyattn_status st = th_run_forward(r);
  if (st == POLYATTN_ERR_UNSUPPORTED) cr_skip_test("SKIPPED %s: %s", label, th_run_message(r));
  cr_assert_eq(st, POLYATTN_OK, "%s: %s", label, th_run_message(r));
  st = th_run_backward(r);
  if (st == POLYATTN_ERR_UNSUPPORTED) cr_skip_test("SKIPPED %s: %s", label, th_run_message(r));
  cr_assert_eq(st, POLYATTN_OK, "%s: %s", label, th_run_message(r));
  static const char *names[] = {"", "", "dq", "dk", "dv"};
  void *first[5] = {0};
  size_t len[5] = {0};
  for (int w = 2; w < 5; ++w) {
    const void *b = th_run_bytes(r, w, &len[w]);
    first[w] = malloc(len[w]);
    memcpy(first[w], b, len[w]);
  }
  /* POLYATTN_TEST_REPEAT=N: N runs instead of 8 (bench/gpu/backward.sh uses 20). */
  const int runs = th_repeats(8);
  for (int it = 1; it < runs; ++it) {
    st = th_run_backward(r);
    cr_assert_eq(st, POLYATTN_OK, "%s run %d: %s", label, it, th_run_message(r));
    for (int w = 2; w < 5; ++w) {
      size_t n;
      cr_assert(memcmp(first[w], th_run_bytes(r, w, &n), len[w]) == 0,
                "%s: %s differs between run 0 and run %d with deterministic = 1", label,
                names[w], it);
    }
  }
  char summary[2048];
  int ok = th_check_backward(r, summary, sizeof summary);
  cr_log_info("%s (%d identical runs)", summary, runs);
  cr_assert(ok, "%s", summary);
  for (int w = 2; w < 5; ++w) free(first[w]);
  th_run_destroy(r);
  polyattn_context_destroy(ctx);
}

/* ------------------------------------------------------- finite differences */

/* Tiny fp32 problems: the gradient of L = sum(out * dout) with respect to a few
 * entries of q, k and v by central differences of the library's own forward,
 * against the library's backward. eps = 1e-2: in fp32, L (a few dozen terms of
 * size ~1) carries ~1e-6 of rounding, which eps turns into ~1e-4 of gradient
 * error, while the truncation error (eps^2 times third derivatives of order 1)
 * stays near 1e-4 too. */
static const th_case fd_cases[] = {
    {.name = "fd_plain", .dtypes = TH_F32, .heads_q = 2, .heads_kv = 1, .seq_q = 5, .seq_k = 7, .head_dim = 8},
    {.name = "fd_causal", .dtypes = TH_F32, .batch = 2, .seq_q = 6, .seq_k = 6, .head_dim = 16, .causal = 1},
    {.name = "fd_softcap_alibi", .dtypes = TH_F32, .heads_q = 2, .seq_q = 4, .seq_k = 9, .head_dim = 8, .scale = 0.7f, .softcap = 2.0f, .alibi = TH_ALIBI_HEADS},
    {.name = "fd_window_dv", .dtypes = TH_F32, .seq_q = 7, .seq_k = 7, .head_dim = 8, .head_dim_v = 12, .window = 1, .window_left = 2, .window_right = 1},
    {.name = "fd_varlen", .dtypes = TH_F32, .batch = 2, .head_dim = 8, .varlen = 1, .seqlens_q = {3, 5}, .seqlens_k = {4, 6}},
};

ParameterizedTestParameters(backward, finite_differences) {
  th_param *p;
  size_t n = th_make_params(fd_cases, sizeof fd_cases / sizeof fd_cases[0], &p);
  return cr_make_param_array(th_param, p, n, NULL);
}

ParameterizedTest(th_param *p, backward, finite_differences, .timeout = 120) {
  if (p->case_index < 0) (void)th_context_or_skip(p->backend);
  th_case c = th_case_resolve(&fd_cases[p->case_index], p->dtype);
  char label[200];
  th_case_label(&c, p->backend, label, sizeof label);
  polyattn_context *ctx = th_context_or_skip(p->backend);
  th_run *r = th_run_create(ctx, &c, 1);
  polyattn_status st = th_run_forward(r);
  if (st == POLYATTN_ERR_UNSUPPORTED) cr_skip_test("SKIPPED %s: %s", label, th_run_message(r));
  cr_assert_eq(st, POLYATTN_OK, "%s: %s", label, th_run_message(r));
  st = th_run_backward(r);
  if (st == POLYATTN_ERR_UNSUPPORTED) cr_skip_test("SKIPPED %s: %s", label, th_run_message(r));
  cr_assert_eq(st, POLYATTN_OK, "%s: %s", label, th_run_message(r));

  const double eps = 1e-2;
  static const char *tn[] = {"q", "k", "v"};
  double worst = 0;
  int checked = 0;
  uint64_t s = 12345;
  for (int tensor = 0; tensor < 3; ++tensor) {
    int32_t heads = tensor == 0 ? c.heads_q : c.heads_kv;
    int32_t dim = tensor == 2 ? c.head_dim_v : c.head_dim;
    for (int n = 0; n < 6; ++n) {
      s = s * 6364136223846793005ull + 1442695040888963407ull;
      int32_t b = (int32_t)((s >> 33) % (uint64_t)c.batch);
      int32_t len = c.varlen ? (tensor == 0 ? c.seqlens_q[b] : c.seqlens_k[b])
                             : (tensor == 0 ? c.seq_q : c.seq_k);
      if (len == 0) continue;
      int64_t tok = (int64_t)((s >> 17) % (uint64_t)len);
      int32_t h = (int32_t)((s >> 45) % (uint64_t)heads);
      int32_t d = (int32_t)((s >> 7) % (uint64_t)dim);
      double grad = th_grad_get(r, tensor, b, tok, h, d);
      double x = th_input_get(r, tensor, b, tok, h, d);
      th_input_set(r, tensor, b, tok, h, d, x + eps);
      double xp = th_input_get(r, tensor, b, tok, h, d);
      cr_assert_eq(th_run_forward(r), POLYATTN_OK, "%s", th_run_message(r));
      double lp = th_loss(r);
      th_input_set(r, tensor, b, tok, h, d, x - eps);
      double xm = th_input_get(r, tensor, b, tok, h, d);
      cr_assert_eq(th_run_forward(r), POLYATTN_OK, "%s", th_run_message(r));
      double lm = th_loss(r);
      th_input_set(r, tensor, b, tok, h, d, x);
      double fd = (lp - lm) / (xp - xm);
      double err = fabs(fd - grad);
      double tol = 1e-2 * fmax(fabs(fd), fabs(grad)) + 2e-4;
      cr_assert(err <= tol,
                "%s: d%s[b=%d, t=%lld, h=%d, d=%d]: backward %.6g, finite difference %.6g "
                "(|err| %.3g > %.3g)",
                label, tn[tensor], b, (long long)tok, h, d, grad, fd, err, tol);
      if (err / tol > worst) worst = err / tol;
      ++checked;
    }
  }
  cr_log_info("%s: %d gradient entries within tolerance (worst at %.0f%% of it)", label, checked,
              100 * worst);
  th_run_destroy(r);
  polyattn_context_destroy(ctx);
}

TH_DEFINE_MAIN
