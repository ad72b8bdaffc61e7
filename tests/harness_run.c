/* One run of a case: layouts, buffers with poisoned outputs, random inputs, the
 * public API calls, and the accessors the suites use. */
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

const char *const th_buf_names[TB_COUNT] = {
    "q", "k", "v", "out", "lse", "dout", "dq", "dk", "dv", "cu_seqlens_q",
    "cu_seqlens_k", "seqused_k", "alibi_slopes", "block_mask", "block_mask_out"};

/* ------------------------------------------------------------- randomness */

static uint64_t splitmix(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static double uniform(uint64_t *s) { return ((splitmix(s) >> 11) + 0.5) * (1.0 / 9007199254740992.0); }
static double normal(uint64_t *s) {
  double u = uniform(s), w = uniform(s);
  return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * w);
}
static uint64_t hash_str(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; s && *s; ++s) h = (h ^ (uint8_t)*s) * 1099511628211ull;
  return h;
}

void *th_xcalloc(size_t n, size_t size) {
  void *p = calloc(n ? n : 1, size ? size : 1);
  cr_assert_not_null(p, "out of host memory (%zu x %zu bytes)", n, size);
  return p;
}

/* ------------------------------------------------------------------ layouts */

static void tv_layout(th_layout L, int varlen, int32_t B, int64_t S, int32_t H, int32_t D,
                      th_tv *v) {
  v->heads = H;
  v->dim = D;
  switch (L) {
  case TH_STRIDED:
    v->off = 32;
    v->sh = D + 8;
    v->ss = H * v->sh + 16;
    v->sb = S * v->ss + 24;
    break;
  case TH_STRIDED_ODD:
    v->off = 3;
    v->sh = D + 3;
    v->ss = H * v->sh + 5;
    v->sb = S * v->ss + 7;
    break;
  case TH_BHSD:
    v->off = 0;
    v->ss = D;
    v->sh = S * D;
    v->sb = (int64_t)H * S * D;
    break;
  default: /* contiguous; packed views are set by the caller */
    v->off = 0;
    v->sh = D;
    v->ss = (int64_t)H * D;
    v->sb = S * v->ss;
    break;
  }
  if (varlen) v->sb = 0;
}

int64_t th_tv_start(const th_run *r, const th_tv *v, int32_t b) {
  return r->c.varlen ? (v->kv ? r->k_start[b] : r->q_start[b]) : 0;
}
int32_t th_tv_len(const th_run *r, const th_tv *v, int32_t b) {
  return v->kv ? r->len_k[b] : r->len_q[b];
}
int64_t th_tv_index(const th_run *r, const th_tv *v, int32_t b, int64_t tok, int32_t h,
                        int32_t d) {
  return v->off + b * v->sb + (th_tv_start(r, v, b) + tok) * v->ss + h * v->sh + d;
}
/* The row of the oracle's canonical layout. */
int64_t th_tv_canon_row(const th_run *r, const th_tv *v, int32_t b, int64_t tok) {
  if (r->c.varlen) return th_tv_start(r, v, b) + tok;
  return (int64_t)b * (v->kv ? r->Sk : r->Sq) + tok;
}
/* One past the last element the view can address. */
static int64_t tv_span(const th_run *r, const th_tv *v) {
  int64_t end = v->off;
  for (int32_t b = 0; b < r->B; ++b) {
    int32_t len = th_tv_len(r, v, b);
    if (len <= 0 || v->heads <= 0 || v->dim <= 0) continue;
    int64_t last = th_tv_index(r, v, b, len - 1, v->heads - 1, v->dim - 1) + 1;
    if (last > end) end = last;
  }
  return end;
}

static polyattn_tensor tv_tensor(const th_run *r, const th_tv *v, polyattn_buffer *buf) {
  polyattn_tensor t;
  memset(&t, 0, sizeof t);
  t.buffer = buf;
  t.offset = (size_t)v->off * r->esize;
  t.dtype = r->c.dtype;
  if (r->c.varlen) {
    t.ndim = 3;
    t.shape[0] = v->kv ? r->total_k : r->total_q;
    t.shape[1] = v->heads;
    t.shape[2] = v->dim;
    t.strides[0] = v->ss;
    t.strides[1] = v->sh;
    t.strides[2] = 1;
  } else {
    t.ndim = 4;
    t.shape[0] = r->B;
    t.shape[1] = v->kv ? r->Sk : r->Sq;
    t.shape[2] = v->heads;
    t.shape[3] = v->dim;
    t.strides[0] = v->sb;
    t.strides[1] = v->ss;
    t.strides[2] = v->sh;
    t.strides[3] = 1;
  }
  return t;
}

