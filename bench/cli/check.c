#include "check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h" /* struct polyattn_buffer: host views without a context */
#include "convert.h"
#include "oracle.h"
#include "problem.h"

/* ------------------------------------------------------------- error tallies */

typedef struct err_acc {
  double max_err, max_naive, max_round, sum_sq_err, sum_sq_ref;
  long long nonfinite, count;
} err_acc;

/* One element: `out` from the backend, `ref` from the oracle, `naive` from the
 * naive reference (NAN when there is none, e.g. the AUTO_BLOCK approximation). */
static void acc_add(err_acc *a, double out, double ref, double naive, polyattn_dtype dt) {
  a->count++;
  if (!isfinite(ref)) { /* LSE of an empty row: -inf expected, exactly */
    if (out != ref) a->nonfinite++;
    return;
  }
  if (!isfinite(out)) {
    a->nonfinite++;
    return;
  }
  double e = fabs(out - ref);
  if (e > a->max_err) a->max_err = e;
  if (!isnan(naive) && fabs(naive - ref) > a->max_naive) a->max_naive = fabs(naive - ref);
  double rd = fabs(pa_round_to_dtype(ref, dt) - ref);
  if (rd > a->max_round) a->max_round = rd;
  a->sum_sq_err += e * e;
  a->sum_sq_ref += ref * ref;
}

/* The tolerance rule of DESIGN.md ("Tests"); LSE uses a fixed 1e-3. */
static err_stats acc_finish(const err_acc *a, int softcap, int is_lse) {
  err_stats s = {0};
  s.max_err = a->max_err;
  s.nonfinite = a->nonfinite;
  s.count = a->count;
  s.bound = is_lse ? 1e-3 : 2.0 * a->max_naive + (softcap ? 3.0 : 2.0) * a->max_round;
  s.nmse = a->sum_sq_ref > 0 ? a->sum_sq_err / a->sum_sq_ref : (a->sum_sq_err > 0 ? INFINITY : 0);
  s.pass = a->count > 0 && s.nonfinite == 0 && s.max_err <= s.bound &&
           (is_lse || s.nmse <= 5e-4);
  return s;
}

/* ---------------------------------------------------------------- host views */

/* A region of the problem: batch entries [b0, b0 + nb), query heads
 * [hq0, hq0 + nhq) (all heads, or heads of one kv group), rows [i0, Sq). */
typedef struct region {
  int32_t b0, nb, hq0, nhq, i0;
} region;

/* The mask a region is checked with. */
typedef struct mask_src {
  polyattn_sparsity sparsity;
  const uint8_t *mask; /* BLOCK: [1, 1, qb, kb] (per_head 0) or [B, Hq, qb, kb] */
  int per_head;
} mask_src;

enum { HV_Q, HV_K, HV_V, HV_O, HV_LSE, HV_DO, HV_DQ, HV_DK, HV_DV, HV_ALIBI, HV_MASK, HV_N };

typedef struct host_views {
  struct polyattn_buffer buf[HV_N];
  polyattn_tensor t[HV_N];
  polyattn_params params;
} host_views;

/* A view of host array `base` (of `elems` elements): shape and strides given,
 * starting `first` elements in. */
static void host_view(host_views *hv, int slot, const void *base, int64_t elems,
                      polyattn_dtype dt, int ndim, const int64_t *shape, const int64_t *strides,
                      int64_t first) {
  size_t es = polyattn_dtype_size(dt);
  hv->buf[slot] = (struct polyattn_buffer){.kind = POLYATTN_MEMORY_HOST,
                                           .handle = (void *)base,
                                           .address = (void *)base,
                                           .size = (size_t)elems * es};
  polyattn_tensor *t = &hv->t[slot];
  memset(t, 0, sizeof *t);
  t->buffer = &hv->buf[slot];
  t->offset = (size_t)first * es;
  t->dtype = dt;
  t->ndim = ndim;
  for (int i = 0; i < ndim; i++) {
    t->shape[i] = shape[i];
    t->strides[i] = strides[i];
  }
}

