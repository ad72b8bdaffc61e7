#define _POSIX_C_SOURCE 200809L
#include "timing.h"

#include <stdlib.h>
#include <time.h>

double clock_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double median_of(double *vals, int n) {
  if (n <= 0) return 0.0;
  qsort(vals, (size_t)n, sizeof *vals, cmp_double);
  return n % 2 ? vals[n / 2] : 0.5 * (vals[n / 2 - 1] + vals[n / 2]);
}

/* One call, synchronised on both sides; *ms receives its duration. */
static polyattn_status timed_call(polyattn_context *ctx, timed_fn fn, void *arg, double *ms) {
  polyattn_status st = polyattn_synchronize(ctx);
  if (st != POLYATTN_OK) return st;
  double t0 = clock_seconds();
  st = fn(arg);
  if (st != POLYATTN_OK) return st;
  st = polyattn_synchronize(ctx);
  *ms = (clock_seconds() - t0) * 1e3;
  return st;
}

polyattn_status time_calls(polyattn_context *ctx, timed_fn fn, void *arg,
                           const timing_plan *plan, timing_result *res) {
  int repeat = plan->repeat > 0 ? plan->repeat : 1;
  double last_ms = 0.0;
  for (int i = 0; i < plan->warmup; i++) {
    polyattn_status st = timed_call(ctx, fn, arg, &last_ms);
    if (st != POLYATTN_OK) return st;
  }
  /* Timed from after the first runs, which may include pipeline compilation (a
   * Vulkan driver's first call on the H200 took over 0.5 s). */
  const double warm_until = clock_seconds() + plan->warmup_s;
  while (plan->warmup_s > 0 && clock_seconds() < warm_until) {
    polyattn_status st = timed_call(ctx, fn, arg, &last_ms);
    if (st != POLYATTN_OK) return st;
  }
  if (plan->budget_s > 0 && plan->warmup > 0 && last_ms > 0) {
    if (last_ms > plan->budget_s * 1e3) {
      /* One run is longer than the whole budget: warm-up effects (first touch,
       * thread start) are noise at this length, so that run is the figure. */
      res->runs = 1;
      res->median_ms = res->min_ms = res->max_ms = last_ms;
      return POLYATTN_OK;
    }
    double fit = plan->budget_s * 1e3 / last_ms;
    if (fit < repeat) repeat = fit < 1 ? 1 : (int)fit;
  }
  double *ms = malloc((size_t)repeat * sizeof *ms);
  if (!ms) return POLYATTN_ERR_OUT_OF_MEMORY;
  for (int i = 0; i < repeat; i++) {
    polyattn_status st = timed_call(ctx, fn, arg, &ms[i]);
    if (st != POLYATTN_OK) {
      free(ms);
      return st;
    }
  }
  res->runs = repeat;
  res->median_ms = median_of(ms, repeat); /* sorts */
  res->min_ms = ms[0];
  res->max_ms = ms[repeat - 1];
  free(ms);
  return POLYATTN_OK;
}
