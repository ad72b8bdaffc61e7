/* The mask and score rules of docs/semantics.md, written once for C, CUDA and HIP.
 *
 * Every backend and the oracle call these; nothing else decides which (i, j) pair
 * is kept or how a raw dot product becomes a score. Positions are within one
 * sequence: row i in [0, len_q), key j in [0, len_k), and row i sits at key
 * position i + len_k - len_q (bottom-right alignment). */
#ifndef PA_MASK_H
#define PA_MASK_H

#include <stdint.h>

#include "portable.h"

/* The mask of one (batch entry, head): everything but the block mask. */
typedef struct pa_mask {
  int32_t len_q, len_k;            /* len_k already limited by seqused_k */
  int32_t window_left, window_right; /* resolved (causal folded in); -1 unbounded */
} pa_mask;

/* Row i's diagonal key position. */
PA_HD static inline int64_t pa_mask_diag(const pa_mask *m, int64_t i) {
  return i + (int64_t)m->len_k - (int64_t)m->len_q;
}

/* Keys [*lo, *hi) that row i may keep (before block masks and 2:4); empty when
 * *lo >= *hi. Kernels use it to skip whole tiles. */
PA_HD static inline void pa_mask_row_range(const pa_mask *m, int64_t i, int64_t *lo,
                                           int64_t *hi) {
  int64_t d = pa_mask_diag(m, i);
  int64_t a = 0, b = m->len_k;
  if (m->window_left >= 0 && d - m->window_left > a) a = d - m->window_left;
  if (m->window_right >= 0 && d + m->window_right + 1 < b) b = d + m->window_right + 1;
  *lo = a;
  *hi = b;
}

/* Keys [*lo, *hi) that any row of [i0, i1) may keep: the union of the row ranges
 * (they move monotonically with i). */
PA_HD static inline void pa_mask_rows_range(const pa_mask *m, int64_t i0, int64_t i1,
                                            int64_t *lo, int64_t *hi) {
  int64_t lo0, hi0, lo1, hi1;
  pa_mask_row_range(m, i0, &lo0, &hi0);
  pa_mask_row_range(m, i1 - 1, &lo1, &hi1);
  *lo = lo0 < lo1 ? lo0 : lo1;
  *hi = hi0 > hi1 ? hi0 : hi1;
}

PA_HD static inline int pa_mask_keep(const pa_mask *m, int64_t i, int64_t j) {
  int64_t lo, hi;
  pa_mask_row_range(m, i, &lo, &hi);
  return j >= lo && j < hi;
}

/* The score of (i, j) from the raw dot product q_i . k_j: scale, then softcap
 * (softcap > 0), then the ALiBi bias (slope != 0). */
PA_HD static inline float pa_score(float dot, float scale, float softcap, float slope,
                                   const pa_mask *m, int64_t i, int64_t j) {
  float s = dot * scale;
  if (softcap > 0.0f) s = softcap * tanhf(s / softcap);
  if (slope != 0.0f) {
    int64_t dist = pa_mask_diag(m, i) - j;
    if (dist < 0) dist = -dist;
    s -= slope * (float)dist;
  }
  return s;
}

/* d score / d dot of pa_score, the backward's chain-rule factor: scale, times
 * 1 - tanh^2 under a softcap (the ALiBi bias does not depend on the dot product). */
PA_HD static inline float pa_score_ddot(float dot, float scale, float softcap) {
  if (softcap > 0.0f) {
    const float t = tanhf(dot * scale / softcap);
    return scale * (1.0f - t * t);
  }
  return scale;
}

/* The same in double, for the oracle. */
static inline double pa_score_f64(double dot, double scale, double softcap, double slope,
                                   const pa_mask *m, int64_t i, int64_t j) {
  double s = dot * scale;
  if (softcap > 0.0) s = softcap * tanh(s / softcap);
  if (slope != 0.0) {
    int64_t dist = pa_mask_diag(m, i) - j;
    if (dist < 0) dist = -dist;
    s -= slope * (double)dist;
  }
  return s;
}

/* 2:4 selection over one aligned group of four keys: `s` holds the four scores,
 * `kept` says which step-4 masks kept. On return, kept[] holds only the (up to)
 * two largest kept scores, ties going to the lower index. Used by the oracle and
 * every backend, so they prune identically. */
#define PA_SELECT_2_4(T, s, kept)                                                  \
  do {                                                                             \
    int pa_n_ = 0;                                                                 \
    for (int pa_a_ = 0; pa_a_ < 4; ++pa_a_) pa_n_ += (kept)[pa_a_] != 0;           \
    if (pa_n_ > 2) {                                                               \
      int pa_keep_[4] = {0, 0, 0, 0};                                              \
      for (int pa_r_ = 0; pa_r_ < 2; ++pa_r_) {                                    \
        int pa_best_ = -1;                                                         \
        for (int pa_a_ = 0; pa_a_ < 4; ++pa_a_) {                                  \
          if (!(kept)[pa_a_] || pa_keep_[pa_a_]) continue;                         \
          if (pa_best_ < 0 || (s)[pa_a_] > (s)[pa_best_]) pa_best_ = pa_a_;        \
        }                                                                          \
        pa_keep_[pa_best_] = 1;                                                    \
      }                                                                            \
      for (int pa_a_ = 0; pa_a_ < 4; ++pa_a_) (kept)[pa_a_] = pa_keep_[pa_a_];     \
    }                                                                              \
  } while (0)

PA_HD static inline void pa_select_2_4_f32(const float s[4], int kept[4]) {
  PA_SELECT_2_4(float, s, kept);
}
static inline void pa_select_2_4_f64(const double s[4], int kept[4]) {
  PA_SELECT_2_4(double, s, kept);
}

#endif
