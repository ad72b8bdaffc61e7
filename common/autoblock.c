/* AUTO_BLOCK: the cheap pre-pass of DESIGN.md that chooses a block mask.
 *
 * The estimator. For batch entry b, query head h and query block qb, whose rows
 * are [i0, i1) = [qb * block_q, min(i0 + block_q, len_q)):
 *   qbar     = mean of the block's Q rows;
 *   kbar_kb  = mean of key block kb's K rows (h's kv head, keys < len_k);
 *   allowed  = the keys the causal / window masks let any row of [i0, i1) see
 *              (pa_mask_rows_range), within [0, len_k); a key block is allowed when
 *              it holds n_kb > 0 of them;
 *   e_kb     = pa_score_f64(qbar . kbar_kb) at the block's centre row and the centre
 *              of its allowed keys (scale, softcap and ALiBi as for real scores);
 *   mass_kb  = n_kb * exp(e_kb - max e): each allowed key counted as if it scored
 *              the pooled score.
 * Kept always (when allowed): key block 0, where attention sinks live, and the
 * diagonal blocks, from the one holding the first row's diagonal key position to
 * the one holding the last row's (positions clamped to [0, len_k)). Then the other
 * allowed blocks by decreasing mass (ties: lower kb) until the kept mass reaches
 * block_threshold * the total. A threshold of 1 keeps every allowed block, so that
 * rounding in the sums can never drop one and the result is exactly dense.
 *
 * The density is kept blocks / allowed blocks over every (b, h, qb); 1 when nothing
 * is allowed (there is nothing to skip). The mask is [B][Hq][mask_qblocks]
 * [mask_kblocks] bytes, 1 keep / 0 drop, and 0 for blocks outside a sequence.
 * If scratch cannot be allocated every block is kept: exact, density 1. */
#include <stdlib.h>
#include <string.h>

#include "oracle.h"
#include "reference.h"

typedef struct kb_cand {
  double mass;
  int32_t kb;
} kb_cand;

/* Decreasing mass, then increasing kb: a total order, so the choice is unique. */
static int cand_cmp(const void *pa, const void *pb) {
  const kb_cand *a = pa, *b = pb;
  if (a->mass != b->mass) return a->mass > b->mass ? -1 : 1;
  return (a->kb > b->kb) - (a->kb < b->kb);
}

static int64_t mask_only_bytes(const pa_problem *p) {
  return (int64_t)p->batch * p->heads_q * p->mask_qblocks * p->mask_kblocks;
}

/* The estimator's scratch, per (b, kv head): pooled K per key block, pooled Q,
 * scores, allowed counts and the candidate list. */
static int64_t scratch_bytes(const pa_problem *p) {
  int64_t nk = (int64_t)p->mask_kblocks + 1, D = p->head_dim;
  return (nk * D + D + nk) * (int64_t)sizeof(double) + nk * (int64_t)sizeof(int64_t) +
         nk * (int64_t)sizeof(kb_cand);
}

/* Where the scratch starts after the mask: 8-byte aligned. */
static int64_t scratch_offset(const pa_problem *p) { return (mask_only_bytes(p) + 15) / 16 * 16; }

int64_t pa_auto_block_mask_bytes(const pa_problem *p) {
  return scratch_offset(p) + scratch_bytes(p);
}

/* Mean of rows [r0, r1) of head `head` of a q/k-like view, into dst[D]. */
static void mean_rows(const pa_problem *p, const pa_view *view, int32_t b, int64_t start,
                      int32_t head, int64_t r0, int64_t r1, double *dst) {
  int32_t D = p->head_dim;
  for (int32_t d = 0; d < D; ++d) dst[d] = 0.0;
  for (int64_t r = r0; r < r1; ++r) {
    int64_t base = pa_view_row(view, b, r, start, head);
    for (int32_t d = 0; d < D; ++d) dst[d] += pa_load_f32(view->ptr, base + d, p->dtype);
  }
  for (int32_t d = 0; d < D; ++d) dst[d] /= (double)(r1 - r0);
}

