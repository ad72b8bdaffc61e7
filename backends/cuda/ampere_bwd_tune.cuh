/* The Ampere backward kernel's tuning table (bwd_ampere.cu): one row per padded
 * head dim. Every other size is derived from it.
 *
 * Where the numbers come from: not measured yet (no bench/RESULTS.md entry); they are
 * FlashAttention-2's sm80 backward shape reduced to what is easiest to get right:
 * each warp owns 16 keys of the key block (one mma M tile of dK and dV, in fp32
 * registers for the whole kernel), so block_k = 16 * warps; query tiles of block_q
 * rows stream through a two-stage cp.async pipeline. Registers per thread at hd128:
 * dK + dV 2 x 64 for the whole kernel, S^T and dP^T 2 x block_q / 2, the dQ partial
 * block_q / 16 * 16 * D / warps / 32 after dK, dV of the tile are done; block_q 64
 * spilled ~190 bytes at hd128 (255 registers), so hd128 takes 32 (ptxas -v results
 * in docs/decisions.md 43).
 *   warps      4; block_k = 64 keys per block.
 *   block_q    query rows per inner step (a multiple of 32: the dS tile's swizzle
 *              needs a multiple of 4 chunks per row).
 *   min_blocks __launch_bounds__ occupancy hint (2 blocks/SM: 8 warps).
 * The lead's H200 sweep replaces this rationale by measurements; change a row, not
 * the kernel. */
#ifndef PA_CUDA_AMPERE_BWD_TUNE_CUH
#define PA_CUDA_AMPERE_BWD_TUNE_CUH

#include "ampere_tile.cuh"

template <int D>
struct pa_ampere_bwd_tune;
#define PA_BWD_TUNE(D, W, BQ, MINB) \
  template <> struct pa_ampere_bwd_tune<D> { enum { warps = W, block_q = BQ, min_blocks = MINB }; }
/*          D    warps  block_q  min_blocks */
PA_BWD_TUNE(64,  4,     64,      2);
PA_BWD_TUNE(128, 4,     32,      2);
#undef PA_BWD_TUNE

template <int D>
struct pa_ampere_bwd_cfg {
  typedef pa_ampere_bwd_tune<D> tune;
  enum {
    head_dim = D,
    warps = tune::warps,
    threads = 32 * tune::warps,
    block_k = 16 * tune::warps, /* one 16-key mma M tile of dK, dV per warp */
    block_q = tune::block_q,
    min_blocks = tune::min_blocks,
    /* dQ partial [block_q x D] of one query tile: warps split it into 16-row tiles
     * (q_mtiles of them) times column slices of dq_cols. */
    q_mtiles = block_q / 16,
    dq_slices = warps / q_mtiles,
    dq_cols = D / (warps / q_mtiles > 0 ? warps / q_mtiles : 1),
  };
  /* Shared memory in bytes (16-bit elements unless noted):
   * [K][V] once, then two stages of [Q][dO][lse2, dsum (fp32)], then [dS^T]. */
  static constexpr int kv_bytes = block_k * D * 2;
  static constexpr int q_bytes = block_q * D * 2;
  static constexpr int stat_bytes = 2 * block_q * 4;
  static constexpr int stage_bytes = 2 * q_bytes + stat_bytes;
  static constexpr int ds_bytes = block_k * block_q * 2;
  static constexpr int smem_bytes = 2 * kv_bytes + 2 * stage_bytes + ds_bytes;

  static_assert(D % 64 == 0, "buckets 64 and 128");
  static_assert(block_q % 32 == 0, "dS^T rows of block_q elements: a multiple of 4 chunks");
  static_assert(warps % q_mtiles == 0 && dq_cols % 16 == 0,
                "the dQ partial splits into whole 16 x 16 blocks per warp");
  static_assert(dq_slices == 1 || dq_cols % 64 == 0,
                "a column slice starts on a multiple of 8 chunks (outside the swizzle's bits)");
  static_assert((block_k * D / 8) % threads == 0 && (block_q * D / 8) % threads == 0,
                "tile loads: every thread copies the same number of 16-byte chunks");
  static_assert(block_q <= threads, "one thread per query row loads the row statistics");
  static_assert(q_bytes % 128 == 0 && kv_bytes % 128 == 0 && stat_bytes % 128 == 0,
                "tiles start on 128-byte boundaries (the swizzle assumes it)");
  static_assert(min_blocks * smem_bytes <= 227 * 1024, "shared memory per SM on sm_90");
};

#endif
