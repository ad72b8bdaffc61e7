/* What only the Vulkan backend has: the module's state without a driver, a context
 * on the caller's own VkDevice and queue with wrapped VkBuffers, the environment
 * overrides (POLYATTN_VULKAN_DEVICE, _LIMITS, _SPLITS), and the backward's refusal.
 *
 * ctest entries (tests/CMakeLists.txt): vulkan-module (suite vulkan_module, any
 * machine), vulkan-no-driver (suite vulkan_no_driver, run with the loader pointed
 * at no driver), vulkan (suite vulkan: exit 77, Skipped, where no Vulkan device is
 * usable). Also: the forced cooperative-matrix kernels (skipped where the device has
 * none, as on lavapipe) and the decode kernel's keys-per-lane forms. The forward sweep itself is test_forward with
 * POLYATTN_TEST_BACKENDS=vulkan (forward-vulkan, forward-vulkan-mobile, ...). */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vulkan/vulkan.h>

#include "harness_internal.h"

static const polyattn_backend_info *vulkan_info(void) {
  const polyattn_backend_info *list = NULL;
  size_t n = 0;
  cr_assert_eq(polyattn_backends(&list, &n), POLYATTN_OK);
  for (size_t i = 0; i < n; ++i)
    if (list[i].kind == POLYATTN_BACKEND_VULKAN) return &list[i];
  cr_assert_fail("polyattn_backends() does not list vulkan");
  return NULL;
}

static void need_vulkan(void) {
  const polyattn_backend_info *info = vulkan_info();
  if (!info->usable)
    cr_skip_test("SKIPPED: no usable Vulkan device: %s", info->reason ? info->reason : "?");
}

static polyattn_status vulkan_context(void *native_stream, polyattn_context **ctx) {
  unsetenv("POLYATTN_BACKEND");
  polyattn_context_desc d;
  polyattn_context_desc_init(&d);
  d.backend = POLYATTN_BACKEND_VULKAN;
  d.native_stream = native_stream;
  *ctx = NULL;
  return polyattn_context_create(&d, ctx);
}

/* ----------------------------------------------- vulkan_module (any machine) */

/* Built and listed; usable with a device name, or unusable with a reason. */
Test(vulkan_module, reports_its_state) {
  const polyattn_backend_info *info = vulkan_info();
  cr_assert(info->built, "the Vulkan module is built but not listed as built: %s", info->reason);
  cr_assert(info->module_path && strstr(info->module_path, "libpolyattn-vulkan.so"),
            "module path '%s'", info->module_path ? info->module_path : "(null)");
  if (info->usable) {
    cr_log_info("usable: %s (score %d)", info->device_name, info->score);
    cr_assert(info->device_name && *info->device_name, "a usable backend names its device");
    cr_assert_gt(info->device_count, 0);
    cr_assert_gt(info->score, 0);
  } else {
    cr_log_info("unusable: %s", info->reason);
    cr_assert(info->reason && *info->reason, "an unusable backend needs a reason");
    cr_assert_eq(info->score, 0);
  }
}

/* ---------------------------- vulkan_no_driver (VK_ICD_FILENAMES leads nowhere) */

/* No driver: listed as built, unusable with the loader's reason, a context cannot
 * be created on it, and AUTO falls back to another backend. */
Test(vulkan_no_driver, unusable_with_a_reason) {
  const char *icd = getenv("VK_ICD_FILENAMES");
  if (!icd || !strstr(icd, "no-such-icd"))
    cr_skip_test("SKIPPED: needs VK_ICD_FILENAMES pointing at no driver (ctest vulkan-no-driver)");
  const polyattn_backend_info *info = vulkan_info();
  cr_assert(info->built);
  cr_assert_eq(info->usable, 0, "usable although the loader has no driver: %s", info->device_name);
  cr_assert_eq(info->score, 0);
  cr_assert(strstr(info->reason, "vkCreateInstance") || strstr(info->reason, "no device"),
            "the reason '%s' should carry the loader's error", info->reason);
  polyattn_context *ctx = NULL;
  cr_assert_eq(vulkan_context(NULL, &ctx), POLYATTN_ERR_BACKEND);
  cr_assert_null(ctx);
  cr_assert(strstr(polyattn_last_error(NULL), "vulkan"), "message: %s", polyattn_last_error(NULL));
  polyattn_context_desc d;
  polyattn_context_desc_init(&d);
  cr_assert_eq(polyattn_context_create(&d, &ctx), POLYATTN_OK);
  cr_assert_neq(polyattn_context_backend(ctx), POLYATTN_BACKEND_VULKAN);
  polyattn_context_destroy(ctx);
}