int64_t th_lse_index(const th_run *r, int32_t b, int32_t h, int64_t i) {
  int64_t start = r->c.varlen ? r->q_start[b] : 0;
  return r->lse_off + b * r->lse_sb + h * r->lse_sh + (start + i) * r->lse_ss;
}

/* ----------------------------------------------------------------- buffers */

static void buf_need(th_run *r, int id, size_t bytes, int output) {
  th_buf *b = &r->bufs[id];
  if (bytes > b->size) b->size = bytes;
  b->output |= output;
  b->used = 1; /* even when empty (seq_k = 0): the tensor still needs a buffer */
}

static void buf_materialise(th_run *r) {
  for (int i = 0; i < TB_COUNT; ++i) {
    th_buf *b = &r->bufs[i];
    if (!b->used) continue;
    /* guard bytes after every view, and never a zero-byte buffer */
    b->size = (b->size + 64 + 15) / 16 * 16;
    b->img = th_xcalloc(b->size, 1);
    memset(b->img, TH_POISON, b->size); /* input padding is NaN: reading it shows */
    if (b->output) {
      b->init = th_xcalloc(b->size, 1);
      b->inview = th_xcalloc(b->size, 1);
    }
  }
}

static void mark_view(th_run *r, const th_tv *v) {
  th_buf *b = &r->bufs[v->buf];
  for (int32_t bb = 0; bb < r->B; ++bb)
    for (int64_t t = 0; t < th_tv_len(r, v, bb); ++t)
      for (int32_t h = 0; h < v->heads; ++h) {
        size_t at = (size_t)th_tv_index(r, v, bb, t, h, 0) * r->esize;
        memset(b->inview + at, 1, (size_t)v->dim * r->esize);
      }
}

/* N(0, 1) values; with `clusters` ([4][dim]), 0.5 N(0, 1) + 1.5 c[(t / 64) % 4]. */
static void fill_view_random(th_run *r, const th_tv *v, const double *clusters) {
  uint8_t *img = r->bufs[v->buf].img;
  for (int32_t bb = 0; bb < r->B; ++bb)
    for (int64_t t = 0; t < th_tv_len(r, v, bb); ++t)
      for (int32_t h = 0; h < v->heads; ++h)
        for (int32_t d = 0; d < v->dim; ++d) {
          double x = normal(&r->rng);
          if (clusters) x = 0.5 * x + 1.5 * clusters[((t / 64) % 4) * v->dim + d];
          x = pa_round_to_dtype(x, r->c.dtype);
          if (x == 0.0) x = 0.25; /* never zeros */
          pa_store_f32(img, th_tv_index(r, v, bb, t, h, d), r->c.dtype, (float)x);
        }
}

static void prepare_output_image(th_run *r, int id) {
  th_buf *b = &r->bufs[id];
  if (!b->size || !b->output) return;
  for (size_t i = 0; i < b->size; ++i)
    b->init[i] = b->inview[i] ? (id == TB_MASKOUT ? TH_MASK_POISON : TH_POISON) : TH_GUARD;
}

static polyattn_status dev_write_all(th_run *r, int id, const uint8_t *src) {
  th_buf *b = &r->bufs[id];
  polyattn_status st = polyattn_buffer_write(r->ctx, b->dev, 0, src, b->size);
  if (st != POLYATTN_OK)
    snprintf(r->msg, sizeof r->msg, "polyattn_buffer_write(%s): %s: %s", th_buf_names[id],
             polyattn_status_string(st), polyattn_last_error(r->ctx));
  return st;
}

static polyattn_status dev_read_all(th_run *r, int id) {
  th_buf *b = &r->bufs[id];
  polyattn_status st = polyattn_buffer_read(r->ctx, b->dev, 0, b->img, b->size);
  if (st != POLYATTN_OK)
    snprintf(r->msg, sizeof r->msg, "polyattn_buffer_read(%s): %s: %s", th_buf_names[id],
             polyattn_status_string(st), polyattn_last_error(r->ctx));
  return st;
}

/* ---------------------------------------------------------------- creation */

