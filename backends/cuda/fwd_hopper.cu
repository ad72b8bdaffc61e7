/* The Hopper forward kernel (sm_90a): FlashAttention-3's structure for fp16 and bf16
 * at head dims 64, 128 and 256, with wgmma.mma_async and the tensor-memory accelerator.
 *
 * One block computes 64 x NWG query rows of one (batch entry, query head) with
 * 128 x (NWG + 1) threads (NWG = 2 consumer warpgroups, 3 at hd64 by default):
 *   warpgroup 0, the producer: one thread issues TMA copies (cp.async.bulk.tensor,
 *     128-byte swizzle) of the Q tile and then, key tile after key tile, of K and V
 *     into a 2-, 3- or 4-stage shared-memory ring; each stage has "K full", "V full",
 *     "K empty" and "empty" mbarriers. setmaxnreg gives its registers to the consumers.
 *   the consumer warpgroups, 64 query rows each: S = Q.K^T by wgmma with both
 *     operands in shared memory (SS), the masks and the online softmax of
 *     common/softmax.h on the accumulator (the same steps and fragment code as the
 *     Ampere kernel: a wgmma accumulator is mma.sync's layout per warp), then
 *     O += P.V by wgmma with P from registers (RS) and V read MN-major from shared
 *     memory (imm-trans-b), so V needs no transposition.
 * How the consumers overlap their softmax with the tensor cores is the variant's
 * schedule (serial, pipe, pingpong; PA_HOPPER_VARIANT_LIST below, decisions 53, 70,
 * 71): by default at hd128 the two consumers take turns issuing their products and
 * each issues S of tile n + 1 with P.V of tile n (pingpong), releasing K as soon as
 * S has landed (on 176-key tiles on the grid kernel for plain problems, else 128); at
 * hd64 three consumers run one tile at a time each (on 192-key tiles for long plain
 * problems, else 128), and short problems and block masks run the persistent pingpong
 * kernel with consumer 1 a turn behind consumer 0 on a four-stage ring (decision 121).
 * hd256 is the same template
 * on 80-key tiles and a 2-stage ring (pa_hopper_cfg).
 *
 * Everything but the head dim, dtype and variant is a run-time value, with the Ampere
 * path's semantics and helpers: causal, windows, softcap, ALiBi, GQA, varlen,
 * seqused_k, LSE, block masks (the producer and the consumers walk the same
 * per-query-tile list of kept key tiles, block_list.cuh, built before the kernel; the
 * other tiles are never loaded, and a listed tile wholly inside kept mask blocks is
 * not masked per element). Keys past a sequence's end inside the tensor (varlen: the
 * next sequence; seqused_k: the unused rows) are loaded but masked to p = 0; past the
 * tensor's end TMA fills zeros.
 *
 * Compiled only for sm_90a (CMakeLists.txt: -gencode arch=compute_90a,code=sm_90a when
 * POLYATTN_CUDA_ARCHS holds 90); hopper_ptx.cuh has the PTX wrappers and the shared
 * memory layout. */
#define PA_CUDA_HOPPER_REAL 1

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <atomic>
#include <type_traits>

#include <cuda.h>

#include "block_ctx.cuh"
#include "block_list.cuh"
#include "kernels.h"
#include "mask.h"

#include "ampere_mma.cuh"
#include "ampere_softmax.cuh"
#include "ampere_tile.cuh"
#include "frag_scores.cuh"
#include "hopper_ptx.cuh"
#include "hopper_tma.h"
#include "ticket.cuh"

#ifndef PA_CUDA_HOPPER_BUILT
#  define PA_CUDA_HOPPER_BUILT 0
#endif
/* The bf16-only tuning variants of PA_HOPPER_VARIANT_LIST (those not "full") are
 * compiled only with the CMake option POLYATTN_CUDA_TUNING_VARIANTS (decision 112) */
#ifndef PA_CUDA_TUNING_VARIANTS
#  define PA_CUDA_TUNING_VARIANTS 0
#endif

