/* FP8 (e4m3) forward on the CUDA backend (issue 9; decisions 77, 78): q, k, v stored
 * as e4m3 with float32 descale factors, out bf16, against the float64 oracle on the
 * fp8 inputs (decoded, times their descales) by DESIGN.md's tolerance rule, with the
 * naive reference of common/oracle.c (S in float32, 2^8 P rounded to e4m3, out bf16).
 * The error against the oracle on the unrounded (bf16) inputs is logged as
 * information: it is what quantising the inputs costs, not a property of the kernel.
 *
 * Suite fp8 needs a CUDA device: without one every test is skipped, loudly; on a
 * device that is not compute capability 9.0 the call must be UNSUPPORTED with a
 * message, and the test then skips (it never passes without the Hopper kernel).
 * Built with -DFP8_TEST_SELFCHECK (by hand, no GPU) the "kernel output" is the naive
 * reference itself, which checks this file's own bookkeeping (layouts, LSE indexing). */
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

#define MAXB 4

typedef struct fp8_case {
  const char *name;
  int B, Sq, Sk, Hq, Hkv, D; /* varlen: Sq, Sk are ignored (lens_q / lens_k) */
  int causal;
  int window; /* 1: window_left / window_right apply */
  int wl, wr;
  float softcap;
  int descale; /* 0: none (factor 1), 1: per tensor [1], 2: per (batch, kv head) */
  int no_lse;
  int varlen; /* packed [total, H, D] with cu_seqlens from lens_q / lens_k */
  int lens_q[MAXB], lens_k[MAXB];
  int seqused; /* seqused_k = used_k */
  int used_k[MAXB];
  int climb; /* dimension 0 of q and k set to take the kept maximum's slow steps (below) */
} fp8_case;

