/* The online softmax of common/softmax.h, step for step, on a warp's register
 * fragments, for any fragment layout (CUDA mma.sync, AMD MFMA).
 *
 * A fragment map F says how a thread's registers cover matrix rows:
 *   F::frag            the register array (S, or the O accumulator)
 *   F::rows            how many matrix rows a thread holds part of (r = 0 .. rows-1)
 *   F::elems           how many elements of each such row it holds (an even number)
 *   F::at(f, r, k, x)  element 2k + x of row r (a reference into f)
 *   F::row_max(v), F::row_sum(v)   v reduced over the lanes that share the thread's
 *                      rows (pa_lanes_max / pa_lanes_sum: a quad on mma.sync, the
 *                      lane pair l, l + 32 of a wavefront on MFMA 32x32)
 *   F::exp2(x)         2^x with 2^-inf = +0 (the vendor's fast exponential)
 *   F::any(b)          whether b holds in any lane of the warp (a vote; only
 *                      pa_tile_softmax_keep needs it)
 * Each thread keeps one pa_softmax_row per row it holds:
 *   m  the running maximum, in "x units" (below), identical in the lanes of a row;
 *   l  the running sum of this thread's own p only; the lanes' partial sums are
 *      added once, in step 4 (alpha is common to them, so this is exact).
 * x units: the kernel keeps S as x with score * log2(e) = x * xscale. On the fast
 * path (no softcap, no ALiBi, scale > 0) x is the raw dot product and xscale =
 * scale * log2(e), so exp(score - m) = exp2(x * xscale - m * xscale) is one FFMA and
 * one exp2 per element; otherwise x = pa_score(...) * log2(e) and xscale = 1.
 * Masked scores are x = -inf and give p = exp2(-inf) = 0.
 *
 * Elements are visited in pairs (2k, 2k + 1), rows inside pairs: on mma.sync's C
 * layout that is the order of the registers, which the CUDA kernels were tuned in. */
#ifndef PA_CUDA_FRAG_SOFTMAX_CUH
#define PA_CUDA_FRAG_SOFTMAX_CUH

#include "softmax.h"

#define PA_LOG2E 1.4426950408889634f
#define PA_LN2 0.6931471805599453f

/* Row r's maximum over this thread's own elements of s (TREE: as a balanced tree, depth
 * log2(elems / 2) + 1 instead of elems / 2, a shorter dependent chain; the same value,
 * max being exact). */
template <typename F, bool TREE = false>
__device__ __forceinline__ float pa_tile_thread_row_max(const typename F::frag &s, int r) {
  if (TREE) {
    float v[F::elems / 2];
#pragma unroll
    for (int k = 0; k < F::elems / 2; ++k) v[k] = fmaxf(F::at(s, r, k, 0), F::at(s, r, k, 1));
#pragma unroll
    for (int w = 1; w < F::elems / 2; w *= 2)
#pragma unroll
      for (int k = 0; k + w < F::elems / 2; k += 2 * w) v[k] = fmaxf(v[k], v[k + w]);
    return v[0];
  }
  float tile_max = F::at(s, r, 0, 0);
#pragma unroll
  for (int k = 0; k < F::elems / 2; ++k)
    tile_max = fmaxf(tile_max, fmaxf(F::at(s, r, k, 0), F::at(s, r, k, 1)));
  return tile_max;
}

/* Fold a row's tile maximum (already reduced over the row's lanes) into m; alpha
 * rescales the row's previous l and accumulator (1 when m did not move, 0 when the row
 * had seen nothing). */
template <typename F>
__device__ __forceinline__ void pa_tile_softmax_fold_max(pa_softmax_row &row, float tile_max,
                                                         float xscale, float &alpha) {
  const float m_new = fmaxf(row.m, tile_max);
  alpha = row.m == m_new ? 1.0f : F::exp2((row.m - m_new) * xscale);
  row.m = m_new;
}

