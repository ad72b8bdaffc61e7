/* The oracle checked against answers known in closed form, its backward against
 * finite differences of its own forward, the naive reference against the oracle,
 * and the AUTO_BLOCK estimator's fixed rules. The oracle is what every backend is
 * judged by, so it gets no benefit of the doubt either.
 *
 * Problems are built by hand from host arrays (no router involved). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "autoblock.h"
#include "convert.h"
#include "oracle.h"

/* ------------------------------------------------------------- problem helper */

static char present; /* its address marks a view as present (buf != NULL) */
#define PRESENT ((const struct polyattn_buffer *)&present)

/* A contiguous [B, S, H, D] view of a host array. */
static pa_view bshd(void *ptr, int S, int H, int D) {
  pa_view v = {PRESENT, 0, ptr, (int64_t)S * H * D, (int64_t)H * D, D};
  return v;
}

/* A dense problem over contiguous host arrays of `dtype`: no mask, default scale. */
static pa_problem make_problem(polyattn_dtype dtype, int B, int Sq, int Sk, int Hq,
                               int Hkv, int D, int Dv, void *q, void *k, void *v,
                               void *dout) {
  pa_problem p;
  memset(&p, 0, sizeof(p));
  p.pass = dout ? PA_PASS_BACKWARD : PA_PASS_FORWARD;
  p.dtype = dtype;
  p.batch = B;
  p.seqlen_q = Sq;
  p.seqlen_k = Sk;
  p.total_q = (int64_t)B * Sq;
  p.total_k = (int64_t)B * Sk;
  p.heads_q = Hq;
  p.heads_kv = Hkv;
  p.head_dim = D;
  p.head_dim_v = Dv;
  p.scale = 1.0f / sqrtf((float)D);
  p.window_left = p.window_right = -1;
  p.q = bshd(q, Sq, Hq, D);
  p.k = bshd(k, Sk, Hkv, D);
  p.v = bshd(v, Sk, Hkv, Dv);
  if (dout) p.dout = bshd(dout, Sq, Hq, Dv);
  p.sparsity = POLYATTN_SPARSITY_NONE;
  p.block_q = p.block_k = 64;
  p.mask_qblocks = (Sq + 63) / 64;
  p.mask_kblocks = (Sk + 63) / 64;
  p.block_threshold = 0.95f;
  p.auto_density_cutoff = 0.3f;
  return p;
}

static void set_blocks(pa_problem *p, int bq, int bk) {
  p->block_q = bq;
  p->block_k = bk;
  p->mask_qblocks = (p->seqlen_q + bq - 1) / bq;
  p->mask_kblocks = (p->seqlen_k + bk - 1) / bk;
}

static void set_causal(pa_problem *p) {
  p->causal = 1;
  p->window_right = 0;
}

/* Fresh data, never zeros: multiples of 2^-12 in [-1, 1] (so that the finite
 * differences below perturb them exactly). */
static uint32_t rng_state = 12345u;
static void fill_random(float *x, int64_t n) {
  for (int64_t t = 0; t < n; ++t) {
    rng_state = rng_state * 1664525u + 1013904223u;
    int32_t r = (int32_t)((rng_state >> 8) % 8191u) - 4095; /* [-4095, 4095] */
    x[t] = (float)(r == 0 ? 1 : r) / 4096.0f;
  }
}

static double dot_f(const float *a, const float *b, int n) {
  double s = 0.0;
  for (int d = 0; d < n; ++d) s += (double)a[d] * b[d];
  return s;
}

#define NEAR(a, b, tol) cr_assert(fabs((double)(a) - (double)(b)) <= (tol), \
                                  "%s = %.17g, expected %.17g", #a, (double)(a), (double)(b))

/* ------------------------------------------------------ closed-form answers */

Test(oracle, one_key_gives_its_value_row) {
  enum { D = 8, Sq = 3 };
  float q[Sq * D], k[D], v[D];
  fill_random(q, Sq * D);
  fill_random(k, D);
  fill_random(v, D);
  pa_problem p = make_problem(POLYATTN_DTYPE_F32, 1, Sq, 1, 1, 1, D, D, q, k, v, NULL);
  double out[Sq * D], lse[Sq];
  pa_oracle_forward(&p, out, lse);
  for (int i = 0; i < Sq; ++i) {
    for (int d = 0; d < D; ++d) NEAR(out[i * D + d], v[d], 1e-15);
    NEAR(lse[i], p.scale * dot_f(q + i * D, k, D), 1e-12);
  }
}

