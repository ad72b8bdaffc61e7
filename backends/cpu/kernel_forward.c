/* The forward kernel, FlashAttention-2 style: one task owns a tile of query rows of
 * one (batch, head) and streams the key/value tiles its masks allow through an
 * online softmax (common/softmax.h), so memory beyond the inputs is O(tile).
 *
 * Compiled once per instruction set: isa_*.c define PA_VL/PA_MR/PA_NV and
 * PA_CPU_FN (the name suffix) and include this file. */
#include "cpu_simd.h"
#include "kernel_tile.h"

/* The scratch of one forward task, carved from the thread's slice. */
typedef struct pa_fwd_scratch {
  float *q;   /* [M x dp]   Q tile, pre-multiplied by scale */
  float *kt;  /* [D x bk]   K tile transposed */
  float *v;   /* [bk x dvp] V tile */
  float *s;   /* [M x bk]   scores, then probabilities */
  float *acc; /* [M x dvp]  unnormalised output */
  float *pv;  /* [M x dvp]  this key tile's P V */
  float *alpha; /* [M]      this key tile's rescale factors */
  pa_softmax_row *row; /* [M] */
  float *tmp; /* [bk x max(dp, dvp)] rows converted to fp32 */
} pa_fwd_scratch;

/* Carve the scratch from `base` (NULL: only count the bytes, into *bytes). */
static pa_fwd_scratch pa_fwd_scratch_carve(unsigned char *base, pa_tile_dims t, size_t *bytes) {
  pa_carver c = {base, 0};
  pa_fwd_scratch sc;
  sc.q = pa_take(&c, (int64_t)t.bq * t.dp);
  sc.kt = pa_take(&c, (int64_t)t.D * t.bk);
  sc.v = pa_take(&c, (int64_t)t.bk * t.dvp);
  sc.s = pa_take(&c, (int64_t)t.bq * t.bk);
  sc.acc = pa_take(&c, (int64_t)t.bq * t.dvp);
  sc.pv = pa_take(&c, (int64_t)t.bq * t.dvp);
  sc.alpha = pa_take(&c, t.bq);
  sc.row = (pa_softmax_row *)pa_take(&c, 2 * (int64_t)t.bq);
  sc.tmp = pa_take(&c, (int64_t)t.bk * (t.dp > t.dvp ? t.dp : t.dvp));
  if (bytes) *bytes = c.used;
  return sc;
}

/* Which (batch, head, query tile) a forward unit is. Units run heaviest query tile
 * first (the last ones under causal masks), which evens out the threads' loads. */
static void pa_fwd_unit(const pa_cpu_job *job, int64_t unit, int32_t *b, int32_t *h,
                        int64_t *qt) {
  const pa_problem *p = job->p;
  int64_t bh_count = (int64_t)p->batch * p->heads_q;
  int64_t bh = unit % bh_count;
  *qt = job->qtiles - 1 - unit / bh_count;
  *h = (int32_t)(bh % p->heads_q);
  *b = (int32_t)(bh / p->heads_q);
}

/* Split-KV partial results of one unit: [splits][bq] rows of (m, l, acc[dvp]). */
static float *pa_fwd_partial(const pa_cpu_job *job, int64_t unit, int32_t split) {
  const pa_cpu_layout *L = &job->lay;
  int64_t row_floats = 2 + (int64_t)L->dvp;
  int64_t per_split = (int64_t)L->tiles.block_q * row_floats;
  return (float *)(job->ws + L->off_part) + (unit * job->splits + split) * per_split;
}

/* The online-softmax steps of common/softmax.h for one tile row: fold the row's
 * scores s[0, bk) in, leave p = exp(s - m) in s, and return alpha, the factor for
 * the row's accumulator (applied when the tile's P V is added). */
static inline float pa_fwd_softmax_row(pa_softmax_row *st, float *s, int32_t bk) {
  pa_vf mx = pa_vsplat(-INFINITY);
  for (int32_t j = 0; j < bk; j += PA_VL) mx = pa_vmax(mx, pa_vload(s + j));
  /* 1. update max */
  float alpha = pa_softmax_update_max(st, pa_hmax(mx));
  /* 2. rescale (l here; the accumulator in pa_fwd_add_tile) */
  pa_softmax_rescale(st, alpha);
  /* 3. accumulate: p = exp(s - m); the caller adds P V to the accumulator */
  pa_vf ref = pa_vsplat(pa_softmax_ref(st));
  pa_vf sum = pa_vsplat(0.0f);
  for (int32_t j = 0; j < bk; j += PA_VL) {
    pa_vf pv = pa_vexp(pa_vload(s + j) - ref);
    pa_vstore(s + j, pv);
    sum += pv;
  }
  pa_softmax_accumulate(st, pa_hsum(sum));
  return alpha;
}