/* Build the pa_problem of region `g` of run `r`, as a backend would see it. */
static polyattn_status build_region(const attn_run *r, const region *g, pa_pass pass,
                                    const mask_src *ms, host_views *hv, pa_problem *p) {
  const attn_config *c = &r->cfg;
  const attn_host *h = &r->host;
  polyattn_dtype dt = c->dtype;
  int32_t group = c->heads / c->kv_heads;
  int32_t hk0 = g->nhq == c->heads ? 0 : g->hq0 / group;
  int32_t nhk = g->nhq == c->heads ? c->kv_heads : 1;
  int64_t rows = c->seq_q - g->i0, D = c->dim, Dv = c->dim_v;
  int64_t Sq = c->seq_q, Sk = c->seq_k, Hq = c->heads, Hk = c->kv_heads, B = c->batch;

  int64_t sq[4] = {g->nb, rows, g->nhq, D}, stq[4] = {Sq * Hq * D, Hq * D, D, 1};
  int64_t so[4] = {g->nb, rows, g->nhq, Dv}, sto[4] = {Sq * Hq * Dv, Hq * Dv, Dv, 1};
  int64_t sk[4] = {g->nb, Sk, nhk, D}, stk[4] = {Sk * Hk * D, Hk * D, D, 1};
  int64_t sv[4] = {g->nb, Sk, nhk, Dv}, stv[4] = {Sk * Hk * Dv, Hk * Dv, Dv, 1};
  int64_t q0 = (g->b0 * Sq + g->i0) * Hq + g->hq0, k0 = g->b0 * Sk * Hk + hk0;
  host_view(hv, HV_Q, h->q, B * Sq * Hq * D, dt, 4, sq, stq, q0 * D);
  host_view(hv, HV_K, h->k, B * Sk * Hk * D, dt, 4, sk, stk, k0 * D);
  host_view(hv, HV_V, h->v, B * Sk * Hk * Dv, dt, 4, sv, stv, k0 * Dv);
  host_view(hv, HV_O, h->o, B * Sq * Hq * Dv,
            dt == POLYATTN_DTYPE_FP8_E4M3 ? POLYATTN_DTYPE_BF16 : dt, 4, so, sto, q0 * Dv);
  int64_t sl[3] = {g->nb, g->nhq, rows}, stl[3] = {Hq * Sq, Sq, 1};
  host_view(hv, HV_LSE, h->lse, B * Hq * Sq, POLYATTN_DTYPE_F32, 3, sl, stl,
            (g->b0 * Hq + g->hq0) * Sq + g->i0);
  if (pass == PA_PASS_BACKWARD) {
    host_view(hv, HV_DO, h->dout, B * Sq * Hq * Dv, dt, 4, so, sto, q0 * Dv);
    host_view(hv, HV_DQ, h->dq, B * Sq * Hq * D, dt, 4, sq, stq, q0 * D);
    host_view(hv, HV_DK, h->dk, B * Sk * Hk * D, dt, 4, sk, stk, k0 * D);
    host_view(hv, HV_DV, h->dv, B * Sk * Hk * Dv, dt, 4, sv, stv, k0 * Dv);
  }

  polyattn_params *pr = &hv->params;
  *pr = r->params;
  pr->alibi_slopes = NULL;
  pr->block_mask = NULL;
  pr->block_mask_out = NULL;
  pr->sparsity = ms->sparsity;
  if (c->alibi) {
    int64_t sa[1] = {g->nhq}, sta[1] = {1};
    host_view(hv, HV_ALIBI, h->alibi, Hq, POLYATTN_DTYPE_F32, 1, sa, sta, g->hq0);
    pr->alibi_slopes = &hv->t[HV_ALIBI];
  }
  if (ms->sparsity == POLYATTN_SPARSITY_BLOCK) {
    /* i0 is a multiple of the block size, so query block qb of the region is
     * block i0 / block + qb of the whole problem. */
    int64_t qb = r->qblocks, kb = r->kblocks, rqb = (rows + c->block - 1) / c->block;
    int64_t first = (g->i0 / c->block) * kb, elems = qb * kb;
    int64_t sm[4] = {1, 1, rqb, kb}, stm[4] = {qb * kb, qb * kb, kb, 1};
    if (ms->per_head) {
      sm[0] = g->nb;
      sm[1] = g->nhq;
      stm[0] = Hq * qb * kb;
      first += (g->b0 * Hq + g->hq0) * qb * kb;
      elems = B * Hq * qb * kb;
    }
    host_view(hv, HV_MASK, ms->mask, elems, POLYATTN_DTYPE_U8, 4, sm, stm, first);
    pr->block_mask = &hv->t[HV_MASK];
  }
  pa_error err;
  const polyattn_tensor *t = hv->t;
  polyattn_status st;
  if (pass == PA_PASS_FORWARD)
    st = pa_problem_build(p, pass, pr, &t[HV_Q], &t[HV_K], &t[HV_V], &t[HV_O], &t[HV_LSE], NULL,
                          NULL, NULL, NULL, 1, &err);
  else
    st = pa_problem_build(p, pass, pr, &t[HV_Q], &t[HV_K], &t[HV_V], &t[HV_O], &t[HV_LSE],
                          &t[HV_DO], &t[HV_DQ], &t[HV_DK], &t[HV_DV], 1, &err);
  if (st != POLYATTN_OK)
    fprintf(stderr, "polyattn: check: building the sample problem failed: %s: %s\n",
            polyattn_status_string(st), err.msg);
  return st;
}

