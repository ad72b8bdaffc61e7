/*
 * polyattn.h — the public API of polyattn, a portable attention library.
 *
 * This header is the authoritative documentation of the API. One call computes
 * scaled-dot-product attention, FlashAttention style (tiled, online softmax, no
 * Sq x Sk score matrix), on whichever backend the context is bound to: CPU, CUDA,
 * HIP or Vulkan. The exact semantics are in docs/semantics.md; in short, for query
 * row i and key j of one (batch, head):
 *
 *   s  = scale * q_i . k_j                      (scale defaults to 1/sqrt(D))
 *   s  = softcap * tanh(s / softcap)            (if softcap > 0)
 *   s -= alibi_slope[h] * |i + Sk - Sq - j|     (if alibi_slopes is given)
 *   keep (i, j) only if every active mask keeps it (causal / window aligned at the
 *   bottom right, block mask, seqused_k); with 2:4 sparsity keep the two largest
 *   kept s of each aligned group of four keys
 *   O_i = softmax over kept j of s, times V;  LSE_i = ln sum_kept exp(s_ij)
 *
 * A row with nothing kept gives O = 0 and LSE = -inf.
 *
 * Conventions
 * - Every fallible call returns a polyattn_status. On failure nothing the caller
 *   passed as output is modified, and polyattn_last_error(ctx) names the offending
 *   argument.
 * - No call aborts, exits or prints. Diagnostics go to the log callback (see
 *   polyattn_set_log_callback) or, if none is set, to stderr only when the
 *   environment variable POLYATTN_LOG is set (error, warn, info or debug).
 * - Structs that may grow start with `struct_size`; fill it with sizeof() of the
 *   struct you compiled against (the *_init helpers do that), so that a newer library
 *   accepts older callers.
 * - A context is not thread-safe: use one context per thread, or serialise calls.
 *   Different contexts may be used from different threads concurrently.
 */
#ifndef POLYATTN_H
#define POLYATTN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ version */

#define POLYATTN_VERSION_MAJOR 0
#define POLYATTN_VERSION_MINOR 1
#define POLYATTN_VERSION_PATCH 0
/* (major << 16) | (minor << 8) | patch, comparable with polyattn_version(). */
#define POLYATTN_VERSION_HEX                                                   \
  ((POLYATTN_VERSION_MAJOR << 16) | (POLYATTN_VERSION_MINOR << 8) |            \
   POLYATTN_VERSION_PATCH)

#if defined(_WIN32)
#  if defined(POLYATTN_BUILDING)
#    define POLYATTN_API __declspec(dllexport)
#  else
#    define POLYATTN_API __declspec(dllimport)
#  endif
#elif defined(__GNUC__)
#  define POLYATTN_API __attribute__((visibility("default")))
#else
#  define POLYATTN_API
#endif

/* The version of the library loaded at run time, as POLYATTN_VERSION_HEX. */
POLYATTN_API unsigned polyattn_version(void);
/* The same as a string, "major.minor.patch". Static storage; never NULL. */
POLYATTN_API const char *polyattn_version_string(void);

/* ------------------------------------------------------------------- status */

typedef enum polyattn_status {
  POLYATTN_OK = 0,
  POLYATTN_ERR_NULL_ARGUMENT,    /* a required pointer is NULL */
  POLYATTN_ERR_INVALID_VALUE,    /* a scalar parameter is out of its range */
  POLYATTN_ERR_SHAPE,            /* sizes missing, zero/negative, or not matching */
  POLYATTN_ERR_HEAD_DIM,         /* head dim above POLYATTN_MAX_HEAD_DIM */
  POLYATTN_ERR_HEADS,            /* Hq is not a multiple of Hkv */
  POLYATTN_ERR_DTYPE,            /* dtype not allowed or tensors disagree */
  POLYATTN_ERR_STRIDE,           /* head_dim not contiguous, or bad stride */
  POLYATTN_ERR_BOUNDS,           /* the view reaches past the end of its buffer */
  POLYATTN_ERR_SEQLENS,          /* cu_seqlens / seqused_k content is invalid */
  POLYATTN_ERR_OVERFLOW,         /* a size or offset overflows its integer type */
  POLYATTN_ERR_UNSUPPORTED,      /* valid, but this backend cannot compute it */
  POLYATTN_ERR_OUT_OF_MEMORY,    /* an allocation failed */
  POLYATTN_ERR_WORKSPACE,        /* the workspace given is too small */
  POLYATTN_ERR_BACKEND,          /* backend unavailable, or failed to load */
  POLYATTN_ERR_DEVICE,           /* the device or its runtime reported an error */
  POLYATTN_ERR_CONTEXT,          /* an object belongs to another context */
  POLYATTN_ERR_ABI,              /* struct_size is not one this library knows */
  POLYATTN_ERR_INTERNAL          /* a bug in polyattn; please report it */
} polyattn_status;

