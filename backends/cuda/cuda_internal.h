/* What the host-side files of the CUDA module share: the context, the error
 * helpers, and the ops of cuda_device.c (probe, context, buffers) and
 * cuda_dispatch.c (plan, forward, backward). The kernels see only kernels.h. */
#ifndef PA_CUDA_INTERNAL_H
#define PA_CUDA_INTERNAL_H

#include <cuda_runtime.h>

#include "backend.h"
#include "kernels.h"

/* The lowest compute capability (major * 10 + minor) the module has code for; the
 * build passes it from POLYATTN_CUDA_ARCHS. */
#ifndef PA_CUDA_MIN_ARCH
#  define PA_CUDA_MIN_ARCH 75
#endif

typedef struct pa_cuda_ctx {
  int device;          /* CUDA device ordinal */
  pa_cuda_device dev;  /* what the kernels need to know about it */
  cudaStream_t stream; /* the caller's, or our own non-blocking one */
  int own_stream;
  char name[256];
} pa_cuda_ctx;

/* Errors are reported with pa_fail() (problem.h; common/error.c is compiled into the
 * module). */

/* A CUDA runtime error as a status: POLYATTN_ERR_OUT_OF_MEMORY for allocation
 * failures, POLYATTN_ERR_DEVICE otherwise, with "what: <CUDA message> (<name>)". */
polyattn_status pa_cuda_status(pa_error *err, cudaError_t e, const char *what);

/* cuda_device.c */
int pa_cuda_probe(char *device_name, size_t name_len, char *reason, size_t reason_len);
polyattn_status pa_cuda_context_create(int32_t device, void *native_stream, int32_t num_threads,
                                       void **bctx, pa_error *err);
void pa_cuda_context_destroy(void *bctx);
const char *pa_cuda_device_name(void *bctx);
int pa_cuda_can_wrap(void *bctx, polyattn_memory_kind kind);
polyattn_status pa_cuda_buffer_alloc(void *bctx, size_t bytes, void **handle, void **address,
                                     pa_error *err);
void pa_cuda_buffer_free(void *bctx, void *handle);
polyattn_status pa_cuda_buffer_write(void *bctx, const struct polyattn_buffer *buf, size_t offset,
                                     const void *src, size_t bytes, pa_error *err);
polyattn_status pa_cuda_buffer_read(void *bctx, const struct polyattn_buffer *buf, size_t offset,
                                    void *dst, size_t bytes, pa_error *err);
polyattn_status pa_cuda_synchronize(void *bctx, pa_error *err);

/* cuda_dispatch.c */
polyattn_status pa_cuda_plan(void *bctx, const pa_problem *p, size_t *workspace_bytes,
                             pa_error *err);
polyattn_status pa_cuda_forward(void *bctx, const pa_problem *p,
                                const struct polyattn_buffer *workspace, pa_error *err);
polyattn_status pa_cuda_backward(void *bctx, const pa_problem *p,
                                 const struct polyattn_buffer *workspace, pa_error *err);

#endif
