/* The router's private structures. */
#ifndef PA_API_INTERNAL_H
#define PA_API_INTERNAL_H

#include "backend.h"
#include "polyattn.h"
#include "problem.h"

struct polyattn_context {
  const pa_backend_ops *ops;
  void *bctx;
  polyattn_backend_kind kind;
  char last_error[sizeof(((pa_error *)0)->msg)];
  polyattn_buffer *workspace; /* the context's own, for calls given none */
  int live_buffers;           /* allocated or wrapped by the user, not yet freed */
};

/* Record a failure on ctx (or, for ctx == NULL, on this thread) and return it. */
polyattn_status pa_ctx_fail(const polyattn_context *ctx, polyattn_status status,
                            const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Record a backend's or the validator's message. */
polyattn_status pa_ctx_error(const polyattn_context *ctx, polyattn_status status,
                             const pa_error *err);
void pa_ctx_clear_error(polyattn_context *ctx);

/* The backend registry (registry.c): the usable entry for `kind` (AUTO: the best
 * score), with its ops; POLYATTN_ERR_BACKEND and a message if none. */
polyattn_status pa_registry_select(polyattn_backend_kind kind, const pa_backend_ops **ops,
                                   pa_error *err);

/* Buffers the router creates for itself (the context's workspace). */
polyattn_status pa_buffer_create(polyattn_context *ctx, size_t bytes, int user_visible,
                                 polyattn_buffer **out, pa_error *err);
void pa_buffer_destroy(polyattn_buffer *buf, int user_visible);

#endif
