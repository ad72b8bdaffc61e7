/* The Vulkan backend's device side: instance, the choice of a physical device,
 * its limits (and POLYATTN_VULKAN_LIMITS=mobile), the queue, context lifetime.
 *
 * Environment:
 *   POLYATTN_VULKAN_DEVICE=N|text  the N-th usable device, or the first whose name
 *                                  contains `text` (overrides the context's index)
 *   POLYATTN_VULKAN_LIMITS=mobile  cap shared memory at 16 KiB and workgroups at 128
 *                                  invocations; no fp16 arithmetic, no cooperative
 *                                  matrices: the phone path, testable anywhere
 *   POLYATTN_VULKAN_VALIDATION=1   enable VK_LAYER_KHRONOS_validation; its errors make
 *                                  the next call fail with POLYATTN_ERR_DEVICE */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vk_internal.h"

#define PA_VK_MOBILE_SHARED_BYTES 16384u
#define PA_VK_MOBILE_INVOCATIONS 128u
/* The kernels bind 11 storage buffers (shaders/io.glsl). */
#define PA_VK_NEEDED_STORAGE_BUFFERS 11u
#define PA_VK_MAX_DEVICES 16

static int env_is(const char *name, const char *value) {
  const char *e = getenv(name);
  return e && !strcmp(e, value);
}

static int validation_wanted(void) { return env_is("POLYATTN_VULKAN_VALIDATION", "1"); }

static VkBool32 VKAPI_PTR on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                     VkDebugUtilsMessageTypeFlagsEXT types,
                                     const VkDebugUtilsMessengerCallbackDataEXT *data,
                                     void *user) {
  (void)types;
  pa_vk_ctx *ctx = (pa_vk_ctx *)user;
  if (ctx && (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT)) {
    if (ctx->validation_errors++ == 0)
      snprintf(ctx->validation_msg, sizeof ctx->validation_msg, "%s",
               data && data->pMessage ? data->pMessage : "(no message)");
  }
  return VK_FALSE;
}

polyattn_status pa_vk_check_validation(pa_vk_ctx *ctx, pa_error *err) {
  if (!ctx->validation_errors) return POLYATTN_OK;
  int n = ctx->validation_errors;
  ctx->validation_errors = 0;
  return pa_fail(err, POLYATTN_ERR_DEVICE, "Vulkan validation: %d error(s); first: %s", n,
                    ctx->validation_msg);
}

/* An instance (Vulkan 1.3, or 1.1 on an older loader), with the validation layer
 * and a messenger reporting to `ctx` when asked. */
static VkResult instance_create(pa_vk_ctx *ctx, VkInstance *out, char *why, size_t why_len) {
  /* 1.3 where the loader has it: the coopmat2 kernel is SPIR-V 1.6. A device of an
   * older version still runs at its own (every 1.1+ implementation accepts this). */
  uint32_t loader_version = VK_API_VERSION_1_0;
  PFN_vkEnumerateInstanceVersion enum_version =
      (PFN_vkEnumerateInstanceVersion)(void (*)(void))vkGetInstanceProcAddr(NULL, "vkEnumerateInstanceVersion");
  if (enum_version && enum_version(&loader_version) != VK_SUCCESS) loader_version = VK_API_VERSION_1_0;
  VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                           .pApplicationName = "polyattn",
                           .pEngineName = "polyattn",
                           .apiVersion = loader_version >= VK_API_VERSION_1_3 ? VK_API_VERSION_1_3
                                                                              : VK_API_VERSION_1_1};
  const char *layers[1] = {"VK_LAYER_KHRONOS_validation"};
  const char *exts[1] = {VK_EXT_DEBUG_UTILS_EXTENSION_NAME};
  int validate = ctx && validation_wanted();
  VkDebugUtilsMessengerCreateInfoEXT dbg = {
      .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
      .messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT |
                         VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT,
      .messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT,
      .pfnUserCallback = on_message,
      .pUserData = ctx};
  VkInstanceCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                             .pNext = validate ? &dbg : NULL,
                             .pApplicationInfo = &app,
                             .enabledLayerCount = validate ? 1u : 0u,
                             .ppEnabledLayerNames = layers,
                             .enabledExtensionCount = validate ? 1u : 0u,
                             .ppEnabledExtensionNames = exts};
  VkResult r = vkCreateInstance(&ci, NULL, out);
  if (r != VK_SUCCESS) {
    snprintf(why, why_len, "vkCreateInstance: %s%s", pa_vk_result_name(r),
             r == VK_ERROR_INCOMPATIBLE_DRIVER ? " (no Vulkan driver found by the loader)"
             : r == VK_ERROR_LAYER_NOT_PRESENT ? " (POLYATTN_VULKAN_VALIDATION=1 needs "
                                                 "VK_LAYER_KHRONOS_validation installed)"
                                               : "");
    return r;
  }
  if (validate) {
    PFN_vkCreateDebugUtilsMessengerEXT create = (PFN_vkCreateDebugUtilsMessengerEXT)(void (*)(void))
        vkGetInstanceProcAddr(*out, "vkCreateDebugUtilsMessengerEXT");
    ctx->destroy_messenger = (PFN_vkDestroyDebugUtilsMessengerEXT)(void (*)(void))
        vkGetInstanceProcAddr(*out, "vkDestroyDebugUtilsMessengerEXT");
    if (create) create(*out, &dbg, NULL, &ctx->messenger);
  }
  return VK_SUCCESS;
}

