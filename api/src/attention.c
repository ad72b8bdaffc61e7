/* The forward and backward entry points: validate, plan, dispatch. */
#include <stddef.h>

#include "internal.h"

/* Every tensor an attention call receives, for the ownership check. */
static polyattn_status check_owner(polyattn_context *ctx, const polyattn_params *pr,
                                   const polyattn_tensor *const *ts, const char *const *names,
                                   size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (ts[i] && ts[i]->buffer && ts[i]->buffer->ctx != ctx)
      return pa_ctx_fail(ctx, POLYATTN_ERR_CONTEXT, "%s's buffer belongs to another context",
                         names[i]);
  const polyattn_tensor *ps[] = {pr->alibi_slopes, pr->cu_seqlens_q, pr->cu_seqlens_k,
                                 pr->seqused_k,    pr->block_mask,   pr->block_mask_out};
  static const char *pn[] = {"alibi_slopes", "cu_seqlens_q", "cu_seqlens_k",
                             "seqused_k",    "block_mask",   "block_mask_out"};
  for (size_t i = 0; i < sizeof ps / sizeof ps[0]; ++i)
    if (ps[i] && ps[i]->buffer && ps[i]->buffer->ctx != ctx)
      return pa_ctx_fail(ctx, POLYATTN_ERR_CONTEXT,
                         "params.%s's buffer belongs to another context", pn[i]);
  return POLYATTN_OK;
}

/* Validate, build the problem and ask the backend for its plan. */
static polyattn_status prepare(polyattn_context *ctx, pa_pass pass, const polyattn_params *pr,
                               const polyattn_tensor *q, const polyattn_tensor *k,
                               const polyattn_tensor *v, const polyattn_tensor *out,
                               const polyattn_tensor *lse, const polyattn_tensor *dout,
                               const polyattn_tensor *dq, const polyattn_tensor *dk,
                               const polyattn_tensor *dv, pa_problem *p, size_t *ws_bytes) {
  if (!ctx) return pa_ctx_fail(NULL, POLYATTN_ERR_NULL_ARGUMENT, "ctx is NULL");
  pa_ctx_clear_error(ctx);
  pa_error err = {{0}};
  polyattn_status st =
      pa_problem_build(p, pass, pr, q, k, v, out, lse, dout, dq, dk, dv, 1, &err);
  if (st != POLYATTN_OK) return pa_ctx_error(ctx, st, &err);
  const polyattn_tensor *ts[] = {q, k, v, out, lse, dout, dq, dk, dv};
  static const char *names[] = {"q", "k", "v", "out", "lse", "dout", "dq", "dk", "dv"};
  st = check_owner(ctx, pr, ts, names, sizeof ts / sizeof ts[0]);
  if (st != POLYATTN_OK) return st;
  *ws_bytes = 0;
  st = ctx->ops->plan(ctx->bctx, p, ws_bytes, &err);
  return st == POLYATTN_OK ? st : pa_ctx_error(ctx, st, &err);
}

/* The caller's workspace, checked; or the context's own, grown on demand. */
static polyattn_status workspace_for(polyattn_context *ctx, polyattn_buffer *given, size_t need,
                                     const polyattn_buffer **ws) {
  *ws = given;
  if (given) {
    if (given->ctx != ctx)
      return pa_ctx_fail(ctx, POLYATTN_ERR_CONTEXT, "workspace belongs to another context");
    if (given->size < need)
      return pa_ctx_fail(ctx, POLYATTN_ERR_WORKSPACE, "workspace holds %zu bytes, %zu needed",
                         given->size, need);
    return POLYATTN_OK;
  }
  if (need == 0) return POLYATTN_OK;
  if (!ctx->workspace || ctx->workspace->size < need) {
    if (ctx->workspace) pa_buffer_destroy(ctx->workspace, 0);
    ctx->workspace = NULL;
    pa_error err = {{0}};
    polyattn_status st = pa_buffer_create(ctx, need, 0, &ctx->workspace, &err);
    if (st != POLYATTN_OK) return pa_ctx_error(ctx, st, &err);
  }
  *ws = ctx->workspace;
  return POLYATTN_OK;
}

