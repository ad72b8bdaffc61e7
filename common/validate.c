/* Validation of the public arguments, in one place for every backend.
 *
 * pa_problem_build() checks everything a caller can get wrong and turns the public
 * tensors into a pa_problem. Each rule has its own status and a message that names
 * the argument. It reads only host memory it is allowed to (metadata tensors in
 * host buffers) and writes nothing but *p and *err, so on failure the caller's
 * outputs are untouched. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "backend.h"
#include "problem.h"

#define CHECK(expr)                                                                \
  do {                                                                             \
    polyattn_status st_ = (expr);                                                  \
    if (st_ != POLYATTN_OK) return st_;                                            \
  } while (0)

/* What a tensor argument must look like. */
typedef enum role { ROLE_INPUT, ROLE_OUTPUT } role;

static int is_float_dtype(polyattn_dtype d) {
  return d == POLYATTN_DTYPE_F32 || d == POLYATTN_DTYPE_F16 || d == POLYATTN_DTYPE_BF16 ||
         d == POLYATTN_DTYPE_FP8_E4M3;
}

/* Shape, strides and bounds of one view: sizes non-negative and within int32 where
 * kernels index with int32, strides non-negative, output views without aliasing
 * zero strides, and every element inside its buffer — all in checked arithmetic. */
static polyattn_status check_view(const polyattn_tensor *t, const char *name, int32_t ndim,
                                  role r, int last_contiguous, pa_error *err) {
  if (!t->buffer) return pa_fail(err, POLYATTN_ERR_NULL_ARGUMENT, "%s.buffer is NULL", name);
  size_t esize = polyattn_dtype_size(t->dtype);
  if (esize == 0)
    return pa_fail(err, POLYATTN_ERR_DTYPE, "%s.dtype %d is not a known dtype", name,
                   (int)t->dtype);
  if (t->ndim != ndim)
    return pa_fail(err, POLYATTN_ERR_SHAPE, "%s.ndim is %d, expected %d", name, (int)t->ndim,
                   (int)ndim);
  int empty = 0;
  for (int i = 0; i < ndim; ++i) {
    if (t->shape[i] < 0)
      return pa_fail(err, POLYATTN_ERR_SHAPE, "%s.shape[%d] = %lld is negative", name, i,
                     (long long)t->shape[i]);
    if (t->shape[i] > INT32_MAX)
      return pa_fail(err, POLYATTN_ERR_OVERFLOW, "%s.shape[%d] = %lld exceeds INT32_MAX", name,
                     i, (long long)t->shape[i]);
    if (t->strides[i] < 0)
      return pa_fail(err, POLYATTN_ERR_STRIDE, "%s.strides[%d] = %lld is negative", name, i,
                     (long long)t->strides[i]);
    if (t->shape[i] == 0) empty = 1;
  }
  if (last_contiguous && t->shape[ndim - 1] > 1 && t->strides[ndim - 1] != 1)
    return pa_fail(err, POLYATTN_ERR_STRIDE, "%s.strides[%d] = %lld: the last dimension must be "
                   "contiguous (stride 1)", name, ndim - 1, (long long)t->strides[ndim - 1]);
  if (empty) return POLYATTN_OK; /* no elements: nothing to alias or to bound */
  if (r == ROLE_OUTPUT) {
    for (int i = 0; i < ndim; ++i)
      if (t->shape[i] > 1 && t->strides[i] == 0)
        return pa_fail(err, POLYATTN_ERR_STRIDE,
                       "%s.strides[%d] is 0: an output must not alias its own elements", name, i);
  }

  /* Last element's offset and the byte extent, without overflow. */
  int64_t last = 0;
  for (int i = 0; i < ndim; ++i) {
    int64_t term;
    if (__builtin_mul_overflow(t->shape[i] - 1, t->strides[i], &term) ||
        __builtin_add_overflow(last, term, &last))
      return pa_fail(err, POLYATTN_ERR_OVERFLOW, "%s: element offsets overflow int64", name);
  }
  uint64_t bytes, end;
  if (__builtin_mul_overflow((uint64_t)last + 1, (uint64_t)esize, &bytes) ||
      __builtin_add_overflow(bytes, (uint64_t)t->offset, &end))
    return pa_fail(err, POLYATTN_ERR_OVERFLOW, "%s: byte extent overflows", name);
  if (end > t->buffer->size)
    return pa_fail(err, POLYATTN_ERR_BOUNDS,
                   "%s: the view ends at byte %llu but its buffer holds %llu bytes", name,
                   (unsigned long long)end, (unsigned long long)t->buffer->size);
  if (t->offset % esize != 0)
    return pa_fail(err, POLYATTN_ERR_STRIDE, "%s.offset %zu is not a multiple of the element size",
                   name, t->offset);
  return POLYATTN_OK;
}

