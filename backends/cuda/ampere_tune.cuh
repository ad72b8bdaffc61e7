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
 * The rows compile at most with small spills (ptxas -v, nvcc 13.0): hd64's 128-key
 * rows (m2k128, m2k128t, m2k128tj) 16 bytes per thread at sm_90 (their 2:4 forms 20,
 * m2k128tj's 36; sm_80: 20), m2k64 4 at sm_90 (0 in the twenty-seventh session's build);
 * hd 64 at block_k 64 with min_blocks 2 (16 warps/SM) ~20 bytes: a candidate once the
 * loop-invariant register use shrinks.
 * The lead's H200 sweep (bench/RESULTS.md) replaces this comment's rationale by
 * measurements; change a row, not the kernel. */
#ifndef PA_CUDA_AMPERE_TUNE_CUH
#define PA_CUDA_AMPERE_TUNE_CUH

#include "block_list.cuh" /* PA_BLOCK_LIST_SMEM_BYTES: the walk's shared-memory list head */

/* Variants: alternative rows for the same head dim, chosen at run time by
 * POLYATTN_CUDA_AMPERE_VARIANT=<name> (read at each call, fwd_ampere.cu) so the
 * rows can be compared on the GPU without a rebuild. A variant without a compiled
 * row for a head dim runs that head dim's "auto" row; the rows "auto" never picks are
 * compiled only with the CMake option POLYATTN_CUDA_TUNING_VARIANTS (build time:
 * fwd_ampere.cu's pa_with_inst). Rows of a variant change only layouts
 * (tile shape, pipeline schedule); every feature is a run-time path in all of them (the
 * "-rs" rows excepted: a call with LSE or 2:4 runs their base row, pa_variant_for). */
enum pa_ampere_variant {
  PA_VARIANT_BASE = 0, /* "base": the rows above (8 warps x 16 rows, 1 block/SM) */
  PA_VARIANT_M2 = 1,   /* "m2": 32 query rows (two mma M tiles) per warp, 4 warps, 2 blocks/SM */
  PA_VARIANT_M2J = 2,  /* "m2j": as m2, one barrier per key tile (K and V waited together) */
  PA_VARIANT_M2K64 = 3, /* "m2k64": as m2 at hd128 with 64-key tiles (FlashAttention-2's shape) */
  PA_VARIANT_M2K64J = 4, /* "m2k64j": m2k64 with m2j's one barrier per tile */
  PA_VARIANT_M2K128 = 5, /* "m2k128": as m2 at hd64 with 128-key tiles (FlashAttention-2's shape) */
  PA_VARIANT_M2K128T = 6, /* "m2k128t": m2k128 with the row maxima as balanced trees */
  PA_VARIANT_M2K128TJ = 7, /* "m2k128tj": m2k128t with one barrier per key tile */
  PA_VARIANT_M2K64KM = 8, /* "m2k64-km": m2k64 with the softmax's kept maximum (keep below) */
  PA_VARIANT_M2K128TJKM = 9, /* "m2k128tj-km": m2k128tj with the kept maximum */
  PA_VARIANT_M2K128TJRS = 10, /* "m2k128tj-rs": m2k128tj, l by the tensor cores (rowsum below) */
  PA_VARIANT_M2K64KMRS = 11, /* "m2k64-km-rs": m2k64-km, l by the tensor cores */
  PA_VARIANT_M3K64TJ = 12, /* "m3k64tj": hd64, three M tiles (48 rows) per warp, 64-key tiles,
                            * tree maxima, one barrier per tile (decision 141) */
  PA_VARIANT_M3K64T = 13, /* "m3k64t": m3k64tj with K and V waited apart */
  PA_VARIANT_M2K64KMRSX = 14, /* "m2k64-km-rs-x": m2k64-km-rs, step 3 between P.V's k16 steps */
  PA_VARIANT_M2K128TJX = 15, /* "m2k128tj-x": m2k128tj, step 3 between P.V's k16 steps */
  PA_VARIANT_M2K64KMRSLK = 16, /* "m2k64-km-rs-lk": m2k64-km-rs, the next tile copied after Q.K^T */
  PA_VARIANT_M2K128TJLK = 17, /* "m2k128tj-lk": m2k128tj, the next tile copied after Q.K^T */
  PA_VARIANT_M2K64KMRSMGSC = 18, /* "m2k64-km-rs-mg-sc": m2k64-km-rs, the next tile's copies
                                  * between Q.K^T's k16 steps, mask bits per warp (decision 144) */
  PA_VARIANT_M2K128TJSC = 19, /* "m2k128tj-sc": m2k128tj with the copies between Q.K^T's steps */
  PA_VARIANT_M2K128TJMG = 20, /* "m2k128tj-mg": m2k128tj with the mask bits per warp */
  PA_VARIANT_AUTO = 21,   /* "auto": per head dim, the variant measured fastest (below) */
  PA_VARIANT_COUNT = 22
};

