/* Contexts: one backend, one device, one stream; and the last-error messages. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "internal.h"
#include "log.h"

static _Thread_local char thread_error[sizeof(((pa_error *)0)->msg)];

static char *error_slot(const polyattn_context *ctx) {
  /* The message buffer is the one mutable part of a context seen through const:
   * polyattn_last_error takes a const context, failures are recorded from calls
   * that may only read it. */
  return ctx ? (char *)ctx->last_error : thread_error;
}

polyattn_status pa_ctx_fail(const polyattn_context *ctx, polyattn_status status,
                            const char *fmt, ...) {
  char *slot = error_slot(ctx);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(slot, sizeof thread_error, fmt, ap);
  va_end(ap);
  PA_LOG_DEBUG("%s: %s", polyattn_status_string(status), slot);
  return status;
}

polyattn_status pa_ctx_error(const polyattn_context *ctx, polyattn_status status,
                             const pa_error *err) {
  return pa_ctx_fail(ctx, status, "%s", err->msg[0] ? err->msg : polyattn_status_string(status));
}

void pa_ctx_clear_error(polyattn_context *ctx) { ctx->last_error[0] = '\0'; }

POLYATTN_API const char *polyattn_last_error(const polyattn_context *ctx) {
  return error_slot(ctx);
}

/* POLYATTN_BACKEND=cpu|cuda|hip|vulkan|auto overrides the descriptor. */
static polyattn_status backend_from_env(polyattn_backend_kind *kind) {
  const char *e = getenv("POLYATTN_BACKEND");
  if (!e || !*e) return POLYATTN_OK;
  for (int k = POLYATTN_BACKEND_AUTO; k <= POLYATTN_BACKEND_VULKAN; ++k) {
    if (!strcasecmp(e, polyattn_backend_name((polyattn_backend_kind)k))) {
      *kind = (polyattn_backend_kind)k;
      return POLYATTN_OK;
    }
  }
  return pa_ctx_fail(NULL, POLYATTN_ERR_BACKEND,
                     "POLYATTN_BACKEND=%s is not one of auto, cpu, cuda, hip, vulkan", e);
}

POLYATTN_API polyattn_status polyattn_context_create(const polyattn_context_desc *desc,
                                                     polyattn_context **out) {
  if (!out) return pa_ctx_fail(NULL, POLYATTN_ERR_NULL_ARGUMENT, "out is NULL");
  *out = NULL;
  polyattn_context_desc d;
  polyattn_context_desc_init(&d);
  if (desc) {
    if (desc->struct_size != sizeof *desc)
      return pa_ctx_fail(NULL, POLYATTN_ERR_ABI, "desc.struct_size is %u, expected %zu "
                         "(call polyattn_context_desc_init)", (unsigned)desc->struct_size,
                         sizeof *desc);
    d = *desc;
  }
  if ((unsigned)d.backend > POLYATTN_BACKEND_VULKAN)
    return pa_ctx_fail(NULL, POLYATTN_ERR_INVALID_VALUE, "desc.backend %d is not a backend",
                       (int)d.backend);
  if (d.device < 0)
    return pa_ctx_fail(NULL, POLYATTN_ERR_INVALID_VALUE, "desc.device %d is negative",
                       (int)d.device);
  if (d.num_threads < 0)
    return pa_ctx_fail(NULL, POLYATTN_ERR_INVALID_VALUE, "desc.num_threads %d is negative",
                       (int)d.num_threads);
  polyattn_status st = backend_from_env(&d.backend);
  if (st != POLYATTN_OK) return st;

  pa_error err = {{0}};
  const pa_backend_ops *ops;
  st = pa_registry_select(d.backend, &ops, &err);
  if (st != POLYATTN_OK) return pa_ctx_error(NULL, st, &err);

  polyattn_context *ctx = calloc(1, sizeof *ctx);
  if (!ctx) return pa_ctx_fail(NULL, POLYATTN_ERR_OUT_OF_MEMORY, "context allocation failed");
  ctx->ops = ops;
  ctx->kind = ops->kind;
  st = ops->context_create(d.device, d.native_stream, d.num_threads, &ctx->bctx, &err);
  if (st != POLYATTN_OK) {
    free(ctx);
    return pa_ctx_error(NULL, st, &err);
  }
  PA_LOG_INFO("context on %s: %s", ops->name, ops->device_name(ctx->bctx));
  *out = ctx;
  return POLYATTN_OK;
}

POLYATTN_API void polyattn_context_destroy(polyattn_context *ctx) {
  if (!ctx) return;
  if (ctx->live_buffers > 0)
    PA_LOG_WARN("context destroyed with %d buffer(s) not freed", ctx->live_buffers);
  if (ctx->workspace) pa_buffer_destroy(ctx->workspace, 0);
  ctx->ops->context_destroy(ctx->bctx);
  free(ctx);
}

POLYATTN_API polyattn_backend_kind polyattn_context_backend(const polyattn_context *ctx) {
  return ctx ? ctx->kind : POLYATTN_BACKEND_AUTO;
}

POLYATTN_API const char *polyattn_context_device_name(const polyattn_context *ctx) {
  return ctx ? ctx->ops->device_name(ctx->bctx) : "";
}

POLYATTN_API polyattn_status polyattn_synchronize(polyattn_context *ctx) {
  if (!ctx) return pa_ctx_fail(NULL, POLYATTN_ERR_NULL_ARGUMENT, "ctx is NULL");
  if (!ctx->ops->synchronize) return POLYATTN_OK;
  pa_error err = {{0}};
  polyattn_status st = ctx->ops->synchronize(ctx->bctx, &err);
  return st == POLYATTN_OK ? st : pa_ctx_error(ctx, st, &err);
}
