/* The CPU backend's ops table: device probe, context (one thread pool each),
 * host buffers. plan/forward/backward live in cpu_run.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpu_internal.h"
#include "cpu_tune.h"

/* Threads: the caller's number, else POLYATTN_THREADS, else one per online core. */
static int32_t cpu_default_threads(int32_t requested) {
  if (requested > 0) return requested;
  const char *env = getenv("POLYATTN_THREADS");
  if (env && *env) {
    char *end = NULL;
    errno = 0;
    long n = strtol(env, &end, 10);
    if (errno == 0 && end && *end == '\0' && n > 0 && n <= 4096) return (int32_t)n;
  }
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (int32_t)n : 1;
}

/* The processor's marketing name from /proc/cpuinfo, or "unknown CPU". */
static void cpu_model_name(char *out, size_t len) {
  snprintf(out, len, "unknown CPU");
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f) return;
  char line[512];
  while (fgets(line, sizeof line, f)) {
    /* x86: "model name"; some Arm kernels: "Model" or "Hardware" */
    if (strncmp(line, "model name", 10) && strncmp(line, "Model", 5) &&
        strncmp(line, "Hardware", 8))
      continue;
    char *colon = strchr(line, ':');
    if (!colon) continue;
    char *v = colon + 1;
    while (*v == ' ' || *v == '\t') ++v;
    size_t n = strcspn(v, "\n");
    if (n == 0) continue;
    snprintf(out, len, "%.*s", (int)n, v);
    break;
  }
  fclose(f);
}

static void cpu_device_name_for(int32_t threads, char *out, size_t len) {
  char model[200];
  cpu_model_name(model, sizeof model);
  snprintf(out, len, "CPU: %s, %d thread%s", model, threads, threads == 1 ? "" : "s");
}

static int cpu_probe(char *device_name, size_t name_len, char *reason, size_t reason_len) {
  if (device_name && name_len) cpu_device_name_for(cpu_default_threads(0), device_name, name_len);
  if (reason && reason_len) reason[0] = '\0';
  return 1;
}

static int64_t cpu_l2_bytes(void) {
#ifdef _SC_LEVEL2_CACHE_SIZE
  long n = sysconf(_SC_LEVEL2_CACHE_SIZE);
  if (n > 0) return n;
#endif
  return PA_CPU_DEFAULT_L2_BYTES;
}

static polyattn_status cpu_context_create(int32_t device, void *native_stream,
                                          int32_t num_threads, void **bctx, pa_error *err) {
  (void)native_stream;
  *bctx = NULL;
  if (device != 0)
    return pa_fail(err, POLYATTN_ERR_INVALID_VALUE,
                   "device %d: the CPU backend has one device (0)", device);
  pa_cpu_ctx *ctx = (pa_cpu_ctx *)calloc(1, sizeof *ctx);
  if (!ctx) return pa_fail(err, POLYATTN_ERR_OUT_OF_MEMORY, "CPU context: out of memory");
  ctx->threads = cpu_default_threads(num_threads);
  ctx->pool = pa_threadpool_create(ctx->threads);
  if (!ctx->pool) {
    free(ctx);
    return pa_fail(err, POLYATTN_ERR_OUT_OF_MEMORY,
                   "num_threads: could not start %d worker threads", (int)num_threads);
  }
  ctx->isa = pa_cpu_isa_select();
  ctx->l2_bytes = cpu_l2_bytes();
  cpu_device_name_for(ctx->threads, ctx->name, sizeof ctx->name);
  *bctx = ctx;
  return POLYATTN_OK;
}

static void cpu_context_destroy(void *bctx) {
  pa_cpu_ctx *ctx = (pa_cpu_ctx *)bctx;
  if (!ctx) return;
  pa_threadpool_destroy(ctx->pool);
  free(ctx);
}

static const char *cpu_device_name(void *bctx) { return ((pa_cpu_ctx *)bctx)->name; }

static int cpu_can_wrap(void *bctx, polyattn_memory_kind kind) {
  (void)bctx;
  return kind == POLYATTN_MEMORY_HOST;
}

static polyattn_status cpu_buffer_alloc(void *bctx, size_t bytes, void **handle, void **address,
                                        pa_error *err) {
  (void)bctx;
  /* 64-byte aligned (a cache line, a zmm vector); aligned_alloc wants a multiple. */
  size_t rounded = (bytes + PA_CPU_ALIGN - 1) / PA_CPU_ALIGN * PA_CPU_ALIGN;
  if (rounded < bytes) return pa_fail(err, POLYATTN_ERR_OVERFLOW, "bytes: %zu is too large", bytes);
  if (rounded == 0) rounded = PA_CPU_ALIGN;
  void *p = aligned_alloc(PA_CPU_ALIGN, rounded);
  if (!p) return pa_fail(err, POLYATTN_ERR_OUT_OF_MEMORY, "bytes: cannot allocate %zu", bytes);
  *handle = p;
  *address = p;
  return POLYATTN_OK;
}

static void cpu_buffer_free(void *bctx, void *handle) {
  (void)bctx;
  free(handle);
}

static polyattn_status cpu_buffer_write(void *bctx, const struct polyattn_buffer *buf,
                                        size_t offset, const void *src, size_t bytes,
                                        pa_error *err) {
  (void)bctx;
  (void)err;
  if (bytes) memcpy((unsigned char *)buf->address + offset, src, bytes);
  return POLYATTN_OK;
}

static polyattn_status cpu_buffer_read(void *bctx, const struct polyattn_buffer *buf,
                                       size_t offset, void *dst, size_t bytes, pa_error *err) {
  (void)bctx;
  (void)err;
  if (bytes) memcpy(dst, (const unsigned char *)buf->address + offset, bytes);
  return POLYATTN_OK;
}

static const pa_backend_ops cpu_ops = {
    .api_version = PA_BACKEND_API_VERSION,
    .kind = POLYATTN_BACKEND_CPU,
    .name = "cpu",
    .probe = cpu_probe,
    .context_create = cpu_context_create,
    .context_destroy = cpu_context_destroy,
    .device_name = cpu_device_name,
    .memory_kind = POLYATTN_MEMORY_HOST,
    .can_wrap = cpu_can_wrap,
    .buffer_alloc = cpu_buffer_alloc,
    .buffer_free = cpu_buffer_free,
    .buffer_write = cpu_buffer_write,
    .buffer_read = cpu_buffer_read,
    .plan = pa_cpu_plan,
    .forward = pa_cpu_forward,
    .backward = pa_cpu_backward,
    .synchronize = NULL,
};

const pa_backend_ops *pa_cpu_backend(void) { return &cpu_ops; }
