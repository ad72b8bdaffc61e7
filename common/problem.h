/* The validated attention problem every backend receives.
 *
 * The router (api/) turns the public tensors and params into a pa_problem by
 * pa_problem_build() (common/validate.c): every size is checked, every default is
 * resolved, and every view is reduced to a base address plus element strides. A
 * backend never sees a polyattn_tensor and never re-validates. */
#ifndef PA_PROBLEM_H
#define PA_PROBLEM_H

#include <stddef.h>
#include <stdint.h>

#include "mask.h"
#include "polyattn.h"
#include "portable.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A message buffer a backend or validator fills when it fails. */
typedef struct pa_error {
  char msg[512];
} pa_error;

/* One resolved view. `ptr` is the address of element 0 (buffer base + byte offset)
 * when the buffer has an address (host, CUDA, HIP memory); NULL for a Vulkan
 * buffer, which is addressed by (buf, offset). Strides are in elements.
 * Q/K/V/O-like views:  stride_b (batch; 0 when varlen), stride_s (token),
 *                      stride_h (head); head_dim is contiguous.
 * LSE:                 stride_b, stride_h, stride_s (0 / head / token when varlen).
 * Per-batch arrays (cu_seqlens, seqused_k): stride_s is the element stride.
 * ALiBi slopes:        stride_b (0 when broadcast), stride_h.
 * Block masks:         stride_b, stride_h (0 when broadcast), stride_s (per query
 *                      block row); the key-block index is contiguous. */
typedef struct pa_view {
  const struct polyattn_buffer *buf; /* NULL: the view is absent */
  size_t offset;                     /* bytes from the buffer's start */
  void *ptr;
  int64_t stride_b, stride_s, stride_h;
} pa_view;

typedef enum pa_pass { PA_PASS_FORWARD = 0, PA_PASS_BACKWARD = 1 } pa_pass;

typedef struct pa_problem {
  pa_pass pass;
  polyattn_dtype dtype; /* of q, k, v, o (and dout, dq, dk, dv); FP8: of q, k, v */
  polyattn_dtype out_dtype; /* of o: dtype, or BF16 when dtype is FP8_E4M3 */

  int32_t batch;
  /* Fixed-length: the sequence lengths. Varlen: the maximum per-sequence lengths
   * (max_seqlen_* from params, or computed from cu_seqlens). */
  int32_t seqlen_q, seqlen_k;
  int64_t total_q, total_k; /* varlen: rows of q and k; else batch * seqlen */
  int32_t heads_q, heads_kv, head_dim, head_dim_v;
  int varlen;

  float scale;   /* resolved: never 0 */
  float softcap; /* 0: off */
  int32_t causal;
  /* Resolved windows: causal is folded in (window_right = 0 when causal and the
   * window was unbounded or wider). -1: unbounded. */
  int32_t window_left, window_right;

  pa_view q, k, v, o, lse; /* lse.buf == NULL: not requested */
  pa_view dout, dq, dk, dv; /* backward only */

  pa_view cu_seqlens_q, cu_seqlens_k, seqused_k, alibi; /* buf == NULL: absent */
  /* FP8 descale factors (float32): stride_b and stride_h index [batch, heads_kv], both
   * 0 for a per-tensor [1]; buf == NULL: factor 1 (pa_problem_descale) */
  pa_view q_descale, k_descale, v_descale;

  polyattn_sparsity sparsity;
  int32_t block_q, block_k;     /* resolved: > 0 */
  int32_t mask_qblocks, mask_kblocks; /* ceil(seqlen_q / block_q), ... */
  pa_view block_mask;           /* BLOCK */
  pa_view block_mask_out;       /* AUTO_BLOCK, optional */
  float block_threshold;        /* resolved: (0, 1] */
  float auto_density_cutoff;    /* resolved: (0, 1] */

  int32_t deterministic;
} pa_problem;

/* The key length that aligns the masks of batch entry b, and how many keys exist. */
typedef struct pa_seq {
  int64_t q_start, k_start; /* first row of this entry in q/k (varlen); else 0 */
  int32_t len_q, len_k;     /* len_k already limited by seqused_k */
} pa_seq;

/* Per-entry sequence bounds, read from host-addressable cu_seqlens/seqused_k.
 * Backends whose metadata lives on a device compute the same thing in-kernel. */