/* Step 1, update max: fold the tile's row maxima into m (pa_tile_softmax_fold_max). */
template <typename F, bool TREE = false>
__device__ __forceinline__ void pa_tile_softmax_update_max(pa_softmax_row (&row)[F::rows],
                                                           const typename F::frag &s,
                                                           float xscale,
                                                           float (&alpha)[F::rows]) {
#pragma unroll
  for (int r = 0; r < F::rows; ++r)
    pa_tile_softmax_fold_max<F>(row[r], F::row_max(pa_tile_thread_row_max<F, TREE>(s, r)),
                                xscale, alpha[r]);
}

/* Step 2 on the rows' O accumulator (map OF) only: O *= alpha. */
template <typename OF>
__device__ __forceinline__ void pa_tile_softmax_rescale_acc(const float (&alpha)[OF::rows],
                                                            typename OF::frag &o) {
#pragma unroll
  for (int k = 0; k < OF::elems / 2; ++k)
#pragma unroll
    for (int r = 0; r < OF::rows; ++r) {
      OF::at(o, r, k, 0) *= alpha[r];
      OF::at(o, r, k, 1) *= alpha[r];
    }
}

/* Step 2, rescale: l and the rows' O accumulator (map OF) by alpha. */
template <typename OF>
__device__ __forceinline__ void pa_tile_softmax_rescale(pa_softmax_row (&row)[OF::rows],
                                                        const float (&alpha)[OF::rows],
                                                        typename OF::frag &o) {
#pragma unroll
  for (int r = 0; r < OF::rows; ++r) pa_softmax_rescale(&row[r], alpha[r]);
  pa_tile_softmax_rescale_acc<OF>(alpha, o);
}

/* Step 3, accumulate: s becomes p = exp(score - m) in place, and l += sum p. (The
 * caller then adds P.V to the accumulator.) A row still at m = -inf uses the
 * reference 0 (pa_softmax_ref), so its p are exp2(-inf) = 0, never NaN. */
/* EXP16: the exponentials in pairs by F::exp2_pair (two in one instruction at fp16
 * precision; ampere_softmax.cuh says when that is exact enough).
 * LOG2_GAIN: s becomes 2^LOG2_GAIN * p instead (the factor inside the exponent, no
 * multiply) and l sums those; the caller divides l by the gain before step 4 (the FP8
 * kernel's P offset).
 * SUM = false: the exponentials only, l untouched (the FP8 kernel's ROWSUM, whose
 * tensor cores sum P). */
template <typename F, bool EXP16 = false, int LOG2_GAIN = 0, bool SUM = true>
__device__ __forceinline__ void pa_tile_softmax_accumulate(pa_softmax_row (&row)[F::rows],
                                                           typename F::frag &s, float xscale) {
#pragma unroll
  for (int r = 0; r < F::rows; ++r) {
    float ref = pa_softmax_ref(&row[r]) * xscale;
    if constexpr (LOG2_GAIN != 0) ref -= (float)LOG2_GAIN;
    float sum = 0.0f;
#pragma unroll
    for (int k = 0; k < F::elems / 2; ++k) {
      if constexpr (EXP16) {
        const float2 e = F::exp2_pair(fmaf(F::at(s, r, k, 0), xscale, -ref),
                                      fmaf(F::at(s, r, k, 1), xscale, -ref));
        F::at(s, r, k, 0) = e.x;
        F::at(s, r, k, 1) = e.y;
      } else {
        F::at(s, r, k, 0) = F::exp2(fmaf(F::at(s, r, k, 0), xscale, -ref));
        F::at(s, r, k, 1) = F::exp2(fmaf(F::at(s, r, k, 1), xscale, -ref));
      }
      if (SUM) sum += F::at(s, r, k, 0) + F::at(s, r, k, 1);
    }
    if (SUM) pa_softmax_accumulate(&row[r], sum);
  }
}