static int compute_family(VkPhysicalDevice pd, uint32_t *family) {
  uint32_t n = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, NULL);
  VkQueueFamilyProperties props[32];
  if (n > 32) n = 32;
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, props);
  for (uint32_t i = 0; i < n; ++i)
    if (props[i].queueFlags & VK_QUEUE_COMPUTE_BIT) {
      *family = i;
      return 1;
    }
  return 0;
}

/* Why `pd` cannot run the kernels ("" when it can). */
static const char *unusable_because(VkPhysicalDevice pd) {
  VkPhysicalDeviceProperties p;
  vkGetPhysicalDeviceProperties(pd, &p);
  uint32_t family;
  if (p.apiVersion < VK_API_VERSION_1_1) return "Vulkan 1.0 only (1.1 needed)";
  if (!compute_family(pd, &family)) return "no compute queue";
  if (p.limits.maxPerStageDescriptorStorageBuffers < PA_VK_NEEDED_STORAGE_BUFFERS)
    return "fewer than 11 storage buffers per shader stage";
  return "";
}

/* The usable physical devices of `inst`, in enumeration order. */
static uint32_t usable_devices(VkInstance inst, VkPhysicalDevice *out, char *why, size_t why_len) {
  uint32_t n = PA_VK_MAX_DEVICES;
  VkPhysicalDevice all[PA_VK_MAX_DEVICES];
  VkResult r = vkEnumeratePhysicalDevices(inst, &n, all);
  if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
    snprintf(why, why_len, "vkEnumeratePhysicalDevices: %s", pa_vk_result_name(r));
    return 0;
  }
  uint32_t k = 0;
  if (why_len) why[0] = '\0';
  for (uint32_t i = 0; i < n; ++i) {
    const char *no = unusable_because(all[i]);
    if (!*no) {
      out[k++] = all[i];
    } else if (why_len && !why[0]) {
      VkPhysicalDeviceProperties p;
      vkGetPhysicalDeviceProperties(all[i], &p);
      snprintf(why, why_len, "%s: %s", p.deviceName, no);
    }
  }
  if (k == 0 && why_len && !why[0]) snprintf(why, why_len, "the Vulkan loader lists no device");
  return k;
}

/* The device POLYATTN_VULKAN_DEVICE names, else the `index`-th; -1 if none. */
static int choose(VkPhysicalDevice *devs, uint32_t n, int32_t index, char *why, size_t why_len) {
  const char *env = getenv("POLYATTN_VULKAN_DEVICE");
  if (env && *env) {
    char *end;
    long v = strtol(env, &end, 10);
    if (*end == '\0') {
      if (v >= 0 && (uint32_t)v < n) return (int)v;
      snprintf(why, why_len, "POLYATTN_VULKAN_DEVICE=%s: there are %u usable Vulkan devices", env, n);
      return -1;
    }
    for (uint32_t i = 0; i < n; ++i) {
      VkPhysicalDeviceProperties p;
      vkGetPhysicalDeviceProperties(devs[i], &p);
      if (strstr(p.deviceName, env)) return (int)i;
    }
    snprintf(why, why_len, "POLYATTN_VULKAN_DEVICE=%s matches no usable Vulkan device", env);
    return -1;
  }
  if (index < 0 || (uint32_t)index >= n) {
    snprintf(why, why_len, "device %d: there are %u usable Vulkan devices", (int)index, n);
    return -1;
  }
  return index;
}

