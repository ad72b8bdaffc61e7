/* The HIP backend's device side: probe, contexts (one device, one stream each) and
 * device buffers. Every HIP call's error becomes a status with the runtime's
 * message; nothing here aborts, and a missing GPU only makes the probe say so. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hip/hip_arch.h"
#include "hip_internal.h"

static int built_for(const char *arch) { return pa_hip_arch_listed(arch, PA_HIP_ARCHS); }

static void describe(const hipDeviceProp_t *prop, char *out, size_t len) {
  char arch[64];
  pa_hip_base_arch(prop->gcnArchName, arch, sizeof arch);
  snprintf(out, len, "%.200s (%s, %d CUs, wave%d)", prop->name, arch, prop->multiProcessorCount,
           prop->warpSize);
}

int pa_hip_probe(char *device_name, size_t name_len, char *reason, size_t reason_len) {
  if (device_name && name_len) device_name[0] = '\0';
  if (reason && reason_len) reason[0] = '\0';
  int n = 0;
  hipError_t e = hipGetDeviceCount(&n);
  if (e != hipSuccess) {
    /* no amdgpu kernel driver (/dev/kfd), no device, ... */
    if (reason && reason_len)
      snprintf(reason, reason_len, "HIP runtime: %s (%s)", hipGetErrorString(e),
               hipGetErrorName(e));
    (void)hipGetLastError();
    return 0;
  }
  int usable = 0;
  char first_other[300] = "";
  for (int d = 0; d < n; ++d) {
    hipDeviceProp_t prop;
    if (hipGetDeviceProperties(&prop, d) != hipSuccess) continue;
    char arch[64];
    pa_hip_base_arch(prop.gcnArchName, arch, sizeof arch);
    if (!built_for(arch)) {
      if (!first_other[0]) describe(&prop, first_other, sizeof first_other);
      continue;
    }
    if (usable++ == 0 && device_name && name_len) describe(&prop, device_name, name_len);
  }
  if (usable == 0 && reason && reason_len) {
    if (n == 0)
      snprintf(reason, reason_len, "HIP runtime: no AMD GPU");
    else
      snprintf(reason, reason_len,
               "%d HIP device(s), none of a target this module is built for (%s, "
               "POLYATTN_HIP_ARCHS); first: %.200s",
               n, PA_HIP_ARCHS, first_other);
  }
  (void)hipGetLastError();
  return usable;
}

polyattn_status pa_hip_context_create(int32_t device, void *native_stream, int32_t num_threads,
                                      void **bctx, pa_error *err) {
  (void)num_threads;
  *bctx = NULL;
  int n = 0;
  hipError_t e = hipGetDeviceCount(&n);
  if (e != hipSuccess) return pa_hip_status(err, e, "hipGetDeviceCount");
  if (device < 0 || device >= n)
    return pa_fail(err, POLYATTN_ERR_INVALID_VALUE, "device %d: there are %d HIP devices",
                   (int)device, n);
  hipDeviceProp_t prop;
  if ((e = hipGetDeviceProperties(&prop, device)) != hipSuccess)
    return pa_hip_status(err, e, "hipGetDeviceProperties");
  char arch[64];
  pa_hip_base_arch(prop.gcnArchName, arch, sizeof arch);
  int major = 0, minor = 0;
  if (!built_for(arch) || !pa_hip_parse_arch(arch, &major, &minor))
    return pa_fail(err, POLYATTN_ERR_UNSUPPORTED,
                   "device %d (%s) is %s; this module is built for %s (POLYATTN_HIP_ARCHS)",
                   (int)device, prop.name, arch, PA_HIP_ARCHS);
  if ((e = hipSetDevice(device)) != hipSuccess) return pa_hip_status(err, e, "hipSetDevice");

  pa_hip_ctx *ctx = (pa_hip_ctx *)calloc(1, sizeof *ctx);
  if (!ctx) return pa_fail(err, POLYATTN_ERR_OUT_OF_MEMORY, "HIP context: out of memory");
  ctx->device = device;
  ctx->dev.cc_major = major;
  ctx->dev.cc_minor = minor;
  ctx->dev.sm_count = prop.multiProcessorCount;
  ctx->dev.smem_optin = prop.sharedMemPerBlock; /* LDS per workgroup: no opt-in on AMD */
  describe(&prop, ctx->name, sizeof ctx->name);
  if (native_stream) {
    /* the caller's stream, which must belong to `device`; never destroyed here */
    ctx->stream = (hipStream_t)native_stream;
  } else {
    e = hipStreamCreateWithFlags(&ctx->stream, hipStreamNonBlocking);
    if (e != hipSuccess) {
      free(ctx);
      return pa_hip_status(err, e, "hipStreamCreateWithFlags");
    }
    ctx->own_stream = 1;
  }
  *bctx = ctx;
  return POLYATTN_OK;
}