static void make_seqs(th_run *r) {
  const th_case *c = &r->c;
  r->q_start = th_xcalloc((size_t)r->B + 1, sizeof(int64_t));
  r->k_start = th_xcalloc((size_t)r->B + 1, sizeof(int64_t));
  r->len_q = th_xcalloc((size_t)r->B, sizeof(int32_t));
  r->len_k = th_xcalloc((size_t)r->B, sizeof(int32_t));
  r->Sq = c->varlen ? 0 : c->seq_q;
  r->Sk = c->varlen ? 0 : c->seq_k;
  for (int32_t b = 0; b < r->B; ++b) {
    r->len_q[b] = c->varlen ? c->seqlens_q[b] : c->seq_q;
    r->len_k[b] = c->varlen ? c->seqlens_k[b] : c->seq_k;
    r->q_start[b + 1] = r->q_start[b] + r->len_q[b];
    r->k_start[b + 1] = r->k_start[b] + r->len_k[b];
    if (c->varlen) {
      if (r->len_q[b] > r->Sq) r->Sq = r->len_q[b];
      if (r->len_k[b] > r->Sk) r->Sk = r->len_k[b];
    }
  }
  r->total_q = r->q_start[r->B];
  r->total_k = r->k_start[r->B];
}

static void make_views(th_run *r) {
  const th_case *c = &r->c;
  int64_t Sq_rows = c->varlen ? r->total_q : r->Sq;
  int64_t Sk_rows = c->varlen ? r->total_k : r->Sk;
  if (c->layout == TH_PACKED_QKV) {
    cr_assert(r->D == r->Dv && Sq_rows == Sk_rows, "%s: packed QKV needs D == Dv, Sq == Sk", c->name);
    int64_t W = (int64_t)(r->Hq + 2 * r->Hkv) * r->D;
    th_tv base = {.off = 0, .sh = r->D, .ss = W, .sb = c->varlen ? 0 : Sq_rows * W};
    r->q = base, r->k = base, r->v = base;
    r->q.buf = TB_Q, r->q.heads = r->Hq, r->q.dim = r->D;
    r->k.buf = TB_Q, r->k.heads = r->Hkv, r->k.dim = r->D, r->k.off = (int64_t)r->Hq * r->D;
    r->v.buf = TB_Q, r->v.heads = r->Hkv, r->v.dim = r->Dv,
    r->v.off = (int64_t)(r->Hq + r->Hkv) * r->D;
    r->dq = r->q, r->dk = r->k, r->dv = r->v;
    r->dq.buf = r->dk.buf = r->dv.buf = TB_DQ;
    tv_layout(TH_CONTIGUOUS, c->varlen, r->B, Sq_rows, r->Hq, r->Dv, &r->o);
    r->dout = r->o;
  } else {
    tv_layout(c->layout, c->varlen, r->B, Sq_rows, r->Hq, r->D, &r->q);
    tv_layout(c->layout, c->varlen, r->B, Sk_rows, r->Hkv, r->D, &r->k);
    tv_layout(c->layout, c->varlen, r->B, Sk_rows, r->Hkv, r->Dv, &r->v);
    tv_layout(c->layout, c->varlen, r->B, Sq_rows, r->Hq, r->Dv, &r->o);
    r->dout = r->o, r->dq = r->q, r->dk = r->k, r->dv = r->v;
    r->q.buf = TB_Q, r->k.buf = TB_K, r->v.buf = TB_V;
    r->dq.buf = TB_DQ, r->dk.buf = TB_DK, r->dv.buf = TB_DV;
  }
  r->o.buf = TB_O, r->dout.buf = TB_DO;
  r->q.kv = r->dq.kv = r->o.kv = r->dout.kv = 0;
  r->k.kv = r->v.kv = r->dk.kv = r->dv.kv = 1;

  /* LSE: [B, Hq, Sq] or varlen [Hq, total_q]; padded in the odd layout. */
  int pad = c->layout == TH_STRIDED_ODD;
  r->lse_off = pad ? 5 : 0;
  r->lse_ss = 1;
  r->lse_sh = Sq_rows + (pad ? 3 : 0);
  r->lse_sb = c->varlen ? 0 : r->Hq * r->lse_sh + (pad ? 7 : 0);
}

