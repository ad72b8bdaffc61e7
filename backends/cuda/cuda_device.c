/* The CUDA backend's device side: probe, contexts (one device, one stream each) and
 * device buffers. Every CUDA call's error becomes a status with the runtime's
 * message; nothing here aborts, and a missing driver only makes the probe say so. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_internal.h"

static int arch_of(const struct cudaDeviceProp *prop) { return prop->major * 10 + prop->minor; }

static void describe(const struct cudaDeviceProp *prop, char *out, size_t len) {
  snprintf(out, len, "%.200s (sm_%d, %d SMs)", prop->name, arch_of(prop), prop->multiProcessorCount);
}

int pa_cuda_probe(char *device_name, size_t name_len, char *reason, size_t reason_len) {
  if (device_name && name_len) device_name[0] = '\0';
  if (reason && reason_len) reason[0] = '\0';
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    /* no driver, a driver older than the runtime, no device, ... */
    if (reason && reason_len)
      snprintf(reason, reason_len, "CUDA runtime: %s (%s)", cudaGetErrorString(e),
               cudaGetErrorName(e));
    (void)cudaGetLastError();
    return 0;
  }
  int usable = 0;
  char first_old[300] = "";
  for (int d = 0; d < n; ++d) {
    struct cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, d) != cudaSuccess) continue;
    if (arch_of(&prop) < PA_CUDA_MIN_ARCH) {
      if (!first_old[0]) describe(&prop, first_old, sizeof first_old);
      continue;
    }
    if (usable++ == 0 && device_name && name_len) describe(&prop, device_name, name_len);
  }
  if (usable == 0 && reason && reason_len) {
    if (n == 0)
      snprintf(reason, reason_len, "CUDA runtime: no CUDA device");
    else
      snprintf(reason, reason_len,
               "%d CUDA device(s), none of compute capability >= %d.%d, the lowest this module "
               "is built for (POLYATTN_CUDA_ARCHS); first: %.200s",
               n, PA_CUDA_MIN_ARCH / 10, PA_CUDA_MIN_ARCH % 10, first_old);
  }
  (void)cudaGetLastError();
  return usable;
}

polyattn_status pa_cuda_context_create(int32_t device, void *native_stream, int32_t num_threads,
                                       void **bctx, pa_error *err) {
  (void)num_threads;
  *bctx = NULL;
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) return pa_cuda_status(err, e, "cudaGetDeviceCount");
  if (device < 0 || device >= n)
    return pa_fail(err, POLYATTN_ERR_INVALID_VALUE, "device %d: there are %d CUDA devices",
                        (int)device, n);
  struct cudaDeviceProp prop;
  if ((e = cudaGetDeviceProperties(&prop, device)) != cudaSuccess)
    return pa_cuda_status(err, e, "cudaGetDeviceProperties");
  if (arch_of(&prop) < PA_CUDA_MIN_ARCH)
    return pa_fail(err, POLYATTN_ERR_UNSUPPORTED,
                        "device %d (%s) has compute capability %d.%d; this module is built for "
                        "%d.%d and newer (POLYATTN_CUDA_ARCHS)",
                        (int)device, prop.name, prop.major, prop.minor, PA_CUDA_MIN_ARCH / 10,
                        PA_CUDA_MIN_ARCH % 10);
  if ((e = cudaSetDevice(device)) != cudaSuccess) return pa_cuda_status(err, e, "cudaSetDevice");

  pa_cuda_ctx *ctx = (pa_cuda_ctx *)calloc(1, sizeof *ctx);
  if (!ctx) return pa_fail(err, POLYATTN_ERR_OUT_OF_MEMORY, "CUDA context: out of memory");
  ctx->device = device;
  ctx->dev.cc_major = prop.major;
  ctx->dev.cc_minor = prop.minor;
  ctx->dev.sm_count = prop.multiProcessorCount;
  ctx->dev.smem_optin = prop.sharedMemPerBlockOptin;
  describe(&prop, ctx->name, sizeof ctx->name);
  if (native_stream) {
    /* the caller's stream, which must belong to `device`; never destroyed here */
    ctx->stream = (cudaStream_t)native_stream;
  } else {
    e = cudaStreamCreateWithFlags(&ctx->stream, cudaStreamNonBlocking);
    if (e != cudaSuccess) {
      free(ctx);
      return pa_cuda_status(err, e, "cudaStreamCreateWithFlags");
    }
    ctx->own_stream = 1;
  }
  *bctx = ctx;
  return POLYATTN_OK;
}

