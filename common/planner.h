/* The tiling planner: block sizes from a description of the device.
 *
 * Every backend describes its device once (pa_device_desc) and asks the planner
 * for the tile shape of a problem. The planner owns the rules (what must fit where,
 * which multiples the matrix units and the 2:4 groups need); each backend's tuning
 * table (preferred sizes measured per architecture) feeds it through `prefer_*`. */
#ifndef PA_PLANNER_H
#define PA_PLANNER_H

#include <stdint.h>

#include "problem.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum pa_device_class { PA_DEVICE_CPU = 0, PA_DEVICE_GPU = 1 } pa_device_class;

typedef struct pa_device_desc {
  pa_device_class cls;
  int32_t compute_units;  /* CPU worker threads, GPU SMs / CUs */
  int32_t simd_width;     /* fp32 lanes per CPU vector, or GPU warp/subgroup size */
  int64_t fast_mem_bytes; /* GPU: shared memory per block; CPU: per-core L2 */
  int32_t regs_per_thread;/* GPU: 32-bit registers a thread may use; CPU: 0 */
  int32_t mma_m, mma_n, mma_k; /* matrix-unit shape; 0: none */
  int32_t max_threads;    /* GPU: threads per block; CPU: 1 */
  int32_t prefer_block_q, prefer_block_k; /* the backend's tuned sizes; 0: planner's */
} pa_device_desc;

typedef struct pa_tile_plan {
  int32_t block_q;    /* query rows per tile (a multiple of mma_m, or of 4) */
  int32_t block_k;    /* keys per K/V tile (a multiple of 4 and of the SIMD width) */
  int32_t num_splits; /* split-KV partitions per (batch, head, query tile); 1 = none */
  int64_t scratch_bytes; /* per tile worker: Q, K^T, V, S tiles and the accumulator, fp32 */
} pa_tile_plan;

/* The tile shape of problem `p` on `dev`. Never fails: sizes shrink until the
 * working set fits `fast_mem_bytes`, down to the matrix unit's shape. */
pa_tile_plan pa_plan_tiles(const pa_device_desc *dev, const pa_problem *p);

/* Bytes of fp32 scratch one worker needs for a tile of block_q x block_k. */
int64_t pa_plan_scratch_bytes(int32_t block_q, int32_t block_k, int32_t head_dim,
                              int32_t head_dim_v);

#ifdef __cplusplus
}
#endif
#endif