void pa_hip_context_destroy(void *bctx) {
  pa_hip_ctx *ctx = (pa_hip_ctx *)bctx;
  if (!ctx) return;
  if (ctx->own_stream) {
    (void)hipSetDevice(ctx->device);
    (void)hipStreamSynchronize(ctx->stream);
    (void)hipStreamDestroy(ctx->stream);
  }
  free(ctx);
}

const char *pa_hip_device_name(void *bctx) { return ((pa_hip_ctx *)bctx)->name; }

/* Device pointers only, as for CUDA. */
int pa_hip_can_wrap(void *bctx, polyattn_memory_kind kind) {
  (void)bctx;
  return kind == POLYATTN_MEMORY_HIP_DEVICE;
}

polyattn_status pa_hip_buffer_alloc(void *bctx, size_t bytes, void **handle, void **address,
                                    pa_error *err) {
  pa_hip_ctx *ctx = (pa_hip_ctx *)bctx;
  hipError_t e = hipSetDevice(ctx->device);
  if (e != hipSuccess) return pa_hip_status(err, e, "hipSetDevice");
  void *p = NULL;
  if ((e = hipMalloc(&p, bytes)) != hipSuccess) {
    (void)hipGetLastError(); /* an allocation failure is not sticky */
    char what[96];
    snprintf(what, sizeof what, "hipMalloc(%zu bytes)", bytes);
    return pa_hip_status(err, e, what);
  }
  *handle = p;
  *address = p;
  return POLYATTN_OK;
}

void pa_hip_buffer_free(void *bctx, void *handle) {
  pa_hip_ctx *ctx = (pa_hip_ctx *)bctx;
  (void)hipSetDevice(ctx->device);
  (void)hipFree(handle);
}

/* A copy on the context's stream, then a wait: it follows the work queued before
 * it, and the host memory may be reused when it returns. */
static polyattn_status copy_sync(pa_hip_ctx *ctx, void *dst, const void *src, size_t bytes,
                                 hipMemcpyKind kind, const char *what, pa_error *err) {
  hipError_t e = hipSetDevice(ctx->device);
  if (e == hipSuccess) e = hipMemcpyAsync(dst, src, bytes, kind, ctx->stream);
  if (e == hipSuccess) e = hipStreamSynchronize(ctx->stream);
  return e == hipSuccess ? POLYATTN_OK : pa_hip_status(err, e, what);
}

polyattn_status pa_hip_buffer_write(void *bctx, const struct polyattn_buffer *buf, size_t offset,
                                    const void *src, size_t bytes, pa_error *err) {
  return copy_sync((pa_hip_ctx *)bctx, (unsigned char *)buf->address + offset, src, bytes,
                   hipMemcpyHostToDevice, "buffer write (hipMemcpyAsync)", err);
}

polyattn_status pa_hip_buffer_read(void *bctx, const struct polyattn_buffer *buf, size_t offset,
                                   void *dst, size_t bytes, pa_error *err) {
  return copy_sync((pa_hip_ctx *)bctx, dst, (const unsigned char *)buf->address + offset, bytes,
                   hipMemcpyDeviceToHost, "buffer read (hipMemcpyAsync)", err);
}

polyattn_status pa_hip_synchronize(void *bctx, pa_error *err) {
  pa_hip_ctx *ctx = (pa_hip_ctx *)bctx;
  hipError_t e = hipStreamSynchronize(ctx->stream);
  return e == hipSuccess ? POLYATTN_OK : pa_hip_status(err, e, "hipStreamSynchronize");
}