static const char *type_name(VkPhysicalDeviceType t) {
  switch (t) {
  case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete GPU";
  case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated GPU";
  case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual GPU";
  case VK_PHYSICAL_DEVICE_TYPE_CPU: return "CPU";
  default: return "other";
  }
}

static void describe(VkPhysicalDevice pd, char *out, size_t len) {
  VkPhysicalDeviceProperties p;
  vkGetPhysicalDeviceProperties(pd, &p);
  snprintf(out, len, "%.200s (%s, Vulkan %u.%u%s)", p.deviceName, type_name(p.deviceType),
           VK_API_VERSION_MAJOR(p.apiVersion), VK_API_VERSION_MINOR(p.apiVersion),
           env_is("POLYATTN_VULKAN_LIMITS", "mobile") ? ", mobile limits" : "");
}

int pa_vk_probe(char *device_name, size_t name_len, char *reason, size_t reason_len) {
  char why[400] = "";
  if (device_name && name_len) device_name[0] = '\0';
  if (reason && reason_len) reason[0] = '\0';
  VkInstance inst;
  if (instance_create(NULL, &inst, why, sizeof why) != VK_SUCCESS) {
    if (reason && reason_len) snprintf(reason, reason_len, "%s", why);
    return 0;
  }
  VkPhysicalDevice devs[PA_VK_MAX_DEVICES];
  uint32_t n = usable_devices(inst, devs, why, sizeof why);
  int pick = n ? choose(devs, n, 0, why, sizeof why) : -1;
  if (pick >= 0 && device_name && name_len) describe(devs[pick], device_name, name_len);
  if (pick < 0 && reason && reason_len) snprintf(reason, reason_len, "%s", why);
  vkDestroyInstance(inst, NULL);
  return pick >= 0 ? (int)n : 0;
}

int pa_vk_probe_has_gpu(void) {
  char why[400];
  VkInstance inst;
  if (instance_create(NULL, &inst, why, sizeof why) != VK_SUCCESS) return 0;
  VkPhysicalDevice devs[PA_VK_MAX_DEVICES];
  uint32_t n = usable_devices(inst, devs, why, sizeof why);
  int gpu = 0;
  for (uint32_t i = 0; i < n; ++i) {
    VkPhysicalDeviceProperties p;
    vkGetPhysicalDeviceProperties(devs[i], &p);
    gpu |= p.deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU;
  }
  vkDestroyInstance(inst, NULL);
  return gpu;
}

int pa_vk_has_extension(VkPhysicalDevice pd, const char *name) {
  uint32_t n = 0;
  if (vkEnumerateDeviceExtensionProperties(pd, NULL, &n, NULL) != VK_SUCCESS || n == 0) return 0;
  VkExtensionProperties *e = (VkExtensionProperties *)calloc(n, sizeof *e);
  if (!e) return 0;
  int found = 0;
  if (vkEnumerateDeviceExtensionProperties(pd, NULL, &n, e) == VK_SUCCESS)
    for (uint32_t i = 0; i < n && !found; ++i) found = !strcmp(e[i].extensionName, name);
  free(e);
  return found;
}

/* Core Vulkan reports no count of compute units. NVIDIA's VK_NV_shader_sm_builtins
 * gives the SM count and AMD's VK_AMD_shader_core_properties the CU count (read in
 * read_limits when offered); otherwise the split-KV rules get an estimate of how
 * many workgroups keep the device busy: a CPU driver runs one per core, GPUs get a
 * class default (a starting point, not a measurement). */