static void make_metadata(th_run *r) {
  const th_case *c = &r->c;
  if (c->varlen) {
    buf_need(r, TB_CUQ, (size_t)(r->B + 1) * 4, 0);
    buf_need(r, TB_CUK, (size_t)(r->B + 1) * 4, 0);
  }
  if (c->seqused) buf_need(r, TB_USED, (size_t)r->B * 4, 0);
  if (c->alibi) buf_need(r, TB_ALIBI, (size_t)(c->alibi == TH_ALIBI_BATCH_HEADS ? r->B : 1) * r->Hq * 4, 0);
  int32_t bq = c->block_q > 0 ? c->block_q : 64, bk = c->block_k > 0 ? c->block_k : 64;
  r->nqb = (r->Sq + bq - 1) / bq;
  r->nkb = (r->Sk + bk - 1) / bk;
  r->mask_b = c->mask_per_batch ? r->B : 1;
  r->mask_h = c->mask_per_head ? r->Hq : 1;
  if (c->sparsity == POLYATTN_SPARSITY_BLOCK)
    buf_need(r, TB_MASK, (size_t)r->mask_b * r->mask_h * r->nqb * r->nkb, 0);
  if (c->sparsity == POLYATTN_SPARSITY_AUTO_BLOCK && c->mask_out) {
    buf_need(r, TB_MASKOUT, (size_t)r->B * r->Hq * r->nqb * r->nkb, 1);
  }
}

static void fill_metadata(th_run *r) {
  const th_case *c = &r->c;
  if (c->varlen) {
    int32_t *cq = (int32_t *)r->bufs[TB_CUQ].img, *ck = (int32_t *)r->bufs[TB_CUK].img;
    for (int32_t b = 0; b <= r->B; ++b) {
      cq[b] = (int32_t)r->q_start[b];
      ck[b] = (int32_t)r->k_start[b];
    }
  }
  if (c->seqused) memcpy(r->bufs[TB_USED].img, c->seqused_k, (size_t)r->B * 4);
  if (c->alibi) {
    float *s = (float *)r->bufs[TB_ALIBI].img;
    int nb = c->alibi == TH_ALIBI_BATCH_HEADS ? r->B : 1;
    for (int b = 0; b < nb; ++b)
      for (int h = 0; h < r->Hq; ++h)
        s[b * r->Hq + h] = (float)(exp2(-8.0 * (h + 1) / r->Hq) * (1.0 + 0.5 * b));
  }
  if (c->sparsity == POLYATTN_SPARSITY_BLOCK) {
    uint8_t *m = r->bufs[TB_MASK].img;
    int32_t bq = c->block_q > 0 ? c->block_q : 64, bk = c->block_k > 0 ? c->block_k : 64;
    for (int32_t b = 0; b < r->mask_b; ++b)
      for (int32_t h = 0; h < r->mask_h; ++h)
        for (int32_t qb = 0; qb < r->nqb; ++qb)
          for (int32_t kb = 0; kb < r->nkb; ++kb) {
            uint8_t *e = &m[(((int64_t)b * r->mask_h + h) * r->nqb + qb) * r->nkb + kb];
            /* nonzero keeps, whatever its value */
            *e = uniform(&r->rng) < c->mask_density ? (uint8_t)(1 + splitmix(&r->rng) % 255) : 0;
            if (c->mask_keep_diag) {
              int64_t lo = (int64_t)qb * bq + r->Sk - r->Sq;
              int64_t hi = lo + bq - 1;
              if ((int64_t)kb * bk <= hi && (int64_t)(kb + 1) * bk > lo) *e = 1;
            }
            if (c->mask_empty_rows && qb % 3 == 1) *e = 0;
          }
  }
}