Test(oracle, equal_keys_give_the_mean_of_v) {
  enum { D = 4, Sk = 5 };
  float q[D], k[Sk * D], v[Sk * D];
  fill_random(q, D);
  fill_random(k, D);
  for (int j = 1; j < Sk; ++j) memcpy(k + j * D, k, sizeof(float) * D);
  fill_random(v, Sk * D);
  pa_problem p = make_problem(POLYATTN_DTYPE_F32, 1, 1, Sk, 1, 1, D, D, q, k, v, NULL);
  double out[D], lse[1];
  pa_oracle_forward(&p, out, lse);
  for (int d = 0; d < D; ++d) {
    double mean = 0.0;
    for (int j = 0; j < Sk; ++j) mean += v[j * D + d] / (double)Sk;
    NEAR(out[d], mean, 1e-14);
  }
  NEAR(lse[0], p.scale * dot_f(q, k, D) + log((double)Sk), 1e-12);
}

Test(oracle, causal_row_zero_sees_only_key_zero) {
  enum { D = 4, S = 4 };
  float q[S * D], k[S * D], v[S * D];
  fill_random(q, S * D);
  fill_random(k, S * D);
  fill_random(v, S * D);
  pa_problem p = make_problem(POLYATTN_DTYPE_F32, 1, S, S, 1, 1, D, D, q, k, v, NULL);
  set_causal(&p);
  double out[S * D], lse[S];
  pa_oracle_forward(&p, out, lse);
  for (int d = 0; d < D; ++d) NEAR(out[d], v[d], 1e-15);
  /* row 1: a two-key softmax */
  double s0 = p.scale * dot_f(q + D, k, D), s1 = p.scale * dot_f(q + D, k + D, D);
  double p0 = 1.0 / (1.0 + exp(s1 - s0));
  for (int d = 0; d < D; ++d) NEAR(out[D + d], p0 * v[d] + (1 - p0) * v[D + d], 1e-14);
  NEAR(lse[1], log(exp(s0) + exp(s1)), 1e-12);
}

Test(oracle, fully_masked_rows_give_zero_and_minus_inf) {
  /* Sq > Sk with causal, bottom-right aligned: rows 0 and 1 sit before key 0. */
  enum { D = 4, Sq = 3, Sk = 1 };
  float q[Sq * D], k[Sk * D], v[Sk * D];
  fill_random(q, Sq * D);
  fill_random(k, Sk * D);
  fill_random(v, Sk * D);
  pa_problem p = make_problem(POLYATTN_DTYPE_F32, 1, Sq, Sk, 1, 1, D, D, q, k, v, NULL);
  set_causal(&p);
  double out[Sq * D], lse[Sq];
  pa_oracle_forward(&p, out, lse);
  for (int i = 0; i < 2; ++i) {
    cr_assert(isinf(lse[i]) && lse[i] < 0, "row %d lse = %g", i, lse[i]);
    for (int d = 0; d < D; ++d) cr_assert_eq(out[i * D + d], 0.0);
  }
  for (int d = 0; d < D; ++d) NEAR(out[2 * D + d], v[d], 1e-15);

  /* seqused_k = 0 empties every row, also in the backward (no NaN). */
  int32_t used = 0;
  p.seqused_k = (pa_view){PRESENT, 0, &used, 0, 1, 0};
  float dout[Sq * D];
  fill_random(dout, Sq * D);
  p.dout = bshd(dout, Sq, 1, D);
  pa_oracle_forward(&p, out, lse);
  double dq[Sq * D], dk[Sk * D], dv[Sk * D];
  pa_oracle_backward(&p, dq, dk, dv);
  for (int t = 0; t < Sq * D; ++t) cr_assert(out[t] == 0.0 && dq[t] == 0.0);
  for (int t = 0; t < Sk * D; ++t) cr_assert(dk[t] == 0.0 && dv[t] == 0.0);
  for (int i = 0; i < Sq; ++i) cr_assert(isinf(lse[i]) && lse[i] < 0);
}

/* One query row (D = 1, q = 1, scale 1, so s_j = k_j) against 8 keys whose V is
 * the identity: out is the probability row itself. */
static void probs_2_4(const float k[8], int window_left, double probs[8]) {
  float q[1] = {1.0f}, v[64] = {0};
  for (int j = 0; j < 8; ++j) v[j * 8 + j] = 1.0f;
  pa_problem p = make_problem(POLYATTN_DTYPE_F32, 1, 1, 8, 1, 1, 1, 8, q, (void *)k, v,
                              NULL);
  p.scale = 1.0f;
  p.sparsity = POLYATTN_SPARSITY_NM_2_4;
  p.window_left = window_left;
  double lse[1];
  pa_oracle_forward(&p, probs, lse);
}