static int32_t estimate_compute_units(const VkPhysicalDeviceProperties *p) {
  switch (p->deviceType) {
  case VK_PHYSICAL_DEVICE_TYPE_CPU: {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int32_t)n : 1;
  }
  case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return 64;
  case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return 16;
  default: return 8;
  }
}

/* llvmpipe's loop limiter (vk_internal.h): 65535 in all, minus a margin for the
 * loops outside the tile loop. */
#define PA_VK_LLVMPIPE_LOOP_BUDGET 48000

static void read_limits(pa_vk_ctx *ctx) {
  VkPhysicalDeviceSubgroupProperties sub = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &sub};
  VkPhysicalDeviceDriverProperties drv = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
  VkPhysicalDeviceSubgroupSizeControlProperties size_ctl = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES};
  VkPhysicalDeviceShaderSMBuiltinsPropertiesNV nv_sm = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_SM_BUILTINS_PROPERTIES_NV};
  VkPhysicalDeviceShaderCorePropertiesAMD amd_core = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_CORE_PROPERTIES_AMD};
  VkPhysicalDeviceProperties base;
  vkGetPhysicalDeviceProperties(ctx->phys, &base);
  void **tail = &sub.pNext; /* the chain: p2 -> sub -> whatever the device offers */
  if (base.apiVersion >= VK_API_VERSION_1_2 ||
      pa_vk_has_extension(ctx->phys, "VK_KHR_driver_properties")) {
    *tail = &drv;
    tail = &drv.pNext;
  }
  if (base.apiVersion >= VK_API_VERSION_1_3 ||
      pa_vk_has_extension(ctx->phys, "VK_EXT_subgroup_size_control")) {
    *tail = &size_ctl;
    tail = &size_ctl.pNext;
  }
  int have_nv_sm = pa_vk_has_extension(ctx->phys, "VK_NV_shader_sm_builtins");
  int have_amd_core = pa_vk_has_extension(ctx->phys, "VK_AMD_shader_core_properties");
  if (have_nv_sm) {
    *tail = &nv_sm;
    tail = &nv_sm.pNext;
  }
  if (have_amd_core) {
    *tail = &amd_core;
    tail = &amd_core.pNext;
  }
  vkGetPhysicalDeviceProperties2(ctx->phys, &p2);
  const VkPhysicalDeviceLimits *l = &p2.properties.limits;
  VkPhysicalDeviceShaderFloat16Int8Features f16 = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES};
  VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  if (pa_vk_has_extension(ctx->phys, "VK_KHR_shader_float16_int8") ||
      p2.properties.apiVersion >= VK_API_VERSION_1_2)
    f2.pNext = &f16;
  vkGetPhysicalDeviceFeatures2(ctx->phys, &f2);

  pa_vk_limits *lim = &ctx->lim;
  lim->shared_bytes = l->maxComputeSharedMemorySize;
  lim->max_invocations = l->maxComputeWorkGroupInvocations < l->maxComputeWorkGroupSize[0]
                             ? l->maxComputeWorkGroupInvocations
                             : l->maxComputeWorkGroupSize[0];
  lim->subgroup_size = sub.subgroupSize;
  lim->subgroup_min = size_ctl.minSubgroupSize > 0 && size_ctl.minSubgroupSize < sub.subgroupSize
                          ? size_ctl.minSubgroupSize
                          : sub.subgroupSize;
  lim->subgroup_shuffle = (sub.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) &&
                          (sub.supportedOperations & VK_SUBGROUP_FEATURE_BASIC_BIT) &&
                          (sub.supportedOperations & VK_SUBGROUP_FEATURE_SHUFFLE_BIT);
  for (int i = 0; i < 3; ++i) lim->max_group_count[i] = l->maxComputeWorkGroupCount[i];
  lim->max_storage_range = l->maxStorageBufferRange;
  lim->max_storage_buffers = l->maxPerStageDescriptorStorageBuffers;
  lim->compute_units = estimate_compute_units(&p2.properties);
  if (have_nv_sm && nv_sm.shaderSMCount > 0) lim->compute_units = (int32_t)nv_sm.shaderSMCount;
  else if (have_amd_core && amd_core.shaderEngineCount > 0)
    lim->compute_units = (int32_t)(amd_core.shaderEngineCount * amd_core.shaderArraysPerEngineCount *
                                   amd_core.computeUnitsPerShaderArray);
  lim->fp16_arith = f16.shaderFloat16 != 0;
  lim->coopmat_nv = ctx->coopmat_dialect && !strcmp(ctx->coopmat_dialect, "NV");
  lim->coopmat_khr = ctx->coopmat_dialect && !strcmp(ctx->coopmat_dialect, "KHR");
  lim->coopmat2 = ctx->coopmat2_why[0] == '\0';
  lim->loop_budget = drv.driverID == VK_DRIVER_ID_MESA_LLVMPIPE ? PA_VK_LLVMPIPE_LOOP_BUDGET : 0;
  lim->mobile = env_is("POLYATTN_VULKAN_LIMITS", "mobile");
  if (lim->mobile) {
    if (lim->shared_bytes > PA_VK_MOBILE_SHARED_BYTES) lim->shared_bytes = PA_VK_MOBILE_SHARED_BYTES;
    if (lim->max_invocations > PA_VK_MOBILE_INVOCATIONS) lim->max_invocations = PA_VK_MOBILE_INVOCATIONS;
    lim->fp16_arith = 0;
  }
}

