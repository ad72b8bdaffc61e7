/* fma_peak: this machine's fp32 FMA peak, one core and all cores.
 *
 * The CPU backend's target is stated as a fraction of this figure (issue 2:
 * forward fp32 >= 30% of the per-core peak), so it must be measured, not taken
 * from a datasheet. Each thread runs ACC independent accumulator chains of
 * acc = acc * a + b; ACC is larger than (FMA latency x FMA ports) on current
 * x86 and Arm cores, so the chains never wait on each other and the ports stay
 * full. The widest vector path the CPU supports is chosen at run time
 * (__builtin_cpu_supports); the generic path uses 4-wide vectors that any
 * target can lower. Counted flops: 2 per lane per FMA.
 *
 * Usage: fma_peak [--seconds S] [--threads N]   (defaults: 1 s per phase, all cores) */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { ACC = 16 }; /* independent chains per thread */

typedef double (*kernel_fn)(long iters);

/* One kernel per vector width. The loop body is written with GCC vector
 * extensions; -ffp-contract=fast (set for this file in CMake) turns a * b + c
 * into one FMA instruction where the target has it. */
#define DEFINE_KERNEL(NAME, TARGET, BYTES)                                         \
  TARGET static double NAME(long iters) {                                          \
    typedef float vec __attribute__((vector_size(BYTES)));                         \
    enum { LANES = BYTES / 4 };                                                    \
    vec acc[ACC];                                                                  \
    vec a, b;                                                                      \
    for (int l = 0; l < LANES; l++) {                                              \
      a[l] = 0.9999999f;                                                           \
      b[l] = 1e-7f;                                                                \
    }                                                                              \
    for (int k = 0; k < ACC; k++)                                                  \
      for (int l = 0; l < LANES; l++) acc[k][l] = (float)(k + l);                  \
    for (long it = 0; it < iters; it++) {                                         \
      _Pragma("GCC unroll 16") for (int k = 0; k < ACC; k++) acc[k] = acc[k] * a + b; \
    }                                                                              \
    double sum = 0;                                                                \
    for (int k = 0; k < ACC; k++)                                                  \
      for (int l = 0; l < LANES; l++) sum += acc[k][l];                            \
    return sum;                                                                    \
  }

#if defined(__x86_64__) || defined(__i386__)
DEFINE_KERNEL(kernel_avx512, __attribute__((target("avx512f,fma"))), 64)
DEFINE_KERNEL(kernel_avx2, __attribute__((target("avx2,fma"))), 32)
#endif
DEFINE_KERNEL(kernel_generic, , 16)

typedef struct path {
  const char *name;
  kernel_fn fn;
  int lanes;
} path;

static path pick_path(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return (path){"avx512", kernel_avx512, 16};
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return (path){"avx2+fma", kernel_avx2, 8};
#endif
  return (path){"generic (4-wide)", kernel_generic, 4};
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct worker {
  pthread_t thread;
  kernel_fn fn;
  long iters;
  pthread_barrier_t *start;
  double sink;
} worker;

static void *worker_main(void *arg) {
  worker *w = arg;
  pthread_barrier_wait(w->start);
  w->sink = w->fn(w->iters);
  return NULL;
}

/* Run `threads` copies of the kernel for `iters` iterations; returns GFLOP/s. */
static double measure(const path *pt, int threads, long iters) {
  worker *ws = calloc((size_t)threads, sizeof *ws);
  pthread_barrier_t start;
  if (!ws) return 0;
  pthread_barrier_init(&start, NULL, (unsigned)threads + 1);
  for (int t = 0; t < threads; t++) {
    ws[t] = (worker){.fn = pt->fn, .iters = iters, .start = &start};
    pthread_create(&ws[t].thread, NULL, worker_main, &ws[t]);
  }
  pthread_barrier_wait(&start);
  double t0 = now_s();
  double sink = 0;
  for (int t = 0; t < threads; t++) {
    pthread_join(ws[t].thread, NULL);
    sink += ws[t].sink;
  }
  double dt = now_s() - t0;
  pthread_barrier_destroy(&start);
  free(ws);
  if (sink == 12345.678) puts(""); /* use the result */
  double flops = 2.0 * ACC * pt->lanes * (double)iters * threads;
  return flops / dt * 1e-9;
}

/* Iterations that take about `seconds` on one thread. */
static long calibrate(const path *pt, double seconds) {
  long iters = 1 << 16;
  for (;;) {
    double t0 = now_s();
    volatile double sink = pt->fn(iters);
    (void)sink;
    double dt = now_s() - t0;
    if (dt > 0.05) return (long)((double)iters * seconds / dt) + 1;
    iters *= 4;
  }
}

/* Best of `trials` runs: the peak is what the hardware can do, so noise from
 * other processes only lowers a sample. */
static double best_of(const path *pt, int threads, long iters, int trials) {
  double best = 0;
  for (int i = 0; i < trials; i++) {
    double g = measure(pt, threads, iters);
    if (g > best) best = g;
  }
  return best;
}

int main(int argc, char **argv) {
  double seconds = 1.0;
  int threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--seconds") && i + 1 < argc) {
      seconds = atof(argv[++i]);
    } else if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
      threads = atoi(argv[++i]);
    } else {
      fprintf(stderr, "usage: %s [--seconds S] [--threads N]\n", argv[0]);
      return strcmp(argv[i], "--help") && strcmp(argv[i], "-h") ? 2 : 0;
    }
  }
  if (threads < 1) threads = 1;
  if (seconds <= 0) seconds = 1.0;

  path pt = pick_path();
  long iters = calibrate(&pt, seconds);
  double one = best_of(&pt, 1, iters, 3);
  double all = best_of(&pt, threads, iters, 3);
  printf("fp32 FMA peak (%s, %d chains x %d lanes per thread)\n", pt.name, ACC, pt.lanes);
  printf("  1 core:   %8.1f GFLOP/s\n", one);
  printf("  %d cores: %8.1f GFLOP/s  (%.1f per core)\n", threads, all, all / threads);
  return 0;
}
