/* The backward kernels: two deterministic passes without atomics.
 *
 *   Q pass:   one task per (batch, query head, query tile) owns dQ and the row
 *             statistics. A first sweep over its key tiles recomputes S and
 *             dP = dO V^T and runs the online softmax of common/softmax.h over S,
 *             giving the row's max m, sum l and Di = sum_j P_ij dP_ij; a second
 *             sweep forms P = exp(S - m) / l,
 *               dS = P * (dP - Di) [* (1 - tanh^2) under softcap],  dQ += dS K,
 *             and dQ is scaled by `scale` at the end. (m, l, Di) are stored in the
 *             workspace, fp32 [3][Hq][total_q].
 *   KV pass:  one task per (batch, kv head, key tile) owns dK and dV of its keys:
 *             for every query tile of every query head of the GQA group it
 *             recomputes P, dP and dS (same tiles, same microkernel: the same bits
 *             as the Q pass) and accumulates
 *               dV += P^T dO,  dK += dS^T (scale Q).
 *
 * Two choices differ from FlashAttention, both for accuracy at no extra sweep:
 * - P comes from the recomputed (m, l), not from the forward's LSE: an fp32 LSE
 *   near 8 is quantised to 1e-6, which would scale every P of the row by the same
 *   1e-6 relative error (16 ulp).
 * - Di is summed from the very P and dP that dS subtracts it from, not taken as
 *   rowsum(dO * O): dP_ij and Di nearly cancel, and this way their rounding errors
 *   cancel too (a row with one kept key gets dS = 0 exactly).
 * So the backward reads Q, K, V and dO; O and LSE are not needed.
 * Each task writes only its own rows, in a fixed order, so the result is the same
 * bit for bit on every run. Compiled per instruction set like kernel_forward.c. */
#include "cpu_simd.h"
#include "kernel_tile.h"

typedef struct pa_bwd_scratch {
  float *q;    /* [bq x dp]   Q tile, pre-multiplied by scale */
  float *dout; /* [bq x dvp]  dO tile */
  float *kt;   /* [D x bk]    K^T */
  float *vt;   /* [Dv x bk]   V^T */
  float *k;    /* [bk x dp]   K (Q pass) */
  float *p;    /* [bq x bk]   scores, then P */
  float *ds;   /* [bq x bk]   dP, then dS */
  float *cg;   /* [bq x bk]   1 - tanh^2 (softcap) */
  float *dk;   /* [bk x dp]   (KV pass) */
  float *dv;   /* [bk x dvp]  (KV pass) */
  float *dq;   /* [bq x dp]   (Q pass) */
  float *dq_tile; /* [bq x dp] (Q pass) one key tile's share of dQ */
  float *dk_tile; /* [bk x dp]  (KV pass) one query tile's share of dK */
  float *dv_tile; /* [bk x dvp] (KV pass) one query tile's share of dV */
  float *m, *l, *di;       /* [bq] row statistics */
  pa_softmax_row *row;     /* [bq] (Q pass, first sweep) */
  double *di_sum;          /* [bq] (Q pass, first sweep) */
  float *tmp;              /* [bk x max(dp, dvp)] rows converted to fp32 */
} pa_bwd_scratch;