static void fill_view(pa_view *v, const polyattn_tensor *t) {
  memset(v, 0, sizeof *v);
  if (!t) return;
  v->buf = t->buffer;
  v->offset = t->offset;
  v->ptr = t->buffer->address ? (char *)t->buffer->address + t->offset : NULL;
}

/* q/k/v/o-like: [B, S, H, D] or varlen [T, H, D]. */
static void fill_token_view(pa_view *v, const polyattn_tensor *t, int varlen) {
  fill_view(v, t);
  if (varlen) {
    v->stride_s = t->strides[0];
    v->stride_h = t->strides[1];
  } else {
    v->stride_b = t->strides[0];
    v->stride_s = t->strides[1];
    v->stride_h = t->strides[2];
  }
}

static polyattn_status check_dtype(const polyattn_tensor *t, const char *name,
                                   polyattn_dtype want, pa_error *err) {
  if (t->dtype != want)
    return pa_fail(err, POLYATTN_ERR_DTYPE, "%s.dtype is %s, expected %s", name,
                   polyattn_dtype_name(t->dtype), polyattn_dtype_name(want));
  return POLYATTN_OK;
}

/* Shape equality of a token tensor against the expected sizes. */
static polyattn_status check_shape(const polyattn_tensor *t, const char *name, int ndim,
                                   const int64_t *want, pa_error *err) {
  static const char *dims4[] = {"batch", "seq", "heads", "head_dim"};
  static const char *dims3[] = {"tokens", "heads", "head_dim"};
  for (int i = 0; i < ndim; ++i)
    if (t->shape[i] != want[i])
      return pa_fail(err, POLYATTN_ERR_SHAPE, "%s.shape[%d] (%s) is %lld, expected %lld", name, i,
                     ndim == 4 ? dims4[i] : dims3[i], (long long)t->shape[i],
                     (long long)want[i]);
  return POLYATTN_OK;
}

static int host_readable(const polyattn_tensor *t, int host_visible) {
  return host_visible && t->buffer->kind == POLYATTN_MEMORY_HOST && t->buffer->address;
}

/* cu_seqlens: int32 [batch + 1], 0, non-decreasing, ending at `total`. Returns the
 * largest per-sequence length through *max_len (when readable, else -1). */
static polyattn_status check_cu_seqlens(const polyattn_tensor *t, const char *name,
                                        int64_t total, int64_t entries, int host_visible,
                                        int32_t *max_len, pa_error *err) {
  CHECK(check_view(t, name, 1, ROLE_INPUT, 0, err));
  CHECK(check_dtype(t, name, POLYATTN_DTYPE_I32, err));
  if (entries >= 0 && t->shape[0] != entries)
    return pa_fail(err, POLYATTN_ERR_SHAPE, "%s has %lld entries, expected %lld (batch + 1)",
                   name, (long long)t->shape[0], (long long)entries);
  if (t->shape[0] < 2)
    return pa_fail(err, POLYATTN_ERR_SHAPE, "%s needs at least 2 entries (batch >= 1)", name);
  *max_len = -1;
  if (!host_readable(t, host_visible)) return POLYATTN_OK;
  const int32_t *c = (const int32_t *)((const char *)t->buffer->address + t->offset);
  if (c[0] != 0)
    return pa_fail(err, POLYATTN_ERR_SEQLENS, "%s[0] is %d, must be 0", name, (int)c[0]);
  int32_t most = 0;
  for (int64_t i = 1; i < t->shape[0]; ++i) {
    int32_t a = c[(i - 1) * t->strides[0]], b = c[i * t->strides[0]];
    if (b < a)
      return pa_fail(err, POLYATTN_ERR_SEQLENS, "%s is not non-decreasing: [%lld] = %d < [%lld] = %d",
                     name, (long long)i, (int)b, (long long)(i - 1), (int)a);
    if (b - a > most) most = b - a;
  }
  int32_t last = c[(t->shape[0] - 1) * t->strides[0]];
  if (last != total)
    return pa_fail(err, POLYATTN_ERR_SEQLENS, "%s ends at %d but the tensors hold %lld tokens",
                   name, (int)last, (long long)total);
  *max_len = most;
  return POLYATTN_OK;
}