/* acc = alpha * acc + pv, row by row: the rescale of step 2 fused with adding the
 * tile's P V. Summing P V per tile before adding it to the running accumulator
 * (blocked summation) also cuts the rounding error of long rows. */
static inline void pa_fwd_add_tile(float *acc, const float *pv, const float *alpha, int32_t M,
                                   int32_t dvp) {
  for (int32_t r = 0; r < M; ++r) {
    float *a = acc + (int64_t)r * dvp;
    const float *t = pv + (int64_t)r * dvp;
    pa_vf va = pa_vsplat(alpha[r]);
    for (int32_t d = 0; d < dvp; d += PA_VL)
      pa_vstore(a + d, pa_vload(a + d) * va + pa_vload(t + d));
  }
}

static void PA_CPU_FN(pa_cpu_forward_task)(const pa_cpu_job *job, int64_t task, int thread) {
  const pa_problem *p = job->p;
  const pa_cpu_layout *L = &job->lay;
  const int32_t bq = L->tiles.block_q, bk = L->tiles.block_k, dp = L->dp, dvp = L->dvp;
  const int32_t D = p->head_dim, Dv = p->head_dim_v;
  const size_t es = p->dtype == POLYATTN_DTYPE_F32 ? 4 : 2;
  const int32_t split = (int32_t)(task % job->splits);
  const int64_t unit = task / job->splits;
  int32_t b, h;
  int64_t qt;
  pa_fwd_unit(job, unit, &b, &h, &qt);

  pa_head_ctx t = pa_head_make(p, b, h);
  const int64_t i0 = qt * bq;
  if (i0 >= t.seq.len_q) return;
  const int32_t rows = pa_min32(bq, (int32_t)(t.seq.len_q - i0));
  const int32_t M = (int32_t)pa_round_up64(rows, PA_MR); /* microkernel rows */
  pa_fwd_scratch sc =
      pa_fwd_scratch_carve(pa_thread_scratch(job, thread), pa_tile_dims_of(p, L), NULL);

  pa_load_tile(&p->q, p->dtype, b, t.seq.q_start, h, i0, rows, M, D, dp, p->scale, sc.q);
  memset(sc.acc, 0, sizeof(float) * (size_t)M * (size_t)dvp);
  for (int32_t r = 0; r < M; ++r) sc.row[r] = pa_softmax_start();

  /* The key tiles any row may keep, and this split's share of them. */
  int64_t lo, hi;
  pa_mask_rows_range(&t.mask, i0, i0 + rows, &lo, &hi);
  int64_t kt0 = 0, kt1 = 0;
  if (lo < hi) {
    kt0 = lo / bk;
    kt1 = (hi + bk - 1) / bk;
  }
  if (job->splits > 1) {
    int64_t n = kt1 - kt0;
    int64_t a = kt0 + n * split / job->splits, z = kt0 + n * (split + 1) / job->splits;
    kt0 = a;
    kt1 = z;
  }

  for (int64_t kt = kt0; kt < kt1; ++kt) {
    const int64_t k0 = kt * bk;
    pa_tile_kind kind = pa_tile_classify(&t, i0, rows, k0, bk);
    if (kind.skip) continue;
    const int32_t kn = pa_min32(bk, (int32_t)(t.mask.len_k - k0));
    pa_load_tile_t(&p->k, p->dtype, b, t.seq.k_start, t.hkv, k0, kn, D, bk, sc.tmp, sc.kt);
    pa_load_tile(&p->v, p->dtype, b, t.seq.k_start, t.hkv, k0, kn, bk, Dv, dvp, 1.0f, sc.v);
    if (kt + 1 < kt1) {
      const int32_t next = pa_min32(bk, (int32_t)(t.mask.len_k - k0 - bk));
      pa_prefetch_rows(&p->k, es, b, t.seq.k_start, t.hkv, k0 + bk, next, D);
      pa_prefetch_rows(&p->v, es, b, t.seq.k_start, t.hkv, k0 + bk, next, Dv);
    }

    /* S[M x bk] = (scale Q)[M x D] . K^T[D x bk] */
    pa_gemm(M, bk, D, sc.q, dp, 1, sc.kt, bk, sc.s, bk, 0);
    pa_tile_scores(&t, kind, sc.s, bk, i0, rows, k0, bk, NULL);
    for (int32_t r = 0; r < M; ++r)
      sc.alpha[r] = pa_fwd_softmax_row(&sc.row[r], sc.s + (int64_t)r * bk, bk);
    /* acc[M x dvp] = alpha * acc + P[M x bk] . V[bk x dvp] */
    pa_gemm(M, dvp, bk, sc.s, bk, 1, sc.v, dvp, sc.pv, dvp, 0);
    pa_fwd_add_tile(sc.acc, sc.pv, sc.alpha, M, dvp);
  }

  if (job->splits > 1) {
    float *part = pa_fwd_partial(job, unit, split);
    for (int32_t r = 0; r < rows; ++r) {
      float *pr = part + (int64_t)r * (2 + dvp);
      pr[0] = sc.row[r].m;
      pr[1] = sc.row[r].l;
      memcpy(pr + 2, sc.acc + (int64_t)r * dvp, sizeof(float) * (size_t)dvp);
    }
    return;
  }
  /* 4. normalise and store */
  for (int32_t r = 0; r < rows; ++r) {
    int64_t i = i0 + r;
    float lse = pa_softmax_lse(&sc.row[r]);
    pa_store_row(p->o.ptr, pa_view_row(&p->o, b, i, t.seq.q_start, h), p->dtype, Dv,
                 pa_softmax_normaliser(&sc.row[r]), sc.acc + (int64_t)r * dvp);
    if (p->lse.buf) ((float *)p->lse.ptr)[pa_lse_index(&p->lse, b, h, i, t.seq.q_start)] = lse;
  }
}

