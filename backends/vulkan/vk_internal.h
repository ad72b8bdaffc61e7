/* What the host-side files of the Vulkan module share.
 *
 *   vk_backend.c   the module's entry points, ops table and error helpers
 *   vk_device.c    instance, device choice (POLYATTN_VULKAN_DEVICE), limits
 *                  (POLYATTN_VULKAN_LIMITS=mobile), queue, context lifetime
 *   vk_memory.c    buffers: allocation, staging copies, wrapped VkBuffers
 *   vk_queue.c     command-buffer slots: record, submit, wait
 *   vk_pipeline.c  shader modules, the descriptor layout, the pipeline cache
 *   vk_dispatch.c  plan (the one place that picks a kernel), forward, backward */
#ifndef PA_VK_INTERNAL_H
#define PA_VK_INTERNAL_H

#include <vulkan/vulkan.h>

#include "backend.h"
#include "planner.h"

/* 1 where CMake built shaders/fwd_coopmat2.comp (a glslc that compiles
 * GL_NV_cooperative_matrix2, Vulkan headers that declare it). */
#ifndef PA_VK_HAVE_COOPMAT2
#define PA_VK_HAVE_COOPMAT2 0
#endif

/* Submissions in flight per context before the oldest is waited for. */
#define PA_VK_SLOTS 4
/* Descriptor bindings of the kernels (shaders/io.glsl): 0 the parameter block,
 * 1..11 storage buffers. */
#define PA_VK_BINDINGS 12
#define PA_VK_MAX_PIPELINES 64

typedef enum pa_vk_kernel {
  PA_VK_KERNEL_NONE = 0,
  PA_VK_KERNEL_SCALAR, /* shaders/fwd_scalar.comp: fp32 arithmetic, any Vulkan 1.1 device */
  PA_VK_KERNEL_MERGE,  /* shaders/merge.comp: split-KV merge */
  PA_VK_KERNEL_COOPMAT, /* shaders/fwd_coopmat.comp: fp16 cooperative matrices */
  PA_VK_KERNEL_DECODE,  /* shaders/fwd_decode.comp: few query rows, 16-bit K/V, subgroup shuffles */
  PA_VK_KERNEL_COOPMAT2, /* shaders/fwd_coopmat2.comp: NV cooperative matrix 2, workgroup scope */
  PA_VK_KERNEL_COOPMAT2_SG /* shaders/fwd_coopmat2_sg.comp: the same, subgroup-scope 16x16 tiles */
} pa_vk_kernel;

/* One VkBuffer with its own memory; `map` when host-visible. */
typedef struct pa_vk_mem {
  VkBuffer buf;
  VkDeviceMemory mem;
  VkDeviceSize size;
  void *map;
} pa_vk_mem;

/* What the planner and the kernels need to know about the device, after
 * POLYATTN_VULKAN_LIMITS. */
typedef struct pa_vk_limits {
  uint32_t shared_bytes;     /* maxComputeSharedMemorySize (16 KiB in mobile mode) */
  uint32_t max_invocations;  /* per workgroup (128 in mobile mode) */
  uint32_t subgroup_size;    /* reported; the scalar path does not depend on it */
  uint32_t subgroup_min;     /* the smallest subgroup a dispatch may get (size control), else the reported */
  int subgroup_shuffle;      /* subgroupShuffleXor in compute shaders (the decode kernel) */
  uint32_t max_group_count[3];
  VkDeviceSize max_storage_range;
  uint32_t max_storage_buffers;
  int32_t compute_units;     /* NVIDIA's SM count, AMD's CU count, else an estimate (vk_device.c) */
  int mobile;                /* POLYATTN_VULKAN_LIMITS=mobile */
  int fp16_arith;            /* shaderFloat16, unless mobile */
  /* The cooperative-matrix kernel of that dialect is built into the module and the
   * device runs it: extension, features and a 16x16x16 fp16 x fp16 + fp32 subgroup
   * shape (vk_device.c); never in mobile mode or on a borrowed device. */
  int coopmat_nv, coopmat_khr;
  /* The cooperative-matrix-2 kernel (VK_NV_cooperative_matrix2 on top of the KHR
   * dialect) is built and enabled on the device (vk_device.c); never in mobile mode. */
  int coopmat2;
  /* Loop iterations one invocation may run before the driver cuts its loops short
   * (0: no such limit). Mesa's llvmpipe (lavapipe) stops every loop of a shader
   * after 65535 iterations in all (gallivm's LP_MAX_TGSI_LOOP_ITERATIONS), silently;
   * vk_dispatch.c splits the keys so no workgroup gets near it. */
  int32_t loop_budget;
} pa_vk_limits;

