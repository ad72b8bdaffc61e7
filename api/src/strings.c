/* Version, names and the plain-struct helpers of the public API. */
#include <string.h>

#include "polyattn.h"

#define PA_STR2(x) #x
#define PA_STR(x) PA_STR2(x)

POLYATTN_API unsigned polyattn_version(void) { return POLYATTN_VERSION_HEX; }

POLYATTN_API const char *polyattn_version_string(void) {
  return PA_STR(POLYATTN_VERSION_MAJOR) "." PA_STR(POLYATTN_VERSION_MINOR) "." PA_STR(
      POLYATTN_VERSION_PATCH);
}

POLYATTN_API const char *polyattn_status_string(polyattn_status status) {
  switch (status) {
  case POLYATTN_OK: return "success";
  case POLYATTN_ERR_NULL_ARGUMENT: return "a required argument is NULL";
  case POLYATTN_ERR_INVALID_VALUE: return "a parameter is out of its range";
  case POLYATTN_ERR_SHAPE: return "invalid or mismatched tensor shape";
  case POLYATTN_ERR_HEAD_DIM: return "head dimension above the supported limit";
  case POLYATTN_ERR_HEADS: return "query heads are not a multiple of key/value heads";
  case POLYATTN_ERR_DTYPE: return "invalid or mismatched dtype";
  case POLYATTN_ERR_STRIDE: return "invalid stride";
  case POLYATTN_ERR_BOUNDS: return "tensor view exceeds its buffer";
  case POLYATTN_ERR_SEQLENS: return "invalid sequence lengths";
  case POLYATTN_ERR_OVERFLOW: return "size or offset overflows its integer type";
  case POLYATTN_ERR_UNSUPPORTED: return "not supported by this backend";
  case POLYATTN_ERR_OUT_OF_MEMORY: return "out of memory";
  case POLYATTN_ERR_WORKSPACE: return "workspace too small";
  case POLYATTN_ERR_BACKEND: return "backend unavailable";
  case POLYATTN_ERR_DEVICE: return "device or runtime error";
  case POLYATTN_ERR_CONTEXT: return "object belongs to another context";
  case POLYATTN_ERR_ABI: return "struct_size not recognised (header/library mismatch)";
  case POLYATTN_ERR_INTERNAL: return "internal error";
  }
  return "unknown status";
}

POLYATTN_API size_t polyattn_dtype_size(polyattn_dtype dtype) {
  switch (dtype) {
  case POLYATTN_DTYPE_F32: return 4;
  case POLYATTN_DTYPE_F16: return 2;
  case POLYATTN_DTYPE_BF16: return 2;
  case POLYATTN_DTYPE_FP8_E4M3: return 1;
  case POLYATTN_DTYPE_I32: return 4;
  case POLYATTN_DTYPE_U8: return 1;
  }
  return 0;
}

POLYATTN_API const char *polyattn_dtype_name(polyattn_dtype dtype) {
  switch (dtype) {
  case POLYATTN_DTYPE_F32: return "f32";
  case POLYATTN_DTYPE_F16: return "f16";
  case POLYATTN_DTYPE_BF16: return "bf16";
  case POLYATTN_DTYPE_FP8_E4M3: return "fp8_e4m3";
  case POLYATTN_DTYPE_I32: return "i32";
  case POLYATTN_DTYPE_U8: return "u8";
  }
  return "unknown";
}

POLYATTN_API const char *polyattn_backend_name(polyattn_backend_kind kind) {
  switch (kind) {
  case POLYATTN_BACKEND_AUTO: return "auto";
  case POLYATTN_BACKEND_CPU: return "cpu";
  case POLYATTN_BACKEND_CUDA: return "cuda";
  case POLYATTN_BACKEND_HIP: return "hip";
  case POLYATTN_BACKEND_VULKAN: return "vulkan";
  }
  return NULL;
}

POLYATTN_API void polyattn_tensor_contiguous(polyattn_tensor *t, polyattn_buffer *buffer,
                                             size_t offset, polyattn_dtype dtype, int32_t ndim,
                                             const int64_t *shape) {
  memset(t, 0, sizeof *t);
  t->buffer = buffer;
  t->offset = offset;
  t->dtype = dtype;
  t->ndim = ndim;
  if (ndim < 0 || ndim > POLYATTN_MAX_DIMS) return; /* left for validation to report */
  int64_t stride = 1;
  for (int32_t i = ndim - 1; i >= 0; --i) {
    t->shape[i] = shape[i];
    t->strides[i] = stride;
    stride *= shape[i] > 0 ? shape[i] : 1;
  }
}

/* The FP8 descale pointers took their space from `reserved` (decision 77): the struct
 * keeps its size, so struct_size still tells callers of both layouts apart from none. */
_Static_assert(sizeof(void *) != 8 || sizeof(polyattn_params) == 176,
               "polyattn_params changed size on LP64");

POLYATTN_API void polyattn_params_init(polyattn_params *params) {
  memset(params, 0, sizeof *params);
  params->struct_size = sizeof *params;
  params->window_left = -1;
  params->window_right = -1;
}

POLYATTN_API void polyattn_context_desc_init(polyattn_context_desc *desc) {
  memset(desc, 0, sizeof *desc);
  desc->struct_size = sizeof *desc;
  desc->backend = POLYATTN_BACKEND_AUTO;
}