/* Carve the scratch from `base` (NULL: only count the bytes, into *bytes). */
static pa_bwd_scratch pa_bwd_scratch_carve(unsigned char *base, pa_tile_dims t, size_t *bytes) {
  pa_carver c = {base, 0};
  pa_bwd_scratch sc;
  sc.q = pa_take(&c, (int64_t)t.bq * t.dp);
  sc.dout = pa_take(&c, (int64_t)t.bq * t.dvp);
  sc.kt = pa_take(&c, (int64_t)t.D * t.bk);
  sc.vt = pa_take(&c, (int64_t)t.Dv * t.bk);
  sc.k = pa_take(&c, (int64_t)t.bk * t.dp);
  sc.p = pa_take(&c, (int64_t)t.bq * t.bk);
  sc.ds = pa_take(&c, (int64_t)t.bq * t.bk);
  sc.cg = pa_take(&c, (int64_t)t.bq * t.bk);
  sc.dk = pa_take(&c, (int64_t)t.bk * t.dp);
  sc.dv = pa_take(&c, (int64_t)t.bk * t.dvp);
  sc.dq = pa_take(&c, (int64_t)t.bq * t.dp);
  sc.dq_tile = pa_take(&c, (int64_t)t.bq * t.dp);
  sc.dk_tile = pa_take(&c, (int64_t)t.bk * t.dp);
  sc.dv_tile = pa_take(&c, (int64_t)t.bk * t.dvp);
  sc.m = pa_take(&c, t.bq);
  sc.l = pa_take(&c, t.bq);
  sc.di = pa_take(&c, t.bq);
  sc.row = (pa_softmax_row *)pa_take(&c, 2 * (int64_t)t.bq);
  sc.di_sum = (double *)pa_take(&c, 2 * (int64_t)t.bq);
  sc.tmp = pa_take(&c, (int64_t)t.bk * (t.dp > t.dvp ? t.dp : t.dvp));
  if (bytes) *bytes = c.used;
  return sc;
}

static pa_bwd_scratch pa_bwd_scratch_of(const pa_cpu_job *job, int thread) {
  return pa_bwd_scratch_carve(pa_thread_scratch(job, thread), pa_tile_dims_of(job->p, &job->lay),
                              NULL);
}

/* The stored statistics of a row: stat 0 = m, 1 = l, 2 = Di. */
static inline float *pa_bwd_stat(const pa_cpu_job *job, int stat, int32_t h, int64_t row) {
  const pa_problem *p = job->p;
  return job->stats + ((int64_t)stat * p->heads_q + h) * p->total_q + row;
}

/* The query-side tiles of rows [i0, i0 + rows): scale * Q and dO; and, when
 * with_stats (the Q pass has stored them), m, l and Di. */
static void pa_bwd_load_rows(const pa_cpu_job *job, const pa_head_ctx *t, pa_bwd_scratch *sc,
                             int64_t i0, int32_t rows, int32_t M, int with_stats) {
  const pa_problem *p = job->p;
  const pa_cpu_layout *L = &job->lay;
  pa_load_tile(&p->q, p->dtype, t->b, t->seq.q_start, t->h, i0, rows, M, p->head_dim, L->dp,
               p->scale, sc->q);
  pa_load_tile(&p->dout, p->dtype, t->b, t->seq.q_start, t->h, i0, rows, M, p->head_dim_v,
               L->dvp, 1.0f, sc->dout);
  if (!with_stats) return;
  for (int32_t r = 0; r < rows; ++r) {
    int64_t row = pa_cpu_row_index(p, t->b, t->seq.q_start, i0 + r);
    sc->m[r] = *pa_bwd_stat(job, 0, t->h, row);
    sc->l[r] = *pa_bwd_stat(job, 1, t->h, row);
    sc->di[r] = *pa_bwd_stat(job, 2, t->h, row);
  }
}

/* The key-side tiles of keys [k0, k0 + kn): K^T, V^T and, for dQ, K. */
static void pa_bwd_load_keys(const pa_cpu_job *job, const pa_head_ctx *t, pa_bwd_scratch *sc,
                             int64_t k0, int32_t kn, int with_k) {
  const pa_problem *p = job->p;
  const pa_cpu_layout *L = &job->lay;
  const int32_t bk = L->tiles.block_k;
  pa_load_tile_t(&p->k, p->dtype, t->b, t->seq.k_start, t->hkv, k0, kn, p->head_dim, bk,
                 sc->tmp, sc->kt);
  pa_load_tile_t(&p->v, p->dtype, t->b, t->seq.k_start, t->hkv, k0, kn, p->head_dim_v, bk,
                 sc->tmp, sc->vt);
  if (with_k)
    pa_load_tile(&p->k, p->dtype, t->b, t->seq.k_start, t->hkv, k0, kn, bk, p->head_dim, L->dp,
                 1.0f, sc->k);
}

