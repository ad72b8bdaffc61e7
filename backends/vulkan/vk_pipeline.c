/* Shader modules, the one descriptor layout every kernel shares, and the pipeline
 * cache: a pipeline per (kernel, specialization constants), created on first use.
 * The SPIR-V is compiled from shaders/ by glslc at build time and embedded here
 * (CMakeLists.txt writes <name>.spv.inc, a C initializer of 32-bit words). */
#include <stdio.h>
#include <string.h>

#include "vk_internal.h"

static const uint32_t spv_fwd_scalar[] =
#include "fwd_scalar.spv.inc"
    ;
static const uint32_t spv_merge[] =
#include "merge.spv.inc"
    ;
static const uint32_t spv_decode[] =
#include "fwd_decode.spv.inc"
    ;
#if PA_VK_HAVE_COOPMAT_NV
static const uint32_t spv_coopmat_nv[] =
#include "fwd_coopmat_nv.spv.inc"
    ;
#endif
#if PA_VK_HAVE_COOPMAT2
static const uint32_t spv_coopmat2[] =
#include "fwd_coopmat2.spv.inc"
    ;
static const uint32_t spv_coopmat2_sg[] =
#include "fwd_coopmat2_sg.spv.inc"
    ;
#endif
#if PA_VK_HAVE_COOPMAT_KHR
static const uint32_t spv_coopmat_khr[] =
#include "fwd_coopmat_khr.spv.inc"
    ;
#endif

static polyattn_status make_module(pa_vk_ctx *ctx, const uint32_t *code, size_t bytes,
                                   VkShaderModule *out, pa_error *err) {
  VkShaderModuleCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
                                 .codeSize = bytes,
                                 .pCode = code};
  VkResult r = vkCreateShaderModule(ctx->device, &ci, NULL, out);
  return r == VK_SUCCESS ? POLYATTN_OK : pa_vk_status(err, r, "vkCreateShaderModule");
}

polyattn_status pa_vk_pipelines_init(pa_vk_ctx *ctx, pa_error *err) {
  VkDescriptorSetLayoutBinding b[PA_VK_BINDINGS];
  for (uint32_t i = 0; i < PA_VK_BINDINGS; ++i) {
    b[i] = (VkDescriptorSetLayoutBinding){
        .binding = i,
        .descriptorType = i == 0 ? VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER : VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
        .descriptorCount = 1,
        .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT};
  }
  VkDescriptorSetLayoutCreateInfo lci = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
                                         .bindingCount = PA_VK_BINDINGS,
                                         .pBindings = b};
  VkResult r = vkCreateDescriptorSetLayout(ctx->device, &lci, NULL, &ctx->set_layout);
  if (r != VK_SUCCESS) return pa_vk_status(err, r, "vkCreateDescriptorSetLayout");
  VkPipelineLayoutCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
                                    .setLayoutCount = 1,
                                    .pSetLayouts = &ctx->set_layout};
  if ((r = vkCreatePipelineLayout(ctx->device, &pci, NULL, &ctx->pipe_layout)) != VK_SUCCESS)
    return pa_vk_status(err, r, "vkCreatePipelineLayout");
  VkPipelineCacheCreateInfo cci = {.sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  if ((r = vkCreatePipelineCache(ctx->device, &cci, NULL, &ctx->cache)) != VK_SUCCESS)
    return pa_vk_status(err, r, "vkCreatePipelineCache");
  polyattn_status st = make_module(ctx, spv_fwd_scalar, sizeof spv_fwd_scalar, &ctx->mod_scalar, err);
  if (st == POLYATTN_OK) st = make_module(ctx, spv_merge, sizeof spv_merge, &ctx->mod_merge, err);
  if (st == POLYATTN_OK && ctx->lim.subgroup_shuffle)
    st = make_module(ctx, spv_decode, sizeof spv_decode, &ctx->mod_decode, err);
#if PA_VK_HAVE_COOPMAT_KHR
  if (st == POLYATTN_OK && ctx->lim.coopmat_khr)
    st = make_module(ctx, spv_coopmat_khr, sizeof spv_coopmat_khr, &ctx->mod_coopmat, err);
#endif
#if PA_VK_HAVE_COOPMAT_NV
  if (st == POLYATTN_OK && ctx->lim.coopmat_nv)
    st = make_module(ctx, spv_coopmat_nv, sizeof spv_coopmat_nv, &ctx->mod_coopmat, err);
#endif
#if PA_VK_HAVE_COOPMAT2
  if (st == POLYATTN_OK && ctx->lim.coopmat2)
    st = make_module(ctx, spv_coopmat2, sizeof spv_coopmat2, &ctx->mod_coopmat2, err);
  if (st == POLYATTN_OK && ctx->lim.coopmat2 && ctx->lim.coopmat_khr)
    st = make_module(ctx, spv_coopmat2_sg, sizeof spv_coopmat2_sg, &ctx->mod_coopmat2_sg, err);
#endif
  return st;
}

void pa_vk_pipelines_destroy(pa_vk_ctx *ctx) {
  for (int i = 0; i < ctx->npipes; ++i) vkDestroyPipeline(ctx->device, ctx->pipes[i].pipe, NULL);
  ctx->npipes = 0;
  if (ctx->mod_scalar) vkDestroyShaderModule(ctx->device, ctx->mod_scalar, NULL);
  if (ctx->mod_merge) vkDestroyShaderModule(ctx->device, ctx->mod_merge, NULL);
  if (ctx->mod_decode) vkDestroyShaderModule(ctx->device, ctx->mod_decode, NULL);
  if (ctx->mod_coopmat) vkDestroyShaderModule(ctx->device, ctx->mod_coopmat, NULL);
  if (ctx->mod_coopmat2) vkDestroyShaderModule(ctx->device, ctx->mod_coopmat2, NULL);
  if (ctx->mod_coopmat2_sg) vkDestroyShaderModule(ctx->device, ctx->mod_coopmat2_sg, NULL);
  if (ctx->cache) vkDestroyPipelineCache(ctx->device, ctx->cache, NULL);
  if (ctx->pipe_layout) vkDestroyPipelineLayout(ctx->device, ctx->pipe_layout, NULL);
  if (ctx->set_layout) vkDestroyDescriptorSetLayout(ctx->device, ctx->set_layout, NULL);
}