namespace {

/* The shape of one instantiation (head dim D; 16-bit elements): FlashAttention-3's
 * hd64/hd128 tiles (64 query rows per consumer warpgroup, 128 keys, 2 or 3 stages, 4 at hd64;
 * its wider 176-key hd128 and 192-key hd64 tiles)
 * and its hd256 tile (80 keys, 2 stages: Q 64 KiB + 2 x (K + V) 160 KiB of the 227 KiB
 * a block may use; O alone is 128 of a consumer's 240 registers); the variants'
 * figures on the H200 are in bench/RESULTS.md (fourth to sixth sessions). */
template <int D, int STAGES = 2, int NWG = 2, int BK = 128, int QBUFS = 1>
struct pa_hopper_cfg {
  enum {
    consumers = NWG,       /* consumer warpgroups of 64 rows: 2, or 3 at hd64 ("-wg3") */
    block_q = 64 * NWG,    /* query rows per block */
    block_k = BK,          /* keys per K/V tile: 128 (S is 64 registers per consumer
                              thread), or 160 / 176 at hd128 ("-k160", "-k176"), 192
                              at hd64 with three consumers ("-k192"), 80 or 64 at
                              hd256 ("-k64") */
    threads = 128 * (NWG + 1), /* producer warpgroup + the consumer warpgroups */
    stages = STAGES,       /* K/V ring depth: 2, 3 ("-s3") or 4 (hd64's "-s4", "-lag") */
    q_bufs = QBUFS,        /* Q buffers: 1, or 2 in the persistent "-q2" variants */
    panels = D / 64,       /* 64-column (128-byte) panels per row: the swizzle's width */
    /* setmaxnreg budgets: 128 x 24 + 256 x 240 = 64512 (two consumers) and
     * 128 x 24 + 384 x 160 = 64512 (three), of the block's 64512 / 65536 registers at
     * launch (pa_setmaxnreg_pool) */
    producer_regs = 24,
    consumer_regs = NWG == 3 ? 160 : 240,
    /* the score passes for softcap/ALiBi/scale <= 0 and block masks: compiled out of
     * the wide tiles (hd128's 160/176 keys, hd64's 192), which run plain problems
     * only (pa_hopper_effective) */
    full_scores = BK != 160 && BK != 176 && BK != 192
  };
  static constexpr int q_panel = block_q * 128, kv_panel = block_k * 128;
  static constexpr int q_bytes = block_q * D * 2, kv_bytes = block_k * D * 2;
  /* [Q0][Q1][K0][V0][K1][V1]..., each 1024-byte aligned; + 1024 to align the start */
  static constexpr int smem_bytes = 1024 + q_bufs * q_bytes + stages * 2 * kv_bytes;
  /* the kernel's static shared memory: the mbarriers (at most 24) and the block
   * list's head, at most 1252 bytes, which ptxas rounds up to 2048 (the dynamic array's
   * 1024-byte alignment). hd256 on 80-key tiles fills the 227 KiB exactly. */
  static constexpr int static_smem_bytes = 2048;
  static_assert(8 * 24 + PA_BLOCK_LIST_SMEM_BYTES + 24 + 12 <= static_smem_bytes,
                "static shared memory: mbarriers, the list's head, the persistent hand-off, "
                "the stream-K tail's tickets");
  static_assert(D % 64 == 0, "whole 128-byte swizzle panels");
  static_assert(QBUFS == 1 || QBUFS == 2, "one or two Q buffers");
  static_assert(q_panel % 1024 == 0 && kv_panel % 1024 == 0,
                "each Q and K/V panel starts on the swizzle's period");
  static_assert(smem_bytes + static_smem_bytes <= 227 * 1024,
                "shared memory above the sm_90 opt-in limit");
  static_assert(NWG == 2 || (NWG == 3 && D == 64), "three consumers only at hd64 (registers)");
  static_assert((BK == 128 && D <= 128) || ((BK == 160 || BK == 176) && D == 128 && NWG == 2) ||
                    (BK == 192 && D == 64 && NWG == 3) ||
                    ((BK == 80 || BK == 64) && D == 256 && NWG == 2),
                "key tiles: 128 at hd64/hd128, 160/176 at hd128, 192 at hd64 (three "
                "consumers), 80/64 at hd256");
  static_assert(producer_regs * 128 + consumer_regs * 128 * NWG <= pa_setmaxnreg_pool(threads),
                "setmaxnreg budgets above the block's registers");
};

/* The consumers' schedule (POLYATTN_CUDA_HOPPER_VARIANT, read on the host):
 *   serial    each product waited for: S, softmax, P.V, one tile after the other;
 *   pipe      FlashAttention-3's intra-warpgroup overlap: S of tile n + 1 and P.V of
 *             tile n issued together, the softmax of n + 1 under that P.V;
 *   pingpong  pipe, and the two consumer warpgroups take turns issuing their
 *             products (named barriers 1 and 2), so that one's softmax runs while
 *             the other's matrix work has the tensor cores. */
enum { PA_HOPPER_SERIAL = 0, PA_HOPPER_PIPE = 1, PA_HOPPER_PINGPONG = 2 };

/* A variant (the kernel's template int V): the schedule in bits 0-1, and
 *   PA_HV_STAGES3  a three-stage K/V ring (hd128: 225 KB of the 227 KB a block may use);
 *   PA_HV_RELEASE  K is released as soon as S has landed (its own "K empty" barrier),
 *                  V after P.V, by one arrive per warp instead of one per thread; the
 *                  producer waits for each separately, so K of a later tile can load
 *                  while P.V still reads V. Without it one barrier releases both;
 *   PA_HV_WG3      three consumer warpgroups (192 query rows; hd64 only, serial or pipe:
 *                  the pingpong turns are for two), FlashAttention-3's hd64 shape;
 *   PA_HV_LAG      PERSIST with pingpong at hd64: consumer 1 takes an empty turn before
 *                  its first (consumer 0 an empty last one if it took a turn, and each
 *                  one per tile without keys), so that it runs a pingpong turn behind
 *                  consumer 0 and its products cover more of consumer 0's query-tile
 *                  boundary (with PA_HV_S4 hd64's default wherever the persistent
 *                  kernel runs since the thirtieth session, decision 121);
 *   PA_HV_S4       a four-stage K/V ring (hd64 only), for LAG's consumer 0 a tile ahead;
 *   PA_HV_MCAST    clusters of two blocks (neighbouring query tiles of one head) share
 *                  each K/V tile: each producer loads half of its rows by TMA multicast
 *                  into both blocks, so each block's L2 -> SM traffic is halved; a stage
 *                  is free when the consumers of both blocks released it (remote
 *                  arrives). Only where both blocks walk the same key tiles: no
 *                  causal/window/block mask, no varlen, an even number of query tiles
 *                  (host side, pa_hopper_effective); needs RELEASE;
 *   PA_HV_EXP16    bf16 only: the softmax's exponentials two per MUFU instruction in
 *                  fp16 (ampere_softmax.cuh, pa_exp2_pair_f16), halving the special-
 *                  function work that the tensor cores' time must hide;
 *   PA_HV_K160     hd128, plain problems only (no block mask, softcap, ALiBi, scale
 *                  <= 0: pa_hopper_effective): 160-key K/V tiles, 20% fewer tiles, so
 *                  less fixed cost per key; PA_HV_K176: 176 keys (FlashAttention-3's
 *                  hd128 tile; with O through shared memory the hd128 grid kernel's
 *                  default, decision 110). With those score passes
 *                  compiled out the kernels fit in 240 registers (with them, 96 and
 *                  318 bytes spilled, ptxas 13.0);
 *   PA_HV_TREEMAX  the softmax's row maximum as a balanced tree (ampere_softmax.cuh):
 *                  a shorter dependent chain before the exponentials, same values;
 *   PA_HV_K64      hd256: 64-key K/V tiles instead of FlashAttention-3's 80 (four
 *                  fewer S registers, 25% more tiles);
 *   PA_HV_LAZYO    O is rescaled only in warps where some row's maximum moved (a
 *                  warp-uniform branch; the skipped factors are exactly 1): at hd256
 *                  the rescale is 128 multiplications per thread and tile, more than
 *                  the tile's 40 exponentials;
 *   PA_HV_PERSIST  a persistent grid (one block per SM walking a fixed sequence of query
 *                  tiles; pa_hopper_tile_at) and a "Q empty" barrier: the consumers
 *                  release Q once the tile's last S has landed, so the producer loads
 *                  the next tile's Q, K and V under the last P.V, the normalisation
 *                  and the O stores (FlashAttention-3's persistent kernel without its
 *                  dynamic scheduler). Under a causal mask or a one-sided window a
 *                  block takes the query tiles in pairs, the longest with the
 *                  shortest of one head, so that static turns balance; under a block
 *                  mask the blocks take tiles from a counter instead (decision 94),
 *                  the last ones longest first (decision 98).
 *                  Not with multicast (pa_hopper_effective). Its producer takes 24
 *                  registers and the consumers 240, as in the grid (with 40 / 232, the
 *                  seventh session's choice, the kernel ran 2.7% slower at hd128
 *                  S8192 and BLOCK at 100% density 3.8% slower than dense: ninth
 *                  session, R5; at 24 the seventh session saw ptxas spill 8 bytes in
 *                  the producer's walk, off the consumers' path). A tile's last P.V
 *                  issued in the next tile's first turn, with its O stored after that
 *                  turn's softmax (one turn fewer per tile), measured 6-8% slower at
 *                  hd128 S512 (hd64 2%) and level from 4096 keys (decision 113;
 *                  removed);
 *   PA_HV_Q2       PERSIST with two Q buffers: the producer loads the next tile's Q as
 *                  soon as it has issued this tile's K/V loads (two stages ahead of
 *                  the consumers), not after the consumers' last S of this tile, so
 *                  Q's load time is off the tile boundary; 32 KiB more shared memory
 *                  at hd128 (not at hd256, whose two stages fill the 227 KiB);
 *   PA_HV_OST      O leaves through shared memory and the TMA: each consumer warpgroup
 *                  writes its normalised rows into its own rows of the tile's Q buffer
 *                  (dead once its last S has landed), swizzled as the TMA's 128-byte
 *                  pattern, and one thread stores them with a bulk tensor copy, instead
 *                  of 4-byte stores from registers (8 half-filled sectors per warp
 *                  instruction, 32 per thread per tile at hd128). Under PERSIST only with
 *                  Q2: the Q buffer is released once the copy has read it, which the
 *                  other buffer's tile hides. Tiles that end past their sequence's last
 *                  row store from registers as before;
 *   PA_HV_K192     hd64 with WG3, plain problems only (as K176): 192-key K/V tiles
 *                  (FlashAttention-3's hd64 non-causal tile, 192 x 192), a third fewer
 *                  tiles than 128 keys, so a third fewer per-tile fixed costs (waits,
 *                  the row maxima's shuffles, O's rescale) per key; S is 96 of a
 *                  consumer's 160 registers (twentieth session);
 *   PA_HV_KEEPM    the softmax's kept maximum (pa_frag_softmax_keep, FlashAttention-4's
 *                  conditional rescaling): a warp's rows keep their reference m unless a
 *                  score exceeds it by more than 8 (log2 units), decided by one vote, so
 *                  most key tiles skip the row maxima's shuffles, alpha and O's rescale
 *                  (thirty-first session, decision 122: +3.6-4.1% on the 176-key grid
 *                  kernel; "-km"; the grid defaults' and hd256's since decision 124,
 *                  bf16 tuning variants elsewhere); PA_HV_KEEPM1 the same except on
 *                  a query tile's first key tile, where every m is -inf ("-km1"; the
 *                  persistent and the wide-tile grid kernels' default since decision
 *                  127);
 *   PA_HV_PEEL     with KEEPM1 on the serial wide-tile kernel (hd64's 192-key one): a
 *                  query tile's first key tile taken before the key loop, so the loop
 *                  holds the kept maximum's softmax only (unpeeled, ptxas keeps both
 *                  forms in it: 1687 instructions against "-km"'s 1263; peeled 1256, no
 *                  spills; thirty-sixth and thirty-seventh sessions' SASS); "-pl", a bf16
 *                  tuning variant, 3-4% slower than the unpeeled default (thirty-eighth
 *                  session, decision 128). Not on the kernels whose score pass
 *                  has the general and block paths (the three-consumer kernel spilled
 *                  peeled);
 *   PA_HV_PLAIN    the score pass without the softcap / ALiBi / scale <= 0 and block-mask
 *                  paths, as the wide tiles compile it, on a kernel that otherwise has
 *                  them; runs plain problems only (pa_hopper_effective drops it for the
 *                  others). The persistent defaults' "-pn" forms
 *                  ("pingpong-rel-p-q2-os-km1-pn" at hd128, "pingpong-rel-p-q2-os-lag-
 *                  km1-pn" at hd64) are what plain problems run there since decision 128
 *                  (+1.8-4.1% sustained); hd256's ("pingpong-rel-os-km-pn", a bf16 tuning
 *                  variant) measured level with its default. Written for kernels whose
 *                  key loop holds every path of the score pass (hd256's: 4524 SASS
 *                  instructions, 955 plain-only).
 *   PA_HV_SK       with PERSIST, on problems whose query tiles all have the same key
 *                  tiles (dense, no mask, window or varlen: pa_hopper_sk_uniform): a
 *                  stream-K tail. A grid of G blocks walks the first rounds of whole
 *                  tiles less one (sk_dp each); the remaining R tiles (G < R < 2G) are
 *                  one run of R x nk key tiles cut into G equal shares, one per block,
 *                  so every block ends after the same work instead of the last round
 *                  running R - G tiles on as many SMs. A share starts and ends inside
 *                  at most two tiles (each share is longer than a tile), so a cut tile
 *                  has two pieces; each piece's warpgroup writes O unnormalised, m and
 *                  l to the workspace (pa_hopper_sk_bytes) and takes a ticket, and the
 *                  second to arrive merges the other's piece into its own and stores
 *                  the tile (the tagged word of ticket.cuh, as decode's ticket merge, so no
 *                  memset). Written for the 16k-token sweep's 2048 tiles at hd128
 *                  (15.5 rounds on 132 SMs: 3% of the SMs' time idle in the last).
 *   PA_HV_KSUM     the kept maximum decided on the row sums (pa_frag_softmax_keep_sum,
 *                  decision 134): from the first key tile on which every row of the warp
 *                  has a finite m, the exponentials are taken against the kept m at once
 *                  and a thread's partial row sums (each bounds its p) are the vote, so
 *                  the fast path takes no row maxima. The rare warp whose sums exceed
 *                  2^8 finds its rows' largest p and moves m by powers of two; where one
 *                  overflowed (+inf: the scores are lost), the warp recomputes its S
 *                  rows from Q and K in shared memory by mma.sync (so K's stage is
 *                  released after the softmax, not when S lands) and takes the usual
 *                  steps ("-ks"). hd128's defaults (its 176-key grid kernel and both
 *                  persistent "-pn" forms) and hd64's three-consumer grid default since
 *                  the forty-third session (sustained: +2.6-5.3% at hd128, +2.4-2.6% at
 *                  hd64 S2048 / S4096); hd64's 192-key form is "full" but not the default
 *                  (level at S8192, -1.3% to -1.6% at S16384, +2% causal 8192); hd64's
 *                  persistent form ("-lag-km1-pn-ks": 1.0-1.5% slower at S512) and
 *                  hd256's (spills) are bf16 tuning variants.
 * At hd256 the ring has two stages (a third does not fit) and only the variants that
 * pa_hopper_compiled_at admits are compiled ("pingpong-rel-os-km", hd256's default, among
 * them). */
enum { PA_HV_SCHED = 3, PA_HV_STAGES3 = 4, PA_HV_RELEASE = 8, PA_HV_WG3 = 16, PA_HV_MCAST = 32,
       PA_HV_EXP16 = 64, PA_HV_K160 = 128, PA_HV_TREEMAX = 256, PA_HV_K176 = 512,
       PA_HV_K64 = 1024, PA_HV_LAZYO = 2048, PA_HV_PERSIST = 4096, PA_HV_Q2 = 8192,
       PA_HV_OST = 16384, PA_HV_K192 = 32768, PA_HV_LAG = 65536, PA_HV_S4 = 131072,
       PA_HV_KEEPM = 262144, PA_HV_KEEPM1 = 524288, PA_HV_PEEL = 1048576,
       PA_HV_PLAIN = 2097152, PA_HV_SK = 4194304, PA_HV_KSUM = 8388608 };

/* The block's mbarriers (slots of one shared array; x stages: one per ring stage) and the
 * consumers' named barriers for the pingpong turns (id 0 is __syncthreads). */
enum {
  PA_HOPPER_MAX_STAGES = 4,
  PA_HOPPER_MBAR_Q_FULL = 0, /* Q landed (TMA transaction count) */
  PA_HOPPER_MBAR_K_FULL = 1, /* x stages: K of the stage landed */
  PA_HOPPER_MBAR_V_FULL = PA_HOPPER_MBAR_K_FULL + PA_HOPPER_MAX_STAGES,  /* V landed */
  PA_HOPPER_MBAR_K_EMPTY = PA_HOPPER_MBAR_V_FULL + PA_HOPPER_MAX_STAGES, /* K read (RELEASE) */
  PA_HOPPER_MBAR_EMPTY = PA_HOPPER_MBAR_K_EMPTY + PA_HOPPER_MAX_STAGES,  /* V (and K) read */
  PA_HOPPER_MBAR_Q_EMPTY = PA_HOPPER_MBAR_EMPTY + PA_HOPPER_MAX_STAGES, /* Q read (PERSIST) */
  PA_HOPPER_MBAR_TILE_FULL = PA_HOPPER_MBAR_Q_EMPTY + 1,  /* PERSIST: `handoff` written */
  PA_HOPPER_MBAR_TILE_EMPTY = PA_HOPPER_MBAR_TILE_FULL + 1, /* PERSIST: `handoff` read */
  PA_HOPPER_MBAR_Q_FULL1 = PA_HOPPER_MBAR_TILE_EMPTY + 1, /* Q2: the second Q buffer landed */
  PA_HOPPER_MBAR_Q_EMPTY1 = PA_HOPPER_MBAR_Q_FULL1 + 1,   /* Q2: the second Q buffer read */
  PA_HOPPER_MBAR_TAIL = PA_HOPPER_MBAR_Q_EMPTY1 + 1,   /* PERSIST, a.tail: the tail's order */
  PA_HOPPER_MBARS = PA_HOPPER_MBAR_TAIL + 1, /* <= 24: static_smem_bytes */
  PA_HOPPER_BAR_TURN0 = 1, /* consumer cw's turn: named barrier TURN0 + cw */
  PA_HOPPER_BAR_OST0 = 3,  /* OST: consumer cw's O rows written (128 threads) */
  PA_HOPPER_BAR_TAIL = 6,  /* PERSIST, a.tail: the tail's counts read (producer warps 1-3) */
  PA_HOPPER_BAR_SK0 = 7    /* SK: consumer cw's piece written / its ticket read (128 threads) */
};


struct pa_hopper_args {
  CUtensorMap tq, tk, tv; /* 64-byte aligned (CUtensorMap's own alignment) */
  CUtensorMap to;         /* OST: O in boxes of 64 columns x 64 rows */
  pa_problem p;
  const int32_t *block_list; /* BLOCK: the key-tile list (block_list.cuh); NULL when dense */
  const int32_t *dense_gate; /* AUTO_BLOCK's dense fallback: run only if *dense_gate != 0 */
  int pair;                  /* PERSIST: query tiles taken in pairs (pa_hopper_tile_at) */
  /* PERSIST under BLOCK: the next query tile to take, a counter in the workspace that
   * the list builder zeroes (the tiles' key counts vary with the mask, so the blocks
   * take them as they finish, in the grid's order, instead of a fixed sequence) */
  int32_t *next_tile;
  /* with next_tile: the last `tail` units (<= PA_BLOCK_LIST_SMEM) are taken longest
   * first (pa_hopper_tail_order), so that the blocks finish closer together */
  int tail;
  int o_tma; /* OST: `to` describes O (else O leaves from registers) */
  /* The grid kernel without pingpong turns: a consumer warpgroup whose 64 rows all lie
   * past its sequence's end does no work (the ring's release counts leave it out;
   * POLYATTN_CUDA_HOPPER_IDLE=0, a tuning aid, keeps it computing zero rows) */
  int skip_idle;
  /* SK (sk_iters > 0): each block's whole tiles before its share (pa_hopper_sk_at), the
   * key tiles of a query tile, the shares' key tiles in all; the pieces' partials
   * (pa_hopper_sk_slot) and the tickets, one per cut and consumer, in the workspace */
  int sk_dp, sk_nk;
  int64_t sk_iters;
  float *sk_part;
  unsigned long long *sk_ticket;
};

/* PERSIST: the k-th query tile of block `blk` in a grid of `nblk` blocks, as (batch
 * entry, head, first row); false past the block's last. The tiles of one head come
 * one after the other across the grid (blocks running together share K/V in L2),
 * longest first under a causal mask. In pairs, unit u of a head holds tiles nq-1-u
 * and u, whose causal key counts add up to the same for every unit; an odd middle
 * tile's second half is given a first row past the end, which the caller skips. */
__device__ __forceinline__ bool pa_hopper_tile_at(const pa_problem &p, int bq, int pair, int k,
                                                  int blk, int nblk, int *b, int *h, int *i0) {
  const int nq = (p.seqlen_q + bq - 1) / bq;
  const int span = pair ? (nq + 1) / 2 : nq; /* units per (batch entry, head) */
  const int u = blk + (pair ? k >> 1 : k) * nblk;
  if (u >= span * p.heads_q * p.batch) return false;
  const int x = u % span, hb = u / span;
  *h = hb % p.heads_q;
  *b = hb / p.heads_q;
  const int qt = pair && (k & 1) ? (x == nq - 1 - x ? nq : x) : nq - 1 - x;
  *i0 = qt * bq;
  return true;
}

/* SK: the k-th piece of block `blk` in a grid of `nblk`: query tile (as
 * pa_hopper_tile_at's) and its key tiles kb..ke-1; false past the block's last. Pieces
 * 0..sk_dp-1 are whole tiles in the fixed sequence; then the block's share of the
 * remaining tiles' key tiles, [blk I / nblk, (blk + 1) I / nblk) of I = sk_iters, tile
 * by tile. */
__device__ __forceinline__ bool pa_hopper_sk_at(const pa_problem &p, const pa_hopper_args &a,
                                                int bq, int k, int blk, int nblk, int *b, int *h,
                                                int *i0, int *kb, int *ke) {
  const int nk = a.sk_nk;
  if (k < a.sk_dp) {
    *kb = 0, *ke = nk;
    return pa_hopper_tile_at(p, bq, 0, k, blk, nblk, b, h, i0);
  }
  const int64_t s = (int64_t)blk * a.sk_iters / nblk, e = (int64_t)(blk + 1) * a.sk_iters / nblk;
  const int j = k - a.sk_dp;
  const int64_t it = j == 0 ? s : (s / nk + j) * nk;
  if (it >= e) return false;
  const int64_t t = it / nk;
  *kb = (int)(it - t * nk);
  *ke = (int)min((int64_t)nk, e - t * nk);
  return pa_hopper_tile_at(p, bq, 0, 0, (int)((int64_t)a.sk_dp * nblk + t), 1, b, h, i0);
}

/* SK: the tickets' tag (ticket.cuh, as decode_mma.cuh's kTicketTag) */
constexpr unsigned long long PA_HOPPER_SK_TAG = 0x7ff5c0debeefull;

/* SK: a x fa + b x fb with each product rounded before the sum, so that the result does
 * not depend on which piece arrived last (no fused multiply-add of one order): the
 * repeated calls stay bit-identical. */
__device__ __forceinline__ float pa_sk_fold(float a, float fa, float b, float fb) {
  return __fadd_rn(__fmul_rn(a, fa), __fmul_rn(b, fb));
}

/* SK: floats of one piece's partial for a consumer warpgroup: per thread its O
 * accumulator and (m, l) of its two rows. A cut between the shares of blocks c and
 * c + 1 has two such slots per consumer (the head piece, block c's last; the tail
 * piece, block c + 1's first). */
template <int D>
__host__ __device__ constexpr int pa_hopper_sk_slot() {
  return 128 * (D / 8 * 4 + 4);
}

/* PERSIST under BLOCK: the order of the last `tail` of `units` query tiles, longest
 * list first (ties in unit order), as order[r] = the r-th tail unit to take, minus
 * the tail's first. The blocks take tiles from a counter in the grid's order (heads
 * one after the other: K/V shared in L2); a tile's time follows its list's length, so
 * in that order the blocks' last tiles end unevenly (ninth session's ncu: SMs active
 * 94.0% of the BLOCK kernel's cycles against 95.7% for the dense grid kernel). Taking
 * the tail longest first (LPT) leaves the shortest tiles for last; the tail's tiles
 * are the last few heads', whose K/V fit in L2 together. Computed by each block's
 * idle producer threads (thread x of nt) while the first tiles run; every block
 * computes the same order. */
template <int BQ, int BK>
__device__ __forceinline__ void pa_hopper_tail_order(const pa_problem &p, const int32_t *list,
                                                     int units, int tail, int16_t *order,
                                                     int16_t *counts, int x, int nt) {
  const int first = units - tail;
  for (int j = x; j < tail; j += nt) {
    int b, h, i0;
    pa_hopper_tile_at(p, BQ, 0, 0, first + j, 1, &b, &h, &i0);
    const int n = __ldg(list + pa_block_list_slot(p, b, h, i0 / BQ, BQ, BK)) & PA_BLOCK_LIST_COUNT;
    counts[j] = (int16_t)min(n, 32767); /* longer lists tie, broken by unit */
  }
  pa_named_sync(PA_HOPPER_BAR_TAIL, nt);
  for (int j = x; j < tail; j += nt) {
    const int cj = counts[j];
    int rank = 0;
    for (int i = 0; i < tail; ++i) {
      const int ci = counts[i];
      rank += ci > cj || (ci == cj && i < j);
    }
    order[rank] = (int16_t)j;
  }
}

/* The list's row groups: one per consumer warpgroup (64 rows). A warpgroup's wgmma
 * spans all of its rows, so a warpgroup whose rows keep nothing of a listed tile
 * (its skip bit) masks the whole tile per element rather than skipping it: both
 * consumers then walk the same tiles, which the stage barriers and the pingpong
 * turns count on. Block masks never run the three-consumer or multicast variants
 * (pa_hopper_effective), so a block is always 128 rows = two groups. */
enum { PA_HOPPER_LIST_ROWS = 64 };

static_assert((int)pa_hopper_cfg<256, 2, 2, 80>::block_q == (int)PA_CUDA_HOPPER_TILE &&
                  (int)pa_hopper_cfg<64>::block_q == (int)PA_CUDA_HOPPER_TILE &&
                  (int)pa_hopper_cfg<64>::block_k == (int)PA_CUDA_HOPPER_TILE &&
                  (int)pa_hopper_cfg<128>::block_q == (int)PA_CUDA_HOPPER_TILE &&
                  (int)pa_hopper_cfg<128>::block_k == (int)PA_CUDA_HOPPER_TILE,
              "cuda_dispatch.c routes block masks by PA_CUDA_HOPPER_TILE");

/* The keys per K/V tile of variant v at head dim d (pa_hopper_cfg's BK; also
 * pa_hopper_smem_of's, on the host). */
constexpr int pa_hopper_block_k(int d, int v) {
  return d == 256            ? (v & PA_HV_K64 ? 64 : 80)
         : v & PA_HV_K192 ? 192
         : v & PA_HV_K176 ? 176
         : v & PA_HV_K160 ? 160
                          : 128;
}

/* The configuration of variant V at head dim D. */
template <int D, int V>
using pa_hopper_vcfg = pa_hopper_cfg<D, V & PA_HV_S4 ? 4 : V & PA_HV_STAGES3 ? 3 : 2,
                                     V & PA_HV_WG3 ? 3 : 2,
                                     pa_hopper_block_k(D, V), V & PA_HV_Q2 ? 2 : 1>;
static_assert(PA_HOPPER_MBARS <= 24, "static_smem_bytes counts 24 mbarriers");

/* Event stamps for bench/gpu/hopper_timeline.cu (which defines PA_HOPPER_TIMELINE before
 * including this file; the library never does): thread 0 of each warpgroup (0: the
 * producer's issuing thread, 1-3: consumers) of blocks < PA_HTL_BLOCKS appends (event,
 * SM clock) pairs, at most PA_HTL_N per warpgroup (grid kernels: the blocks of head 0 and
 * batch entry 0); the harness sums the cycles between
 * consecutive events by pair. Events: consumers 1 tile taken, 2 Q landed, 3 K (and V)
 * landed, 4 turn begun, 5 products issued (turn ended), 6 S landed, 7 softmax done, 8 P.V
 * landed, 9 P packed, 10 the last V landed, 11 O stored; producer 21 tile handed over,
 * 22 a stage's K free, 23 its V free, 24 K and V issued, 25 the Q buffer free, 26 the
 * hand-off slot free. (A query tile's first key tile: 7 after P's packing, and 5 -> 6
 * includes the previous tile's O copy wait; 11 once the copy is issued.) Pipelined
 * schedules only (the serial one has no stamps). */
#ifdef PA_HOPPER_TIMELINE
enum { PA_HTL_BLOCKS = 132, PA_HTL_N = 4096 };
__device__ uint32_t pa_htl[PA_HTL_BLOCKS][4][PA_HTL_N][2];
__device__ int pa_htl_count[PA_HTL_BLOCKS][4];
#  define PA_HTL(ev)                                                                          \
    do {                                                                                      \
      if (htl_on && htl_n < PA_HTL_N) {                                                       \
        uint32_t c_;                                                                          \
        asm volatile("mov.u32 %0, %%clock;\n" : "=r"(c_)::"memory");                          \
        pa_htl[blockIdx.x][htl_wg][htl_n][0] = (ev);                                          \
        pa_htl[blockIdx.x][htl_wg][htl_n][1] = c_;                                            \
        ++htl_n;                                                                              \
      }                                                                                       \
    } while (0)
#  define PA_HTL_END()                                                                        \
    do {                                                                                      \
      if (htl_on) pa_htl_count[blockIdx.x][htl_wg] = htl_n;                                   \
    } while (0)
#else
#  define PA_HTL(ev) ((void)0)
#  define PA_HTL_END() ((void)0)
#endif

template <typename T, int D, int V>
__global__ void __launch_bounds__(pa_hopper_vcfg<D, V>::threads, 1)
    pa_hopper_fwd_kernel(const __grid_constant__ pa_hopper_args a) {
#if PA_HOPPER_ARCH_OK
  typedef pa_hopper_vcfg<D, V> cfg;
  enum {
    SCHED = V & PA_HV_SCHED,
    STAGES = cfg::stages,
    RELEASE = (V & PA_HV_RELEASE) != 0,
    NWG = cfg::consumers,
    CONSUMER_WARPS = 4 * NWG,
    MCAST = (V & PA_HV_MCAST) != 0,
    CTAS = MCAST ? 2 : 1, /* blocks whose consumers release each stage */
    EXP16 = (V & PA_HV_EXP16) && std::is_same<T, __nv_bfloat16>::value,
    TREEMAX = (V & PA_HV_TREEMAX) != 0,
    LAZY_O = (V & PA_HV_LAZYO) != 0,
    PERSIST = (V & PA_HV_PERSIST) != 0,
    QBUFS = cfg::q_bufs,
    OST = (V & PA_HV_OST) != 0,
    KEEPM = (V & (PA_HV_KEEPM | PA_HV_KEEPM1)) != 0,
    KEEP_FROM_2ND = (V & PA_HV_KEEPM1) != 0,
    PEEL = (V & PA_HV_PEEL) != 0,
    FULL_SCORES = cfg::full_scores && !(V & PA_HV_PLAIN), /* PLAIN: the plain pass only */
    SK = (V & PA_HV_SK) != 0,
    KSUM = (V & PA_HV_KSUM) != 0
  };
  static_assert(!(KSUM && EXP16), "the kept maximum takes its exponentials one by one");
  static_assert(!SK || (PERSIST && NWG == 2),
                "the stream-K tail is the two-consumer persistent walk's (pa_hopper_sk_bytes)");
  static_assert(!PEEL || (KEEP_FROM_2ND && SCHED == PA_HOPPER_SERIAL && !FULL_SCORES),
                "the peel is for the serial wide-tile kernels' -km1 form");
  static_assert(!(KEEPM && EXP16), "the kept maximum takes its exponentials one by one");
  static_assert(!OST || !PERSIST || QBUFS == 2, "O through a Q buffer needs the second one");
  static_assert(QBUFS == 1 || PERSIST, "a second Q buffer is for the persistent walk");
  static_assert(!MCAST || (V & PA_HV_RELEASE), "multicast releases per warp");
  static_assert(!(MCAST && PERSIST), "a persistent block has no fixed cluster peer");
  static_assert(!(V & PA_HV_LAG) || (PERSIST && SCHED == PA_HOPPER_PINGPONG),
                "the lag shifts the persistent walk's pingpong turns");
  /* the multicast's producer needs more than 24 registers: 40, and the consumers 232 /
   * 152 (the persistent walk's producer keeps 24: 8 fewer consumer registers cost
   * more than its spill, see PA_HV_PERSIST) */
  enum {
    WIDE_PRODUCER = MCAST,
    PRODUCER_REGS = WIDE_PRODUCER ? 40 : cfg::producer_regs,
    CONSUMER_REGS = WIDE_PRODUCER ? (NWG == 3 ? 152 : 232) : cfg::consumer_regs
  };
  static_assert(PRODUCER_REGS * 128 + CONSUMER_REGS * 128 * NWG <=
                    pa_setmaxnreg_pool(cfg::threads),
                "setmaxnreg budgets above the block's registers");
  static_assert(NWG == 2 || SCHED != PA_HOPPER_PINGPONG, "pingpong turns are for two consumers");
  enum {
    BQ = cfg::block_q,
    BK = cfg::block_k,
    S_TILES = BK / 8,   /* 8-key chunks of the S accumulator */
    O_TILES = D / 8,    /* 8-dim chunks of the O accumulator */
    QK_STEPS = D / 16,  /* k16 steps of Q.K^T */
    PV_STEPS = BK / 16, /* k16 steps of P.V */
    PANELS = cfg::panels,
    PIPE = SCHED != PA_HOPPER_SERIAL,
    PINGPONG = SCHED == PA_HOPPER_PINGPONG
  };
  const pa_problem &p = a.p;
  /* AUTO_BLOCK's dense launch: the estimate on the device said sparse, so the BLOCK
   * kernel launched beside this one computes the output (cuda_dispatch.c). */
  if (a.dense_gate && *a.dense_gate == 0) return;
  extern __shared__ __align__(1024) unsigned char pa_smem[];
  __shared__ __align__(8) uint64_t bars[PA_HOPPER_MBARS];
  __shared__ int32_t list_s[PA_BLOCK_LIST_SMEM]; /* the list's head (block_list.cuh) */
  const uint32_t s_q = (pa_hsmem(pa_smem) + 1023u) & ~1023u;
  /* Q buffer x at s_q + x q_bytes; stage s: K at s_kv + 2s kv_bytes, V after it */
  const uint32_t s_kv = s_q + QBUFS * cfg::q_bytes;
  auto b_q = [&](int x) {
    return pa_hsmem(&bars[x ? PA_HOPPER_MBAR_Q_FULL1 : PA_HOPPER_MBAR_Q_FULL]);
  };
  /* PERSIST: buffer x's Q read by every consumer warp (OST: and its O copy out by
   * every consumer warpgroup) */
  auto b_qempty = [&](int x) {
    return pa_hsmem(&bars[x ? PA_HOPPER_MBAR_Q_EMPTY1 : PA_HOPPER_MBAR_Q_EMPTY]);
  };
  auto b_kfull = [&](int s) { return pa_hsmem(&bars[PA_HOPPER_MBAR_K_FULL + s]); };
  auto b_vfull = [&](int s) { return pa_hsmem(&bars[PA_HOPPER_MBAR_V_FULL + s]); };
  auto b_empty = [&](int s) { return pa_hsmem(&bars[PA_HOPPER_MBAR_EMPTY + s]); };
  auto b_kempty = [&](int s) { return pa_hsmem(&bars[PA_HOPPER_MBAR_K_EMPTY + s]); };
  const uint32_t b_tfull = pa_hsmem(&bars[PA_HOPPER_MBAR_TILE_FULL]);
  const uint32_t b_tempty = pa_hsmem(&bars[PA_HOPPER_MBAR_TILE_EMPTY]);
  const uint32_t b_tail = pa_hsmem(&bars[PA_HOPPER_MBAR_TAIL]);

  /* The block's query tiles: one per block, query blocks last-first (under a causal
   * mask the later rows keep the most keys), or PERSIST's: the producer takes each
   * (pa_hopper_tile_at's fixed sequence, or the next from a.next_tile) and hands it
   * to the consumers through `handoff`, guarded by its own pair of barriers (written:
   * the producer's arrive; read: every consumer thread's), which compute-sanitizer's
   * racecheck follows (with Q's barrier alone, released by the TMA's bytes, it reported
   * the hand-off as a race: eighth session's final run). Handing over the whole
   * context that take() computes instead made the consumers slower (tenth session,
   * R1: 2.7% more active cycles under a block mask, 4% at full density): its fields
   * then stay in registers through the tile instead of being derived from the
   * parameters where used. */
  /* PERSIST: the tile's batch entry, head, first row; valid; SK: its key tiles kb, ke */
  __shared__ int32_t handoff[6];
  __shared__ int32_t sk_last[3]; /* SK: consumer cw's piece completes its tile (the ticket) */
  const bool sk_on = SK && a.sk_iters > 0;
  pa_block_ctx c;
  int n_lo = 0, n_hi = 0;
  const bool use_block_mask = a.block_list != nullptr;
  const int32_t *slot = nullptr; /* BLOCK: the tile's list */
  bool listed = false;           /* BLOCK: walk the list (else the tile is full: dense) */
  auto take = [&](int b, int h, int i0) -> bool { /* false: past the end, skip it */
    if (!pa_block_ctx_init(c, p, b, h, i0, BQ)) return false;
    n_lo = (int)(c.klo / BK);
    n_hi = c.klo < c.khi ? (int)((c.khi + BK - 1) / BK) : n_lo;
    if (use_block_mask) {
      slot = pa_block_walk_slot(a.block_list, p, c, BQ, BK);
      listed = !(__ldg(slot) & PA_BLOCK_LIST_FULL);
    }
    return true;
  };
  if (!PERSIST && !take(blockIdx.z, blockIdx.y, (gridDim.x - 1 - blockIdx.x) * BQ)) return;
  /* SKIP_IDLE: consumer warpgroups at or past `active` have no row in the sequence
   * (a.skip_idle; the grid kernel's one tile, no turns to keep, no cluster peer) */
  enum { SKIP_IDLE = !PERSIST && !PINGPONG && !MCAST };
  const int active = SKIP_IDLE && a.skip_idle ? pa_block_ctx_warpgroups(c, NWG) : NWG;
  const int tid = threadIdx.x;
#ifdef PA_HOPPER_TIMELINE
  const int htl_wg = tid / 128;
  const bool htl_on =
      tid % 128 == 0 && blockIdx.x < PA_HTL_BLOCKS && blockIdx.y == 0 && blockIdx.z == 0;
  int htl_n = 0;
#endif
  /* the grid's list head is copied to shared memory, before the barrier; PERSIST reads
   * each tile's list from global memory (written by the builder kernel before) */
  if (!PERSIST && listed) pa_block_walk_start<cfg::threads>(list_s, slot, tid);
  /* The visit-th key tile (n_hi past the last), and whether consumer group g must mask
   * it per element: dense or a full tile (PA_BLOCK_LIST_FULL), tiles n_lo.. in order;
   * BLOCK, the list's entries. */
  auto walk = [&](int visit, int g, bool *partial) -> int {
    if (!listed) {
      *partial = false;
      return n_lo + visit < n_hi ? n_lo + visit : n_hi;
    }
    const int e = PERSIST ? __ldg(slot + 1 + visit) : pa_block_walk_at(list_s, slot, visit);
    *partial = pa_block_entry_partial(e, g) || pa_block_entry_skip(e, g);
    return pa_block_entry_tile(e);
  };

  if (tid == 0) {
    for (int x = 0; x < QBUFS; ++x) {
      pa_mbar_init(b_q(x), 1);
      pa_mbar_init(b_qempty(x), OST ? NWG : CONSUMER_WARPS);
    }
    for (int s = 0; s < STAGES; ++s) {
      pa_mbar_init(b_kfull(s), 1);
      pa_mbar_init(b_vfull(s), 1);
      /* RELEASE: one arrive per consumer warp, else every consumer thread, per tile */
      pa_mbar_init(b_kempty(s), RELEASE ? CTAS * 4 * active : 128 * active);
      pa_mbar_init(b_empty(s), RELEASE ? CTAS * 4 * active : 128 * active);
    }
    pa_mbar_init(b_tfull, 1);
    pa_mbar_init(b_tempty, 32 * CONSUMER_WARPS);
    pa_mbar_init(b_tail, 96);
    pa_mbar_init_fence();
  }
  /* multicast: the peer's copies and arrives may reach this block's barriers as soon
   * as it passes this point, so both blocks' inits come first */
  const uint32_t rank = MCAST ? pa_cluster_rank() : 0;
  if (MCAST)
    pa_cluster_sync();
  else
    __syncthreads();

  if (tid < 128) {
    /* The producer. */
    pa_setmaxnreg_dec<PRODUCER_REGS>();
    /* the tail's order into list_s (unused by PERSIST) by warps 1-3, during the first
     * round of tiles (the tail never includes it: host side) */
    int16_t *tail_order = reinterpret_cast<int16_t *>(list_s);
    const int units = (int)((p.seqlen_q + BQ - 1) / BQ) * p.heads_q * p.batch; /* PERSIST */
    if (PERSIST && a.tail > 0 && tid >= 32) {
      pa_hopper_tail_order<BQ, BK>(p, a.block_list, units, a.tail, tail_order,
                                   tail_order + PA_BLOCK_LIST_SMEM, tid - 32, 96);
      pa_mbar_arrive(b_tail);
    }
    if (tid == 0) {
      int stage = 0, phase = 0; /* the ring's, across the block's tiles */
      const bool dynamic = PERSIST && a.next_tile != nullptr;
      int unit = dynamic ? atomicAdd(a.next_tile, 1) : 0; /* fetched a tile ahead */
      /* tiles taken: Q buffer taken % QBUFS, its use taken / QBUFS, the hand-off's
       * phase taken & 1 */
      int taken = 0;
      for (int k = 0;; ++k) {
        if (PERSIST) {
          int b, h, i0, kb = 0, ke = 0;
          if (sk_on) {
            if (!pa_hopper_sk_at(p, a, BQ, k, blockIdx.x, gridDim.x, &b, &h, &i0, &kb, &ke))
              break;
          } else if (dynamic ? unit >= units
                             : !pa_hopper_tile_at(p, BQ, a.pair, k, blockIdx.x, gridDim.x, &b,
                                                  &h, &i0)) {
            break;
          }
          if (dynamic) {
            int u = unit;
            const int first = units - a.tail; /* the tail: longest first */
            if (a.tail > 0 && u >= first) { /* the barrier completes once: then no wait */
              pa_mbar_wait(b_tail, 0);
              u = first + tail_order[u - first];
            }
            pa_hopper_tile_at(p, BQ, 0, 0, u, 1, &b, &h, &i0);
            unit = atomicAdd(a.next_tile, 1);
          }
          if (!take(b, h, i0)) continue;
          if (sk_on) n_lo = kb, n_hi = ke;
          /* the consumers are done with this Q buffer's previous tile and have read
           * `handoff` (a fresh barrier counts as released) */
          pa_mbar_wait(b_qempty(taken % QBUFS), ((taken / QBUFS) & 1) ^ 1);
          PA_HTL(25);
          pa_mbar_wait(b_tempty, (taken & 1) ^ 1);
          PA_HTL(26);
          handoff[0] = b, handoff[1] = h, handoff[2] = i0, handoff[3] = 1;
          if (SK) handoff[4] = kb, handoff[5] = ke;
          pa_mbar_arrive(b_tfull);
          PA_HTL(21);
        } else if (k > 0) {
          break;
        }
        const int qb = taken % QBUFS;
        ++taken;
        const int bcoord = p.varlen ? 0 : c.b; /* the tensor maps' batch coordinate */
        pa_mbar_arrive_expect_tx(b_q(qb), cfg::q_bytes);
#pragma unroll
        for (int x = 0; x < PANELS; ++x)
          pa_tma_load_4d(s_q + qb * cfg::q_bytes + x * cfg::q_panel, &a.tq, b_q(qb), 64 * x,
                         (int)c.seq.q_start + c.i0, c.h, bcoord);
        bool partial;
        int visit = 0, n = walk(0, 0, &partial);
        while (n < n_hi) {
          /* this use of the stage: wait for the consumers' release of the previous one
           * (a fresh barrier counts as released: parity 1 completes at once) */
          pa_mbar_wait(RELEASE ? b_kempty(stage) : b_empty(stage), phase ^ 1);
          PA_HTL(22);
          const uint32_t s_k = s_kv + stage * 2 * cfg::kv_bytes;
          const int krow = (int)c.seq.k_start + n * BK;
          pa_mbar_arrive_expect_tx(b_kfull(stage), cfg::kv_bytes); /* both halves, MCAST */
#pragma unroll
          for (int x = 0; x < PANELS; ++x)
            if (MCAST) /* this block's half of the rows, into both blocks */
              pa_tma_load_4d_mc(s_k + x * cfg::kv_panel + rank * (BK / 2) * 128, &a.tk,
                                b_kfull(stage), 64 * x, krow + (int)rank * (BK / 2), c.hk, bcoord,
                                0x3);
            else
              pa_tma_load_4d(s_k + x * cfg::kv_panel, &a.tk, b_kfull(stage), 64 * x, krow, c.hk,
                             bcoord);
          if (RELEASE) pa_mbar_wait(b_empty(stage), phase ^ 1);
          PA_HTL(23);
          pa_mbar_arrive_expect_tx(b_vfull(stage), cfg::kv_bytes);
#pragma unroll
          for (int x = 0; x < PANELS; ++x)
            if (MCAST)
              pa_tma_load_4d_mc(s_k + cfg::kv_bytes + x * cfg::kv_panel + rank * (BK / 2) * 128,
                                &a.tv, b_vfull(stage), 64 * x, krow + (int)rank * (BK / 2), c.hk,
                                bcoord, 0x3);
            else
              pa_tma_load_4d(s_k + cfg::kv_bytes + x * cfg::kv_panel, &a.tv, b_vfull(stage),
                             64 * x, krow, c.hk, bcoord);
          PA_HTL(24);
          n = walk(++visit, 0, &partial);
          if (++stage == STAGES) stage = 0, phase ^= 1;
        }
      }
      PA_HTL_END();
      if (PERSIST) { /* no more tiles */
        pa_mbar_wait(b_tempty, (taken & 1) ^ 1);
        handoff[3] = 0;
        pa_mbar_arrive(b_tfull);
      }
    }
    if (MCAST) { /* stay until the peer is done with this block's barriers and copies */
      __syncwarp();
      pa_cluster_sync();
    }
    return;
  }

  /* A consumer warpgroup: 64 query rows. */
  pa_setmaxnreg_inc<CONSUMER_REGS>();
  /* warp-uniform to the compiler (__shfl_sync), as the stage below: Q's descriptors
   * then stay on the uniform datapath in the persistent kernel too (SASS, R6) */
  const int cw = __shfl_sync(0xffffffffu, tid / 128, 0) - 1;
  if (cw >= active) return; /* SKIP_IDLE: no row of this warpgroup's is in the sequence */
  const int warp = (tid % 128) / 32, lane = tid % 32, t = lane & 3;
  const int row0 = 64 * cw + 16 * warp; /* the warp's first row within the block */
  /* the general score pass (softcap, ALiBi, scale <= 0) is the problem's, not the
   * tile's, so that the tile loop's branches are the same for the whole block */
  const bool general = p.softcap > 0.0f || p.alibi.buf != nullptr || !(p.scale > 0.0f);
  const float xscale = general ? 1.0f : p.scale * PA_LOG2E;
  float slope = 0.0f; /* the tile's head's ALiBi slope */
  float o[O_TILES][4];
  pa_softmax_row sm[2];
  const uint32_t s_q_wg = s_q + cw * 64 * 128; /* this warpgroup's 64 rows in each Q panel */

  /* The stage through __shfl_sync, so that the compiler sees it warp-uniform and builds
   * the descriptors on the uniform datapath: PERSIST's stage, carried across the tile
   * loop, otherwise cost a vector add, mask, shift, OR and R2UR per wgmma (SASS, R5:
   * 13% more instructions than the default kernel at hd128 S8192).
   * DESC_ADD: the descriptors' bases built once (Q's rows of this warpgroup, stage 0's K
   * and V; stage s is 2 s kv_bytes further) and each wgmma's an add (pa_wgmma_desc_at),
   * the bases opaque, else ptxas re-derives them from the addresses at each wgmma (SASS,
   * eighth session: 148 -> 87 non-FMUL instructions from the first QK^T wgmma to the last
   * P.V one of an iteration in the persistent hd128 kernel; hd64 +2.5%). Not in the
   * grid's hd128 kernel (98 -> 51 there, but 1% slower) nor at hd256 (whose O
   * accumulator leaves no registers to hold them: 96 bytes spilled). */
  enum { DESC_ADD = D != 256 && (PERSIST || D == 64) };
  uint64_t q_desc = pa_wgmma_desc(s_q_wg, 16, 1024);
  uint32_t q_off = 0; /* the tile's Q buffer: its offset from s_q (Q2) */
  uint64_t q_desc_t = q_desc;
  uint64_t k_desc = pa_wgmma_desc(s_kv, 16, 1024);
  uint64_t v_desc = pa_wgmma_desc(s_kv + cfg::kv_bytes, cfg::kv_panel, 1024);
  if (DESC_ADD) asm volatile("" : "+l"(q_desc), "+l"(k_desc), "+l"(v_desc));
  auto issue_qk = [&](float (&sacc)[S_TILES][4], int stage) { /* S = Q . K^T, committed */
    const uint32_t ks = __shfl_sync(0xffffffffu, stage, 0) * 2 * cfg::kv_bytes;
    const uint64_t db0 = pa_wgmma_desc_at(k_desc, ks);
    pa_wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < QK_STEPS; ++kk) {
      const uint32_t qo = (kk / 4) * cfg::q_panel + (kk % 4) * 32; /* panel, k16 step */
      const uint32_t ko = (kk / 4) * cfg::kv_panel + (kk % 4) * 32;
      const uint64_t da = DESC_ADD ? pa_wgmma_desc_at(q_desc_t, qo)
                                   : pa_wgmma_desc(s_q_wg + q_off + qo, 16, 1024);
      const uint64_t db = DESC_ADD ? pa_wgmma_desc_at(db0, ko)
                                   : pa_wgmma_desc(s_kv + ks + ko, 16, 1024);
      pa_wgmma_ss<T, BK>(sacc, da, db, kk > 0);
    }
    pa_wgmma_commit();
  };
  auto issue_pv = [&](const uint32_t (&pf)[PV_STEPS][4], int stage) { /* O += P . V, committed */
    const uint32_t vs = __shfl_sync(0xffffffffu, stage, 0) * 2 * cfg::kv_bytes;
    const uint64_t db0 = pa_wgmma_desc_at(v_desc, vs);
    pa_wgmma_fence_regs(o);
    pa_wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < PV_STEPS; ++kk) {
      const uint64_t db = DESC_ADD ? pa_wgmma_desc_at(db0, kk * 16 * 128)
                                   : pa_wgmma_desc(s_kv + cfg::kv_bytes + vs + kk * 16 * 128,
                                                   cfg::kv_panel, 1024);
      pa_wgmma_rs_tb<T, D>(o, pf[kk], db, 1);
    }
    pa_wgmma_commit();
  };
  /* Scores and masks, then softmax steps 1 and 3 of common/softmax.h (step 2 on l
   * only: the caller rescales O by alpha when no P.V is in flight). KEEPM: the kept
   * maximum of pa_frag_softmax_keep (KEEPM1: not on a query tile's first key tile,
   * `first`, where every m is -inf, so the vote only costs); `moved` says whether any
   * row's reference moved (else alpha is 1 and O's rescale is skipped). */
  bool moved = true;
  bool lost = false; /* KSUM: pa_frag_softmax_keep_sum lost a row's scores (redo) */
  /* KSUM: this warp's 16 rows of S = Q . K^T again, from the tile's Q buffer and K of
   * `stage` in shared memory (128-byte swizzle: row r's 16-byte chunk j at r 128 +
   * (j ^ r % 8) 16), by mma.sync m16n8k16, whose C fragment is the wgmma accumulator's
   * per-warp layout; only where pa_frag_softmax_keep_sum lost a row's scores. The lane
   * is read again here (asm volatile), so that no address of this rare path is hoisted
   * into the key loop's registers (the 176-key kernel spilled in its loop otherwise). */
  auto recompute_s = [&](float (&sacc)[S_TILES][4], int stage) {
    uint32_t tx;
    asm volatile("mov.u32 %0, %%tid.x;" : "=r"(tx));
    const int wq = (tx % 128) / 32, ln = tx % 32, mi = ln >> 3, rr = ln & 7;
    const uint32_t qb = s_q + q_off + cw * 64 * 128;
    const uint32_t kb = s_kv + stage * 2 * cfg::kv_bytes;
#pragma unroll
    for (int j = 0; j < S_TILES; ++j) sacc[j][0] = sacc[j][1] = sacc[j][2] = sacc[j][3] = 0.0f;
#pragma unroll 1
    for (int kk = 0; kk < QK_STEPS; ++kk) {
      const int x = kk / 4, c0 = 2 * (kk % 4);
      const int qr = 16 * wq + 8 * (mi & 1) + rr, qc = c0 + (mi >> 1);
      uint32_t af[4];
      pa_ldmatrix_x4(af, qb + x * cfg::q_panel + qr * 128 + ((qc ^ (qr & 7)) << 4));
#pragma unroll
      for (int j = 0; j < S_TILES; j += 2) {
        const int kr = 8 * (j + (mi >> 1)) + rr, kc = c0 + (mi & 1);
        uint32_t bf[4];
        pa_ldmatrix_x4(bf, kb + x * cfg::kv_panel + kr * 128 + ((kc ^ (kr & 7)) << 4));
        pa_mma_16816<T>(sacc[j], af, bf[0], bf[1]);
        pa_mma_16816<T>(sacc[j + 1], af, bf[2], bf[3]);
      }
    }
  };
  auto softmax = [&](float (&sacc)[S_TILES][4], int n, bool tile_partial, float (&alpha)[2],
                     bool first) {
    const int k0 = n * BK;
    const bool range = !(c.lo_last <= k0 && c.hi_first >= k0 + BK);
    /* the wider tiles (hd128's 160/176 keys, hd64's 192) run plain problems only
     * (pa_hopper_effective): without the general and block passes their kernels fit
     * in 240 (hd128) / 160 (hd64) registers */
    pa_frag_scores<S_TILES>(sacc, p, c, FULL_SCORES && general, slope, range,
                            FULL_SCORES && tile_partial, k0, c.i0 + row0 + (lane >> 2), t);
    if constexpr (KSUM) {
      if (!__any_sync(0xffffffffu, pa_softmax_any_unset(sm))) {
        const int r = pa_frag_softmax_keep_sum<S_TILES>(sm, sacc, xscale, alpha);
        moved = r != 0;
        lost = r == 2; /* redo, once no P.V is in flight */
        return;
      }
    }
    if (KEEPM && !KSUM && !(KEEP_FROM_2ND && first)) {
      moved = pa_frag_softmax_keep<S_TILES>(sm, sacc, xscale, alpha);
      return;
    }
    moved = true;
    pa_frag_softmax_update_max<S_TILES, TREEMAX>(sm, sacc, xscale, alpha);
    pa_softmax_rescale(&sm[0], alpha[0]);
    pa_softmax_rescale(&sm[1], alpha[1]);
    pa_frag_softmax_accumulate<S_TILES, EXP16>(sm, sacc, xscale);
  };
  /* KSUM: where the softmax lost scores, S again and the usual steps on it (after the
   * last P.V has landed, so that its P registers are free for recompute_s's) */
  auto redo = [&](float (&sacc)[S_TILES][4], int n, bool tile_partial, float (&alpha)[2],
                  int stage) {
    if (!KSUM || !lost) return;
    lost = false;
    recompute_s(sacc, stage);
    const int k0 = n * BK;
    const bool range = !(c.lo_last <= k0 && c.hi_first >= k0 + BK);
    pa_frag_scores<S_TILES>(sacc, p, c, FULL_SCORES && general, slope, range,
                            FULL_SCORES && tile_partial, k0, c.i0 + row0 + (lane >> 2), t);
    pa_frag_softmax_update_max<S_TILES, TREEMAX>(sm, sacc, xscale, alpha);
    pa_softmax_rescale(&sm[0], alpha[0]);
    pa_softmax_rescale(&sm[1], alpha[1]);
    pa_frag_softmax_accumulate<S_TILES, EXP16>(sm, sacc, xscale);
  };
  auto rescale_o = [&](const float (&alpha)[2]) {
    if ((KEEPM || KSUM) && !moved) return; /* alpha is 1 (pa_frag_softmax_keep(_sum)) */
    /* LAZY_O: alpha is exactly 1 where a row's maximum did not move (frag_softmax.cuh),
     * so a warp whose rows all kept theirs skips the multiplications, bit for bit */
    if (LAZY_O && !__any_sync(0xffffffffu, alpha[0] != 1.0f || alpha[1] != 1.0f)) return;
#pragma unroll
    for (int d = 0; d < O_TILES; ++d) {
      o[d][0] *= alpha[0];
      o[d][1] *= alpha[0];
      o[d][2] *= alpha[1];
      o[d][3] *= alpha[1];
    }
  };
  /* P to dtype: the A fragment of keys 16kk..+15 is S chunks 2kk and 2kk + 1. */
  auto pack_p = [&](const float (&sacc)[S_TILES][4], uint32_t (&pf)[PV_STEPS][4]) {
#pragma unroll
    for (int kk = 0; kk < PV_STEPS; ++kk) {
      pf[kk][0] = pa_pack2<T>(sacc[2 * kk][0], sacc[2 * kk][1]);
      pf[kk][1] = pa_pack2<T>(sacc[2 * kk][2], sacc[2 * kk][3]);
      pf[kk][2] = pa_pack2<T>(sacc[2 * kk + 1][0], sacc[2 * kk + 1][1]);
      pf[kk][3] = pa_pack2<T>(sacc[2 * kk + 1][2], sacc[2 * kk + 1][3]);
    }
  };

  /* The consumers' side of the ring: stage and phase of the tile being read. */
  /* RELEASE: one arrive per warp (MCAST: lane r arrives in cluster block r) */
  auto warp_arrive = [&](uint32_t bar) {
    __syncwarp();
    if (MCAST) {
      if (lane < 2) pa_mbar_arrive_cluster(bar, lane);
    } else if (lane == 0) {
      pa_mbar_arrive(bar);
    }
  };
  auto release_k = [&](int stage) { /* RELEASE only: S has landed, K may be overwritten */
    warp_arrive(b_kempty(stage));
  };
  auto release = [&](int stage) { /* P.V has landed: V (and, without RELEASE, K) is free */
    if (RELEASE) {
      warp_arrive(b_empty(stage));
    } else {
      pa_mbar_arrive(b_empty(stage)); /* this thread is done with the stage */
    }
  };
  auto advance = [](int &stage, uint32_t &phase) {
    if (++stage == STAGES) stage = 0, phase ^= 1;
  };

  /* PERSIST: Q may be overwritten once this warp's last S has landed; OST: once the
   * warpgroup's O copy out of it has read it (settle_o, one arrive per warpgroup) */
  int taken = 0; /* PERSIST: tiles taken (the producer's count) */
  auto release_q = [&] {
    if (PERSIST && !OST) warp_arrive(b_qempty((taken - 1) % QBUFS));
  };
  int o_pending = -1; /* OST: the Q buffer whose O copy may still be reading it */
  auto settle_o = [&] {
    if (OST && o_pending >= 0) {
      if (tid % 128 == 0) {
        pa_bulk_wait_read0();
        if (PERSIST) pa_mbar_arrive(b_qempty(o_pending));
      }
      o_pending = -1;
    }
  };
  int stage = 0; /* the ring's stage and phase, across the block's tiles */
  uint32_t phase = 0;
  /* pingpong: consumer 1 opens with an arrive so that consumer 0 goes first; consumer
   * 0 closes with a sync that takes consumer 1's last arrive (below) */
  if (PIPE && PINGPONG && cw == 1) pa_named_arrive(PA_HOPPER_BAR_TURN0, 256);
  /* pingpong: consumer cw issues after a sync on its named barrier, then lets the
   * other go (an arrive on the other's); the turns run on across the block's tiles
   * (both consumers walk the same tiles, so the counts agree): consumer 0's first
   * turn of a tile follows consumer 1's last of the previous one (LAG: its last but
   * one), not its stores. */
  /* PA_HV_LAG: consumer 1 takes an empty turn just before its first one (so that a walk
   * without turns takes none), consumer 0 an empty last one if the walk took a turn */
  bool lag_first = (V & PA_HV_LAG) && cw == 1, took_turn = false;
  auto my_turn = [&] {
    if (PINGPONG) {
      if ((V & PA_HV_LAG) && lag_first) {
        pa_named_sync(PA_HOPPER_BAR_TURN0 + cw, 256);
        pa_named_arrive(PA_HOPPER_BAR_TURN0 + (1 - cw), 256);
        lag_first = false;
      }
      pa_named_sync(PA_HOPPER_BAR_TURN0 + cw, 256);
      took_turn = true;
    }
  };
  auto your_turn = [&] {
    if (PINGPONG) pa_named_arrive(PA_HOPPER_BAR_TURN0 + (1 - cw), 256);
  };

  /* Step 4: normalise; O from the accumulator, LSE by t == 0; then O is zero for the
   * next tile. OST, where the warpgroup's 64 rows are all in the sequence: O into the
   * warpgroup's rows of the tile's Q buffer (128-byte swizzle: row r's 16-byte chunk j
   * at r 128 + (j ^ r % 8) 16, the buffer 1024-aligned) and one bulk tensor copy per
   * 64-column panel; else 4-byte stores from registers. */
  auto store_o = [&] {
    float lse[2];
    pa_frag_softmax_normalise(sm, xscale, o, lse);
    settle_o(); /* at most one copy in flight per warpgroup */
    const int i_wg = c.i0 + 64 * cw; /* the warpgroup's first row */
    if (OST && a.o_tma && i_wg + 64 <= c.seq.len_q) {
      const uint32_t base = s_q + q_off + cw * 64 * 128;
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        const int row = 16 * warp + (lane >> 2) + 8 * r; /* within the warpgroup's 64 */
#pragma unroll
        for (int d = 0; d < O_TILES; ++d)
          pa_st_shared_b32(base + (d / 8) * cfg::q_panel + row * 128 +
                               ((((d % 8) ^ (row % 8)) << 4) | (4 * t)),
                           pa_pack2<T>(o[d][2 * r], o[d][2 * r + 1]));
      }
      pa_fence_proxy_async();
      pa_named_sync(PA_HOPPER_BAR_OST0 + cw, 128);
      if (tid % 128 == 0) {
        const int bcoord = p.varlen ? 0 : c.b;
#pragma unroll
        for (int x = 0; x < PANELS; ++x)
          pa_tma_store_4d(&a.to, base + x * cfg::q_panel, 64 * x, (int)c.seq.q_start + i_wg, c.h,
                          bcoord);
        pa_bulk_commit();
      }
    } else {
      T *o_g = (T *)p.o.ptr;
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        const int i = c.i0 + row0 + (lane >> 2) + 8 * r;
        if (i >= c.seq.len_q) continue;
        T *dst = o_g + pa_view_row(&p.o, c.b, i, c.seq.q_start, c.h) + 2 * t;
#pragma unroll
        for (int d = 0; d < O_TILES; ++d)
          *(uint32_t *)(dst + 8 * d) = pa_pack2<T>(o[d][2 * r], o[d][2 * r + 1]);
      }
      /* OST releases the Q buffer by one thread per warpgroup (settle_o): every warp
       * is past its last S here, as on the copy's path */
      if (OST) pa_named_sync(PA_HOPPER_BAR_OST0 + cw, 128);
    }
    if (p.lse.buf && t == 0)
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        const int i = c.i0 + row0 + (lane >> 2) + 8 * r;
        if (i < c.seq.len_q)
          ((float *)p.lse.ptr)[pa_lse_index(&p.lse, c.b, c.h, i, c.seq.q_start)] = lse[r];
      }
    if (OST) o_pending = (taken - 1) % QBUFS; /* released by settle_o (copy or not) */