/* ------------------------------------------------------------------- samples */

static double *dalloc(int64_t n) { return malloc((size_t)(n > 0 ? n : 1) * sizeof(double)); }

/* The check's state across samples. */
typedef struct checker {
  const attn_run *r;
  mask_src mask;  /* what the backend was asked to compute, resolved */
  err_acc out, lse, approx, dq, dk, dv;
} checker;

/* Forward of region g (one head, the tail rows): O and LSE against the oracle;
 * for AUTO_BLOCK also O against dense attention (the approximation). */
static int check_forward(checker *ck, const region *g) {
  const attn_run *r = ck->r;
  const attn_config *c = &r->cfg;
  int is_auto = c->sparsity == POLYATTN_SPARSITY_AUTO_BLOCK;
  host_views hv, hv_dense;
  pa_problem p, p_dense;
  if (build_region(r, g, PA_PASS_FORWARD, &ck->mask, &hv, &p) != POLYATTN_OK) return 0;
  mask_src none = {POLYATTN_SPARSITY_NONE, NULL, 0};
  if (is_auto && build_region(r, g, PA_PASS_FORWARD, &none, &hv_dense, &p_dense) != POLYATTN_OK)
    return 0;
  int64_t rows = c->seq_q - g->i0, n = rows * g->nhq * c->dim_v, nl = rows * g->nhq;
  double *ref = dalloc(n), *naive = dalloc(n), *dense = dalloc(is_auto ? n : 1);
  double *ref_lse = dalloc(nl), *naive_lse = dalloc(nl), *dense_lse = dalloc(nl);
  int ok = ref && naive && dense && ref_lse && naive_lse && dense_lse;
  if (ok) {
    pa_oracle_forward(&p, ref, ref_lse);
    pa_naive_forward(&p, naive, naive_lse);
    if (is_auto) pa_oracle_forward(&p_dense, dense, dense_lse);
  }
  const polyattn_dtype dto = c->dtype == POLYATTN_DTYPE_FP8_E4M3 ? POLYATTN_DTYPE_BF16 : c->dtype;
  for (int64_t i = 0; ok && i < rows; i++)
    for (int32_t hh = 0; hh < g->nhq; hh++) {
      int64_t row = (g->b0 * (int64_t)c->seq_q + g->i0 + i) * c->heads + g->hq0 + hh;
      for (int32_t d = 0; d < c->dim_v; d++) {
        int64_t o = (i * g->nhq + hh) * c->dim_v + d;
        double out = pa_load_f32(r->host.o, row * c->dim_v + d, dto);
        acc_add(&ck->out, out, ref[o], naive[o], dto);
        if (is_auto) acc_add(&ck->approx, out, dense[o], NAN, dto);
      }
      int64_t l = ((int64_t)g->b0 * c->heads + g->hq0 + hh) * c->seq_q + g->i0 + i;
      acc_add(&ck->lse, r->host.lse[l], ref_lse[hh * rows + i], NAN, POLYATTN_DTYPE_F32);
    }
  free(ref);
  free(naive);
  free(dense);
  free(ref_lse);
  free(naive_lse);
  free(dense_lse);
  if (!ok) fprintf(stderr, "polyattn: check: out of memory\n");
  return ok;
}

/* Compare n values of a backend gradient (dtype, at `base` + row offsets) with
 * the oracle's canonical [rows, heads, dim] arrays. */
static void compare_rows(err_acc *a, const void *got, polyattn_dtype dt, int64_t first_row,
                         int64_t row_stride, int64_t rows, int32_t nh, int32_t dim,
                         const double *ref, const double *naive) {
  for (int64_t i = 0; i < rows; i++)
    for (int32_t hh = 0; hh < nh; hh++)
      for (int32_t d = 0; d < dim; d++) {
        int64_t o = (i * nh + hh) * dim + d;
        double x = pa_load_f32(got, first_row + i * row_stride + (int64_t)hh * dim + d, dt);
        acc_add(a, x, ref[o], naive[o], dt);
      }
}