/* Split-KV: merge the partitions of one unit (in split order, so the result does
 * not depend on which thread ran which split) and store O and LSE. */
static void PA_CPU_FN(pa_cpu_forward_merge_task)(const pa_cpu_job *job, int64_t unit, int thread) {
  const pa_problem *p = job->p;
  const pa_cpu_layout *L = &job->lay;
  const int32_t bq = L->tiles.block_q, dvp = L->dvp;
  int32_t b, h;
  int64_t qt;
  pa_fwd_unit(job, unit, &b, &h, &qt);
  pa_seq seq = pa_problem_seq(p, b);
  const int64_t i0 = qt * bq;
  if (i0 >= seq.len_q) return;
  const int32_t rows = pa_min32(bq, (int32_t)(seq.len_q - i0));
  pa_fwd_scratch sc =
      pa_fwd_scratch_carve(pa_thread_scratch(job, thread), pa_tile_dims_of(p, L), NULL);
  float *acc = sc.acc; /* one row */
  for (int32_t r = 0; r < rows; ++r) {
    pa_softmax_row st = pa_softmax_start();
    memset(acc, 0, sizeof(float) * (size_t)dvp);
    for (int32_t s = 0; s < job->splits; ++s) {
      const float *pr = pa_fwd_partial(job, unit, s) + (int64_t)r * (2 + dvp);
      pa_softmax_row part;
      part.m = pr[0];
      part.l = pr[1];
      float fa, fb;
      st = pa_softmax_merge(st, part, &fa, &fb);
      pa_vf va = pa_vsplat(fa), vb = pa_vsplat(fb);
      for (int32_t d = 0; d < dvp; d += PA_VL)
        pa_vstore(acc + d, pa_vload(acc + d) * va + pa_vload(pr + 2 + d) * vb);
    }
    int64_t i = i0 + r;
    float lse = pa_softmax_lse(&st);
    pa_store_row(p->o.ptr, pa_view_row(&p->o, b, i, seq.q_start, h), p->dtype,
                 p->head_dim_v, pa_softmax_normaliser(&st), acc);
    if (p->lse.buf) ((float *)p->lse.ptr)[pa_lse_index(&p->lse, b, h, i, seq.q_start)] = lse;
  }
}