#pragma unroll
    for (int d = 0; d < O_TILES; ++d) o[d][0] = o[d][1] = o[d][2] = o[d][3] = 0.0f;
  };
  /* SK: a cut tile's piece (sk_cut; sk_tail: the tile's second piece, the first of this
   * block's share, else its first, the last of the share) leaves its O unnormalised, m
   * and the row's whole l in its slot, then takes the cut's ticket; the second of the
   * two pieces to arrive loads the other's slot and folds it into its own (the split-KV
   * merge of common/softmax.h) and returns true: it stores the tile. */
  bool sk_cut = false, sk_tail = false;
  auto sk_merge = [&]() -> bool {
    enum { SLOT = pa_hopper_sk_slot<D>() };
    const int cut = (int)blockIdx.x - (sk_tail ? 1 : 0);
    const int me = tid % 128;
    float *mine = a.sk_part + ((size_t)(cut * 2 + (sk_tail ? 1 : 0)) * NWG + cw) * SLOT;
    const float *other = a.sk_part + ((size_t)(cut * 2 + (sk_tail ? 0 : 1)) * NWG + cw) * SLOT;
    float l[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) l[r] = pa_quad_sum(sm[r].l);
#pragma unroll
    for (int d = 0; d < O_TILES; ++d)
      __stcg(reinterpret_cast<float4 *>(mine) + d * 128 + me,
             make_float4(o[d][0], o[d][1], o[d][2], o[d][3]));
    __stcg(reinterpret_cast<float4 *>(mine) + O_TILES * 128 + me,
           make_float4(sm[0].m, l[0], sm[1].m, l[1]));
    __threadfence();
    pa_named_sync(PA_HOPPER_BAR_SK0 + cw, 128);
    if (me == 0) {
      unsigned long long *w = a.sk_ticket + (size_t)cut * NWG + cw;
      const unsigned long long cur = *reinterpret_cast<volatile unsigned long long *>(w);
      auto cas = [](unsigned long long *x, unsigned long long c, unsigned long long v) {
        return atomicCAS(x, c, v);
      };
      const bool last = pa_ticket_arrive(w, PA_HOPPER_SK_TAG, cur, cas) == 1;
      if (last) atomicExch(w, 0ull); /* the next call (stream order) starts at zero */
      __threadfence();
      sk_last[cw] = last;
    }
    pa_named_sync(PA_HOPPER_BAR_SK0 + cw, 128);
    if (!sk_last[cw]) return false;
    const float4 ml = __ldcg(reinterpret_cast<const float4 *>(other) + O_TILES * 128 + me);
    const float om[2] = {ml.x, ml.z}, ol[2] = {ml.y, ml.w};
    float fs[2], fo[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const float m = fmaxf(sm[r].m, om[r]);
      fs[r] = sm[r].m == -INFINITY ? 0.0f : exp2f((sm[r].m - m) * xscale);
      fo[r] = om[r] == -INFINITY ? 0.0f : exp2f((om[r] - m) * xscale);
      sm[r].m = m;
      /* the whole row's l on one lane of the quad: store_o's normalise sums the quad */
      sm[r].l = t == 0 ? pa_sk_fold(l[r], fs[r], ol[r], fo[r]) : 0.0f;
    }
#pragma unroll
    for (int d = 0; d < O_TILES; ++d) {
      const float4 x = __ldcg(reinterpret_cast<const float4 *>(other) + d * 128 + me);
      o[d][0] = pa_sk_fold(o[d][0], fs[0], x.x, fo[0]);
      o[d][1] = pa_sk_fold(o[d][1], fs[0], x.y, fo[0]);
      o[d][2] = pa_sk_fold(o[d][2], fs[1], x.z, fo[1]);
      o[d][3] = pa_sk_fold(o[d][3], fs[1], x.w, fo[1]);
    }
    return true;
  };
  /* O zeroed here and at the end of store_o, the per-tile arrays declared here: a
   * zeroing at each tile's start with the arrays in the loop measured ~1% slower
   * under BLOCK (tenth session, final run against R2; within the spread, not kept) */
  float s[S_TILES][4];
  uint32_t pf[PV_STEPS][4];
  float alpha[2];