static polyattn_status check_params(const polyattn_params *pr, pa_error *err) {
  if (!isfinite(pr->scale))
    return pa_fail(err, POLYATTN_ERR_INVALID_VALUE, "params.scale is not finite");
  if (!(pr->softcap >= 0.0f) || !isfinite(pr->softcap))
    return pa_fail(err, POLYATTN_ERR_INVALID_VALUE, "params.softcap must be >= 0 and finite");
  if (pr->causal != 0 && pr->causal != 1)
    return pa_fail(err, POLYATTN_ERR_INVALID_VALUE, "params.causal must be 0 or 1");
  if (pr->window_left < -1)
    return pa_fail(err, POLYATTN_ERR_INVALID_VALUE, "params.window_left is %d; use -1 for unbounded",
                   (int)pr->window_left);
  if (pr->window_right < -1)
    return pa_fail(err, POLYATTN_ERR_INVALID_VALUE, "params.window_right is %d; use -1 for unbounded",
                   (int)pr->window_right);
  if (pr->max_seqlen_q < 0 || pr->max_seqlen_k < 0)
    return pa_fail(err, POLYATTN_ERR_INVALID_VALUE, "params.max_seqlen_q/k must be >= 0");
  if ((unsigned)pr->sparsity > POLYATTN_SPARSITY_NM_2_4)
    return pa_fail(err, POLYATTN_ERR_INVALID_VALUE, "params.sparsity %d is not a known mode",
                   (int)pr->sparsity);
  if (pr->block_q < 0 || pr->block_k < 0)
    return pa_fail(err, POLYATTN_ERR_INVALID_VALUE, "params.block_q/block_k must be >= 0");
  if (!(pr->block_threshold >= 0.0f && pr->block_threshold <= 1.0f))
    return pa_fail(err, POLYATTN_ERR_INVALID_VALUE,
                   "params.block_threshold must be in (0, 1] (0 for the default)");
  if (!(pr->auto_density_cutoff >= 0.0f && pr->auto_density_cutoff <= 1.0f))
    return pa_fail(err, POLYATTN_ERR_INVALID_VALUE,
                   "params.auto_density_cutoff must be in (0, 1] (0 for the default)");
  if (pr->deterministic != 0 && pr->deterministic != 1)
    return pa_fail(err, POLYATTN_ERR_INVALID_VALUE, "params.deterministic must be 0 or 1");
  if (pr->block_mask && pr->sparsity != POLYATTN_SPARSITY_BLOCK)
    return pa_fail(err, POLYATTN_ERR_INVALID_VALUE,
                   "params.block_mask is set but params.sparsity is not BLOCK");
  if (pr->block_mask_out && pr->sparsity != POLYATTN_SPARSITY_AUTO_BLOCK)
    return pa_fail(err, POLYATTN_ERR_INVALID_VALUE,
                   "params.block_mask_out is set but params.sparsity is not AUTO_BLOCK");
  return POLYATTN_OK;
}

/* Block masks: uint8 [mb, mh, nqb, nkb] with mb in {1, B} and mh in {1, Hq}
 * (exactly [B, Hq, nqb, nkb] for the AUTO_BLOCK output). */