static void make_tensors(th_run *r) {
  const th_case *c = &r->c;
  for (int side = 0; side < 2; ++side) {
    polyattn_tensor *T = side ? r->host_t : r->dev_t;
#define BUFP(id) (side ? r->bufs[id].host : r->bufs[id].dev)
    T[TB_Q] = tv_tensor(r, &r->q, BUFP(r->q.buf));
    T[TB_K] = tv_tensor(r, &r->k, BUFP(r->k.buf));
    T[TB_V] = tv_tensor(r, &r->v, BUFP(r->v.buf));
    T[TB_O] = tv_tensor(r, &r->o, BUFP(TB_O));
    if (r->backward) {
      T[TB_DO] = tv_tensor(r, &r->dout, BUFP(TB_DO));
      T[TB_DQ] = tv_tensor(r, &r->dq, BUFP(r->dq.buf));
      T[TB_DK] = tv_tensor(r, &r->dk, BUFP(r->dk.buf));
      T[TB_DV] = tv_tensor(r, &r->dv, BUFP(r->dv.buf));
    }
    polyattn_tensor *t = &T[TB_LSE];
    memset(t, 0, sizeof *t);
    t->buffer = BUFP(TB_LSE);
    t->offset = (size_t)r->lse_off * 4;
    t->dtype = POLYATTN_DTYPE_F32;
    if (c->varlen) {
      t->ndim = 2;
      t->shape[0] = r->Hq, t->shape[1] = r->total_q;
      t->strides[0] = r->lse_sh, t->strides[1] = 1;
    } else {
      t->ndim = 3;
      t->shape[0] = r->B, t->shape[1] = r->Hq, t->shape[2] = r->Sq;
      t->strides[0] = r->lse_sb, t->strides[1] = r->lse_sh, t->strides[2] = 1;
    }
    int64_t shp[4];
    if (c->varlen) {
      shp[0] = r->B + 1;
      polyattn_tensor_contiguous(&T[TB_CUQ], BUFP(TB_CUQ), 0, POLYATTN_DTYPE_I32, 1, shp);
      polyattn_tensor_contiguous(&T[TB_CUK], BUFP(TB_CUK), 0, POLYATTN_DTYPE_I32, 1, shp);
    }
    if (c->seqused) {
      shp[0] = r->B;
      polyattn_tensor_contiguous(&T[TB_USED], BUFP(TB_USED), 0, POLYATTN_DTYPE_I32, 1, shp);
    }
    if (c->alibi == TH_ALIBI_HEADS) {
      shp[0] = r->Hq;
      polyattn_tensor_contiguous(&T[TB_ALIBI], BUFP(TB_ALIBI), 0, POLYATTN_DTYPE_F32, 1, shp);
    } else if (c->alibi == TH_ALIBI_BATCH_HEADS) {
      shp[0] = r->B, shp[1] = r->Hq;
      polyattn_tensor_contiguous(&T[TB_ALIBI], BUFP(TB_ALIBI), 0, POLYATTN_DTYPE_F32, 2, shp);
    }
    if (r->bufs[TB_MASK].size) {
      shp[0] = r->mask_b, shp[1] = r->mask_h, shp[2] = r->nqb, shp[3] = r->nkb;
      polyattn_tensor_contiguous(&T[TB_MASK], BUFP(TB_MASK), 0, POLYATTN_DTYPE_U8, 4, shp);
    }
    if (r->bufs[TB_MASKOUT].size) {
      shp[0] = r->B, shp[1] = r->Hq, shp[2] = r->nqb, shp[3] = r->nkb;
      polyattn_tensor_contiguous(&T[TB_MASKOUT], BUFP(TB_MASKOUT), 0, POLYATTN_DTYPE_U8, 4, shp);
    }
#undef BUFP

    polyattn_params *pp = side ? &r->host_params : &r->dev_params;
    polyattn_params_init(pp);
    pp->scale = c->scale;
    pp->causal = c->causal;
    pp->window_left = c->window_left;
    pp->window_right = c->window_right;
    pp->softcap = c->softcap;
    pp->alibi_slopes = c->alibi ? &T[TB_ALIBI] : NULL;
    if (c->varlen) {
      pp->cu_seqlens_q = &T[TB_CUQ];
      pp->cu_seqlens_k = &T[TB_CUK];
      /* The library computes max_seqlen only from cu_seqlens it can read on the host
       * (docs/decisions.md 4): a GPU backend's run always passes it. */
      int host_reads = side || polyattn_context_backend(r->ctx) == POLYATTN_BACKEND_CPU;
      pp->max_seqlen_q = c->no_max_seqlen && host_reads ? 0 : r->Sq;
      pp->max_seqlen_k = c->no_max_seqlen && host_reads ? 0 : r->Sk;
    }
    pp->seqused_k = c->seqused ? &T[TB_USED] : NULL;
    pp->sparsity = c->sparsity;
    pp->block_mask = r->bufs[TB_MASK].size ? &T[TB_MASK] : NULL;
    pp->block_q = c->block_q;
    pp->block_k = c->block_k;
    pp->block_threshold = c->block_threshold;
    pp->auto_density_cutoff = c->auto_density_cutoff;
    pp->block_mask_out = r->bufs[TB_MASKOUT].size ? &T[TB_MASKOUT] : NULL;
    pp->deterministic = c->deterministic;
  }
  /* The oracle gets its own block_mask_out so it cannot overwrite the library's. */
  if (r->bufs[TB_MASKOUT].size) {
    r->oracle_mask_out = th_xcalloc(r->bufs[TB_MASKOUT].size, 1);
    polyattn_buffer *hb = NULL;
    polyattn_status st = polyattn_buffer_wrap(r->host_ctx, POLYATTN_MEMORY_HOST, r->oracle_mask_out,
                                              r->bufs[TB_MASKOUT].size, &hb);
    cr_assert_eq(st, POLYATTN_OK, "wrap: %s", polyattn_last_error(r->host_ctx));
    r->host_t[TB_MASKOUT].buffer = hb;
  }
}