/* ---- cooperative matrices: what the coopmat kernel needs of a device, and enabling
 * it at device creation. Both dialects need the Vulkan memory model and shaderFloat16
 * (the SPIR-V declares VulkanMemoryModel and Float16). */

typedef struct coopmat_enable {
  const char *exts[6];
  uint32_t next;
  VkPhysicalDeviceVulkanMemoryModelFeaturesKHR mm;
  VkPhysicalDeviceShaderFloat16Int8FeaturesKHR f16;
#if PA_VK_HAVE_COOPMAT_NV
  VkPhysicalDeviceCooperativeMatrixFeaturesNV nv;
#endif
#if PA_VK_HAVE_COOPMAT_KHR && defined(VK_KHR_cooperative_matrix)
  VkPhysicalDeviceCooperativeMatrixFeaturesKHR khr;
#endif
} coopmat_enable;

#if PA_VK_HAVE_COOPMAT_NV || PA_VK_HAVE_COOPMAT_KHR
/* The shared requirements; fills the feature structs (chained from e->mm). */
static int coopmat_common(VkPhysicalDevice pd, coopmat_enable *e) {
  if (!pa_vk_has_extension(pd, "VK_KHR_vulkan_memory_model") ||
      !pa_vk_has_extension(pd, "VK_KHR_shader_float16_int8"))
    return 0;
  e->mm = (VkPhysicalDeviceVulkanMemoryModelFeaturesKHR){
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES_KHR};
  e->f16 = (VkPhysicalDeviceShaderFloat16Int8FeaturesKHR){
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES_KHR, .pNext = &e->mm};
  VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &e->f16};
  vkGetPhysicalDeviceFeatures2(pd, &f2);
  return e->mm.vulkanMemoryModel && e->f16.shaderFloat16;
}
#endif

#if PA_VK_HAVE_COOPMAT_NV
static int coopmat_nv_usable(VkInstance inst, VkPhysicalDevice pd) {
  coopmat_enable e;
  if (!inst || !pa_vk_has_extension(pd, VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME) ||
      !coopmat_common(pd, &e))
    return 0;
  VkPhysicalDeviceCooperativeMatrixFeaturesNV cm = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
  VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &cm};
  vkGetPhysicalDeviceFeatures2(pd, &f2);
  PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesNV get = (PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesNV)(
      void (*)(void))vkGetInstanceProcAddr(inst, "vkGetPhysicalDeviceCooperativeMatrixPropertiesNV");
  if (!cm.cooperativeMatrix || !get) return 0;
  uint32_t n = 0;
  if (get(pd, &n, NULL) != VK_SUCCESS || n == 0) return 0;
  VkCooperativeMatrixPropertiesNV *p = (VkCooperativeMatrixPropertiesNV *)calloc(n, sizeof *p);
  if (!p) return 0;
  for (uint32_t i = 0; i < n; ++i) p[i].sType = VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_NV;
  int ok = 0;
  if (get(pd, &n, p) == VK_SUCCESS)
    for (uint32_t i = 0; i < n && !ok; ++i)
      ok = p[i].MSize == 16 && p[i].NSize == 16 && p[i].KSize == 16 && p[i].AType == VK_COMPONENT_TYPE_FLOAT16_NV &&
           p[i].BType == VK_COMPONENT_TYPE_FLOAT16_NV && p[i].CType == VK_COMPONENT_TYPE_FLOAT32_NV &&
           p[i].DType == VK_COMPONENT_TYPE_FLOAT32_NV && p[i].scope == VK_SCOPE_SUBGROUP_NV;
  free(p);
  return ok;
}
#endif