void pa_cuda_context_destroy(void *bctx) {
  pa_cuda_ctx *ctx = (pa_cuda_ctx *)bctx;
  if (!ctx) return;
  if (ctx->own_stream) {
    (void)cudaSetDevice(ctx->device);
    (void)cudaStreamSynchronize(ctx->stream);
    (void)cudaStreamDestroy(ctx->stream);
  }
  free(ctx);
}

const char *pa_cuda_device_name(void *bctx) { return ((pa_cuda_ctx *)bctx)->name; }

/* Device pointers only: host memory would need registration or managed memory. */
int pa_cuda_can_wrap(void *bctx, polyattn_memory_kind kind) {
  (void)bctx;
  return kind == POLYATTN_MEMORY_CUDA_DEVICE;
}

polyattn_status pa_cuda_buffer_alloc(void *bctx, size_t bytes, void **handle, void **address,
                                     pa_error *err) {
  pa_cuda_ctx *ctx = (pa_cuda_ctx *)bctx;
  cudaError_t e = cudaSetDevice(ctx->device);
  if (e != cudaSuccess) return pa_cuda_status(err, e, "cudaSetDevice");
  void *p = NULL;
  if ((e = cudaMalloc(&p, bytes)) != cudaSuccess) {
    (void)cudaGetLastError(); /* an allocation failure is not sticky */
    char what[96];
    snprintf(what, sizeof what, "cudaMalloc(%zu bytes)", bytes);
    return pa_cuda_status(err, e, what);
  }
  *handle = p;
  *address = p;
  return POLYATTN_OK;
}

void pa_cuda_buffer_free(void *bctx, void *handle) {
  pa_cuda_ctx *ctx = (pa_cuda_ctx *)bctx;
  (void)cudaSetDevice(ctx->device);
  (void)cudaFree(handle);
}

/* A copy on the context's stream, then a wait: it follows the work queued before
 * it, and the host memory may be reused when it returns. */
static polyattn_status copy_sync(pa_cuda_ctx *ctx, void *dst, const void *src, size_t bytes,
                                 enum cudaMemcpyKind kind, const char *what, pa_error *err) {
  cudaError_t e = cudaSetDevice(ctx->device);
  if (e == cudaSuccess) e = cudaMemcpyAsync(dst, src, bytes, kind, ctx->stream);
  if (e == cudaSuccess) e = cudaStreamSynchronize(ctx->stream);
  return e == cudaSuccess ? POLYATTN_OK : pa_cuda_status(err, e, what);
}

polyattn_status pa_cuda_buffer_write(void *bctx, const struct polyattn_buffer *buf, size_t offset,
                                     const void *src, size_t bytes, pa_error *err) {
  return copy_sync((pa_cuda_ctx *)bctx, (unsigned char *)buf->address + offset, src, bytes,
                   cudaMemcpyHostToDevice, "buffer write (cudaMemcpyAsync)", err);
}

polyattn_status pa_cuda_buffer_read(void *bctx, const struct polyattn_buffer *buf, size_t offset,
                                    void *dst, size_t bytes, pa_error *err) {
  return copy_sync((pa_cuda_ctx *)bctx, dst, (const unsigned char *)buf->address + offset, bytes,
                   cudaMemcpyDeviceToHost, "buffer read (cudaMemcpyAsync)", err);
}

polyattn_status pa_cuda_synchronize(void *bctx, pa_error *err) {
  pa_cuda_ctx *ctx = (pa_cuda_ctx *)bctx;
  cudaError_t e = cudaStreamSynchronize(ctx->stream);
  return e == cudaSuccess ? POLYATTN_OK : pa_cuda_status(err, e, "cudaStreamSynchronize");
}
