/* plan, forward and backward of the CPU backend: the workspace layout (the one
 * place that decides tile shape and support), the instruction-set choice, and the
 * parallel passes over the kernels of kernel_forward.c / kernel_backward.c. */
#include <stdlib.h>
#include <string.h>

#include "cpu_internal.h"
#include "oracle.h"

const pa_cpu_isa *pa_cpu_isa_select(void) {
  const char *want = getenv("POLYATTN_CPU_ISA");
  const pa_cpu_isa *best = &pa_cpu_isa_generic;
#ifdef PA_CPU_HAVE_X86
  __builtin_cpu_init();
  int avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  int avx512 = avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
               __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
  if (avx512) best = &pa_cpu_isa_avx512;
  else if (avx2) best = &pa_cpu_isa_avx2;
  if (want && !strcmp(want, "avx2") && avx2) best = &pa_cpu_isa_avx2;
#endif
  if (want && !strcmp(want, "generic")) best = &pa_cpu_isa_generic;
  return best;
}

static size_t round_up(size_t x, size_t m) { return (x + m - 1) / m * m; }

void pa_cpu_layout_make(const pa_cpu_ctx *ctx, const pa_problem *p, pa_cpu_layout *lay) {
  const pa_cpu_isa *isa = ctx->isa;
  memset(lay, 0, sizeof *lay);
  pa_device_desc dev;
  memset(&dev, 0, sizeof dev);
  dev.cls = PA_DEVICE_CPU;
  dev.compute_units = ctx->threads;
  dev.simd_width = isa->vl;
  dev.fast_mem_bytes = ctx->l2_bytes;
  /* The microkernel's shape plays the matrix unit: rows in multiples of MR, keys in
   * multiples of NR (whole vectors, whole 2:4 groups). */
  dev.mma_m = isa->mr;
  dev.mma_n = isa->nr;
  dev.max_threads = 1;
  dev.prefer_block_q = isa->prefer_block_q;
  dev.prefer_block_k = isa->prefer_block_k;
  lay->tiles = pa_plan_tiles(&dev, p);
  if (p->pass == PA_PASS_BACKWARD) lay->tiles.num_splits = 1;
  lay->dp = (int32_t)round_up((size_t)p->head_dim, (size_t)isa->vl);
  lay->dvp = (int32_t)round_up((size_t)p->head_dim_v, (size_t)isa->vl);

  const int32_t bq = lay->tiles.block_q;
  lay->scratch_per_thread = round_up(isa->scratch_bytes(p, lay), PA_CPU_ALIGN);
  size_t at = 0;
  lay->off_scratch = at;
  at += (size_t)ctx->threads * lay->scratch_per_thread;

  if (p->sparsity == POLYATTN_SPARSITY_AUTO_BLOCK) {
    lay->mask_bytes = (size_t)pa_auto_block_mask_bytes(p);
    lay->off_mask = at;
    at = round_up(at + lay->mask_bytes, PA_CPU_ALIGN);
  }
  size_t row_floats = (size_t)p->heads_q * (size_t)p->total_q;
  if (p->pass == PA_PASS_BACKWARD) {
    lay->off_stats = at;
    at = round_up(at + 3 * row_floats * sizeof(float), PA_CPU_ALIGN);
  } else if (lay->tiles.num_splits > 1) {
    int64_t qtiles = ((int64_t)p->seqlen_q + bq - 1) / bq;
    lay->part_bytes = (size_t)p->batch * (size_t)p->heads_q * (size_t)qtiles *
                      (size_t)lay->tiles.num_splits * (size_t)bq * (size_t)(2 + lay->dvp) *
                      sizeof(float);
    lay->off_part = at;
    at = round_up(at + lay->part_bytes, PA_CPU_ALIGN);
  }
  lay->total = at;
}

/* Every mask, sparsity mode, layout and head size is computed; only the dtype can
 * be out of reach. */
static int cpu_supported(const pa_problem *p, pa_error *err) {
  if (p->dtype == POLYATTN_DTYPE_F32 || p->dtype == POLYATTN_DTYPE_F16 ||
      p->dtype == POLYATTN_DTYPE_BF16)
    return 1;
  pa_fail(err, POLYATTN_ERR_UNSUPPORTED,
          "dtype %s: the CPU backend computes F32, F16 and BF16 (fp8_e4m3: CUDA on Hopper only)",
          polyattn_dtype_name(p->dtype));
  return 0;
}