/* For the loaded rows and keys: the scores S[M x bk] in sc->p (exactly as the
 * forward makes them) and dP[M x bk] = dO V^T in sc->ds. */
static void pa_bwd_tile_s_dp(const pa_cpu_job *job, const pa_head_ctx *t, pa_bwd_scratch *sc,
                             pa_tile_kind kind, int64_t i0, int32_t rows, int32_t M,
                             int64_t k0) {
  const pa_problem *p = job->p;
  const pa_cpu_layout *L = &job->lay;
  const int32_t bk = L->tiles.block_k;
  pa_gemm(M, bk, p->head_dim, sc->q, L->dp, 1, sc->kt, bk, sc->p, bk, 0);
  pa_tile_scores(t, kind, sc->p, bk, i0, rows, k0, bk, p->softcap > 0.0f ? sc->cg : NULL);
  pa_gemm(M, bk, p->head_dim_v, sc->dout, L->dvp, 1, sc->vt, bk, sc->ds, bk, 0);
}

/* First sweep: the online softmax steps over the tile's scores, and
 * Di += sum_j exp(s_j - m) dP_j, rescaled with l. */
static void pa_bwd_tile_stats(const pa_cpu_job *job, pa_bwd_scratch *sc, int32_t rows) {
  const int32_t bk = job->lay.tiles.block_k;
  for (int32_t r = 0; r < rows; ++r) {
    const float *s = sc->p + (int64_t)r * bk, *dp = sc->ds + (int64_t)r * bk;
    pa_vf mx = pa_vsplat(-INFINITY);
    for (int32_t j = 0; j < bk; j += PA_VL) mx = pa_vmax(mx, pa_vload(s + j));
    float alpha = pa_softmax_update_max(&sc->row[r], pa_hmax(mx));
    if (alpha != 1.0f) {
      pa_softmax_rescale(&sc->row[r], alpha);
      sc->di_sum[r] *= alpha;
    }
    pa_vf ref = pa_vsplat(pa_softmax_ref(&sc->row[r]));
    pa_vf sum = pa_vsplat(0.0f), dsum = pa_vsplat(0.0f);
    for (int32_t j = 0; j < bk; j += PA_VL) {
      pa_vf e = pa_vexp(pa_vload(s + j) - ref);
      sum += e;
      dsum += e * pa_vload(dp + j);
    }
    pa_softmax_accumulate(&sc->row[r], pa_hsum(sum));
    sc->di_sum[r] += (double)pa_hsum(dsum);
  }
}

/* Second sweep and KV pass: P = exp(S - m) / l in place of S (rows past `rows`,
 * and rows that kept nothing, are 0), then dS = P * (dP - Di), chained through
 * the softcap, in place of dP. */
static void pa_bwd_tile_p_ds(const pa_cpu_job *job, pa_bwd_scratch *sc, int32_t rows,
                             int32_t M) {
  const int32_t bk = job->lay.tiles.block_k;
  const int softcap = job->p->softcap > 0.0f;
  for (int32_t r = 0; r < M; ++r) {
    float *s = sc->p + (int64_t)r * bk, *ds = sc->ds + (int64_t)r * bk;
    if (r >= rows || !(sc->l[r] > 0.0f)) {
      memset(s, 0, sizeof(float) * (size_t)bk);
      memset(ds, 0, sizeof(float) * (size_t)bk);
      continue;
    }
    pa_vf m = pa_vsplat(sc->m[r]), l = pa_vsplat(sc->l[r]), di = pa_vsplat(sc->di[r]);
    for (int32_t j = 0; j < bk; j += PA_VL) {
      pa_vf pv = pa_vexp(pa_vload(s + j) - m) / l;
      pa_vf g = pv * (pa_vload(ds + j) - di);
      if (softcap) g *= pa_vload(sc->cg + (int64_t)r * bk + j);
      pa_vstore(s + j, pv);
      pa_vstore(ds + j, g);
    }
  }
}