static void expect_probs(const double got[8], const float k[8], const int keep[8]) {
  double z = 0.0;
  for (int j = 0; j < 8; ++j) z += keep[j] ? exp(k[j]) : 0.0;
  for (int j = 0; j < 8; ++j)
    cr_assert(fabs(got[j] - (keep[j] ? exp(k[j]) / z : 0.0)) < 1e-14,
              "key %d: p = %g, expected kept = %d", j, got[j], keep[j]);
}

Test(oracle, two_of_four_keeps_the_two_largest_ties_to_lower_j) {
  const float k[8] = {0.75f, 0.25f, 0.75f, 0.75f, /* tie of three: 0 and 2 */
                      0.5f, -1.0f, 0.5f, 0.875f}; /* 7, then 4 before 6 */
  const int keep[8] = {1, 0, 1, 0, 1, 0, 0, 1};
  double probs[8];
  probs_2_4(k, -1, probs);
  expect_probs(probs, k, keep);

  /* The row's diagonal is key 7; left window 5 keeps keys 2..7 only, so group 0
   * has two candidates (both kept), group 1 still chooses two of four. */
  const int keep_w[8] = {0, 0, 1, 1, 1, 0, 0, 1};
  probs_2_4(k, 5, probs);
  expect_probs(probs, k, keep_w);
}

Test(oracle, varlen_matches_each_sequence_alone) {
  /* Three sequences (q lengths 2, 0, 3; k lengths 3, 0, 4), packed. */
  enum { H = 2, D = 4, TQ = 5, TK = 7 };
  int32_t cq[4] = {0, 2, 2, 5}, ck[4] = {0, 3, 3, 7};
  float q[TQ * H * D], k[TK * H * D], v[TK * H * D];
  fill_random(q, TQ * H * D);
  fill_random(k, TK * H * D);
  fill_random(v, TK * H * D);
  pa_problem p = make_problem(POLYATTN_DTYPE_F32, 3, 3, 4, H, H, D, D, q, k, v, NULL);
  p.varlen = 1;
  p.total_q = TQ;
  p.total_k = TK;
  p.q.stride_b = p.k.stride_b = p.v.stride_b = 0;
  p.cu_seqlens_q = (pa_view){PRESENT, 0, cq, 0, 1, 0};
  p.cu_seqlens_k = (pa_view){PRESENT, 0, ck, 0, 1, 0};
  set_causal(&p);
  double out[TQ * H * D], lse[H * TQ];
  pa_oracle_forward(&p, out, lse);
  for (int s = 0; s < 3; s += 2) {
    int lq = cq[s + 1] - cq[s], lk = ck[s + 1] - ck[s];
    pa_problem one = make_problem(POLYATTN_DTYPE_F32, 1, lq, lk, H, H, D, D,
                                  q + cq[s] * H * D, k + ck[s] * H * D,
                                  v + ck[s] * H * D, NULL);
    set_causal(&one);
    double o1[3 * H * D], l1[H * 3];
    pa_oracle_forward(&one, o1, l1);
    for (int t = 0; t < lq * H * D; ++t) cr_assert_eq(out[cq[s] * H * D + t], o1[t]);
    for (int h = 0; h < H; ++h)
      for (int i = 0; i < lq; ++i) cr_assert_eq(lse[h * TQ + cq[s] + i], l1[h * lq + i]);
  }
}

/* --------------------------------------------------------------- backward */

/* sum(out * dout) of the oracle's forward. */
static double loss(const pa_problem *p, const float *dout) {
  int64_t n = p->total_q * p->heads_q * p->head_dim_v;
  double *out = malloc(sizeof(double) * (size_t)n);
  double *lse = malloc(sizeof(double) * (size_t)(p->total_q * p->heads_q));
  pa_oracle_forward(p, out, lse);
  double l = 0.0;
  for (int64_t t = 0; t < n; ++t) l += out[t] * dout[t];
  free(out);
  free(lse);
  return l;
}

/* d loss / d x[t] by central differences; steps of 2^-10 are exact on the data. */
static double fd_grad(const pa_problem *p, const float *dout, float *x, int64_t t) {
  const float h = 1.0f / 1024.0f, x0 = x[t];
  x[t] = x0 + h;
  double up = loss(p, dout);
  x[t] = x0 - h;
  double down = loss(p, dout);
  x[t] = x0;
  return (up - down) / (2.0 * h);
}

static void check_grad(const pa_problem *p, const float *dout, float *x, const double *g,
                       int64_t n, const char *name) {
  for (int64_t t = 0; t < n; ++t) {
    double fd = fd_grad(p, dout, x, t);
    cr_assert(fabs(fd - g[t]) <= 2e-6 + 1e-4 * fabs(fd), "%s[%lld]: oracle %.12g, fd %.12g",
              name, (long long)t, g[t], fd);
  }
}