/* Scratch of one estimate: per key block of the current (b, kv head). */
typedef struct est_scratch {
  double *kbar;   /* [nkb][D] */
  double *qbar;   /* [D] */
  double *e;      /* [nkb] pooled scores */
  int64_t *n;     /* [nkb] allowed keys; 0: block not allowed */
  kb_cand *cand;  /* [nkb] */
} est_scratch;

/* Choose the key blocks of one query block into row[nkb]; adds to the counts. */
static void choose_blocks(const pa_problem *p, const pa_ref_head *hd, est_scratch *w,
                          int64_t i0, int64_t i1, uint8_t *row, int64_t *allowed,
                          int64_t *kept) {
  int32_t nkb = p->mask_kblocks, bk = p->block_k, len_k = hd->seq.len_k;
  int64_t lo, hi;
  pa_mask_rows_range(&hd->mask, i0, i1, &lo, &hi);
  double max_e = -INFINITY;
  for (int32_t kb = 0; kb < nkb; ++kb) {
    int64_t k0 = (int64_t)kb * bk, k1 = k0 + bk < len_k ? k0 + bk : len_k;
    int64_t a = k0 > lo ? k0 : lo, z = k1 < hi ? k1 : hi;
    w->n[kb] = z > a ? z - a : 0;
    if (!w->n[kb]) continue;
    double dot = 0.0;
    for (int32_t d = 0; d < p->head_dim; ++d)
      dot += w->qbar[d] * w->kbar[(int64_t)kb * p->head_dim + d];
    w->e[kb] = pa_score_f64(dot, p->scale, p->softcap, hd->slope, &hd->mask,
                            i0 + (i1 - i0 - 1) / 2, a + (w->n[kb] - 1) / 2);
    if (w->e[kb] > max_e) max_e = w->e[kb];
    ++*allowed;
  }
  if (max_e == -INFINITY) return; /* nothing allowed */

  double total = 0.0, mass = 0.0;
  for (int32_t kb = 0; kb < nkb; ++kb)
    if (w->n[kb]) total += (double)w->n[kb] * exp(w->e[kb] - max_e);

  int64_t d0 = pa_mask_diag(&hd->mask, i0), d1 = pa_mask_diag(&hd->mask, i1 - 1);
  d0 = d0 < 0 ? 0 : d0 >= len_k ? len_k - 1 : d0;
  d1 = d1 < 0 ? 0 : d1 >= len_k ? len_k - 1 : d1;
  for (int32_t kb = 0; kb < nkb; ++kb) {
    int forced = kb == 0 || (kb >= d0 / bk && kb <= d1 / bk);
    if (w->n[kb] && (forced || p->block_threshold >= 1.0f)) {
      row[kb] = 1;
      mass += (double)w->n[kb] * exp(w->e[kb] - max_e);
    }
  }
  int32_t nc = 0;
  for (int32_t kb = 0; kb < nkb; ++kb) {
    if (!w->n[kb] || row[kb]) continue;
    w->cand[nc].mass = (double)w->n[kb] * exp(w->e[kb] - max_e);
    w->cand[nc].kb = kb;
    ++nc;
  }
  qsort(w->cand, (size_t)nc, sizeof(kb_cand), cand_cmp);
  for (int32_t c = 0; c < nc && mass < p->block_threshold * total; ++c) {
    row[w->cand[c].kb] = 1;
    mass += w->cand[c].mass;
  }
  for (int32_t kb = 0; kb < nkb; ++kb) *kept += row[kb];
}

/* The estimate into `mask`, with `scratch` (scratch_bytes(p), 8-byte aligned);
 * scratch == NULL (allocation failed) keeps every block: exact, density 1. */