/* The default is "auto": per head-dim bucket the variant measured fastest on the H200
 * (bench/RESULTS.md): hd64 m2k128tj for every mask (twenty-seventh session, bf16 S
 * 2048-16384, one process and sustained: 3-7% ahead of m2k128t, causal or not, 3.8-5.2%
 * more work per cycle; under causal left windows of 256-4096 keys at S8192 5-11% ahead of
 * m2j, which windows ran until then; twenty-third session, bf16 and fp16 S 512-16384:
 * m2k128t 1-2% ahead of m2k128 without a mask, and ahead of m2j with a causal one by 2% at
 * S1024, 4% at S2048 and 5-7% from S4096, 2% behind at S512; the second session's choice
 * of m2j for masked problems, 180 against 150 TFLOP/s, predates the whole-tile copies);
 * hd128 m2k64-km-rs without LSE (m2k64-km with the row sums by the tensor cores, decision
 * 125, thirty-fourth session on an H100, sustained bf16: +1.0-1.5%, causal +0.2-0.3%, fp16
 * +1.1%; thirty-fifth on the H200: +1.0-1.2% at S8192 / S16384; with LSE or 2:4 m2k64-km),
 * m2k64-km m2k64 with the softmax's kept maximum
 * (thirty-third session, sustained
 * bf16 beside SDPA flash: +2.7-2.8% at S2048, +3.3-3.5% at S8192 and S16384, +3.9-4.2% causal
 * S8192 over m2k64; m2k64 itself: S=8192 base 221, m2 251, m2k64 290; its tree form
 * m2k64t measured level, its one-barrier form m2k64j 1-2.5% behind, with 40 bytes of
 * spills); hd64's m2k128tj-km measured 1.9-2.6% behind m2k128tj, a tuning row; the other
 * buckets run base.
 * pa_auto_variant() in fwd_ampere.cu holds the mapping. */
enum { PA_VARIANT_DEFAULT = PA_VARIANT_AUTO };

/* K/V pipeline schedule per key tile. */
enum pa_kv_sync {
  PA_KV_SPLIT = 0, /* wait K, barrier, Q.K^T + softmax, wait V, barrier, P.V */
  PA_KV_JOINT = 1  /* wait K and V, one barrier, then the whole tile */
};

template <int D, int V>
struct pa_ampere_tune;
/* ptxas (nvcc 13.0), registers per thread sm_80 / sm_90, no spills:
 * base: hd32 127/128, hd64 246/247, hd96 199/192, hd128 230/228, hd192 233/238, hd256 255/246.
 * m2 / m2j: see the rows (fwd_ampere.cu compiles m2 for hd 64 and 128, m2j for hd 64). */
#define PA_TUNE(D, V, W, MT, BK, QREGS, MINB, SYNC, TREE, KEEP, RS, XPV, LK, MG, SC)   \
  template <> struct pa_ampere_tune<D, V> {                                            \
    enum { warps = W, m_tiles = MT, block_k = BK, q_in_regs = QREGS, min_blocks = MINB, \
           kv_sync = SYNC, tree_max = TREE, keep_max = KEEP, rowsum = RS, xpv = XPV,    \
           late_kv = LK, mask_guard = MG, spread_kv = SC };                             \
  }