/* ------------------------------------------------- vulkan (needs a device) */

/* The backward is refused with a message, and nothing is written. */
Test(vulkan, backward_unsupported) {
  need_vulkan();
  polyattn_context *ctx = th_context_or_skip(POLYATTN_BACKEND_VULKAN);
  th_case c = {.name = "bwd", .dtypes = TH_F32, .seq_q = 17, .seq_k = 17, .head_dim = 32};
  c = th_case_resolve(&c, POLYATTN_DTYPE_F32);
  th_run *r = th_run_create(ctx, &c, 1);
  cr_assert_eq(th_run_forward(r), POLYATTN_OK, "%s", th_run_message(r));
  cr_assert_eq(th_run_backward(r), POLYATTN_ERR_UNSUPPORTED, "%s", th_run_message(r));
  cr_assert(strstr(th_run_message(r), "forward only"), "message: %s", th_run_message(r));
  th_run_destroy(r);
  polyattn_context_destroy(ctx);
}

/* POLYATTN_VULKAN_DEVICE names no device: the context is refused, naming it. */
Test(vulkan, device_env_no_match) {
  need_vulkan();
  setenv("POLYATTN_VULKAN_DEVICE", "no-such-device-name", 1);
  polyattn_context *ctx = NULL;
  polyattn_status st = vulkan_context(NULL, &ctx);
  cr_assert_neq(st, POLYATTN_OK);
  cr_assert(strstr(polyattn_last_error(NULL), "POLYATTN_VULKAN_DEVICE"), "message: %s",
            polyattn_last_error(NULL));
  setenv("POLYATTN_VULKAN_DEVICE", "0", 1);
  cr_assert_eq(vulkan_context(NULL, &ctx), POLYATTN_OK, "%s", polyattn_last_error(NULL));
  polyattn_context_destroy(ctx);
}

/* Mobile limits are visible in the device name, and still compute correctly with
 * head dim 256 (16 KiB of shared memory). */
Test(vulkan, mobile_limits_d256) {
  need_vulkan();
  setenv("POLYATTN_VULKAN_LIMITS", "mobile", 1);
  polyattn_context *ctx = th_context_or_skip(POLYATTN_BACKEND_VULKAN);
  cr_assert(strstr(polyattn_context_device_name(ctx), "mobile limits"), "device: %s",
            polyattn_context_device_name(ctx));
  th_case c = {.name = "mobile_d256_causal", .seq_q = 100, .seq_k = 300, .head_dim = 256,
               .causal = 1, .heads_q = 2, .heads_kv = 1};
  c = th_case_resolve(&c, POLYATTN_DTYPE_F16);
  th_run *r = th_run_create(ctx, &c, 0);
  cr_assert_eq(th_run_forward(r), POLYATTN_OK, "%s", th_run_message(r));
  th_assert_forward_ok(r, NULL);
  th_run_destroy(r);
  polyattn_context_destroy(ctx);
}

/* Forced split counts (POLYATTN_VULKAN_SPLITS) give the unsplit result to the
 * tolerance, and every split count is deterministic. */