/* Steps 1-3 with a kept maximum (FlashAttention-4's conditional rescaling, decision
 * 122). Where no element of the warp's rows exceeds its row's m by more than keep_log2
 * (log2 units: every p <= 2^keep_log2), m is kept: alpha = 1, no row reductions, no
 * rescale of l (and the caller skips O's). The vote needs only each thread's own row
 * maxima: if none exceeds m + keep_log2, no row maximum does. Otherwise (some row grew
 * by more, or some row's m is still -inf) the warp takes steps 1-3 as
 * pa_tile_softmax_update_max / _accumulate do. m is then a reference at most keep_log2
 * below the running maximum rather than the maximum itself; O / l and the LSE (m + log l)
 * do not depend on which reference was used, and P's rounding is relative, so only the
 * results' rounding moves. Returns whether any m moved (uniform over the warp, F::any's
 * vote); s becomes p (times 2^LOG2_GAIN) in place as in step 3. LOG2_GAIN, SUM: as in
 * pa_tile_softmax_accumulate; the largest p is then 2^(keep_log2 + LOG2_GAIN), which the
 * caller's number format must hold. The threads' row maxima are the balanced trees
 * (TREE), whatever the caller's steps 1-3 use otherwise: the same values. */
/* The kept maximum's test in one thread: tm gets the thread's row maxima (trees); returns
 * whether any of them exceeds its row's m by more than keep_log2 (m = -inf: +inf or NaN, so
 * the warp updates). The warp's vote on it is the caller's. */
template <typename F>
__device__ __forceinline__ bool pa_tile_keep_grows(const pa_softmax_row (&row)[F::rows],
                                                   const typename F::frag &s, float xscale,
                                                   float keep_log2, float (&tm)[F::rows]) {
  bool grow = false;
#pragma unroll
  for (int r = 0; r < F::rows; ++r) {
    tm[r] = pa_tile_thread_row_max<F, true>(s, r);
    grow |= !(fmaf(tm[r], xscale, -row[r].m * xscale) <= keep_log2);
  }
  return grow;
}

/* Where the vote failed: m from the rows' maxima (tm, reduced over each row's lanes here),
 * alpha, and l rescaled. */
template <typename F>
__device__ __forceinline__ void pa_tile_keep_fold(pa_softmax_row (&row)[F::rows],
                                                  const float (&tm)[F::rows], float xscale,
                                                  float (&alpha)[F::rows]) {
#pragma unroll
  for (int r = 0; r < F::rows; ++r) {
    pa_tile_softmax_fold_max<F>(row[r], F::row_max(tm[r]), xscale, alpha[r]);
    pa_softmax_rescale(&row[r], alpha[r]);
  }
}

template <typename F, int LOG2_GAIN = 0, bool SUM = true>
__device__ __forceinline__ bool pa_tile_softmax_keep(pa_softmax_row (&row)[F::rows],
                                                     typename F::frag &s, float xscale,
                                                     float keep_log2, float (&alpha)[F::rows]) {
  float tm[F::rows];
  if (!F::any(pa_tile_keep_grows<F>(row, s, xscale, keep_log2, tm))) {
#pragma unroll
    for (int r = 0; r < F::rows; ++r) alpha[r] = 1.0f;
    pa_tile_softmax_accumulate<F, false, LOG2_GAIN, SUM>(row, s, xscale);
    return false;
  }
  pa_tile_keep_fold<F>(row, tm, xscale, alpha);
  pa_tile_softmax_accumulate<F, false, LOG2_GAIN, SUM>(row, s, xscale);
  return true;
}

/* pa_tile_softmax_keep's steps 1-2 alone: the vote, and where it fails m, alpha and l's
 * rescale; s is untouched, and the caller takes step 3 itself (pa_tile_softmax_exp_range,
 * in parts: the Ampere kernel's "-x" rows, decision 142). Returns whether any m moved. */
template <typename F>
__device__ __forceinline__ bool pa_tile_softmax_keep_ref(pa_softmax_row (&row)[F::rows],
                                                         const typename F::frag &s, float xscale,
                                                         float keep_log2,
                                                         float (&alpha)[F::rows]) {
  float tm[F::rows];
  const bool grow = pa_tile_keep_grows<F>(row, s, xscale, keep_log2, tm);
#pragma unroll
  for (int r = 0; r < F::rows; ++r) alpha[r] = 1.0f;
  if (!F::any(grow)) return false;
  pa_tile_keep_fold<F>(row, tm, xscale, alpha);
  return true;
}