/* Backward of region g: dQ of its rows and heads; with `want_dkv` (g holds every
 * row and the whole GQA group of one kv head) also dK and dV. */
static int check_backward(checker *ck, const region *g, int want_dkv) {
  const attn_run *r = ck->r;
  const attn_config *c = &r->cfg;
  host_views hv;
  pa_problem p;
  if (build_region(r, g, PA_PASS_BACKWARD, &ck->mask, &hv, &p) != POLYATTN_OK) return 0;
  int32_t nhk = g->nhq == c->heads ? c->kv_heads : 1;
  int32_t hk0 = g->nhq == c->heads ? 0 : g->hq0 / (c->heads / c->kv_heads);
  int64_t rows = c->seq_q - g->i0, nq = rows * g->nhq * c->dim;
  int64_t nk = (int64_t)c->seq_k * nhk * c->dim, nv = (int64_t)c->seq_k * nhk * c->dim_v;
  double *rq = dalloc(nq), *rk = dalloc(nk), *rv = dalloc(nv);
  double *nq_ = dalloc(nq), *nk_ = dalloc(nk), *nv_ = dalloc(nv);
  int ok = rq && rk && rv && nq_ && nk_ && nv_;
  if (ok) {
    pa_oracle_backward(&p, rq, rk, rv);
    pa_naive_backward(&p, nq_, nk_, nv_);
    int64_t q_first = ((int64_t)g->b0 * c->seq_q + g->i0) * c->heads * c->dim +
                      (int64_t)g->hq0 * c->dim;
    compare_rows(&ck->dq, r->host.dq, c->dtype, q_first, (int64_t)c->heads * c->dim, rows,
                 g->nhq, c->dim, rq, nq_);
    if (want_dkv) {
      int64_t k_row = (int64_t)g->b0 * c->seq_k * c->kv_heads + hk0;
      compare_rows(&ck->dk, r->host.dk, c->dtype, k_row * c->dim,
                   (int64_t)c->kv_heads * c->dim, c->seq_k, nhk, c->dim, rk, nk_);
      compare_rows(&ck->dv, r->host.dv, c->dtype, k_row * c->dim_v,
                   (int64_t)c->kv_heads * c->dim_v, c->seq_k, nhk, c->dim_v, rv, nv_);
    }
  }
  free(rq);
  free(rk);
  free(rv);
  free(nq_);
  free(nk_);
  free(nv_);
  if (!ok) fprintf(stderr, "polyattn: check: out of memory\n");
  return ok;
}

/* ----------------------------------------------------------------- the check */

/* Above this many oracle multiply-adds, dK/dV (which need every query row of a
 * kv head's group) are not checked: the oracle is scalar double code. */
static const double dkv_work_limit = 6e8;

int check_resolve_auto(attn_run *r, check_report *rep) {
  const attn_config *c = &r->cfg;
  region all = {0, c->batch, 0, c->heads, 0};
  mask_src as_asked = {POLYATTN_SPARSITY_AUTO_BLOCK, NULL, 0};
  host_views hv;
  pa_problem p, resolved;
  if (build_region(r, &all, PA_PASS_FORWARD, &as_asked, &hv, &p) != POLYATTN_OK) return 0;
  free(rep->auto_mask);
  rep->auto_mask = malloc((size_t)pa_auto_block_mask_bytes(&p) + 1);
  if (!rep->auto_mask) return 0;
  rep->auto_density = pa_auto_block_resolve(&p, &resolved, rep->auto_mask);
  rep->auto_dense = resolved.sparsity == POLYATTN_SPARSITY_NONE;
  int64_t n = (int64_t)c->batch * c->heads * r->qblocks * r->kblocks;
  rep->auto_mask_diff = 0;
  for (int64_t i = 0; i < n; i++) rep->auto_mask_diff += (rep->auto_mask[i] != 0) != (r->host.mask[i] != 0);
  if (rep->auto_dense) { /* the forward ran dense: so must the backward */
    r->bwd_params.sparsity = POLYATTN_SPARSITY_NONE;
    r->bwd_params.block_mask = NULL;
  }
  return 1;
}

