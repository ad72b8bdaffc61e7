/* The Vulkan backend's buffers: device-local allocations, blocking copies through
 * a host-visible staging buffer, and wrapped caller VkBuffers.
 *
 * An allocated buffer's handle is its pa_vk_mem; a wrapped one's handle is the
 * caller's VkBuffer itself (polyattn.h). Sizes are rounded up to 16 bytes so the
 * kernels' 32-bit word reads of 16-bit data never pass the end. */
#include <stdlib.h>
#include <string.h>

#include "vk_internal.h"

#define PA_VK_SIZE_ALIGN 16u

static int find_memory_type(const pa_vk_ctx *ctx, uint32_t allowed, VkMemoryPropertyFlags need,
                            VkMemoryPropertyFlags prefer) {
  int fallback = -1;
  for (uint32_t i = 0; i < ctx->memprops.memoryTypeCount; ++i) {
    VkMemoryPropertyFlags f = ctx->memprops.memoryTypes[i].propertyFlags;
    if (!(allowed & (1u << i)) || (f & need) != need) continue;
    if ((f & prefer) == prefer) return (int)i;
    if (fallback < 0) fallback = (int)i;
  }
  return fallback;
}

polyattn_status pa_vk_mem_create(pa_vk_ctx *ctx, VkDeviceSize size, int host_visible,
                                 pa_vk_mem *m, pa_error *err) {
  memset(m, 0, sizeof *m);
  size = (size + PA_VK_SIZE_ALIGN - 1) / PA_VK_SIZE_ALIGN * PA_VK_SIZE_ALIGN;
  VkBufferCreateInfo bci = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                            .size = size,
                            .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                                     VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT |
                                     VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                     VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                            .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
  VkResult r = vkCreateBuffer(ctx->device, &bci, NULL, &m->buf);
  if (r != VK_SUCCESS) return pa_vk_status(err, r, "vkCreateBuffer");
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(ctx->device, m->buf, &req);
  VkMemoryPropertyFlags need = host_visible ? VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                                  VK_MEMORY_PROPERTY_HOST_COHERENT_BIT
                                            : 0;
  VkMemoryPropertyFlags prefer = host_visible ? need : VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
  int type = find_memory_type(ctx, req.memoryTypeBits, need, prefer);
  if (type < 0) {
    pa_vk_mem_destroy(ctx, m);
    return pa_fail(err, POLYATTN_ERR_DEVICE, "no Vulkan memory type for a %s buffer",
                      host_visible ? "host-visible" : "device");
  }
  VkMemoryAllocateInfo mai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                              .allocationSize = req.size,
                              .memoryTypeIndex = (uint32_t)type};
  if ((r = vkAllocateMemory(ctx->device, &mai, NULL, &m->mem)) != VK_SUCCESS) {
    pa_vk_mem_destroy(ctx, m);
    return pa_vk_status(err, r, "vkAllocateMemory");
  }
  if ((r = vkBindBufferMemory(ctx->device, m->buf, m->mem, 0)) != VK_SUCCESS) {
    pa_vk_mem_destroy(ctx, m);
    return pa_vk_status(err, r, "vkBindBufferMemory");
  }
  if (host_visible && (r = vkMapMemory(ctx->device, m->mem, 0, VK_WHOLE_SIZE, 0, &m->map)) != VK_SUCCESS) {
    pa_vk_mem_destroy(ctx, m);
    return pa_vk_status(err, r, "vkMapMemory");
  }
  m->size = size;
  return POLYATTN_OK;
}

void pa_vk_mem_destroy(pa_vk_ctx *ctx, pa_vk_mem *m) {
  if (m->map) vkUnmapMemory(ctx->device, m->mem);
  if (m->buf) vkDestroyBuffer(ctx->device, m->buf, NULL);
  if (m->mem) vkFreeMemory(ctx->device, m->mem, NULL);
  memset(m, 0, sizeof *m);
}

VkBuffer pa_vk_buffer_of(const struct polyattn_buffer *b) {
  return b->owned ? ((const pa_vk_mem *)b->handle)->buf : (VkBuffer)b->handle;
}

/* Only VkBuffers of the context's device: meaningful when the context borrows the
 * caller's device (polyattn_vulkan_queue). */
