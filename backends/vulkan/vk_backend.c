/* The Vulkan backend module: its two exported entry points, its ops table and the
 * error helpers. The module links the Vulkan loader; where the loader is missing
 * the module does not load and the registry lists the dlopen error, and where the
 * loader finds no usable device polyattn_module_score() returns 0 and the probe
 * says why. */
#include <stdio.h>

#include "vk_internal.h"

#define PA_MODULE_EXPORT __attribute__((visibility("default")))

const char *pa_vk_result_name(VkResult r) {
  switch (r) {
  case VK_SUCCESS: return "VK_SUCCESS";
  case VK_NOT_READY: return "VK_NOT_READY";
  case VK_TIMEOUT: return "VK_TIMEOUT";
  case VK_INCOMPLETE: return "VK_INCOMPLETE";
  case VK_ERROR_OUT_OF_HOST_MEMORY: return "VK_ERROR_OUT_OF_HOST_MEMORY";
  case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
  case VK_ERROR_INITIALIZATION_FAILED: return "VK_ERROR_INITIALIZATION_FAILED";
  case VK_ERROR_DEVICE_LOST: return "VK_ERROR_DEVICE_LOST";
  case VK_ERROR_MEMORY_MAP_FAILED: return "VK_ERROR_MEMORY_MAP_FAILED";
  case VK_ERROR_LAYER_NOT_PRESENT: return "VK_ERROR_LAYER_NOT_PRESENT";
  case VK_ERROR_EXTENSION_NOT_PRESENT: return "VK_ERROR_EXTENSION_NOT_PRESENT";
  case VK_ERROR_FEATURE_NOT_PRESENT: return "VK_ERROR_FEATURE_NOT_PRESENT";
  case VK_ERROR_INCOMPATIBLE_DRIVER: return "VK_ERROR_INCOMPATIBLE_DRIVER";
  case VK_ERROR_TOO_MANY_OBJECTS: return "VK_ERROR_TOO_MANY_OBJECTS";
  case VK_ERROR_FORMAT_NOT_SUPPORTED: return "VK_ERROR_FORMAT_NOT_SUPPORTED";
  case VK_ERROR_FRAGMENTED_POOL: return "VK_ERROR_FRAGMENTED_POOL";
  case VK_ERROR_OUT_OF_POOL_MEMORY: return "VK_ERROR_OUT_OF_POOL_MEMORY";
  default: return "VkResult (unnamed)";
  }
}

polyattn_status pa_vk_status(pa_error *err, VkResult r, const char *what) {
  polyattn_status st = (r == VK_ERROR_OUT_OF_HOST_MEMORY || r == VK_ERROR_OUT_OF_DEVICE_MEMORY)
                           ? POLYATTN_ERR_OUT_OF_MEMORY
                           : POLYATTN_ERR_DEVICE;
  return pa_fail(err, st, "%s: %s (%d)", what, pa_vk_result_name(r), (int)r);
}

static const pa_backend_ops vk_ops = {
    .api_version = PA_BACKEND_API_VERSION,
    .kind = POLYATTN_BACKEND_VULKAN,
    .name = "vulkan",
    .probe = pa_vk_probe,
    .context_create = pa_vk_context_create,
    .context_destroy = pa_vk_context_destroy,
    .device_name = pa_vk_device_name,
    .memory_kind = POLYATTN_MEMORY_VK_BUFFER,
    .can_wrap = pa_vk_can_wrap,
    .buffer_alloc = pa_vk_buffer_alloc,
    .buffer_free = pa_vk_buffer_free,
    .buffer_write = pa_vk_buffer_write,
    .buffer_read = pa_vk_buffer_read,
    .plan = pa_vk_plan,
    .forward = pa_vk_forward,
    .backward = pa_vk_backward,
    .synchronize = pa_vk_synchronize,
};

/* POLYATTN_BACKEND_AUTO: a GPU (discrete, integrated or virtual) is preferred to
 * the CPU backend (score 1) but not to CUDA/HIP (100); a CPU Vulkan driver such as
 * lavapipe ties with the CPU backend, which the registry lists first and so wins. */
#define PA_VK_SCORE_GPU 50
#define PA_VK_SCORE_CPU_DRIVER 1

PA_MODULE_EXPORT int polyattn_module_score(void) {
  char name[8], reason[8];
  if (pa_vk_probe(name, sizeof name, reason, sizeof reason) <= 0) return 0;
  return pa_vk_probe_has_gpu() ? PA_VK_SCORE_GPU : PA_VK_SCORE_CPU_DRIVER;
}

PA_MODULE_EXPORT polyattn_status polyattn_module_init(uint32_t core_api_version,
                                                      const pa_backend_ops **ops) {
  if (!ops) return POLYATTN_ERR_NULL_ARGUMENT;
  *ops = NULL;
  if (core_api_version != PA_BACKEND_API_VERSION) return POLYATTN_ERR_BACKEND;
  *ops = &vk_ops;
  return POLYATTN_OK;
}