Test(oracle, backward_matches_finite_differences) {
  /* Causal with Sq < Sk, softcap small enough to bend the scores, ALiBi per
   * (batch, head), GQA (4 query heads on 2 kv heads), D != Dv. */
  enum { B = 2, Sq = 3, Sk = 5, Hq = 4, Hkv = 2, D = 4, Dv = 3 };
  float q[B * Sq * Hq * D], k[B * Sk * Hkv * D], v[B * Sk * Hkv * Dv];
  float dout[B * Sq * Hq * Dv], slopes[B * Hq];
  fill_random(q, B * Sq * Hq * D);
  fill_random(k, B * Sk * Hkv * D);
  fill_random(v, B * Sk * Hkv * Dv);
  fill_random(dout, B * Sq * Hq * Dv);
  for (int t = 0; t < B * Hq; ++t) slopes[t] = 0.125f * (float)(t + 1);
  pa_problem p = make_problem(POLYATTN_DTYPE_F32, B, Sq, Sk, Hq, Hkv, D, Dv, q, k, v, dout);
  set_causal(&p);
  p.softcap = 0.75f;
  p.scale = 1.5f;
  p.alibi = (pa_view){PRESENT, 0, slopes, Hq, 0, 1};

  double dq[B * Sq * Hq * D], dk[B * Sk * Hkv * D], dv[B * Sk * Hkv * Dv];
  pa_oracle_backward(&p, dq, dk, dv);
  check_grad(&p, dout, q, dq, B * Sq * Hq * D, "dq");
  check_grad(&p, dout, k, dk, B * Sk * Hkv * D, "dk");
  check_grad(&p, dout, v, dv, B * Sk * Hkv * Dv, "dv");
}

/* ------------------------------------------------------ naive vs the oracle */

Test(naive, is_close_to_the_oracle_and_stored_in_the_dtype) {
  enum { Sq = 17, Sk = 33, H = 2, D = 16, N = Sq * H * D, NK = Sk * H * D };
  float qf[N], kf[NK], vf[NK], df[N];
  uint16_t q16[N], k16[NK], v16[NK], d16[N];
  fill_random(qf, N);
  fill_random(kf, NK);
  fill_random(vf, NK);
  fill_random(df, N);
  for (int t = 0; t < N; ++t) q16[t] = pa_f32_to_bf16(qf[t]), d16[t] = pa_f32_to_bf16(df[t]);
  for (int t = 0; t < NK; ++t) k16[t] = pa_f32_to_bf16(kf[t]), v16[t] = pa_f32_to_bf16(vf[t]);
  static double ref[N], nai[N], lse_r[H * Sq], lse_n[H * Sq];
  static double gr[3][NK], gn[3][NK];

  /* fp32: the naive reference is float32 arithmetic, so within ~1e-6. */
  pa_problem p = make_problem(POLYATTN_DTYPE_F32, 1, Sq, Sk, H, H, D, D, qf, kf, vf, df);
  set_causal(&p);
  p.softcap = 2.0f;
  pa_oracle_forward(&p, ref, lse_r);
  pa_naive_forward(&p, nai, lse_n);
  for (int t = 0; t < N; ++t) NEAR(nai[t], ref[t], 1e-6);
  for (int t = 0; t < H * Sq; ++t) NEAR(lse_n[t], lse_r[t], 1e-5);
  pa_oracle_backward(&p, gr[0], gr[1], gr[2]);
  pa_naive_backward(&p, gn[0], gn[1], gn[2]);
  for (int t = 0; t < N; ++t) NEAR(gn[0][t], gr[0][t], 1e-5);
  for (int g = 1; g < 3; ++g)
    for (int t = 0; t < NK; ++t) NEAR(gn[g][t], gr[g][t], 1e-5);

  /* bf16: farther, but every value is a bf16 and the error is bf16-sized. */
  p = make_problem(POLYATTN_DTYPE_BF16, 1, Sq, Sk, H, H, D, D, q16, k16, v16, d16);
  set_causal(&p);
  p.softcap = 2.0f;
  pa_oracle_forward(&p, ref, lse_r);
  pa_naive_forward(&p, nai, lse_n);
  double err = 0.0;
  for (int t = 0; t < N; ++t) {
    cr_assert_eq(nai[t], pa_round_to_dtype(nai[t], POLYATTN_DTYPE_BF16));
    err = fmax(err, fabs(nai[t] - ref[t]));
  }
  cr_assert(err > 0.0 && err < 3e-2, "bf16 naive error %g", err);
  for (int t = 0; t < H * Sq; ++t) NEAR(lse_n[t], lse_r[t], 3e-2);
  pa_naive_backward(&p, gn[0], gn[1], gn[2]);
  for (int t = 0; t < NK; ++t)
    cr_assert_eq(gn[1][t], pa_round_to_dtype(gn[1][t], POLYATTN_DTYPE_BF16));
}