/* A short English description of `status`. Static storage; never NULL. */
POLYATTN_API const char *polyattn_status_string(polyattn_status status);

/* ------------------------------------------------------------------ logging */

typedef enum polyattn_log_level {
  POLYATTN_LOG_ERROR = 0,
  POLYATTN_LOG_WARN = 1,
  POLYATTN_LOG_INFO = 2,
  POLYATTN_LOG_DEBUG = 3
} polyattn_log_level;

typedef void (*polyattn_log_fn)(polyattn_log_level level, const char *message,
                                void *user_data);

/* Route the library's diagnostics (for the whole process) to `fn`, for messages
 * at `max_level` or more severe. fn == NULL restores the default: silent unless
 * POLYATTN_LOG is set, then to stderr. `fn` may be called from library threads. */
POLYATTN_API void polyattn_set_log_callback(polyattn_log_fn fn,
                                            polyattn_log_level max_level,
                                            void *user_data);

/* ----------------------------------------------------------------- backends */

typedef enum polyattn_backend_kind {
  POLYATTN_BACKEND_AUTO = 0, /* CUDA or HIP, then a Vulkan GPU, then the CPU */
  POLYATTN_BACKEND_CPU = 1,
  POLYATTN_BACKEND_CUDA = 2,
  POLYATTN_BACKEND_HIP = 3,
  POLYATTN_BACKEND_VULKAN = 4
} polyattn_backend_kind;

/* Lower-case name ("cpu", "cuda", ...); NULL for an unknown value. */
POLYATTN_API const char *polyattn_backend_name(polyattn_backend_kind kind);

typedef struct polyattn_backend_info {
  polyattn_backend_kind kind;
  const char *name;        /* "cpu", "cuda", ... */
  const char *module_path; /* the loadable module, or "(built in)" */
  int built;               /* 1 if the library or a module for it was found */
  int usable;              /* 1 if a context can be created on it here */
  int score;               /* the module's own preference; 0 when unusable */
  int device_count;
  const char *device_name; /* first device's name, or "" */
  const char *reason;      /* why it is not usable, or "" */
} polyattn_backend_info;

/* The backends this library knows, one entry per backend module found (the CPU
 * backend is built in; GPU backends are modules found next to the library or in
 * the directories of POLYATTN_BACKEND_PATH, colon-separated). A module that is
 * missing or fails to load is listed with usable = 0 and a reason; it never
 * crashes the process. The first call scans; the list and its strings live until
 * the process exits. Thread-safe. */
POLYATTN_API polyattn_status polyattn_backends(const polyattn_backend_info **list,
                                               size_t *count);

/* ------------------------------------------------------------------ context */

typedef struct polyattn_context polyattn_context;

typedef struct polyattn_context_desc {
  uint32_t struct_size;          /* sizeof(polyattn_context_desc) */
  polyattn_backend_kind backend; /* AUTO; overridden by env POLYATTN_BACKEND */
  int32_t device;                /* device index within the backend */
  /* The native stream or queue to run on: cudaStream_t, hipStream_t, or for
   * Vulkan a polyattn_vulkan_queue * (below). NULL: the context creates its own.
   * The CPU backend ignores it. */
  void *native_stream;
  /* CPU backend: worker threads; 0 = env POLYATTN_THREADS, else one per core. */
  int32_t num_threads;
  uint32_t reserved[8];
} polyattn_context_desc;

/* Vulkan: to run on a device and queue the caller owns, point native_stream at
 * one of these (it is read during polyattn_context_create only). The context then
 * never destroys them, and buffers wrapped from the caller's VkBuffers (created
 * with STORAGE_BUFFER and TRANSFER_SRC/DST usage, sizes a multiple of 4 bytes) can
 * be used. The caller must not use the queue from another thread while a polyattn
 * call on the context runs (Vulkan's external synchronisation rule). */
typedef struct polyattn_vulkan_queue {
  uint32_t struct_size;        /* sizeof(polyattn_vulkan_queue) */
  void *physical_device;       /* VkPhysicalDevice */
  void *device;                /* VkDevice */
  void *queue;                 /* VkQueue of a family with VK_QUEUE_COMPUTE_BIT */
  uint32_t queue_family_index; /* that family */
} polyattn_vulkan_queue;