Test(vulkan, forced_splits) {
  need_vulkan();
  static const int splits[] = {1, 2, 5, 64};
  th_case c = {.name = "splits_gqa_alibi_window", .batch = 2, .heads_q = 4, .heads_kv = 2,
               .seq_q = 3, .seq_k = 700, .head_dim = 72, .causal = 1, .window = 1,
               .window_left = 500, .window_right = -1, .alibi = TH_ALIBI_HEADS};
  c = th_case_resolve(&c, POLYATTN_DTYPE_BF16);
  for (size_t s = 0; s < sizeof splits / sizeof splits[0]; ++s) {
    char v[16];
    snprintf(v, sizeof v, "%d", splits[s]);
    setenv("POLYATTN_VULKAN_SPLITS", v, 1);
    polyattn_context *ctx = th_context_or_skip(POLYATTN_BACKEND_VULKAN);
    th_run *r = th_run_create(ctx, &c, 0);
    cr_assert_eq(th_run_forward(r), POLYATTN_OK, "splits %d: %s", splits[s], th_run_message(r));
    char what[32];
    snprintf(what, sizeof what, "splits %d", splits[s]);
    th_assert_forward_ok(r, what);
    th_run_destroy(r);
    polyattn_context_destroy(ctx);
  }
  unsetenv("POLYATTN_VULKAN_SPLITS");
}

/* A cooperative-matrix kernel, forced: checked against the oracle where the device
 * runs it; skipped, with the module's reason, elsewhere (lavapipe has no cooperative
 * matrices, so CI only compiles them). A bad kernel name is refused. */
/* Run r's forward on a forced kernel `kernel`: checked against the oracle where the
 * device runs it; where it refuses (lavapipe has no cooperative matrices), the
 * reason must name `kernel` and the test is skipped, loudly. Frees r and ctx. */
static void forced_forward_checked(polyattn_context *ctx, th_run *r, const char *kernel,
                                   const char *what) {
  polyattn_status st = th_run_forward(r);
  if (st == POLYATTN_ERR_UNSUPPORTED) {
    char why[512];
    snprintf(why, sizeof why, "%s", th_run_message(r));
    th_run_destroy(r);
    polyattn_context_destroy(ctx);
    cr_assert(strstr(why, kernel), "the reason names the kernel: %s", why);
    cr_skip_test("SKIPPED: the %s kernel cannot run here: %s", kernel, why);
  }
  cr_assert_eq(st, POLYATTN_OK, "%s", th_run_message(r));
  th_assert_forward_ok(r, what);
  th_run_destroy(r);
  polyattn_context_destroy(ctx);
}

static void forced_kernel(const char *kernel) {
  need_vulkan();
  setenv("POLYATTN_VULKAN_KERNEL", "no-such-kernel", 1);
  polyattn_context *ctx = th_context_or_skip(POLYATTN_BACKEND_VULKAN);
  th_case c = {.name = "coopmat_gqa_causal_alibi", .batch = 2, .heads_q = 4, .heads_kv = 2,
               .seq_q = 100, .seq_k = 300, .head_dim = 64, .head_dim_v = 128, .causal = 1,
               .alibi = TH_ALIBI_HEADS, .layout = TH_STRIDED_ODD};
  c = th_case_resolve(&c, POLYATTN_DTYPE_F16);
  th_run *r = th_run_create(ctx, &c, 0);
  cr_assert_eq(th_run_forward(r), POLYATTN_ERR_UNSUPPORTED, "%s", th_run_message(r));
  cr_assert(strstr(th_run_message(r), "not one of"), "message: %s", th_run_message(r));
  setenv("POLYATTN_VULKAN_KERNEL", kernel, 1);
  forced_forward_checked(ctx, r, kernel, kernel);
}

Test(vulkan, coopmat_forced) { forced_kernel("coopmat"); }
Test(vulkan, coopmat2_forced) { forced_kernel("coopmat2"); }

/* The two coopmat2 kernels (POLYATTN_VULKAN_COOPMAT2_SCOPE), forced, on a case with
 * 16-byte aligned rows, which both take: checked against the oracle where the device
 * runs coopmat2, skipped elsewhere. */