#if PA_VK_HAVE_COOPMAT_KHR && defined(VK_KHR_cooperative_matrix)
static int coopmat_khr_usable(VkInstance inst, VkPhysicalDevice pd) {
  coopmat_enable e;
  if (!inst || !pa_vk_has_extension(pd, VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME) ||
      !coopmat_common(pd, &e))
    return 0;
  VkPhysicalDeviceCooperativeMatrixFeaturesKHR cm = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR};
  VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &cm};
  vkGetPhysicalDeviceFeatures2(pd, &f2);
  PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR get = (PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR)(
      void (*)(void))vkGetInstanceProcAddr(inst, "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR");
  if (!cm.cooperativeMatrix || !get) return 0;
  uint32_t n = 0;
  if (get(pd, &n, NULL) != VK_SUCCESS || n == 0) return 0;
  VkCooperativeMatrixPropertiesKHR *p = (VkCooperativeMatrixPropertiesKHR *)calloc(n, sizeof *p);
  if (!p) return 0;
  for (uint32_t i = 0; i < n; ++i) p[i].sType = VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_KHR;
  int ok = 0;
  if (get(pd, &n, p) == VK_SUCCESS)
    for (uint32_t i = 0; i < n && !ok; ++i)
      ok = p[i].MSize == 16 && p[i].NSize == 16 && p[i].KSize == 16 &&
           p[i].AType == VK_COMPONENT_TYPE_FLOAT16_KHR && p[i].BType == VK_COMPONENT_TYPE_FLOAT16_KHR &&
           p[i].CType == VK_COMPONENT_TYPE_FLOAT32_KHR && p[i].ResultType == VK_COMPONENT_TYPE_FLOAT32_KHR &&
           !p[i].saturatingAccumulation && p[i].scope == VK_SCOPE_SUBGROUP_KHR;
  free(p);
  return ok;
}
#endif

/* Which dialect to enable on `pd` ("KHR", "NV" or NULL), and the extensions and
 * feature chain for vkCreateDevice. Mobile mode enables none. */
static const char *coopmat_choose(VkInstance inst, VkPhysicalDevice pd, coopmat_enable *e) {
  memset(e, 0, sizeof *e);
  (void)inst, (void)pd;
  if (env_is("POLYATTN_VULKAN_LIMITS", "mobile")) return NULL;
  const char *dialect = NULL;
#if PA_VK_HAVE_COOPMAT_KHR && defined(VK_KHR_cooperative_matrix)
  if (coopmat_khr_usable(inst, pd)) dialect = "KHR";
#endif
#if PA_VK_HAVE_COOPMAT_NV
  if (!dialect && coopmat_nv_usable(inst, pd)) dialect = "NV";
#endif
  if (!dialect) return NULL;
  e->mm = (VkPhysicalDeviceVulkanMemoryModelFeaturesKHR){
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES_KHR, .vulkanMemoryModel = VK_TRUE};
  e->f16 = (VkPhysicalDeviceShaderFloat16Int8FeaturesKHR){
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES_KHR, .pNext = &e->mm,
      .shaderFloat16 = VK_TRUE};
  e->exts[e->next++] = "VK_KHR_vulkan_memory_model";
  e->exts[e->next++] = "VK_KHR_shader_float16_int8";
#if PA_VK_HAVE_COOPMAT_KHR && defined(VK_KHR_cooperative_matrix)
  if (!strcmp(dialect, "KHR")) {
    e->khr = (VkPhysicalDeviceCooperativeMatrixFeaturesKHR){
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR, .pNext = &e->f16,
        .cooperativeMatrix = VK_TRUE};
    e->exts[e->next++] = VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME;
  }
#endif
#if PA_VK_HAVE_COOPMAT_NV
  if (!strcmp(dialect, "NV")) {
    e->nv = (VkPhysicalDeviceCooperativeMatrixFeaturesNV){
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV, .pNext = &e->f16,
        .cooperativeMatrix = VK_TRUE};
    e->exts[e->next++] = VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME;
  }
#endif
  return dialect;
}