int pa_vk_can_wrap(void *bctx, polyattn_memory_kind kind) {
  (void)bctx;
  return kind == POLYATTN_MEMORY_VK_BUFFER;
}

polyattn_status pa_vk_buffer_alloc(void *bctx, size_t bytes, void **handle, void **address,
                                   pa_error *err) {
  pa_vk_ctx *ctx = (pa_vk_ctx *)bctx;
  pa_vk_mem *m = (pa_vk_mem *)calloc(1, sizeof *m);
  if (!m) return pa_fail(err, POLYATTN_ERR_OUT_OF_MEMORY, "Vulkan buffer: out of host memory");
  polyattn_status st = pa_vk_mem_create(ctx, bytes, 0, m, err);
  if (st != POLYATTN_OK) {
    free(m);
    return st;
  }
  *handle = m;
  *address = NULL;
  return POLYATTN_OK;
}

void pa_vk_buffer_free(void *bctx, void *handle) {
  pa_vk_ctx *ctx = (pa_vk_ctx *)bctx;
  (void)pa_vk_wait_all(ctx, NULL); /* the GPU may still read it */
  pa_vk_mem_destroy(ctx, (pa_vk_mem *)handle);
  free(handle);
}

static polyattn_status staging_reserve(pa_vk_ctx *ctx, size_t bytes, pa_error *err) {
  if (ctx->staging.buf && ctx->staging.size >= bytes) return POLYATTN_OK;
  pa_vk_mem_destroy(ctx, &ctx->staging);
  return pa_vk_mem_create(ctx, bytes, 1, &ctx->staging, err);
}

/* One blocking copy between the staging buffer and `buf`, after all earlier work. */
static polyattn_status copy_blocking(pa_vk_ctx *ctx, const struct polyattn_buffer *buf,
                                     size_t offset, size_t bytes, int to_device, pa_error *err) {
  pa_vk_slot *slot;
  polyattn_status st = pa_vk_slot_acquire(ctx, &slot, err);
  if (st != POLYATTN_OK) return st;
  VkBufferCopy region = {.srcOffset = to_device ? 0 : offset,
                         .dstOffset = to_device ? offset : 0,
                         .size = bytes};
  VkBuffer dev = pa_vk_buffer_of(buf);
  if (to_device)
    vkCmdCopyBuffer(slot->cmd, ctx->staging.buf, dev, 1, &region);
  else
    vkCmdCopyBuffer(slot->cmd, dev, ctx->staging.buf, 1, &region);
  VkMemoryBarrier to_host = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                             .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                             .dstAccessMask = VK_ACCESS_HOST_READ_BIT};
  vkCmdPipelineBarrier(slot->cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1,
                       &to_host, 0, NULL, 0, NULL);
  if ((st = pa_vk_slot_submit(ctx, slot, err)) != POLYATTN_OK) return st;
  return pa_vk_wait_all(ctx, err);
}

polyattn_status pa_vk_buffer_write(void *bctx, const struct polyattn_buffer *buf, size_t offset,
                                   const void *src, size_t bytes, pa_error *err) {
  pa_vk_ctx *ctx = (pa_vk_ctx *)bctx;
  polyattn_status st = pa_vk_wait_all(ctx, err); /* the staging buffer may be in use */
  if (st == POLYATTN_OK) st = staging_reserve(ctx, bytes, err);
  if (st != POLYATTN_OK) return st;
  memcpy(ctx->staging.map, src, bytes);
  return copy_blocking(ctx, buf, offset, bytes, 1, err);
}

polyattn_status pa_vk_buffer_read(void *bctx, const struct polyattn_buffer *buf, size_t offset,
                                  void *dst, size_t bytes, pa_error *err) {
  pa_vk_ctx *ctx = (pa_vk_ctx *)bctx;
  polyattn_status st = pa_vk_wait_all(ctx, err);
  if (st == POLYATTN_OK) st = staging_reserve(ctx, bytes, err);
  if (st == POLYATTN_OK) st = copy_blocking(ctx, buf, offset, bytes, 0, err);
  if (st != POLYATTN_OK) return st;
  memcpy(dst, ctx->staging.map, bytes);
  return POLYATTN_OK;
}