#pragma unroll
  for (int d = 0; d < O_TILES; ++d) o[d][0] = o[d][1] = o[d][2] = o[d][3] = 0.0f;
  for (int k = 0;; ++k) {
    if (!PERSIST && k > 0) break;
    if (PERSIST) { /* the producer's tile, or none left */
      pa_mbar_wait(b_tfull, taken & 1);
      const int b = handoff[0], h = handoff[1], i0 = handoff[2], valid = handoff[3];
      const int kb = SK ? handoff[4] : 0, ke = SK ? handoff[5] : 0;
      pa_mbar_arrive(b_tempty);
      if (!valid) break;
      take(b, h, i0);
      if (sk_on) {
        sk_cut = kb > n_lo || ke < n_hi;
        sk_tail = kb > n_lo;
        n_lo = kb, n_hi = ke;
      }
      PA_HTL(1);
    }
    {
      const int qb = __shfl_sync(0xffffffffu, taken % QBUFS, 0); /* warp-uniform */
      pa_mbar_wait(b_q(qb), (taken / QBUFS) & 1);
      ++taken;
      q_off = qb * cfg::q_bytes;
      q_desc_t = pa_wgmma_desc_at(q_desc, q_off);
      PA_HTL(2);
    }
    slope = pa_problem_alibi_slope(&p, c.b, c.h);
    sm[0] = sm[1] = pa_softmax_start();
    bool partial = false;
    int visit = 0, n = walk(0, cw, &partial);
    if (!PIPE) {
      /* One tile at a time: S, softmax, P.V, each waited for. PEEL: the first tile
       * is taken before the loop (`first`), so the loop holds the kept maximum's steps
       * only; without it the loop takes the first tile too, behind visit == 1. */
      auto serial_tile = [&](bool first) {
        const bool tile_partial = partial;
        const int next = walk(++visit, cw, &partial);
        pa_mbar_wait(b_kfull(stage), phase);
        issue_qk(s, stage);
        pa_wgmma_wait<0>();
        pa_wgmma_fence_regs(s);
        if (RELEASE && !KSUM) release_k(stage);
        softmax(s, n, tile_partial, alpha, PEEL ? first : visit == 1);
        redo(s, n, tile_partial, alpha, stage);
        if (RELEASE && KSUM) release_k(stage); /* recompute_s reads K */
        rescale_o(alpha);
        pack_p(s, pf);
        pa_mbar_wait(b_vfull(stage), phase);
        issue_pv(pf, stage);
        pa_wgmma_wait<0>();
        pa_wgmma_fence_regs(o);
        release(stage);
        advance(stage, phase);
        n = next;
      };
      if (PEEL && n < n_hi) serial_tile(true);
      while (n < n_hi) serial_tile(false);
      release_q();
    } else if (n < n_hi) {
      /* Software-pipelined (FlashAttention-3's intra-warpgroup overlap): S of tile
       * i + 1 and O += P.V of tile i are issued together, and the softmax of i + 1
       * runs while P.V of i is still on the tensor cores. O is rescaled by tile i's
       * alpha while S of i + 1 is computed, before P.V of i is issued. */
      int prev = stage;
      uint32_t prev_phase = phase;
      pa_mbar_wait(b_kfull(stage), phase);
      PA_HTL(3);
      my_turn();
      PA_HTL(4);
      issue_qk(s, stage);
      your_turn();
      PA_HTL(5);
      settle_o(); /* the previous tile's O copy: long done reading by now */
      pa_wgmma_wait<0>();
      pa_wgmma_fence_regs(s);
      PA_HTL(6);
      if (RELEASE && !KSUM) release_k(stage);
      softmax(s, n, partial, alpha, true);
      redo(s, n, partial, alpha, stage);
      if (RELEASE && KSUM) release_k(stage);
      pack_p(s, pf);
      PA_HTL(7);
      n = walk(++visit, cw, &partial);
      advance(stage, phase);
      while (n < n_hi) {
        const bool tile_partial = partial;
        const int next = walk(++visit, cw, &partial);
        pa_mbar_wait(b_kfull(stage), phase);
        pa_mbar_wait(b_vfull(prev), prev_phase);
        PA_HTL(3);
        my_turn();
        PA_HTL(4);
        issue_qk(s, stage);
        rescale_o(alpha); /* no P.V in flight: the last one was waited for */
        issue_pv(pf, prev);
        your_turn();
        PA_HTL(5);
        pa_wgmma_wait<1>(); /* S landed; P.V of the previous tile may still run */
        pa_wgmma_fence_regs(s);
        PA_HTL(6);
        if (RELEASE && !KSUM) release_k(stage);
        softmax(s, n, tile_partial, alpha, false);
        PA_HTL(7);
        pa_wgmma_wait<0>();
        pa_wgmma_fence_regs(o);
        PA_HTL(8);
        release(prev);
        redo(s, n, tile_partial, alpha, stage);
        if (RELEASE && KSUM) release_k(stage);
        pack_p(s, pf);
        PA_HTL(9);
        prev = stage, prev_phase = phase;
        advance(stage, phase);
        n = next;
      }
      release_q();
      pa_mbar_wait(b_vfull(prev), prev_phase);
      PA_HTL(10);
      my_turn();
      PA_HTL(4);
      rescale_o(alpha);
      issue_pv(pf, prev);
      your_turn();
      PA_HTL(5);
      pa_wgmma_wait<0>();
      pa_wgmma_fence_regs(o);
      PA_HTL(8);
      release(prev);
    } else {
      release_q();
    }
    const bool keyless = !(visit > 0); /* no key tile: no turn taken for this tile */
    if (SK && sk_cut && !sk_merge()) {
      /* the tile's other piece is still to come: it stores the tile; this Q buffer is
       * released as store_o releases it (every warp is past its last S: sk_merge's sync) */
      settle_o();
      if (OST) o_pending = (taken - 1) % QBUFS;
#pragma unroll
      for (int d = 0; d < O_TILES; ++d) o[d][0] = o[d][1] = o[d][2] = o[d][3] = 0.0f;
    } else {
      store_o();
    }
    PA_HTL(11);
    /* PA_HV_LAG: an empty turn each for a tile without keys, after the O store (whose
     * settle_o frees the Q buffer the producer waits for): consumer 1, a turn behind,
     * finishes its previous tile on consumer 0's next turn */
    if ((V & PA_HV_LAG) && keyless) {
      my_turn();
      your_turn();
    }
  }
  PA_HTL_END();
  /* OST: the last copies have read shared memory before the block exits (their writes
   * complete with the grid, as CUTLASS's epilogues rely on) */
  if (OST && tid % 128 == 0) pa_bulk_wait_read0();
  if ((V & PA_HV_LAG) && cw == 0 && took_turn) {
    my_turn();
    your_turn();
  }
  if (PIPE && PINGPONG && cw == 0) pa_named_sync(PA_HOPPER_BAR_TURN0, 256);
  if (MCAST) pa_cluster_sync(); /* the peer may still arrive on this block's barriers */
