#include "planner.h"

static int32_t round_up(int32_t x, int32_t m) { return m > 0 ? (x + m - 1) / m * m : x; }

/* The largest multiple of `align` that is <= tile and divides `mask_block`; `tile`
 * unchanged when no such size exists. */
static int32_t fit_mask_block(int32_t tile, int32_t mask_block, int32_t align) {
  if (mask_block <= 0 || mask_block % align != 0) return tile;
  for (int32_t t = tile / align * align; t >= align; t -= align)
    if (mask_block % t == 0) return t;
  return tile;
}

int64_t pa_plan_scratch_bytes(int32_t block_q, int32_t block_k, int32_t head_dim,
                              int32_t head_dim_v) {
  int64_t q = (int64_t)block_q * head_dim;    /* Q tile, pre-scaled, fp32 */
  int64_t kt = (int64_t)head_dim * block_k;   /* K tile, transposed */
  int64_t v = (int64_t)block_k * head_dim_v;  /* V tile */
  int64_t s = (int64_t)block_q * block_k;     /* scores / probabilities */
  int64_t acc = (int64_t)block_q * head_dim_v;/* output accumulator */
  return (q + kt + v + s + acc) * (int64_t)sizeof(float);
}

pa_tile_plan pa_plan_tiles(const pa_device_desc *dev, const pa_problem *p) {
  pa_tile_plan t;
  /* Keys per tile: a multiple of 4 (2:4 groups stay inside a tile) and of the
   * vector width or the matrix unit's n (so no partial vectors in the inner loop). */
  int32_t k_align = 4;
  if (dev->simd_width > k_align && dev->cls == PA_DEVICE_CPU) k_align = dev->simd_width;
  if (dev->mma_n > k_align) k_align = dev->mma_n;
  int32_t q_align = dev->mma_m > 0 ? dev->mma_m : 4;

  int32_t bq = dev->prefer_block_q > 0 ? dev->prefer_block_q : 64;
  int32_t bk = dev->prefer_block_k > 0 ? dev->prefer_block_k : 64;
  bq = round_up(bq, q_align);
  bk = round_up(bk, k_align);

  /* Block-sparse masks: a tile that lies inside one mask block is skipped whole when
   * that block is dropped, so time falls with density. Shrink each side to a
   * divisor of the mask block (keeping the alignment); when the mask block is not
   * a multiple of the alignment, tiles straddle blocks and only all-zero spans skip. */
  if (p->sparsity == POLYATTN_SPARSITY_BLOCK || p->sparsity == POLYATTN_SPARSITY_AUTO_BLOCK) {
    bq = fit_mask_block(bq, p->block_q, q_align);
    bk = fit_mask_block(bk, p->block_k, k_align);
  }

  /* Do not tile past the problem: short queries (decode) use small row tiles. */
  int32_t sq = p->seqlen_q > 0 ? p->seqlen_q : 1;
  while (bq > q_align && bq / 2 >= round_up(sq, q_align)) bq /= 2;
  bq = round_up(bq, q_align);

  /* Shrink until the working set fits the fast memory (half of it on a CPU, so
   * the streamed K/V rows and the output survive beside it). */
  int64_t budget = dev->fast_mem_bytes > 0 ? dev->fast_mem_bytes : (int64_t)256 << 10;
  if (dev->cls == PA_DEVICE_CPU) budget /= 2;
  while (pa_plan_scratch_bytes(bq, bk, p->head_dim, p->head_dim_v) > budget) {
    if (bq >= bk && bq / 2 >= q_align && (bq / 2) % q_align == 0) bq /= 2;
    else if (bk / 2 >= k_align && (bk / 2) % k_align == 0) bk /= 2;
    else if (bq / 2 >= q_align && (bq / 2) % q_align == 0) bq /= 2;
    else break;
  }
  t.block_q = bq;
  t.block_k = bk;
  t.scratch_bytes = pa_plan_scratch_bytes(bq, bk, p->head_dim, p->head_dim_v);

  /* Split-KV (flash-decoding): when the (batch, head, query tile) tasks cannot
   * fill the compute units, split each task's keys into partitions merged by LSE.
   * Each partition keeps at least 4 key tiles so the merge stays cheap. */
  int64_t qtiles = ((int64_t)sq + bq - 1) / bq;
  int64_t tasks = (int64_t)p->batch * p->heads_q * qtiles;
  int32_t units = dev->compute_units > 0 ? dev->compute_units : 1;
  int64_t ktiles = ((int64_t)p->seqlen_k + bk - 1) / bk;
  int32_t splits = 1;
  if (tasks < units) {
    int64_t want = (units + tasks - 1) / tasks;
    int64_t most = ktiles / 4;
    splits = (int32_t)(want < most ? want : most);
    if (splits < 1) splits = 1;
  }
  t.num_splits = splits;
  return t;
}