/* ------------------------------------------------------- AUTO_BLOCK estimator */

Test(autoblock, keeps_first_and_diagonal_and_all_at_threshold_one) {
  enum { S = 8, D = 4, NB = 4 };
  float q[S * D], k[S * D], v[S * D];
  fill_random(q, S * D);
  fill_random(k, S * D);
  fill_random(v, S * D);
  pa_problem p = make_problem(POLYATTN_DTYPE_F32, 1, S, S, 1, 1, D, D, q, k, v, NULL);
  set_causal(&p);
  set_blocks(&p, 2, 2);
  p.sparsity = POLYATTN_SPARSITY_AUTO_BLOCK;
  uint8_t mask[NB * NB];
  cr_assert_geq(pa_auto_block_mask_bytes(&p), NB * NB); /* the mask, then the scratch */

  /* A threshold so small that the forced blocks alone reach it. */
  p.block_threshold = 1e-6f;
  double density = pa_auto_block_estimate(&p, mask);
  for (int qb = 0; qb < NB; ++qb)
    for (int kb = 0; kb < NB; ++kb)
      cr_assert_eq(mask[qb * NB + kb], kb == 0 || kb == qb, "block (%d, %d)", qb, kb);
  NEAR(density, 7.0 / 10.0, 1e-15); /* 7 kept of the 10 causal blocks */

  /* Threshold 1: every allowed (lower-triangular) block, nothing above. */
  p.block_threshold = 1.0f;
  density = pa_auto_block_estimate(&p, mask);
  for (int qb = 0; qb < NB; ++qb)
    for (int kb = 0; kb < NB; ++kb) cr_assert_eq(mask[qb * NB + kb], kb <= qb);
  NEAR(density, 1.0, 0.0);

  /* Sq < Sk without causal: the diagonal of rows 0..3 is keys 4..7. */
  pa_problem w = make_problem(POLYATTN_DTYPE_F32, 1, 4, S, 1, 1, D, D, q, k, v, NULL);
  set_blocks(&w, 2, 2);
  w.sparsity = POLYATTN_SPARSITY_AUTO_BLOCK;
  w.block_threshold = 1e-6f;
  pa_auto_block_estimate(&w, mask);
  const uint8_t want[2 * NB] = {1, 0, 1, 0, 1, 0, 0, 1};
  cr_assert_arr_eq(mask, want, sizeof(want));
}

/* autoblock.h's exp and tanh are estimates' functions, not libm's, but close to it. */
Test(autoblock, exp_and_tanh_are_close_to_libm) {
  cr_assert_eq(pa_ab_exp(0.0f), 1.0f);
  cr_assert_eq(pa_ab_exp(-200.0f), 0.0f);
  cr_assert_eq(pa_ab_exp(-INFINITY), 0.0f);
  for (float x = -86.0f; x <= 0.0f; x += 0.0137f) {
    const double want = exp((double)x), got = pa_ab_exp(x);
    cr_assert(fabs(got / want - 1.0) < 2e-5, "exp(%g): %.9g, libm %.9g", x, got, want);
  }
  for (float x = -9.0f; x <= 9.0f; x += 0.0071f)
    cr_assert(fabs(pa_ab_tanh(x) - tanh((double)x)) < 1e-6, "tanh(%g): %.9g", x, pa_ab_tanh(x));
}

/* The kept set, recomputed the slow and obvious way in autoblock.h's arithmetic:
 * the candidates sorted by (mass descending, kb ascending), then added one at a time
 * while the lane-order sum of the forced blocks and those so far is below the
 * target. The estimator finds it by a bitwise search instead; they must agree. */