#else
  __trap(); /* never launched: pa_cuda_hopper_supports() requires the sm_90a build */
#endif
}

/* ---- host side ---- */

/* A 4-D map over a q/k/v view: (head dim, rows, heads, batch) with the view's
 * strides; boxes of 64 columns x box_rows rows, 128-byte swizzle, zeros outside. A
 * dimension of extent 1 gets a harmless stride (its coordinate is always 0). */
bool pa_tensor_map(CUtensorMap *m, const pa_view *v, const pa_problem *p, int64_t rows, int heads,
                   int box_rows) {
  pa_encode_tiled_fn fn = pa_encode_tiled();
  if (!fn || (uintptr_t)v->ptr % 16 != 0) return false;
  const int64_t batch = p->varlen ? 1 : p->batch;
  if (rows < 1) rows = 1; /* no key at all: nothing is loaded, but the map must be valid */
  const cuuint64_t dims[4] = {(cuuint64_t)p->head_dim, (cuuint64_t)rows, (cuuint64_t)heads,
                              (cuuint64_t)batch};
  int64_t st[3] = {v->stride_s * 2, v->stride_h * 2, v->stride_b * 2};
  const int64_t filler = (rows * v->stride_s * 2 + 15) / 16 * 16;
  for (int x = 0; x < 3; ++x) {
    if (dims[x + 1] == 1) st[x] = filler > 0 ? filler : 16;
    if (st[x] <= 0 || st[x] % 16 != 0 || st[x] >= (1ll << 40)) return false;
  }
  const cuuint64_t strides[3] = {(cuuint64_t)st[0], (cuuint64_t)st[1], (cuuint64_t)st[2]};
  const cuuint32_t box[4] = {64, (cuuint32_t)box_rows, 1, 1};
  const cuuint32_t estr[4] = {1, 1, 1, 1};
  const CUtensorMapDataType dt = p->dtype == POLYATTN_DTYPE_BF16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                                                                 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  return fn(m, dt, 4, v->ptr, dims, strides, box, estr, CU_TENSOR_MAP_INTERLEAVE_NONE,
            CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

template <int D, int V = 0>
bool pa_hopper_maps(pa_hopper_args *a, const pa_problem *p) {
  typedef pa_hopper_vcfg<D, V> cfg;
  const int64_t rows_q = p->varlen ? p->total_q : p->seqlen_q;
  const int64_t rows_k = p->varlen ? p->total_k : p->seqlen_k;
  const int box_k = V & PA_HV_MCAST ? cfg::block_k / 2 : cfg::block_k; /* a half per block */
  return pa_tensor_map(&a->tq, &p->q, p, rows_q, p->heads_q, cfg::block_q) &&
         pa_tensor_map(&a->tk, &p->k, p, rows_k, p->heads_kv, box_k) &&
         pa_tensor_map(&a->tv, &p->v, p, rows_k, p->heads_kv, box_k);
}

/* Per instantiation: the devices on which the shared-memory opt-in was set. */
template <typename T, int D, int V>
std::atomic<unsigned long long> &pa_hopper_opted() {
  static std::atomic<unsigned long long> mask(0);
  return mask;
}

/* BLOCK sparsity with a mask: the kernel walks a key-tile list in the workspace. */
bool pa_hopper_uses_block_list(const pa_problem *p) {
  return p->sparsity == POLYATTN_SPARSITY_BLOCK && p->block_mask.buf;
}

/* The narrowest key tile a head dim's kernels use under a block mask (the list's
 * workspace is sized for it, whichever variant then runs): 128 at hd64/hd128 (the
 * wider tiles are not run under BLOCK), 64 at hd256 ("-k64"; the default's 80-key
 * tiles need fewer entries). */
int pa_hopper_list_min_bk(int head_dim) { return head_dim == 256 ? 64 : PA_CUDA_HOPPER_TILE; }

/* The list's int32 values, whichever variant runs; a tile counter follows them. */
size_t pa_hopper_list_ints(const pa_problem *p) {
  return pa_block_list_bytes(p, PA_CUDA_HOPPER_TILE, pa_hopper_list_min_bk(p->head_dim)) / 4;
}

/* Whether the query tiles of one (batch entry, head) all have the same key tiles (no
 * mask, window or varlen, dense): what the multicast's pairs of blocks need. */
bool pa_hopper_same_keys(const pa_problem *p) {
  return !p->causal && p->window_left < 0 && p->window_right < 0 && !p->varlen &&
         p->sparsity == POLYATTN_SPARSITY_NONE;
}

/* SK: whether every query tile of p has the same key tiles (as pa_hopper_same_keys, and
 * no seqused_k, which varies them between batch entries), which the stream-K tail's equal
 * shares assume. */
bool pa_hopper_sk_uniform(const pa_problem *p) {
  return pa_hopper_same_keys(p) && !p->seqused_k.buf;
}

/* The persistent grid's blocks: one per SM; POLYATTN_CUDA_HOPPER_BLOCKS=n caps it (tests:
 * many tiles per block). */
int pa_hopper_persist_blocks(int sm_count) {
  int blocks = std::max(sm_count, 1);
  if (const char *env = getenv("POLYATTN_CUDA_HOPPER_BLOCKS"))
    if (atoi(env) > 0) blocks = std::min(blocks, atoi(env));
  return blocks;
}

/* SK: the grid on which variant v runs p with the stream-K tail, or 0 where it does not:
 * a uniform problem whose query tiles (128 rows: the persistent kernels') leave a
 * part-full last round on the persistent grid. The launch and the workspace's size both
 * follow it, so a problem the tail does not cut asks for no workspace. */
int pa_hopper_sk_grid(int v, const pa_problem *p, int sm_count) {
  if (!(v & PA_HV_SK) || !pa_hopper_sk_uniform(p)) return 0;
  const int64_t units =
      (p->seqlen_q + PA_CUDA_HOPPER_TILE - 1) / PA_CUDA_HOPPER_TILE * p->heads_q * p->batch;
  const int64_t g = std::min<int64_t>(units, pa_hopper_persist_blocks(sm_count));
  return units > g && units % g != 0 ? (int)g : 0;
}

/* SK: the workspace of the stream-K tail on a grid of `blocks`: two partial slots per cut
 * and consumer (the persistent kernels have two consumers), then the tickets (one per cut
 * and consumer; each word holds a tag and an arrival count, and a word that already holds
 * the tag with a count of 1, which only an aborted launch or two streams sharing the
 * workspace at once could leave, would be misread, as decode_mma.cuh's). At hd128 on 132
 * SMs 18.4 MB. */
size_t pa_hopper_sk_part_bytes(int head_dim, int blocks) {
  const int slot = head_dim == 64 ? pa_hopper_sk_slot<64>() : pa_hopper_sk_slot<128>(); /* not hd256 */
  return (size_t)blocks * 2 * 2 * slot * sizeof(float);
}
size_t pa_hopper_sk_bytes(int head_dim, int blocks) {
  return pa_hopper_sk_part_bytes(head_dim, blocks) + (size_t)blocks * 2 * 8;
}

template <typename T, int D, int V>
cudaError_t pa_hopper_launch(const pa_problem *p, int sm_count, void *workspace,
                             const int32_t *dense_gate, cudaStream_t stream) {
  typedef pa_hopper_vcfg<D, V> cfg;
  pa_hopper_args args; /* passed by value: no host state kept */
  memset(&args, 0, sizeof args);
  args.p = *p;
  args.dense_gate = dense_gate;
  if (!pa_hopper_maps<D, V>(&args, p)) return cudaErrorInvalidValue;
  if (V & PA_HV_OST) { /* a map O's strides refuse leaves O to the 4-byte stores */
    args.o_tma = pa_tensor_map(&args.to, &p->o, p, p->varlen ? p->total_q : p->seqlen_q,
                               p->heads_q, 64);
    /* tests: POLYATTN_CUDA_HOPPER_O_TMA=0 takes that path for every O (the support rules
     * leave it for strides the TMA refuses, which no test layout has) */
    if (const char *env = getenv("POLYATTN_CUDA_HOPPER_O_TMA"))
      if (!strcmp(env, "0")) args.o_tma = 0;
  }
  if (pa_hopper_uses_block_list(p)) {
    /* pa_hopper_effective keeps 128-row tiles (no -wg3, -mc) and, at hd64/hd128,
     * 128-key tiles (no -k160/176/192) under BLOCK; hd256 lists its 80- or 64-key tiles
     * (block_list.cuh masks tiles that straddle mask blocks per element) */
    if ((int)cfg::block_q != (int)PA_CUDA_HOPPER_TILE ||
        (int)cfg::block_k < pa_hopper_list_min_bk(D))
      return cudaErrorInvalidValue;
    if (!workspace) return cudaErrorInvalidValue; /* the plan asked for the list's bytes */
    int32_t *list = static_cast<int32_t *>(workspace);
    /* the persistent kernel's tile counter follows the list (pa_cuda_hopper_workspace) */
    if (V & PA_HV_PERSIST) args.next_tile = list + pa_hopper_list_ints(p);
    const cudaError_t le = pa_block_list_build<PA_CUDA_HOPPER_TILE, cfg::block_k,
                                               PA_HOPPER_LIST_ROWS>(p, list, stream,
                                                                    args.next_tile);
    if (le != cudaSuccess) return le;
    args.block_list = list;
  }
  const void *fn = (const void *)pa_hopper_fwd_kernel<T, D, V>;
  int device = 0;
  cudaError_t e = cudaGetDevice(&device);
  if (e != cudaSuccess) return e;
  const unsigned long long bit = device < 64 ? 1ull << device : 0;
  if (!bit || !(pa_hopper_opted<T, D, V>().load(std::memory_order_acquire) & bit)) {
    e = cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, cfg::smem_bytes);
    if (e != cudaSuccess) return e;
    pa_hopper_opted<T, D, V>().fetch_or(bit, std::memory_order_acq_rel);
  }
  const int64_t tiles_q = (p->seqlen_q + cfg::block_q - 1) / cfg::block_q;
  dim3 grid((unsigned)tiles_q, (unsigned)p->heads_q, (unsigned)p->batch);
  args.skip_idle = pa_hopper_skip_idle(); /* the kernel's SKIP_IDLE says where it applies */
  if (V & PA_HV_PERSIST) {
    /* one block per SM (a block's shared memory is more than half an SM's); pairs
     * where the tiles' key counts differ, if there are enough to fill the grid */
    const int64_t heads = (int64_t)p->heads_q * p->batch;
    const bool uneven = p->causal || p->window_left >= 0 || p->window_right >= 0;
    /* pairs only in the fixed sequence: next_tile hands out single tiles */
    args.pair = uneven && !args.next_tile && (tiles_q + 1) / 2 * heads >= sm_count;
    if (const char *env = getenv("POLYATTN_CUDA_HOPPER_PAIR")) /* tuning: 0 = never */
      if (!strcmp(env, "0")) args.pair = 0;
    const int64_t units = (args.pair ? (tiles_q + 1) / 2 : tiles_q) * heads;
    if (units >= (1ll << 31)) return cudaErrorInvalidValue;
    grid = dim3((unsigned)std::min<int64_t>(units, pa_hopper_persist_blocks(sm_count)));
    /* SK: the stream-K tail where the last round is part-full (pa_hopper_sk_grid, which
     * is then grid.x; uniform problems have neither a tile counter nor pairs; the
     * workspace was sized by the same rule, its start rounded up to 16 bytes for the
     * partials' 16-byte accesses; without a workspace the walk is the plain one) */
    if (workspace && pa_hopper_sk_grid(V, p, sm_count)) {
      args.sk_dp = (int)(units / grid.x - 1);
      args.sk_nk = (int)((p->seqlen_k + cfg::block_k - 1) / cfg::block_k);
      args.sk_iters = (units - (int64_t)args.sk_dp * grid.x) * args.sk_nk;
      unsigned char *base = reinterpret_cast<unsigned char *>(
          (reinterpret_cast<uintptr_t>(workspace) + 15) & ~static_cast<uintptr_t>(15));
      args.sk_part = reinterpret_cast<float *>(base);
      args.sk_ticket =
          reinterpret_cast<unsigned long long *>(base + pa_hopper_sk_part_bytes(D, grid.x));
    }
    /* under a block mask, up to two rounds of tiles at the end longest first (at most
     * the 256 that list_s holds), never the first round, which the blocks take as they
     * start, before the order is ready; POLYATTN_CUDA_HOPPER_TAIL=0 (tuning) takes
     * them in order */
    if (args.next_tile) {
      args.tail = (int)std::max<int64_t>(
          0, std::min<int64_t>(std::min<int64_t>(units - grid.x, 2 * (int64_t)grid.x),
                               PA_BLOCK_LIST_SMEM));
      if (const char *env = getenv("POLYATTN_CUDA_HOPPER_TAIL"))
        if (!strcmp(env, "0")) args.tail = 0;
    }
  }
  if (!(V & PA_HV_MCAST)) {
    pa_hopper_fwd_kernel<T, D, V><<<grid, cfg::threads, cfg::smem_bytes, stream>>>(args);
    return cudaGetLastError();
  }
  cudaLaunchConfig_t lc;
  memset(&lc, 0, sizeof lc);
  lc.gridDim = grid;
  lc.blockDim = dim3(cfg::threads);
  lc.dynamicSmemBytes = cfg::smem_bytes;
  lc.stream = stream;
  cudaLaunchAttribute at[1];
  at[0].id = cudaLaunchAttributeClusterDimension;
  at[0].val.clusterDim.x = 2;
  at[0].val.clusterDim.y = 1;
  at[0].val.clusterDim.z = 1;
  lc.attrs = at;
  lc.numAttrs = 1;
  return cudaLaunchKernelEx(&lc, pa_hopper_fwd_kernel<T, D, V>, args);
}

/* The compiled variants: X(name, bits, full). "full" ones exist for fp16 and bf16 (the
 * schedules of the fourth session, the defaults and what they fall back to); the rest
 * are bf16-only tuning aids (~30 s of ptxas each), compiled only with the CMake option
 * POLYATTN_CUDA_TUNING_VARIANTS (decision 112); a problem under the name of one not
 * compiled (fp16, or a build without the option) runs the default. "-wg3", "-lag",
 * "-s4" and "-lag2" exist at hd64 only; "pingpong-rel-p-q2-os-km1", "full" at hd128, is
 * compiled at hd64 only in tuning builds (pa_hopper_compiled_at). The kept maximum's
 * forms ("-km", "-km1": PA_HV_KEEPM, PA_HV_KEEPM1) of the kernels the defaults run are
 * tuning variants, except the three-consumer grid kernel's "-km" and hd256's
 * "pingpong-rel-os-km", the defaults since the thirty-third session (decision 124), and
 * the wide-tile grid kernels' and the persistent kernels' "-km1" (decision 127,
 * thirty-sixth session), whose forms without it are tuning variants at those head dims
 * now (pa_hopper_effective drops the kept maximum with the 176-key tile, so
 * "pingpong-rel-os", not "-os-km", is the fallback of hd128's "-k176-os-km1" names).
 * The persistent kernels' "-pn" forms (the plain score pass only) are "full" since the
 * thirty-ninth session: plain problems run them by default, the rest the forms without
 * "-pn" (decision 128). hd128's "-pn" form with the stream-K tail ("-sk", decision 132) is
 * "full" since the forty-first session; hd64's is a tuning variant. The "-ks" forms
 * (decision 134) of hd128's three defaults and hd64's two grid defaults are "full", and
 * hd128's and hd64's three-consumer one the defaults since the forty-third session; hd64's
 * persistent and hd256's are bf16 tuning variants (pa_hopper_ksum_at). */
enum { /* the bits of the kernels the defaults run, spelled once: the defaults below and
          the list's names of those kernels and their forms use them */
  PA_HV_SHORT_BITS = PA_HOPPER_PINGPONG | PA_HV_RELEASE | PA_HV_PERSIST | PA_HV_Q2 | PA_HV_OST,
  PA_HV_SHORT_D64_BITS = PA_HV_SHORT_BITS | PA_HV_LAG | PA_HV_S4,
  PA_HV_K176_OS_BITS = PA_HOPPER_PINGPONG | PA_HV_RELEASE | PA_HV_K176 | PA_HV_OST,
  PA_HV_K192_BITS = PA_HOPPER_SERIAL | PA_HV_RELEASE | PA_HV_WG3 | PA_HV_K192,
  PA_HV_WG3_S3_BITS = PA_HOPPER_SERIAL | PA_HV_STAGES3 | PA_HV_RELEASE | PA_HV_WG3
};
#define PA_HOPPER_VARIANT_LIST(X)                                                        \
  X("serial", PA_HOPPER_SERIAL, 1)                                                       \
  X("pipe", PA_HOPPER_PIPE, 1)                                                           \
  X("pingpong", PA_HOPPER_PINGPONG, 1)                                                   \
  X("pingpong-rel", PA_HOPPER_PINGPONG | PA_HV_RELEASE, 1)                               \
  X("serial-s3-rel", PA_HOPPER_SERIAL | PA_HV_STAGES3 | PA_HV_RELEASE, 1)                \
  X("pingpong-s3-rel", PA_HOPPER_PINGPONG | PA_HV_STAGES3 | PA_HV_RELEASE, 0)            \
  X("pingpong-s3-rel-mc", PA_HOPPER_PINGPONG | PA_HV_STAGES3 | PA_HV_RELEASE | PA_HV_MCAST, 0) \
  X("pingpong-s3-rel-e16", PA_HOPPER_PINGPONG | PA_HV_STAGES3 | PA_HV_RELEASE | PA_HV_EXP16, 0) \
  X("serial-s3-rel-wg3", PA_HV_WG3_S3_BITS, 0)                                           \
  X("serial-rel-wg3", PA_HOPPER_SERIAL | PA_HV_RELEASE | PA_HV_WG3, 0)                    \
  X("serial-s3-rel-wg3-mc",                                                              \
    PA_HOPPER_SERIAL | PA_HV_STAGES3 | PA_HV_RELEASE | PA_HV_WG3 | PA_HV_MCAST, 0)         \
  X("pingpong-rel-k160", PA_HOPPER_PINGPONG | PA_HV_RELEASE | PA_HV_K160, 0)              \
  X("pingpong-rel-k176", PA_HOPPER_PINGPONG | PA_HV_RELEASE | PA_HV_K176, 1)              \
  X("pingpong-rel-tm", PA_HOPPER_PINGPONG | PA_HV_RELEASE | PA_HV_TREEMAX, 0)             \
  X("serial-s3-rel-wg3-tm", PA_HOPPER_SERIAL | PA_HV_STAGES3 | PA_HV_RELEASE | PA_HV_WG3 | PA_HV_TREEMAX, 0) \
  X("pingpong-rel-k64", PA_HOPPER_PINGPONG | PA_HV_RELEASE | PA_HV_K64, 0)               \
  X("pipe-rel", PA_HOPPER_PIPE | PA_HV_RELEASE, 0)                                       \
  X("pingpong-rel-lo", PA_HOPPER_PINGPONG | PA_HV_RELEASE | PA_HV_LAZYO, 1)                \
  X("pingpong-rel-p", PA_HOPPER_PINGPONG | PA_HV_RELEASE | PA_HV_PERSIST, 0)                \
  X("pingpong-rel-p-q2-os", PA_HV_SHORT_BITS, 0)                                           \
  X("pingpong-rel-os", PA_HOPPER_PINGPONG | PA_HV_RELEASE | PA_HV_OST, 1)                   \
  X("pingpong-rel-k176-os", PA_HV_K176_OS_BITS, 0)                                         \
  X("serial-rel-wg3-k192", PA_HV_K192_BITS, 0)                                              \
  X("pingpong-rel-p-q2-os-lag", PA_HV_SHORT_D64_BITS, 0)                                    \
  X("pingpong-rel-p-q2-os-s4", PA_HV_SHORT_BITS | PA_HV_S4, 0)                               \
  X("pingpong-rel-p-q2-os-lag2", PA_HV_SHORT_BITS | PA_HV_LAG, 0)                            \
  X("pingpong-rel-p-q2-os-lag-km", PA_HV_SHORT_D64_BITS | PA_HV_KEEPM, 0)                  \
  X("pingpong-rel-p-q2-os-lag-km1", PA_HV_SHORT_D64_BITS | PA_HV_KEEPM1, 1)                \
  X("pingpong-rel-p-q2-os-km", PA_HV_SHORT_BITS | PA_HV_KEEPM, 0)                           \
  X("pingpong-rel-p-q2-os-km1", PA_HV_SHORT_BITS | PA_HV_KEEPM1, 1)                         \
  X("pingpong-rel-k176-os-km", PA_HV_K176_OS_BITS | PA_HV_KEEPM, 0)                         \
  X("pingpong-rel-k176-os-km1", PA_HV_K176_OS_BITS | PA_HV_KEEPM1, 1)                       \
  X("serial-rel-wg3-k192-km", PA_HV_K192_BITS | PA_HV_KEEPM, 0)                              \
  X("serial-rel-wg3-k192-km1", PA_HV_K192_BITS | PA_HV_KEEPM1, 1)                            \
  X("serial-rel-wg3-k192-km1-pl", PA_HV_K192_BITS | PA_HV_KEEPM1 | PA_HV_PEEL, 0)             \
  X("serial-s3-rel-wg3-km", PA_HV_WG3_S3_BITS | PA_HV_KEEPM, 1)                            \
  X("serial-s3-rel-wg3-km1", PA_HV_WG3_S3_BITS | PA_HV_KEEPM1, 0)                          \
  X("pingpong-rel-os-km", PA_HOPPER_PINGPONG | PA_HV_RELEASE | PA_HV_OST | PA_HV_KEEPM, 1)   \
  X("pingpong-rel-os-km1", PA_HOPPER_PINGPONG | PA_HV_RELEASE | PA_HV_OST | PA_HV_KEEPM1, 0) \
  X("pingpong-rel-os-km-pn",                                                             \
    PA_HOPPER_PINGPONG | PA_HV_RELEASE | PA_HV_OST | PA_HV_KEEPM | PA_HV_PLAIN, 0)         \
  X("pingpong-rel-p-q2-os-km1-pn", PA_HV_SHORT_BITS | PA_HV_KEEPM1 | PA_HV_PLAIN, 1)         \
  X("pingpong-rel-p-q2-os-lag-km1-pn", PA_HV_SHORT_D64_BITS | PA_HV_KEEPM1 | PA_HV_PLAIN, 1)   \
  X("serial-s3-rel-wg3-km-pn", PA_HV_WG3_S3_BITS | PA_HV_KEEPM | PA_HV_PLAIN, 1)               \
  X("pingpong-rel-p-q2-os-km1-pn-sk", PA_HV_SHORT_BITS | PA_HV_KEEPM1 | PA_HV_PLAIN | PA_HV_SK, 1) \
  X("pingpong-rel-p-q2-os-lag-km1-pn-sk",                                                    \
    PA_HV_SHORT_D64_BITS | PA_HV_KEEPM1 | PA_HV_PLAIN | PA_HV_SK, 0)                          \
  X("pingpong-rel-k176-os-km1-ks", PA_HV_K176_OS_BITS | PA_HV_KEEPM1 | PA_HV_KSUM, 1)          \
  X("pingpong-rel-p-q2-os-km1-pn-ks", PA_HV_SHORT_BITS | PA_HV_KEEPM1 | PA_HV_PLAIN | PA_HV_KSUM, 1) \
  X("pingpong-rel-p-q2-os-km1-pn-sk-ks",                                                     \
    PA_HV_SHORT_BITS | PA_HV_KEEPM1 | PA_HV_PLAIN | PA_HV_SK | PA_HV_KSUM, 1)                 \
  X("pingpong-rel-p-q2-os-lag-km1-pn-ks",                                                    \
    PA_HV_SHORT_D64_BITS | PA_HV_KEEPM1 | PA_HV_PLAIN | PA_HV_KSUM, 0)                        \
  X("serial-s3-rel-wg3-km-pn-ks", PA_HV_WG3_S3_BITS | PA_HV_KEEPM | PA_HV_PLAIN | PA_HV_KSUM, 1) \
  X("serial-rel-wg3-k192-km1-ks", PA_HV_K192_BITS | PA_HV_KEEPM1 | PA_HV_KSUM, 1)              \
  X("pingpong-rel-os-km-ks",                                                             \
    PA_HOPPER_PINGPONG | PA_HV_RELEASE | PA_HV_OST | PA_HV_KEEPM | PA_HV_KSUM, 0)            \
  X("pingpong-rel-os-km-pn-ks",                                                          \
    PA_HOPPER_PINGPONG | PA_HV_RELEASE | PA_HV_OST | PA_HV_KEEPM | PA_HV_PLAIN | PA_HV_KSUM, 0)

/* The default per head dim (without POLYATTN_CUDA_HOPPER_VARIANT, or with a name not
 * in the list): a "full" variant that passed the forward sweep on the H200. Measured
 * (bench/RESULTS.md, fifth session R1, bf16 S8192, TFLOP/s sustained): hd128
 * pingpong-rel 613 against serial 565; hd64 serial-s3-rel-wg3 472 against serial 400
 * (its fallback under block masks on the grid, serial-s3-rel, is "full" too; since
 * decision 124 the default is its "-km" form, below). hd256: pingpong-rel
 * on 80-key tiles, FlashAttention-3's hd256 schedule (sixth session). O through shared
 * memory (PA_HV_OST, decision 96) at hd128 and hd256 (ninth session, same process as
 * SDPA: hd128 S8192 1.849 -> 1.804 ms, hd256 1.745 -> 1.618 ms); not at hd64, whose
 * three-consumer kernel measured 5% slower with it ("serial-s3-rel-wg3-os"). hd128 on
 * the grid kernel (above PA_HOPPER_PERSIST_SK_D128 keys, pa_hopper_default):
 * FlashAttention-3's 176-key tile with O through shared memory ("pingpong-rel-k176-os",
 * decision 110; pa_hopper_effective keeps it to plain problems, the rest run
 * "pingpong-rel-os"); sustained, at the board's power cap, against "pingpong-rel-os":
 * +2.4% at S8192, +2.9% at S16384, +1.8% causal S16384, +1.6% fp16 S8192, level at
 * S4096, -0.7% at S2048 (the last of 12 tiles a third empty; nineteenth session).
 * hd64 plain problems from PA_HOPPER_K192_SK_D64 keys (causal: above
 * PA_HOPPER_PERSIST_SK_D64_CAUSAL_PLAIN): FlashAttention-3's 192-key tile on the
 * three-consumer kernel, with two stages ("serial-rel-wg3-k192", decision 111).
 * Since the thirty-third session the three grid defaults and hd256's carry the softmax's
 * kept maximum ("-km", decisions 122 and 124; sustained, bf16, against the same kernel
 * without it: hd128 +3.5-4.2% at S8192 / S16384, hd64 +0.9-1.9%, hd256 +6.6-9.1%); the
 * persistent kernels do not (mixed, -3.3% to +3.4%, decision 122). Since the fortieth
 * session hd64's three-consumer grid default runs plain problems on its plain-only score
 * pass ("serial-s3-rel-wg3-km-pn", decision 130: +2.7-3.2% sustained at S2048 / S4096,
 * bf16 and fp16); pa_hopper_effective drops the bit for the others. Since the forty-third
 * session pa_hopper_default adds PA_HV_KSUM (decision 134) to hd128's defaults and hd64's
 * three-consumer grid default; pa_hopper_effective drops it with PA_HV_PLAIN or the kept
 * maximum. */
enum {
  /* the grid kernels at hd64 and hd128 with the kept maximum (decisions 122, 124); at hd64
   * pa_hopper_default adds PA_HV_PLAIN (decision 130) */
  PA_HOPPER_DEFAULT_D64 = PA_HV_WG3_S3_BITS | PA_HV_KEEPM,
  /* hd64 plain problems from PA_HOPPER_K192_SK_D64 keys, causal ones above
   * PA_HOPPER_PERSIST_SK_D64_CAUSAL_PLAIN: 192-key tiles, two stages. It and hd128's
   * 176-key kernel without the vote on a query tile's first key tile ("-km1", decision
   * 127: +0.1-1.1% sustained at hd64 S8192 / causal 8192, hd128 S8192 / S16384 / causal
   * 16384, small but in every run; level at hd64 S2048 / S4096, where the three-consumer
   * kernel keeps "-km") */
  PA_HOPPER_DEFAULT_D64_LONG = PA_HV_K192_BITS | PA_HV_KEEPM1,
  PA_HOPPER_DEFAULT_D128 = PA_HV_K176_OS_BITS | PA_HV_KEEPM1,
  PA_HOPPER_D256_BASE = PA_HOPPER_PINGPONG | PA_HV_RELEASE, /* hd256's schedule */
  /* hd256: "pingpong-rel-os-km" (decision 124, thirty-third session: +6.6-9.1% sustained
   * over "pingpong-rel-os" at S2048 / S8192 / causal S8192) */
  PA_HOPPER_D256_OS = PA_HOPPER_D256_BASE | PA_HV_OST,
  PA_HOPPER_DEFAULT_D256 = PA_HOPPER_D256_OS | PA_HV_KEEPM,
  /* the persistent kernels with the kept maximum from a query tile's second key tile on
   * ("-km1", decision 127; thirty-sixth session, sustained: hd128 level at S512 / S1024,
   * +1.0-2.4% at S2048-4096 and causal 4096 / 8192; hd64 level at S256, +2.6-4.1% at S512,
   * S1024 and causal 2048) */
  PA_HOPPER_DEFAULT_SHORT = PA_HV_SHORT_BITS | PA_HV_KEEPM1,
  /* pa_hopper_default adds PA_HV_PLAIN to both persistent defaults (decision 128: the
   * score pass without the general and block-mask paths, +1.8-4.1% sustained at hd64
   * S512 / S1024 / causal 2048 and hd128 S512 / S2048 / causal 4096); pa_hopper_effective
   * drops it for problems that are not plain, which run these forms */
  /* hd64's persistent kernel: consumer 1 a key tile behind consumer 0 on a four-stage
   * ring (decision 121; "pingpong-rel-p-q2-os-lag-km1"); its form without them
   * ("pingpong-rel-p-q2-os-km1", hd128's default) is compiled at hd64 only in tuning
   * builds */
  PA_HOPPER_DEFAULT_SHORT_D64 = PA_HV_SHORT_D64_BITS | PA_HV_KEEPM1
};

/* The most keys for which hd64 / hd128 problems run the persistent kernel (decisions 89
 * and 110; pa_hopper_default): a query tile with few key tiles spends much of its time
 * at its boundaries, which the persistent kernel overlaps with the next tile's loads.
 * Sustained at the power cap (nineteenth session, R4), persistent against grid: hd128
 * S2048 +3.3%, S4096 +1.8%, causal S4096 +6.6% and S8192 +2.2% (against the 176-key grid
 * kernel); hd64 causal S4096 +2.4% (against the 128-key grid kernel; decision 111's
 * 192-key one is 1.3-1.7% ahead of it there, twentieth session, so plain causal hd64
 * problems leave it above 2048 keys); the grid kernels ahead at hd64 S2048 (3.4%) and
 * hd64 causal S8192 (4.8%). Non-causal S >= 8192: the grid kernel (seventh session:
 * 3-4%). */
enum {
  PA_HOPPER_PERSIST_SK_D128 = 4096,
  PA_HOPPER_PERSIST_SK_D128_CAUSAL = 8192,
  PA_HOPPER_PERSIST_SK_D64 = 1024,
  PA_HOPPER_PERSIST_SK_D64_CAUSAL = 4096, /* with softcap, ALiBi or scale <= 0 */
  /* hd64 causal plain problems (pa_hopper_plain) above these keys take the 192-key grid
   * kernel (decision 111; twentieth session, sustained at the power cap: +1.3-1.7% over
   * the persistent kernel at 4096 keys, -2.9% at 2048; +3.9% / +5.4% over the 128-key
   * grid kernel at 8192 / 16384) */
  PA_HOPPER_PERSIST_SK_D64_CAUSAL_PLAIN = 2048,
  /* hd64, non-causal: the fewest keys for which plain problems take 192-key tiles
   * (decision 111; two stages against the 128-key default: +2.8% at S8192, +4.9% at
   * S16384, -0.8% at S4096) */
  PA_HOPPER_K192_SK_D64 = 8192,
  /* hd128, the persistent kernel: the fewest keys for which uniform plain problems take
   * the stream-K tail ("-sk", decision 132; forty-first session, sustained on an H100
   * against the same kernel without it: +1.6% at S2048, +3.3% at S4096 (fp16 +4.2%),
   * -0.7% at S1024, -4.2% at S512, where a share's extra piece costs more than the
   * last round's idle SMs) */
  PA_HOPPER_SK_MIN_KEYS_D128 = 2048
};

/* The default for a problem: at hd64 and hd128 the persistent kernel (since decision
 * 96 "pingpong-rel-p-q2-os": two Q buffers and O through the finished one; S512 hd128
 * 0.164 -> 0.148 ms, causal 0.132 -> 0.115, against "pingpong-rel-p"; at hd64 with
 * consumer 1 a turn behind on four stages since decision 121, sustained S512 +3.8%,
 * S1024 +1%, causal 2048 level; both with the kept maximum from a query tile's second
 * key tile on since decision 127; plain problems on their "-pn" forms since decision
 * 128) up to the
 * PA_HOPPER_PERSIST_SK_* bounds, the grid of one block per tile above (hd64's
 * three-consumer kernel on its "-pn" form too, decision 130; decision 89;
 * seventh session, same process as SDPA: S512 +12% / causal +18% at hd128, +22% / +37%
 * at hd64). Under a block mask with a list the persistent kernel too, taking tiles from
 * a counter (decision 94: 25% density 3.45x dense against the grid's 3.32x at hd128
 * S8192; hd64 0.753 ms against 0.811). hd128's persistent kernel cuts its last round of
 * tiles into equal shares of key tiles from PA_HOPPER_SK_MIN_KEYS_D128 keys (decision 132;
 * pa_hopper_effective keeps it to uniform plain problems). */
int pa_hopper_default(const pa_problem *p) {
  const int64_t sk = p->seqlen_k;
  const bool d64 = p->head_dim == 64;
  const int64_t persist_sk =
      p->causal ? (d64 ? PA_HOPPER_PERSIST_SK_D64_CAUSAL : PA_HOPPER_PERSIST_SK_D128_CAUSAL)
                : (d64 ? PA_HOPPER_PERSIST_SK_D64 : PA_HOPPER_PERSIST_SK_D128);
  /* BLOCK: the persistent kernel with the tile counter (POLYATTN_CUDA_HOPPER_BLOCK_GRID=1,
   * a tuning aid, keeps the grid) */
  bool block_persist = false;
  if (pa_hopper_uses_block_list(p)) {
    const char *env = getenv("POLYATTN_CUDA_HOPPER_BLOCK_GRID");
    block_persist = !(env && !strcmp(env, "1"));
  }
  /* hd64 on 192-key tiles: plain problems only (the kernel has no score passes for the
   * others; a block mask is never plain, so block_persist is false here) */
  if (d64 && pa_hopper_plain(p) &&
      (p->causal ? sk > PA_HOPPER_PERSIST_SK_D64_CAUSAL_PLAIN : sk >= PA_HOPPER_K192_SK_D64))
    return PA_HOPPER_DEFAULT_D64_LONG;
  if (p->head_dim != 256 &&
      (block_persist || (sk <= persist_sk && p->sparsity != POLYATTN_SPARSITY_BLOCK)))
    return (d64 ? (int)PA_HOPPER_DEFAULT_SHORT_D64 : (int)PA_HOPPER_DEFAULT_SHORT) | PA_HV_PLAIN |
           (!d64 && sk >= PA_HOPPER_SK_MIN_KEYS_D128 ? (int)PA_HV_SK : 0) |
           (!d64 ? (int)PA_HV_KSUM : 0);
  return d64                  ? (int)PA_HOPPER_DEFAULT_D64 | PA_HV_PLAIN | PA_HV_KSUM
         : p->head_dim == 256 ? (int)PA_HOPPER_DEFAULT_D256
                              : (int)PA_HOPPER_DEFAULT_D128 | PA_HV_KSUM;
}

/* The variants compiled at hd256: the default, the serial schedule (what an
 * uncompiled one falls back to), the 64-key tile, the pipelined schedule without the
 * pingpong turns and the lazy O rescale; "-k64", "pipe-rel" and "-lo" exist at hd256
 * only; the default without the kept maximum ("pingpong-rel-os", hd128's fallback), with
 * it from the second key tile on ("pingpong-rel-os-km1", hd256 only) and for plain
 * problems only ("pingpong-rel-os-km-pn", likewise) there only in tuning builds, and
 * hd256's default at hd64 / hd128 likewise. Of the other "-pn" forms only the defaults'
 * are compiled, each at its own head dims, in every build: the persistent defaults'
 * (decision 128; hd128's also with the stream-K tail, decision 132, and hd64's so in tuning
 * builds) and hd64's three-consumer grid default's (decision 130). At hd64 the
 * persistent kernel without the lag (hd128's default) only in tuning builds, for
 * comparisons (hd64's default has the lag, decision 121). */
/* The "-ks" forms (PA_HV_KSUM, decision 134): each default's kernel, at its head dim (hd64's
 * persistent and hd256's only in tuning builds, as bf16 variants, by pa_hopper_try); at
 * hd256 also with the plain-only score pass ("pingpong-rel-os-km-pn-ks", likewise; decision
 * 136: 68 bytes of spills where "pingpong-rel-os-km-ks" has 148, and level with the default) */
constexpr bool pa_hopper_ksum_at(int d, int v) {
  return d == 128   ? v == PA_HOPPER_DEFAULT_D128 || v == (PA_HOPPER_DEFAULT_SHORT | PA_HV_PLAIN) ||
                        v == (PA_HOPPER_DEFAULT_SHORT | PA_HV_PLAIN | PA_HV_SK)
         : d == 64  ? v == (PA_HOPPER_DEFAULT_D64 | PA_HV_PLAIN) || v == PA_HOPPER_DEFAULT_D64_LONG ||
                        v == (PA_HOPPER_DEFAULT_SHORT_D64 | PA_HV_PLAIN)
                    : v == PA_HOPPER_DEFAULT_D256 || v == (PA_HOPPER_DEFAULT_D256 | PA_HV_PLAIN);
}

constexpr bool pa_hopper_compiled_at(int d, int v) {
  if (v & PA_HV_KSUM) return pa_hopper_ksum_at(d, v & ~PA_HV_KSUM);
  return d == 256 ? v == PA_HOPPER_SERIAL || v == PA_HOPPER_DEFAULT_D256 ||
                        v == PA_HOPPER_D256_BASE || v == (PA_HOPPER_D256_BASE | PA_HV_K64) ||
                        v == (PA_HOPPER_PIPE | PA_HV_RELEASE) ||
                        v == (PA_HOPPER_D256_BASE | PA_HV_LAZYO) ||
                        v == (PA_HOPPER_D256_BASE | PA_HV_PERSIST) ||
                        ((v == PA_HOPPER_D256_OS || v == (PA_HOPPER_D256_OS | PA_HV_KEEPM1) ||
                          v == (PA_HOPPER_DEFAULT_D256 | PA_HV_PLAIN)) &&
                         PA_CUDA_TUNING_VARIANTS)
                  : !(v & (PA_HV_K64 | PA_HV_LAZYO)) && v != (PA_HOPPER_PIPE | PA_HV_RELEASE) &&
                        v != (PA_HOPPER_D256_OS | PA_HV_KEEPM1) &&
                        (!(v & PA_HV_PLAIN) ||
                         (v & ~PA_HV_SK) == (PA_HOPPER_DEFAULT_SHORT_D64 | PA_HV_PLAIN) ||
                         (d == 64 && v == (PA_HOPPER_DEFAULT_D64 | PA_HV_PLAIN)) ||
                         (d == 128 && (v & ~PA_HV_SK) == (PA_HOPPER_DEFAULT_SHORT | PA_HV_PLAIN))) &&
                        (d != 64 || v != PA_HOPPER_DEFAULT_SHORT || PA_CUDA_TUNING_VARIANTS) &&
                        (v != PA_HOPPER_DEFAULT_D256 || PA_CUDA_TUNING_VARIANTS);
}

/* POLYATTN_CUDA_HOPPER_VARIANT, read at each call (so one process can time several). */
int pa_hopper_variant(const pa_problem *p) {
  struct named {
    const char *name;
    int v;
  };
#define PA_HV_NAME(name, v, full) {name, v},
  static const named variants[] = {PA_HOPPER_VARIANT_LIST(PA_HV_NAME)};
#undef PA_HV_NAME
  if (const char *env = getenv("POLYATTN_CUDA_HOPPER_VARIANT"))
    for (const named &x : variants)
      if (!strcmp(env, x.name)) return x.v;
  return pa_hopper_default(p);
}

/* What variant v becomes on problem p: "-wg3" runs at hd64 without a block mask (its
 * 192-row tiles would cut the 128-row mask blocks that cuda_dispatch.c routes here),
 * "-mc" only where both blocks of a cluster walk the same key tiles and both exist;
 * hd256 has two stages, one Q buffer (its shared memory is full), no multicast, and
 * "-k64" is hd256's only; "-k160"/"-k176" (hd128) and "-k192" (hd64 with "-wg3") run
 * plain problems only; the four-stage ring and the lag ("-s4", "-lag", "-lag2") exist
 * at hd64 only. */
int pa_hopper_effective(int v, const pa_problem *p) {
  const bool block = p->sparsity == POLYATTN_SPARSITY_BLOCK;
  if (p->head_dim == 256) v &= ~(PA_HV_STAGES3 | PA_HV_MCAST | PA_HV_Q2);
  else v &= ~PA_HV_K64;
  /* The kept maximum stays where it was measured (decision 122): a kernel that loses its
   * third consumer, its 176- or its 192-key tile here (the defaults' fallbacks:
   * "serial-s3-rel" under a block mask on the grid, "pingpong-rel-os" for problems the
   * 176-key tile does not run) loses it too and keeps the running maximum; a form named
   * with it (hd256's "pingpong-rel-os-km") keeps it. */
  const int keep = PA_HV_KEEPM | PA_HV_KEEPM1 | PA_HV_PEEL | PA_HV_KSUM; /* the peel goes with them */
  if ((v & PA_HV_WG3) && (p->head_dim != 64 || block)) v &= ~(PA_HV_WG3 | keep);
  if (p->head_dim != 64) v &= ~(PA_HV_LAG | PA_HV_S4); /* four stages: hd64 only */
  const bool plain = pa_hopper_plain(p);
  if (!plain) v &= ~(PA_HV_PLAIN | PA_HV_KSUM); /* the plain score pass only; the -ks forms
                                                   are compiled for plain problems */
  /* the stream-K tail: the persistent walk of uniform problems, on the "-pn" forms (the
   * only ones compiled with it) */
  if (!(v & PA_HV_PERSIST) || !(v & PA_HV_PLAIN) || p->head_dim == 256 || !pa_hopper_sk_uniform(p))
    v &= ~PA_HV_SK; /* never compiled at hd256 */
  if ((v & (PA_HV_K160 | PA_HV_K176)) && (p->head_dim != 128 || !plain))
    v &= ~(PA_HV_K160 | PA_HV_K176 | keep);
  if ((v & PA_HV_K192) && (p->head_dim != 64 || !plain || !(v & PA_HV_WG3)))
    v &= ~(PA_HV_K192 | keep);
  if (v & PA_HV_MCAST) {
    const int bq = v & PA_HV_WG3 ? 192 : 128;
    const int64_t tiles_q = (p->seqlen_q + bq - 1) / bq;
    const bool same_keys = pa_hopper_same_keys(p);
    if (!same_keys || tiles_q % 2 != 0 || (v & PA_HV_PERSIST)) v &= ~PA_HV_MCAST;
  }
  return v;
}

/* The dynamic shared memory of variant v (as pa_hopper_effective leaves it) at head dim
 * d: pa_hopper_vcfg<d, v>::smem_bytes, from the bits. */
constexpr int pa_hopper_smem_of(int d, int v) {
  return 1024 + (v & PA_HV_Q2 ? 2 : 1) * 64 * (v & PA_HV_WG3 ? 3 : 2) * d * 2 +
         (v & PA_HV_S4 ? 4 : v & PA_HV_STAGES3 ? 3 : 2) * 2 * d * 2 * pa_hopper_block_k(d, v);
}
static_assert(pa_hopper_smem_of(128, PA_HOPPER_DEFAULT_SHORT) ==
                      pa_hopper_vcfg<128, PA_HOPPER_DEFAULT_SHORT>::smem_bytes &&
                  pa_hopper_smem_of(64, PA_HOPPER_DEFAULT_D64) ==
                      pa_hopper_vcfg<64, PA_HOPPER_DEFAULT_D64>::smem_bytes &&
                  pa_hopper_smem_of(256, PA_HOPPER_DEFAULT_D256 | PA_HV_K64) ==
                      pa_hopper_vcfg<256, PA_HOPPER_DEFAULT_D256 | PA_HV_K64>::smem_bytes &&
                  pa_hopper_smem_of(128, PA_HOPPER_DEFAULT_D128) ==
                      pa_hopper_vcfg<128, PA_HOPPER_DEFAULT_D128>::smem_bytes &&
                  pa_hopper_smem_of(64, PA_HOPPER_DEFAULT_SHORT) ==
                      pa_hopper_vcfg<64, PA_HOPPER_DEFAULT_SHORT>::smem_bytes &&
                  pa_hopper_smem_of(64, PA_HOPPER_DEFAULT_SHORT_D64) ==
                      pa_hopper_vcfg<64, PA_HOPPER_DEFAULT_SHORT_D64>::smem_bytes &&
                  pa_hopper_smem_of(64, PA_HOPPER_DEFAULT_D64_LONG) ==
                      pa_hopper_vcfg<64, PA_HOPPER_DEFAULT_D64_LONG>::smem_bytes,
              "pa_hopper_smem_of follows pa_hopper_vcfg");

int pa_hopper_smem_bytes(int head_dim, int v) {
  return pa_hopper_smem_of(head_dim == 64 || head_dim == 256 ? head_dim : 128, v);
}

/* Launches variant V if it is compiled for (T, D); *done says whether it was. */
template <typename T, int D, int V, bool FULL>
cudaError_t pa_hopper_try(const pa_problem *p, int sms, void *ws, const int32_t *gate,
                          cudaStream_t stream, bool *done) {
  if constexpr ((FULL || (PA_CUDA_TUNING_VARIANTS && std::is_same<T, __nv_bfloat16>::value)) &&
                (!(V & PA_HV_WG3) || D == 64) && (!(V & (PA_HV_LAG | PA_HV_S4)) || D == 64) &&
                (!(V & (PA_HV_K160 | PA_HV_K176)) || D == 128) &&
                (!(V & PA_HV_K192) || (D == 64 && (V & PA_HV_WG3))) && pa_hopper_compiled_at(D, V)) {
    *done = true;
    return pa_hopper_launch<T, D, V>(p, sms, ws, gate, stream);
  } else {
    *done = false;
    return cudaSuccess;
  }
}

template <typename T, int D>
cudaError_t pa_hopper_run(int v, const pa_problem *p, int sms, void *ws, const int32_t *gate,
                          cudaStream_t stream, bool *done) {
  *done = false;
  switch (v) {
#define PA_HV_CASE(name, bits, full) \
  case (bits): return pa_hopper_try<T, D, (bits), (full) != 0>(p, sms, ws, gate, stream, done);
    PA_HOPPER_VARIANT_LIST(PA_HV_CASE)
#undef PA_HV_CASE
  default: return cudaSuccess;
  }
}

template <typename T, int D>
cudaError_t pa_hopper_launch_variant(const pa_problem *p, int sms, void *ws, const int32_t *gate,
                                     cudaStream_t stream) {
  bool done;
  cudaError_t e = pa_hopper_run<T, D>(pa_hopper_effective(pa_hopper_variant(p), p), p, sms, ws,
                                      gate, stream, &done);
  if (done) return e;
  e = pa_hopper_run<T, D>(pa_hopper_effective(pa_hopper_default(p), p), p, sms, ws, gate, stream,
                          &done);
  return done ? e : pa_hopper_launch<T, D, PA_HOPPER_SERIAL>(p, sms, ws, gate, stream);
}

const char *pa_misaligned_hopper(const pa_problem *p) {
  const pa_named_view views[] = {{&p->q, "q"}, {&p->k, "k"}, {&p->v, "v"}, {&p->o, "out"}};
  return pa_first_misaligned_row(views);
}

} /* namespace */

