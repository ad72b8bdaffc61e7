/* The float64 oracle: the definition of what every backend computes (DESIGN.md,
 * "Semantics"), one (row, key) pair at a time, straight from the rules. FP8 inputs are
 * the decoded e4m3 values times their descale factors (docs/semantics.md, "FP8").
 *
 * The same code, with prec = PA_REF_NAIVE, is the naive low-precision reference of
 * the tolerance rule (common/naive.c): pa_ref_fp() marks each float32 operation and
 * pa_ref_io() each value held in the input dtype; for the oracle both are the
 * identity, so reading the code with them erased gives the float64 definition.
 *
 * Decisions the contract leaves open, kept here so every reader finds them:
 * - The softmax of a row with nothing kept is empty: O = 0, LSE = -inf, and it
 *   contributes no gradient.
 * - Keys past len_k (seqused_k) get dK = dV = 0; so do rows past a sequence.
 * - 2:4 groups are aligned to each sequence's start; the selection is a fixed mask
 *   for the backward (no gradient flows through which two were chosen).
 * - The naive reference selects 2:4 pairs on its float32 scores, before S is
 *   rounded to the dtype (as a kernel holding S in fp32 registers would).
 * - The backward's D_i is sum_j P_ij dP_ij (recomputed; O and LSE are not read),
 *   and the scale is applied to dQ and dK once, at the end.
 * - AUTO_BLOCK problems are resolved by pa_auto_block_resolve; the oracle never
 *   writes the caller's block_mask_out (only the backend under test does). */
#include <stdlib.h>
#include <string.h>

#include "oracle.h"
#include "reference.h"

/* Working arrays of one call, sized for the longest key range. */
typedef struct ref_scratch {
  pa_problem p;        /* the problem actually computed (AUTO_BLOCK resolved) */
  uint8_t *auto_mask;  /* AUTO_BLOCK's chosen mask, or NULL */
  double *k, *v;       /* [len_k][D], [len_k][Dv]: the current kv head */
  double *q, *acc, *dout; /* [D], [Dv], [Dv]: the current query row */
  double *s, *dcap, *prob, *dprob; /* [len_k] per key of the current row */
  int *keep;           /* [len_k] */
} ref_scratch;

static void scratch_free(ref_scratch *w) {
  free(w->auto_mask);
  free(w->k);
  free(w->v);
  free(w->q);
  free(w->acc);
  free(w->dout);
  free(w->s);
  free(w->dcap);
  free(w->prob);
  free(w->dprob);
  free(w->keep);
}

/* Resolve the problem and allocate; 0 on allocation failure. */
static int scratch_init(ref_scratch *w, const pa_problem *p0) {
  memset(w, 0, sizeof(*w));
  w->p = *p0;
  if (p0->sparsity == POLYATTN_SPARSITY_AUTO_BLOCK) {
    pa_problem quiet = *p0;
    quiet.block_mask_out.buf = NULL;
    w->auto_mask = malloc((size_t)pa_auto_block_mask_bytes(p0) + 1);
    if (!w->auto_mask) return 0;
    pa_auto_block_resolve(&quiet, &w->p, w->auto_mask);
  }
  size_t nk = (size_t)pa_ref_max_len_k(&w->p) + 1;
  size_t d = (size_t)w->p.head_dim, dv = (size_t)w->p.head_dim_v;
  w->k = malloc(nk * d * sizeof(double));
  w->v = malloc(nk * dv * sizeof(double));
  w->q = malloc(d * sizeof(double));
  w->acc = malloc(dv * sizeof(double));
  w->dout = malloc(dv * sizeof(double));
  w->s = malloc(nk * sizeof(double));
  w->dcap = malloc(nk * sizeof(double));
  w->prob = malloc(nk * sizeof(double));
  w->dprob = malloc(nk * sizeof(double));
  w->keep = malloc(nk * sizeof(int));
  return w->k && w->v && w->q && w->acc && w->dout && w->s && w->dcap && w->prob &&
         w->dprob && w->keep;
}

/* Outputs of a call that could not allocate are NaN, so no comparison passes. */
static void fill_nan(double *x, int64_t n) {
  for (int64_t t = 0; t < n; ++t) x[t] = NAN;
}

/* A row of q/k/v (or dout) as the real values it stands for: the stored values, times
 * the FP8 descale factor `descale` (1 for other dtypes). */
