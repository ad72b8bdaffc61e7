/* The comparison with the oracle: DESIGN.md's tolerance rule, LSE, the chosen
 * AUTO_BLOCK mask, guard bytes, intact inputs, and the independent semantics check. */
#include "harness_internal.h"

#include <criterion/alloc.h>
#include <criterion/criterion.h>
#include <criterion/hooks.h>
#include <criterion/logging.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert.h"
#include "oracle.h"
#include "problem.h"

/* ----------------------------------------------------------------- checking */

typedef struct th_acc {
  th_check k;
  double sum_d2, sum_r2, max_round;
} th_acc;

static void acc_init(th_acc *a, const char *what) {
  memset(a, 0, sizeof *a);
  a->k.what = what;
}

static void acc_add(th_acc *a, double out, double ref, double naive, polyattn_dtype dt) {
  ++a->k.count;
  if (!isfinite(out)) {
    ++a->k.nonfinite;
    return;
  }
  double e = fabs(out - ref);
  if (e > a->k.max_err) a->k.max_err = e;
  double ne = fabs(naive - ref);
  if (ne > a->k.naive_err || !isfinite(ne)) a->k.naive_err = ne;
  double re = fabs(pa_round_to_dtype(ref, dt) - ref);
  if (re > a->max_round) a->max_round = re;
  a->sum_d2 += (out - ref) * (out - ref);
  a->sum_r2 += ref * ref;
}

static th_check acc_finish(th_acc *a, const th_case *c) {
  th_check k = a->k;
  k.atol = c->atol_factor * a->max_round;
  k.bound = c->naive_factor * k.naive_err + k.atol;
  k.nmse = a->sum_r2 > 0 ? a->sum_d2 / a->sum_r2 : 0.0;
  k.pass = k.nonfinite == 0 && k.max_err <= k.bound && (a->sum_r2 == 0 || k.nmse <= 5e-4);
  return k;
}

static int th_append(char *s, size_t n, const char *fmt, ...) {
  size_t len = strlen(s);
  if (len >= n) return 0;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(s + len, n - len, fmt, ap);
  va_end(ap);
  return 1;
}

static void append_check(char *s, size_t n, const th_check *k) {
  th_append(s, n, " | %s %s: err %.3g <= %.3g (2x naive %.3g + atol %.3g) nmse %.3g", k->what,
         k->pass ? "ok" : "FAIL", k->max_err, k->bound, k->naive_err, k->atol, k->nmse);
  if (k->nonfinite) th_append(s, n, " NONFINITE %ld/%ld", k->nonfinite, k->count);
}

/* Compare a q/k/v-like output view with canonical [rows, heads, dim] arrays. */
static th_check compare_view(const th_run *r, const th_tv *v, const char *what,
                             const double *ref, const double *naive) {
  th_acc a;
  acc_init(&a, what);
  const uint8_t *img = r->bufs[v->buf].img;
  for (int32_t b = 0; b < r->B; ++b)
    for (int64_t t = 0; t < th_tv_len(r, v, b); ++t) {
      int64_t row = th_tv_canon_row(r, v, b, t);
      for (int32_t h = 0; h < v->heads; ++h)
        for (int32_t d = 0; d < v->dim; ++d) {
          int64_t ci = (row * v->heads + h) * v->dim + d;
          acc_add(&a, pa_load_f32(img, th_tv_index(r, v, b, t, h, d), r->c.dtype), ref[ci], naive[ci],
                  r->c.dtype);
        }
    }
  return acc_finish(&a, &r->c);
}

int th_guard_ok(const th_run *r, char *msg, size_t n) {
  for (int i = 0; i < TB_COUNT; ++i) {
    const th_buf *b = &r->bufs[i];
    if (!b->output || !b->size) continue;
    for (size_t j = 0; j < b->size; ++j)
      if (!b->inview[j] && b->img[j] != b->init[j]) {
        if (msg) snprintf(msg, n, "%s buffer byte %zu outside the view changed (0x%02x -> 0x%02x)",
                          th_buf_names[i], j, b->init[j], b->img[j]);
        return 0;
      }
  }
  return 1;
}

/* Whether the device copies of the call's inputs still hold what was written
 * (for the backward, out and lse are inputs too). */
static int inputs_intact(th_run *r, int backward, char *msg, size_t n) {
  static const int fwd[] = {TB_Q, TB_K, TB_V, TB_CUQ, TB_CUK, TB_USED, TB_ALIBI, TB_MASK};
  static const int bwd[] = {TB_Q, TB_K, TB_V, TB_O, TB_LSE, TB_DO, TB_CUQ, TB_CUK, TB_USED,
                            TB_ALIBI, TB_MASK};
  const int *ids = backward ? bwd : fwd;
  size_t count = backward ? sizeof bwd / sizeof bwd[0] : sizeof fwd / sizeof fwd[0];
  for (size_t i = 0; i < count; ++i) {
    th_buf *b = &r->bufs[ids[i]];
    if (!b->size || !b->dev) continue;
    uint8_t *now = th_xcalloc(b->size, 1);
    polyattn_status st = polyattn_buffer_read(r->ctx, b->dev, 0, now, b->size);
    size_t at = 0;
    while (st == POLYATTN_OK && at < b->size && now[at] == b->img[at]) ++at;
    free(now);
    if (st != POLYATTN_OK || at < b->size) {
      snprintf(msg, n, "input %s modified by the call (byte %zu)%s", th_buf_names[ids[i]], at,
               st != POLYATTN_OK ? " or unreadable" : "");
      return 0;
    }
  }
  return 1;
}

