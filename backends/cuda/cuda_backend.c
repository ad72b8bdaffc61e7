/* The CUDA backend module: its two exported entry points and its ops table.
 *
 * The CUDA runtime is linked statically, so this file loads anywhere; on a machine
 * without a driver or device, polyattn_module_score() returns 0 and the probe's
 * reason is the runtime's own error message. */
#include <stdio.h>

#include "cuda_internal.h"

#define PA_MODULE_EXPORT __attribute__((visibility("default")))

polyattn_status pa_cuda_status(pa_error *err, cudaError_t e, const char *what) {
  polyattn_status st = e == cudaErrorMemoryAllocation ? POLYATTN_ERR_OUT_OF_MEMORY
                                                      : POLYATTN_ERR_DEVICE;
  return pa_fail(err, st, "%s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
}

static const pa_backend_ops cuda_ops = {
    .api_version = PA_BACKEND_API_VERSION,
    .kind = POLYATTN_BACKEND_CUDA,
    .name = "cuda",
    .probe = pa_cuda_probe,
    .context_create = pa_cuda_context_create,
    .context_destroy = pa_cuda_context_destroy,
    .device_name = pa_cuda_device_name,
    .memory_kind = POLYATTN_MEMORY_CUDA_DEVICE,
    .can_wrap = pa_cuda_can_wrap,
    .buffer_alloc = pa_cuda_buffer_alloc,
    .buffer_free = pa_cuda_buffer_free,
    .buffer_write = pa_cuda_buffer_write,
    .buffer_read = pa_cuda_buffer_read,
    .plan = pa_cuda_plan,
    .forward = pa_cuda_forward,
    .backward = pa_cuda_backward,
    .synchronize = pa_cuda_synchronize,
};

/* Above the CPU backend's 1, so POLYATTN_BACKEND_AUTO prefers a usable GPU. */
#define PA_CUDA_SCORE 100

PA_MODULE_EXPORT int polyattn_module_score(void) {
  char name[8], reason[8];
  return pa_cuda_probe(name, sizeof name, reason, sizeof reason) > 0 ? PA_CUDA_SCORE : 0;
}

PA_MODULE_EXPORT polyattn_status polyattn_module_init(uint32_t core_api_version,
                                                      const pa_backend_ops **ops) {
  if (!ops) return POLYATTN_ERR_NULL_ARGUMENT;
  *ops = NULL;
  if (core_api_version != PA_BACKEND_API_VERSION) return POLYATTN_ERR_BACKEND;
  *ops = &cuda_ops;
  return POLYATTN_OK;
}