static void coopmat2_scope(const char *scope) {
  need_vulkan();
  setenv("POLYATTN_VULKAN_KERNEL", "coopmat2", 1);
  setenv("POLYATTN_VULKAN_COOPMAT2_SCOPE", scope, 1);
  polyattn_context *ctx = th_context_or_skip(POLYATTN_BACKEND_VULKAN);
  th_case c = {.name = "coopmat2_scope_gqa_causal_window", .batch = 2, .heads_q = 4, .heads_kv = 2,
               .seq_q = 200, .seq_k = 333, .head_dim = 128, .causal = 1, .window = 1,
               .window_left = 150, .window_right = -1, .softcap = 20.0f};
  c = th_case_resolve(&c, POLYATTN_DTYPE_F16);
  forced_forward_checked(ctx, th_run_create(ctx, &c, 0), "coopmat2", scope);
  unsetenv("POLYATTN_VULKAN_COOPMAT2_SCOPE");
  unsetenv("POLYATTN_VULKAN_KERNEL");
}

Test(vulkan, coopmat2_subgroup_forced) { coopmat2_scope("subgroup"); }
Test(vulkan, coopmat2_workgroup_forced) { coopmat2_scope("workgroup"); }

/* The decode kernel's reduce-scatter forms the sweep's default keys per lane may not
 * reach (POLYATTN_VULKAN_DECODE_U): fewer (key, row) pairs than dim lanes, with
 * padding rows (3 rows, U = 1), and as many pairs as lanes on 8-lane subgroups (4
 * rows, U = 2); each against the oracle. (Every pipeline costs seconds to compile on
 * lavapipe, so only these two.) */
Test(vulkan, decode_keys_per_lane) {
  need_vulkan();
  setenv("POLYATTN_VULKAN_KERNEL", "decode", 1);
  static const struct {
    int32_t hq, hkv, sq;
    const char *u;
  } forms[] = {{3, 1, 1, "1"}, {4, 2, 2, "2"}};
  for (size_t i = 0; i < sizeof forms / sizeof forms[0]; ++i) {
    setenv("POLYATTN_VULKAN_DECODE_U", forms[i].u, 1);
    polyattn_context *ctx = th_context_or_skip(POLYATTN_BACKEND_VULKAN);
    th_case c = {.name = "decode_u", .heads_q = forms[i].hq, .heads_kv = forms[i].hkv, .seq_q = forms[i].sq,
                 .seq_k = 700, .head_dim = 128, .causal = 1, .alibi = TH_ALIBI_HEADS, .softcap = 8.0f};
    c = th_case_resolve(&c, POLYATTN_DTYPE_F16);
    char what[64];
    snprintf(what, sizeof what, "Hq %d Hkv %d Sq %d U %s", forms[i].hq, forms[i].hkv, forms[i].sq, forms[i].u);
    forced_forward_checked(ctx, th_run_create(ctx, &c, 0), "decode", what);
  }
  unsetenv("POLYATTN_VULKAN_DECODE_U");
  unsetenv("POLYATTN_VULKAN_KERNEL");
}

/* ---- a context on the caller's device and queue, computing on wrapped VkBuffers */

typedef struct own_vk {
  VkInstance inst;
  VkPhysicalDevice phys;
  VkDevice dev;
  VkQueue queue;
  uint32_t family;
  VkPhysicalDeviceMemoryProperties mem;
} own_vk;

