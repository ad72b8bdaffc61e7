/* basic.c: attention forward with polyattn's C API, from context to result.
 *
 * Q, K, V are [batch, seq, heads, head_dim] float32 arrays the program owns; it
 * wraps them as buffers (no copy on the CPU backend; a GPU backend would use
 * polyattn_buffer_alloc + polyattn_buffer_write instead), runs causal attention
 * and prints one output value. Build: cc basic.c -lpolyattn -lm */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "polyattn.h"

#define B 2
#define S 128
#define H 4
#define D 64

/* Print what failed: the status and the message naming the argument at fault. */
static int check(polyattn_status st, const polyattn_context *ctx, const char *what) {
  if (st == POLYATTN_OK) return 1;
  fprintf(stderr, "%s: %s: %s\n", what, polyattn_status_string(st), polyattn_last_error(ctx));
  return 0;
}

int main(void) {
  const size_t n = (size_t)B * S * H * D;
  float *q = malloc(n * sizeof *q), *k = malloc(n * sizeof *k), *v = malloc(n * sizeof *v);
  float *o = malloc(n * sizeof *o);
  if (!q || !k || !v || !o) return 1;
  for (size_t i = 0; i < n; i++) {
    q[i] = sinf(0.01f * (float)i);
    k[i] = cosf(0.02f * (float)i);
    v[i] = (float)(i % 7) - 3.0f;
  }

  /* A context on the default backend (POLYATTN_BACKEND_AUTO, or the
   * POLYATTN_BACKEND environment variable). */
  polyattn_context_desc desc;
  polyattn_context_desc_init(&desc);
  polyattn_context *ctx = NULL;
  if (!check(polyattn_context_create(&desc, &ctx), NULL, "polyattn_context_create")) return 1;
  printf("backend %s, device %s\n", polyattn_backend_name(polyattn_context_backend(ctx)),
         polyattn_context_device_name(ctx));

  /* Buffers wrapping host memory, and contiguous [B, S, H, D] views of them. */
  polyattn_buffer *bq = NULL, *bk = NULL, *bv = NULL, *bo = NULL;
  int ok = check(polyattn_buffer_wrap(ctx, POLYATTN_MEMORY_HOST, q, n * 4, &bq), ctx, "wrap q") &&
           check(polyattn_buffer_wrap(ctx, POLYATTN_MEMORY_HOST, k, n * 4, &bk), ctx, "wrap k") &&
           check(polyattn_buffer_wrap(ctx, POLYATTN_MEMORY_HOST, v, n * 4, &bv), ctx, "wrap v") &&
           check(polyattn_buffer_wrap(ctx, POLYATTN_MEMORY_HOST, o, n * 4, &bo), ctx, "wrap o");
  if (ok) {
    const int64_t shape[4] = {B, S, H, D};
    polyattn_tensor tq, tk, tv, to;
    polyattn_tensor_contiguous(&tq, bq, 0, POLYATTN_DTYPE_F32, 4, shape);
    polyattn_tensor_contiguous(&tk, bk, 0, POLYATTN_DTYPE_F32, 4, shape);
    polyattn_tensor_contiguous(&tv, bv, 0, POLYATTN_DTYPE_F32, 4, shape);
    polyattn_tensor_contiguous(&to, bo, 0, POLYATTN_DTYPE_F32, 4, shape);

    polyattn_params params;
    polyattn_params_init(&params); /* scale 1/sqrt(D), dense, no mask */
    params.causal = 1;

    /* Workspace NULL: the context keeps one itself. No LSE wanted: NULL. */
    ok = check(polyattn_forward(ctx, &params, &tq, &tk, &tv, &to, NULL, NULL), ctx,
               "polyattn_forward") &&
         check(polyattn_synchronize(ctx), ctx, "polyattn_synchronize");
    if (ok) printf("out[0, %d, 0, 0] = %f\n", S - 1, o[((size_t)(S - 1) * H) * D]);
  }
  polyattn_buffer_free(bq); /* wrapped: frees the handle, not the memory */
  polyattn_buffer_free(bk);
  polyattn_buffer_free(bv);
  polyattn_buffer_free(bo);
  polyattn_context_destroy(ctx);
  free(q);
  free(k);
  free(v);
  free(o);
  return ok ? 0 : 1;
}