int check_run(const attn_run *r, check_report *rep) {
  const attn_config *c = &r->cfg;
  checker ck;
  memset(&ck, 0, sizeof ck);
  ck.r = r;
  ck.mask.sparsity = c->sparsity;
  if (c->sparsity == POLYATTN_SPARSITY_BLOCK) {
    ck.mask.mask = r->host.mask;
  } else if (c->sparsity == POLYATTN_SPARSITY_AUTO_BLOCK) {
    ck.mask.sparsity = rep->auto_dense ? POLYATTN_SPARSITY_NONE : POLYATTN_SPARSITY_BLOCK;
    ck.mask.mask = rep->auto_mask;
    ck.mask.per_head = 1;
  }
  /* The tail rows, from a block boundary (block masks stay aligned). */
  int32_t i0 = c->seq_q > CHECK_ROWS ? (c->seq_q - CHECK_ROWS) / c->block * c->block : 0;
  rep->first_row = i0;
  region samples[2] = {{0, 1, 0, 1, i0}, {c->batch - 1, 1, c->heads - 1, 1, i0}};
  rep->samples = c->batch == 1 && c->heads == 1 ? 1 : 2;
  int ok = 1;
  for (int s = 0; ok && s < rep->samples; s++) ok = check_forward(&ck, &samples[s]);
  if (ok && c->backward) {
    rep->grads_checked = 1;
    for (int s = 0; ok && s < rep->samples; s++) ok = check_backward(&ck, &samples[s], 0);
    int32_t group = c->heads / c->kv_heads;
    double work = (double)group * c->seq_q * c->seq_k * (c->dim + c->dim_v);
    if (ok && work <= dkv_work_limit) { /* every row of kv head 0's group, batch 0 */
      region whole = {0, 1, 0, group, 0};
      rep->dkv_checked = 1;
      ok = check_backward(&ck, &whole, 1);
    }
  }
  rep->ok = ok;
  if (!ok) return 0;
  int cap = c->softcap > 0;
  rep->out = acc_finish(&ck.out, cap, 0);
  rep->lse = acc_finish(&ck.lse, cap, 1);
  rep->approx = acc_finish(&ck.approx, cap, 0);
  rep->pass = rep->out.pass && rep->lse.pass;
  rep->hopeless = rep->out.nonfinite || rep->lse.nonfinite || rep->out.nmse > 1e-2;
  if (rep->grads_checked) {
    rep->dq = acc_finish(&ck.dq, cap, 0);
    rep->pass = rep->pass && rep->dq.pass;
    rep->hopeless = rep->hopeless || rep->dq.nonfinite || rep->dq.nmse > 1e-2;
  }
  if (rep->dkv_checked) {
    rep->dk = acc_finish(&ck.dk, cap, 0);
    rep->dv = acc_finish(&ck.dv, cap, 0);
    rep->pass = rep->pass && rep->dk.pass && rep->dv.pass;
    rep->hopeless = rep->hopeless || rep->dk.nonfinite || rep->dv.nonfinite ||
                    rep->dk.nmse > 1e-2 || rep->dv.nmse > 1e-2;
  }
  return 1;
}

static void print_stats(const char *name, const err_stats *s, int is_lse) {
  printf("  %-4s max abs err %.3e  (bound %.3e)", name, s->max_err, s->bound);
  if (!is_lse) printf("  nmse %.3e", s->nmse);
  if (s->nonfinite) printf("  %lld NaN/Inf", s->nonfinite);
  printf("  %s\n", s->pass ? "ok" : "FAIL");
}

void check_report_free(check_report *rep) {
  free(rep->auto_mask);
  rep->auto_mask = NULL;
}

void check_print(const attn_run *r, const check_report *rep) {
  const attn_config *c = &r->cfg;
  printf("check against the float64 oracle: rows [%d, %d) of (b=0, h=0)", rep->first_row,
         c->seq_q);
  if (rep->samples > 1) printf(" and (b=%d, h=%d)", c->batch - 1, c->heads - 1);
  printf("\n");
  print_stats("out", &rep->out, 0);
  print_stats("lse", &rep->lse, 1);
  if (rep->grads_checked) print_stats("dq", &rep->dq, 0);
  if (rep->dkv_checked) {
    print_stats("dk", &rep->dk, 0);
    print_stats("dv", &rep->dv, 0);
  } else if (rep->grads_checked) {
    printf("  dk, dv: not checked (the oracle needs every row of a head; use a smaller "
           "--seq)\n");
  }
  if (c->sparsity == POLYATTN_SPARSITY_AUTO_BLOCK)
    printf("  approximation vs dense attention: max abs err %.3e  nmse %.3e\n",
           rep->approx.max_err, rep->approx.nmse);
  printf("%s\n", rep->pass ? "PASS" : "FAIL (outside the tolerance rule of DESIGN.md)");
}