#define VK_OK(call)                                                                       \
  do {                                                                                    \
    VkResult r_ = (call);                                                                 \
    cr_assert_eq(r_, VK_SUCCESS, "%s: VkResult %d", #call, (int)r_);                      \
  } while (0)

static void own_vk_create(own_vk *o) {
  VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO, .apiVersion = VK_API_VERSION_1_1};
  VkInstanceCreateInfo ici = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &app};
  VK_OK(vkCreateInstance(&ici, NULL, &o->inst));
  uint32_t n = 1;
  VkResult r = vkEnumeratePhysicalDevices(o->inst, &n, &o->phys);
  cr_assert((r == VK_SUCCESS || r == VK_INCOMPLETE) && n == 1, "no physical device");
  uint32_t nf = 16;
  VkQueueFamilyProperties fam[16];
  vkGetPhysicalDeviceQueueFamilyProperties(o->phys, &nf, fam);
  o->family = UINT32_MAX;
  for (uint32_t i = 0; i < nf && o->family == UINT32_MAX; ++i)
    if (fam[i].queueFlags & VK_QUEUE_COMPUTE_BIT) o->family = i;
  cr_assert_neq(o->family, UINT32_MAX, "no compute queue");
  float prio = 1.0f;
  VkDeviceQueueCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                 .queueFamilyIndex = o->family, .queueCount = 1, .pQueuePriorities = &prio};
  VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                            .queueCreateInfoCount = 1, .pQueueCreateInfos = &qci};
  VK_OK(vkCreateDevice(o->phys, &dci, NULL, &o->dev));
  vkGetDeviceQueue(o->dev, o->family, 0, &o->queue);
  vkGetPhysicalDeviceMemoryProperties(o->phys, &o->mem);
}

typedef struct own_buf {
  VkBuffer buf;
  VkDeviceMemory mem;
  float *map;
} own_buf;

/* A host-visible storage buffer of the caller's, mapped. */
static own_buf own_buf_create(const own_vk *o, size_t bytes) {
  own_buf b;
  VkBufferCreateInfo bci = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, .size = bytes,
                            .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                     VK_BUFFER_USAGE_TRANSFER_DST_BIT};
  VK_OK(vkCreateBuffer(o->dev, &bci, NULL, &b.buf));
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(o->dev, b.buf, &req);
  uint32_t type = UINT32_MAX;
  VkMemoryPropertyFlags need = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  for (uint32_t i = 0; i < o->mem.memoryTypeCount && type == UINT32_MAX; ++i)
    if ((req.memoryTypeBits & (1u << i)) && (o->mem.memoryTypes[i].propertyFlags & need) == need) type = i;
  cr_assert_neq(type, UINT32_MAX, "no host-visible memory type");
  VkMemoryAllocateInfo mai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                              .allocationSize = req.size, .memoryTypeIndex = type};
  VK_OK(vkAllocateMemory(o->dev, &mai, NULL, &b.mem));
  VK_OK(vkBindBufferMemory(o->dev, b.buf, b.mem, 0));
  VK_OK(vkMapMemory(o->dev, b.mem, 0, VK_WHOLE_SIZE, 0, (void **)&b.map));
  return b;
}

static void own_buf_destroy(const own_vk *o, own_buf *b) {
  vkUnmapMemory(o->dev, b->mem);
  vkDestroyBuffer(o->dev, b->buf, NULL);
  vkFreeMemory(o->dev, b->mem, NULL);
}

/* Forward through the public API on (ctx, q, k, v, o) buffers of [1, S, H, D] f32. */
static void forward_f32(polyattn_context *ctx, polyattn_buffer *q, polyattn_buffer *k,
                        polyattn_buffer *v, polyattn_buffer *o, int64_t S, int64_t H, int64_t D) {
  const int64_t shape[4] = {1, S, H, D};
  polyattn_tensor tq, tk, tv, to;
  polyattn_tensor_contiguous(&tq, q, 0, POLYATTN_DTYPE_F32, 4, shape);
  polyattn_tensor_contiguous(&tk, k, 0, POLYATTN_DTYPE_F32, 4, shape);
  polyattn_tensor_contiguous(&tv, v, 0, POLYATTN_DTYPE_F32, 4, shape);
  polyattn_tensor_contiguous(&to, o, 0, POLYATTN_DTYPE_F32, 4, shape);
  polyattn_params pr;
  polyattn_params_init(&pr);
  pr.causal = 1;
  cr_assert_eq(polyattn_forward(ctx, &pr, &tq, &tk, &tv, &to, NULL, NULL), POLYATTN_OK, "%s",
               polyattn_last_error(ctx));
  cr_assert_eq(polyattn_synchronize(ctx), POLYATTN_OK, "%s", polyattn_last_error(ctx));
}

