/* polyattn run: one problem on random inputs; its median time, FLOP rate, and
 * its error against the float64 oracle on a sample of rows (check.h). */
#define _POSIX_C_SOURCE 200809L /* setenv: --vs-kernel */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "check.h"
#include "commands.h"
#include "convert.h"
#include "setup.h"
#include "timing.h"

typedef struct run_options {
  attn_config cfg;
  int repeat;
  int check; /* 0: --no-check */
  int vs_dense; /* --vs-dense */
  const char *vs_kernel; /* --vs-kernel NAME */
} run_options;

static void run_usage(void) {
  printf(
      "usage: polyattn run [options]\n"
      "\n"
      "Random inputs (fixed seed), one forward (and backward), timed: warm-up (0.5 s\n"
      "on a GPU), then the median of --repeat runs; FLOP rate by DESIGN.md's count\n"
      "(4*B*Hq*Sq*Sk*D, half when causal, backward 2.5x); error against the float64\n"
      "oracle on the last %d rows of two (batch, head) pairs, judged by DESIGN.md's\n"
      "tolerance rule.\n"
      "\n"
      "  --backend cpu|cuda|hip|vulkan|auto   (auto; env POLYATTN_BACKEND overrides)\n"
      "  --dtype f32|f16|bf16|fp8             (f32; fp8: e4m3 q/k/v, bf16 out)\n"
      "  --batch N --heads N --kv-heads N     (1, 8, = heads)\n"
      "  --seq N | --seq-q N --seq-k N        (2048)\n"
      "  --dim N --dim-v N                    (64, = dim)\n"
      "  --causal  --window L,R  --softcap X  --alibi\n"
      "  --sparsity none|block|auto|2:4       (none)\n"
      "  --density X      block: fraction of blocks kept (0.25)\n"
      "  --threshold X    auto: softmax mass to keep (library default 0.95)\n"
      "  --cutoff X       auto: run dense above this density (library default 0.3; 1: never)\n"
      "  --block N        block size of block/auto masks (64)\n"
      "  --clustered      inputs where each block of keys shares a topic with the\n"
      "                   queries at the same position, so attention is local and\n"
      "                   auto can find a sparse mask (default: i.i.d. normal)\n"
      "  --structured     inputs with peaked attention: a few dominant directions over\n"
      "                   random-length segments plus positional locality (setup.c)\n"
      "  --backward       also time and check the backward\n"
      "  --repeat N       timed runs (10)   --seed N (1)   --threads N (CPU workers)\n"
      "  --no-check       skip the oracle check\n"
      "  --vs-dense       sparse modes: also time the dense forward on the same inputs\n"
      "                   and report the speed-up and the output's error against it\n"
      "  --vs-kernel K    with --vs-dense, CUDA: also time the dense forward with\n"
      "                   POLYATTN_CUDA_KERNEL=K (e.g. ampere) in the same process\n",
      CHECK_ROWS);
}