static const fp8_case cases[] = {
    {.name = "d128_b2_gqa_s300_tensor", .B = 2, .Sq = 300, .Sk = 300, .Hq = 4, .Hkv = 2, .D = 128,
     .descale = 1},
    {.name = "d64_b2_gqa_s300_block", .B = 2, .Sq = 300, .Sk = 300, .Hq = 4, .Hkv = 2, .D = 64,
     .descale = 2},
    {.name = "d128_causal_sq200_sk333_block", .B = 2, .Sq = 200, .Sk = 333, .Hq = 2, .Hkv = 1,
     .D = 128, .causal = 1, .descale = 2},
    {.name = "d64_causal_s1000_tensor", .B = 1, .Sq = 1000, .Sk = 1000, .Hq = 2, .Hkv = 2, .D = 64,
     .causal = 1, .descale = 1},
    {.name = "d128_s1024_nodescale", .B = 1, .Sq = 1024, .Sk = 1024, .Hq = 2, .Hkv = 2, .D = 128},
    {.name = "d128_sq17_sk1000_window", .B = 1, .Sq = 17, .Sk = 1000, .Hq = 3, .Hkv = 1, .D = 128,
     .window = 1, .wl = 100, .wr = 20, .descale = 2, .no_lse = 1},
    {.name = "d64_sq1_sk255_mqa", .B = 3, .Sq = 1, .Sk = 255, .Hq = 4, .Hkv = 1, .D = 64,
     .descale = 2},
    {.name = "d128_softcap_s256", .B = 1, .Sq = 256, .Sk = 256, .Hq = 2, .Hkv = 2, .D = 128,
     .causal = 1, .softcap = 20.0f, .descale = 1},
    {.name = "d128_sq1000_sk113_causal", .B = 1, .Sq = 1000, .Sk = 113, .Hq = 2, .Hkv = 2,
     .D = 128, .causal = 1, .descale = 2},
    {.name = "d128_varlen_causal_gqa_block", .B = 3, .Hq = 4, .Hkv = 2, .D = 128, .causal = 1,
     .descale = 2, .varlen = 1, .lens_q = {130, 0, 257}, .lens_k = {200, 5, 300}},
    {.name = "d64_varlen_seqused", .B = 3, .Hq = 2, .Hkv = 2, .D = 64, .descale = 1, .varlen = 1,
     .lens_q = {64, 100, 33}, .lens_k = {300, 129, 60}, .seqused = 1, .used_k = {250, 0, 60}},
    {.name = "d128_seqused_k_b2", .B = 2, .Sq = 150, .Sk = 400, .Hq = 2, .Hkv = 1, .D = 128,
     .causal = 1, .descale = 2, .seqused = 1, .used_k = {400, 190}},
    /* without LSE the defaults take l from the tensor cores (decision 108; at hd128
     * since decision 110): the same shapes again without LSE */
    {.name = "d128_b2_gqa_s300_nolse", .B = 2, .Sq = 300, .Sk = 300, .Hq = 4, .Hkv = 2, .D = 128,
     .descale = 1, .no_lse = 1},
    {.name = "d64_causal_s1000_nolse", .B = 1, .Sq = 1000, .Sk = 1000, .Hq = 2, .Hkv = 2, .D = 64,
     .causal = 1, .descale = 1, .no_lse = 1},
    {.name = "d128_varlen_causal_gqa_nolse", .B = 3, .Hq = 4, .Hkv = 2, .D = 128, .causal = 1,
     .descale = 2, .varlen = 1, .lens_q = {130, 0, 257}, .lens_k = {200, 5, 300}, .no_lse = 1},
    {.name = "d64_varlen_seqused_nolse", .B = 3, .Hq = 2, .Hkv = 2, .D = 64, .descale = 1,
     .varlen = 1, .lens_q = {64, 100, 33}, .lens_k = {300, 129, 60}, .seqused = 1,
     .used_k = {250, 0, 60}, .no_lse = 1},
    {.name = "d128_softcap_s256_nolse", .B = 1, .Sq = 256, .Sk = 256, .Hq = 2, .Hkv = 2, .D = 128,
     .causal = 1, .softcap = 20.0f, .descale = 1, .no_lse = 1},
    /* hd64 with softcap: not plain, so the default falls back from "pipe-gs-t-wg3-r-pn" to
     * the form with the general score path (decision 131) */
    {.name = "d64_softcap_gqa_s300_nolse", .B = 2, .Sq = 300, .Sk = 300, .Hq = 4, .Hkv = 2,
     .D = 64, .softcap = 15.0f, .descale = 1, .no_lse = 1},
    /* scores that climb (decision 140's late vote, "-kp"): every query's dimension 0 is 1
     * (even rows) or 0.5 (odd), key j's is j, so a row's scores climb by ~16-24 log2 units
     * per key tile (the vote fails and the reference moves by powers of two), and key
     * 1500's is 3200, ~230 log2 units above the reference for the even rows (their p
     * overflow: the warp recomputes its S by mma.sync) and ~115 for the odd ones. Nothing
     * counts which path ran: the inputs are built so that they must. Without LSE only: with
     * it the default missed LSE's bound by 0.355 (the tensor cores' truncating accumulation
     * of decision 78, on a product ~2^15 beside small ones; forty-eighth session). */
    {.name = "d128_climb_nolse", .B = 1, .Sq = 384, .Sk = 2048, .Hq = 2, .Hkv = 2, .D = 128,
     .descale = 2, .no_lse = 1, .climb = 1},
    {.name = "d64_climb_nolse", .B = 1, .Sq = 384, .Sk = 2048, .Hq = 2, .Hkv = 2, .D = 64,
     .descale = 2, .no_lse = 1, .climb = 1},
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

/* The rows of q and k/v: per batch entry, its first row and length (both layouts
 * are row-major [rows, heads, dim]; fixed-length rows are b * S + i). */
typedef struct fp8_rows {
  int total_q, total_k, max_q, max_k;
  int32_t cu_q[MAXB + 1], cu_k[MAXB + 1];
} fp8_rows;

static fp8_rows case_rows(const fp8_case *c) {
  fp8_rows r;
  memset(&r, 0, sizeof r);
  for (int b = 0; b < c->B; ++b) {
    const int lq = c->varlen ? c->lens_q[b] : c->Sq, lk = c->varlen ? c->lens_k[b] : c->Sk;
    r.cu_q[b + 1] = r.cu_q[b] + lq;
    r.cu_k[b + 1] = r.cu_k[b] + lk;
    if (lq > r.max_q) r.max_q = lq;
    if (lk > r.max_k) r.max_k = lk;
  }
  r.total_q = r.cu_q[c->B];
  r.total_k = r.cu_k[c->B];
  return r;
}

static int row_batch(const int32_t *cu, int B, int row) {
  int b = 0;
  while (b + 1 < B && row >= cu[b + 1]) ++b;
  return b;
}

/* The case's problem over host arrays (for the oracle): dtype FP8 with the descales,
 * or BF16 (the unrounded inputs). */
static pa_problem host_problem(const fp8_case *c, fp8_rows *r, polyattn_dtype dt, void *q,
                               void *k, void *v, float *dq, float *dk, float *dv,
                               int32_t *used) {
  pa_problem p;
  memset(&p, 0, sizeof p);
  p.pass = PA_PASS_FORWARD;
  p.dtype = dt;
  p.out_dtype = POLYATTN_DTYPE_BF16;
  p.batch = c->B;
  p.varlen = c->varlen;
  p.seqlen_q = c->varlen ? r->max_q : c->Sq;
  p.seqlen_k = c->varlen ? r->max_k : c->Sk;
  p.total_q = r->total_q;
  p.total_k = r->total_k;
  p.heads_q = c->Hq;
  p.heads_kv = c->Hkv;
  p.head_dim = p.head_dim_v = c->D;
  p.scale = 1.0f / sqrtf((float)c->D);
  p.softcap = c->softcap;
  p.causal = c->causal;
  p.window_left = c->window ? c->wl : -1;
  p.window_right = c->window ? c->wr : -1;
  if (c->causal && (p.window_right < 0 || p.window_right > 0)) p.window_right = 0;
  /* [B, S, H, D] or [T, H, D]: stride_b, stride_s, stride_h */
  const int64_t sbq = c->varlen ? 0 : (int64_t)c->Sq * c->Hq * c->D;
  const int64_t sbk = c->varlen ? 0 : (int64_t)c->Sk * c->Hkv * c->D;
  pa_view vq = {PRESENT, 0, q, sbq, (int64_t)c->Hq * c->D, c->D};
  pa_view vk = {PRESENT, 0, k, sbk, (int64_t)c->Hkv * c->D, c->D};
  pa_view vv = {PRESENT, 0, v, sbk, (int64_t)c->Hkv * c->D, c->D};
  p.q = vq, p.k = vk, p.v = vv;
  if (c->varlen) {
    pa_view cq = {PRESENT, 0, r->cu_q, 0, 1, 0}, ck = {PRESENT, 0, r->cu_k, 0, 1, 0};
    p.cu_seqlens_q = cq, p.cu_seqlens_k = ck;
  }
  if (c->seqused) {
    pa_view u = {PRESENT, 0, used, 0, 1, 0};
    p.seqused_k = u;
  }
  p.sparsity = POLYATTN_SPARSITY_NONE;
  p.block_q = p.block_k = 64;
  p.mask_qblocks = (p.seqlen_q + 63) / 64;
  p.mask_kblocks = (p.seqlen_k + 63) / 64;
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

/* Quantise x ([rows, H, D] float, already bf16 values) to e4m3 with descales of the
 * case's mode over [B, Hkv] blocks (q: the query heads of each kv group). */
static void quantise(const fp8_case *c, const int32_t *cu, const float *x, int rows, int H,
                     uint8_t *x8, float *descale) {
  const int group = H / c->Hkv, D = c->D;
  const int nblk = c->descale == 2 ? c->B * c->Hkv : 1;
  double amax[MAXB * 8] = {0};
  for (int i = 0; i < nblk; ++i) descale[i] = 1.0f;
  for (int t = 0; t < rows && c->descale; ++t)
    for (int h = 0; h < H; ++h) {
      const int blk = c->descale == 2 ? row_batch(cu, c->B, t) * c->Hkv + h / group : 0;
      for (int d = 0; d < D; ++d) {
        const double a = fabs(x[((int64_t)t * H + h) * D + d]);
        if (a > amax[blk]) amax[blk] = a;
      }
    }
  for (int i = 0; i < nblk && c->descale; ++i)
    descale[i] = amax[i] > 0 ? (float)(amax[i] / 448.0) : 1.0f;
  for (int t = 0; t < rows; ++t)
    for (int h = 0; h < H; ++h) {
      const int blk = c->descale == 2 ? row_batch(cu, c->B, t) * c->Hkv + h / group : 0;
      for (int d = 0; d < D; ++d) {
        const int64_t e = ((int64_t)t * H + h) * D + d;
        x8[e] = pa_f32_to_fp8_e4m3(x[e] / descale[blk]);
      }
    }
}

static polyattn_context *fp8_context(int *cc_major, int *cc_minor) {
#ifdef FP8_TEST_SELFCHECK /* a CPU context for the buffers; the run is the naive reference */
  *cc_major = 9, *cc_minor = 0;
  polyattn_context_desc cd;
  polyattn_context_desc_init(&cd);
  cd.backend = POLYATTN_BACKEND_CPU;
  polyattn_context *cctx = NULL;
  cr_assert_eq(polyattn_context_create(&cd, &cctx), POLYATTN_OK);
  return cctx;
#endif
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

/* Run case c on the CUDA backend and check it (or skip where the device cannot). */
static void run_case(const fp8_case *c) {
  int ccM = 0, ccm = 0;
  polyattn_context *ctx = fp8_context(&ccM, &ccm);
  rng_state = 0x9e3779b97f4a7c15ull;
  for (const char *s = c->name; *s; ++s) rng_state = rng_state * 131 + (unsigned char)*s;
  fp8_rows R = case_rows(c);
  const size_t nq = (size_t)R.total_q * c->Hq * c->D, nk = (size_t)R.total_k * c->Hkv * c->D;
  float *xq = malloc(nq * 4 + 4), *xk = malloc(nk * 4 + 4), *xv = malloc(nk * 4 + 4);
  uint16_t *bq = malloc(nq * 2 + 2), *bk = malloc(nk * 2 + 2), *bv = malloc(nk * 2 + 2);
  /* bf16 inputs with per-(batch, head) amplitudes, so per-block descales differ */
  struct {
    float *x;
    uint16_t *b;
    int rows, H;
    const int32_t *cu;
  } in[3] = {{xq, bq, R.total_q, c->Hq, R.cu_q},
             {xk, bk, R.total_k, c->Hkv, R.cu_k},
             {xv, bv, R.total_k, c->Hkv, R.cu_k}};
  for (int t = 0; t < 3; ++t)
    for (int row = 0; row < in[t].rows; ++row)
      for (int h = 0; h < in[t].H; ++h) {
        const int b = row_batch(in[t].cu, c->B, row);
        const double amp = (t == 1 ? 2.0 : 1.0) * (1.0 + 0.5 * ((b + h) % 3));
        for (int d = 0; d < c->D; ++d) {
          const size_t e = ((size_t)row * in[t].H + h) * c->D + d;
          const int j = row - in[t].cu[b]; /* the row's position in its sequence */
          double x = nrand() * amp;
          if (c->climb && d == 0 && t < 2)
            x = t == 0 ? (j % 2 ? 0.5 : 1.0) : j == 1500 ? 3200.0 : (double)j;
          in[t].b[e] = pa_f32_to_bf16((float)x);
          in[t].x[e] = pa_bf16_to_f32(in[t].b[e]);
        }
      }
  uint8_t *q8 = malloc(nq + 1), *k8 = malloc(nk + 1), *v8 = malloc(nk + 1);
  float dsc[3][MAXB * 8];
  quantise(c, R.cu_q, xq, R.total_q, c->Hq, q8, dsc[0]);
  quantise(c, R.cu_k, xk, R.total_k, c->Hkv, k8, dsc[1]);
  quantise(c, R.cu_k, xv, R.total_k, c->Hkv, v8, dsc[2]);
  int32_t used[MAXB];
  for (int b = 0; b < c->B; ++b) used[b] = c->used_k[b];

  /* device */
  polyattn_buffer *Bq = upload(ctx, q8, nq + 1), *Bk = upload(ctx, k8, nk + 1),
                  *Bv = upload(ctx, v8, nk + 1);
  uint16_t *poison = malloc(nq * 2 + 2);
  for (size_t i = 0; i <= nq; ++i) poison[i] = 0x7fc1; /* bf16 NaN */
  polyattn_buffer *Bo = upload(ctx, poison, nq * 2 + 2);
  const size_t nl = (size_t)c->Hq * R.total_q;
  float *lpoison = malloc(nl * 4 + 4);
  for (size_t i = 0; i <= nl; ++i) lpoison[i] = NAN;
  polyattn_buffer *Bl = upload(ctx, lpoison, nl * 4 + 4);
  const int ndsc = c->descale == 2 ? c->B * c->Hkv : 1;
  polyattn_buffer *Bd[3] = {NULL, NULL, NULL}, *Bcu = NULL;
  polyattn_tensor td[3], tcq, tck, tused;
  for (int i = 0; i < 3 && c->descale; ++i) {
    Bd[i] = upload(ctx, dsc[i], (size_t)ndsc * 4);
    const int64_t shp2[2] = {c->B, c->Hkv}, shp1[1] = {1};
    polyattn_tensor_contiguous(&td[i], Bd[i], 0, POLYATTN_DTYPE_F32, c->descale == 2 ? 2 : 1,
                               c->descale == 2 ? shp2 : shp1);
  }
  int32_t meta[3 * (MAXB + 1)];
  memcpy(meta, R.cu_q, sizeof R.cu_q);
  memcpy(meta + MAXB + 1, R.cu_k, sizeof R.cu_k);
  memcpy(meta + 2 * (MAXB + 1), used, sizeof used);
  Bcu = upload(ctx, meta, sizeof meta);
  const int64_t scu[1] = {c->B + 1}, sus[1] = {c->B};
  polyattn_tensor_contiguous(&tcq, Bcu, 0, POLYATTN_DTYPE_I32, 1, scu);
  polyattn_tensor_contiguous(&tck, Bcu, 4 * (MAXB + 1), POLYATTN_DTYPE_I32, 1, scu);
  polyattn_tensor_contiguous(&tused, Bcu, 8 * (MAXB + 1), POLYATTN_DTYPE_I32, 1, sus);
  polyattn_tensor tq, tk, tv, to, tl;
  if (c->varlen) {
    const int64_t sq[3] = {R.total_q, c->Hq, c->D}, sk[3] = {R.total_k, c->Hkv, c->D};
    const int64_t sl[2] = {c->Hq, R.total_q};
    polyattn_tensor_contiguous(&tq, Bq, 0, POLYATTN_DTYPE_FP8_E4M3, 3, sq);
    polyattn_tensor_contiguous(&tk, Bk, 0, POLYATTN_DTYPE_FP8_E4M3, 3, sk);
    polyattn_tensor_contiguous(&tv, Bv, 0, POLYATTN_DTYPE_FP8_E4M3, 3, sk);
    polyattn_tensor_contiguous(&to, Bo, 0, POLYATTN_DTYPE_BF16, 3, sq);
    polyattn_tensor_contiguous(&tl, Bl, 0, POLYATTN_DTYPE_F32, 2, sl);
  } else {
    const int64_t sq[4] = {c->B, c->Sq, c->Hq, c->D}, sk[4] = {c->B, c->Sk, c->Hkv, c->D};
    const int64_t sl[3] = {c->B, c->Hq, c->Sq};
    polyattn_tensor_contiguous(&tq, Bq, 0, POLYATTN_DTYPE_FP8_E4M3, 4, sq);
    polyattn_tensor_contiguous(&tk, Bk, 0, POLYATTN_DTYPE_FP8_E4M3, 4, sk);
    polyattn_tensor_contiguous(&tv, Bv, 0, POLYATTN_DTYPE_FP8_E4M3, 4, sk);
    polyattn_tensor_contiguous(&to, Bo, 0, POLYATTN_DTYPE_BF16, 4, sq);
    polyattn_tensor_contiguous(&tl, Bl, 0, POLYATTN_DTYPE_F32, 3, sl);
  }
  polyattn_params pr;
  polyattn_params_init(&pr);
  pr.causal = c->causal;
  pr.window_left = c->window ? c->wl : -1;
  pr.window_right = c->window ? c->wr : -1;
  pr.softcap = c->softcap;
  if (c->descale) pr.q_descale = &td[0], pr.k_descale = &td[1], pr.v_descale = &td[2];
  if (c->varlen) {
    pr.cu_seqlens_q = &tcq, pr.cu_seqlens_k = &tck;
    pr.max_seqlen_q = R.max_q, pr.max_seqlen_k = R.max_k;
  }
  if (c->seqused) pr.seqused_k = &tused;

#ifdef FP8_TEST_SELFCHECK /* the test's own bookkeeping, without a GPU: out = naive */
  (void)tq, (void)tk, (void)tv, (void)to, (void)tl, (void)pr;
  polyattn_status st = POLYATTN_OK;
  ccM = 9, ccm = 0;
#else
  polyattn_status st =
      polyattn_forward(ctx, &pr, &tq, &tk, &tv, &to, c->no_lse ? NULL : &tl, NULL);
#endif
  if (!(ccM == 9 && ccm == 0)) {
    cr_assert_eq(st, POLYATTN_ERR_UNSUPPORTED, "fp8 on cc %d.%d: status %s", ccM, ccm,
                 polyattn_status_string(st));
    cr_assert(strlen(polyattn_last_error(ctx)) > 0);
    cr_skip_test("SKIPPED: fp8 needs compute capability 9.0; this device is %d.%d: %s", ccM, ccm,
                 polyattn_last_error(ctx));
  }
  cr_assert_eq(st, POLYATTN_OK, "%s: %s", c->name, polyattn_last_error(ctx));
  uint16_t *out = malloc(nq * 2 + 2), *out2 = malloc(nq * 2 + 2);
  float *lse = malloc(nl * 4 + 4);
#ifndef FP8_TEST_SELFCHECK
  cr_assert_eq(polyattn_synchronize(ctx), POLYATTN_OK, "%s", polyattn_last_error(ctx));
  cr_assert_eq(polyattn_buffer_read(ctx, Bo, 0, out, nq * 2 + 2), POLYATTN_OK);
  cr_assert_eq(polyattn_buffer_read(ctx, Bl, 0, lse, nl * 4 + 4), POLYATTN_OK);
  /* a second run: bit-identical */
  cr_assert_eq(polyattn_buffer_write(ctx, Bo, 0, poison, nq * 2 + 2), POLYATTN_OK);
  cr_assert_eq(polyattn_forward(ctx, &pr, &tq, &tk, &tv, &to, c->no_lse ? NULL : &tl, NULL),
               POLYATTN_OK);
  cr_assert_eq(polyattn_buffer_read(ctx, Bo, 0, out2, nq * 2 + 2), POLYATTN_OK);
#else
  {
    fp8_rows R2 = R;
    pa_problem hp0 =
        host_problem(c, &R2, POLYATTN_DTYPE_FP8_E4M3, q8, k8, v8, dsc[0], dsc[1], dsc[2], used);
    double *no = malloc(nq * 8 + 8), *nl0 = malloc(nl * 8 + 8);
    pa_naive_forward(&hp0, no, nl0);
    for (size_t i = 0; i < nq; ++i) out[i] = out2[i] = pa_f32_to_bf16((float)no[i]);
    out[nq] = 0x7fc1;
    lse[nl] = NAN;
    for (int b = 0; b < c->B; ++b)
      for (int h = 0; h < c->Hq; ++h)
        for (int i = 0; i < R.cu_q[b + 1] - R.cu_q[b]; ++i) {
          const size_t row = (size_t)R.cu_q[b] + i;
          const float v = (float)nl0[(size_t)h * R.total_q + row];
          if (c->varlen) lse[(size_t)h * R.total_q + row] = v;
          else lse[((size_t)b * c->Hq + h) * c->Sq + i] = v;
        }
    free(no), free(nl0);
  }
#endif
  const int same = memcmp(out, out2, nq * 2) == 0;
  /* the guard element past the view is untouched */
  const int guard = out[nq] == 0x7fc1 && (c->no_lse || isnan(lse[nl]));

  /* the oracles: [total_q, Hq, D] outputs, [Hq, total_q] LSE */
  double *ref = malloc(nq * 8 + 8), *naive = malloc(nq * 8 + 8), *refb = malloc(nq * 8 + 8);
  double *rl = malloc(nl * 8 + 8), *nlse = malloc(nl * 8 + 8), *rlb = malloc(nl * 8 + 8);
  pa_problem hp =
      host_problem(c, &R, POLYATTN_DTYPE_FP8_E4M3, q8, k8, v8, dsc[0], dsc[1], dsc[2], used);
  pa_oracle_forward(&hp, ref, rl);
  pa_naive_forward(&hp, naive, nlse);
  pa_problem hb = host_problem(c, &R, POLYATTN_DTYPE_BF16, bq, bk, bv, NULL, NULL, NULL, used);
  pa_oracle_forward(&hb, refb, rlb);

  fp8_errs e = compare(out, ref, naive, nq);
  fp8_errs eb = compare(out, refb, NULL, nq);
  const double bound = 2.0 * e.naive_err + e.atol;
  /* LSE: the tensor is [B, Hq, Sq] (fixed) or [Hq, total_q] (varlen) */
  /* LSE to 1e-3 absolute, DESIGN.md's rule for every dtype. (The sixth session's FP8
   * kernel misses it: Hopper's fp8 tensor cores accumulate Q.K^T with ~13-14 bits, which
   * moves each row's maximum; decision 78. The naive LSE error is logged, not used.) */
  double lerr = 0, lnaive = 0;
  long lbad = 0;
  for (int b = 0; b < c->B && !c->no_lse; ++b)
    for (int h = 0; h < c->Hq; ++h)
      for (int i = 0; i < R.cu_q[b + 1] - R.cu_q[b]; ++i) {
        const size_t row = (size_t)R.cu_q[b] + i;
        const double want = rl[(size_t)h * R.total_q + row];
        const double got =
            c->varlen ? lse[(size_t)h * R.total_q + row] : lse[((size_t)b * c->Hq + h) * c->Sq + i];
        if (isinf(want)) lbad += !(isinf(got) && got < 0);
        else if (!isfinite(got)) ++lbad;
        else lerr = fmax(lerr, fabs(got - want));
        if (!isinf(want)) lnaive = fmax(lnaive, fabs(nlse[(size_t)h * R.total_q + row] - want));
      }
  const double lbound = 1e-3;
  cr_log_info("%s: vs oracle on fp8 inputs: err %.3g <= %.3g (2x naive %.3g + atol %.3g) nmse "
              "%.3g; lse err %.3g <= %.3g (naive's %.3g); vs oracle on bf16 inputs "
              "(information): max err %.3g nmse %.3g; run-to-run %s",
              c->name, e.max_err, bound, e.naive_err, e.atol, e.nmse, lerr, lbound, lnaive,
              eb.max_err, eb.nmse,
              same ? "bit-identical" : "DIFFERENT");
  cr_expect_eq(e.nonfinite, 0, "%s: %ld non-finite outputs (unwritten poison?)", c->name,
               e.nonfinite);
  cr_expect(e.max_err <= bound, "%s: max err %.4g > bound %.4g", c->name, e.max_err, bound);
  cr_expect(e.nmse <= 5e-4, "%s: nmse %.3g > 5e-4", c->name, e.nmse);
  cr_expect(lbad == 0 && lerr <= lbound, "%s: lse err %.3g > %.3g (%ld bad)", c->name, lerr,
            lbound, lbad);
  cr_expect(same, "%s: two runs differ", c->name);
  cr_expect(guard, "%s: the element past out (or lse) was written", c->name);

  free(ref), free(naive), free(refb), free(rl), free(nlse), free(rlb);
  free(out), free(out2), free(lse), free(poison), free(lpoison);
  free(xq), free(xk), free(xv), free(bq), free(bk), free(bv), free(q8), free(k8), free(v8);
  polyattn_buffer_free(Bq), polyattn_buffer_free(Bk), polyattn_buffer_free(Bv);
  polyattn_buffer_free(Bo), polyattn_buffer_free(Bl), polyattn_buffer_free(Bcu);
  for (int i = 0; i < 3; ++i) polyattn_buffer_free(Bd[i]);
  polyattn_context_destroy(ctx);
}

ParameterizedTestParameters(fp8, oracle) {
  static int idx[NCASES];
  for (size_t i = 0; i < NCASES; ++i) idx[i] = (int)i;
  return cr_make_param_array(int, idx, NCASES);
}
ParameterizedTest(int *i, fp8, oracle) {
  setenv("POLYATTN_CUDA_FP8", "1", 1); /* the kernel is opt-in (decision 78) */
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
  /* Not opted in (decision 78): unsupported on any device, naming the switch. */
  unsetenv("POLYATTN_CUDA_FP8");
  polyattn_status off = polyattn_forward(ctx, &pr, &q, &q, &q, &o, NULL, NULL);
  cr_expect_eq(off, POLYATTN_ERR_UNSUPPORTED, "fp8 without POLYATTN_CUDA_FP8: %s",
               polyattn_status_string(off));
  cr_expect(strstr(polyattn_last_error(ctx), "POLYATTN_CUDA_FP8") != NULL, "%s",
            polyattn_last_error(ctx));
  setenv("POLYATTN_CUDA_FP8", "1", 1);
  if (!(ccM == 9 && ccm == 0)) {
    polyattn_buffer_free(b);
    polyattn_context_destroy(ctx);
    cr_skip_test("SKIPPED (after the forced kernels declined): fp8 needs compute capability 9.0; "
                 "this device is %d.%d", ccM, ccm);
  }
  /* head dim 96 on Hopper: unsupported with a message */
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