/* Fill `desc` with the defaults (AUTO, device 0, own stream, default threads). */
POLYATTN_API void polyattn_context_desc_init(polyattn_context_desc *desc);

/* Create a context bound to one backend and one device. desc == NULL means the
 * defaults. On failure *out is NULL and polyattn_last_error(NULL) says why. */
POLYATTN_API polyattn_status polyattn_context_create(const polyattn_context_desc *desc,
                                                     polyattn_context **out);
/* Destroy a context; its buffers must have been freed. NULL is a no-op. */
POLYATTN_API void polyattn_context_destroy(polyattn_context *ctx);

/* Which backend the context is bound to, and its device's name. */
POLYATTN_API polyattn_backend_kind polyattn_context_backend(const polyattn_context *ctx);
POLYATTN_API const char *polyattn_context_device_name(const polyattn_context *ctx);

/* The message of the last failed call on `ctx`, naming the argument at fault;
 * "" if none. ctx == NULL: the last failure of this thread outside a context
 * (e.g. polyattn_context_create). Valid until the next call on the same context. */
POLYATTN_API const char *polyattn_last_error(const polyattn_context *ctx);

/* Wait until all work submitted on the context's stream has finished. */
POLYATTN_API polyattn_status polyattn_synchronize(polyattn_context *ctx);

/* ------------------------------------------------------------------ buffers */

typedef struct polyattn_buffer polyattn_buffer;

typedef enum polyattn_memory_kind {
  POLYATTN_MEMORY_HOST = 0,        /* handle: a host pointer */
  POLYATTN_MEMORY_CUDA_DEVICE = 1, /* handle: a CUDA device pointer */
  POLYATTN_MEMORY_HIP_DEVICE = 2,  /* handle: a HIP device pointer */
  POLYATTN_MEMORY_VK_BUFFER = 3    /* handle: a VkBuffer (cast to void *) */
} polyattn_memory_kind;

/* Allocate `bytes` of memory owned by the context's device (host memory on the
 * CPU backend). Contents are undefined. May block. */
POLYATTN_API polyattn_status polyattn_buffer_alloc(polyattn_context *ctx, size_t bytes,
                                                   polyattn_buffer **out);
/* Wrap memory the caller owns: nothing is copied and the memory is not freed by
 * polyattn_buffer_free. The memory kind must be one the context's backend can
 * address (POLYATTN_ERR_UNSUPPORTED otherwise). */
POLYATTN_API polyattn_status polyattn_buffer_wrap(polyattn_context *ctx,
                                                  polyattn_memory_kind kind,
                                                  void *handle, size_t bytes,
                                                  polyattn_buffer **out);
/* Copy between host memory and a buffer; blocks until the copy is complete
 * (and so waits for work queued on the context before it). */
POLYATTN_API polyattn_status polyattn_buffer_write(polyattn_context *ctx,
                                                   polyattn_buffer *buf, size_t offset,
                                                   const void *src, size_t bytes);
POLYATTN_API polyattn_status polyattn_buffer_read(polyattn_context *ctx,
                                                  const polyattn_buffer *buf,
                                                  size_t offset, void *dst, size_t bytes);
POLYATTN_API size_t polyattn_buffer_size(const polyattn_buffer *buf);
/* Free a buffer (the memory too, unless wrapped). NULL is a no-op. */
POLYATTN_API void polyattn_buffer_free(polyattn_buffer *buf);

/* ------------------------------------------------------------------ tensors */

typedef enum polyattn_dtype {
  POLYATTN_DTYPE_F32 = 0,
  POLYATTN_DTYPE_F16 = 1,
  POLYATTN_DTYPE_BF16 = 2,
  POLYATTN_DTYPE_FP8_E4M3 = 3, /* q, k, v of the forward on Hopper (CUDA cc 9.0) only;
                                  out is then BF16 (see polyattn_params.q_descale) */
  POLYATTN_DTYPE_I32 = 4,      /* cu_seqlens, seqused_k */
  POLYATTN_DTYPE_U8 = 5        /* block masks: one byte per block, nonzero = keep */
} polyattn_dtype;

/* Bytes per element; 0 for an unknown dtype. */
POLYATTN_API size_t polyattn_dtype_size(polyattn_dtype dtype);
POLYATTN_API const char *polyattn_dtype_name(polyattn_dtype dtype);

#define POLYATTN_MAX_DIMS 4
#define POLYATTN_MAX_HEAD_DIM 256