typedef struct ab_cand {
  float mass;
  int kb;
} ab_cand;
static int ab_cand_cmp(const void *pa, const void *pb) {
  const ab_cand *a = pa, *b = pb;
  if (a->mass != b->mass) return a->mass > b->mass ? -1 : 1;
  return (a->kb > b->kb) - (a->kb < b->kb);
}
static float ab_lane_sum(const float *mass, const int *in, int n) {
  float v[PA_AB_LANES], w[PA_AB_LANES];
  for (int l = 0; l < PA_AB_LANES; ++l) {
    v[l] = 0.0f;
    for (int kb = l; kb < n; kb += PA_AB_LANES)
      if (in[kb]) v[l] = pa_ab_add(v[l], mass[kb]);
  }
  for (int o = PA_AB_LANES / 2; o; o >>= 1) {
    for (int l = 0; l < PA_AB_LANES; ++l) w[l] = pa_ab_add(v[l], v[l ^ o]);
    memcpy(v, w, sizeof v);
  }
  return v[0];
}
static void ab_pool(const float *x, int r0, int r1, int D, float *out) {
  for (int d = 0; d < D; ++d) {
    float c[PA_AB_POOL_CHAINS] = {0};
    for (int r = r0; r < r1; ++r)
      c[(r - r0) % PA_AB_POOL_CHAINS] = pa_ab_add(c[(r - r0) % PA_AB_POOL_CHAINS], x[r * D + d]);
    out[d] = pa_ab_pool_combine(c, r1 - r0);
  }
}

Test(autoblock, kept_set_is_the_shortest_prefix_by_mass) {
  enum { S = 600, D = 24, BS = 16, NB = (S + BS - 1) / BS }; /* 38 blocks: not a power of 2 */
  static float q[S * D], k[S * D], v[S * D];
  fill_random(q, S * D);
  fill_random(k, S * D);
  fill_random(v, S * D);
  pa_problem p = make_problem(POLYATTN_DTYPE_F32, 1, S, S, 1, 1, D, D, q, k, v, NULL);
  set_blocks(&p, BS, BS);
  p.scale = 6.0f; /* spread the pooled scores: a threshold then keeps some, not all */
  p.sparsity = POLYATTN_SPARSITY_AUTO_BLOCK;
  const pa_mask m = {S, S, -1, -1};
  static float kbar[NB][D];
  for (int kb = 0; kb < NB; ++kb) ab_pool(k, kb * BS, kb * BS + BS < S ? kb * BS + BS : S, D, kbar[kb]);

  const float thresholds[] = {0.5f, 0.9f, 0.99f};
  long beyond_forced = 0, dropped = 0;
  for (int t = 0; t < 3; ++t) {
    p.block_threshold = thresholds[t];
    static uint8_t mask[NB * NB];
    pa_auto_block_estimate(&p, mask);
    for (int qb = 0; qb < NB; ++qb) {
      const int i0 = qb * BS, i1 = i0 + BS < S ? i0 + BS : S;
      float qbar[D], e[NB], mass[NB], max_e = -INFINITY;
      ab_pool(q, i0, i1, D, qbar);
      for (int kb = 0; kb < NB; ++kb) {
        const int k0 = kb * BS, n = (k0 + BS < S ? k0 + BS : S) - k0;
        float dot = 0.0f;
        for (int d = 0; d < D; ++d) dot = pa_ab_fma(qbar[d], kbar[kb][d], dot);
        e[kb] = pa_ab_score(dot, p.scale, 0.0f, 0.0f, &m, i0 + (i1 - i0 - 1) / 2, k0 + (n - 1) / 2);
        if (e[kb] > max_e) max_e = e[kb];
      }
      int in[NB], all[NB], nc = 0;
      ab_cand cand[NB];
      for (int kb = 0; kb < NB; ++kb) {
        const int k0 = kb * BS, n = (k0 + BS < S ? k0 + BS : S) - k0;
        mass[kb] = pa_ab_mass(n, e[kb], max_e);
        in[kb] = kb == 0 || kb == qb; /* the first block and the diagonal */
        all[kb] = 1;
        if (!in[kb]) cand[nc++] = (ab_cand){mass[kb], kb};
      }
      const float target = pa_ab_mul(p.block_threshold, ab_lane_sum(mass, all, NB));
      qsort(cand, (size_t)nc, sizeof cand[0], ab_cand_cmp);
      for (int c = 0; c < nc && ab_lane_sum(mass, in, NB) < target; ++c) {
        in[cand[c].kb] = 1;
        beyond_forced += 1;
      }
      for (int kb = 0; kb < NB; ++kb) {
        cr_assert_eq(mask[qb * NB + kb], in[kb], "threshold %g, block (%d, %d)",
                     thresholds[t], qb, kb);
        dropped += !in[kb];
      }
    }
  }
  /* the search had work to do: it kept candidates and dropped others */
  cr_assert_gt(beyond_forced, 3 * NB);
  cr_assert_gt(dropped, 3 * NB, "dropped %ld", dropped);
}

