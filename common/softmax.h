/* The online softmax, written once as named steps (FlashAttention's Softmax).
 *
 * One query row sees its scores a tile at a time. It keeps the running maximum m
 * and the running sum l = sum exp(s - m). For each tile:
 *   1. update max:  m_new = max(m, max_j s_j); alpha = exp(m - m_new)
 *   2. rescale:     l *= alpha, and the row's output accumulator *= alpha
 *   3. accumulate:  p_j = exp(s_j - m_new); l += sum_j p_j; acc += p_j * v_j
 * and at the end
 *   4. normalise:   O = acc / l;  LSE = m + ln l
 * Masked scores are -inf: they give p = 0. A row that never saw a kept score keeps
 * m = -inf and l = 0; step 4 then gives O = 0 and LSE = -inf, never NaN.
 * Every backend (C, CUDA, HIP; GLSL mirrors it in backends/vulkan) follows these
 * names; kernels may keep m pre-multiplied by log2(e) and use exp2, which is the
 * same arithmetic. */
#ifndef PA_SOFTMAX_H
#define PA_SOFTMAX_H

#include "portable.h"

typedef struct pa_softmax_row {
  float m; /* running maximum of the kept scores; -INFINITY before any */
  float l; /* running sum of exp(s - m) */
} pa_softmax_row;

PA_HD static inline pa_softmax_row pa_softmax_start(void) {
  pa_softmax_row r;
  r.m = -INFINITY;
  r.l = 0.0f;
  return r;
}

/* Step 1: fold the tile's maximum in; returns alpha, the factor that rescales the
 * row's previous l and accumulator (1 when the maximum did not move, 0 when the
 * row had seen nothing yet). */
PA_HD static inline float pa_softmax_update_max(pa_softmax_row *r, float tile_max) {
  float m_new = r->m > tile_max ? r->m : tile_max;
  float alpha = (r->m == m_new) ? 1.0f : expf(r->m - m_new);
  r->m = m_new;
  return alpha;
}

/* The reference point for this tile's exponentials: exp(s - pa_softmax_ref(r)).
 * A row whose maximum is still -inf uses 0, so every p is exp(-inf) = 0. */
PA_HD static inline float pa_softmax_ref(const pa_softmax_row *r) {
  return r->m == -INFINITY ? 0.0f : r->m;
}

/* Step 2: rescale the running sum (the caller rescales its accumulator by alpha). */
PA_HD static inline void pa_softmax_rescale(pa_softmax_row *r, float alpha) {
  r->l *= alpha;
}

/* Step 3: add the tile's sum of p. */
PA_HD static inline void pa_softmax_accumulate(pa_softmax_row *r, float p_sum) {
  r->l += p_sum;
}

/* Two partial rows of the same query (split-KV) merged into one. Returns the
 * factors by which the two accumulators are scaled before being added. */
PA_HD static inline pa_softmax_row pa_softmax_merge(pa_softmax_row a, pa_softmax_row b,
                                                    float *scale_a, float *scale_b) {
  pa_softmax_row r;
  r.m = a.m > b.m ? a.m : b.m;
  *scale_a = a.m == -INFINITY ? 0.0f : expf(a.m - r.m);
  *scale_b = b.m == -INFINITY ? 0.0f : expf(b.m - r.m);
  r.l = a.l * *scale_a + b.l * *scale_b;
  return r;
}

/* Step 4: the factor that turns the accumulator into O (0 for an empty row). */
PA_HD static inline float pa_softmax_normaliser(const pa_softmax_row *r) {
  return r->l > 0.0f ? 1.0f / r->l : 0.0f;
}

/* Step 4: the row's log-sum-exp (-inf for an empty row). */
PA_HD static inline float pa_softmax_lse(const pa_softmax_row *r) {
  return r->l > 0.0f ? r->m + logf(r->l) : -INFINITY;
}

#endif