static polyattn_status check_block_mask(const polyattn_tensor *t, const char *name, role r,
                                        const pa_problem *p, pa_view *out, pa_error *err) {
  CHECK(check_view(t, name, 4, r, 1, err));
  CHECK(check_dtype(t, name, POLYATTN_DTYPE_U8, err));
  int exact = r == ROLE_OUTPUT;
  if (t->shape[0] != p->batch && (exact || t->shape[0] != 1))
    return pa_fail(err, POLYATTN_ERR_SHAPE, "%s.shape[0] is %lld, expected %s%d", name,
                   (long long)t->shape[0], exact ? "" : "1 or ", (int)p->batch);
  if (t->shape[1] != p->heads_q && (exact || t->shape[1] != 1))
    return pa_fail(err, POLYATTN_ERR_SHAPE, "%s.shape[1] is %lld, expected %s%d", name,
                   (long long)t->shape[1], exact ? "" : "1 or ", (int)p->heads_q);
  if (t->shape[2] != p->mask_qblocks || t->shape[3] != p->mask_kblocks)
    return pa_fail(err, POLYATTN_ERR_SHAPE,
                   "%s is [.., .., %lld, %lld] blocks, expected [.., .., %d, %d] "
                   "(ceil(seq_q / block_q), ceil(seq_k / block_k))", name, (long long)t->shape[2],
                   (long long)t->shape[3], (int)p->mask_qblocks, (int)p->mask_kblocks);
  fill_view(out, t);
  out->stride_b = t->shape[0] == 1 ? 0 : t->strides[0];
  out->stride_h = t->shape[1] == 1 ? 0 : t->strides[1];
  out->stride_s = t->strides[2];
  return POLYATTN_OK;
}

/* Sizes, dtypes and shapes of q, k, v, out (and the backward tensors). */
static polyattn_status check_tokens(pa_problem *p, const polyattn_tensor *q,
                                    const polyattn_tensor *k, const polyattn_tensor *v,
                                    const polyattn_tensor *out, int varlen, pa_error *err) {
  int nd = varlen ? 3 : 4;
  CHECK(check_view(q, "q", nd, ROLE_INPUT, 1, err));
  CHECK(check_view(k, "k", nd, ROLE_INPUT, 1, err));
  CHECK(check_view(v, "v", nd, ROLE_INPUT, 1, err));
  CHECK(check_view(out, "out", nd, ROLE_OUTPUT, 1, err));
  if (!is_float_dtype(q->dtype))
    return pa_fail(err, POLYATTN_ERR_DTYPE, "q.dtype is %s; attention needs f32, f16, bf16 "
                   "(or fp8_e4m3, forward)", polyattn_dtype_name(q->dtype));
  CHECK(check_dtype(k, "k", q->dtype, err));
  CHECK(check_dtype(v, "v", q->dtype, err));
  /* FP8 inputs give a BF16 output (decision 77) */
  p->dtype = q->dtype;
  p->out_dtype = q->dtype == POLYATTN_DTYPE_FP8_E4M3 ? POLYATTN_DTYPE_BF16 : q->dtype;
  CHECK(check_dtype(out, "out", p->out_dtype, err));

  const int64_t *qs = q->shape, *ks = k->shape;
  int o = varlen ? -1 : 0; /* index shift: varlen drops the batch dim */
  if (!varlen) {
    if (qs[0] < 1) return pa_fail(err, POLYATTN_ERR_SHAPE, "q.shape[0] (batch) must be >= 1");
    p->batch = (int32_t)qs[0];
    p->seqlen_q = (int32_t)qs[1];
    p->seqlen_k = (int32_t)ks[1];
    p->total_q = (int64_t)p->batch * p->seqlen_q;
    p->total_k = (int64_t)p->batch * p->seqlen_k;
  } else {
    p->total_q = qs[0];
    p->total_k = ks[0];
  }
  p->heads_q = (int32_t)qs[2 + o];
  p->heads_kv = (int32_t)ks[2 + o];
  p->head_dim = (int32_t)qs[3 + o];
  p->head_dim_v = (int32_t)v->shape[3 + o];
  if (p->heads_q < 1) return pa_fail(err, POLYATTN_ERR_SHAPE, "q heads must be >= 1");
  if (p->heads_kv < 1) return pa_fail(err, POLYATTN_ERR_SHAPE, "k heads must be >= 1");
  if (p->head_dim < 1) return pa_fail(err, POLYATTN_ERR_SHAPE, "q head_dim must be >= 1");
  if (p->head_dim_v < 1) return pa_fail(err, POLYATTN_ERR_SHAPE, "v head_dim must be >= 1");
  if (p->head_dim > POLYATTN_MAX_HEAD_DIM)
    return pa_fail(err, POLYATTN_ERR_HEAD_DIM, "q head_dim %d exceeds the limit %d",
                   (int)p->head_dim, POLYATTN_MAX_HEAD_DIM);
  if (p->head_dim_v > POLYATTN_MAX_HEAD_DIM)
    return pa_fail(err, POLYATTN_ERR_HEAD_DIM, "v head_dim %d exceeds the limit %d",
                   (int)p->head_dim_v, POLYATTN_MAX_HEAD_DIM);
  if (p->heads_q % p->heads_kv != 0)
    return pa_fail(err, POLYATTN_ERR_HEADS, "q heads (%d) is not a multiple of k/v heads (%d)",
                   (int)p->heads_q, (int)p->heads_kv);

  int64_t want_k[4], want_v[4], want_o[4];
  if (varlen) {
    int64_t wk[3] = {ks[0], p->heads_kv, p->head_dim}, wv[3] = {ks[0], p->heads_kv, p->head_dim_v},
            wo[3] = {qs[0], p->heads_q, p->head_dim_v};
    memcpy(want_k, wk, sizeof wk);
    memcpy(want_v, wv, sizeof wv);
    memcpy(want_o, wo, sizeof wo);
  } else {
    int64_t wk[4] = {p->batch, ks[1], p->heads_kv, p->head_dim},
            wv[4] = {p->batch, ks[1], p->heads_kv, p->head_dim_v},
            wo[4] = {p->batch, qs[1], p->heads_q, p->head_dim_v};
    memcpy(want_k, wk, sizeof wk);
    memcpy(want_v, wv, sizeof wv);
    memcpy(want_o, wo, sizeof wo);
  }
  CHECK(check_shape(k, "k", nd, want_k, err));
  CHECK(check_shape(v, "v", nd, want_v, err));
  CHECK(check_shape(out, "out", nd, want_o, err));
  return POLYATTN_OK;
}