Test(autoblock, resolve_runs_the_chosen_mask_and_reports_it) {
  enum { S = 8, D = 4, NB = 4 };
  float q[S * D], k[S * D], v[S * D];
  fill_random(q, S * D);
  fill_random(k, S * D);
  fill_random(v, S * D);
  pa_problem p = make_problem(POLYATTN_DTYPE_F32, 1, S, S, 1, 1, D, D, q, k, v, NULL);
  set_causal(&p);
  set_blocks(&p, 2, 2);
  p.sparsity = POLYATTN_SPARSITY_AUTO_BLOCK;
  p.block_threshold = 1e-6f;
  p.auto_density_cutoff = 0.8f;
  _Alignas(16) uint8_t mask[4096]; /* resolve's storage: the mask, then its scratch */
  uint8_t reported[NB * NB];
  memset(reported, 0xee, sizeof(reported));
  p.block_mask_out = (pa_view){PRESENT, 0, reported, NB * NB, NB, NB * NB};

  pa_problem r;
  cr_assert_leq(pa_auto_block_mask_bytes(&p), (int64_t)sizeof(mask));
  double density = pa_auto_block_resolve(&p, &r, mask);
  NEAR(density, 0.7, 1e-15);
  cr_assert_eq(r.sparsity, POLYATTN_SPARSITY_BLOCK);
  cr_assert_arr_eq(reported, mask, sizeof(reported));

  /* The oracle on the AUTO problem computes exactly the resolved BLOCK problem. */
  double o_auto[S * D], o_block[S * D], l_auto[S], l_block[S];
  pa_oracle_forward(&p, o_auto, l_auto);
  pa_oracle_forward(&r, o_block, l_block);
  cr_assert_arr_eq(o_auto, o_block, sizeof(o_auto));

  /* Above the cutoff it runs dense, and reports the all-ones mask it computed. */
  p.auto_density_cutoff = 0.5f;
  pa_auto_block_resolve(&p, &r, mask);
  cr_assert_eq(r.sparsity, POLYATTN_SPARSITY_NONE);
  cr_assert_null(r.block_mask.buf);
  for (int i = 0; i < NB * NB; ++i) cr_assert_eq(reported[i], 1, "block %d", i);
}

/* ------------------------------------------------------------------ fp8 e4m3 */

/* Every code decodes to its value and encodes back to itself (NaN codes to NaN). */
Test(fp8, e4m3_round_trip_every_code) {
  for (int b = 0; b < 256; ++b) {
    const float f = pa_fp8_e4m3_to_f32((uint8_t)b);
    if ((b & 0x7f) == 0x7f) {
      cr_assert(isnan(f), "code 0x%02x should be NaN", b);
      cr_assert_eq(pa_f32_to_fp8_e4m3(f) & 0x7f, 0x7f);
      continue;
    }
    cr_assert_eq(pa_f32_to_fp8_e4m3(f), (uint8_t)b, "code 0x%02x (%g) re-encodes as 0x%02x", b,
                 f, pa_f32_to_fp8_e4m3(f));
  }
  cr_assert_eq(pa_fp8_e4m3_to_f32(0x7e), 448.0f);
  cr_assert_eq(pa_fp8_e4m3_to_f32(0x01), 0.001953125f); /* 2^-9 */
  cr_assert_eq(pa_fp8_e4m3_to_f32(0x08), 0.015625f);    /* 2^-6 */
  cr_assert_eq(pa_fp8_e4m3_to_f32(0xb8), -1.0f);
}

/* Round to nearest even between neighbouring codes; saturation to +-448; no inf. */
Test(fp8, e4m3_rounding_and_saturation) {
  for (int b = 0; b < 0x7e; ++b) { /* positive finite neighbours b, b + 1 */
    const double lo = pa_fp8_e4m3_to_f32((uint8_t)b), hi = pa_fp8_e4m3_to_f32((uint8_t)(b + 1));
    const double mid = 0.5 * (lo + hi);
    const uint8_t even = (b & 1) ? (uint8_t)(b + 1) : (uint8_t)b;
    cr_assert_eq(pa_f32_to_fp8_e4m3((float)mid), even, "tie %g between 0x%02x and 0x%02x", mid,
                 b, b + 1);
    cr_assert_eq(pa_f32_to_fp8_e4m3((float)(lo + 0.25 * (hi - lo))), (uint8_t)b);
    cr_assert_eq(pa_f32_to_fp8_e4m3((float)(lo + 0.75 * (hi - lo))), (uint8_t)(b + 1));
    cr_assert_eq(pa_f32_to_fp8_e4m3((float)-mid), (uint8_t)(0x80 | even));
  }
  cr_assert_eq(pa_f32_to_fp8_e4m3(463.9f), 0x7e);
  cr_assert_eq(pa_f32_to_fp8_e4m3(464.0f), 0x7e);
  cr_assert_eq(pa_f32_to_fp8_e4m3(1e6f), 0x7e);
  cr_assert_eq(pa_f32_to_fp8_e4m3(INFINITY), 0x7e);
  cr_assert_eq(pa_f32_to_fp8_e4m3(-INFINITY), 0xfe);
  cr_assert_eq(pa_f32_to_fp8_e4m3(0.0009765625f), 0x00); /* 2^-10: tie to 0 */
  cr_assert_eq(pa_f32_to_fp8_e4m3(1e-30f), 0x00);
  cr_assert_eq(pa_f32_to_fp8_e4m3(-0.0f), 0x80);
  cr_assert_eq(pa_round_to_dtype(1.0625, POLYATTN_DTYPE_FP8_E4M3), 1.0);  /* tie to even */
  cr_assert_eq(pa_round_to_dtype(1.1875, POLYATTN_DTYPE_FP8_E4M3), 1.25); /* tie to even */
}