static polyattn_status build_problem(th_run *r, pa_problem *p, pa_pass pass) {
  const polyattn_tensor *T = r->host_t;
  pa_error err;
  memset(&err, 0, sizeof err);
  int bw = pass == PA_PASS_BACKWARD;
  polyattn_status st = pa_problem_build(
      p, pass, &r->host_params, &T[TB_Q], &T[TB_K], &T[TB_V], &T[TB_O],
      r->want_lse ? &T[TB_LSE] : NULL, bw ? &T[TB_DO] : NULL, bw ? &T[TB_DQ] : NULL,
      bw ? &T[TB_DK] : NULL, bw ? &T[TB_DV] : NULL, 1, &err);
  if (st != POLYATTN_OK)
    snprintf(r->msg, sizeof r->msg, "pa_problem_build on the host copy failed: %s: %s",
             polyattn_status_string(st), err.msg);
  return st;
}

/* Above this many multiply-adds the independent check is skipped (time). */
#define TH_SEMANTICS_MAX_WORK 40000000.0

/* The oracle against tests/semantics.c, on the cases small enough: both are
 * float64 readings of the same rules, so they agree to round-off or one is wrong. */
static int check_semantics(const th_run *r, const double *ref, const double *ref_lse,
                           char *summary, size_t n) {
  double work = 0;
  for (int32_t b = 0; b < r->B; ++b)
    work += (double)r->len_q[b] * r->len_k[b] * r->Hq * (r->D + r->Dv);
  if (work > TH_SEMANTICS_MAX_WORK || r->c.sparsity == POLYATTN_SPARSITY_AUTO_BLOCK) return 1;
  size_t nout = (size_t)r->total_q * r->Hq * r->Dv, nlse = (size_t)r->Hq * r->total_q;
  double *sem = th_xcalloc(nout, sizeof(double)), *sem_lse = th_xcalloc(nlse, sizeof(double));
  th_semantics_forward(r, sem, sem_lse);
  double diff = 0, scale = 1;
  long inf_mismatch = 0;
  for (size_t i = 0; i < nout; ++i) {
    diff = fmax(diff, fabs(sem[i] - ref[i]));
    scale = fmax(scale, fabs(ref[i]));
  }
  for (size_t i = 0; i < nlse; ++i) {
    if (isinf(ref_lse[i]) || isinf(sem_lse[i])) inf_mismatch += ref_lse[i] != sem_lse[i];
    else diff = fmax(diff, fabs(sem_lse[i] - ref_lse[i]) / fmax(1.0, fabs(ref_lse[i])));
  }
  free(sem), free(sem_lse);
  int ok = diff <= 1e-9 * scale && inf_mismatch == 0;
  th_append(summary, n, " | oracle vs semantics.c %s: %.2g", ok ? "ok" : "DISAGREE", diff);
  if (inf_mismatch) th_append(summary, n, " (%ld -inf LSE mismatches)", inf_mismatch);
  return ok;
}