static void load_row(const pa_problem *p, const pa_view *view, const pa_ref_head *hd,
                     int64_t row, int64_t start, int32_t head, int32_t n, double descale,
                     double *dst) {
  int64_t base = pa_view_row(view, hd->b, row, start, head);
  for (int32_t d = 0; d < n; ++d) dst[d] = pa_load_f32(view->ptr, base + d, p->dtype) * descale;
}

/* K and V of the head's kv head, for every used key. */
static void load_kv(const pa_problem *p, const pa_ref_head *hd, ref_scratch *w) {
  int32_t D = p->head_dim, Dv = p->head_dim_v;
  const double kd = pa_problem_descale(&p->k_descale, hd->b, hd->hk);
  const double vd = pa_problem_descale(&p->v_descale, hd->b, hd->hk);
  for (int32_t j = 0; j < hd->seq.len_k; ++j) {
    load_row(p, &p->k, hd, j, hd->seq.k_start, hd->hk, D, kd, w->k + (int64_t)j * D);
    load_row(p, &p->v, hd, j, hd->seq.k_start, hd->hk, Dv, vd, w->v + (int64_t)j * Dv);
  }
}

/* FP8 (decision 78): the naive reference keeps S in float32 (as the kernel does; e4m3
 * scores would be a yardstick no kernel needs), rounds 2^8 * exp(s - m) to e4m3 (the
 * kernel's P for P.V) and stores out in BF16. Other dtypes: S, P and out in the dtype. */
static polyattn_dtype score_dtype(const pa_problem *p) {
  return p->dtype == POLYATTN_DTYPE_FP8_E4M3 ? POLYATTN_DTYPE_F32 : p->dtype;
}
static polyattn_dtype out_dtype(const pa_problem *p) {
  return p->dtype == POLYATTN_DTYPE_FP8_E4M3 ? POLYATTN_DTYPE_BF16 : p->dtype;
}

/* Steps 1-5 of the semantics for query row i (already in w->q): s[j], keep[j], and
 * dcap[j] = d s / d(scale * q.k), the softcap derivative (1 without softcap). */
static void row_scores(const pa_problem *p, pa_ref_precision prec, const pa_ref_head *hd,
                       ref_scratch *w, int64_t i) {
  int32_t D = p->head_dim, len_k = hd->seq.len_k;
  int use_blocks = p->sparsity == POLYATTN_SPARSITY_BLOCK;
  for (int32_t j = 0; j < len_k; ++j) {
    w->keep[j] = pa_mask_keep(&hd->mask, i, j) &&
                 (!use_blocks || pa_block_mask_keep(&p->block_mask, hd->b, hd->h,
                                                    (int32_t)(i / p->block_q),
                                                    j / p->block_k));
    w->s[j] = -INFINITY;
    w->dcap[j] = 1.0;
    if (!w->keep[j]) continue;
    double dot = 0.0;
    for (int32_t d = 0; d < D; ++d)
      dot = pa_ref_madd(prec, dot, w->q[d], w->k[(int64_t)j * D + d]);
    if (prec == PA_REF_F64) {
      w->s[j] = pa_score_f64(dot, p->scale, p->softcap, hd->slope, &hd->mask, i, j);
      if (p->softcap > 0.0f) {
        double t = tanh(dot * p->scale / p->softcap);
        w->dcap[j] = 1.0 - t * t;
      }
    } else {
      w->s[j] = pa_score((float)dot, p->scale, p->softcap, (float)hd->slope, &hd->mask,
                         i, j);
      if (p->softcap > 0.0f) {
        float t = tanhf((float)dot * p->scale / p->softcap);
        w->dcap[j] = 1.0f - t * t;
      }
    }
  }
  if (p->sparsity == POLYATTN_SPARSITY_NM_2_4) {
    for (int32_t g = 0; g < len_k; g += 4) {
      double s4[4];
      float f4[4];
      int k4[4];
      for (int a = 0; a < 4; ++a) {
        int in = g + a < len_k;
        k4[a] = in && w->keep[g + a];
        s4[a] = k4[a] ? w->s[g + a] : 0.0;
        f4[a] = (float)s4[a];
      }
      if (prec == PA_REF_F64)
        pa_select_2_4_f64(s4, k4);
      else
        pa_select_2_4_f32(f4, k4);
      for (int a = 0; a < 4 && g + a < len_k; ++a) w->keep[g + a] = k4[a];
    }
  }
  for (int32_t j = 0; j < len_k; ++j)
    if (w->keep[j]) w->s[j] = pa_ref_io(prec, score_dtype(p), w->s[j]);
}