/* The oracle on fp8 inputs with descale factors is the oracle on the real values
 * (decoded x descale; powers of two, so the f32 copies are exact), and FP8 outputs
 * of the naive reference are bf16 values. */
Test(fp8, oracle_applies_descales) {
  enum { B = 2, S = 19, H = 2, D = 16 };
  const size_t n = (size_t)B * S * H * D;
  uint8_t *q8 = malloc(n), *k8 = malloc(n), *v8 = malloc(n);
  float *qf = malloc(n * 4), *kf = malloc(n * 4), *vf = malloc(n * 4);
  float dq[B * H] = {0.5f, 2.0f, 0.25f, 4.0f}, dk[1] = {0.125f}, dv[B * H] = {8.0f, 1.0f, 0.5f, 2.0f};
  uint32_t x = 12345;
  for (size_t i = 0; i < n; ++i) {
    x = x * 1664525u + 1013904223u;
    q8[i] = (uint8_t)((x >> 8) & 0x77); /* finite codes, both signs */
    k8[i] = (uint8_t)((x >> 16) & 0x77) | (uint8_t)((x >> 3) & 0x80);
    v8[i] = (uint8_t)((x >> 24) & 0x77) | (uint8_t)((x >> 11) & 0x80);
    const int h = (int)((i / D) % H), b = (int)(i / ((size_t)S * H * D));
    qf[i] = pa_fp8_e4m3_to_f32(q8[i]) * dq[b * H + h];
    kf[i] = pa_fp8_e4m3_to_f32(k8[i]) * dk[0];
    vf[i] = pa_fp8_e4m3_to_f32(v8[i]) * dv[b * H + h];
  }
  pa_problem p8 = make_problem(POLYATTN_DTYPE_FP8_E4M3, B, S, S, H, H, D, D, q8, k8, v8, NULL);
  pa_view vq = {PRESENT, 0, dq, H, 0, 1}, vk = {PRESENT, 0, dk, 0, 0, 0},
          vv = {PRESENT, 0, dv, H, 0, 1}; /* stride_b, stride_s, stride_h */
  p8.q_descale = vq, p8.k_descale = vk, p8.v_descale = vv;
  p8.causal = 1, p8.window_right = 0;
  pa_problem pf = make_problem(POLYATTN_DTYPE_F32, B, S, S, H, H, D, D, qf, kf, vf, NULL);
  pf.causal = 1, pf.window_right = 0;
  double *o8 = malloc(n * 8), *of = malloc(n * 8), *on = malloc(n * 8);
  double l8[B * H * S], lf[B * H * S], ln[B * H * S];
  pa_oracle_forward(&p8, o8, l8);
  pa_oracle_forward(&pf, of, lf);
  pa_naive_forward(&p8, on, ln);
  double err = 0, nerr = 0, scale = 0;
  for (size_t i = 0; i < n; ++i) {
    err = fmax(err, fabs(o8[i] - of[i]));
    nerr = fmax(nerr, fabs(on[i] - of[i]));
    scale = fmax(scale, fabs(of[i]));
    cr_assert_eq(on[i], pa_round_to_dtype(on[i], POLYATTN_DTYPE_BF16), "naive fp8 out is bf16");
  }
  for (int i = 0; i < B * H * S; ++i) cr_assert_float_eq(l8[i], lf[i], 1e-12);
  cr_assert_leq(err, 1e-12 * scale, "oracle fp8 vs f32: %g", err);
  cr_assert_gt(nerr, 0.0, "the naive reference rounds P to e4m3 and out to bf16");
  cr_assert_leq(nerr, 0.1 * scale, "naive fp8 far from the oracle: %g", nerr);
  free(q8), free(k8), free(v8), free(qf), free(kf), free(vf), free(o8), free(of), free(on);
}