/* m_tiles: 16-row mma M tiles per warp (block_q = 16 * m_tiles * warps). Two tiles
 * per warp reuse every K / V B-fragment read by ldmatrix for two mma: at one tile
 * per warp each mma needs 256 bytes of ldmatrix traffic, which on sm_80/sm_90
 * (128 B/clk/SM of shared memory) is slower than the tensor cores themselves.
 * tree: the row maxima as balanced trees (frag_softmax.cuh TREE; 1 in m2k128t, m2k128tj).
 * keep: the softmax's kept maximum (fwd_tile.cuh keep_max; FlashAttention-4's conditional
 *       rescaling, decision 122): a warp's rows keep their reference m while no score
 *       exceeds it by more than 2^8, and such tiles skip the quad shuffles, alpha and O's
 *       rescale (hd128: 128 FMUL per thread and tile). Rows m2k64-km, m2k128tj-km (the
 *       vote's row maxima are balanced trees, so m2k64-km also differs from m2k64 there).
 * rs:   the row sums l by the tensor cores (fwd_tile.cuh rowsum; decision 125): per M tile
 *       and k16 step one more mma, P times a B fragment of ones, replaces the FADD per
 *       element of step 3 (hd64 128 FADD per thread and tile for 16 mma, hd128 64 for 8).
 *       l then sums the rounded P that P.V multiplies; for an LSE that misses DESIGN's
 *       1e-3 in bf16 (decision 108), so the rows run only without LSE and not under 2:4
 *       (fwd_ampere.cu pa_variant_for). m2k64-km-rs is hd128's "auto" without LSE
 *       (thirty-fourth session on an H100, sustained: +1.0-1.5% over m2k64-km, causal
 *       +0.2-0.3%); m2k128tj-rs measured 0.5-1.4% behind m2k128tj, a tuning row.
 * x:    step 3 in k16 steps, each P fragment's exponentials just before its P.V step (fwd_tile.cuh
 *       xpv; decision 142): the V barrier moves before step 3, and one key step's exponentials
 *       can issue beside the previous step's mma. Rows m2k64-km-rs-x, m2k128tj-x (tuning rows;
 *       forty-ninth session on an H100, sustained: hd128 -4% to -6%, hd64 -3%; ptxas spills
 *       84 / 44 bytes, S waiting across V's barrier in fp32).
 * lk:   the next K/V tile's cp.async issued after the warp's Q.K^T (fwd_tile.cuh late_kv;
 *       decision 143), not before it: the ~80 address instructions and 16 copies per thread
 *       that follow each tile's barrier no longer stand before the first product. Rows
 *       m2k64-km-rs-lk, m2k128tj-lk (tuning rows; forty-ninth session on an H100, sustained:
 *       hd128 -4% to -5%, hd64 -1% to -2%; ptxas spills 60 / 52 bytes).
 * mg:   the block-mask entry's row-group bits shifted to the warp's when the entry is read
 *       (fwd_tile.cuh mask_guard; decision 144), so the loop tests fixed bits and holds no
 *       per-warp masks (hd64's m2k128tj spills them: two local loads per tile, dense or not;
 *       thirty-fourth session's ncu page: ~3.5% of the warps' samples on or behind them).
 * sc:   a whole next tile's copies spread between the warp's Q.K^T k16 steps (fwd_tile.cuh
 *       spread_kv; decision 144), not issued as one burst of 16 ahead of its first ldmatrix
 *       (the thirty-fourth session's ncu page at hd128: 8.0% of the key loop's samples on the
 *       copy path, 4.8% more on an address register's reuse and the first mma's wait).
 *       Rows m2k64-km-rs-mg-sc (hd128; ptxas: no spills, the mask spilled 4 bytes without
 *       mg), m2k128tj-sc (ptxas: 24 / 68 bytes), m2k128tj-mg (40 / 48 bytes): tuning rows
 *       (fifty-first session on an H100, sustained: mg-sc hd128 -13% to -14%, sc hd64 -3% to
 *       -4%, mg hd64 -2%).
 *       D    V                   warps  m_tiles  block_k  q_in_regs  min_blocks  kv_sync      tree keep rs x lk mg sc */