static polyattn_status check_backward(pa_problem *p, const polyattn_tensor *q,
                                      const polyattn_tensor *k, const polyattn_tensor *v,
                                      const polyattn_tensor *out, const polyattn_tensor *dout,
                                      const polyattn_tensor *dq, const polyattn_tensor *dk,
                                      const polyattn_tensor *dv, pa_error *err) {
  int nd = p->varlen ? 3 : 4;
  const struct {
    const polyattn_tensor *t, *like;
    const char *name;
    role r;
  } g[] = {{dout, out, "dout", ROLE_INPUT},
           {dq, q, "dq", ROLE_OUTPUT},
           {dk, k, "dk", ROLE_OUTPUT},
           {dv, v, "dv", ROLE_OUTPUT}};
  for (size_t i = 0; i < sizeof g / sizeof g[0]; ++i) {
    CHECK(check_view(g[i].t, g[i].name, nd, g[i].r, 1, err));
    CHECK(check_dtype(g[i].t, g[i].name, p->dtype, err));
    CHECK(check_shape(g[i].t, g[i].name, nd, g[i].like->shape, err));
  }
  fill_token_view(&p->dout, dout, p->varlen);
  fill_token_view(&p->dq, dq, p->varlen);
  fill_token_view(&p->dk, dk, p->varlen);
  fill_token_view(&p->dv, dv, p->varlen);
  return POLYATTN_OK;
}

static polyattn_status check_lse(pa_problem *p, const polyattn_tensor *lse, pa_error *err) {
  int nd = p->varlen ? 2 : 3;
  CHECK(check_view(lse, "lse", nd, ROLE_OUTPUT, 0, err));
  CHECK(check_dtype(lse, "lse", POLYATTN_DTYPE_F32, err));
  int64_t want3[3] = {p->batch, p->heads_q, p->seqlen_q}, want2[2] = {p->heads_q, p->total_q};
  const int64_t *want = p->varlen ? want2 : want3;
  for (int i = 0; i < nd; ++i)
    if (lse->shape[i] != want[i])
      return pa_fail(err, POLYATTN_ERR_SHAPE, "lse.shape[%d] is %lld, expected %lld (lse is %s)", i,
                     (long long)lse->shape[i], (long long)want[i],
                     p->varlen ? "[heads_q, total_q]" : "[batch, heads_q, seq_q]");
  fill_view(&p->lse, lse);
  if (p->varlen) {
    p->lse.stride_h = lse->strides[0];
    p->lse.stride_s = lse->strides[1];
  } else {
    p->lse.stride_b = lse->strides[0];
    p->lse.stride_h = lse->strides[1];
    p->lse.stride_s = lse->strides[2];
  }
  return POLYATTN_OK;
}

