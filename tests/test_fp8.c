/* FP8 (e4m3) forward on the CUDA backend (issue 9; decisions 77, 78): q, k, v stored
 * as e4m3 with float32 descale factors, out bf16, against the float64 oracle on the
 * fp8 inputs (decoded, times their descales) by DESIGN.md's tolerance rule, with the
 * naive reference of common/oracle.c (S in float32, 2^8 P rounded to e4m3, out bf16).
 * The error against the oracle on the unrounded (bf16) inputs is logged as
 * information: it is what quantising the inputs costs, not a property of the kernel.
 *
 * Suite fp8 needs a CUDA device: without one every test is skipped, loudly; on a
 * device that is not compute capability 9.0 the call must be UNSUPPORTED with a
 * message, and the test then skips (it never passes without the Hopper kernel). */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <criterion/parameterized.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert.h"
#include "harness_internal.h"
#include "oracle.h"

typedef struct fp8_case {
  const char *name;
  int B, Sq, Sk, Hq, Hkv, D;
  int causal;
  int window; /* 1: window_left / window_right apply */
  int wl, wr;
  float softcap;
  int descale; /* 0: none (factor 1), 1: per tensor [1], 2: per (batch, kv head) */
  int no_lse;
} fp8_case;

static const fp8_case cases[] = {
    {"d128_b2_gqa_s300_tensor", 2, 300, 300, 4, 2, 128, 0, 0, 0, 0, 0.0f, 1, 0},
    {"d64_b2_gqa_s300_block", 2, 300, 300, 4, 2, 64, 0, 0, 0, 0, 0.0f, 2, 0},
    {"d128_causal_sq200_sk333_block", 2, 200, 333, 2, 1, 128, 1, 0, 0, 0, 0.0f, 2, 0},
    {"d64_causal_s1000_tensor", 1, 1000, 1000, 2, 2, 64, 1, 0, 0, 0, 0.0f, 1, 0},
    {"d128_s1024_nodescale", 1, 1024, 1024, 2, 2, 128, 0, 0, 0, 0, 0.0f, 0, 0},
    {"d128_sq17_sk1000_window", 1, 17, 1000, 3, 1, 128, 0, 1, 100, 20, 0.0f, 2, 1},
    {"d64_sq1_sk255_mqa", 3, 1, 255, 4, 1, 64, 0, 0, 0, 0, 0.0f, 2, 0},
    {"d128_softcap_s256", 1, 256, 256, 2, 2, 128, 1, 0, 0, 0, 20.0f, 1, 0},
    {"d128_sq1000_sk113_causal", 1, 1000, 113, 2, 2, 128, 1, 0, 0, 0, 0.0f, 2, 0},
};
#define NCASES (sizeof cases / sizeof cases[0])