polyattn_status pa_cpu_plan(void *bctx, const pa_problem *p, size_t *workspace_bytes,
                            pa_error *err) {
  if (!cpu_supported(p, err)) return POLYATTN_ERR_UNSUPPORTED;
  pa_cpu_layout lay;
  pa_cpu_layout_make((const pa_cpu_ctx *)bctx, p, &lay);
  *workspace_bytes = lay.total;
  return POLYATTN_OK;
}

/* Run one kernel over [0, count) on the context's pool. */
typedef void (*pa_cpu_kernel)(const pa_cpu_job *job, int64_t task, int thread);
typedef struct pa_cpu_pass {
  const pa_cpu_job *job;
  pa_cpu_kernel kernel;
} pa_cpu_pass;

static void run_pass_task(void *arg, int64_t task, int thread) {
  const pa_cpu_pass *pass = (const pa_cpu_pass *)arg;
  pass->kernel(pass->job, task, thread);
}

static void run_pass(const pa_cpu_ctx *ctx, const pa_cpu_job *job, pa_cpu_kernel kernel,
                     int64_t count) {
  pa_cpu_pass pass = {job, kernel};
  pa_threadpool_parallel_for(ctx->pool, count, run_pass_task, &pass);
}

/* Common set-up: check the workspace, resolve AUTO_BLOCK into `resolved`, fill job. */
static polyattn_status job_begin(const pa_cpu_ctx *ctx, const pa_problem *p,
                                 const struct polyattn_buffer *workspace, pa_problem *resolved,
                                 pa_cpu_job *job, pa_error *err) {
  if (!cpu_supported(p, err)) return POLYATTN_ERR_UNSUPPORTED;
  memset(job, 0, sizeof *job);
  pa_cpu_layout_make(ctx, p, &job->lay);
  unsigned char *ws = workspace ? (unsigned char *)workspace->address : NULL;
  if (job->lay.total > 0 && (!ws || workspace->size < job->lay.total))
    return pa_fail(err, POLYATTN_ERR_WORKSPACE, "workspace: %zu bytes needed, %zu given",
                   job->lay.total, workspace && ws ? workspace->size : (size_t)0);
  job->ws = ws;
  if (p->sparsity == POLYATTN_SPARSITY_AUTO_BLOCK)
    pa_auto_block_resolve(p, resolved, ws + job->lay.off_mask);
  else
    *resolved = *p;
  job->p = resolved;
  job->qtiles = ((int64_t)p->seqlen_q + job->lay.tiles.block_q - 1) / job->lay.tiles.block_q;
  job->ktiles = ((int64_t)p->seqlen_k + job->lay.tiles.block_k - 1) / job->lay.tiles.block_k;
  job->splits = job->lay.tiles.num_splits > 0 ? job->lay.tiles.num_splits : 1;
  return POLYATTN_OK;
}

static void run_forward(const pa_cpu_ctx *ctx, const pa_cpu_job *job) {
  const pa_problem *p = job->p;
  int64_t units = (int64_t)p->batch * p->heads_q * job->qtiles;
  run_pass(ctx, job, ctx->isa->forward_task, units * job->splits);
  if (job->splits > 1) run_pass(ctx, job, ctx->isa->forward_merge_task, units);
}

polyattn_status pa_cpu_forward(void *bctx, const pa_problem *p,
                               const struct polyattn_buffer *workspace, pa_error *err) {
  const pa_cpu_ctx *ctx = (const pa_cpu_ctx *)bctx;
  pa_problem resolved;
  pa_cpu_job job;
  polyattn_status st = job_begin(ctx, p, workspace, &resolved, &job, err);
  if (st != POLYATTN_OK) return st;
  run_forward(ctx, &job);
  return POLYATTN_OK;
}

polyattn_status pa_cpu_backward(void *bctx, const pa_problem *p,
                                const struct polyattn_buffer *workspace, pa_error *err) {
  const pa_cpu_ctx *ctx = (const pa_cpu_ctx *)bctx;
  pa_problem resolved;
  pa_cpu_job job;
  polyattn_status st = job_begin(ctx, p, workspace, &resolved, &job, err);
  if (st != POLYATTN_OK) return st;
  const int64_t units = (int64_t)p->batch * p->heads_q * job.qtiles;
  job.stats = (float *)(job.ws + job.lay.off_stats);
  run_pass(ctx, &job, ctx->isa->backward_q_task, units); /* dQ, and the row stats */
  run_pass(ctx, &job, ctx->isa->backward_kv_task,
           (int64_t)p->batch * p->heads_kv * job.ktiles);
  return POLYATTN_OK;
}