static double estimate(const pa_problem *p, uint8_t *mask, void *scratch) {
  int32_t nqb = p->mask_qblocks, nkb = p->mask_kblocks, D = p->head_dim;
  int32_t group = p->heads_q / p->heads_kv;
  size_t nk = (size_t)nkb + 1;
  est_scratch w;
  w.kbar = (double *)scratch;
  w.qbar = w.kbar + nk * (size_t)D;
  w.e = w.qbar + D;
  w.n = (int64_t *)(w.e + nk);
  w.cand = (kb_cand *)(w.n + nk);
  int ok = scratch != NULL;
  memset(mask, ok ? 0 : 1, (size_t)mask_only_bytes(p));

  int64_t allowed = 0, kept = 0;
  for (int32_t b = 0; ok && b < p->batch; ++b) {
    for (int32_t hk = 0; hk < p->heads_kv; ++hk) {
      pa_ref_head hd = pa_ref_head_make(p, b, hk * group);
      for (int32_t kb = 0; kb < nkb; ++kb) {
        int64_t k0 = (int64_t)kb * p->block_k, k1 = k0 + p->block_k;
        if (k1 > hd.seq.len_k) k1 = hd.seq.len_k;
        if (k0 < k1)
          mean_rows(p, &p->k, b, hd.seq.k_start, hk, k0, k1, w.kbar + (int64_t)kb * D);
      }
      for (int32_t h = hk * group; h < (hk + 1) * group; ++h) {
        hd = pa_ref_head_make(p, b, h);
        for (int32_t qb = 0; qb < nqb; ++qb) {
          int64_t i0 = (int64_t)qb * p->block_q, i1 = i0 + p->block_q;
          if (i0 >= hd.seq.len_q) break;
          if (i1 > hd.seq.len_q) i1 = hd.seq.len_q;
          mean_rows(p, &p->q, b, hd.seq.q_start, h, i0, i1, w.qbar);
          uint8_t *row = mask + (((int64_t)b * p->heads_q + h) * nqb + qb) * nkb;
          choose_blocks(p, &hd, &w, i0, i1, row, &allowed, &kept);
        }
      }
    }
  }
  return allowed ? (double)kept / (double)allowed : 1.0;
}

double pa_auto_block_estimate(const pa_problem *p, uint8_t *mask) {
  void *scratch = malloc((size_t)scratch_bytes(p));
  double density = estimate(p, mask, scratch);
  free(scratch);
  return density;
}

double pa_auto_block_resolve(const pa_problem *p, pa_problem *resolved, uint8_t *mask) {
  *resolved = *p;
  if (p->sparsity != POLYATTN_SPARSITY_AUTO_BLOCK) return 1.0;
  int32_t nqb = p->mask_qblocks, nkb = p->mask_kblocks;
  double density = estimate(p, mask, mask + scratch_offset(p));
  int dense = density > p->auto_density_cutoff;

  /* The mask handed back is the one actually computed, so that a backward given
   * it as BLOCK matches this forward: all ones when we fall back to dense. */
  const pa_view *mo = &p->block_mask_out;
  if (mo->buf && mo->ptr) {
    for (int32_t b = 0; b < p->batch; ++b)
      for (int32_t h = 0; h < p->heads_q; ++h)
        for (int32_t qb = 0; qb < nqb; ++qb) {
          const uint8_t *src = mask + (((int64_t)b * p->heads_q + h) * nqb + qb) * nkb;
          uint8_t *dst = (uint8_t *)mo->ptr + (int64_t)b * mo->stride_b +
                         (int64_t)h * mo->stride_h + (int64_t)qb * mo->stride_s;
          if (dense) memset(dst, 1, (size_t)nkb);
          else memcpy(dst, src, (size_t)nkb);
        }
  }

  memset(&resolved->block_mask, 0, sizeof(resolved->block_mask));
  if (dense) {
    resolved->sparsity = POLYATTN_SPARSITY_NONE;
  } else {
    resolved->sparsity = POLYATTN_SPARSITY_BLOCK;
    resolved->block_mask.buf = p->q.buf; /* any non-NULL marks the view present */
    resolved->block_mask.ptr = mask;
    resolved->block_mask.stride_b = (int64_t)p->heads_q * nqb * nkb;
    resolved->block_mask.stride_h = (int64_t)nqb * nkb;
    resolved->block_mask.stride_s = nkb;
  }
  return density;
}
