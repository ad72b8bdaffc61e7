/* Block-sparse key-tile lists (BLOCK sparsity): per (batch entry, head, query tile)
 * the key tiles a forward kernel must visit, built on the GPU in the workspace
 * before the kernel runs, so the kernel walks only kept tiles (time falls with
 * density) instead of testing every tile of its row range.
 *
 * For kernel tiles of BQ query rows x BK keys, split into row groups of WR rows
 * (a warp's rows; at most 8 groups), query tile qt of (b, h) owns a slot of
 * pa_block_list_stride() int32 values: slot[0] = the count c (| PA_BLOCK_LIST_FULL
 * when every tile of the rows' range is listed with no skip or partial bit: a kernel
 * may then walk the tiles as dense), slot[1..c] the kept tiles in increasing order,
 * and slot[c + 1] = a terminator past the rows' last tile (n_hi, no bits). An entry
 * is n << 16 | partial << 8 | skip, with bit g of `skip` / `partial` for row group g:
 *   skip     every (row, key) pair of the group's footprint (its rows x the tile's
 *            keys within the tile rows' mask range) falls in a 0 mask block: the
 *            group's warp computes nothing for this tile;
 *   partial  some pair does: the warp masks per element.
 * A tile is listed when some group has a set block. Mask blocks and kernel tiles
 * need not align: a tile straddling mask blocks is visited when any is set, and
 * masked per element, so the result is exact for every block_q / block_k; mask
 * blocks smaller than BQ (64-row blocks, 128-row tiles) still skip per warp.
 *
 * Any kernel whose query tile q covers rows [q * BQ, q * BQ + BQ) can use it: the
 * Ampere kernel (a row group per warp) and the Hopper kernel (BQ = BK = 128, a row
 * group per consumer warpgroup; its producer and consumers walk the same entries). */
#ifndef PA_CUDA_BLOCK_LIST_CUH
#define PA_CUDA_BLOCK_LIST_CUH

#include "block_ctx.cuh"

enum { PA_BLOCK_LIST_WARPS = 4 }; /* query tiles per builder block, one warp each */

PA_HD static inline int64_t pa_block_list_qtiles(const pa_problem *p, int bq) {
  return (p->seqlen_q + bq - 1) / bq;
}

/* int32 values per query tile: the count, at most every key tile, the terminator. */
PA_HD static inline int64_t pa_block_list_stride(const pa_problem *p, int bk) {
  return (p->seqlen_k + bk - 1) / bk + 2;
}

static inline size_t pa_block_list_bytes(const pa_problem *p, int bq, int bk) {
  return (size_t)p->batch * (size_t)p->heads_q * (size_t)pa_block_list_qtiles(p, bq) *
         (size_t)pa_block_list_stride(p, bk) * sizeof(int32_t);
}

/* Where query tile qt of (b, h) starts in the list. */
__device__ __forceinline__ int64_t pa_block_list_slot(const pa_problem &p, int b, int h, int qt,
                                                      int bq, int bk) {
  return (((int64_t)b * p.heads_q + h) * pa_block_list_qtiles(&p, bq) + qt) *
         pa_block_list_stride(&p, bk);
}

/* One warp per query tile: each lane tests one key tile of the rows' range per
 * round; a ballot compacts the kept ones in order. */
enum { PA_BLOCK_LIST_N_SHIFT = 16, PA_BLOCK_LIST_PARTIAL_SHIFT = 8 };
enum { PA_BLOCK_LIST_FULL = 1 << 30, PA_BLOCK_LIST_COUNT = PA_BLOCK_LIST_FULL - 1 };

template <int BQ, int BK, int WR>
__device__ __forceinline__ void pa_block_list_tile(const pa_problem &p, int32_t *list, int b,
                                                   int h, int qt, int lane) {
  int32_t *out = list + pa_block_list_slot(p, b, h, qt, BQ, BK);
  pa_block_ctx c;
  if (!pa_block_ctx_init(c, p, b, h, qt * BQ, BQ)) {
    if (lane == 0) out[0] = out[1] = 0; /* past the entry's end: the kernel returns first */
    return;
  }
  const int n_lo = (int)(c.klo / BK);
  const int n_hi = c.klo < c.khi ? (int)((c.khi + BK - 1) / BK) : n_lo;
  static_assert(BQ % WR == 0 && BQ / WR <= 8, "at most 8 row groups of WR rows");
  int count = 0;
  bool clean = true; /* no listed tile has a skip or partial bit */
  for (int n0 = n_lo; n0 < n_hi; n0 += 32) {
    const int n = n0 + lane;
    int skip = (1 << (BQ / WR)) - 1, partial = 0;
    if (n < n_hi) {
      const int64_t k0 = (int64_t)n * BK > c.klo ? (int64_t)n * BK : c.klo;
      const int64_t k1 = (int64_t)n * BK + BK < c.khi ? (int64_t)n * BK + BK : c.khi;
      const int kb0 = (int)(k0 / p.block_k), kb1 = (int)((k1 - 1) / p.block_k);
      for (int g = 0; g < BQ / WR && c.i0 + g * WR < c.i_end; ++g) {
        const int r0 = c.i0 + g * WR, r1 = min(r0 + WR, c.i_end);
        int any = 0, all = 1;
        for (int qb = r0 / p.block_q; qb <= (r1 - 1) / p.block_q; ++qb)
          for (int kb = kb0; kb <= kb1; ++kb) {
            const int keep = pa_block_mask_keep(&p.block_mask, c.b, c.h, qb, kb);
            any |= keep;
            all &= keep;
          }
        if (any) skip &= ~(1 << g);
        if (any && !all) partial |= 1 << g;
      }
    }
    const bool listed = n < n_hi && skip != (1 << (BQ / WR)) - 1;
    const unsigned kept = __ballot_sync(0xffffffffu, listed);
    if (listed)
      out[1 + count + __popc(kept & ((1u << lane) - 1u))] =
          n << PA_BLOCK_LIST_N_SHIFT | partial << PA_BLOCK_LIST_PARTIAL_SHIFT | skip;
    count += __popc(kept);
    /* a ballot, not __any_sync: HIP's shim (hip_vendor.h) has the ballot only */
    clean = clean && __ballot_sync(0xffffffffu, listed && (skip | partial) != 0) == 0u;
  }
  if (lane == 0) {
    out[0] = count | (clean && count == n_hi - n_lo ? (int)PA_BLOCK_LIST_FULL : 0);
    out[1 + count] = n_hi << PA_BLOCK_LIST_N_SHIFT;
  }
}