static void PA_CPU_FN(pa_cpu_backward_q_task)(const pa_cpu_job *job, int64_t unit, int thread) {
  const pa_problem *p = job->p;
  const pa_cpu_layout *L = &job->lay;
  const int32_t bq = L->tiles.block_q, bk = L->tiles.block_k, dp = L->dp;
  int64_t bh_count = (int64_t)p->batch * p->heads_q;
  int64_t bh = unit % bh_count, qt = job->qtiles - 1 - unit / bh_count;
  int32_t h = (int32_t)(bh % p->heads_q), b = (int32_t)(bh / p->heads_q);
  pa_head_ctx t = pa_head_make(p, b, h);
  const int64_t i0 = qt * bq;
  if (i0 >= t.seq.len_q) return;
  const int32_t rows = pa_min32(bq, (int32_t)(t.seq.len_q - i0));
  const int32_t M = (int32_t)pa_round_up64(rows, PA_MR);
  pa_bwd_scratch sc = pa_bwd_scratch_of(job, thread);
  pa_bwd_load_rows(job, &t, &sc, i0, rows, M, 0);
  for (int32_t r = 0; r < rows; ++r) {
    sc.row[r] = pa_softmax_start();
    sc.di_sum[r] = 0.0;
  }

  int64_t lo, hi;
  pa_mask_rows_range(&t.mask, i0, i0 + rows, &lo, &hi);
  const int64_t k_first = lo < hi ? lo / bk * bk : hi;
  for (int sweep = 0; sweep < 2; ++sweep) {
    if (sweep == 1) {
      /* The statistics are complete: keep them for the second sweep and the KV pass. */
      for (int32_t r = 0; r < rows; ++r) {
        int64_t row = pa_cpu_row_index(p, b, t.seq.q_start, i0 + r);
        sc.m[r] = sc.row[r].m;
        sc.l[r] = sc.row[r].l;
        sc.di[r] = sc.l[r] > 0.0f ? (float)(sc.di_sum[r] / sc.l[r]) : 0.0f;
        *pa_bwd_stat(job, 0, h, row) = sc.m[r];
        *pa_bwd_stat(job, 1, h, row) = sc.l[r];
        *pa_bwd_stat(job, 2, h, row) = sc.di[r];
      }
      memset(sc.dq, 0, sizeof(float) * (size_t)M * (size_t)dp);
    }
    for (int64_t k0 = k_first; k0 < hi; k0 += bk) {
      pa_tile_kind kind = pa_tile_classify(&t, i0, rows, k0, bk);
      if (kind.skip) continue;
      const int32_t kn = pa_min32(bk, (int32_t)(t.mask.len_k - k0));
      pa_bwd_load_keys(job, &t, &sc, k0, kn, sweep == 1);
      pa_bwd_tile_s_dp(job, &t, &sc, kind, i0, rows, M, k0);
      if (sweep == 0) {
        pa_bwd_tile_stats(job, &sc, rows);
        continue;
      }
      pa_bwd_tile_p_ds(job, &sc, rows, M);
      /* dQ[M x dp] += dS[M x bk] . K[bk x dp], summed per tile first (blocked
       * summation: long rows add up with sqrt(bk) times less rounding error) */
      pa_gemm(M, dp, bk, sc.ds, bk, 1, sc.k, dp, sc.dq_tile, dp, 0);
      pa_vadd_to(sc.dq, sc.dq_tile, (int64_t)M * dp);
    }
  }
  for (int32_t r = 0; r < rows; ++r)
    pa_store_row(p->dq.ptr, pa_view_row(&p->dq, b, i0 + r, t.seq.q_start, h), p->dtype,
                 p->head_dim, p->scale, sc.dq + (int64_t)r * dp);
}

