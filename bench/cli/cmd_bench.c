/* polyattn bench: DESIGN.md's standard sweep ("Performance method").
 *
 * For each head dim D, sequence length S and causal setting: B = tokens / S,
 * Hq = Hkv = hidden / D, bf16 by default; warm-up, then the median of --repeat
 * runs. On the CPU backend the runs of a config are cut to about `cpu_budget_s`
 * (at least one after the warm-up; a warm-up longer than that is the figure by
 * itself), so the full sweep ends in minutes rather than hours; GPU backends
 * always do --repeat runs. A table goes to stdout as configs
 * finish, a progress line to stderr, and one JSON object per config to --json
 * FILE (or to stdout after the table). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "commands.h"
#include "setup.h"
#include "timing.h"

enum { MAX_LIST = 16 };
static const double cpu_budget_s = 3.0;

typedef struct bench_options {
  polyattn_backend_kind backend;
  polyattn_dtype dtype;
  int32_t dims[MAX_LIST], seqs[MAX_LIST];
  int ndims, nseqs;
  int causal_on, causal_off;
  int32_t tokens, hidden, repeat, threads;
  const char *json_path;
} bench_options;

typedef struct bench_result {
  int32_t dim, seq, batch, heads;
  int causal;
  polyattn_status status;
  timing_result t;
  double tflops;
} bench_result;

static void bench_usage(void) {
  printf("usage: polyattn bench [options]\n"
         "\n"
         "DESIGN.md's standard sweep: B*S = tokens, Hq = hidden / D. Each config: one\n"
         "warm-up run (on a GPU, warm-up runs for 0.5 s), then the median of --repeat\n"
         "runs (on the CPU, fewer for long configs: about %.0f s each; a warm-up longer\n"
         "than that is the figure).\n"
         "\n"
         "  --backend cpu|cuda|hip|vulkan|auto  (auto)\n"
         "  --dtype f32|f16|bf16|fp8            (bf16; fp8: e4m3 q/k/v, bf16 out)\n"
         "  --dims LIST                         (64,128,256)\n"
         "  --seqs LIST                         (512,1024,2048,4096,8192,16384)\n"
         "  --causal both|on|off                (both)\n"
         "  --tokens N                          (16384)\n"
         "  --hidden N                          (2048)\n"
         "  --repeat N                          (20)\n"
         "  --threads N                         (CPU workers; library default)\n"
         "  --json FILE                         JSON lines there instead of stdout\n"
         "  --quick   a small subset for a CPU smoke test: D 64, S 512,1024,2048,\n"
         "            4096 tokens, hidden 512, repeat 5 (other options still apply)\n",
         cpu_budget_s);
}

static void bench_defaults(bench_options *o, int quick) {
  static const int32_t dims[] = {64, 128, 256};
  static const int32_t seqs[] = {512, 1024, 2048, 4096, 8192, 16384};
  memset(o, 0, sizeof *o);
  o->backend = POLYATTN_BACKEND_AUTO;
  o->dtype = POLYATTN_DTYPE_BF16;
  o->causal_on = o->causal_off = 1;
  if (quick) {
    o->dims[0] = 64;
    o->ndims = 1;
    o->seqs[0] = 512, o->seqs[1] = 1024, o->seqs[2] = 2048;
    o->nseqs = 3;
    o->tokens = 4096;
    o->hidden = 512;
    o->repeat = 5;
    return;
  }
  memcpy(o->dims, dims, sizeof dims);
  o->ndims = 3;
  memcpy(o->seqs, seqs, sizeof seqs);
  o->nseqs = 6;
  o->tokens = 16384;
  o->hidden = 2048;
  o->repeat = 20;
}

/* 1: parsed; 0: bad arguments; -1: --help printed. */
static int parse_bench(int argc, char **argv, bench_options *o) {
  int quick = 0;
  for (int i = 1; i < argc; i++) quick |= !strcmp(argv[i], "--quick");
  bench_defaults(o, quick);
  arg_cursor a = {argc, argv, 1, NULL};
  for (; a.i < argc; a.i++) {
    int ok = 1;
    if (arg_is(&a, "--help") || arg_is(&a, "-h")) {
      bench_usage();
      return -1;
    } else if (arg_is(&a, "--quick")) {
      /* applied above, so explicit options override it in any order */
    } else if (arg_is(&a, "--backend")) {
      ok = arg_parse_backend(arg_value(&a), &o->backend);
    } else if (arg_is(&a, "--dtype")) {
      ok = arg_parse_dtype(arg_value(&a), &o->dtype);
    } else if (arg_is(&a, "--dims")) {
      ok = arg_parse_list("--dims", arg_value(&a), 1, POLYATTN_MAX_HEAD_DIM, o->dims, MAX_LIST,
                          &o->ndims);
    } else if (arg_is(&a, "--seqs")) {
      ok = arg_parse_list("--seqs", arg_value(&a), 1, 1 << 24, o->seqs, MAX_LIST, &o->nseqs);
    } else if (arg_is(&a, "--causal")) {
      const char *v = arg_value(&a);
      ok = v && (!strcmp(v, "both") || !strcmp(v, "on") || !strcmp(v, "off"));
      if (ok) {
        o->causal_on = strcmp(v, "off") != 0;
        o->causal_off = strcmp(v, "on") != 0;
      } else if (v) {
        fprintf(stderr, "polyattn bench: --causal: '%s' is not one of both, on, off\n", v);
      }
    } else if (arg_is(&a, "--tokens")) {
      ok = arg_parse_i32("--tokens", arg_value(&a), 1, 1 << 26, &o->tokens);
    } else if (arg_is(&a, "--hidden")) {
      ok = arg_parse_i32("--hidden", arg_value(&a), 1, 1 << 20, &o->hidden);
    } else if (arg_is(&a, "--repeat")) {
      ok = arg_parse_i32("--repeat", arg_value(&a), 1, 100000, &o->repeat);
    } else if (arg_is(&a, "--threads")) {
      ok = arg_parse_i32("--threads", arg_value(&a), 0, 4096, &o->threads);
    } else if (arg_is(&a, "--json")) {
      o->json_path = arg_value(&a);
      ok = o->json_path != NULL;
    } else {
      return arg_unknown("bench", argv[a.i]);
    }
    if (!ok) return 0;
  }
  return 1;
}

