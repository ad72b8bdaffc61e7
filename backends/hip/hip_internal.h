/* What the host-side files of the HIP module share: the context and the ops of
 * hip_device.c (probe, context, buffers) and hip_dispatch.c (plan, forward,
 * backward). The module is C on the host, like the CUDA module; the kernels it
 * launches are backends/cuda's (kernels.h) and its own MFMA kernel (hip_kernels.h). */
#ifndef PA_HIP_INTERNAL_H
#define PA_HIP_INTERNAL_H

#include "backend.h"
#include "hip/hip_kernels.h"

/* The gfx targets the module has code objects for, ";"-separated (the build passes
 * POLYATTN_HIP_ARCHS): the probe ignores devices of any other target. */
#ifndef PA_HIP_ARCHS
#  define PA_HIP_ARCHS "gfx90a;gfx908;gfx1030"
#endif

typedef struct pa_hip_ctx {
  int device;          /* HIP device ordinal */
  pa_cuda_device dev;  /* what the kernels need to know about it (hip_kernels.h) */
  hipStream_t stream;  /* the caller's, or our own non-blocking one */
  int own_stream;
  char name[320];
} pa_hip_ctx;

/* A HIP runtime error as a status: POLYATTN_ERR_OUT_OF_MEMORY for allocation
 * failures, POLYATTN_ERR_DEVICE otherwise, with "what: <HIP message> (<name>)". */
polyattn_status pa_hip_status(pa_error *err, hipError_t e, const char *what);

/* hip_device.c */
int pa_hip_probe(char *device_name, size_t name_len, char *reason, size_t reason_len);
polyattn_status pa_hip_context_create(int32_t device, void *native_stream, int32_t num_threads,
                                      void **bctx, pa_error *err);
void pa_hip_context_destroy(void *bctx);
const char *pa_hip_device_name(void *bctx);
int pa_hip_can_wrap(void *bctx, polyattn_memory_kind kind);
polyattn_status pa_hip_buffer_alloc(void *bctx, size_t bytes, void **handle, void **address,
                                    pa_error *err);
void pa_hip_buffer_free(void *bctx, void *handle);
polyattn_status pa_hip_buffer_write(void *bctx, const struct polyattn_buffer *buf, size_t offset,
                                    const void *src, size_t bytes, pa_error *err);
polyattn_status pa_hip_buffer_read(void *bctx, const struct polyattn_buffer *buf, size_t offset,
                                   void *dst, size_t bytes, pa_error *err);
polyattn_status pa_hip_synchronize(void *bctx, pa_error *err);

/* hip_dispatch.c */
polyattn_status pa_hip_plan(void *bctx, const pa_problem *p, size_t *workspace_bytes,
                            pa_error *err);
polyattn_status pa_hip_forward(void *bctx, const pa_problem *p,
                               const struct polyattn_buffer *workspace, pa_error *err);
polyattn_status pa_hip_backward(void *bctx, const pa_problem *p,
                                const struct polyattn_buffer *workspace, pa_error *err);

#endif