/* The head of the feature chain for vkCreateDevice. */
static const void *coopmat_chain(coopmat_enable *e, const char *dialect) {
  (void)e;
#if PA_VK_HAVE_COOPMAT_KHR && defined(VK_KHR_cooperative_matrix)
  if (dialect && !strcmp(dialect, "KHR")) return &e->khr;
#endif
#if PA_VK_HAVE_COOPMAT_NV
  if (dialect && !strcmp(dialect, "NV")) return &e->nv;
#endif
  return NULL;
}

/* The caller's device and queue (native_stream = polyattn_vulkan_queue *). */
static polyattn_status borrow(pa_vk_ctx *ctx, const polyattn_vulkan_queue *q, pa_error *err) {
  if (q->struct_size < sizeof *q)
    return pa_fail(err, POLYATTN_ERR_ABI, "native_stream: polyattn_vulkan_queue.struct_size is %u, "
                      "%zu expected", q->struct_size, sizeof *q);
  if (!q->physical_device || !q->device || !q->queue)
    return pa_fail(err, POLYATTN_ERR_NULL_ARGUMENT,
                      "native_stream: polyattn_vulkan_queue needs physical_device, device and queue");
  ctx->borrowed = 1;
  ctx->phys = (VkPhysicalDevice)q->physical_device;
  ctx->device = (VkDevice)q->device;
  ctx->queue = (VkQueue)q->queue;
  ctx->queue_family = q->queue_family_index;
  const char *no = unusable_because(ctx->phys);
  if (*no) return pa_fail(err, POLYATTN_ERR_UNSUPPORTED, "the caller's Vulkan device: %s", no);
  return POLYATTN_OK;
}

static polyattn_status own(pa_vk_ctx *ctx, int32_t device, pa_error *err) {
  char why[400] = "";
  VkResult r = instance_create(ctx, &ctx->instance, why, sizeof why);
  if (r != VK_SUCCESS) return pa_fail(err, POLYATTN_ERR_BACKEND, "%s", why);
  VkPhysicalDevice devs[PA_VK_MAX_DEVICES];
  uint32_t n = usable_devices(ctx->instance, devs, why, sizeof why);
  int pick = n ? choose(devs, n, device, why, sizeof why) : -1;
  if (pick < 0) return pa_fail(err, n ? POLYATTN_ERR_INVALID_VALUE : POLYATTN_ERR_BACKEND, "%s", why);
  ctx->phys = devs[pick];
  compute_family(ctx->phys, &ctx->queue_family);
  float prio = 1.0f;
  VkDeviceQueueCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                 .queueFamilyIndex = ctx->queue_family,
                                 .queueCount = 1,
                                 .pQueuePriorities = &prio};
  /* The scalar path needs no optional feature: 16-bit data is read and written as
   * 32-bit words (shaders/io.glsl). Only the cooperative-matrix kernel, where the
   * device runs it, enables extensions. */
  coopmat_enable ce;
  ctx->coopmat_dialect = coopmat_choose(ctx->instance, ctx->phys, &ce);
  const void *chain = coopmat_chain(&ce, ctx->coopmat_dialect);
#if PA_VK_HAVE_COOPMAT2 /* cooperative matrix 2 builds on the KHR dialect (vk_coopmat2.c) */
  pa_vk_coopmat2_enable c2;
  if (ctx->coopmat_dialect && !strcmp(ctx->coopmat_dialect, "KHR")) {
    if (pa_vk_coopmat2_probe(ctx, &c2, (void *)chain)) {
      chain = &c2.cm2;
      ce.exts[ce.next++] = VK_NV_COOPERATIVE_MATRIX_2_EXTENSION_NAME;
    }
  } else {
    snprintf(ctx->coopmat2_why, sizeof ctx->coopmat2_why, "%s",
             env_is("POLYATTN_VULKAN_LIMITS", "mobile") ? "mobile limits disable cooperative matrices"
                                                        : "the device has no usable KHR cooperative matrices");
  }
