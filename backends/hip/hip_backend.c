/* The HIP backend module: its two exported entry points and its ops table.
 *
 * The module links libamdhip64 (ROCm's runtime, shared: ROCm has no static one). On
 * a machine with the runtime but no AMD GPU, polyattn_module_score() returns 0 and
 * the probe's reason is the runtime's message; without the runtime library the
 * module does not load and the registry reports the loader's message. */
#include <stdio.h>

#include "hip_internal.h"

#define PA_MODULE_EXPORT __attribute__((visibility("default")))

polyattn_status pa_hip_status(pa_error *err, hipError_t e, const char *what) {
  polyattn_status st = e == hipErrorOutOfMemory ? POLYATTN_ERR_OUT_OF_MEMORY : POLYATTN_ERR_DEVICE;
  return pa_fail(err, st, "%s: %s (%s)", what, hipGetErrorString(e), hipGetErrorName(e));
}

static const pa_backend_ops hip_ops = {
    .api_version = PA_BACKEND_API_VERSION,
    .kind = POLYATTN_BACKEND_HIP,
    .name = "hip",
    .probe = pa_hip_probe,
    .context_create = pa_hip_context_create,
    .context_destroy = pa_hip_context_destroy,
    .device_name = pa_hip_device_name,
    .memory_kind = POLYATTN_MEMORY_HIP_DEVICE,
    .can_wrap = pa_hip_can_wrap,
    .buffer_alloc = pa_hip_buffer_alloc,
    .buffer_free = pa_hip_buffer_free,
    .buffer_write = pa_hip_buffer_write,
    .buffer_read = pa_hip_buffer_read,
    .plan = pa_hip_plan,
    .forward = pa_hip_forward,
    .backward = pa_hip_backward,
    .synchronize = pa_hip_synchronize,
};

/* The same preference as the CUDA module: a usable GPU wins over the CPU (1). */
#define PA_HIP_SCORE 100

PA_MODULE_EXPORT int polyattn_module_score(void) {
  char name[8], reason[8];
  return pa_hip_probe(name, sizeof name, reason, sizeof reason) > 0 ? PA_HIP_SCORE : 0;
}

PA_MODULE_EXPORT polyattn_status polyattn_module_init(uint32_t core_api_version,
                                                      const pa_backend_ops **ops) {
  if (!ops) return POLYATTN_ERR_NULL_ARGUMENT;
  *ops = NULL;
  if (core_api_version != PA_BACKEND_API_VERSION) return POLYATTN_ERR_BACKEND;
  *ops = &hip_ops;
  return POLYATTN_OK;
}