typedef struct pa_vk_slot {
  VkCommandBuffer cmd;
  VkFence fence;
  VkDescriptorPool pool;
  pa_vk_mem params; /* host-visible uniform block of this submission */
  int pending;
  int timed; /* a forward with timestamps (POLYATTN_VULKAN_TIMESTAMPS=1) */
} pa_vk_slot;

typedef struct pa_vk_pipeline {
  pa_vk_kernel kernel;
  int32_t spec[7];
  VkPipeline pipe;
} pa_vk_pipeline;

typedef struct pa_vk_ctx {
  VkInstance instance;
  VkPhysicalDevice phys;
  VkDevice device;
  VkQueue queue;
  uint32_t queue_family;
  int borrowed; /* instance, device and queue belong to the caller */
  VkDebugUtilsMessengerEXT messenger;
  PFN_vkDestroyDebugUtilsMessengerEXT destroy_messenger;
  char name[256];
  pa_vk_limits lim;
  VkPhysicalDeviceMemoryProperties memprops;

  VkCommandPool cmd_pool;
  pa_vk_slot slots[PA_VK_SLOTS];
  uint32_t next_slot;
  /* POLYATTN_VULKAN_TIMESTAMPS=1 on a queue with timestamps: two queries per slot
   * around each forward's dispatches; when the slot is waited for, the GPU time is
   * printed to stderr ("polyattn vulkan: forward gpu N us"), for benchmarks. */
  VkQueryPool timestamps;
  double timestamp_ns; /* nanoseconds per tick (timestampPeriod) */

  VkDescriptorSetLayout set_layout;
  VkPipelineLayout pipe_layout;
  VkShaderModule mod_scalar, mod_merge, mod_decode;
  VkShaderModule mod_coopmat; /* the KHR or NV kernel the device runs, else 0 */
  const char *coopmat_dialect; /* "KHR", "NV" or NULL */
  VkShaderModule mod_coopmat2;    /* where lim.coopmat2, else 0 */
  VkShaderModule mod_coopmat2_sg; /* where lim.coopmat2 and the KHR dialect, else 0 */
  /* Why the device cannot run the coopmat2 kernel ("" where it can), and what it
   * reported: shared memory the driver keeps per workgroup for workgroup-scope
   * matrices, and their largest workgroup. */
  char coopmat2_why[192];
  uint32_t coopmat2_reserved_shared, coopmat2_max_invocations;
  uint32_t coopmat2_threads; /* the kernel's workgroup size on this device */
  VkPipelineCache cache;
  /* POLYATTN_VULKAN_PIPELINE_STATS=1 on a device with VK_KHR_pipeline_executable_
   * properties: each new pipeline's compiler statistics (registers, spills, ...)
   * are printed to stderr, for tuning. */
  int pipeline_stats;
  pa_vk_pipeline pipes[PA_VK_MAX_PIPELINES];
  int npipes;

  pa_vk_mem staging; /* host-visible, grown on demand, for buffer_read/write */
  pa_vk_mem dummy;   /* bound where a tensor is absent */

  /* POLYATTN_VULKAN_VALIDATION=1: messages of severity error from the layers. */
  int validation_errors;
  char validation_msg[512];
} pa_vk_ctx;

/* Errors are reported with pa_fail() (problem.h; common/error.c is compiled into the
 * module). */
/* A VkResult as a status (OUT_OF_MEMORY for the memory errors, else DEVICE). */
polyattn_status pa_vk_status(pa_error *err, VkResult r, const char *what);
const char *pa_vk_result_name(VkResult r);

/* vk_device.c */
/* The physical device offers extension `name`. */
int pa_vk_has_extension(VkPhysicalDevice pd, const char *name);
int pa_vk_probe(char *device_name, size_t name_len, char *reason, size_t reason_len);
int pa_vk_probe_has_gpu(void);
polyattn_status pa_vk_context_create(int32_t device, void *native_stream, int32_t num_threads,
                                     void **bctx, pa_error *err);
