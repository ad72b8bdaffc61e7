/* VK_NV_cooperative_matrix2: what shaders/fwd_coopmat2.comp needs of a device
 * (docs/decisions.md 44), and the features vk_device.c enables for it.
 *
 * The kernel uses workgroup-scope matrices of fp16 x fp16 + fp32 with dimensions
 * that are multiples of 16, reductions, conversions, per-element functions and
 * tensor addressing, on PA_VK_COOPMAT2_THREADS invocations (or the closest size the
 * device lists for such matrices); it reads and writes fp16
 * through 16-bit storage. Anything missing is said in ctx->coopmat2_why, which a
 * call that asks for the kernel (POLYATTN_VULKAN_KERNEL=coopmat2) reports. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vk_internal.h"
#include "vk_tune.h"

#if PA_VK_HAVE_COOPMAT2
/* A workgroup-scope fp16 x fp16 + fp32 shape family whose granularities divide 16,
 * for PA_VK_COOPMAT2_THREADS invocations (POLYATTN_VULKAN_COOPMAT2_THREADS, a tuning
 * aid, overrides it) if listed, else the closest listed size in
 * [64, max]: its size in ctx->coopmat2_threads. Else what the device offers, in `why`. */
static int shape_ok(pa_vk_ctx *ctx, uint32_t max_invocations) {
  PFN_vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV get =
      (PFN_vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV)(void (*)(void))vkGetInstanceProcAddr(
          ctx->instance, "vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV");
  uint32_t n = 0;
  if (!get || get(ctx->phys, &n, NULL) != VK_SUCCESS || n == 0) {
    snprintf(ctx->coopmat2_why, sizeof ctx->coopmat2_why, "the device lists no flexible cooperative-matrix shapes");
    return 0;
  }
  VkCooperativeMatrixFlexibleDimensionsPropertiesNV *p =
      (VkCooperativeMatrixFlexibleDimensionsPropertiesNV *)calloc(n, sizeof *p);
  if (!p) return 0;
  for (uint32_t i = 0; i < n; ++i) p[i].sType = VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_FLEXIBLE_DIMENSIONS_PROPERTIES_NV;
  uint32_t best = 0, want = PA_VK_COOPMAT2_THREADS;
  const char *force = getenv("POLYATTN_VULKAN_COOPMAT2_THREADS"); /* a tuning aid */
  if (force && atoi(force) > 0) want = (uint32_t)atoi(force);
  char seen[128] = "";
  if (get(ctx->phys, &n, p) == VK_SUCCESS)
    for (uint32_t i = 0; i < n; ++i) {
      if (p[i].AType != VK_COMPONENT_TYPE_FLOAT16_KHR || p[i].BType != VK_COMPONENT_TYPE_FLOAT16_KHR ||
          p[i].CType != VK_COMPONENT_TYPE_FLOAT32_KHR || p[i].ResultType != VK_COMPONENT_TYPE_FLOAT32_KHR ||
          p[i].saturatingAccumulation || p[i].scope != VK_SCOPE_WORKGROUP_KHR)
        continue;
      size_t len = strlen(seen);
      snprintf(seen + len, sizeof seen - len, " %ux%ux%u@%u", p[i].MGranularity, p[i].NGranularity,
               p[i].KGranularity, p[i].workgroupInvocations);
      const uint32_t w = p[i].workgroupInvocations;
      if (!p[i].MGranularity || 16 % p[i].MGranularity || !p[i].NGranularity || 16 % p[i].NGranularity ||
          !p[i].KGranularity || 16 % p[i].KGranularity || w < 64 || w > max_invocations)
        continue;
      const uint32_t dist = w > want ? w - want : want - w, best_dist = best > want ? best - want : want - best;
      if (!best || dist < best_dist) best = w;
    }
  free(p);
  ctx->coopmat2_threads = best;
  const int ok = best != 0;
  if (!ok)
    snprintf(ctx->coopmat2_why, sizeof ctx->coopmat2_why,
             "no workgroup-scope fp16 x fp16 + fp32 shape with granularity dividing 16 for 64..%u "
             "invocations (offered:%s)", max_invocations, *seen ? seen : " none");
  return ok;
}