/* POLYATTN_VULKAN_PIPELINE_STATS=1: the compiler's statistics of a new pipeline on
 * stderr, one line per executable ("polyattn vulkan: pipeline K spec ...: name=value
 * ..."). */
static void print_stats(pa_vk_ctx *ctx, pa_vk_kernel kernel, const int32_t spec[7], VkPipeline pipe) {
  PFN_vkGetPipelineExecutablePropertiesKHR get_props = (PFN_vkGetPipelineExecutablePropertiesKHR)(void (*)(void))
      vkGetDeviceProcAddr(ctx->device, "vkGetPipelineExecutablePropertiesKHR");
  PFN_vkGetPipelineExecutableStatisticsKHR get_stats = (PFN_vkGetPipelineExecutableStatisticsKHR)(void (*)(void))
      vkGetDeviceProcAddr(ctx->device, "vkGetPipelineExecutableStatisticsKHR");
  if (!get_props || !get_stats) return;
  VkPipelineInfoKHR pi = {.sType = VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR, .pipeline = pipe};
  uint32_t nexec = 0;
  if (get_props(ctx->device, &pi, &nexec, NULL) != VK_SUCCESS) return;
  for (uint32_t e = 0; e < nexec; ++e) {
    VkPipelineExecutableInfoKHR ei = {.sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR,
                                      .pipeline = pipe, .executableIndex = e};
    VkPipelineExecutableStatisticKHR st[32];
    uint32_t n = 32;
    for (uint32_t i = 0; i < n; ++i)
      st[i] = (VkPipelineExecutableStatisticKHR){.sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR};
    VkResult r = get_stats(ctx->device, &ei, &n, st);
    if (r != VK_SUCCESS && r != VK_INCOMPLETE) continue;
    fprintf(stderr, "polyattn vulkan: pipeline %d spec %d %d %d %d %d %d %d:", (int)kernel, spec[0], spec[1],
            spec[2], spec[3], spec[4], spec[5], spec[6]);
    for (uint32_t i = 0; i < n; ++i) {
      const VkPipelineExecutableStatisticKHR *x = &st[i];
      if (x->format == VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR)
        fprintf(stderr, " %s=%u", x->name, (unsigned)x->value.b32);
      else if (x->format == VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR)
        fprintf(stderr, " %s=%lld", x->name, (long long)x->value.i64);
      else if (x->format == VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR)
        fprintf(stderr, " %s=%llu", x->name, (unsigned long long)x->value.u64);
      else
        fprintf(stderr, " %s=%g", x->name, x->value.f64);
    }
    fprintf(stderr, "\n");
  }
}

polyattn_status pa_vk_pipeline_get(pa_vk_ctx *ctx, pa_vk_kernel kernel, const int32_t spec[7],
                                   VkPipeline *out, pa_error *err) {
  for (int i = 0; i < ctx->npipes; ++i)
    if (ctx->pipes[i].kernel == kernel && !memcmp(ctx->pipes[i].spec, spec, sizeof ctx->pipes[i].spec)) {
      *out = ctx->pipes[i].pipe;
      return POLYATTN_OK;
    }
  if (ctx->npipes == PA_VK_MAX_PIPELINES) { /* a full cache starts over */
    polyattn_status st = pa_vk_wait_all(ctx, err);
    if (st != POLYATTN_OK) return st;
    for (int i = 0; i < ctx->npipes; ++i) vkDestroyPipeline(ctx->device, ctx->pipes[i].pipe, NULL);
    ctx->npipes = 0;
  }
  VkSpecializationMapEntry map[7];
  for (uint32_t i = 0; i < 7; ++i)
    map[i] = (VkSpecializationMapEntry){.constantID = i, .offset = i * 4, .size = 4};
  VkSpecializationInfo si = {.mapEntryCount = 7, .pMapEntries = map, .dataSize = 7 * 4, .pData = spec};
  VkComputePipelineCreateInfo ci = {
      .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
      .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                .module = kernel == PA_VK_KERNEL_MERGE     ? ctx->mod_merge
                          : kernel == PA_VK_KERNEL_COOPMAT  ? ctx->mod_coopmat
                          : kernel == PA_VK_KERNEL_DECODE   ? ctx->mod_decode
                          : kernel == PA_VK_KERNEL_COOPMAT2 ? ctx->mod_coopmat2
                          : kernel == PA_VK_KERNEL_COOPMAT2_SG ? ctx->mod_coopmat2_sg
                                                            : ctx->mod_scalar,
                .pName = "main",
                .pSpecializationInfo = &si},
      .layout = ctx->pipe_layout};
  if (ctx->pipeline_stats) ci.flags |= VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR;
  pa_vk_pipeline *p = &ctx->pipes[ctx->npipes];
  VkResult r = vkCreateComputePipelines(ctx->device, ctx->cache, 1, &ci, NULL, &p->pipe);
  if (r != VK_SUCCESS) return pa_vk_status(err, r, "vkCreateComputePipelines");
  if (ctx->pipeline_stats) print_stats(ctx, kernel, spec, p->pipe);
  p->kernel = kernel;
  memcpy(p->spec, spec, sizeof p->spec);
  ctx->npipes++;
  *out = p->pipe;
  return POLYATTN_OK;
}