int pa_cuda_hopper_supports(const pa_problem *p, const pa_cuda_device *dev, pa_error *err) {
#define PA_NO(...)                                             \
  do {                                                         \
    if (err) snprintf(err->msg, sizeof err->msg, __VA_ARGS__); \
    return 0;                                                  \
  } while (0)
  if (!PA_CUDA_HOPPER_BUILT)
    PA_NO("the Hopper kernel is not in this build (POLYATTN_CUDA_ARCHS has no 90, so no "
          "sm_90a code was compiled)");
  if (!pa_tiled_forward_supports(p, "Hopper", err)) return 0;
  if (p->dtype != POLYATTN_DTYPE_F16 && p->dtype != POLYATTN_DTYPE_BF16)
    PA_NO("the Hopper kernel takes fp16 or bf16 inputs only");
  if (dev->cc_major != 9 || dev->cc_minor != 0)
    PA_NO("the Hopper kernel runs on compute capability 9.0 only (sm_90a code; device is "
          "%d.%d)", dev->cc_major, dev->cc_minor);
  if (p->head_dim != p->head_dim_v ||
      (p->head_dim != 64 && p->head_dim != 128 && p->head_dim != 256))
    PA_NO("the Hopper kernel has head dims 64, 128 and 256 (equal for q/k and v) only; this "
          "problem has %d and %d", p->head_dim, p->head_dim_v);
  const int list_bk = pa_hopper_list_min_bk(p->head_dim);
  if (pa_hopper_uses_block_list(p) &&
      (p->seqlen_k + list_bk - 1) / list_bk >= (1 << (31 - PA_BLOCK_LIST_N_SHIFT)))
    PA_NO("the Hopper kernel's BLOCK tile list indexes at most 2^15 key tiles (Sk up to "
          "%dk at this head dim)", list_bk * 32);
  if ((p->varlen ? p->total_k : (int64_t)p->seqlen_k) <= 0)
    PA_NO("the Hopper kernel needs at least one key row (with none, the Ampere kernel "
          "writes the empty rows)");
  if (const char *name = pa_misaligned_hopper(p))
    PA_NO("the Hopper kernel needs 16-byte aligned rows: %s's address and strides must be "
          "multiples of 16 bytes / 8 elements", name);
  /* the largest of the variant asked for and the default it may fall back to */
  const int smem = std::max(
      pa_hopper_smem_bytes(p->head_dim, pa_hopper_effective(pa_hopper_variant(p), p)),
      pa_hopper_smem_bytes(p->head_dim, pa_hopper_effective(pa_hopper_default(p), p)));
  if ((size_t)smem > dev->smem_optin)
    PA_NO("the Hopper kernel needs %d bytes of shared memory; the device allows %zu", smem,
          dev->smem_optin);
  if (p->q.ptr && p->k.ptr && p->v.ptr) {
    pa_hopper_args a;
    const bool ok = p->head_dim == 64    ? pa_hopper_maps<64>(&a, p)
                    : p->head_dim == 256 ? pa_hopper_maps<256>(&a, p)
                                         : pa_hopper_maps<128>(&a, p);
    if (!ok)
      PA_NO("the Hopper kernel could not describe q/k/v to the tensor-memory accelerator "
            "(cuTensorMapEncodeTiled refused the strides, or the driver lacks it)");
  }
#undef PA_NO
  return 1;
}

