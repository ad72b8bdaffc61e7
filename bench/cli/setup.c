#include "setup.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert.h"
#include "mask.h"

void attn_config_defaults(attn_config *c) {
  memset(c, 0, sizeof *c);
  c->backend = POLYATTN_BACKEND_AUTO;
  c->dtype = POLYATTN_DTYPE_F32;
  c->batch = 1;
  c->heads = 8;
  c->seq_q = c->seq_k = 2048;
  c->dim = 64;
  c->window_left = c->window_right = -1;
  c->sparsity = POLYATTN_SPARSITY_NONE;
  c->density = 0.25;
  c->block = 64;
  c->seed = 1;
}

/* --------------------------------------------------------------- random data */

/* splitmix64: small, seedable, and good enough for test inputs. */
static uint64_t rng_next(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static double rng_uniform(uint64_t *s) { /* (0, 1) */
  return ((double)(rng_next(s) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

/* Standard normal values (Box-Muller), stored in `dtype`. Attention inputs are
 * roughly normal in practice, and never all zeros (a test of nothing). */
static void fill_normal(void *dst, int64_t n, polyattn_dtype dtype, uint64_t *s) {
  for (int64_t i = 0; i < n; i += 2) {
    double r = sqrt(-2.0 * log(rng_uniform(s))), t = 6.283185307179586 * rng_uniform(s);
    pa_store_f32(dst, i, dtype, (float)(r * cos(t)));
    if (i + 1 < n) pa_store_f32(dst, i + 1, dtype, (float)(r * sin(t)));
  }
}

/* The clustered inputs of attn_config: add topic (b, block of the token's key
 * position, kv head) to each q and k row. Query row i sits at key position
 * i + Sk - Sq (bottom-right alignment). */
static void add_topics(const attn_config *c, void *q, void *k, uint64_t *s) {
  const double amplitude = 1.5; /* topic:noise ratio; sharp but not one-hot */
  int64_t nblk = (c->seq_k + c->block - 1) / c->block;
  int64_t n = (int64_t)c->batch * nblk * c->kv_heads * c->dim;
  float *topic = malloc((size_t)(n > 0 ? n : 1) * sizeof *topic);
  if (!topic) return;
  fill_normal(topic, n, POLYATTN_DTYPE_F32, s);
  int32_t group = c->heads / c->kv_heads;
  for (int32_t b = 0; b < c->batch; b++)
    for (int pass = 0; pass < 2; pass++) { /* 0: k, 1: q */
      int32_t len = pass ? c->seq_q : c->seq_k, heads = pass ? c->heads : c->kv_heads;
      void *dst = pass ? q : k;
      for (int32_t i = 0; i < len; i++) {
        int64_t pos = pass ? (int64_t)i + c->seq_k - c->seq_q : i;
        int64_t blk = pos < 0 ? 0 : (pos >= c->seq_k ? nblk - 1 : pos / c->block);
        for (int32_t h = 0; h < heads; h++) {
          int32_t hk = pass ? h / group : h;
          const float *t = topic + ((b * nblk + blk) * c->kv_heads + hk) * c->dim;
          int64_t row = (((int64_t)b * len + i) * heads + h) * c->dim;
          for (int32_t d = 0; d < c->dim; d++) {
            float x = pa_load_f32(dst, row + d, c->dtype) + (float)(amplitude * t[d]);
            pa_store_f32(dst, row + d, c->dtype, x);
          }
        }
      }
    }
  free(topic);
}

/* The structured inputs of attn_config (clustered = 2), for the sparse modes'
 * accuracy and speed tables: peaked attention with both long-range and local
 * structure, per (batch entry, kv head):
 *   - a few dominant directions: STRUCT_TOPICS random directions u_t; the keys are
 *     cut into segments of 64 to 448 tokens (uniform in steps of 64), each with one
 *     topic drawn at random, so a query attends to every segment sharing its topic,
 *     near or far;
 *   - positional locality: anchor vectors a_m every STRUCT_SPAN positions and, at
 *     position x, the linear interpolation between the two anchors around it, so
 *     nearby tokens share most of it;
 *   - the i.i.d. N(0, 1) noise already in q and k.
 * q_i and k_j get topic_amp * u_t + local_amp * a(x) added (x = the token's key
 * position, i + Sk - Sq for queries). With D-dimensional N(0, 1) directions and the
 * default 1/sqrt(D) scale, a same-topic pair's score gains about topic_amp^2 *
 * sqrt(D) (2.8 at D = 128) and a neighbour's about local_amp^2 * sqrt(D): peaked,
 * not one-hot. */
enum { STRUCT_TOPICS = 8, STRUCT_SPAN = 128 };

static void add_structure(const attn_config *c, void *q, void *k, uint64_t *s) {
  const double topic_amp = 1.0, local_amp = 0.5;
  int64_t D = c->dim, nanch = c->seq_k / STRUCT_SPAN + 2;
  float *topic = malloc((size_t)STRUCT_TOPICS * D * sizeof *topic);
  float *anchor = malloc((size_t)nanch * D * sizeof *anchor);
  int32_t *seg_topic = malloc((size_t)(c->seq_k > 0 ? c->seq_k : 1) * sizeof *seg_topic);
  if (!topic || !anchor || !seg_topic) goto out;
  int32_t group = c->heads / c->kv_heads;
  for (int32_t b = 0; b < c->batch; b++)
    for (int32_t hk = 0; hk < c->kv_heads; hk++) {
      fill_normal(topic, STRUCT_TOPICS * D, POLYATTN_DTYPE_F32, s);
      fill_normal(anchor, nanch * D, POLYATTN_DTYPE_F32, s);
      for (int64_t x = 0; x < c->seq_k;) { /* segments and their topics */
        int64_t len = 64 * (1 + (int64_t)(rng_uniform(s) * 7));
        int32_t t = (int32_t)(rng_uniform(s) * STRUCT_TOPICS);
        for (int64_t e = x + len; x < e && x < c->seq_k; x++) seg_topic[x] = t;
      }
      for (int pass = 0; pass < 2; pass++) { /* 0: k, 1: q */
        int32_t len = pass ? c->seq_q : c->seq_k, heads = pass ? c->heads : c->kv_heads;
        void *dst = pass ? q : k;
        for (int32_t i = 0; i < len; i++) {
          int64_t x = pass ? (int64_t)i + c->seq_k - c->seq_q : i;
          x = x < 0 ? 0 : (x >= c->seq_k ? c->seq_k - 1 : x);
          const float *u = topic + (int64_t)seg_topic[x] * D;
          int64_t m = x / STRUCT_SPAN;
          double f = (double)(x % STRUCT_SPAN) / STRUCT_SPAN;
          const float *a0 = anchor + m * D, *a1 = anchor + (m + 1) * D;
          for (int32_t h = pass ? hk * group : hk; h < (pass ? (hk + 1) * group : hk + 1); h++) {
            int64_t row = (((int64_t)b * len + i) * heads + h) * D;
            for (int64_t d = 0; d < D; d++) {
              double add = topic_amp * u[d] + local_amp * ((1 - f) * a0[d] + f * a1[d]);
              pa_store_f32(dst, row + d, c->dtype, pa_load_f32(dst, row + d, c->dtype) + (float)add);
            }
          }
        }
      }
    }
out:
  free(topic);
  free(anchor);
  free(seg_topic);
}

/* ------------------------------------------------------------------- buffers */

static polyattn_status fail(attn_run *r, polyattn_status st, const char *what) {
  fprintf(stderr, "polyattn: %s failed: %s: %s\n", what, polyattn_status_string(st),
          polyattn_last_error(r->ctx));
  return st;
}

/* A context buffer holding a contiguous tensor of `shape`; uploads `host` if given. */
static polyattn_status make_tensor(attn_run *r, int slot, polyattn_tensor *t,
                                   polyattn_dtype dtype, int ndim, const int64_t *shape,
                                   const void *host, const char *name) {
  size_t bytes = polyattn_dtype_size(dtype);
  for (int i = 0; i < ndim; i++) bytes *= (size_t)shape[i];
  if (bytes == 0) bytes = 1; /* a zero-sized view still needs a buffer */
  polyattn_status st = polyattn_buffer_alloc(r->ctx, bytes, &r->bufs[slot]);
  if (st != POLYATTN_OK) return fail(r, st, name);
  polyattn_tensor_contiguous(t, r->bufs[slot], 0, dtype, ndim, shape);
  if (host) {
    st = polyattn_buffer_write(r->ctx, r->bufs[slot], 0, host, bytes);
    if (st != POLYATTN_OK) return fail(r, st, name);
  }
  return POLYATTN_OK;
}

static void *alloc_host(size_t n, size_t esize) { return calloc(n ? n : 1, esize); }

/* The random block mask of BLOCK runs: each block kept with probability
 * `density`, and key block 0 always, so no row is left empty. */
static void fill_block_mask(uint8_t *m, int64_t qb, int64_t kb, double density, uint64_t *s) {
  for (int64_t i = 0; i < qb; i++)
    for (int64_t j = 0; j < kb; j++) m[i * kb + j] = (uint8_t)(j == 0 || rng_uniform(s) < density);
}

polyattn_status attn_run_setup(attn_run *r, polyattn_context *ctx, const attn_config *cfg) {
  memset(r, 0, sizeof *r);
  r->cfg = *cfg;
  r->ctx = ctx;
  const attn_config *c = &r->cfg;
  attn_host *h = &r->host;
  polyattn_dtype dt = c->dtype;
  size_t es = polyattn_dtype_size(dt);
  int64_t nq = (int64_t)c->batch * c->seq_q * c->heads * c->dim;
  int64_t nk = (int64_t)c->batch * c->seq_k * c->kv_heads * c->dim;
  int64_t nv = (int64_t)c->batch * c->seq_k * c->kv_heads * c->dim_v;
  int64_t no = (int64_t)c->batch * c->seq_q * c->heads * c->dim_v;
  int64_t nl = (int64_t)c->batch * c->heads * c->seq_q;
  r->qblocks = (c->seq_q + c->block - 1) / c->block;
  r->kblocks = (c->seq_k + c->block - 1) / c->block;
  int64_t nmask = (int64_t)c->batch * c->heads * r->qblocks * r->kblocks;

  h->q = alloc_host((size_t)nq, es);
  h->k = alloc_host((size_t)nk, es);
  h->v = alloc_host((size_t)nv, es);
  /* fp8 inputs give a bf16 output (docs/semantics.md, FP8) */
  const polyattn_dtype dto = dt == POLYATTN_DTYPE_FP8_E4M3 ? POLYATTN_DTYPE_BF16 : dt;
  h->o = alloc_host((size_t)no, polyattn_dtype_size(dto));
  h->lse = alloc_host((size_t)nl, sizeof(float));
  h->alibi = alloc_host((size_t)c->heads, sizeof(float));
  h->mask = alloc_host((size_t)nmask, 1);
  if (c->backward) {
    h->dout = alloc_host((size_t)no, es);
    h->dq = alloc_host((size_t)nq, es);
    h->dk = alloc_host((size_t)nk, es);
    h->dv = alloc_host((size_t)nv, es);
  }
  if (!h->q || !h->k || !h->v || !h->o || !h->lse || !h->alibi || !h->mask ||
      (c->backward && (!h->dout || !h->dq || !h->dk || !h->dv))) {
    fprintf(stderr, "polyattn: out of host memory for the inputs\n");
    return POLYATTN_ERR_OUT_OF_MEMORY;
  }
  uint64_t seed = c->seed * 0x2545f4914f6cdd1dull + 1;
  fill_normal(h->q, nq, dt, &seed);
  fill_normal(h->k, nk, dt, &seed);
  fill_normal(h->v, nv, dt, &seed);
  if (c->clustered == 1 && c->seq_k > 0) add_topics(c, h->q, h->k, &seed);
  if (c->clustered == 2 && c->seq_k > 0) add_structure(c, h->q, h->k, &seed);
  if (c->backward) fill_normal(h->dout, no, dt, &seed);
  for (int32_t i = 0; i < c->heads; i++) /* the ALiBi paper's geometric slopes */
    h->alibi[i] = (float)pow(2.0, -8.0 * (i + 1) / c->heads);

  const int64_t sq[4] = {c->batch, c->seq_q, c->heads, c->dim};
  const int64_t sk[4] = {c->batch, c->seq_k, c->kv_heads, c->dim};
  const int64_t sv[4] = {c->batch, c->seq_k, c->kv_heads, c->dim_v};
  const int64_t so[4] = {c->batch, c->seq_q, c->heads, c->dim_v};
  const int64_t sl[3] = {c->batch, c->heads, c->seq_q};
  polyattn_status st;
#define TRY(x)                                                                     \
  do {                                                                             \
    if ((st = (x)) != POLYATTN_OK) return st;                                      \
  } while (0)
  TRY(make_tensor(r, 0, &r->q, dt, 4, sq, h->q, "q"));
  TRY(make_tensor(r, 1, &r->k, dt, 4, sk, h->k, "k"));
  TRY(make_tensor(r, 2, &r->v, dt, 4, sv, h->v, "v"));
  TRY(make_tensor(r, 3, &r->o, dto, 4, so, NULL, "out"));
  TRY(make_tensor(r, 4, &r->lse, POLYATTN_DTYPE_F32, 3, sl, NULL, "lse"));

  polyattn_params *p = &r->params;
  polyattn_params_init(p);
  p->causal = c->causal;
  p->window_left = c->window_left;
  p->window_right = c->window_right;
  p->softcap = c->softcap;
  p->sparsity = c->sparsity;
  p->block_q = p->block_k = c->block;
  if (c->alibi) {
    const int64_t sa[1] = {c->heads};
    TRY(make_tensor(r, 5, &r->alibi, POLYATTN_DTYPE_F32, 1, sa, h->alibi, "alibi_slopes"));
    p->alibi_slopes = &r->alibi;
  }
  if (c->sparsity == POLYATTN_SPARSITY_BLOCK) {
    const int64_t sm[4] = {1, 1, r->qblocks, r->kblocks};
    fill_block_mask(h->mask, r->qblocks, r->kblocks, c->density, &seed);
    TRY(make_tensor(r, 6, &r->mask, POLYATTN_DTYPE_U8, 4, sm, h->mask, "block_mask"));
    p->block_mask = &r->mask;
  } else if (c->sparsity == POLYATTN_SPARSITY_AUTO_BLOCK) {
    const int64_t sm[4] = {c->batch, c->heads, r->qblocks, r->kblocks};
    TRY(make_tensor(r, 6, &r->mask_out, POLYATTN_DTYPE_U8, 4, sm, NULL, "block_mask_out"));
    p->block_mask_out = &r->mask_out;
    p->block_threshold = (float)c->threshold;
    p->auto_density_cutoff = (float)c->cutoff;
  }

  size_t ws = 0;
  st = polyattn_forward_workspace_size(ctx, p, &r->q, &r->k, &r->v, &r->o, &r->lse, &ws);
  if (st != POLYATTN_OK) return fail(r, st, "polyattn_forward_workspace_size");
  if (ws) {
    st = polyattn_buffer_alloc(ctx, ws, &r->fwd_ws);
    if (st != POLYATTN_OK) return fail(r, st, "forward workspace");
  }
  if (!c->backward) return POLYATTN_OK;

  TRY(make_tensor(r, 7, &r->dout, dt, 4, so, h->dout, "dout"));
  TRY(make_tensor(r, 8, &r->dq, dt, 4, sq, NULL, "dq"));
  TRY(make_tensor(r, 9, &r->dk, dt, 4, sk, NULL, "dk"));
  TRY(make_tensor(r, 10, &r->dv, dt, 4, sv, NULL, "dv"));
  r->bwd_params = *p;
  r->bwd_params.block_mask_out = NULL;
  if (c->sparsity == POLYATTN_SPARSITY_AUTO_BLOCK) {
    /* The backward takes the mask the forward chose (polyattn.h), or runs dense
     * when the forward did (check_resolve_auto decides after the forward); size
     * the workspace for both. */
    polyattn_params dense = r->bwd_params;
    dense.sparsity = POLYATTN_SPARSITY_NONE;
    st = polyattn_backward_workspace_size(ctx, &dense, &r->q, &r->k, &r->v, &r->o, &r->lse,
                                          &r->dout, &r->dq, &r->dk, &r->dv, &ws);
    if (st != POLYATTN_OK) return fail(r, st, "polyattn_backward_workspace_size");
    r->bwd_params.sparsity = POLYATTN_SPARSITY_BLOCK;
    r->bwd_params.block_mask = &r->mask_out;
  }
  size_t ws_block = 0;
  st = polyattn_backward_workspace_size(ctx, &r->bwd_params, &r->q, &r->k, &r->v, &r->o,
                                        &r->lse, &r->dout, &r->dq, &r->dk, &r->dv, &ws_block);
  if (st != POLYATTN_OK) return fail(r, st, "polyattn_backward_workspace_size");
  if (ws_block > ws || c->sparsity != POLYATTN_SPARSITY_AUTO_BLOCK) ws = ws_block;
  if (ws) {
    st = polyattn_buffer_alloc(ctx, ws, &r->bwd_ws);
    if (st != POLYATTN_OK) return fail(r, st, "backward workspace");
  }
#undef TRY
  return POLYATTN_OK;
}

void attn_run_free(attn_run *r) {
  for (int i = 0; i < ATTN_NBUF; i++) polyattn_buffer_free(r->bufs[i]);
  polyattn_buffer_free(r->fwd_ws);
  polyattn_buffer_free(r->bwd_ws);
  attn_host *h = &r->host;
  void *all[] = {h->q, h->k, h->v, h->dout, h->alibi, h->mask, h->o, h->dq, h->dk, h->dv, h->lse};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) free(all[i]);
  memset(r, 0, sizeof *r);
}

polyattn_status attn_forward(void *run) {
  attn_run *r = run;
  return polyattn_forward(r->ctx, &r->params, &r->q, &r->k, &r->v, &r->o, &r->lse, r->fwd_ws);
}

polyattn_status attn_backward(void *run) {
  attn_run *r = run;
  return polyattn_backward(r->ctx, &r->bwd_params, &r->q, &r->k, &r->v, &r->o, &r->lse,
                           &r->dout, &r->dq, &r->dk, &r->dv, r->bwd_ws);
}

static polyattn_status read_tensor(attn_run *r, const polyattn_tensor *t, void *dst,
                                   const char *name) {
  polyattn_status st = polyattn_buffer_read(r->ctx, t->buffer, t->offset, dst,
                                            polyattn_buffer_size(t->buffer));
  return st == POLYATTN_OK ? st : fail(r, st, name);
}

polyattn_status attn_read_forward(attn_run *r) {
  polyattn_status st = read_tensor(r, &r->o, r->host.o, "reading out");
  if (st == POLYATTN_OK) st = read_tensor(r, &r->lse, r->host.lse, "reading lse");
  if (st == POLYATTN_OK && r->cfg.sparsity == POLYATTN_SPARSITY_AUTO_BLOCK)
    st = read_tensor(r, &r->mask_out, r->host.mask, "reading block_mask_out");
  return st;
}

polyattn_status attn_read_backward(attn_run *r) {
  polyattn_status st = read_tensor(r, &r->dq, r->host.dq, "reading dq");
  if (st == POLYATTN_OK) st = read_tensor(r, &r->dk, r->host.dk, "reading dk");
  if (st == POLYATTN_OK) st = read_tensor(r, &r->dv, r->host.dv, "reading dv");
  return st;
}

/* The causal/window mask of the problem, causal folded in as the library does. */
static pa_mask structural_mask(const attn_config *c) {
  pa_mask m = {c->seq_q, c->seq_k, c->window_left, c->window_right};
  if (c->causal && m.window_right != 0) m.window_right = 0;
  return m;
}

double attn_kept_pairs(const attn_run *r, const uint8_t *mask, int per_head) {
  const attn_config *c = &r->cfg;
  pa_mask m = structural_mask(c);
  int64_t heads = per_head ? (int64_t)c->batch * c->heads : 1, bs = c->block;
  double kept = 0;
  for (int64_t bh = 0; bh < heads; bh++)
    for (int64_t i = 0; i < c->seq_q; i++) {
      int64_t lo, hi;
      pa_mask_row_range(&m, i, &lo, &hi);
      const uint8_t *row = mask + (bh * r->qblocks + i / bs) * r->kblocks;
      for (int64_t kb = lo / bs; hi > lo && kb <= (hi - 1) / bs; kb++) {
        if (!row[kb]) continue;
        int64_t a = kb * bs > lo ? kb * bs : lo, b = (kb + 1) * bs < hi ? (kb + 1) * bs : hi;
        kept += (double)(b - a);
      }
    }
  return kept / (double)heads;
}

double attn_forward_flops(const attn_config *c) {
  double pairs;
  if (c->window_left < 0 && c->window_right < 0) {
    pairs = (double)c->seq_q * c->seq_k * (c->causal ? 0.5 : 1.0);
  } else { /* a window: count the pairs it keeps */
    pa_mask m = structural_mask(c);
    pairs = 0;
    for (int64_t i = 0; i < c->seq_q; i++) {
      int64_t lo, hi;
      pa_mask_row_range(&m, i, &lo, &hi);
      if (hi > lo) pairs += (double)(hi - lo);
    }
  }
  return 2.0 * c->batch * c->heads * pairs * (c->dim + c->dim_v);
}

void attn_config_print(const attn_config *c) {
  printf("problem: %s B=%d Hq=%d Hkv=%d Sq=%d Sk=%d D=%d Dv=%d", polyattn_dtype_name(c->dtype),
         c->batch, c->heads, c->kv_heads, c->seq_q, c->seq_k, c->dim, c->dim_v);
  if (c->causal) printf(" causal");
  if (c->window_left >= 0 || c->window_right >= 0)
    printf(" window=(%d,%d)", c->window_left, c->window_right);
  if (c->softcap > 0) printf(" softcap=%g", c->softcap);
  if (c->alibi) printf(" alibi");
  if (c->sparsity == POLYATTN_SPARSITY_BLOCK)
    printf(" sparsity=block(%d, density %.2f)", c->block, c->density);
  else if (c->sparsity == POLYATTN_SPARSITY_AUTO_BLOCK && c->threshold > 0)
    printf(" sparsity=auto(%d, threshold %g, cutoff %g)", c->block, c->threshold, c->cutoff);
  else if (c->sparsity == POLYATTN_SPARSITY_AUTO_BLOCK)
    printf(" sparsity=auto(%d, default threshold)", c->block);
  else if (c->sparsity == POLYATTN_SPARSITY_NM_2_4)
    printf(" sparsity=2:4");
  if (c->clustered) printf(c->clustered == 2 ? " structured" : " clustered");
  printf(" seed=%llu\n", (unsigned long long)c->seed);
}
