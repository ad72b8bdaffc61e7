/* Command-buffer slots: PA_VK_SLOTS submissions may be in flight per context. A
 * slot is reused once its fence signals; each begins with a full memory barrier,
 * which orders it after every earlier submission on the queue (a barrier's first
 * scope covers all commands submitted before it), so the queue behaves like a
 * CUDA stream. Nothing here waits unless a slot is reused or asked to. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vk_internal.h"

/* Parameter blocks per slot: one per dispatch recorded into it (forward + merge). */
#define PA_VK_PARAMS_BYTES 4096u
#define PA_VK_SETS_PER_SLOT 4u

polyattn_status pa_vk_queue_init(pa_vk_ctx *ctx, pa_error *err) {
  VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                 .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                 .queueFamilyIndex = ctx->queue_family};
  VkResult r = vkCreateCommandPool(ctx->device, &pci, NULL, &ctx->cmd_pool);
  if (r != VK_SUCCESS) return pa_vk_status(err, r, "vkCreateCommandPool");
  VkDescriptorPoolSize sizes[2] = {
      {VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, PA_VK_SETS_PER_SLOT},
      {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, PA_VK_SETS_PER_SLOT * (PA_VK_BINDINGS - 1)}};
  for (int i = 0; i < PA_VK_SLOTS; ++i) {
    pa_vk_slot *s = &ctx->slots[i];
    VkCommandBufferAllocateInfo cai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                       .commandPool = ctx->cmd_pool,
                                       .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                       .commandBufferCount = 1};
    if ((r = vkAllocateCommandBuffers(ctx->device, &cai, &s->cmd)) != VK_SUCCESS)
      return pa_vk_status(err, r, "vkAllocateCommandBuffers");
    VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    if ((r = vkCreateFence(ctx->device, &fci, NULL, &s->fence)) != VK_SUCCESS)
      return pa_vk_status(err, r, "vkCreateFence");
    VkDescriptorPoolCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
                                      .maxSets = PA_VK_SETS_PER_SLOT,
                                      .poolSizeCount = 2,
                                      .pPoolSizes = sizes};
    if ((r = vkCreateDescriptorPool(ctx->device, &dci, NULL, &s->pool)) != VK_SUCCESS)
      return pa_vk_status(err, r, "vkCreateDescriptorPool");
    polyattn_status st = pa_vk_mem_create(ctx, PA_VK_PARAMS_BYTES, 1, &s->params, err);
    if (st != POLYATTN_OK) return st;
  }
  const char *ts = getenv("POLYATTN_VULKAN_TIMESTAMPS");
  if (ts && !strcmp(ts, "1")) {
    uint32_t n = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(ctx->phys, &n, NULL);
    VkQueueFamilyProperties fam[32];
    if (n > 32) n = 32;
    vkGetPhysicalDeviceQueueFamilyProperties(ctx->phys, &n, fam);
    VkPhysicalDeviceProperties props;
    vkGetPhysicalDeviceProperties(ctx->phys, &props);
    if (ctx->queue_family < n && fam[ctx->queue_family].timestampValidBits > 0 &&
        props.limits.timestampPeriod > 0) {
      VkQueryPoolCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                                   .queryType = VK_QUERY_TYPE_TIMESTAMP,
                                   .queryCount = 2 * PA_VK_SLOTS};
      if ((r = vkCreateQueryPool(ctx->device, &qci, NULL, &ctx->timestamps)) != VK_SUCCESS)
        return pa_vk_status(err, r, "vkCreateQueryPool");
      ctx->timestamp_ns = props.limits.timestampPeriod;
    } else {
      fprintf(stderr, "polyattn vulkan: POLYATTN_VULKAN_TIMESTAMPS=1 but the queue has no timestamps\n");
    }
  }
  return POLYATTN_OK;
}

void pa_vk_slot_time_begin(pa_vk_ctx *ctx, pa_vk_slot *slot) {
  if (!ctx->timestamps) return;
  uint32_t q = 2u * (uint32_t)(slot - ctx->slots);
  vkCmdResetQueryPool(slot->cmd, ctx->timestamps, q, 2);
  vkCmdWriteTimestamp(slot->cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, ctx->timestamps, q);
}

void pa_vk_slot_time_end(pa_vk_ctx *ctx, pa_vk_slot *slot) {
  if (!ctx->timestamps) return;
  uint32_t q = 2u * (uint32_t)(slot - ctx->slots);
  vkCmdWriteTimestamp(slot->cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, ctx->timestamps, q + 1);
  slot->timed = 1;
}

