/* Buffers: memory owned by a context's device, or wrapped caller memory. */
#include <stdlib.h>

#include "internal.h"

polyattn_status pa_buffer_create(polyattn_context *ctx, size_t bytes, int user_visible,
                                 polyattn_buffer **out, pa_error *err) {
  polyattn_buffer *b = calloc(1, sizeof *b);
  if (!b) return pa_fail(err, POLYATTN_ERR_OUT_OF_MEMORY, "buffer allocation failed");
  polyattn_status st = ctx->ops->buffer_alloc(ctx->bctx, bytes, &b->handle, &b->address, err);
  if (st != POLYATTN_OK) {
    free(b);
    return st;
  }
  b->ctx = ctx;
  b->kind = ctx->ops->memory_kind;
  b->size = bytes;
  b->owned = 1;
  if (user_visible) ctx->live_buffers++;
  *out = b;
  return POLYATTN_OK;
}

void pa_buffer_destroy(polyattn_buffer *buf, int user_visible) {
  polyattn_context *ctx = buf->ctx;
  if (buf->owned) ctx->ops->buffer_free(ctx->bctx, buf->handle);
  if (user_visible) ctx->live_buffers--;
  free(buf);
}

POLYATTN_API polyattn_status polyattn_buffer_alloc(polyattn_context *ctx, size_t bytes,
                                                   polyattn_buffer **out) {
  if (!ctx) return pa_ctx_fail(NULL, POLYATTN_ERR_NULL_ARGUMENT, "ctx is NULL");
  if (!out) return pa_ctx_fail(ctx, POLYATTN_ERR_NULL_ARGUMENT, "out is NULL");
  *out = NULL;
  if (bytes == 0) return pa_ctx_fail(ctx, POLYATTN_ERR_INVALID_VALUE, "bytes is 0");
  pa_error err = {{0}};
  polyattn_status st = pa_buffer_create(ctx, bytes, 1, out, &err);
  return st == POLYATTN_OK ? st : pa_ctx_error(ctx, st, &err);
}

POLYATTN_API polyattn_status polyattn_buffer_wrap(polyattn_context *ctx,
                                                  polyattn_memory_kind kind, void *handle,
                                                  size_t bytes, polyattn_buffer **out) {
  if (!ctx) return pa_ctx_fail(NULL, POLYATTN_ERR_NULL_ARGUMENT, "ctx is NULL");
  if (!out) return pa_ctx_fail(ctx, POLYATTN_ERR_NULL_ARGUMENT, "out is NULL");
  *out = NULL;
  if (!handle) return pa_ctx_fail(ctx, POLYATTN_ERR_NULL_ARGUMENT, "handle is NULL");
  if ((unsigned)kind > POLYATTN_MEMORY_VK_BUFFER)
    return pa_ctx_fail(ctx, POLYATTN_ERR_INVALID_VALUE, "kind %d is not a memory kind", (int)kind);
  int ok = ctx->ops->can_wrap ? ctx->ops->can_wrap(ctx->bctx, kind)
                              : kind == ctx->ops->memory_kind;
  if (!ok)
    return pa_ctx_fail(ctx, POLYATTN_ERR_UNSUPPORTED,
                       "the %s backend cannot address memory of kind %d", ctx->ops->name,
                       (int)kind);
  polyattn_buffer *b = calloc(1, sizeof *b);
  if (!b) return pa_ctx_fail(ctx, POLYATTN_ERR_OUT_OF_MEMORY, "buffer allocation failed");
  b->ctx = ctx;
  b->kind = kind;
  b->handle = handle;
  b->address = kind == POLYATTN_MEMORY_VK_BUFFER ? NULL : handle;
  b->size = bytes;
  b->owned = 0;
  ctx->live_buffers++;
  *out = b;
  return POLYATTN_OK;
}

static polyattn_status check_copy(polyattn_context *ctx, const polyattn_buffer *buf,
                                  size_t offset, const void *host, size_t bytes) {
  if (!ctx) return pa_ctx_fail(NULL, POLYATTN_ERR_NULL_ARGUMENT, "ctx is NULL");
  if (!buf) return pa_ctx_fail(ctx, POLYATTN_ERR_NULL_ARGUMENT, "buf is NULL");
  if (buf->ctx != ctx)
    return pa_ctx_fail(ctx, POLYATTN_ERR_CONTEXT, "buf belongs to another context");
  if (!host && bytes) return pa_ctx_fail(ctx, POLYATTN_ERR_NULL_ARGUMENT, "host pointer is NULL");
  if (offset > buf->size || bytes > buf->size - offset)
    return pa_ctx_fail(ctx, POLYATTN_ERR_BOUNDS,
                       "copy of %zu bytes at offset %zu exceeds the buffer's %zu bytes", bytes,
                       offset, buf->size);
  return POLYATTN_OK;
}

POLYATTN_API polyattn_status polyattn_buffer_write(polyattn_context *ctx, polyattn_buffer *buf,
                                                   size_t offset, const void *src, size_t bytes) {
  polyattn_status st = check_copy(ctx, buf, offset, src, bytes);
  if (st != POLYATTN_OK || bytes == 0) return st;
  pa_error err = {{0}};
  st = ctx->ops->buffer_write(ctx->bctx, buf, offset, src, bytes, &err);
  return st == POLYATTN_OK ? st : pa_ctx_error(ctx, st, &err);
}

POLYATTN_API polyattn_status polyattn_buffer_read(polyattn_context *ctx,
                                                  const polyattn_buffer *buf, size_t offset,
                                                  void *dst, size_t bytes) {
  polyattn_status st = check_copy(ctx, buf, offset, dst, bytes);
  if (st != POLYATTN_OK || bytes == 0) return st;
  pa_error err = {{0}};
  st = ctx->ops->buffer_read(ctx->bctx, buf, offset, dst, bytes, &err);
  return st == POLYATTN_OK ? st : pa_ctx_error(ctx, st, &err);
}

POLYATTN_API size_t polyattn_buffer_size(const polyattn_buffer *buf) {
  return buf ? buf->size : 0;
}

POLYATTN_API void polyattn_buffer_free(polyattn_buffer *buf) {
  if (buf) pa_buffer_destroy(buf, 1);
}