/* A view of a buffer: element (i0, i1, ...) lives at byte
 *   offset + (i0*strides[0] + i1*strides[1] + ...) * dtype_size.
 * Strides are in elements. Q, K, V, O and their gradients are
 *   ndim 4: [batch, seq, heads, head_dim]  (fixed-length batches), or
 *   ndim 3: [total_tokens, heads, head_dim] (varlen, with cu_seqlens),
 * with head_dim contiguous (stride 1); any other strides are allowed, so packed QKV
 * and [batch, heads, seq, dim] storage work without copies. LSE is float32,
 *   ndim 3: [batch, heads_q, seq_q], or ndim 2 (varlen): [heads_q, total_q]. */
typedef struct polyattn_tensor {
  polyattn_buffer *buffer;
  size_t offset; /* bytes */
  polyattn_dtype dtype;
  int32_t ndim;
  int64_t shape[POLYATTN_MAX_DIMS];
  int64_t strides[POLYATTN_MAX_DIMS];
} polyattn_tensor;

/* Fill a contiguous (row-major) view of `buffer` at byte `offset`. */
POLYATTN_API void polyattn_tensor_contiguous(polyattn_tensor *t, polyattn_buffer *buffer,
                                             size_t offset, polyattn_dtype dtype,
                                             int32_t ndim, const int64_t *shape);

/* --------------------------------------------------------------- parameters */

typedef enum polyattn_sparsity {
  POLYATTN_SPARSITY_NONE = 0,
  /* block_mask: keep (i, j) only if bit (i / block_q, j / block_k) is set;
   * blocks that are not set are skipped, so time falls with density. */
  POLYATTN_SPARSITY_BLOCK = 1,
  /* A pre-pass estimates each (query block, key block) pair's softmax mass from
   * block-pooled Q and K and keeps, per query block, the smallest set of key
   * blocks reaching block_threshold of it (always the first block and the
   * diagonal one); then runs as BLOCK. An approximation: see docs/semantics.md. */
  POLYATTN_SPARSITY_AUTO_BLOCK = 2,
  /* 2:4: in each aligned group of four keys keep the two largest kept scores. */
  POLYATTN_SPARSITY_NM_2_4 = 3
} polyattn_sparsity;

typedef struct polyattn_params {
  uint32_t struct_size; /* sizeof(polyattn_params) */

  float scale;   /* 0: 1/sqrt(head_dim). Must be finite. */
  int32_t causal; /* 0 or 1; bottom-right aligned (FlashAttention >= 2.1) */
  /* Sliding window, in keys to the left / right of row i's diagonal position
   * i + Sk - Sq; -1 means unbounded. (-1, -1) is off. With causal, right is 0. */
  int32_t window_left, window_right;
  float softcap; /* 0: off; > 0: s = softcap * tanh(s / softcap) */
  /* float32 [Hq] or [batch, Hq]; NULL: no ALiBi. */
  const polyattn_tensor *alibi_slopes;

  /* Varlen: int32 [batch + 1], non-decreasing, starting at 0, ending at the total
   * tokens. Both NULL (fixed-length batch) or both set (Q, K, V, O have ndim 3). */
  const polyattn_tensor *cu_seqlens_q;
  const polyattn_tensor *cu_seqlens_k;
  /* Upper bounds of the per-sequence lengths (varlen); 0: computed from cu_seqlens
   * where the backend can read them on the host. */
  int32_t max_seqlen_q, max_seqlen_k;
  /* KV cache: int32 [batch]; keys at positions >= seqused_k[b] are ignored, and
   * seqused_k[b] is the key length used to align causal/window/ALiBi. NULL: off. */
  const polyattn_tensor *seqused_k;

  polyattn_sparsity sparsity;
  /* BLOCK: uint8 [mask_batch, mask_heads, ceil(Sq/block_q), ceil(Sk/block_k)],
   * mask_batch in {1, batch}, mask_heads in {1, Hq} (1 = broadcast); nonzero keeps
   * the block (a bool tensor can be passed as is). Varlen: Sq and Sk are the
   * max_seqlen values and blocks count from each sequence's start. */
  const polyattn_tensor *block_mask;
  int32_t block_q, block_k; /* block sizes of block_mask / AUTO_BLOCK; 0: 64 */
  float block_threshold;    /* AUTO_BLOCK: mass to keep, in (0, 1]; 0: 0.95 */
  /* AUTO_BLOCK: if the chosen density exceeds this, run dense; 0: 0.3, 1: never */
  float auto_density_cutoff;
  /* AUTO_BLOCK, optional output: receives the chosen mask, laid out as block_mask
   * with mask_batch = batch and mask_heads = Hq. */
  const polyattn_tensor *block_mask_out;

  /* Backward: 1 makes dQ, dK, dV bit-identical across runs (may be slower).
   * The forward is always deterministic. */
  int32_t deterministic;
  uint32_t reserved_pad; /* 0; keeps the pointers below 8-byte aligned */

  /* FP8 (q, k, v of dtype FP8_E4M3; forward only; out must be BF16): the inputs are
   * stored as e4m3 values x8 with float32 descale factors, and the attention is that
   * of the real-valued tensors  q = q8 * q_descale,  k = k8 * k_descale,
   * v = v8 * v_descale  (FlashAttention-3's convention). Each is NULL (factor 1) or a
   * float32 tensor of shape [1] (per tensor) or [batch, heads_kv] (per batch entry
   * and kv head; q_descale is indexed by the kv head of the query head's GQA group),
   * in memory the backend can read (a device buffer on CUDA). Setting one with
   * non-FP8 inputs is POLYATTN_ERR_DTYPE. The kernel rounds P to e4m3 for the P.V
   * product (docs/semantics.md, "FP8"). */
  const polyattn_tensor *q_descale;
  const polyattn_tensor *k_descale;
  const polyattn_tensor *v_descale;
  uint32_t reserved[9];
} polyattn_params;