size_t pa_cuda_hopper_workspace(const pa_problem *p, const pa_cuda_device *dev) {
  /* SK: the stream-K tail's partials and tickets, where it cuts tiles (pa_hopper_sk_grid),
   * + 15 bytes to round the start up to 16; the default counts too, which runs where the
   * variant asked for is not compiled */
  const int sk_grid =
      std::max(pa_hopper_sk_grid(pa_hopper_effective(pa_hopper_variant(p), p), p, dev->sm_count),
               pa_hopper_sk_grid(pa_hopper_effective(pa_hopper_default(p), p), p, dev->sm_count));
  if (sk_grid) return pa_hopper_sk_bytes(p->head_dim, sk_grid) + 15;
  /* BLOCK's key-tile list for 128-row tiles and the head dim's narrowest keys */
  if (!pa_hopper_uses_block_list(p)) return 0;
  return pa_hopper_list_ints(p) * 4 + 16; /* + the persistent kernel's tile counter */
}

cudaError_t pa_cuda_hopper_forward_gated(const pa_problem *p, const pa_cuda_device *dev,
                                         void *workspace, const int32_t *dense_gate,
                                         cudaStream_t stream) {
  if (p->seqlen_q <= 0 || p->batch <= 0 || p->heads_q <= 0) return cudaSuccess;
  const int sms = dev->sm_count;
  const bool bf16 = p->dtype == POLYATTN_DTYPE_BF16;
  if (p->head_dim == 64)
    return bf16 ? pa_hopper_launch_variant<__nv_bfloat16, 64>(p, sms, workspace, dense_gate, stream)
                : pa_hopper_launch_variant<__half, 64>(p, sms, workspace, dense_gate, stream);
  if (p->head_dim == 256)
    return bf16
               ? pa_hopper_launch_variant<__nv_bfloat16, 256>(p, sms, workspace, dense_gate, stream)
               : pa_hopper_launch_variant<__half, 256>(p, sms, workspace, dense_gate, stream);
  return bf16 ? pa_hopper_launch_variant<__nv_bfloat16, 128>(p, sms, workspace, dense_gate, stream)
              : pa_hopper_launch_variant<__half, 128>(p, sms, workspace, dense_gate, stream);
}

cudaError_t pa_cuda_hopper_forward(const pa_problem *p, const pa_cuda_device *dev,
                                   void *workspace, cudaStream_t stream) {
  return pa_cuda_hopper_forward_gated(p, dev, workspace, nullptr, stream);
}