Test(vulkan, borrowed_queue_wrapped_buffers) {
  need_vulkan();
  enum { S = 70, H = 2, D = 40 };
  const size_t n = (size_t)S * H * D, bytes = n * sizeof(float);
  own_vk o;
  own_vk_create(&o);
  own_buf b[4];
  for (int i = 0; i < 4; ++i) b[i] = own_buf_create(&o, bytes);
  float *host[4];
  for (int i = 0; i < 4; ++i) host[i] = th_xcalloc(n, sizeof(float));
  for (size_t e = 0; e < n; ++e)
    for (int i = 0; i < 3; ++i) host[i][e] = b[i].map[e] = (float)sin(0.37 * (double)e * (i + 1) + i);
  for (size_t e = 0; e < n; ++e) b[3].map[e] = NAN;

  polyattn_vulkan_queue vq = {.struct_size = sizeof vq, .physical_device = o.phys, .device = o.dev,
                              .queue = o.queue, .queue_family_index = o.family};
  polyattn_context *ctx = NULL;
  cr_assert_eq(vulkan_context(&vq, &ctx), POLYATTN_OK, "%s", polyattn_last_error(NULL));
  polyattn_buffer *w[4];
  for (int i = 0; i < 4; ++i)
    cr_assert_eq(polyattn_buffer_wrap(ctx, POLYATTN_MEMORY_VK_BUFFER, (void *)b[i].buf, bytes, &w[i]),
                 POLYATTN_OK, "%s", polyattn_last_error(ctx));
  cr_assert_eq(polyattn_buffer_wrap(ctx, POLYATTN_MEMORY_HOST, host[0], bytes, &(polyattn_buffer *){0}),
               POLYATTN_ERR_UNSUPPORTED, "a Vulkan context cannot address host memory");
  forward_f32(ctx, w[0], w[1], w[2], w[3], S, H, D);
  /* polyattn_buffer_read of a wrapped buffer sees what the mapping sees */
  float *back = th_xcalloc(n, sizeof(float));
  cr_assert_eq(polyattn_buffer_read(ctx, w[3], 0, back, bytes), POLYATTN_OK, "%s", polyattn_last_error(ctx));
  cr_assert(memcmp(back, b[3].map, bytes) == 0, "buffer_read differs from the caller's mapping");

  /* the same on the CPU backend */
  polyattn_context *cpu = NULL;
  polyattn_context_desc d;
  polyattn_context_desc_init(&d);
  d.backend = POLYATTN_BACKEND_CPU;
  cr_assert_eq(polyattn_context_create(&d, &cpu), POLYATTN_OK);
  polyattn_buffer *hb[4];
  for (int i = 0; i < 4; ++i)
    cr_assert_eq(polyattn_buffer_wrap(cpu, POLYATTN_MEMORY_HOST, host[i], bytes, &hb[i]), POLYATTN_OK);
  forward_f32(cpu, hb[0], hb[1], hb[2], hb[3], S, H, D);
  double worst = 0;
  for (size_t e = 0; e < n; ++e) {
    double diff = fabs((double)b[3].map[e] - host[3][e]);
    cr_assert(isfinite(b[3].map[e]), "out[%zu] is %f", e, b[3].map[e]);
    if (diff > worst) worst = diff;
  }
  cr_log_info("borrowed queue, wrapped VkBuffers: max |vulkan - cpu| = %.3g", worst);
  cr_assert_lt(worst, 1e-5, "vulkan and cpu differ by %g", worst);

  for (int i = 0; i < 4; ++i) polyattn_buffer_free(w[i]), polyattn_buffer_free(hb[i]);
  polyattn_context_destroy(cpu);
  polyattn_context_destroy(ctx);
  /* the caller's device outlives the context */
  VK_OK(vkDeviceWaitIdle(o.dev));
  for (int i = 0; i < 4; ++i) own_buf_destroy(&o, &b[i]), free(host[i]);
  free(back);
  vkDestroyDevice(o.dev, NULL);
  vkDestroyInstance(o.inst, NULL);
}

TH_DEFINE_MAIN