static polyattn_status check_varlen(pa_problem *p, const polyattn_params *pr, int host_visible,
                                    pa_error *err) {
  int32_t max_q, max_k;
  CHECK(check_cu_seqlens(pr->cu_seqlens_q, "cu_seqlens_q", p->total_q, -1, host_visible, &max_q,
                         err));
  CHECK(check_cu_seqlens(pr->cu_seqlens_k, "cu_seqlens_k", p->total_k, pr->cu_seqlens_q->shape[0],
                         host_visible, &max_k, err));
  p->batch = (int32_t)(pr->cu_seqlens_q->shape[0] - 1);
  const struct {
    int32_t given, actual;
    const char *name;
    int32_t *dst;
  } m[] = {{pr->max_seqlen_q, max_q, "max_seqlen_q", &p->seqlen_q},
           {pr->max_seqlen_k, max_k, "max_seqlen_k", &p->seqlen_k}};
  for (int i = 0; i < 2; ++i) {
    if (m[i].actual < 0 && m[i].given == 0)
      return pa_fail(err, POLYATTN_ERR_INVALID_VALUE,
                     "params.%s must be given when cu_seqlens live in device memory", m[i].name);
    if (m[i].actual >= 0 && m[i].given != 0 && m[i].given < m[i].actual)
      return pa_fail(err, POLYATTN_ERR_SEQLENS, "params.%s is %d but a sequence has %d tokens",
                     m[i].name, (int)m[i].given, (int)m[i].actual);
    *m[i].dst = m[i].given ? m[i].given : m[i].actual;
  }
  fill_view(&p->cu_seqlens_q, pr->cu_seqlens_q);
  p->cu_seqlens_q.stride_s = pr->cu_seqlens_q->strides[0];
  fill_view(&p->cu_seqlens_k, pr->cu_seqlens_k);
  p->cu_seqlens_k.stride_s = pr->cu_seqlens_k->strides[0];
  return POLYATTN_OK;
}

static polyattn_status check_seqused(pa_problem *p, const polyattn_tensor *t, int host_visible,
                                     pa_error *err) {
  CHECK(check_view(t, "seqused_k", 1, ROLE_INPUT, 0, err));
  CHECK(check_dtype(t, "seqused_k", POLYATTN_DTYPE_I32, err));
  if (t->shape[0] != p->batch)
    return pa_fail(err, POLYATTN_ERR_SHAPE, "seqused_k has %lld entries, expected batch = %d",
                   (long long)t->shape[0], (int)p->batch);
  fill_view(&p->seqused_k, t);
  p->seqused_k.stride_s = t->strides[0];
  if (!host_readable(t, host_visible)) return POLYATTN_OK;
  for (int32_t b = 0; b < p->batch; ++b) {
    int32_t used = ((const int32_t *)p->seqused_k.ptr)[b * t->strides[0]];
    pa_view saved = p->seqused_k;
    p->seqused_k.buf = NULL; /* the entry's full key length */
    pa_seq s = pa_problem_seq(p, b);
    p->seqused_k = saved;
    if (used < 0 || used > s.len_k)
      return pa_fail(err, POLYATTN_ERR_SEQLENS,
                     "seqused_k[%d] = %d is outside [0, %d] (the entry's key length)", (int)b,
                     (int)used, (int)s.len_k);
  }
  return POLYATTN_OK;
}