POLYATTN_API polyattn_status polyattn_forward_workspace_size(
    polyattn_context *ctx, const polyattn_params *params, const polyattn_tensor *q,
    const polyattn_tensor *k, const polyattn_tensor *v, const polyattn_tensor *out,
    const polyattn_tensor *lse, size_t *bytes) {
  if (ctx && !bytes) return pa_ctx_fail(ctx, POLYATTN_ERR_NULL_ARGUMENT, "bytes is NULL");
  pa_problem p;
  size_t need;
  polyattn_status st = prepare(ctx, PA_PASS_FORWARD, params, q, k, v, out, lse, NULL, NULL,
                               NULL, NULL, &p, &need);
  if (st == POLYATTN_OK) *bytes = need;
  return st;
}

POLYATTN_API polyattn_status polyattn_forward(polyattn_context *ctx,
                                              const polyattn_params *params,
                                              const polyattn_tensor *q, const polyattn_tensor *k,
                                              const polyattn_tensor *v,
                                              const polyattn_tensor *out,
                                              const polyattn_tensor *lse,
                                              polyattn_buffer *workspace) {
  pa_problem p;
  size_t need;
  polyattn_status st = prepare(ctx, PA_PASS_FORWARD, params, q, k, v, out, lse, NULL, NULL,
                               NULL, NULL, &p, &need);
  if (st != POLYATTN_OK) return st;
  const polyattn_buffer *ws;
  st = workspace_for(ctx, workspace, need, &ws);
  if (st != POLYATTN_OK) return st;
  pa_error err = {{0}};
  st = ctx->ops->forward(ctx->bctx, &p, ws, &err);
  return st == POLYATTN_OK ? st : pa_ctx_error(ctx, st, &err);
}

POLYATTN_API polyattn_status polyattn_backward_workspace_size(
    polyattn_context *ctx, const polyattn_params *params, const polyattn_tensor *q,
    const polyattn_tensor *k, const polyattn_tensor *v, const polyattn_tensor *out,
    const polyattn_tensor *lse, const polyattn_tensor *dout, const polyattn_tensor *dq,
    const polyattn_tensor *dk, const polyattn_tensor *dv, size_t *bytes) {
  if (ctx && !bytes) return pa_ctx_fail(ctx, POLYATTN_ERR_NULL_ARGUMENT, "bytes is NULL");
  pa_problem p;
  size_t need;
  polyattn_status st = prepare(ctx, PA_PASS_BACKWARD, params, q, k, v, out, lse, dout, dq, dk,
                               dv, &p, &need);
  if (st == POLYATTN_OK) *bytes = need;
  return st;
}

POLYATTN_API polyattn_status polyattn_backward(
    polyattn_context *ctx, const polyattn_params *params, const polyattn_tensor *q,
    const polyattn_tensor *k, const polyattn_tensor *v, const polyattn_tensor *out,
    const polyattn_tensor *lse, const polyattn_tensor *dout, const polyattn_tensor *dq,
    const polyattn_tensor *dk, const polyattn_tensor *dv, polyattn_buffer *workspace) {
  pa_problem p;
  size_t need;
  polyattn_status st = prepare(ctx, PA_PASS_BACKWARD, params, q, k, v, out, lse, dout, dq, dk,
                               dv, &p, &need);
  if (st != POLYATTN_OK) return st;
  const polyattn_buffer *ws;
  st = workspace_for(ctx, workspace, need, &ws);
  if (st != POLYATTN_OK) return st;
  pa_error err = {{0}};
  st = ctx->ops->backward(ctx->bctx, &p, ws, &err);
  return st == POLYATTN_OK ? st : pa_ctx_error(ctx, st, &err);
}