/* A JSON string: the device name may hold anything. */
static void json_string(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\')
      fprintf(f, "\\%c", ch);
    else if (ch < 0x20)
      fprintf(f, "\\u%04x", ch);
    else
      fputc(ch, f);
  }
  fputc('"', f);
}

static void json_line(FILE *f, const char *backend, const char *device, polyattn_dtype dt,
                      const bench_result *b) {
  fprintf(f, "{\"backend\":");
  json_string(f, backend);
  fprintf(f, ",\"device\":");
  json_string(f, device);
  fprintf(f, ",\"dtype\":\"%s\",\"head_dim\":%d,\"causal\":%s,\"seq\":%d,\"batch\":%d,"
             "\"heads\":%d",
          polyattn_dtype_name(dt), b->dim, b->causal ? "true" : "false", b->seq, b->batch,
          b->heads);
  if (b->status == POLYATTN_OK)
    fprintf(f, ",\"ms\":%.4f,\"tflops\":%.5f,\"runs\":%d}\n", b->t.median_ms, b->tflops,
            b->t.runs);
  else
    fprintf(f, ",\"error\":\"%s\"}\n", polyattn_status_string(b->status));
}

/* Time one config; prints why it failed. */
static void bench_one(polyattn_context *ctx, const bench_options *o, bench_result *b,
                      int is_cpu) {
  attn_config c;
  attn_config_defaults(&c);
  c.backend = o->backend;
  c.dtype = o->dtype;
  c.batch = b->batch;
  c.heads = c.kv_heads = b->heads;
  c.seq_q = c.seq_k = b->seq;
  c.dim = c.dim_v = b->dim;
  c.causal = b->causal;
  attn_run r;
  b->status = attn_run_setup(&r, ctx, &c);
  if (b->status == POLYATTN_OK) {
    timing_plan plan = {.warmup = 1, .warmup_s = is_cpu ? 0 : 0.5, .repeat = o->repeat,
                        .budget_s = is_cpu ? cpu_budget_s : 0};
    b->status = time_calls(ctx, attn_forward, &r, &plan, &b->t);
    if (b->status != POLYATTN_OK)
      fprintf(stderr, "\npolyattn: polyattn_forward failed (D=%d S=%d): %s: %s\n", b->dim,
              b->seq, polyattn_status_string(b->status), polyattn_last_error(ctx));
    else
      b->tflops = attn_forward_flops(&c) / (b->t.median_ms * 1e-3) * 1e-12;
  }
  attn_run_free(&r);
}