/* 1: parsed; 0: bad arguments (printed); -1: --help was printed. */
static int parse_run(int argc, char **argv, run_options *o) {
  attn_config *c = &o->cfg;
  attn_config_defaults(c);
  o->repeat = 10;
  o->check = 1;
  o->vs_dense = 0;
  o->vs_kernel = NULL;
  int32_t kv_heads = 0, dim_v = 0;
  arg_cursor a = {argc, argv, 1, NULL};
  for (; a.i < argc; a.i++) {
    double x;
    int64_t n;
    int ok = 1;
    if (arg_is(&a, "--help") || arg_is(&a, "-h")) {
      run_usage();
      return -1;
    } else if (arg_is(&a, "--backend")) {
      ok = arg_parse_backend(arg_value(&a), &c->backend);
    } else if (arg_is(&a, "--dtype")) {
      ok = arg_parse_dtype(arg_value(&a), &c->dtype);
    } else if (arg_is(&a, "--batch")) {
      ok = arg_parse_i32("--batch", arg_value(&a), 1, 1 << 20, &c->batch);
    } else if (arg_is(&a, "--heads")) {
      ok = arg_parse_i32("--heads", arg_value(&a), 1, 4096, &c->heads);
    } else if (arg_is(&a, "--kv-heads")) {
      ok = arg_parse_i32("--kv-heads", arg_value(&a), 1, 4096, &kv_heads);
    } else if (arg_is(&a, "--seq-q")) {
      ok = arg_parse_i32("--seq-q", arg_value(&a), 1, 1 << 24, &c->seq_q);
    } else if (arg_is(&a, "--seq-k")) {
      ok = arg_parse_i32("--seq-k", arg_value(&a), 0, 1 << 24, &c->seq_k);
    } else if (arg_is(&a, "--seq")) {
      ok = arg_parse_i32("--seq", arg_value(&a), 1, 1 << 24, &c->seq_q);
      c->seq_k = c->seq_q;
    } else if (arg_is(&a, "--dim-v")) {
      ok = arg_parse_i32("--dim-v", arg_value(&a), 1, POLYATTN_MAX_HEAD_DIM, &dim_v);
    } else if (arg_is(&a, "--dim")) {
      ok = arg_parse_i32("--dim", arg_value(&a), 1, POLYATTN_MAX_HEAD_DIM, &c->dim);
    } else if (arg_is(&a, "--causal")) {
      c->causal = 1;
    } else if (arg_is(&a, "--window")) {
      ok = arg_parse_window("--window", arg_value(&a), &c->window_left, &c->window_right);
    } else if (arg_is(&a, "--softcap")) {
      ok = arg_parse_float("--softcap", arg_value(&a), 0, 1e6, &x);
      c->softcap = (float)x;
    } else if (arg_is(&a, "--alibi")) {
      c->alibi = 1;
    } else if (arg_is(&a, "--sparsity")) {
      ok = arg_parse_sparsity(arg_value(&a), &c->sparsity);
    } else if (arg_is(&a, "--density")) {
      ok = arg_parse_float("--density", arg_value(&a), 0, 1, &c->density);
    } else if (arg_is(&a, "--threshold")) {
      ok = arg_parse_float("--threshold", arg_value(&a), 0, 1, &c->threshold);
    } else if (arg_is(&a, "--cutoff")) {
      ok = arg_parse_float("--cutoff", arg_value(&a), 0, 1, &c->cutoff);
    } else if (arg_is(&a, "--block")) {
      ok = arg_parse_i32("--block", arg_value(&a), 1, 1 << 16, &c->block);
    } else if (arg_is(&a, "--backward")) {
      c->backward = 1;
    } else if (arg_is(&a, "--repeat")) {
      ok = arg_parse_i32("--repeat", arg_value(&a), 1, 100000, &o->repeat);
    } else if (arg_is(&a, "--seed")) {
      ok = arg_parse_int("--seed", arg_value(&a), 0, INT64_MAX, &n);
      c->seed = (uint64_t)n;
    } else if (arg_is(&a, "--threads")) {
      ok = arg_parse_i32("--threads", arg_value(&a), 0, 4096, &c->threads);
    } else if (arg_is(&a, "--clustered")) {
      c->clustered = 1;
    } else if (arg_is(&a, "--structured")) {
      c->clustered = 2;
    } else if (arg_is(&a, "--no-check")) {
      o->check = 0;
    } else if (arg_is(&a, "--vs-dense")) {
      o->vs_dense = 1;
    } else if (arg_is(&a, "--vs-kernel")) {
      o->vs_kernel = arg_value(&a);
      ok = o->vs_kernel != NULL;
    } else {
      return arg_unknown("run", argv[a.i]);
    }
    if (!ok) return 0;
  }
  c->kv_heads = kv_heads ? kv_heads : c->heads;
  c->dim_v = dim_v ? dim_v : c->dim;
  if (c->heads % c->kv_heads != 0) {
    /* The library would say so too; the check's sampling also relies on it. */
    fprintf(stderr, "polyattn run: --heads %d is not a multiple of --kv-heads %d\n", c->heads,
            c->kv_heads);
    return 0;
  }
  return 1;
}

/* --vs-dense: the same inputs (same seed and shapes) run dense; the sparse run's
 * speed-up over it and its output's error against dense attention: the largest
 * absolute difference and the relative Frobenius error ||O - O_dense|| / ||O_dense||. */
static int compare_with_dense(polyattn_context *ctx, const attn_run *sparse,
                              const timing_plan *plan, double sparse_ms, const char *kernel) {
  attn_config dc = sparse->cfg;
  dc.sparsity = POLYATTN_SPARSITY_NONE;
  dc.backward = 0;
  attn_run d;
  timing_result t;
  int ok = 0;
  polyattn_status st = attn_run_setup(&d, ctx, &dc);
  if (st == POLYATTN_OK) st = time_calls(ctx, attn_forward, &d, plan, &t);
  if (st == POLYATTN_OK) st = attn_read_forward(&d);
  if (st != POLYATTN_OK) {
    fprintf(stderr, "polyattn: the dense run failed: %s: %s\n", polyattn_status_string(st),
            polyattn_last_error(ctx));
  } else {
    const attn_config *c = &sparse->cfg;
    int64_t no = (int64_t)c->batch * c->seq_q * c->heads * c->dim_v;
    double max_diff = 0, num = 0, den = 0;
    for (int64_t i = 0; i < no; i++) {
      double a = pa_load_f32(sparse->host.o, i, c->dtype), b = pa_load_f32(d.host.o, i, c->dtype);
      if (fabs(a - b) > max_diff || a != a) max_diff = a != a ? NAN : fabs(a - b);
      num += (a - b) * (a - b);
      den += b * b;
    }
    printf("vs dense%s%s  %10.3f ms  (median of %d)  speed-up %.3fx  max |O - O_dense| %.3g  "
           "rel. error %.3g\n",
           kernel ? " on " : "", kernel ? kernel : "", t.median_ms, t.runs, t.median_ms / sparse_ms, max_diff, den > 0 ? sqrt(num / den) : 0.0);
    ok = 1;
  }
  attn_run_free(&d);
  return ok;
}