#endif
  /* POLYATTN_VULKAN_PIPELINE_STATS=1: the compiler's statistics of each pipeline
   * (vk_pipeline.c prints them), where the device reports them. */
  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR pexec = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR,
      .pNext = (void *)chain,
      .pipelineExecutableInfo = VK_TRUE};
  if (env_is("POLYATTN_VULKAN_PIPELINE_STATS", "1") &&
      pa_vk_has_extension(ctx->phys, VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME) &&
      ce.next < sizeof ce.exts / sizeof ce.exts[0]) {
    ce.exts[ce.next++] = VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME;
    chain = &pexec;
    ctx->pipeline_stats = 1;
  }
  VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                            .pNext = chain,
                            .queueCreateInfoCount = 1,
                            .pQueueCreateInfos = &qci,
                            .enabledExtensionCount = ce.next,
                            .ppEnabledExtensionNames = ce.exts};
  if ((r = vkCreateDevice(ctx->phys, &dci, NULL, &ctx->device)) != VK_SUCCESS)
    return pa_vk_status(err, r, "vkCreateDevice");
  vkGetDeviceQueue(ctx->device, ctx->queue_family, 0, &ctx->queue);
  return POLYATTN_OK;
}

polyattn_status pa_vk_context_create(int32_t device, void *native_stream, int32_t num_threads,
                                     void **bctx, pa_error *err) {
  (void)num_threads;
  *bctx = NULL;
  pa_vk_ctx *ctx = (pa_vk_ctx *)calloc(1, sizeof *ctx);
  if (!ctx) return pa_fail(err, POLYATTN_ERR_OUT_OF_MEMORY, "Vulkan context: out of memory");
  snprintf(ctx->coopmat2_why, sizeof ctx->coopmat2_why, "%s",
           PA_VK_HAVE_COOPMAT2 ? (native_stream ? "the context borrows the caller's device" : "")
                               : "this build has no coopmat2 kernel (its glslc cannot compile it)");
  polyattn_status st = native_stream ? borrow(ctx, (const polyattn_vulkan_queue *)native_stream, err)
                                     : own(ctx, device, err);
  if (st == POLYATTN_OK) {
    describe(ctx->phys, ctx->name, sizeof ctx->name);
    vkGetPhysicalDeviceMemoryProperties(ctx->phys, &ctx->memprops);
    read_limits(ctx);
    st = pa_vk_queue_init(ctx, err);
  }
  if (st == POLYATTN_OK) st = pa_vk_pipelines_init(ctx, err);
  if (st == POLYATTN_OK) st = pa_vk_mem_create(ctx, 64, 0, &ctx->dummy, err);
  if (st == POLYATTN_OK) st = pa_vk_check_validation(ctx, err);
  if (st != POLYATTN_OK) {
    pa_vk_context_destroy(ctx);
    return st;
  }
  *bctx = ctx;
  return POLYATTN_OK;
}

void pa_vk_context_destroy(void *bctx) {
  pa_vk_ctx *ctx = (pa_vk_ctx *)bctx;
  if (!ctx) return;
  if (ctx->device) {
    (void)pa_vk_wait_all(ctx, NULL);
    pa_vk_mem_destroy(ctx, &ctx->staging);
    pa_vk_mem_destroy(ctx, &ctx->dummy);
    pa_vk_pipelines_destroy(ctx);
    pa_vk_queue_destroy(ctx);
    if (!ctx->borrowed) vkDestroyDevice(ctx->device, NULL);
  }
  if (ctx->messenger && ctx->destroy_messenger)
    ctx->destroy_messenger(ctx->instance, ctx->messenger, NULL);
  if (ctx->instance) vkDestroyInstance(ctx->instance, NULL);
  free(ctx);
}

const char *pa_vk_device_name(void *bctx) { return ((pa_vk_ctx *)bctx)->name; }