PA_TUNE(32,   PA_VARIANT_BASE,    8,     1,       64,      1,         2,          PA_KV_SPLIT, 0, 0, 0, 0, 0, 0, 0);
PA_TUNE(64,   PA_VARIANT_BASE,    8,     1,       128,     1,         1,          PA_KV_SPLIT, 0, 0, 0, 0, 0, 0, 0);
PA_TUNE(96,   PA_VARIANT_BASE,    8,     1,       64,      1,         1,          PA_KV_SPLIT, 0, 0, 0, 0, 0, 0, 0);
PA_TUNE(128,  PA_VARIANT_BASE,    8,     1,       64,      1,         1,          PA_KV_SPLIT, 0, 0, 0, 0, 0, 0, 0);
PA_TUNE(192,  PA_VARIANT_BASE,    4,     1,       32,      0,         1,          PA_KV_SPLIT, 0, 0, 0, 0, 0, 0, 0);
PA_TUNE(256,  PA_VARIANT_BASE,    4,     1,       32,      0,         1,          PA_KV_SPLIT, 0, 0, 0, 0, 0, 0, 0);
/* Candidates (not measured yet): FlashAttention-2's sm80 warp shape, 4 warps x 32
 * rows, two blocks per SM so one block's barriers and softmax overlap the other's mma.
 * ptxas sm_80 / sm_90 registers, 0 spills: m2 hd64 255/255, m2 hd128 253/250,
 * m2j hd64 242/242. hd128 needs Q from shared memory and block_k 32 to fit 255
 * registers (block_k 64 spilled 4 bytes); m2j at hd128 spilled 8 bytes on sm_90
 * even at block_k 32, so m2j runs m2's hd128 row. smem: m2 hd64 48 KiB, m2 hd128
 * 64 KiB, m2j hd64 48 KiB (x2 blocks per SM). */
PA_TUNE(64,   PA_VARIANT_M2,      4,     2,       64,      1,         2,          PA_KV_SPLIT, 0, 0, 0, 0, 0, 0, 0);
PA_TUNE(128,  PA_VARIANT_M2,      4,     2,       32,      0,         2,          PA_KV_SPLIT, 0, 0, 0, 0, 0, 0, 0);
PA_TUNE(64,   PA_VARIANT_M2J,     4,     2,       64,      0,         2,          PA_KV_JOINT, 0, 0, 0, 0, 0, 0, 0);
PA_TUNE(128,  PA_VARIANT_M2K64,   4,     2,       64,      0,         2,          PA_KV_SPLIT, 0, 0, 0, 0, 0, 0, 0);
PA_TUNE(128,  PA_VARIANT_M2K64J,  4,     2,       64,      0,         2,          PA_KV_JOINT, 0, 0, 0, 0, 0, 0, 0);
PA_TUNE(64,   PA_VARIANT_M2K128,  4,     2,       128,     0,         2,          PA_KV_SPLIT, 0, 0, 0, 0, 0, 0, 0);
PA_TUNE(64,   PA_VARIANT_M2K128T, 4,     2,       128,     0,         2,          PA_KV_SPLIT, 1, 0, 0, 0, 0, 0, 0);
PA_TUNE(64,   PA_VARIANT_M2K128TJ, 4,    2,       128,     0,         2,          PA_KV_JOINT, 1, 0, 0, 0, 0, 0, 0);
PA_TUNE(128,  PA_VARIANT_M2K64KM, 4,     2,       64,      0,         2,          PA_KV_SPLIT, 0, 1, 0, 0, 0, 0, 0);
PA_TUNE(64,   PA_VARIANT_M2K128TJKM, 4,  2,       128,     0,         2,          PA_KV_JOINT, 1, 1, 0, 0, 0, 0, 0);
PA_TUNE(64,   PA_VARIANT_M2K128TJRS, 4,  2,       128,     0,         2,          PA_KV_JOINT, 1, 0, 1, 0, 0, 0, 0);
PA_TUNE(128,  PA_VARIANT_M2K64KMRS, 4,   2,       64,      0,         2,          PA_KV_SPLIT, 0, 1, 1, 0, 0, 0, 0);
/* Three M tiles per warp at hd64 (decision 141; forty-ninth session, H100, sustained): each
 * K / V B fragment read by ldmatrix feeds three mma (ldmatrix bytes per mma -18%), but S
 * must shrink to 64-key tiles to fit (O 96 + S 96 registers; ptxas sm_90: 52 bytes of spill
 * loads, none in the key loop); 8-13% behind m2k128tj (m3k64t 11-17%), with 11-21% less work
 * per SM cycle. Tuning rows. */
