/* An independent reading of DESIGN.md "Semantics", to check the oracle itself.
 *
 * The oracle (common/oracle.c) and every backend share common/mask.h, so a
 * misreading of the contract there would pass every oracle comparison. This file
 * is written from the text of DESIGN.md alone and shares nothing with common/ but
 * the dtype decoding; on the small cases the harness requires it to agree with the
 * oracle to round-off. The rules, as read here:
 *   s = scale * q_i . k_j            (scale a float32 parameter, default 1/sqrt(D))
 *   softcap c > 0: s = c * tanh(s / c)
 *   ALiBi: s -= m_h * |i + Lk - Lq - j|
 *   keep j < Lk (Lk = min(len_k, seqused_k[b])), causal j <= i + Lk - Lq, window
 *   i + Lk - Lq - left <= j <= i + Lk - Lq + right (-1 unbounded), block mask bit
 *   (i / block_q, j / block_k) counted from the sequence's start
 *   2:4: per aligned group 4g..4g+3 of kept keys, the two largest s (ties: lower j)
 *   softmax over kept keys; nothing kept: O = 0, LSE = -inf. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "convert.h"
#include "harness_internal.h"

/* The keys row i keeps, and their scores. */
static void row_scores(const th_run *r, int32_t b, int32_t h, int64_t i, int32_t lq, int32_t lk,
                       double *s, int *keep) {
  const th_case *c = &r->c;
  int32_t hk = h / (r->Hq / r->Hkv);
  double scale = c->scale != 0.0f ? (double)c->scale : (double)(1.0f / sqrtf((float)r->D));
  double slope = 0.0;
  if (c->alibi) {
    const float *sl = (const float *)r->bufs[TB_ALIBI].img;
    slope = sl[(c->alibi == TH_ALIBI_BATCH_HEADS ? b * r->Hq : 0) + h];
  }
  int32_t bq = c->block_q > 0 ? c->block_q : 64, bk = c->block_k > 0 ? c->block_k : 64;
  int64_t diag = i + lk - lq;
  const uint8_t *qimg = r->bufs[r->q.buf].img, *kimg = r->bufs[r->k.buf].img;
  for (int32_t j = 0; j < lk; ++j) {
    int kept = 1;
    if (c->causal && j > diag) kept = 0;
    if (c->window_left >= 0 && j < diag - c->window_left) kept = 0;
    if (c->window_right >= 0 && j > diag + c->window_right) kept = 0;
    if (c->sparsity == POLYATTN_SPARSITY_BLOCK) {
      const uint8_t *m = r->bufs[TB_MASK].img;
      int64_t mb = c->mask_per_batch ? b : 0, mh = c->mask_per_head ? h : 0;
      kept &= m[((mb * r->mask_h + mh) * r->nqb + i / bq) * r->nkb + j / bk] != 0;
    }
    double dot = 0.0;
    for (int32_t d = 0; d < r->D; ++d)
      dot += (double)pa_load_f32(qimg, th_tv_index(r, &r->q, b, i, h, d), c->dtype) *
             (double)pa_load_f32(kimg, th_tv_index(r, &r->k, b, j, hk, d), c->dtype);
    double x = scale * dot;
    if (c->softcap > 0.0f) x = c->softcap * tanh(x / c->softcap);
    x -= slope * fabs((double)(diag - j));
    s[j] = x;
    keep[j] = kept;
  }
  if (c->sparsity == POLYATTN_SPARSITY_NM_2_4)
    for (int32_t g = 0; g < lk; g += 4) {
      int n = 0;
      for (int32_t j = g; j < g + 4 && j < lk; ++j) n += keep[j];
      if (n <= 2) continue;
      /* drop the smallest kept until two remain; among equals drop the higher j */
      while (n > 2) {
        int32_t worst = -1;
        for (int32_t j = g; j < g + 4 && j < lk; ++j)
          if (keep[j] && (worst < 0 || s[j] <= s[worst])) worst = j;
        keep[worst] = 0;
        --n;
      }
    }
}

int th_semantics_forward(const th_run *r, double *out, double *lse) {
  const th_case *c = &r->c;
  if (c->sparsity == POLYATTN_SPARSITY_AUTO_BLOCK) return 0;
  int32_t maxk = 1;
  for (int32_t b = 0; b < r->B; ++b)
    if (r->len_k[b] > maxk) maxk = r->len_k[b];
  double *s = th_xcalloc((size_t)maxk, sizeof(double));
  int *keep = th_xcalloc((size_t)maxk, sizeof(int));
  const uint8_t *vimg = r->bufs[r->v.buf].img;
  for (int32_t b = 0; b < r->B; ++b) {
    int32_t lq = r->len_q[b], lk = r->len_k[b];
    if (c->seqused && c->seqused_k[b] < lk) lk = c->seqused_k[b];
    for (int32_t h = 0; h < r->Hq; ++h) {
      int32_t hk = h / (r->Hq / r->Hkv);
      for (int64_t i = 0; i < lq; ++i) {
        int64_t row = th_tv_canon_row(r, &r->q, b, i);
        double *o = out + (row * r->Hq + h) * r->Dv;
        row_scores(r, b, h, i, lq, lk, s, keep);
        double m = -INFINITY;
        for (int32_t j = 0; j < lk; ++j)
          if (keep[j] && s[j] > m) m = s[j];
        memset(o, 0, sizeof(double) * (size_t)r->Dv);
        if (m == -INFINITY) {
          lse[(int64_t)h * r->total_q + row] = -INFINITY;
          continue;
        }
        double sum = 0.0;
        for (int32_t j = 0; j < lk; ++j) {
          if (!keep[j]) continue;
          double p = exp(s[j] - m);
          sum += p;
          for (int32_t d = 0; d < r->Dv; ++d)
            o[d] += p * pa_load_f32(vimg, th_tv_index(r, &r->v, b, j, hk, d), c->dtype);
        }
        for (int32_t d = 0; d < r->Dv; ++d) o[d] /= sum;
        lse[(int64_t)h * r->total_q + row] = m + log(sum);
      }
    }
  }
  free(s);
  free(keep);
  return 1;
}
