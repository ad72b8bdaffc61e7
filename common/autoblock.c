/* AUTO_BLOCK: the cheap pre-pass of DESIGN.md that chooses a block mask.
 *
 * The estimator, in the float32 arithmetic and the fixed summation orders of
 * autoblock.h (which backends/cuda/auto_block.cu computes alike, bit for bit). For
 * batch entry b, query head h and query block qb, whose rows are
 * [i0, i1) = [qb * block_q, min(i0 + block_q, len_q)):
 *   qbar     = mean of the block's Q rows;
 *   kbar_kb  = mean of key block kb's K rows (h's kv head, keys < len_k);
 *   allowed  = the keys the causal / window masks let any row of [i0, i1) see
 *              (pa_mask_rows_range), within [0, len_k); a key block is allowed when
 *              it holds n_kb > 0 of them;
 *   e_kb     = pa_ab_score(qbar . kbar_kb) at the block's centre row and the centre
 *              of its allowed keys (scale, softcap and ALiBi as for real scores);
 *   mass_kb  = n_kb * exp(e_kb - max e): each allowed key counted as if it scored
 *              the pooled score.
 * Kept always (when allowed): key block 0, where attention sinks live, and the
 * diagonal blocks, from the one holding the first row's diagonal key position to
 * the one holding the last row's (positions clamped to [0, len_k)). Then the other
 * allowed blocks (candidates) by decreasing mass (ties: lower kb): the shortest
 * such prefix whose blocks, with the forced ones, hold at least
 * block_threshold * total, where a set's mass is pa_ab_lane_sum's fixed-order sum
 * and total is that of every allowed block. A threshold of 1 keeps every allowed
 * block, so that rounding in the sums can never drop one and the result is exactly
 * dense.
 *
 * The prefix is found without a sort: the set "forced blocks and the candidates at
 * or above key t" (autoblock.h's key: mass bits, then rank) only grows as t falls,
 * and its fixed-order sum never decreases when a block joins it, so the largest t
 * whose set reaches the target is found bit by bit, highest first — on the GPU each
 * step is one sum over the lanes. That t is a candidate's key and the kept set is
 * exactly the shortest prefix of the sorted candidates.
 *
 * The density is kept blocks / allowed blocks over every (b, h, qb); 1 when nothing
 * is allowed (there is nothing to skip). The mask is [B][Hq][mask_qblocks]
 * [mask_kblocks] bytes, 1 keep / 0 drop, and 0 for blocks outside a sequence.
 * If scratch cannot be allocated every block is kept: exact, density 1. */
#include <stdlib.h>
#include <string.h>

#include "autoblock.h"
#include "convert.h"
#include "oracle.h"
#include "reference.h"

/* A key block's state in one query block's choice: not allowed, forced, or a
 * candidate, and its mass. */
enum { AB_OUT = 0, AB_FORCED = 1, AB_CAND = 2 };

static int64_t mask_only_bytes(const pa_problem *p) {
  return (int64_t)p->batch * p->heads_q * p->mask_qblocks * p->mask_kblocks;
}

/* The estimator's scratch, per (b, kv head): pooled K per key block, pooled Q,
 * scores, masses, allowed counts, states. */
static int64_t scratch_bytes(const pa_problem *p) {
  int64_t nk = (int64_t)p->mask_kblocks + 1, D = p->head_dim;
  return (nk * D + D + 2 * nk) * (int64_t)sizeof(float) + nk * (int64_t)sizeof(int64_t) + nk;
}

/* Where the scratch starts after the mask: 16-byte aligned. */
static int64_t scratch_offset(const pa_problem *p) { return (mask_only_bytes(p) + 15) / 16 * 16; }

int64_t pa_auto_block_mask_bytes(const pa_problem *p) {
  return scratch_offset(p) + scratch_bytes(p);
}

/* Mean of rows [r0, r1) of head `head` of a q/k-like view, into dst[D], in
 * autoblock.h's order (PA_AB_POOL_CHAINS interleaved chains). */
static void mean_rows(const pa_problem *p, const pa_view *view, int32_t b, int64_t start,
                      int32_t head, int64_t r0, int64_t r1, float *dst) {
  for (int32_t d = 0; d < p->head_dim; ++d) {
    float c[PA_AB_POOL_CHAINS];
    for (int k = 0; k < PA_AB_POOL_CHAINS; ++k) c[k] = 0.0f;
    for (int64_t r = r0; r < r1; ++r) {
      const int k = (int)((r - r0) % PA_AB_POOL_CHAINS);
      c[k] = pa_ab_add(c[k], pa_load_f32(view->ptr, pa_view_row(view, b, r, start, head) + d,
                                         p->dtype));
    }
    dst[d] = pa_ab_pool_combine(c, r1 - r0);
  }
}

/* The mass of the set {kb : in(kb)} in autoblock.h's lane order, where in(kb) is:
 * forced, or a candidate at or above (t_hi, t_lo); all_allowed takes every allowed
 * block. */
static float lane_sum(const uint8_t *state, const float *mass, int32_t nkb, uint32_t kb_mask,
                      int all_allowed, uint32_t t_hi, uint32_t t_lo) {
  float v[PA_AB_LANES], w[PA_AB_LANES];
  for (int l = 0; l < PA_AB_LANES; ++l) {
    float s = 0.0f;
    for (int32_t kb = l; kb < nkb; kb += PA_AB_LANES) {
      int in = state[kb] == AB_FORCED || (state[kb] == AB_CAND && all_allowed);
      if (state[kb] == AB_CAND && !all_allowed)
        in = pa_ab_at_or_above(pa_f32_bits(mass[kb]), kb_mask - (uint32_t)kb, t_hi, t_lo);
      if (in) s = pa_ab_add(s, mass[kb]);
    }
    v[l] = s;
  }
  for (int o = PA_AB_LANES / 2; o; o >>= 1) {
    for (int l = 0; l < PA_AB_LANES; ++l) w[l] = pa_ab_add(v[l], v[l ^ o]);
    memcpy(v, w, sizeof v);
  }
  return v[0];
}