/* xorshift; normal by Box-Muller */
static uint64_t rng_state;
static double urand(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return ((rng_state >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}
static double nrand(void) { return sqrt(-2.0 * log(urand())) * cos(6.283185307179586 * urand()); }

static char present;
#define PRESENT ((const struct polyattn_buffer *)&present)

static pa_view host_bshd(void *ptr, int S, int H, int D) {
  pa_view v = {PRESENT, 0, ptr, (int64_t)S * H * D, (int64_t)H * D, D};
  return v;
}

/* The case's problem over host arrays (for the oracle): dtype FP8 with the descales,
 * or BF16 (the unrounded inputs). */
static pa_problem host_problem(const fp8_case *c, polyattn_dtype dt, void *q, void *k, void *v,
                               float *dq, float *dk, float *dv) {
  pa_problem p;
  memset(&p, 0, sizeof p);
  p.pass = PA_PASS_FORWARD;
  p.dtype = dt;
  p.out_dtype = POLYATTN_DTYPE_BF16;
  p.batch = c->B;
  p.seqlen_q = c->Sq;
  p.seqlen_k = c->Sk;
  p.total_q = (int64_t)c->B * c->Sq;
  p.total_k = (int64_t)c->B * c->Sk;
  p.heads_q = c->Hq;
  p.heads_kv = c->Hkv;
  p.head_dim = p.head_dim_v = c->D;
  p.scale = 1.0f / sqrtf((float)c->D);
  p.softcap = c->softcap;
  p.causal = c->causal;
  p.window_left = c->window ? c->wl : -1;
  p.window_right = c->window ? c->wr : -1;
  if (c->causal && (p.window_right < 0 || p.window_right > 0)) p.window_right = 0;
  p.q = host_bshd(q, c->Sq, c->Hq, c->D);
  p.k = host_bshd(k, c->Sk, c->Hkv, c->D);
  p.v = host_bshd(v, c->Sk, c->Hkv, c->D);
  p.sparsity = POLYATTN_SPARSITY_NONE;
  p.block_q = p.block_k = 64;
  p.mask_qblocks = (c->Sq + 63) / 64;
  p.mask_kblocks = (c->Sk + 63) / 64;
  p.block_threshold = 0.95f;
  p.auto_density_cutoff = 0.3f;
  if (dt == POLYATTN_DTYPE_FP8_E4M3 && c->descale) {
    float *d[3] = {dq, dk, dv};
    pa_view *views[3] = {&p.q_descale, &p.k_descale, &p.v_descale};
    for (int i = 0; i < 3; ++i) {
      pa_view w = {PRESENT, 0, d[i], c->descale == 2 ? c->Hkv : 0, 0, c->descale == 2 ? 1 : 0};
      *views[i] = w;
    }
  }
  return p;
}

/* Quantise x ([B, S, H, D] float, already bf16 values) to e4m3 with descales of
 * `mode` over [B, Hkv] blocks (q: the query heads of each kv group). */
static void quantise(const fp8_case *c, const float *x, int S, int H, uint8_t *x8, float *descale) {
  const int group = H / c->Hkv, D = c->D;
  const int nblk = c->descale == 2 ? c->B * c->Hkv : 1;
  for (int i = 0; i < nblk; ++i) descale[i] = 1.0f;
  if (c->descale) {
    double amax[64] = {0};
    for (int b = 0; b < c->B; ++b)
      for (int s = 0; s < S; ++s)
        for (int h = 0; h < H; ++h)
          for (int d = 0; d < D; ++d) {
            const int blk = c->descale == 2 ? b * c->Hkv + h / group : 0;
            const double a = fabs(x[(((int64_t)b * S + s) * H + h) * D + d]);
            if (a > amax[blk]) amax[blk] = a;
          }
    for (int i = 0; i < nblk; ++i) descale[i] = amax[i] > 0 ? (float)(amax[i] / 448.0) : 1.0f;
  }
  for (int b = 0; b < c->B; ++b)
    for (int s = 0; s < S; ++s)
      for (int h = 0; h < H; ++h) {
        const int blk = c->descale == 2 ? b * c->Hkv + h / group : 0;
        for (int d = 0; d < D; ++d) {
          const int64_t e = (((int64_t)b * S + s) * H + h) * D + d;
          x8[e] = pa_f32_to_fp8_e4m3(x[e] / descale[blk]);
        }
      }
}

static polyattn_context *fp8_context(int *cc_major, int *cc_minor) {
  const polyattn_backend_info *info = th_backend_info(POLYATTN_BACKEND_CUDA);
  if (!info->usable)
    cr_skip_test("SKIPPED: no usable CUDA device: %s", info->reason ? info->reason : "?");
  struct cudaDeviceProp prop;
  cr_assert_eq(cudaGetDeviceProperties(&prop, 0), cudaSuccess);
  *cc_major = prop.major;
  *cc_minor = prop.minor;
  polyattn_context_desc d;
  polyattn_context_desc_init(&d);
  d.backend = POLYATTN_BACKEND_CUDA;
  polyattn_context *ctx = NULL;
  cr_assert_eq(polyattn_context_create(&d, &ctx), POLYATTN_OK, "%s", polyattn_last_error(NULL));
  return ctx;
}

static polyattn_buffer *upload(polyattn_context *ctx, const void *src, size_t n) {
  polyattn_buffer *b = NULL;
  cr_assert_eq(polyattn_buffer_alloc(ctx, n, &b), POLYATTN_OK, "%s", polyattn_last_error(ctx));
  cr_assert_eq(polyattn_buffer_write(ctx, b, 0, src, n), POLYATTN_OK, "%s", polyattn_last_error(ctx));
  return b;
}

typedef struct fp8_errs {
  double max_err, naive_err, atol, nmse;
  long nonfinite;
} fp8_errs;

static fp8_errs compare(const uint16_t *out, const double *ref, const double *naive, size_t n) {
  fp8_errs e = {0, 0, 0, 0, 0};
  double d2 = 0, r2 = 0, round = 0;
  for (size_t i = 0; i < n; ++i) {
    const double o = pa_bf16_to_f32(out[i]);
    if (!isfinite(o)) {
      ++e.nonfinite;
      continue;
    }
    e.max_err = fmax(e.max_err, fabs(o - ref[i]));
    if (naive) e.naive_err = fmax(e.naive_err, fabs(naive[i] - ref[i]));
    round = fmax(round, fabs(pa_round_to_dtype(ref[i], POLYATTN_DTYPE_BF16) - ref[i]));
    d2 += (o - ref[i]) * (o - ref[i]);
    r2 += ref[i] * ref[i];
  }
  e.atol = 2.0 * round;
  e.nmse = r2 > 0 ? d2 / r2 : 0.0;
  return e;
}

/* Run case c on the CUDA backend, check it; *skipped when the device cannot. */
static void run_case(const fp8_case *c) {
  int ccM = 0, ccm = 0;
  polyattn_context *ctx = fp8_context(&ccM, &ccm);
  rng_state = 0x9e3779b97f4a7c15ull ^ (uint64_t)strlen(c->name) * 1315423911u;
  for (const char *s = c->name; *s; ++s) rng_state = rng_state * 131 + (unsigned char)*s;
  const size_t nq = (size_t)c->B * c->Sq * c->Hq * c->D, nk = (size_t)c->B * c->Sk * c->Hkv * c->D;
  float *xq = malloc(nq * 4), *xk = malloc(nk * 4), *xv = malloc(nk * 4);
  uint16_t *bq = malloc(nq * 2), *bk = malloc(nk * 2), *bv = malloc(nk * 2);
  /* bf16 inputs with per-(batch, head) amplitudes, so per-block descales differ */
  struct { float *x; uint16_t *b; size_t n; int S, H; } in[3] = {
      {xq, bq, nq, c->Sq, c->Hq}, {xk, bk, nk, c->Sk, c->Hkv}, {xv, bv, nk, c->Sk, c->Hkv}};
  for (int t = 0; t < 3; ++t)
    for (size_t e = 0; e < in[t].n; ++e) {
      const int h = (int)((e / c->D) % in[t].H), b = (int)(e / ((size_t)in[t].S * in[t].H * c->D));
      const double amp = (t == 1 ? 2.0 : 1.0) * (1.0 + 0.5 * ((b + h) % 3));
      in[t].b[e] = pa_f32_to_bf16((float)(nrand() * amp));
      in[t].x[e] = pa_bf16_to_f32(in[t].b[e]);
    }
  uint8_t *q8 = malloc(nq), *k8 = malloc(nk), *v8 = malloc(nk);
  float dsc[3][64];
  quantise(c, xq, c->Sq, c->Hq, q8, dsc[0]);
  quantise(c, xk, c->Sk, c->Hkv, k8, dsc[1]);
  quantise(c, xv, c->Sk, c->Hkv, v8, dsc[2]);

  /* device */
  polyattn_buffer *Bq = upload(ctx, q8, nq), *Bk = upload(ctx, k8, nk), *Bv = upload(ctx, v8, nk);
  uint16_t *poison = malloc(nq * 2);
  for (size_t i = 0; i < nq; ++i) poison[i] = 0x7fc1; /* bf16 NaN */
  polyattn_buffer *Bo = upload(ctx, poison, nq * 2);
  const size_t nl = (size_t)c->B * c->Hq * c->Sq;
  float *lpoison = malloc(nl * 4);
  for (size_t i = 0; i < nl; ++i) lpoison[i] = NAN;
  polyattn_buffer *Bl = upload(ctx, lpoison, nl * 4);
  const int ndsc = c->descale == 2 ? c->B * c->Hkv : 1;
  polyattn_buffer *Bd[3] = {NULL, NULL, NULL};
  polyattn_tensor td[3];
  for (int i = 0; i < 3 && c->descale; ++i) {
    Bd[i] = upload(ctx, dsc[i], (size_t)ndsc * 4);
    const int64_t shp2[2] = {c->B, c->Hkv}, shp1[1] = {1};
    polyattn_tensor_contiguous(&td[i], Bd[i], 0, POLYATTN_DTYPE_F32, c->descale == 2 ? 2 : 1,
                               c->descale == 2 ? shp2 : shp1);
  }
  polyattn_tensor tq, tk, tv, to, tl;
  const int64_t sq[4] = {c->B, c->Sq, c->Hq, c->D}, sk[4] = {c->B, c->Sk, c->Hkv, c->D};
  const int64_t sl[3] = {c->B, c->Hq, c->Sq};
  polyattn_tensor_contiguous(&tq, Bq, 0, POLYATTN_DTYPE_FP8_E4M3, 4, sq);
  polyattn_tensor_contiguous(&tk, Bk, 0, POLYATTN_DTYPE_FP8_E4M3, 4, sk);
  polyattn_tensor_contiguous(&tv, Bv, 0, POLYATTN_DTYPE_FP8_E4M3, 4, sk);
  polyattn_tensor_contiguous(&to, Bo, 0, POLYATTN_DTYPE_BF16, 4, sq);
  polyattn_tensor_contiguous(&tl, Bl, 0, POLYATTN_DTYPE_F32, 3, sl);
  polyattn_params pr;
  polyattn_params_init(&pr);
  pr.causal = c->causal;
  pr.window_left = c->window ? c->wl : -1;
  pr.window_right = c->window ? c->wr : -1;
  pr.softcap = c->softcap;
  if (c->descale) pr.q_descale = &td[0], pr.k_descale = &td[1], pr.v_descale = &td[2];

  polyattn_status st =
      polyattn_forward(ctx, &pr, &tq, &tk, &tv, &to, c->no_lse ? NULL : &tl, NULL);
  if (!(ccM == 9 && ccm == 0)) {
    cr_assert_eq(st, POLYATTN_ERR_UNSUPPORTED, "fp8 on cc %d.%d: status %s", ccM, ccm,
                 polyattn_status_string(st));
    cr_assert(strlen(polyattn_last_error(ctx)) > 0);
    cr_skip_test("SKIPPED: fp8 needs compute capability 9.0; this device is %d.%d: %s", ccM, ccm,
                 polyattn_last_error(ctx));
  }
  cr_assert_eq(st, POLYATTN_OK, "%s: %s", c->name, polyattn_last_error(ctx));
  cr_assert_eq(polyattn_synchronize(ctx), POLYATTN_OK, "%s", polyattn_last_error(ctx));
  uint16_t *out = malloc(nq * 2), *out2 = malloc(nq * 2);
  float *lse = malloc(nl * 4);
  cr_assert_eq(polyattn_buffer_read(ctx, Bo, 0, out, nq * 2), POLYATTN_OK);
  cr_assert_eq(polyattn_buffer_read(ctx, Bl, 0, lse, nl * 4), POLYATTN_OK);
  /* a second run: bit-identical */
  cr_assert_eq(polyattn_buffer_write(ctx, Bo, 0, poison, nq * 2), POLYATTN_OK);
  cr_assert_eq(polyattn_forward(ctx, &pr, &tq, &tk, &tv, &to, c->no_lse ? NULL : &tl, NULL),
               POLYATTN_OK);
  cr_assert_eq(polyattn_buffer_read(ctx, Bo, 0, out2, nq * 2), POLYATTN_OK);
  const int same = memcmp(out, out2, nq * 2) == 0;

  /* the oracles */
  double *ref = malloc(nq * 8), *naive = malloc(nq * 8), *refb = malloc(nq * 8);
  double *rl = malloc(nl * 8), *nlse = malloc(nl * 8), *rlb = malloc(nl * 8);
  pa_problem hp = host_problem(c, POLYATTN_DTYPE_FP8_E4M3, q8, k8, v8, dsc[0], dsc[1], dsc[2]);
  pa_oracle_forward(&hp, ref, rl);
  pa_naive_forward(&hp, naive, nlse);
  pa_problem hb = host_problem(c, POLYATTN_DTYPE_BF16, bq, bk, bv, NULL, NULL, NULL);
  pa_oracle_forward(&hb, refb, rlb);

  fp8_errs e = compare(out, ref, naive, nq);
  fp8_errs eb = compare(out, refb, NULL, nq);
  const double bound = 2.0 * e.naive_err + e.atol;
  /* LSE: oracle layout [Hq, total_q], the tensor [B, Hq, Sq] */
  double lerr = 0;
  long lbad = 0;
  if (!c->no_lse)
    for (int b = 0; b < c->B; ++b)
      for (int h = 0; h < c->Hq; ++h)
        for (int i = 0; i < c->Sq; ++i) {
          const double want = rl[(size_t)h * c->B * c->Sq + (size_t)b * c->Sq + i];
          const double got = lse[((size_t)b * c->Hq + h) * c->Sq + i];
          if (isinf(want)) lbad += !(isinf(got) && got < 0);
          else if (!isfinite(got)) ++lbad;
          else lerr = fmax(lerr, fabs(got - want));
        }
  cr_log_info("%s: vs oracle on fp8 inputs: err %.3g <= %.3g (2x naive %.3g + atol %.3g) nmse "
              "%.3g; lse err %.3g; vs oracle on bf16 inputs (information): max err %.3g nmse "
              "%.3g; run-to-run %s",
              c->name, e.max_err, bound, e.naive_err, e.atol, e.nmse, lerr, eb.max_err, eb.nmse,
              same ? "bit-identical" : "DIFFERENT");
  cr_expect_eq(e.nonfinite, 0, "%s: %ld non-finite outputs (unwritten poison?)", c->name,
               e.nonfinite);
  cr_expect(e.max_err <= bound, "%s: max err %.4g > bound %.4g", c->name, e.max_err, bound);
  cr_expect(e.nmse <= 5e-4, "%s: nmse %.3g > 5e-4", c->name, e.nmse);
  cr_expect(lbad == 0 && lerr <= 1e-3, "%s: lse err %.3g (%ld bad)", c->name, lerr, lbad);
  cr_expect(same, "%s: two runs differ", c->name);

  free(ref), free(naive), free(refb), free(rl), free(nlse), free(rlb);
  free(out), free(out2), free(lse), free(poison), free(lpoison);
  free(xq), free(xk), free(xv), free(bq), free(bk), free(bv), free(q8), free(k8), free(v8);
  polyattn_buffer_free(Bq), polyattn_buffer_free(Bk), polyattn_buffer_free(Bv);
  polyattn_buffer_free(Bo), polyattn_buffer_free(Bl);
  for (int i = 0; i < 3; ++i) polyattn_buffer_free(Bd[i]);
  polyattn_context_destroy(ctx);
}

ParameterizedTestParameters(fp8, oracle) {
  static int idx[NCASES];
  for (size_t i = 0; i < NCASES; ++i) idx[i] = (int)i;
  return cr_make_param_array(int, idx, NCASES);
}
ParameterizedTest(int *i, fp8, oracle) {
  const char *only = getenv("POLYATTN_TEST_CASES");
  if (only && *only && !strstr(only, cases[*i].name))
    cr_skip_test("not in POLYATTN_TEST_CASES");
  run_case(&cases[*i]);
}

/* Every other CUDA kernel declines fp8 when forced by name. */
Test(fp8, other_kernels_decline) {
  int ccM, ccm;
  polyattn_context *ctx = fp8_context(&ccM, &ccm);
  polyattn_buffer *b = NULL;
  cr_assert_eq(polyattn_buffer_alloc(ctx, 1 << 16, &b), POLYATTN_OK);
  polyattn_tensor q, o;
  const int64_t s[4] = {1, 64, 1, 64};
  polyattn_tensor_contiguous(&q, b, 0, POLYATTN_DTYPE_FP8_E4M3, 4, s);
  polyattn_tensor_contiguous(&o, b, 8192, POLYATTN_DTYPE_BF16, 4, s);
  polyattn_params pr;
  polyattn_params_init(&pr);
  static const char *names[] = {"simple", "ampere", "volta", "decode", "hopper"};
  for (int i = 0; i < 5; ++i) {
    setenv("POLYATTN_CUDA_KERNEL", names[i], 1);
    polyattn_status st = polyattn_forward(ctx, &pr, &q, &q, &q, &o, NULL, NULL);
    cr_expect_eq(st, POLYATTN_ERR_UNSUPPORTED, "forced %s on fp8: %s", names[i],
                 polyattn_status_string(st));
    cr_log_info("forced %s: %s", names[i], polyattn_last_error(ctx));
  }
  unsetenv("POLYATTN_CUDA_KERNEL");
  /* head dim 96: unsupported with a message */
  const int64_t s96[4] = {1, 64, 1, 96};
  polyattn_tensor_contiguous(&q, b, 0, POLYATTN_DTYPE_FP8_E4M3, 4, s96);
  polyattn_tensor_contiguous(&o, b, 16384, POLYATTN_DTYPE_BF16, 4, s96);
  polyattn_status st = polyattn_forward(ctx, &pr, &q, &q, &q, &o, NULL, NULL);
  cr_expect_eq(st, POLYATTN_ERR_UNSUPPORTED, "hd96 fp8: %s", polyattn_status_string(st));
  cr_expect(strstr(polyattn_last_error(ctx), "head dim") != NULL, "%s", polyattn_last_error(ctx));
  polyattn_buffer_free(b);
  polyattn_context_destroy(ctx);
}

TH_DEFINE_MAIN