int th_check_forward(th_run *r, char *summary, size_t n) {
  char label[200];
  th_case_label(&r->c, polyattn_context_backend(r->ctx), label, sizeof label);
  snprintf(summary, n, "%s", label);
  pa_problem p;
  if (build_problem(r, &p, PA_PASS_FORWARD) != POLYATTN_OK) {
    th_append(summary, n, ": %s", r->msg);
    return 0;
  }
  size_t nout = (size_t)r->total_q * r->Hq * r->Dv, nlse = (size_t)r->Hq * r->total_q;
  double *ref = th_xcalloc(nout, sizeof(double)), *naive = th_xcalloc(nout, sizeof(double));
  double *ref_lse = th_xcalloc(nlse, sizeof(double)), *naive_lse = th_xcalloc(nlse, sizeof(double));
  pa_oracle_forward(&p, ref, ref_lse);
  pa_naive_forward(&p, naive, naive_lse);

  int ok_sem = check_semantics(r, ref, ref_lse, summary, n);
  th_check ko = compare_view(r, &r->o, "out", ref, naive);
  int ok = ko.pass;
  append_check(summary, n, &ko);

  ok &= ok_sem;
  if (r->want_lse) {
    long bad_inf = 0, nonfinite = 0;
    double max_err = 0;
    const float *lse = (const float *)r->bufs[TB_LSE].img;
    for (int32_t b = 0; b < r->B; ++b)
      for (int32_t h = 0; h < r->Hq; ++h)
        for (int64_t i = 0; i < r->len_q[b]; ++i) {
          int64_t row = (r->c.varlen ? r->q_start[b] : (int64_t)b * r->Sq) + i;
          double want = ref_lse[(size_t)h * r->total_q + row];
          double got = lse[th_lse_index(r, b, h, i)];
          if (isinf(want) && want < 0) {
            bad_inf += !(isinf(got) && got < 0);
          } else if (!isfinite(got)) {
            ++nonfinite;
          } else if (fabs(got - want) > max_err) {
            max_err = fabs(got - want);
          }
        }
    int lok = bad_inf == 0 && nonfinite == 0 && max_err <= 1e-3;
    th_append(summary, n, " | lse %s: err %.3g <= 1e-3", lok ? "ok" : "FAIL", max_err);
    if (bad_inf) th_append(summary, n, " -INF MISMATCH %ld", bad_inf);
    if (nonfinite) th_append(summary, n, " NONFINITE %ld", nonfinite);
    ok &= lok;
  }

  if (r->c.sparsity == POLYATTN_SPARSITY_AUTO_BLOCK) {
    pa_problem resolved;
    uint8_t *mask = th_xcalloc((size_t)pa_auto_block_mask_bytes(&p), 1);
    double density = pa_auto_block_resolve(&p, &resolved, mask);
    th_append(summary, n, " | auto density %.3f -> %s", density,
           resolved.sparsity == POLYATTN_SPARSITY_BLOCK ? "block" : "dense");
    if (r->bufs[TB_MASKOUT].size && resolved.sparsity == POLYATTN_SPARSITY_BLOCK) {
      size_t nm = (size_t)r->B * r->Hq * r->nqb * r->nkb;
      long diff = 0, poisoned = 0;
      const uint8_t *lib = r->bufs[TB_MASKOUT].img;
      for (size_t j = 0; j < nm; ++j) {
        diff += (lib[j] != 0) != (r->oracle_mask_out[j] != 0);
        poisoned += lib[j] == TH_MASK_POISON;
      }
      th_append(summary, n, " | block_mask_out %s: %ld/%zu differ from the estimator",
             diff ? "FAIL" : "ok", diff, nm);
      if (poisoned) th_append(summary, n, " (%ld still hold the poison byte)", poisoned);
      ok &= diff == 0;
    }
    free(mask);
  }

  char gmsg[256];
  if (!th_guard_ok(r, gmsg, sizeof gmsg)) {
    th_append(summary, n, " | GUARD FAIL: %s", gmsg);
    ok = 0;
  }
  if (!inputs_intact(r, 0, gmsg, sizeof gmsg)) {
    th_append(summary, n, " | FAIL: %s", gmsg);
    ok = 0;
  }
  free(ref), free(naive), free(ref_lse), free(naive_lse);
  return ok;
}

int th_check_backward(th_run *r, char *summary, size_t n) {
  char label[200];
  th_case_label(&r->c, polyattn_context_backend(r->ctx), label, sizeof label);
  snprintf(summary, n, "%s backward", label);
  pa_problem p;
  if (build_problem(r, &p, PA_PASS_BACKWARD) != POLYATTN_OK) {
    th_append(summary, n, ": %s", r->msg);
    return 0;
  }
  size_t nq = (size_t)r->total_q * r->Hq * r->D;
  size_t nk = (size_t)r->total_k * r->Hkv * r->D, nv = (size_t)r->total_k * r->Hkv * r->Dv;
  double *rq = th_xcalloc(nq, 8), *rk = th_xcalloc(nk, 8), *rv = th_xcalloc(nv, 8);
  double *nq_ = th_xcalloc(nq, 8), *nk_ = th_xcalloc(nk, 8), *nv_ = th_xcalloc(nv, 8);
  pa_oracle_backward(&p, rq, rk, rv);
  pa_naive_backward(&p, nq_, nk_, nv_);
  th_check c1 = compare_view(r, &r->dq, "dq", rq, nq_);
  th_check c2 = compare_view(r, &r->dk, "dk", rk, nk_);
  th_check c3 = compare_view(r, &r->dv, "dv", rv, nv_);
  append_check(summary, n, &c1);
  append_check(summary, n, &c2);
  append_check(summary, n, &c3);
  int ok = c1.pass && c2.pass && c3.pass;
  char gmsg[256];
  if (!th_guard_ok(r, gmsg, sizeof gmsg)) {
    th_append(summary, n, " | GUARD FAIL: %s", gmsg);
    ok = 0;
  }
  if (!inputs_intact(r, 1, gmsg, sizeof gmsg)) {
    th_append(summary, n, " | FAIL: %s", gmsg);
    ok = 0;
  }
  free(rq), free(rk), free(rv), free(nq_), free(nk_), free(nv_);
  return ok;
}