th_run *th_run_create(polyattn_context *ctx, const th_case *c, int backward) {
  th_run *r = th_xcalloc(1, sizeof *r);
  r->c = *c;
  r->backward = backward;
  r->ctx = ctx;
  r->esize = polyattn_dtype_size(c->dtype);
  r->B = c->batch, r->Hq = c->heads_q, r->Hkv = c->heads_kv, r->D = c->head_dim, r->Dv = c->head_dim_v;
  r->want_lse = backward || !c->no_lse;
  r->rng = hash_str(c->name) ^ ((uint64_t)c->seed << 32) ^ ((uint64_t)c->dtype * 7919u);
  cr_assert(!c->varlen || r->B <= TH_MAX_SEQS, "%s: varlen batch above TH_MAX_SEQS", c->name);

  make_seqs(r);
  make_views(r);
  buf_need(r, r->q.buf, (size_t)tv_span(r, &r->q) * r->esize, 0);
  buf_need(r, r->k.buf, (size_t)tv_span(r, &r->k) * r->esize, 0);
  buf_need(r, r->v.buf, (size_t)tv_span(r, &r->v) * r->esize, 0);
  buf_need(r, TB_O, (size_t)tv_span(r, &r->o) * r->esize, 1);
  if (r->want_lse) {
    int64_t lse_end = r->lse_off;
    for (int32_t b = 0; b < r->B; ++b)
      if (r->len_q[b] > 0) {
        int64_t e = th_lse_index(r, b, r->Hq - 1, r->len_q[b] - 1) + 1;
        if (e > lse_end) lse_end = e;
      }
    buf_need(r, TB_LSE, (size_t)lse_end * 4, 1);
  }
  if (backward) {
    buf_need(r, TB_DO, (size_t)tv_span(r, &r->dout) * r->esize, 0);
    buf_need(r, r->dq.buf, (size_t)tv_span(r, &r->dq) * r->esize, 1);
    buf_need(r, r->dk.buf, (size_t)tv_span(r, &r->dk) * r->esize, 1);
    buf_need(r, r->dv.buf, (size_t)tv_span(r, &r->dv) * r->esize, 1);
  }
  make_metadata(r);
  buf_materialise(r);

  double *clusters = NULL;
  if (c->clustered) {
    clusters = th_xcalloc((size_t)4 * r->D, sizeof(double));
    for (int32_t i = 0; i < 4 * r->D; ++i) clusters[i] = normal(&r->rng);
  }
  fill_view_random(r, &r->q, clusters);
  fill_view_random(r, &r->k, clusters);
  fill_view_random(r, &r->v, NULL);
  if (backward) fill_view_random(r, &r->dout, NULL);
  free(clusters);
  fill_metadata(r);
  mark_view(r, &r->o);
  if (backward) {
    mark_view(r, &r->dq);
    mark_view(r, &r->dk);
    mark_view(r, &r->dv);
  }
  if (r->want_lse)
    for (int32_t b = 0; b < r->B; ++b)
      for (int32_t h = 0; h < r->Hq; ++h)
        for (int64_t i = 0; i < r->len_q[b]; ++i)
          memset(r->bufs[TB_LSE].inview + th_lse_index(r, b, h, i) * 4, 1, 4);
  if (r->bufs[TB_MASKOUT].size) memset(r->bufs[TB_MASKOUT].inview, 1, (size_t)r->B * r->Hq * r->nqb * r->nkb);
  for (int i = 0; i < TB_COUNT; ++i) prepare_output_image(r, i);

  polyattn_context_desc hd;
  polyattn_context_desc_init(&hd);
  hd.backend = POLYATTN_BACKEND_CPU;
  hd.num_threads = 1;
  polyattn_status st = polyattn_context_create(&hd, &r->host_ctx);
  cr_assert_eq(st, POLYATTN_OK, "host context: %s", polyattn_last_error(NULL));
  for (int i = 0; i < TB_COUNT; ++i) {
    th_buf *b = &r->bufs[i];
    if (!b->size) continue;
    st = polyattn_buffer_alloc(ctx, b->size, &b->dev);
    cr_assert_eq(st, POLYATTN_OK, "%s: polyattn_buffer_alloc(%zu) for %s: %s: %s", c->name, b->size,
                 th_buf_names[i], polyattn_status_string(st), polyattn_last_error(ctx));
    st = polyattn_buffer_wrap(r->host_ctx, POLYATTN_MEMORY_HOST, b->img, b->size, &b->host);
    cr_assert_eq(st, POLYATTN_OK, "polyattn_buffer_wrap(host): %s", polyattn_last_error(r->host_ctx));
    if (!b->output) {
      st = dev_write_all(r, i, b->img);
      cr_assert_eq(st, POLYATTN_OK, "%s", r->msg);
    }
  }
  make_tensors(r);
  return r;
}