void pa_vk_context_destroy(void *bctx);
const char *pa_vk_device_name(void *bctx);
/* The validation layers' first error since the last call, as a failure (0 if none). */
polyattn_status pa_vk_check_validation(pa_vk_ctx *ctx, pa_error *err);

/* vk_coopmat2.c: whether the device runs shaders/fwd_coopmat2.comp, and the features
 * to enable for it, chained in front of `next` (the KHR cooperative-matrix chain). */
#if PA_VK_HAVE_COOPMAT2
typedef struct pa_vk_coopmat2_enable {
  VkPhysicalDeviceCooperativeMatrix2FeaturesNV cm2; /* the chain's head */
  VkPhysicalDevice16BitStorageFeatures s16;
} pa_vk_coopmat2_enable;
/* 1 and *e filled where usable; else 0 with ctx->coopmat2_why set. */
int pa_vk_coopmat2_probe(pa_vk_ctx *ctx, pa_vk_coopmat2_enable *e, void *next);
#endif

/* vk_memory.c */
polyattn_status pa_vk_mem_create(pa_vk_ctx *ctx, VkDeviceSize size, int host_visible,
                                 pa_vk_mem *m, pa_error *err);
void pa_vk_mem_destroy(pa_vk_ctx *ctx, pa_vk_mem *m);
VkBuffer pa_vk_buffer_of(const struct polyattn_buffer *b);
int pa_vk_can_wrap(void *bctx, polyattn_memory_kind kind);
polyattn_status pa_vk_buffer_alloc(void *bctx, size_t bytes, void **handle, void **address,
                                   pa_error *err);
void pa_vk_buffer_free(void *bctx, void *handle);
polyattn_status pa_vk_buffer_write(void *bctx, const struct polyattn_buffer *buf, size_t offset,
                                   const void *src, size_t bytes, pa_error *err);
polyattn_status pa_vk_buffer_read(void *bctx, const struct polyattn_buffer *buf, size_t offset,
                                  void *dst, size_t bytes, pa_error *err);

/* vk_queue.c: a slot is acquired (its previous submission waited for, its
 * descriptor pool reset, its command buffer begun behind a full barrier against
 * earlier submissions), recorded into, then submitted without waiting. */
polyattn_status pa_vk_queue_init(pa_vk_ctx *ctx, pa_error *err);
void pa_vk_queue_destroy(pa_vk_ctx *ctx);
polyattn_status pa_vk_slot_acquire(pa_vk_ctx *ctx, pa_vk_slot **slot, pa_error *err);
polyattn_status pa_vk_slot_submit(pa_vk_ctx *ctx, pa_vk_slot *slot, pa_error *err);
polyattn_status pa_vk_wait_all(pa_vk_ctx *ctx, pa_error *err);
/* Timestamps around the forward recorded into `slot` (no-op unless enabled). */
void pa_vk_slot_time_begin(pa_vk_ctx *ctx, pa_vk_slot *slot);
void pa_vk_slot_time_end(pa_vk_ctx *ctx, pa_vk_slot *slot);
polyattn_status pa_vk_synchronize(void *bctx, pa_error *err);

/* vk_pipeline.c */
polyattn_status pa_vk_pipelines_init(pa_vk_ctx *ctx, pa_error *err);
void pa_vk_pipelines_destroy(pa_vk_ctx *ctx);
/* The pipeline of `kernel` with specialization constants spec[0..6] (D, DV, BQ,
 * BK, TPR, dtype, workgroup size), created on first use and cached. */
polyattn_status pa_vk_pipeline_get(pa_vk_ctx *ctx, pa_vk_kernel kernel, const int32_t spec[7],
                                   VkPipeline *out, pa_error *err);

/* vk_dispatch.c */
polyattn_status pa_vk_plan(void *bctx, const pa_problem *p, size_t *workspace_bytes,
                           pa_error *err);
polyattn_status pa_vk_forward(void *bctx, const pa_problem *p,
                              const struct polyattn_buffer *workspace, pa_error *err);
polyattn_status pa_vk_backward(void *bctx, const pa_problem *p,
                               const struct polyattn_buffer *workspace, pa_error *err);

#endif