static void print_timing(const char *what, const timing_result *t, double flops) {
  char rate[32];
  printf("%-9s %10.3f ms  (median of %d; min %.3f, max %.3f)  %s\n", what, t->median_ms,
         t->runs, t->min_ms, t->max_ms, cli_rate(flops / (t->median_ms * 1e-3), rate, sizeof rate));
}

int cmd_run(int argc, char **argv) {
  run_options o;
  int parsed = parse_run(argc, argv, &o);
  if (parsed <= 0) return parsed < 0 ? 0 : 2;
  const attn_config *c = &o.cfg;

  polyattn_context *ctx = cli_context(c->backend, c->threads);
  if (!ctx) return 1;
  printf("polyattn %s  backend %s  device %s\n", polyattn_version_string(),
         polyattn_backend_name(polyattn_context_backend(ctx)), polyattn_context_device_name(ctx));
  attn_config_print(c);

  int status = 1;
  attn_run r;
  check_report rep;
  memset(&rep, 0, sizeof rep);
  /* GPU backends warm up for 0.5 s (timing.h: clocks ramp up under load). */
  const int on_cpu = polyattn_context_backend(ctx) == POLYATTN_BACKEND_CPU;
  timing_plan plan = {.warmup = 1, .warmup_s = on_cpu ? 0 : 0.5, .repeat = o.repeat, .budget_s = 0};
  timing_result fwd, bwd;
  polyattn_status st = attn_run_setup(&r, ctx, c);
  if (st != POLYATTN_OK) goto done;
  st = time_calls(ctx, attn_forward, &r, &plan, &fwd);
  if (st != POLYATTN_OK) {
    fprintf(stderr, "polyattn: polyattn_forward failed: %s: %s\n", polyattn_status_string(st),
            polyattn_last_error(ctx));
    goto done;
  }
  double flops = attn_forward_flops(c);
  print_timing("forward", &fwd, flops);
  if (attn_read_forward(&r) != POLYATTN_OK) goto done;
  /* AUTO_BLOCK: what the reference estimator chose; the backward follows it. */
  const uint8_t *sparse_mask = NULL;
  int per_head = 0;
  if (c->sparsity == POLYATTN_SPARSITY_AUTO_BLOCK) {
    if (!check_resolve_auto(&r, &rep)) goto done;
    printf("          auto: the estimator keeps %.1f%% of the allowed blocks -> %s "
           "(the backend's mask differs in %lld blocks)\n",
           100 * rep.auto_density, rep.auto_dense ? "runs dense" : "block-sparse",
           rep.auto_mask_diff);
    if (!rep.auto_dense) sparse_mask = rep.auto_mask, per_head = 1;
  } else if (c->sparsity == POLYATTN_SPARSITY_BLOCK) {
    sparse_mask = r.host.mask;
  }
  double work = 1.0; /* fraction of the counted work actually done */
  if (sparse_mask) {
    char rate[32];
    work = attn_kept_pairs(&r, sparse_mask, per_head) * c->batch * c->heads *
           (c->dim + c->dim_v) * 2.0 / flops;
    printf("          the block mask keeps %.1f%% of that work: %s on the work done\n",
           100 * work, cli_rate(flops * work / (fwd.median_ms * 1e-3), rate, sizeof rate));
  }

  if (o.vs_dense && c->sparsity != POLYATTN_SPARSITY_NONE &&
      !compare_with_dense(ctx, &r, &plan, fwd.median_ms, NULL))
    goto done;
  if (o.vs_dense && o.vs_kernel && c->sparsity != POLYATTN_SPARSITY_NONE) {
    /* the CUDA backend reads POLYATTN_CUDA_KERNEL at each call */
    const char *old = getenv("POLYATTN_CUDA_KERNEL");
    char *saved = old ? strdup(old) : NULL;
    setenv("POLYATTN_CUDA_KERNEL", o.vs_kernel, 1);
    const int ok = compare_with_dense(ctx, &r, &plan, fwd.median_ms, o.vs_kernel);
    if (saved) setenv("POLYATTN_CUDA_KERNEL", saved, 1);
    else unsetenv("POLYATTN_CUDA_KERNEL");
    free(saved);
    if (!ok) goto done;
  }

  if (c->backward) {
    st = time_calls(ctx, attn_backward, &r, &plan, &bwd);
    if (st != POLYATTN_OK) {
      fprintf(stderr, "polyattn: polyattn_backward failed: %s: %s\n",
              polyattn_status_string(st), polyattn_last_error(ctx));
      goto done;
    }
    print_timing("backward", &bwd, 2.5 * flops);
    if (sparse_mask) {
      char rate[32];
      printf("          %s on the work done\n",
             cli_rate(2.5 * flops * work / (bwd.median_ms * 1e-3), rate, sizeof rate));
    }
    if (attn_read_backward(&r) != POLYATTN_OK) goto done;
  }

  if (!o.check) {
    status = 0;
    goto done;
  }
  if (!check_run(&r, &rep)) goto done;
  check_print(&r, &rep);
  /* Outside the tolerance is reported, not fatal; NaN or a broken result is. */
  status = rep.hopeless ? 1 : 0;
done:
  check_report_free(&rep);
  attn_run_free(&r);
  polyattn_context_destroy(ctx);
  return status;
}
