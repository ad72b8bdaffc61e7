/* The Ampere backward kernel's tuning table (bwd_ampere.cu): one row per (padded head
 * dim, variant). Every other size is derived from it.
 *
 * Each warp owns 16 keys of the key block (one mma M tile of dK and dV, in fp32
 * registers for the whole kernel), so block_k = 16 * warps; query tiles of block_q
 * rows stream through a two-stage cp.async pipeline.
 *   warps      warps per block; block_k = 16 * warps keys.
 *   block_q    query rows per inner step (a multiple of 32: the dS tile's swizzle
 *              needs a multiple of 4 chunks per row).
 *   sub_q      query columns of S^T, dP^T (fp32 accumulators) at a time: 32 at hd128
 *              keeps dK + dV (128 registers) + S^T + dP^T (32) without spills.
 *   min_blocks __launch_bounds__ occupancy hint.
 *   one_barrier 1: one barrier per query tile, the dS^T tile double-buffered (the
 *              kernel's comment says why that is safe); 0: two barriers, one dS^T.
 * mma per warp and (query tile, key block): S^T and dP^T 2 (D/16) (block_q/8), dV and
 * dK 2 (block_q/16) (D/8), dQ (block_k/16) (D/8) / slices. Every warp reads the
 * whole Q and dO tile twice (as B of S^T, dP^T and, transposed, of dV, dK); the dQ
 * atomics and the per-tile bookkeeping (next tile, loads, two barriers) are per
 * (query tile, key block), so they fall per FLOP as block_k grows (decision 55).
 * Variants (POLYATTN_CUDA_BWD_VARIANT, read once per process; bench/RESULTS.md, fourth
 * session, has the H200 figures that chose them):
 *   auto   the default: w8 at hd128; at hd64 w8q, or w8 under a causal mask or window
 *          (w8q measured faster there too, 178.8 against 155.3 TFLOP/s at S8192, but
 *          the suite has not run it on causal/window cases yet)
 *   w8     8 warps x 16 keys = 128-key blocks, 64-row query tiles
 *   w8q    hd64: 8 warps, 128-row query tiles (no hd128 row: 32-row tiles measured
 *          slower; hd128 runs w8)
 *   w4     the third session's shape: 4 warps, 64-key blocks, 64 / 32-row query
 *          tiles, two barriers; also what a device runs whose opt-in shared memory
 *          does not hold the chosen row (w8 hd128 and w8q hd64 take ~161 KiB) */
#ifndef PA_CUDA_AMPERE_BWD_TUNE_CUH
#define PA_CUDA_AMPERE_BWD_TUNE_CUH

#include "ampere_tile.cuh"

enum pa_bwd_variant {
  PA_BWD_W8 = 0,
  PA_BWD_W4 = 1,
  PA_BWD_W8Q = 2,
  PA_BWD_AUTO = 3,
  PA_BWD_VARIANT_COUNT = 4,
  PA_BWD_VARIANT_DEFAULT = PA_BWD_AUTO
};

template <int D, int V>
struct pa_ampere_bwd_tune;
#define PA_BWD_TUNE(D, V, W, BQ, SUBQ, MINB, ONEB)                                        \
  template <> struct pa_ampere_bwd_tune<D, V> {                                          \
    enum { warps = W, block_q = BQ, sub_q = SUBQ, min_blocks = MINB, one_barrier = ONEB }; \
  }
/*          D    variant      warps  block_q  sub_q  min_blocks  one_barrier */
PA_BWD_TUNE(64,  PA_BWD_W8,   8,     64,      64,    1,          1);
PA_BWD_TUNE(128, PA_BWD_W8,   8,     64,      32,    1,          1);
PA_BWD_TUNE(64,  PA_BWD_W8Q,  8,     128,     64,    1,          1);
PA_BWD_TUNE(64,  PA_BWD_W4,   4,     64,      64,    2,          0);
PA_BWD_TUNE(128, PA_BWD_W4,   4,     32,      32,    2,          0);
#undef PA_BWD_TUNE

template <int D, int V>
struct pa_ampere_bwd_cfg {
  typedef pa_ampere_bwd_tune<D, V> tune;
  enum {
    head_dim = D,
    warps = tune::warps,
    threads = 32 * tune::warps,
    block_k = 16 * tune::warps, /* one 16-key mma M tile of dK, dV per warp */
    block_q = tune::block_q,
    sub_q = tune::sub_q, /* query columns of S^T .. dK at a time (live accumulators) */
    one_barrier = tune::one_barrier, /* one barrier per tile, dS^T double-buffered */
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
  static constexpr int smem_bytes = 2 * kv_bytes + 2 * stage_bytes + (one_barrier ? 2 : 1) * ds_bytes;

  static_assert(D % 64 == 0, "buckets 64 and 128");
  static_assert(block_q % 32 == 0, "dS^T rows of block_q elements: a multiple of 4 chunks");
  static_assert(warps % q_mtiles == 0 && dq_cols % 16 == 0,
                "the dQ partial splits into whole 16 x 16 blocks per warp");
  static_assert(sub_q % 16 == 0 && block_q % sub_q == 0, "whole 16-query steps per sub-step");
  static_assert(dq_slices <= 4, "the dQ step dispatches on at most 4 column slices");
  static_assert((block_k * D / 8) % threads == 0 && (block_q * D / 8) % threads == 0,
                "tile loads: every thread copies the same number of 16-byte chunks");
  static_assert(block_q <= threads, "one thread per query row loads the row statistics");
  static_assert(q_bytes % 128 == 0 && kv_bytes % 128 == 0 && stat_bytes % 128 == 0,
                "tiles start on 128-byte boundaries (the swizzle assumes it)");
  static_assert(min_blocks * smem_bytes <= 227 * 1024, "shared memory per SM on sm_90");
};

#endif