/* Step 6: P of the row into w->prob (0 where not kept); *m and *l receive the
 * maximum and sum of exp(s - m). Returns 0 when the row keeps nothing. */
static int row_probs(const pa_problem *p, pa_ref_precision prec, const pa_ref_head *hd,
                     ref_scratch *w, double *m, double *l) {
  int32_t len_k = hd->seq.len_k;
  *m = -INFINITY;
  *l = 0.0;
  for (int32_t j = 0; j < len_k; ++j)
    if (w->keep[j] && w->s[j] > *m) *m = w->s[j];
  if (*m == -INFINITY) return 0;
  for (int32_t j = 0; j < len_k; ++j) {
    w->prob[j] = 0.0;
    if (w->keep[j]) {
      w->prob[j] = pa_ref_exp(prec, pa_ref_fp(prec, w->s[j] - *m));
      *l = pa_ref_fp(prec, *l + w->prob[j]);
    }
  }
  if (p->dtype == POLYATTN_DTYPE_FP8_E4M3) {
    const double l8 = pa_ref_fp(prec, 256.0 * *l);
    for (int32_t j = 0; j < len_k; ++j)
      w->prob[j] = pa_ref_fp(prec, pa_ref_io(prec, p->dtype, 256.0 * w->prob[j]) / l8);
    return 1;
  }
  for (int32_t j = 0; j < len_k; ++j)
    w->prob[j] = pa_ref_io(prec, p->dtype, pa_ref_fp(prec, w->prob[j] / *l));
  return 1;
}

void pa_reference_forward(const pa_problem *p0, pa_ref_precision prec, double *out,
                          double *lse) {
  int64_t n_out = p0->total_q * p0->heads_q * p0->head_dim_v;
  int64_t n_lse = p0->total_q * p0->heads_q;
  ref_scratch w;
  if (!scratch_init(&w, p0)) {
    fill_nan(out, n_out);
    if (lse) fill_nan(lse, n_lse);
    scratch_free(&w);
    return;
  }
  const pa_problem *p = &w.p;
  int32_t Hq = p->heads_q, Dv = p->head_dim_v;
  for (int64_t t = 0; t < n_out; ++t) out[t] = 0.0;
  for (int64_t t = 0; lse && t < n_lse; ++t) lse[t] = -INFINITY;

  for (int32_t b = 0; b < p->batch; ++b) {
    for (int32_t h = 0; h < Hq; ++h) {
      pa_ref_head hd = pa_ref_head_make(p, b, h);
      load_kv(p, &hd, &w);
      const double qd = pa_problem_descale(&p->q_descale, b, hd.hk);
      for (int64_t i = 0; i < hd.seq.len_q; ++i) {
        load_row(p, &p->q, &hd, i, hd.seq.q_start, h, p->head_dim, qd, w.q);
        row_scores(p, prec, &hd, &w, i);
        double m, l;
        if (!row_probs(p, prec, &hd, &w, &m, &l)) continue;
        for (int32_t d = 0; d < Dv; ++d) w.acc[d] = 0.0;
        for (int32_t j = 0; j < hd.seq.len_k; ++j) {
          if (!w.keep[j]) continue;
          for (int32_t d = 0; d < Dv; ++d)
            w.acc[d] = pa_ref_madd(prec, w.acc[d], w.prob[j], w.v[(int64_t)j * Dv + d]);
        }
        int64_t row = hd.q_row0 + i;
        double *o = out + (row * Hq + h) * Dv;
        for (int32_t d = 0; d < Dv; ++d) o[d] = pa_ref_io(prec, out_dtype(p), w.acc[d]);
        if (lse)
          lse[(int64_t)h * p->total_q + row] = pa_ref_fp(prec, m + pa_ref_log(prec, l));
      }
    }
  }
  scratch_free(&w);
}

/* Gradients of sum(out * dout): with P the row's probabilities,
 *   dV_j += P_ij dO_i;  dP_ij = dO_i . V_j;  D_i = sum_j P_ij dP_ij;
 *   dS_ij = P_ij (dP_ij - D_i) * dcap_ij   (through the softcap);
 *   dQ_i += scale dS_ij K_j;  dK_j += scale dS_ij Q_i. */