static polyattn_status check_alibi(pa_problem *p, const polyattn_tensor *t, pa_error *err) {
  if (t->ndim != 1 && t->ndim != 2)
    return pa_fail(err, POLYATTN_ERR_SHAPE, "alibi_slopes.ndim is %d, expected 1 ([heads_q]) or 2 "
                   "([batch, heads_q])", (int)t->ndim);
  CHECK(check_view(t, "alibi_slopes", t->ndim, ROLE_INPUT, 0, err));
  CHECK(check_dtype(t, "alibi_slopes", POLYATTN_DTYPE_F32, err));
  int h = t->ndim - 1;
  if (t->shape[h] != p->heads_q || (t->ndim == 2 && t->shape[0] != p->batch))
    return pa_fail(err, POLYATTN_ERR_SHAPE, "alibi_slopes must be [heads_q = %d] or [batch = %d, "
                   "heads_q]", (int)p->heads_q, (int)p->batch);
  fill_view(&p->alibi, t);
  p->alibi.stride_h = t->strides[h];
  p->alibi.stride_b = t->ndim == 2 ? t->strides[0] : 0;
  return POLYATTN_OK;
}

/* An FP8 descale factor: float32 [1] (per tensor) or [batch, heads_kv]. */
static polyattn_status check_descale(pa_problem *p, const polyattn_tensor *t, const char *name,
                                     pa_view *out, pa_error *err) {
  if (p->dtype != POLYATTN_DTYPE_FP8_E4M3)
    return pa_fail(err, POLYATTN_ERR_DTYPE, "params.%s is set but q/k/v are %s: descale factors "
                   "are for fp8_e4m3 inputs only", name, polyattn_dtype_name(p->dtype));
  if (t->ndim != 1 && t->ndim != 2)
    return pa_fail(err, POLYATTN_ERR_SHAPE, "%s.ndim is %d, expected 1 ([1]) or 2 ([batch, "
                   "heads_kv])", name, (int)t->ndim);
  CHECK(check_view(t, name, t->ndim, ROLE_INPUT, 0, err));
  CHECK(check_dtype(t, name, POLYATTN_DTYPE_F32, err));
  if (t->ndim == 1 ? t->shape[0] != 1
                   : t->shape[0] != p->batch || t->shape[1] != p->heads_kv)
    return pa_fail(err, POLYATTN_ERR_SHAPE, "%s must be [1] (per tensor) or [batch = %d, "
                   "heads_kv = %d]", name, (int)p->batch, (int)p->heads_kv);
  fill_view(out, t);
  out->stride_b = t->ndim == 2 ? t->strides[0] : 0;
  out->stride_h = t->ndim == 2 ? t->strides[1] : 0;
  return POLYATTN_OK;
}

static polyattn_status check_sparsity(pa_problem *p, const polyattn_params *pr, pa_error *err) {
  p->sparsity = pr->sparsity;
  p->block_q = pr->block_q ? pr->block_q : 64;
  p->block_k = pr->block_k ? pr->block_k : 64;
  p->mask_qblocks = (int32_t)(((int64_t)p->seqlen_q + p->block_q - 1) / p->block_q);
  p->mask_kblocks = (int32_t)(((int64_t)p->seqlen_k + p->block_k - 1) / p->block_k);
  p->block_threshold = pr->block_threshold > 0.0f ? pr->block_threshold : 0.95f;
  p->auto_density_cutoff = pr->auto_density_cutoff > 0.0f ? pr->auto_density_cutoff : 0.3f;
  if (p->sparsity == POLYATTN_SPARSITY_BLOCK) {
    if (!pr->block_mask)
      return pa_fail(err, POLYATTN_ERR_NULL_ARGUMENT,
                     "params.block_mask is NULL but params.sparsity is BLOCK");
    CHECK(check_block_mask(pr->block_mask, "block_mask", ROLE_INPUT, p, &p->block_mask, err));
  }
  if (pr->block_mask_out)
    CHECK(check_block_mask(pr->block_mask_out, "block_mask_out", ROLE_OUTPUT, p,
                           &p->block_mask_out, err));
  return POLYATTN_OK;
}