/* Step 3 on the element pairs k0 .. k1 - 1 of every row: s becomes p in place, and (SUM)
 * sum[r] gains their sum; the caller adds sum to l once its last part is taken. */
template <typename F, bool SUM = true>
__device__ __forceinline__ void pa_tile_softmax_exp_range(const pa_softmax_row (&row)[F::rows],
                                                          typename F::frag &s, float xscale,
                                                          int k0, int k1,
                                                          float (&sum)[F::rows]) {
#pragma unroll
  for (int r = 0; r < F::rows; ++r) {
    const float ref = pa_softmax_ref(&row[r]) * xscale;
#pragma unroll
    for (int k = k0; k < k1; ++k) {
      F::at(s, r, k, 0) = F::exp2(fmaf(F::at(s, r, k, 0), xscale, -ref));
      F::at(s, r, k, 1) = F::exp2(fmaf(F::at(s, r, k, 1), xscale, -ref));
      if (SUM) sum[r] += F::at(s, r, k, 0) + F::at(s, r, k, 1);
    }
  }
}

/* Step 3 on row r against the reference ref (m xscale, less any gain): s becomes
 * exp2(x xscale - ref) in place; returns (SUM; else 0) the thread's sum of them, added in
 * four interleaved chains: a vote waits for the sum, and a single chain of elems / 2
 * dependent adds put its latency before P.V (at hd64, on the serial kernel: 1.2-2.4% slower
 * than the default, forty-third session). pa_tile_softmax_keep_sum's and
 * pa_tile_softmax_late's. */
template <typename F, bool SUM = true>
__device__ __forceinline__ float pa_tile_row_exp_sum(typename F::frag &s, int r, float xscale,
                                                     float ref) {
  enum { CHAINS = F::elems / 2 < 4 ? F::elems / 2 : 4 };
  float part[CHAINS];
#pragma unroll
  for (int q = 0; q < CHAINS; ++q) part[q] = 0.0f;
#pragma unroll
  for (int k = 0; k < F::elems / 2; ++k) {
    F::at(s, r, k, 0) = F::exp2(fmaf(F::at(s, r, k, 0), xscale, -ref));
    F::at(s, r, k, 1) = F::exp2(fmaf(F::at(s, r, k, 1), xscale, -ref));
    if (SUM) part[k % CHAINS] += F::at(s, r, k, 0) + F::at(s, r, k, 1);
  }
  if constexpr (!SUM) {
    return 0.0f;
  } else {
#pragma unroll
    for (int w = 1; w < CHAINS; w *= 2)
#pragma unroll
      for (int q = 0; q + w < CHAINS; q += 2 * w) part[q] += part[q + w];
    return part[0];
  }
}

/* Steps 1-3 with a kept maximum decided on the row sums, without row maxima (decision
 * 134). Every row's m must be finite (the caller takes the usual steps while any row of
 * the warp is at -inf). s becomes p = exp2(x xscale - m xscale) against the kept m at
 * once; a thread's partial row sum bounds each of its p, so where no thread's sum exceeds
 * 2^keep_log2 (NaN and +inf do) every p <= 2^keep_log2, as pa_tile_softmax_keep's vote
 * guarantees, and m is kept: alpha = 1, l += sum, returns 0. Otherwise the warp finds
 * each row's largest p (over the row's lanes) and, where it is finite, moves the row's
 * reference up by its binary exponent e >= 0: p, the tile's sum, l and (alpha = 2^-e)
 * the caller's O are scaled by a power of two (exact), m += e / xscale; returns 1 if any
 * row moved, else 0. A row whose largest p is +inf (p above 2^128: a score more than 128
 * log2 units above the reference) or NaN has lost its scores: returns 2 with l untouched
 * and s unusable, and the caller recomputes S and takes the usual steps. Costs per
 * element one FFMA, one exponential and one add, where pa_tile_softmax_keep also takes a
 * maximum; the threshold is met more often (a sum of many p near the largest exceeds it
 * sooner), and then the slow steps take the maxima. */