void pa_reference_backward(const pa_problem *p0, pa_ref_precision prec, double *dq,
                           double *dk, double *dv) {
  int64_t n_dq = p0->total_q * p0->heads_q * p0->head_dim;
  int64_t n_dk = p0->total_k * p0->heads_kv * p0->head_dim;
  int64_t n_dv = p0->total_k * p0->heads_kv * p0->head_dim_v;
  ref_scratch w;
  if (!scratch_init(&w, p0)) {
    fill_nan(dq, n_dq);
    fill_nan(dk, n_dk);
    fill_nan(dv, n_dv);
    scratch_free(&w);
    return;
  }
  const pa_problem *p = &w.p;
  int32_t Hq = p->heads_q, Hkv = p->heads_kv, D = p->head_dim, Dv = p->head_dim_v;
  for (int64_t t = 0; t < n_dq; ++t) dq[t] = 0.0;
  for (int64_t t = 0; t < n_dk; ++t) dk[t] = 0.0;
  for (int64_t t = 0; t < n_dv; ++t) dv[t] = 0.0;

  for (int32_t b = 0; b < p->batch; ++b) {
    for (int32_t h = 0; h < Hq; ++h) {
      pa_ref_head hd = pa_ref_head_make(p, b, h);
      load_kv(p, &hd, &w);
      for (int64_t i = 0; i < hd.seq.len_q; ++i) {
        load_row(p, &p->q, &hd, i, hd.seq.q_start, h, D, 1.0, w.q);
        load_row(p, &p->dout, &hd, i, hd.seq.q_start, h, Dv, 1.0, w.dout);
        row_scores(p, prec, &hd, &w, i);
        double m, l;
        if (!row_probs(p, prec, &hd, &w, &m, &l)) continue;
        double di = 0.0;
        for (int32_t j = 0; j < hd.seq.len_k; ++j) {
          if (!w.keep[j]) continue;
          double dp = 0.0;
          for (int32_t d = 0; d < Dv; ++d)
            dp = pa_ref_madd(prec, dp, w.dout[d], w.v[(int64_t)j * Dv + d]);
          w.dprob[j] = dp;
          di = pa_ref_madd(prec, di, w.prob[j], dp);
        }
        double *dq_i = dq + ((hd.q_row0 + i) * Hq + h) * D;
        for (int32_t j = 0; j < hd.seq.len_k; ++j) {
          if (!w.keep[j]) continue;
          double ds = pa_ref_fp(prec, w.prob[j] * pa_ref_fp(prec, w.dprob[j] - di));
          ds = pa_ref_io(prec, p->dtype, pa_ref_fp(prec, ds * w.dcap[j]));
          int64_t krow = (hd.k_row0 + j) * Hkv + hd.hk;
          double *dk_j = dk + krow * D, *dv_j = dv + krow * Dv;
          for (int32_t d = 0; d < Dv; ++d)
            dv_j[d] = pa_ref_madd(prec, dv_j[d], w.prob[j], w.dout[d]);
          for (int32_t d = 0; d < D; ++d) {
            dq_i[d] = pa_ref_madd(prec, dq_i[d], ds, w.k[(int64_t)j * D + d]);
            dk_j[d] = pa_ref_madd(prec, dk_j[d], ds, w.q[d]);
          }
        }
      }
    }
  }
  for (int64_t t = 0; t < n_dq; ++t)
    dq[t] = pa_ref_io(prec, p->dtype, pa_ref_fp(prec, dq[t] * p->scale));
  for (int64_t t = 0; t < n_dk; ++t)
    dk[t] = pa_ref_io(prec, p->dtype, pa_ref_fp(prec, dk[t] * p->scale));
  for (int64_t t = 0; t < n_dv; ++t) dv[t] = pa_ref_io(prec, p->dtype, dv[t]);
  scratch_free(&w);
}

void pa_oracle_forward(const pa_problem *p, double *out, double *lse) {
  pa_reference_forward(p, PA_REF_F64, out, lse);
}

void pa_oracle_backward(const pa_problem *p, double *dq, double *dk, double *dv) {
  pa_reference_backward(p, PA_REF_F64, dq, dk, dv);
}