/* The GPU time of a timed slot's forward, once its fence has signalled. */
static void report_time(pa_vk_ctx *ctx, pa_vk_slot *s) {
  uint64_t t[2];
  uint32_t q = 2u * (uint32_t)(s - ctx->slots);
  s->timed = 0;
  if (vkGetQueryPoolResults(ctx->device, ctx->timestamps, q, 2, sizeof t, t, sizeof t[0],
                            VK_QUERY_RESULT_64_BIT) == VK_SUCCESS)
    fprintf(stderr, "polyattn vulkan: forward gpu %.3f us\n", (double)(t[1] - t[0]) * ctx->timestamp_ns * 1e-3);
}

void pa_vk_queue_destroy(pa_vk_ctx *ctx) {
  for (int i = 0; i < PA_VK_SLOTS; ++i) {
    pa_vk_slot *s = &ctx->slots[i];
    pa_vk_mem_destroy(ctx, &s->params);
    if (s->pool) vkDestroyDescriptorPool(ctx->device, s->pool, NULL);
    if (s->fence) vkDestroyFence(ctx->device, s->fence, NULL);
  }
  if (ctx->timestamps) vkDestroyQueryPool(ctx->device, ctx->timestamps, NULL);
  if (ctx->cmd_pool) vkDestroyCommandPool(ctx->device, ctx->cmd_pool, NULL);
}

static polyattn_status wait_slot(pa_vk_ctx *ctx, pa_vk_slot *s, pa_error *err) {
  if (!s->pending) return POLYATTN_OK;
  VkResult r = vkWaitForFences(ctx->device, 1, &s->fence, VK_TRUE, UINT64_MAX);
  if (r != VK_SUCCESS) return pa_vk_status(err, r, "vkWaitForFences");
  s->pending = 0;
  if (s->timed) report_time(ctx, s);
  if ((r = vkResetFences(ctx->device, 1, &s->fence)) != VK_SUCCESS)
    return pa_vk_status(err, r, "vkResetFences");
  return POLYATTN_OK;
}

polyattn_status pa_vk_slot_acquire(pa_vk_ctx *ctx, pa_vk_slot **slot, pa_error *err) {
  pa_vk_slot *s = &ctx->slots[ctx->next_slot];
  polyattn_status st = wait_slot(ctx, s, err);
  if (st != POLYATTN_OK) return st;
  VkResult r = vkResetDescriptorPool(ctx->device, s->pool, 0);
  if (r != VK_SUCCESS) return pa_vk_status(err, r, "vkResetDescriptorPool");
  if ((r = vkResetCommandBuffer(s->cmd, 0)) != VK_SUCCESS)
    return pa_vk_status(err, r, "vkResetCommandBuffer");
  VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                 .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
  if ((r = vkBeginCommandBuffer(s->cmd, &bi)) != VK_SUCCESS)
    return pa_vk_status(err, r, "vkBeginCommandBuffer");
  VkMemoryBarrier all = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                         .srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT,
                         .dstAccessMask = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT};
  vkCmdPipelineBarrier(s->cmd, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
                       0, 1, &all, 0, NULL, 0, NULL);
  *slot = s;
  return POLYATTN_OK;
}

polyattn_status pa_vk_slot_submit(pa_vk_ctx *ctx, pa_vk_slot *slot, pa_error *err) {
  VkResult r = vkEndCommandBuffer(slot->cmd);
  if (r != VK_SUCCESS) return pa_vk_status(err, r, "vkEndCommandBuffer");
  VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                     .commandBufferCount = 1,
                     .pCommandBuffers = &slot->cmd};
  if ((r = vkQueueSubmit(ctx->queue, 1, &si, slot->fence)) != VK_SUCCESS)
    return pa_vk_status(err, r, "vkQueueSubmit");
  slot->pending = 1;
  ctx->next_slot = (ctx->next_slot + 1) % PA_VK_SLOTS;
  return pa_vk_check_validation(ctx, err);
}

polyattn_status pa_vk_wait_all(pa_vk_ctx *ctx, pa_error *err) {
  polyattn_status first = POLYATTN_OK;
  for (int i = 0; i < PA_VK_SLOTS; ++i) {
    polyattn_status st = wait_slot(ctx, &ctx->slots[i], err);
    if (first == POLYATTN_OK) first = st;
  }
  return first;
}

polyattn_status pa_vk_synchronize(void *bctx, pa_error *err) {
  pa_vk_ctx *ctx = (pa_vk_ctx *)bctx;
  polyattn_status st = pa_vk_wait_all(ctx, err);
  return st != POLYATTN_OK ? st : pa_vk_check_validation(ctx, err);
}
