/* What the CPU backend's files share: the context, the workspace layout, the job
 * a parallel pass runs, and the per-instruction-set kernel table. */
#ifndef PA_CPU_INTERNAL_H
#define PA_CPU_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "backend.h"
#include "planner.h"
#include "problem.h"
#include "threadpool.h"

#define PA_CPU_ALIGN 64 /* bytes: a cache line and one zmm vector */

struct pa_cpu_isa;

typedef struct pa_cpu_ctx {
  int32_t threads;
  pa_threadpool *pool;
  const struct pa_cpu_isa *isa;
  int64_t l2_bytes;
  char name[256];
} pa_cpu_ctx;

/* Where everything lives in the workspace, and the tile shape. pa_cpu_layout_make
 * is the one function that decides it; plan, forward and backward all call it. */
typedef struct pa_cpu_layout {
  pa_tile_plan tiles;
  int32_t dp, dvp;           /* head_dim / head_dim_v rounded up to the vector width */
  size_t scratch_per_thread; /* bytes, a multiple of PA_CPU_ALIGN */
  size_t off_scratch;        /* threads x scratch_per_thread */
  size_t off_mask;           /* AUTO_BLOCK mask (mask_bytes), or unused */
  size_t mask_bytes;
  size_t off_stats; /* backward: row max m, sum l and Di, fp32 [3][Hq][total_q] */
  size_t off_part;  /* forward split-KV partials: [unit][split][bq][2 + dvp] */
  size_t part_bytes;
  size_t total;
} pa_cpu_layout;

/* One parallel pass over a problem. The kernels read only this. */
typedef struct pa_cpu_job {
  const pa_problem *p; /* resolved: AUTO_BLOCK already turned into BLOCK or NONE */
  pa_cpu_layout lay;
  unsigned char *ws;  /* workspace base */
  int64_t qtiles;     /* query tiles per (batch, head): ceil(seqlen_q / block_q) */
  int64_t ktiles;     /* key tiles per (batch, kv head): ceil(seqlen_k / block_k) */
  int32_t splits;     /* forward: key partitions per query tile */
  /* Backward: the row statistics the Q pass stores and the KV pass reads. */
  float *stats;
} pa_cpu_job;

/* Kernels of one instruction set (isa_*.c compile the same sources per set). */
typedef struct pa_cpu_isa {
  const char *name;
  int32_t vl, mr, nr; /* see cpu_tune.h */
  int32_t prefer_block_q, prefer_block_k;
  /* Bytes of scratch one thread needs for every pass of problem p, given the
   * layout's tiles and padded dims (the kernels' own carving code measures it). */
  size_t (*scratch_bytes)(const pa_problem *p, const struct pa_cpu_layout *lay);
  /* A "unit" is one (batch, query head, query tile): unit = (qtiles - 1 - tile) *
   * (B * Hq) + b * Hq + h, so the heaviest (last, under causal masks) tiles go first.
   * Forward: task = unit * splits + split; the merge runs once per unit. */
  void (*forward_task)(const pa_cpu_job *job, int64_t task, int thread);
  void (*forward_merge_task)(const pa_cpu_job *job, int64_t unit, int thread);
  /* dQ and the row statistics (runs first), one task per unit */
  void (*backward_q_task)(const pa_cpu_job *job, int64_t unit, int thread);
  /* dK, dV, task = (b * Hkv + kv head) * ktiles + key tile */
  void (*backward_kv_task)(const pa_cpu_job *job, int64_t task, int thread);
} pa_cpu_isa;

extern const pa_cpu_isa pa_cpu_isa_generic;
#if defined(__x86_64__) || defined(_M_X64) || defined(__i386__)
#define PA_CPU_HAVE_X86 1
extern const pa_cpu_isa pa_cpu_isa_avx2;
extern const pa_cpu_isa pa_cpu_isa_avx512;
#endif

/* The best kernels this CPU runs; POLYATTN_CPU_ISA=generic|avx2|avx512 picks a
 * lower one (for tests and comparisons; a set the CPU lacks is ignored). */
const pa_cpu_isa *pa_cpu_isa_select(void);

/* Fill the layout of problem p (as given to plan: AUTO_BLOCK not yet resolved). */
void pa_cpu_layout_make(const pa_cpu_ctx *ctx, const pa_problem *p, pa_cpu_layout *lay);

/* The ops-table entries of cpu_run.c. */
polyattn_status pa_cpu_plan(void *bctx, const pa_problem *p, size_t *workspace_bytes,
                            pa_error *err);
polyattn_status pa_cpu_forward(void *bctx, const pa_problem *p,
                               const struct polyattn_buffer *workspace, pa_error *err);
polyattn_status pa_cpu_backward(void *bctx, const pa_problem *p,
                                const struct polyattn_buffer *workspace, pa_error *err);

/* Row t of [Hq, total_q] arrays (LSE copy, Di) for row i of batch entry b. */
static inline int64_t pa_cpu_row_index(const pa_problem *p, int32_t b, int64_t q_start,
                                       int64_t i) {
  return p->varlen ? q_start + i : (int64_t)b * p->seqlen_q + i;
}

/* Keys stored for entry b (seqused_k may compute on fewer): gradients cover all. */
static inline int32_t pa_cpu_stored_len_k(const pa_problem *p, int32_t b) {
  if (!p->varlen) return p->seqlen_k;
  const int32_t *ck = (const int32_t *)p->cu_seqlens_k.ptr;
  int64_t s = p->cu_seqlens_k.stride_s;
  return ck[(b + 1) * s] - ck[b * s];
}

#endif