template <typename F>
__device__ __forceinline__ int pa_tile_softmax_keep_sum(pa_softmax_row (&row)[F::rows],
                                                        typename F::frag &s, float xscale,
                                                        float keep_log2, float (&alpha)[F::rows]) {
  float sum[F::rows];
  bool over = false;
  const float bound = exp2f(keep_log2);
#pragma unroll
  for (int r = 0; r < F::rows; ++r) {
    sum[r] = pa_tile_row_exp_sum<F>(s, r, xscale, row[r].m * xscale);
    over |= !(sum[r] <= bound);
  }
  if (!F::any(over)) {
#pragma unroll
    for (int r = 0; r < F::rows; ++r) {
      alpha[r] = 1.0f;
      pa_softmax_accumulate(&row[r], sum[r]);
    }
    return 0;
  }
  float pm[F::rows];
  bool lost = false;
#pragma unroll
  for (int r = 0; r < F::rows; ++r) {
    pm[r] = F::row_max(pa_tile_thread_row_max<F, true>(s, r));
    lost |= !(pm[r] < INFINITY);
  }
  if (F::any(lost)) return 2;
  bool moved = false;
#pragma unroll
  for (int r = 0; r < F::rows; ++r) {
    /* the binary exponent of the largest p (0 for p < 2, so also for a row of zeros), at
     * most 126 so that 2^-e is a normal float (a largest p in [2^127, 2^128) becomes
     * [2, 4)) */
    const int e = min(126, max(0, (int)((__float_as_uint(pm[r]) >> 23) & 0xff) - 127));
    const float sc = __uint_as_float((uint32_t)(127 - e) << 23); /* 2^-e */
    moved |= e != 0;
    alpha[r] = sc;
#pragma unroll
    for (int k = 0; k < F::elems / 2; ++k) {
      F::at(s, r, k, 0) *= sc;
      F::at(s, r, k, 1) *= sc;
    }
    row[r].l = row[r].l * sc + sum[r] * sc;
    row[r].m += (float)e / xscale;
  }
  return F::any(moved) ? 1 : 0;
}

/* The kept maximum decided after the exponentials (decision 140, the FP8 kernel's "-kp"),
 * in two calls; the caller may read s (pack P) between them.
 * pa_tile_softmax_late: step 3 against the kept m at once, with no row maxima before the
 * exponentials. Every row's m must be finite (as for pa_tile_softmax_keep_sum). s becomes
 * 2^LOG2_GAIN p; pmax gets the thread's largest of those per row, and, SUM, sum its
 * partial row sums. */
template <typename F, int LOG2_GAIN = 0, bool SUM = true>
__device__ __forceinline__ void pa_tile_softmax_late(const pa_softmax_row (&row)[F::rows],
                                                     typename F::frag &s, float xscale,
                                                     float (&pmax)[F::rows],
                                                     float (&sum)[F::rows]) {
#pragma unroll
  for (int r = 0; r < F::rows; ++r) {
    const float ref = row[r].m * xscale - (float)LOG2_GAIN;
    const float t = pa_tile_row_exp_sum<F, SUM>(s, r, xscale, ref);
    if (SUM) sum[r] = t;
    pmax[r] = pa_tile_thread_row_max<F, true>(s, r);
  }
}

/* pa_tile_softmax_late_vote: pa_tile_softmax_keep's vote, on the largest p instead of the
 * largest scores. Where no thread's pmax exceeds 2^(keep_log2 + LOG2_GAIN) (NaN and +inf
 * do), m is kept: alpha = 1, SUM: l += sum, returns 0. Otherwise each row over that bound
 * moves its reference up by e >= 1 log2 units (e = its largest p's binary exponent + 1 -
 * LOG2_GAIN - floor(keep_log2), so the largest falls to [2^(LOG2_GAIN + floor(keep_log2) -
 * 1), 2^(LOG2_GAIN + floor(keep_log2))): s, l and sum scale by 2^-e exactly, alpha = 2^-e,
 * m += e / xscale; returns 1 (the caller packs P again and rescales O). A row whose largest
 * p is +inf (a score more than 128 - LOG2_GAIN log2 units above the reference) or NaN has
 * lost its scores: returns 2 with nothing changed, and the caller recomputes S and takes
 * the usual steps. */