PA_TUNE(64,   PA_VARIANT_M3K64TJ, 4,     3,       64,      0,         2,          PA_KV_JOINT, 1, 0, 0, 0, 0, 0, 0);
PA_TUNE(64,   PA_VARIANT_M3K64T,  4,     3,       64,      0,         2,          PA_KV_SPLIT, 1, 0, 0, 0, 0, 0, 0);
PA_TUNE(128,  PA_VARIANT_M2K64KMRSX, 4,  2,       64,      0,         2,          PA_KV_SPLIT, 0, 1, 1, 1, 0, 0, 0);
PA_TUNE(64,   PA_VARIANT_M2K128TJX, 4,   2,       128,     0,         2,          PA_KV_JOINT, 1, 0, 0, 1, 0, 0, 0);
PA_TUNE(128,  PA_VARIANT_M2K64KMRSLK, 4, 2,       64,      0,         2,          PA_KV_SPLIT, 0, 1, 1, 0, 1, 0, 0);
PA_TUNE(64,   PA_VARIANT_M2K128TJLK, 4,  2,       128,     0,         2,          PA_KV_JOINT, 1, 0, 0, 0, 1, 0, 0);
PA_TUNE(128,  PA_VARIANT_M2K64KMRSMGSC, 4, 2,     64,      0,         2,          PA_KV_SPLIT, 0, 1, 1, 0, 0, 1, 1);
PA_TUNE(64,   PA_VARIANT_M2K128TJSC, 4,  2,       128,     0,         2,          PA_KV_JOINT, 1, 0, 0, 0, 0, 0, 1);
PA_TUNE(64,   PA_VARIANT_M2K128TJMG, 4,  2,       128,     0,         2,          PA_KV_JOINT, 1, 0, 0, 0, 0, 1, 0);
#undef PA_TUNE

/* The derived shape of one instantiation. */
template <int D, int V = PA_VARIANT_BASE>
struct pa_ampere_cfg {
  typedef pa_ampere_tune<D, V> tune;
  enum {
    head_dim = D,
    warps = tune::warps,
    threads = 32 * tune::warps,
    m_tiles = tune::m_tiles,
    warp_rows = 16 * tune::m_tiles, /* each warp owns m_tiles mma M tiles of 16 query rows */
    block_q = warp_rows * tune::warps,
    block_k = tune::block_k,
    q_in_regs = tune::q_in_regs,
    min_blocks = tune::min_blocks,
    kv_sync = tune::kv_sync,
    tree_max = tune::tree_max,
    keep_max = tune::keep_max,
    rowsum = tune::rowsum,
    xpv = tune::xpv,
    late_kv = tune::late_kv,
    mask_guard = tune::mask_guard,
    spread_kv = tune::spread_kv,
    /* Query blocks launched last-first (causal: longest blocks first). Off in the
     * base rows, which stay as measured; on sm_80 it costs hd256 a register it does
     * not have (64 bytes of spills). */
    reverse_q = V != PA_VARIANT_BASE,
  };
  /* K/V pipeline: tile n + 1 loads into one stage while tile n is computed from the other. */
  enum { stages = 2 };
  /* Shared memory, in bytes (16-bit elements): [Q][K0][V0][K1][V1][block list head]. */
  static constexpr int q_bytes = block_q * D * 2;
  static constexpr int kv_tile_bytes = block_k * D * 2;
  static constexpr int stage_bytes = 2 * kv_tile_bytes;
  static constexpr int list_offset = q_bytes + stages * stage_bytes;
  static constexpr int smem_bytes = list_offset + PA_BLOCK_LIST_SMEM_BYTES;

  static_assert(D % 32 == 0, "head dims are multiples of 32 (ldmatrix x4 covers 16 columns; "
                             "the swizzle needs a multiple of 4 chunks per row)");
  static_assert(m_tiles >= 1 && m_tiles <= 3, "one to three M tiles per warp");
  static_assert(block_k % 16 == 0, "block_k: whole mma K steps of the P.V product");
  static_assert((block_q * D / 8) % threads == 0 && (block_k * D / 8) % threads == 0,
                "tile loads: every thread copies the same number of 16-byte chunks");
  static_assert(smem_bytes <= 227 * 1024, "shared memory above the sm_90 opt-in limit");
  static_assert(min_blocks * smem_bytes <= 227 * 1024,
                "min_blocks blocks must fit the sm_90 shared memory per SM");
};

#endif