polyattn_status pa_problem_build(pa_problem *p, pa_pass pass, const polyattn_params *params,
                                 const polyattn_tensor *q, const polyattn_tensor *k,
                                 const polyattn_tensor *v, const polyattn_tensor *out,
                                 const polyattn_tensor *lse, const polyattn_tensor *dout,
                                 const polyattn_tensor *dq, const polyattn_tensor *dk,
                                 const polyattn_tensor *dv, int host_visible, pa_error *err) {
  memset(p, 0, sizeof *p);
  p->pass = pass;
  if (!params) return pa_fail(err, POLYATTN_ERR_NULL_ARGUMENT, "params is NULL");
  if (params->struct_size != sizeof(polyattn_params))
    return pa_fail(err, POLYATTN_ERR_ABI, "params.struct_size is %u, expected %zu "
                   "(call polyattn_params_init)", (unsigned)params->struct_size,
                   sizeof(polyattn_params));
  const struct {
    const void *ptr;
    const char *name;
  } required[] = {{q, "q"}, {k, "k"}, {v, "v"}, {out, "out"}};
  for (size_t i = 0; i < 4; ++i)
    if (!required[i].ptr)
      return pa_fail(err, POLYATTN_ERR_NULL_ARGUMENT, "%s is NULL", required[i].name);
  if (pass == PA_PASS_BACKWARD) {
    const struct {
      const void *ptr;
      const char *name;
    } grads[] = {{lse, "lse"}, {dout, "dout"}, {dq, "dq"}, {dk, "dk"}, {dv, "dv"}};
    for (size_t i = 0; i < 5; ++i)
      if (!grads[i].ptr)
        return pa_fail(err, POLYATTN_ERR_NULL_ARGUMENT, "%s is NULL (the backward needs it)",
                       grads[i].name);
  }
  CHECK(check_params(params, err));
  if (pass == PA_PASS_BACKWARD && params->sparsity == POLYATTN_SPARSITY_AUTO_BLOCK)
    return pa_fail(err, POLYATTN_ERR_UNSUPPORTED,
                   "params.sparsity: the backward of AUTO_BLOCK takes the mask the forward chose "
                   "(block_mask_out) as BLOCK");

  int varlen = params->cu_seqlens_q != NULL || params->cu_seqlens_k != NULL;
  if (varlen && (!params->cu_seqlens_q || !params->cu_seqlens_k))
    return pa_fail(err, POLYATTN_ERR_NULL_ARGUMENT, "%s is NULL but %s is set: give both or neither",
                   params->cu_seqlens_q ? "cu_seqlens_k" : "cu_seqlens_q",
                   params->cu_seqlens_q ? "cu_seqlens_q" : "cu_seqlens_k");
  p->varlen = varlen;
  CHECK(check_tokens(p, q, k, v, out, varlen, err));
  if (p->dtype == POLYATTN_DTYPE_FP8_E4M3 && pass == PA_PASS_BACKWARD)
    return pa_fail(err, POLYATTN_ERR_UNSUPPORTED, "q.dtype: fp8_e4m3 is forward only (no "
                   "backward; decision 77)");
  if (varlen) CHECK(check_varlen(p, params, host_visible, err));
  if (lse) CHECK(check_lse(p, lse, err));
  if (pass == PA_PASS_BACKWARD) CHECK(check_backward(p, q, k, v, out, dout, dq, dk, dv, err));
  if (params->seqused_k) CHECK(check_seqused(p, params->seqused_k, host_visible, err));
  if (params->alibi_slopes) CHECK(check_alibi(p, params->alibi_slopes, err));
  if (params->reserved_pad != 0)
    return pa_fail(err, POLYATTN_ERR_INVALID_VALUE, "params.reserved_pad must be 0");
  if (params->q_descale) CHECK(check_descale(p, params->q_descale, "q_descale", &p->q_descale, err));
  if (params->k_descale) CHECK(check_descale(p, params->k_descale, "k_descale", &p->k_descale, err));
  if (params->v_descale) CHECK(check_descale(p, params->v_descale, "v_descale", &p->v_descale, err));
  CHECK(check_sparsity(p, params, err));

  fill_token_view(&p->q, q, varlen);
  fill_token_view(&p->k, k, varlen);
  fill_token_view(&p->v, v, varlen);
  fill_token_view(&p->o, out, varlen);

  p->scale = params->scale != 0.0f ? params->scale : 1.0f / sqrtf((float)p->head_dim);
  p->softcap = params->softcap;
  p->causal = params->causal;
  p->window_left = params->window_left;
  p->window_right = params->window_right;
  if (p->causal && (p->window_right < 0 || p->window_right > 0)) p->window_right = 0;
  p->deterministic = params->deterministic;
  return POLYATTN_OK;
}