template <typename F, int LOG2_GAIN = 0, bool SUM = true>
__device__ __forceinline__ int pa_tile_softmax_late_vote(pa_softmax_row (&row)[F::rows],
                                                         typename F::frag &s, float xscale,
                                                         float keep_log2,
                                                         const float (&pmax)[F::rows],
                                                         const float (&sum)[F::rows],
                                                         float (&alpha)[F::rows]) {
  const float bound = exp2f(keep_log2 + (float)LOG2_GAIN);
  bool over = false;
#pragma unroll
  for (int r = 0; r < F::rows; ++r) over |= !(pmax[r] <= bound);
  if (!F::any(over)) {
#pragma unroll
    for (int r = 0; r < F::rows; ++r) {
      alpha[r] = 1.0f;
      if (SUM) pa_softmax_accumulate(&row[r], sum[r]);
    }
    return 0;
  }
  float pm[F::rows];
  bool lost = false;
#pragma unroll
  for (int r = 0; r < F::rows; ++r) {
    pm[r] = F::row_max(pmax[r]);
    lost |= !(pm[r] < INFINITY);
  }
  if (F::any(lost)) return 2;
  const int drop = 1 - LOG2_GAIN - (int)keep_log2;
#pragma unroll
  for (int r = 0; r < F::rows; ++r) {
    const int x = (int)((__float_as_uint(pm[r]) >> 23) & 0xff) - 127; /* pm's exponent */
    const int e = pm[r] <= bound ? 0 : min(126, x + drop);
    const float sc = __uint_as_float((uint32_t)(127 - e) << 23); /* 2^-e */
    alpha[r] = sc;
#pragma unroll
    for (int k = 0; k < F::elems / 2; ++k) {
      F::at(s, r, k, 0) *= sc;
      F::at(s, r, k, 1) *= sc;
    }
    if (SUM) row[r].l = row[r].l * sc + sum[r] * sc;
    row[r].m += (float)e / xscale;
  }
  return 1;
}

/* Whether any of the thread's rows is still at m = -inf (pa_tile_softmax_keep_sum's
 * callers take the usual steps then). */
template <int R>
__device__ __forceinline__ bool pa_softmax_any_unset(const pa_softmax_row (&row)[R]) {
  bool unset = false;
#pragma unroll
  for (int r = 0; r < R; ++r) unset |= row[r].m == -INFINITY;
  return unset;
}

/* The kept maximum's threshold for 16-bit P (decision 122): p <= 2^8. */
#define PA_SOFTMAX_KEEP_LOG2 8.0f

/* Step 4, normalise: completes l over the row's lanes, scales O (map OF) by 1 / l
 * (0 for a row that kept nothing), and returns each row's natural-log LSE (-inf for
 * such a row). */
template <typename OF>
__device__ __forceinline__ void pa_tile_softmax_normalise(pa_softmax_row (&row)[OF::rows],
                                                          float xscale, typename OF::frag &o,
                                                          float (&lse)[OF::rows]) {
  float inv[OF::rows];
#pragma unroll
  for (int r = 0; r < OF::rows; ++r) {
    row[r].l = OF::row_sum(row[r].l);
    inv[r] = pa_softmax_normaliser(&row[r]);
    pa_softmax_row nat; /* m in natural-log units, for pa_softmax_lse */
    nat.m = row[r].m * xscale * PA_LN2;
    nat.l = row[r].l;
    lse[r] = pa_softmax_lse(&nat);
  }
#pragma unroll
  for (int k = 0; k < OF::elems / 2; ++k)
#pragma unroll
    for (int r = 0; r < OF::rows; ++r) {
      OF::at(o, r, k, 0) *= inv[r];
      OF::at(o, r, k, 1) *= inv[r];
    }
}

#endif