void th_run_destroy(th_run *r) {
  if (!r) return;
  for (int i = 0; i < TB_COUNT; ++i) {
    polyattn_buffer_free(r->bufs[i].dev);
    polyattn_buffer_free(r->bufs[i].host);
    free(r->bufs[i].img);
    free(r->bufs[i].init);
    free(r->bufs[i].inview);
  }
  if (r->host_t[TB_MASKOUT].buffer) polyattn_buffer_free(r->host_t[TB_MASKOUT].buffer);
  free(r->oracle_mask_out);
  polyattn_buffer_free(r->ws);
  polyattn_context_destroy(r->host_ctx);
  free(r->q_start), free(r->k_start), free(r->len_q), free(r->len_k);
  free(r);
}

const char *th_run_message(const th_run *r) { return r->msg; }

/* ------------------------------------------------------------------ running */

static polyattn_status poison(th_run *r, const int *ids, int n) {
  for (int i = 0; i < n; ++i) {
    th_buf *b = &r->bufs[ids[i]];
    if (!b->size) continue;
    memcpy(b->img, b->init, b->size);
    polyattn_status st = dev_write_all(r, ids[i], b->init);
    if (st != POLYATTN_OK) return st;
  }
  return POLYATTN_OK;
}

static polyattn_status ensure_workspace(th_run *r, size_t bytes) {
  if (bytes == 0) return POLYATTN_OK;
  if (r->ws && r->ws_size >= bytes) return POLYATTN_OK;
  polyattn_buffer_free(r->ws);
  r->ws = NULL;
  polyattn_status st = polyattn_buffer_alloc(r->ctx, bytes, &r->ws);
  if (st != POLYATTN_OK) {
    snprintf(r->msg, sizeof r->msg, "workspace alloc(%zu): %s", bytes, polyattn_last_error(r->ctx));
    return st;
  }
  r->ws_size = bytes;
  /* a workspace full of NaN: results must not depend on its contents */
  uint8_t *junk = th_xcalloc(bytes, 1);
  memset(junk, TH_POISON, bytes);
  st = polyattn_buffer_write(r->ctx, r->ws, 0, junk, bytes);
  free(junk);
  return st;
}

static polyattn_status fail_call(th_run *r, const char *what, polyattn_status st) {
  const char *m = polyattn_last_error(r->ctx);
  snprintf(r->msg, sizeof r->msg, "%s: %s: %s", what, polyattn_status_string(st),
           m && *m ? m : "(polyattn_last_error is empty)");
  return st;
}

polyattn_status th_run_forward(th_run *r) {
  static const int outs[] = {TB_O, TB_LSE, TB_MASKOUT};
  polyattn_status st = poison(r, outs, 3);
  if (st != POLYATTN_OK) return st;
  const polyattn_tensor *T = r->dev_t;
  const polyattn_tensor *lse = r->want_lse ? &T[TB_LSE] : NULL;
  size_t bytes = 0;
  st = polyattn_forward_workspace_size(r->ctx, &r->dev_params, &T[TB_Q], &T[TB_K], &T[TB_V],
                                       &T[TB_O], lse, &bytes);
  if (st != POLYATTN_OK) return fail_call(r, "polyattn_forward_workspace_size", st);
  if (!r->c.no_workspace && (st = ensure_workspace(r, bytes)) != POLYATTN_OK) return st;
  st = polyattn_forward(r->ctx, &r->dev_params, &T[TB_Q], &T[TB_K], &T[TB_V], &T[TB_O], lse,
                        bytes && !r->c.no_workspace ? r->ws : NULL);
  if (st != POLYATTN_OK) return fail_call(r, "polyattn_forward", st);
  if ((st = polyattn_synchronize(r->ctx)) != POLYATTN_OK) return fail_call(r, "polyattn_synchronize", st);
  for (size_t i = 0; i < 3; ++i)
    if (r->bufs[outs[i]].size && (st = dev_read_all(r, outs[i])) != POLYATTN_OK) return st;
  return POLYATTN_OK;
}