/* Grid: (ceil(qtiles / WARPS), heads_q, batch), 32 * WARPS threads. `counter`, if
 * given, is set to 0 (the persistent Hopper kernel's next tile, which runs after the
 * builder). */
template <int BQ, int BK, int WR>
__global__ void __launch_bounds__(32 * PA_BLOCK_LIST_WARPS)
    pa_block_list_kernel(const __grid_constant__ pa_problem p, int32_t *list, int32_t *counter) {
  if (counter && blockIdx.x + blockIdx.y + blockIdx.z + threadIdx.x == 0) *counter = 0;
  const int qt = blockIdx.x * PA_BLOCK_LIST_WARPS + threadIdx.x / 32;
  if (qt < pa_block_list_qtiles(&p, BQ))
    pa_block_list_tile<BQ, BK, WR>(p, list, blockIdx.z, blockIdx.y, qt, threadIdx.x % 32);
}

template <int BQ, int BK, int WR>
static inline cudaError_t pa_block_list_build(const pa_problem *p, int32_t *list,
                                              cudaStream_t stream, int32_t *counter = nullptr) {
  const dim3 grid((unsigned)((pa_block_list_qtiles(p, BQ) + PA_BLOCK_LIST_WARPS - 1) /
                             PA_BLOCK_LIST_WARPS),
                  (unsigned)p->heads_q, (unsigned)p->batch);
  pa_block_list_kernel<BQ, BK, WR><<<grid, 32 * PA_BLOCK_LIST_WARPS, 0, stream>>>(*p, list,
                                                                                  counter);
  return cudaGetLastError();
}

/* A forward kernel's walk over its query tile's list: the first PA_BLOCK_LIST_SMEM
 * entries are copied to shared memory in the prologue (ordered before use by the
 * prologue's barrier), later ones (S above 16k keys at 64-key tiles) are read from
 * global memory. The walk holds one register, the index of the next entry; the
 * first entry is read from global memory, before the barrier. */
enum { PA_BLOCK_LIST_SMEM = 256, PA_BLOCK_LIST_SMEM_BYTES = PA_BLOCK_LIST_SMEM * 4 };

__device__ __forceinline__ const int32_t *pa_block_walk_slot(const int32_t *list,
                                                             const pa_problem &p,
                                                             const pa_block_ctx &c, int bq,
                                                             int bk) {
  return list + pa_block_list_slot(p, c.b, c.h, c.i0 / bq, bq, bk);
}

/* Copy the list head to shared memory (all threads); returns the first entry. */
template <int NT>
__device__ __forceinline__ int pa_block_walk_start(int32_t *list_s, const int32_t *slot, int tid) {
  const int count = slot[0] & PA_BLOCK_LIST_COUNT;
  const int copy = min(count + 1, (int)PA_BLOCK_LIST_SMEM);
  for (int x = tid; x < copy; x += NT) list_s[x] = slot[1 + x];
  return slot[1];
}

/* Entry `idx` (>= 1); the terminator's tile is n_hi. */
__device__ __forceinline__ int pa_block_walk_at(const int32_t *list_s, const int32_t *slot,
                                                int idx) {
  return idx < PA_BLOCK_LIST_SMEM ? list_s[idx] : slot[1 + idx];
}

/* An entry with its low 16 bits (the row groups' bits) shifted right by g: row group g's
 * bits are then those of group 0, tested without g (fwd_tile.cuh's mask_guard). */
__device__ __forceinline__ int pa_block_entry_for(int e, int g) {
  const int low = (1 << PA_BLOCK_LIST_N_SHIFT) - 1;
  return (e & ~low) | ((e & low) >> g);
}

/* An entry's tile, and row group g's bits. */
__device__ __forceinline__ int pa_block_entry_tile(int e) { return e >> PA_BLOCK_LIST_N_SHIFT; }
__device__ __forceinline__ bool pa_block_entry_skip(int e, int g) { return (e >> g) & 1; }
__device__ __forceinline__ bool pa_block_entry_partial(int e, int g) {
  return (e >> (PA_BLOCK_LIST_PARTIAL_SHIFT + g)) & 1;
}

#endif
