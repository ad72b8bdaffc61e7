/* The internal backend interface: one struct of function pointers per backend.
 *
 * The CPU backend is linked into libpolyattn and registered statically; every GPU
 * backend is a loadable module (libpolyattn-<name>.so) exporting two C symbols:
 *
 *   int polyattn_module_score(void);
 *       0 when the backend cannot run on this machine (no driver, no device),
 *       otherwise its preference (higher wins under POLYATTN_BACKEND_AUTO). Must be
 *       cheap and must not fail loudly.
 *   polyattn_status polyattn_module_init(uint32_t core_api_version,
 *                                        const pa_backend_ops **ops);
 *       Returns the backend's ops table, or POLYATTN_ERR_BACKEND when the core's
 *       API version is one it was not built for.
 *
 * Rules: `api_version` comes first and fields are only ever appended. Entries
 * marked (optional) may be NULL and the router supplies the default. Every call
 * that can fail fills `err` with a message naming what failed. The router has
 * validated all arguments before a call reaches a backend. */
#ifndef PA_BACKEND_H
#define PA_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "polyattn.h"
#include "problem.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PA_BACKEND_API_VERSION 1u

#define PA_MODULE_SCORE_SYMBOL "polyattn_module_score"
#define PA_MODULE_INIT_SYMBOL "polyattn_module_init"

/* A buffer as both sides see it. The router owns the struct; the backend owns
 * what `handle` refers to when `owned` is set. */
struct polyattn_buffer {
  struct polyattn_context *ctx;
  polyattn_memory_kind kind;
  void *handle;  /* host/device pointer, or VkBuffer */
  void *address; /* addressable base (host/device pointer), or NULL (Vulkan) */
  size_t size;
  int owned;
};

typedef struct pa_backend_ops {
  uint32_t api_version; /* PA_BACKEND_API_VERSION */
  polyattn_backend_kind kind;
  const char *name;

  /* Number of devices usable here (0: unusable; then `reason` says why). Fills
   * the first device's name. */
  int (*probe)(char *device_name, size_t name_len, char *reason, size_t reason_len);

  polyattn_status (*context_create)(int32_t device, void *native_stream, int32_t num_threads,
                                    void **bctx, pa_error *err);
  void (*context_destroy)(void *bctx);
  const char *(*device_name)(void *bctx);

  /* The memory kind the backend allocates, and whether it can address `kind`. */
  polyattn_memory_kind memory_kind;
  int (*can_wrap)(void *bctx, polyattn_memory_kind kind); /* (optional): kind == memory_kind */

  /* Allocate: *handle is what buffer_free receives, *address the addressable base
   * (NULL if none). */
  polyattn_status (*buffer_alloc)(void *bctx, size_t bytes, void **handle, void **address,
                                  pa_error *err);
  void (*buffer_free)(void *bctx, void *handle);
  /* Blocking copies between host memory and a buffer. */
  polyattn_status (*buffer_write)(void *bctx, const struct polyattn_buffer *buf, size_t offset,
                                  const void *src, size_t bytes, pa_error *err);
  polyattn_status (*buffer_read)(void *bctx, const struct polyattn_buffer *buf, size_t offset,
                                 void *dst, size_t bytes, pa_error *err);

  /* The one function that picks the kernel: OK with the workspace it needs, or
   * POLYATTN_ERR_UNSUPPORTED with a message. forward/backward call the same code,
   * so "supported?" and dispatch cannot disagree. */
  polyattn_status (*plan)(void *bctx, const pa_problem *p, size_t *workspace_bytes,
                          pa_error *err);
  polyattn_status (*forward)(void *bctx, const pa_problem *p,
                             const struct polyattn_buffer *workspace, pa_error *err);
  polyattn_status (*backward)(void *bctx, const pa_problem *p,
                              const struct polyattn_buffer *workspace, pa_error *err);

  polyattn_status (*synchronize)(void *bctx, pa_error *err); /* (optional): no-op */
} pa_backend_ops;

typedef int (*pa_module_score_fn)(void);
typedef polyattn_status (*pa_module_init_fn)(uint32_t core_api_version,
                                             const pa_backend_ops **ops);

/* The built-in CPU backend (backends/cpu). */
const pa_backend_ops *pa_cpu_backend(void);

#ifdef __cplusplus
}
#endif
#endif