polyattn_status th_run_backward(th_run *r) {
  static const int outs[] = {TB_DQ, TB_DK, TB_DV};
  polyattn_status st = poison(r, outs, 3);
  if (st != POLYATTN_OK) return st;
  const polyattn_tensor *T = r->dev_t;
  size_t bytes = 0;
  st = polyattn_backward_workspace_size(r->ctx, &r->dev_params, &T[TB_Q], &T[TB_K], &T[TB_V],
                                        &T[TB_O], &T[TB_LSE], &T[TB_DO], &T[TB_DQ], &T[TB_DK],
                                        &T[TB_DV], &bytes);
  if (st != POLYATTN_OK) return fail_call(r, "polyattn_backward_workspace_size", st);
  if (!r->c.no_workspace && (st = ensure_workspace(r, bytes)) != POLYATTN_OK) return st;
  st = polyattn_backward(r->ctx, &r->dev_params, &T[TB_Q], &T[TB_K], &T[TB_V], &T[TB_O],
                         &T[TB_LSE], &T[TB_DO], &T[TB_DQ], &T[TB_DK], &T[TB_DV],
                         bytes && !r->c.no_workspace ? r->ws : NULL);
  if (st != POLYATTN_OK) return fail_call(r, "polyattn_backward", st);
  if ((st = polyattn_synchronize(r->ctx)) != POLYATTN_OK) return fail_call(r, "polyattn_synchronize", st);
  for (size_t i = 0; i < 3; ++i)
    if (r->bufs[outs[i]].size && (st = dev_read_all(r, outs[i])) != POLYATTN_OK) return st;
  return POLYATTN_OK;
}

const void *th_run_bytes(const th_run *r, int which, size_t *bytes) {
  static const int ids[] = {TB_O, TB_LSE, TB_DQ, TB_DK, TB_DV};
  const th_buf *b = &r->bufs[ids[which]];
  *bytes = b->size;
  return b->img;
}

/* ------------------------------------------------------- finite differences */

static const th_tv *input_view(const th_run *r, int tensor) {
  return tensor == 0 ? &r->q : tensor == 1 ? &r->k : &r->v;
}
static const th_tv *grad_view(const th_run *r, int tensor) {
  return tensor == 0 ? &r->dq : tensor == 1 ? &r->dk : &r->dv;
}

double th_input_get(const th_run *r, int tensor, int32_t b, int64_t tok, int32_t h, int32_t d) {
  const th_tv *v = input_view(r, tensor);
  return pa_load_f32(r->bufs[v->buf].img, th_tv_index(r, v, b, tok, h, d), r->c.dtype);
}

void th_input_set(th_run *r, int tensor, int32_t b, int64_t tok, int32_t h, int32_t d, double value) {
  const th_tv *v = input_view(r, tensor);
  int64_t idx = th_tv_index(r, v, b, tok, h, d);
  uint8_t *img = r->bufs[v->buf].img;
  pa_store_f32(img, idx, r->c.dtype, (float)value);
  polyattn_status st = polyattn_buffer_write(r->ctx, r->bufs[v->buf].dev, (size_t)idx * r->esize,
                                             img + (size_t)idx * r->esize, r->esize);
  cr_assert_eq(st, POLYATTN_OK, "polyattn_buffer_write: %s", polyattn_last_error(r->ctx));
}

double th_grad_get(const th_run *r, int tensor, int32_t b, int64_t tok, int32_t h, int32_t d) {
  const th_tv *v = grad_view(r, tensor);
  return pa_load_f32(r->bufs[v->buf].img, th_tv_index(r, v, b, tok, h, d), r->c.dtype);
}

double th_loss(const th_run *r) {
  double s = 0;
  const uint8_t *o = r->bufs[TB_O].img, *g = r->bufs[TB_DO].img;
  for (int32_t b = 0; b < r->B; ++b)
    for (int64_t t = 0; t < r->len_q[b]; ++t)
      for (int32_t h = 0; h < r->Hq; ++h)
        for (int32_t d = 0; d < r->Dv; ++d)
          s += (double)pa_load_f32(o, th_tv_index(r, &r->o, b, t, h, d), r->c.dtype) *
               pa_load_f32(g, th_tv_index(r, &r->dout, b, t, h, d), r->c.dtype);
  return s;
}