int cmd_bench(int argc, char **argv) {
  bench_options o;
  int parsed = parse_bench(argc, argv, &o);
  if (parsed <= 0) return parsed < 0 ? 0 : 2;
  polyattn_context *ctx = cli_context(o.backend, o.threads);
  if (!ctx) return 1;
  const char *backend = polyattn_backend_name(polyattn_context_backend(ctx));
  const char *device = polyattn_context_device_name(ctx);
  int is_cpu = polyattn_context_backend(ctx) == POLYATTN_BACKEND_CPU;
  int ncausal = o.causal_off + o.causal_on, total = o.ndims * o.nseqs * ncausal;
  bench_result *res = calloc((size_t)total, sizeof *res);
  if (!res) {
    polyattn_context_destroy(ctx);
    return 1;
  }
  int tty = isatty(STDERR_FILENO);

  printf("polyattn %s  backend %s  device %s  dtype %s  tokens %d  hidden %d\n",
         polyattn_version_string(), backend, device, polyattn_dtype_name(o.dtype), o.tokens,
         o.hidden);
  printf("%5s %7s %6s %6s %6s %11s %5s %10s\n", "D", "causal", "S", "B", "H", "ms", "runs",
         "TFLOP/s");
  fflush(stdout);
  int n = 0, failed = 0;
  for (int d = 0; d < o.ndims; d++)
    for (int cz = 0; cz < 2; cz++) {
      if ((cz == 0 && !o.causal_off) || (cz == 1 && !o.causal_on)) continue;
      for (int s = 0; s < o.nseqs; s++) {
        bench_result *b = &res[n++];
        b->dim = o.dims[d];
        b->seq = o.seqs[s];
        b->causal = cz;
        b->batch = o.tokens / b->seq > 0 ? o.tokens / b->seq : 1;
        b->heads = o.hidden / b->dim > 0 ? o.hidden / b->dim : 1;
        fprintf(stderr, "%s[%d/%d] D=%d causal=%d S=%d B=%d H=%d ...%s", tty ? "\r\033[K" : "",
                n, total, b->dim, cz, b->seq, b->batch, b->heads, tty ? "" : "\n");
        bench_one(ctx, &o, b, is_cpu);
        if (tty) fprintf(stderr, "\r\033[K");
        if (b->status == POLYATTN_OK) {
          printf("%5d %7s %6d %6d %6d %11.3f %5d %10.4f\n", b->dim, cz ? "yes" : "no", b->seq,
                 b->batch, b->heads, b->t.median_ms, b->t.runs, b->tflops);
        } else {
          printf("%5d %7s %6d %6d %6d  failed: %s\n", b->dim, cz ? "yes" : "no", b->seq,
                 b->batch, b->heads, polyattn_status_string(b->status));
          failed++;
        }
        fflush(stdout);
      }
    }

  FILE *jf = stdout;
  if (o.json_path) {
    jf = fopen(o.json_path, "w");
    if (!jf) {
      perror(o.json_path);
      failed++;
    }
  } else {
    printf("\n");
  }
  if (jf) {
    for (int i = 0; i < n; i++) json_line(jf, backend, device, o.dtype, &res[i]);
    if (jf != stdout) fclose(jf);
  }
  free(res);
  polyattn_context_destroy(ctx);
  return failed ? 1 : 0;
}