static void PA_CPU_FN(pa_cpu_backward_kv_task)(const pa_cpu_job *job, int64_t task, int thread) {
  const pa_problem *p = job->p;
  const pa_cpu_layout *L = &job->lay;
  const int32_t bq = L->tiles.block_q, bk = L->tiles.block_k, dp = L->dp, dvp = L->dvp;
  const int64_t kt = task % job->ktiles, bh = task / job->ktiles;
  const int32_t hkv = (int32_t)(bh % p->heads_kv), b = (int32_t)(bh / p->heads_kv);
  const int32_t group = p->heads_q / p->heads_kv;
  const int64_t k0 = kt * bk;
  const int32_t stored = pa_cpu_stored_len_k(p, b);
  if (k0 >= stored) return;
  const int32_t out_rows = pa_min32(bk, (int32_t)(stored - k0));
  pa_bwd_scratch sc = pa_bwd_scratch_of(job, thread);
  pa_seq seq = pa_problem_seq(p, b);
  const int32_t kn = pa_min32(bk, (int32_t)(seq.len_k - k0)); /* keys seqused_k keeps */
  if (kn > 0) {
    pa_head_ctx t0 = pa_head_make(p, b, hkv * group);
    pa_bwd_load_keys(job, &t0, &sc, k0, kn, 0);
  }
  memset(sc.dk, 0, sizeof(float) * (size_t)bk * (size_t)dp);
  memset(sc.dv, 0, sizeof(float) * (size_t)bk * (size_t)dvp);

  for (int32_t g = 0; kn > 0 && g < group; ++g) {
    pa_head_ctx t = pa_head_make(p, b, hkv * group + g);
    for (int64_t i0 = 0; i0 < t.seq.len_q; i0 += bq) {
      const int32_t rows = pa_min32(bq, (int32_t)(t.seq.len_q - i0));
      pa_tile_kind kind = pa_tile_classify(&t, i0, rows, k0, bk);
      if (kind.skip) continue;
      const int32_t M = (int32_t)pa_round_up64(rows, PA_MR);
      pa_bwd_load_rows(job, &t, &sc, i0, rows, M, 1);
      pa_bwd_tile_s_dp(job, &t, &sc, kind, i0, rows, M, k0);
      pa_bwd_tile_p_ds(job, &sc, rows, M);
      /* dV[bk x dvp] += P^T[bk x rows] . dO[rows x dvp]
       * dK[bk x dp] += dS^T[bk x rows] . (scale Q)[rows x dp], summed per query tile
       * first, as dQ is */
      pa_gemm(bk, dvp, rows, sc.p, 1, bk, sc.dout, dvp, sc.dv_tile, dvp, 0);
      pa_vadd_to(sc.dv, sc.dv_tile, (int64_t)bk * dvp);
      pa_gemm(bk, dp, rows, sc.ds, 1, bk, sc.q, dp, sc.dk_tile, dp, 0);
      pa_vadd_to(sc.dk, sc.dk_tile, (int64_t)bk * dp);
    }
  }
  for (int32_t j = 0; j < out_rows; ++j) {
    pa_store_row(p->dk.ptr, pa_view_row(&p->dk, b, k0 + j, seq.k_start, hkv), p->dtype,
                 p->head_dim, 1.0f, sc.dk + (int64_t)j * dp);
    pa_store_row(p->dv.ptr, pa_view_row(&p->dv, b, k0 + j, seq.k_start, hkv), p->dtype,
                 p->head_dim_v, 1.0f, sc.dv + (int64_t)j * dvp);
  }
}

/* Bytes of scratch one thread needs for every pass of problem p. */
static size_t PA_CPU_FN(pa_cpu_scratch_bytes)(const pa_problem *p, const pa_cpu_layout *L) {
  size_t fwd = 0, bwd = 0;
  pa_tile_dims t = pa_tile_dims_of(p, L);
  (void)pa_fwd_scratch_carve(NULL, t, &fwd);
  if (p->pass == PA_PASS_BACKWARD) (void)pa_bwd_scratch_carve(NULL, t, &bwd);
  return fwd > bwd ? fwd : bwd;
}