PA_HD static inline pa_seq pa_problem_seq(const pa_problem *p, int32_t b) {
  pa_seq s;
  if (p->varlen) {
    const int32_t *cq = (const int32_t *)p->cu_seqlens_q.ptr;
    const int32_t *ck = (const int32_t *)p->cu_seqlens_k.ptr;
    int64_t sq = p->cu_seqlens_q.stride_s, sk = p->cu_seqlens_k.stride_s;
    s.q_start = cq[b * sq];
    s.k_start = ck[b * sk];
    s.len_q = cq[(b + 1) * sq] - cq[b * sq];
    s.len_k = ck[(b + 1) * sk] - ck[b * sk];
  } else {
    s.q_start = 0;
    s.k_start = 0;
    s.len_q = p->seqlen_q;
    s.len_k = p->seqlen_k;
  }
  if (p->seqused_k.buf) {
    int32_t used = ((const int32_t *)p->seqused_k.ptr)[b * p->seqused_k.stride_s];
    if (used < s.len_k) s.len_k = used;
  }
  return s;
}

/* The causal/window/length mask of one batch entry (its sequence bounds `s`). */
PA_HD static inline pa_mask pa_problem_mask(const pa_problem *p, const pa_seq *s) {
  pa_mask m;
  m.len_q = s->len_q;
  m.len_k = s->len_k;
  m.window_left = p->window_left;
  m.window_right = p->window_right;
  return m;
}

/* The ALiBi slope of (batch entry b, query head h); 0 without ALiBi. */
PA_HD static inline float pa_problem_alibi_slope(const pa_problem *p, int32_t b, int32_t h) {
  if (!p->alibi.buf) return 0.0f;
  return ((const float *)p->alibi.ptr)[(int64_t)b * p->alibi.stride_b +
                                       (int64_t)h * p->alibi.stride_h];
}

/* The FP8 descale factor of (batch entry b, kv head hk) in view d; 1 when absent. */
PA_HD static inline float pa_problem_descale(const pa_view *d, int32_t b, int32_t hk) {
  if (!d->buf) return 1.0f;
  return ((const float *)d->ptr)[(int64_t)b * d->stride_b + (int64_t)hk * d->stride_h];
}

/* Element offset of row `token` (within entry b), head h, in a q/k/v-like view. */
PA_HD static inline int64_t pa_view_row(const pa_view *v, int32_t b, int64_t token_in_seq,
                                  int64_t seq_start, int32_t h) {
  return (int64_t)b * v->stride_b + (seq_start + token_in_seq) * v->stride_s +
         (int64_t)h * v->stride_h;
}

/* Element offset of LSE for (b, h, row) — varlen rows are global token indices. */
PA_HD static inline int64_t pa_lse_index(const pa_view *v, int32_t b, int32_t h,
                                   int64_t row_in_seq, int64_t seq_start) {
  return (int64_t)b * v->stride_b + (int64_t)h * v->stride_h +
         (seq_start + row_in_seq) * v->stride_s;
}

/* The block-mask byte for (b, h, query block, key block); 1 when no mask. */
PA_HD static inline int pa_block_mask_keep(const pa_view *mask, int32_t b, int32_t h,
                                     int32_t qb, int32_t kb) {
  if (!mask->buf) return 1;
  const uint8_t *m = (const uint8_t *)mask->ptr;
  return m[(int64_t)b * mask->stride_b + (int64_t)h * mask->stride_h +
           (int64_t)qb * mask->stride_s + kb] != 0;
}

/* Whether the block mask keeps any block touching rows [q0, q1) x keys [k0, k1) of
 * (b, h) (both ranges non-empty); 1 without a mask. A tile with none is skipped. */
PA_HD static inline int pa_block_mask_any(const pa_problem *p, int32_t b, int32_t h, int64_t q0,
                                          int64_t q1, int64_t k0, int64_t k1) {
  if (!p->block_mask.buf) return 1;
  for (int64_t qb = q0 / p->block_q; qb <= (q1 - 1) / p->block_q; ++qb)
    for (int64_t kb = k0 / p->block_k; kb <= (k1 - 1) / p->block_k; ++kb)
      if (pa_block_mask_keep(&p->block_mask, b, h, (int32_t)qb, (int32_t)kb)) return 1;
  return 0;
}

/* Validate the public arguments and build the problem (common/validate.c).
 * `dout`, `dq`, `dk`, `dv` are NULL for the forward pass. `host_visible` says
 * whether metadata tensors (cu_seqlens, seqused_k) may be read on the host to
 * check their contents. Returns the status and fills `err` naming the argument. */
polyattn_status pa_problem_build(pa_problem *p, pa_pass pass, const polyattn_params *params,
                                 const polyattn_tensor *q, const polyattn_tensor *k,
                                 const polyattn_tensor *v, const polyattn_tensor *out,
                                 const polyattn_tensor *lse, const polyattn_tensor *dout,
                                 const polyattn_tensor *dq, const polyattn_tensor *dk,
                                 const polyattn_tensor *dv, int host_visible, pa_error *err);

/* printf-style helper that fills err->msg and returns `status`. */
polyattn_status pa_fail(pa_error *err, polyattn_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

#ifdef __cplusplus
}
#endif
#endif