int pa_vk_coopmat2_probe(pa_vk_ctx *ctx, pa_vk_coopmat2_enable *e, void *next) {
  memset(e, 0, sizeof *e);
  if (!pa_vk_has_extension(ctx->phys, VK_NV_COOPERATIVE_MATRIX_2_EXTENSION_NAME)) {
    snprintf(ctx->coopmat2_why, sizeof ctx->coopmat2_why, "the device lacks VK_NV_cooperative_matrix2");
    return 0;
  }
  VkPhysicalDeviceCooperativeMatrix2FeaturesNV cm2 = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_FEATURES_NV};
  VkPhysicalDevice16BitStorageFeatures s16 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES,
                                              .pNext = &cm2};
  VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &s16};
  vkGetPhysicalDeviceFeatures2(ctx->phys, &f2);
  const char *missing = !cm2.cooperativeMatrixWorkgroupScope           ? "cooperativeMatrixWorkgroupScope"
                        : !cm2.cooperativeMatrixFlexibleDimensions     ? "cooperativeMatrixFlexibleDimensions"
                        : !cm2.cooperativeMatrixReductions             ? "cooperativeMatrixReductions"
                        : !cm2.cooperativeMatrixConversions            ? "cooperativeMatrixConversions"
                        : !cm2.cooperativeMatrixPerElementOperations   ? "cooperativeMatrixPerElementOperations"
                        : !cm2.cooperativeMatrixTensorAddressing       ? "cooperativeMatrixTensorAddressing"
                        : !s16.storageBuffer16BitAccess                ? "storageBuffer16BitAccess"
                                                                       : NULL;
  if (missing) {
    snprintf(ctx->coopmat2_why, sizeof ctx->coopmat2_why, "the device lacks the feature %s", missing);
    return 0;
  }
  VkPhysicalDeviceCooperativeMatrix2PropertiesNV props = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_PROPERTIES_NV};
  VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &props};
  vkGetPhysicalDeviceProperties2(ctx->phys, &p2);
  ctx->coopmat2_reserved_shared = props.cooperativeMatrixWorkgroupScopeReservedSharedMemory;
  ctx->coopmat2_max_invocations = props.cooperativeMatrixWorkgroupScopeMaxWorkgroupSize;
  if (props.cooperativeMatrixFlexibleDimensionsMaxDimension < 256) {
    snprintf(ctx->coopmat2_why, sizeof ctx->coopmat2_why,
             "flexible cooperative-matrix dimensions are limited to %u (256 needed)",
             props.cooperativeMatrixFlexibleDimensionsMaxDimension);
    return 0;
  }
  VkPhysicalDeviceProperties base;
  vkGetPhysicalDeviceProperties(ctx->phys, &base);
  uint32_t max_invocations = props.cooperativeMatrixWorkgroupScopeMaxWorkgroupSize;
  if (max_invocations > base.limits.maxComputeWorkGroupInvocations) max_invocations = base.limits.maxComputeWorkGroupInvocations;
  if (max_invocations > base.limits.maxComputeWorkGroupSize[0]) max_invocations = base.limits.maxComputeWorkGroupSize[0];
  if (!shape_ok(ctx, max_invocations)) return 0;
  e->s16 = (VkPhysicalDevice16BitStorageFeatures){.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES,
                                                  .pNext = next,
                                                  .storageBuffer16BitAccess = VK_TRUE};
  e->cm2 = (VkPhysicalDeviceCooperativeMatrix2FeaturesNV){
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_FEATURES_NV,
      .pNext = &e->s16,
      .cooperativeMatrixWorkgroupScope = VK_TRUE,
      .cooperativeMatrixFlexibleDimensions = VK_TRUE,
      .cooperativeMatrixReductions = VK_TRUE,
      .cooperativeMatrixConversions = VK_TRUE,
      .cooperativeMatrixPerElementOperations = VK_TRUE,
      .cooperativeMatrixTensorAddressing = VK_TRUE};
  ctx->coopmat2_why[0] = '\0';
  return 1;
}
#endif