/* Scratch of one estimate: per key block of the current (b, kv head). */
typedef struct est_scratch {
  float *kbar;    /* [nkb][D] */
  float *qbar;    /* [D] */
  float *e;       /* [nkb] pooled scores */
  float *mass;    /* [nkb] */
  int64_t *n;     /* [nkb] allowed keys; 0: block not allowed */
  uint8_t *state; /* [nkb] AB_OUT / AB_FORCED / AB_CAND */
} est_scratch;

/* Choose the key blocks of one query block into row[nkb]; adds to the counts. */
static void choose_blocks(const pa_problem *p, const pa_ref_head *hd, est_scratch *w,
                          int64_t i0, int64_t i1, uint8_t *row, int64_t *allowed,
                          int64_t *kept) {
  int32_t nkb = p->mask_kblocks, bk = p->block_k, len_k = hd->seq.len_k;
  int64_t lo, hi;
  pa_mask_rows_range(&hd->mask, i0, i1, &lo, &hi);
  float max_e = -INFINITY;
  for (int32_t kb = 0; kb < nkb; ++kb) {
    int64_t k0 = (int64_t)kb * bk, k1 = k0 + bk < len_k ? k0 + bk : len_k;
    int64_t a = k0 > lo ? k0 : lo, z = k1 < hi ? k1 : hi;
    w->n[kb] = z > a ? z - a : 0;
    if (!w->n[kb]) continue;
    float dot = 0.0f;
    for (int32_t d = 0; d < p->head_dim; ++d)
      dot = pa_ab_fma(w->qbar[d], w->kbar[(int64_t)kb * p->head_dim + d], dot);
    w->e[kb] = pa_ab_score(dot, p->scale, p->softcap, (float)hd->slope, &hd->mask,
                           i0 + (i1 - i0 - 1) / 2, a + (w->n[kb] - 1) / 2);
    if (w->e[kb] > max_e) max_e = w->e[kb];
    ++*allowed;
  }
  if (max_e == -INFINITY) return; /* nothing allowed */

  int64_t d0 = pa_mask_diag(&hd->mask, i0), d1 = pa_mask_diag(&hd->mask, i1 - 1);
  d0 = d0 < 0 ? 0 : d0 >= len_k ? len_k - 1 : d0;
  d1 = d1 < 0 ? 0 : d1 >= len_k ? len_k - 1 : d1;
  for (int32_t kb = 0; kb < nkb; ++kb) {
    const int forced = kb == 0 || (kb >= d0 / bk && kb <= d1 / bk);
    w->state[kb] = !w->n[kb] ? AB_OUT
                   : forced || p->block_threshold >= 1.0f ? AB_FORCED
                                                          : AB_CAND;
    w->mass[kb] = w->n[kb] ? pa_ab_mass(w->n[kb], w->e[kb], max_e) : 0.0f;
  }

  const uint32_t kb_mask = pa_ab_kb_mask(nkb);
  const float total = lane_sum(w->state, w->mass, nkb, kb_mask, 1, 0, 0);
  const float target = pa_ab_mul(p->block_threshold, total);
  /* (t_hi, t_lo) above every key: the forced blocks alone */
  uint32_t t_hi = 0xffffffffu, t_lo = 0xffffffffu;
  if (lane_sum(w->state, w->mass, nkb, kb_mask, 0, t_hi, t_lo) < target) {
    t_hi = 0; /* the set at key (0, 0) is every allowed block: it reaches the target */
    for (uint32_t bit = 1u << 30; bit; bit >>= 1)
      if (lane_sum(w->state, w->mass, nkb, kb_mask, 0, t_hi | bit, 0) >= target) t_hi |= bit;
    t_lo = 0;
    for (uint32_t bit = (kb_mask + 1) >> 1; bit; bit >>= 1)
      if (lane_sum(w->state, w->mass, nkb, kb_mask, 0, t_hi, t_lo | bit) >= target) t_lo |= bit;
  }
  for (int32_t kb = 0; kb < nkb; ++kb) {
    row[kb] = w->state[kb] == AB_FORCED ||
              (w->state[kb] == AB_CAND &&
               pa_ab_at_or_above(pa_f32_bits(w->mass[kb]), kb_mask - (uint32_t)kb, t_hi, t_lo));
    *kept += row[kb];
  }
}

/* The estimate into `mask`, with `scratch` (scratch_bytes(p), 8-byte aligned);
 * scratch == NULL (allocation failed) keeps every block: exact, density 1. */
static double estimate(const pa_problem *p, uint8_t *mask, void *scratch) {
  int32_t nqb = p->mask_qblocks, nkb = p->mask_kblocks, D = p->head_dim;
  int32_t group = p->heads_q / p->heads_kv;
  size_t nk = (size_t)nkb + 1;
  est_scratch w;
  w.n = (int64_t *)scratch;
  w.kbar = (float *)(w.n + nk);
  w.qbar = w.kbar + nk * (size_t)D;
  w.e = w.qbar + D;
  w.mass = w.e + nk;
  w.state = (uint8_t *)(w.mass + nk);
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