/* Defaults: scale 0 (1/sqrt(D)), no mask, no window, no softcap, dense. */
POLYATTN_API void polyattn_params_init(polyattn_params *params);

/* --------------------------------------------------------------- attention */

/* Bytes of workspace polyattn_forward needs for these arguments (0 is possible).
 * Validates the arguments exactly as polyattn_forward does. */
POLYATTN_API polyattn_status polyattn_forward_workspace_size(
    polyattn_context *ctx, const polyattn_params *params, const polyattn_tensor *q,
    const polyattn_tensor *k, const polyattn_tensor *v, const polyattn_tensor *out,
    const polyattn_tensor *lse, size_t *bytes);

/* Attention forward: out = attention(q, k, v) and, if lse != NULL, its
 * log-sum-exp. q, k, v, out share one dtype (F32, F16 or BF16); lse is F32.
 * FP8: q, k, v FP8_E4M3 (with optional descales, see polyattn_params) and out BF16;
 * only the CUDA backend on compute capability 9.0 computes it (others return
 * POLYATTN_ERR_UNSUPPORTED with a message), at head dims 64 and 128.
 * `workspace` must hold at least polyattn_forward_workspace_size() bytes; it may
 * be NULL, in which case the context allocates (and keeps) one itself — that call
 * then may allocate and is not safe to capture in a CUDA/HIP graph.
 * GPU backends enqueue on the context's stream and return without waiting; the
 * CPU backend returns when the result is written. Nothing is written on error. */
POLYATTN_API polyattn_status polyattn_forward(
    polyattn_context *ctx, const polyattn_params *params, const polyattn_tensor *q,
    const polyattn_tensor *k, const polyattn_tensor *v, const polyattn_tensor *out,
    const polyattn_tensor *lse, polyattn_buffer *workspace);

/* Bytes of workspace polyattn_backward needs for these arguments. */
POLYATTN_API polyattn_status polyattn_backward_workspace_size(
    polyattn_context *ctx, const polyattn_params *params, const polyattn_tensor *q,
    const polyattn_tensor *k, const polyattn_tensor *v, const polyattn_tensor *out,
    const polyattn_tensor *lse, const polyattn_tensor *dout, const polyattn_tensor *dq,
    const polyattn_tensor *dk, const polyattn_tensor *dv, size_t *bytes);

/* Attention backward: given q, k, v, the forward's out and lse, and dout, write
 * dq, dk, dv (dk, dv summed over each GQA group), recomputing the probabilities
 * block by block. Gradient tensors have the shapes (and dtype) of q, k, v. The
 * params must be those of the forward (AUTO_BLOCK: pass the chosen mask as BLOCK).
 * Workspace as for polyattn_forward. */
POLYATTN_API polyattn_status polyattn_backward(
    polyattn_context *ctx, const polyattn_params *params, const polyattn_tensor *q,
    const polyattn_tensor *k, const polyattn_tensor *v, const polyattn_tensor *out,
    const polyattn_tensor *lse, const polyattn_tensor *dout, const polyattn_tensor *dq,
    const polyattn_tensor *dk, const polyattn_tensor *dv, polyattn_buffer *workspace);

#ifdef __cplusplus
}
#endif
#endif /* POLYATTN_H */
