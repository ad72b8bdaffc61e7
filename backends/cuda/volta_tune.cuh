/* The Volta forward kernel's tuning table: one row per padded head dim (fp16 only,
 * so the head dim is the only compile-time parameter). Every other size is derived.
 *
 * Where the numbers come from: not measured on a Volta GPU (none here); chosen for
 * correctness and fit, then checked against these budgets: 64 KiB of shared memory
 * per block (Turing's opt-in limit, the smallest of cc 7.x; V100 allows 96 KiB) and
 * 255 registers without spills (ptxas -v, sm_75/80/90). Rationale per column:
 *   warps    each warp owns 16 query rows (one [16 x 16] m8n8k4 warp tile high);
 *            4 warps = 64 rows per block; 2 at hd 256, where the Q tile would
 *            otherwise push shared memory past 64 KiB.
 *   block_k  keys per K/V tile, a multiple of 16 (the warp tile's width): 64, and
 *            32 at hd 256 where the O accumulator already takes 128 registers.
 * bench/RESULTS.md records what the forced path measures on the H200 (emulated
 * m8n8k4, so it says nothing about Volta speed); change a row, not the kernel. */
#ifndef PA_CUDA_VOLTA_TUNE_CUH
#define PA_CUDA_VOLTA_TUNE_CUH

#include "volta_mma.cuh"

template <int D>
struct pa_volta_tune;
#define PA_VOLTA_TUNE(D, W, BK)                                                        \
  template <> struct pa_volta_tune<D> {                                                \
    enum { warps = W, block_k = BK };                                                  \
  }
/*            D    warps  block_k */
PA_VOLTA_TUNE(64,  4,     64);
PA_VOLTA_TUNE(128, 4,     64);
PA_VOLTA_TUNE(256, 2,     32);
#undef PA_VOLTA_TUNE

/* The derived shape of one instantiation. */
template <int D>
struct pa_volta_cfg {
  typedef pa_volta_tune<D> tune;
  enum {
    head_dim = D,
    warps = tune::warps,
    threads = 32 * tune::warps,
    block_q = 16 * tune::warps, /* each warp owns 16 query rows */
    block_k = tune::block_k,
    ld = D + PA_VOLTA_PAD,                 /* Q, K, V, O tile pitch, halves */
    ld_p = tune::block_k + PA_VOLTA_PAD    /* P tile pitch, halves */
  };
  /* Shared memory, in halves: [Q: block_q x ld][K: block_k x ld][V: block_k x ld]
   * [P: warps x 16 x ld_p] (each warp's own P, for P . V). */
  static constexpr int q_elems = block_q * ld;
  static constexpr int kv_elems = block_k * ld;
  static constexpr int p_elems = 16 * ld_p;
  static constexpr int smem_bytes = 2 * (q_elems + 2 * kv_elems + warps * p_elems);

  static_assert(D % 16 == 0, "head dims: whole [16 x 16] warp tiles of O");
  static_assert(block_k % 16 == 0, "block_k: whole [16 x 16] warp tiles of S");
  static_assert(smem_bytes <= 64 * 1024, "shared memory above Turing's 64 KiB per block");
};

/* The Volta backward (bwd_volta.cu): each of 4 warps owns 16 keys (block_k = 64)
 * and keeps their dK, dV [16 x D] in fp32 registers; query tiles of 32 rows. Head
 * dims up to 128 (dK and dV at 256 would need 256 accumulator registers). Shared
 * memory, in halves: [K, V: block_k x ld][Q, dO: block_q x ld][P^T, dS^T per warp:
 * 16 x ld_t][dS: block_q x ld_s], then lse2, dsum [block_q] floats: 63 KiB at
 * D = 128, within Turing's 64 KiB. Not measured on a Volta GPU. */
template <int D>
struct pa_volta_bwd_cfg {
  enum {
    head_dim = D,
    warps = 4,
    threads = 32 * warps,
    block_k = 16 * warps,
    block_q = 32,
    ld = D + PA_VOLTA_PAD,
    ld_t = block_q + PA_VOLTA_PAD, /* P^T, dS^T [16 keys x block_q] */
    ld_s = block_k + PA_VOLTA_PAD  /* dS [block_q x block_k], for dQ */
  };
  static constexpr int kv_elems = block_k * ld;
  static constexpr int q_elems = block_q * ld;
  static constexpr int t_elems = 16 * ld_t;
  static constexpr int s_elems = block_q * ld_s;
  static constexpr int smem_bytes =
      2 * (2 * kv_elems + 2 * q_elems + 2 * warps * t_elems + s_elems) + 2 * 4 * block_q;

  static_assert(D % 32 == 0, "dQ: each warp takes D / 2 columns in whole [16 x 16] tiles");
  static_assert(smem_bytes <= 64 * 1024, "shared memory above Turing's 64 KiB per block");
};

#endif
