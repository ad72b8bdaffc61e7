/* Wall-clock timing of attention calls: warm-up, then the median of N runs.
 *
 * Each run is bracketed by polyattn_synchronize, so a GPU backend's queued work is
 * inside the measurement (device-event timing replaces this in the CUDA issue).
 * The CPU backend returns when done; synchronising costs nothing there. */
#ifndef CLI_TIMING_H
#define CLI_TIMING_H

#include "polyattn.h"

/* Seconds on CLOCK_MONOTONIC. */
double clock_seconds(void);

/* One timed call: returns its status. */
typedef polyattn_status (*timed_fn)(void *arg);

typedef struct timing_plan {
  int warmup;         /* untimed runs first (>= 0) */
  double warmup_s;    /* > 0: then more untimed runs until this long has passed: a GPU
                         left idle runs at low clocks for its first ~100 ms of work
                         (measured on the H200 under Vulkan: 4.4x slower runs) */
  int repeat;         /* timed runs wanted (>= 1) */
  double budget_s;    /* > 0: cut `repeat` so the timed runs take about this long,
                         judged from the last warm-up run (never below 1 run); a
                         warm-up run longer than the budget is itself the result */
} timing_plan;

typedef struct timing_result {
  double median_ms, min_ms, max_ms;
  int runs; /* timed runs done */
} timing_result;

/* Run fn per `plan`; on failure returns the first non-OK status. */
polyattn_status time_calls(polyattn_context *ctx, timed_fn fn, void *arg,
                           const timing_plan *plan, timing_result *res);

/* The median of n values (sorts them in place). */
double median_of(double *vals, int n);

#endif
