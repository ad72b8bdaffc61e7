/* The Ampere forward kernel's tuning table: one row per padded head dim (the only
 * compile-time parameter besides the dtype). Every other size is derived from it.
 *
 * Where the numbers come from: not yet measured on this project's hardware (no
 * bench/RESULTS.md entry); they are FlashAttention-2's sm80 choices adapted to one
 * warp per 16 query rows, and checked against these budgets (per SM on A100 / H100):
 * 64K registers, 164 KiB / 227 KiB shared memory. Rationale per column:
 *   warps     4 or 8; block_q = 16 * warps. 128 query rows per block halve the K/V
 *             traffic per FLOP from L2 (1 / block_q bytes per FLOP) against 64,
 *             which matters at hd <= 128, where the kernel would otherwise be L2-bound.
 *   block_k   keys per K/V tile: 128 at hd 64 (S fragment 64 regs), 64 at 96/128,
 *             32 at 192/256 (the O accumulator grows with hd; S must shrink). hd 32
 *             takes 64 so that it fits 128 registers, i.e. 2 blocks (16 warps) per SM.
 *   q_in_regs Q's A-fragments stay in registers for the whole key loop (D/4 regs);
 *             at hd 192/256 that would not fit beside the 96/128-register O
 *             accumulator, so Q is re-read from shared memory (ldmatrix) per tile.
 *   min_blocks __launch_bounds__ occupancy hint: blocks per SM the registers must allow.
 * Every row compiles without spills (ptxas -v, sm_80 and sm_90); hd 64 at block_k 64
 * with min_blocks 2 (16 warps/SM) spills ~20 bytes today: a candidate once the
 * loop-invariant register use shrinks.
 * The lead's H200 sweep (bench/RESULTS.md) replaces this comment's rationale by
 * measurements; change a row, not the kernel. */
#ifndef PA_CUDA_AMPERE_TUNE_CUH
#define PA_CUDA_AMPERE_TUNE_CUH

template <int D>
struct pa_ampere_tune;
/* ptxas (nvcc 13.0), registers per thread sm_80 / sm_90, no spills:
 * hd32 127/128, hd64 246/247, hd96 199/192, hd128 230/228, hd192 233/238, hd256 255/246. */
#define PA_TUNE(D, W, BK, QREGS, MINB)                                                  \
  template <> struct pa_ampere_tune<D> {                                               \
    enum { warps = W, block_k = BK, q_in_regs = QREGS, min_blocks = MINB };            \
  }
/*       D    warps  block_k  q_in_regs  min_blocks */
PA_TUNE(32,   8,     64,      1,         2);
PA_TUNE(64,   8,     128,     1,         1);
PA_TUNE(96,   8,     64,      1,         1);
PA_TUNE(128,  8,     64,      1,         1);
PA_TUNE(192,  4,     32,      0,         1);
PA_TUNE(256,  4,     32,      0,         1);
#undef PA_TUNE

/* The derived shape of one instantiation. */
template <int D>
struct pa_ampere_cfg {
  typedef pa_ampere_tune<D> tune;
  enum {
    head_dim = D,
    warps = tune::warps,
    threads = 32 * tune::warps,
    block_q = 16 * tune::warps, /* each warp owns 16 query rows (one mma M) */
    block_k = tune::block_k,
    q_in_regs = tune::q_in_regs,
    min_blocks = tune::min_blocks,
  };
  /* K/V pipeline: tile n + 1 loads into one stage while tile n is computed from the other. */
  enum { stages = 2 };
  /* Shared memory, in bytes (16-bit elements): [Q][K0][V0][K1][V1]. */
  static constexpr int q_bytes = block_q * D * 2;
  static constexpr int kv_tile_bytes = block_k * D * 2;
  static constexpr int stage_bytes = 2 * kv_tile_bytes;
  static constexpr int smem_bytes = q_bytes + stages * stage_bytes;

  static_assert(D % 32 == 0, "head dims are multiples of 32 (ldmatrix x4 covers 16 columns; "
                             "the swizzle needs a multiple of 4 chunks per row)");
  static_assert(block_k % 16 == 0, "block_k: whole mma K steps of the P.V product");
  static_assert((block_q * D / 8) % threads == 0 && (block_k * D / 8) % threads == 0,
                "tile loads: every thread copies the same number of 16-byte chunks");
  static_assert(smem_bytes <= 227 * 1024, "shared memory above the sm_90 opt-in limit");
};

#endif
