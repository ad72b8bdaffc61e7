/* The Hopper backward kernel (sm_90a): the Ampere backward's algorithm (bwd_ampere.cu,
 * FlashAttention-2's backward) with its five products on wgmma.mma_async, fp16 and bf16,
 * head-dim buckets 64 and 128.
 *
 * Prep, convert, the workspace and the query-tile walk are bwd_common's, shared with
 * the Ampere and Volta backward kernels. The main kernel: one block of 256 threads
 * (two warpgroups) per (128-key block, kv head, batch entry); warpgroup w owns keys
 * 64w .. 64w + 63 of the block and keeps their dK, dV [64 x D] in fp32 registers (the
 * wgmma accumulators). K and V of the block stay in shared memory; for every query
 * head of the GQA group and every query tile of 64 rows that the masks let reach the
 * block (bwd_common's walk, a fixed order), with Q, dO and the rows' statistics in a
 * two-stage cp.async ring:
 *   S^T  = K_w Q^T        wgmma SS m64n64k16, both operands K-major
 *   dP^T = V_w dO^T       wgmma SS m64n64k16
 *   P, dS per element     bwd_common's rules (a lean path where nothing masks the tile)
 *   dV_w += P^T dO        wgmma RS m64nDk16: P^T from the S^T accumulators, dO MN-major
 *   dK_w += dS^T Q        wgmma RS: dS^T from the dP^T accumulators, Q MN-major
 *   dS -> shared memory K-major ([queries][keys], 64-key panels, the 128-byte swizzle;
 *                         stmatrix .trans of the dS^T fragments), then
 *   dQ_tile += dS K       wgmma SS, A = dS K-major, B = K MN-major (imm-trans-b):
 *                         D = 128 (nsplit): warpgroup w the dims 64w..64w+63 over
 *                         all 128 keys; D = 64 (q128, 128-query tiles): warpgroup w
 *                         the queries 64w..64w+63 over all 128 keys; ksplit (a tuning
 *                         variant): warpgroup w all dims over its own 64 keys (two
 *                         partial sums per element)
 *   dQ added to the fp32 accumulator (red.global.add.v2.f32), by the next tile after
 *                         the loop's barrier: the dQ product runs over it (decision 102).
 * Shared-memory tiles are 64-column panels with 128-byte rows, chunk c of row r at
 * c ^ (r % 8): wgmma's 128-byte swizzle, which is also ampere_tile.cuh's layout for
 * D = 64, so pa_tile_load<ROWS, 64> fills one panel. Tiles written by cp.async,
 * st.shared or stmatrix are handed to wgmma (the async proxy) with fence.proxy.async
 * before the barrier that publishes them. The blocks start key block by key block in groups of
 * heads for causal problems (longest first, decision 86); dK, dV leave through shared
 * memory as 16-byte rows at D = 128. Where every key block has the same work and the
 * last wave would be partly empty, the grid's last one or two waves of blocks are split
 * evenly over the SMs as runs of query tiles (stream-K, decision 100; PA_HBWD_SK).
 *
 * deterministic = 1: no dQ here; the simple backward's dQ kernel computes it (as for
 * the Ampere backward, docs/decisions.md 43).
 *
 * Compiled for sm_90a only (CMakeLists.txt, with fwd_hopper.cu); without 90 in
 * POLYATTN_CUDA_ARCHS it is compiled for the module's architectures and declines. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <type_traits>

#include "ampere_mma.cuh"
#include "ampere_tile.cuh"
#include "bwd_common.cuh"
#include "hopper_ptx.cuh"
#include "kernels.h"
#include "mask.h"
#include "pdl.cuh"

#ifndef PA_CUDA_HOPPER_BUILT
#  define PA_CUDA_HOPPER_BUILT 0
#endif
/* The tuning-only forms (ksplit, bulk dQ, statistics by cp.async) are compiled only with
 * the CMake option POLYATTN_CUDA_TUNING_VARIANTS (decision 114); without it their
 * environment variables are ignored and the defaults run. */
#ifndef PA_CUDA_TUNING_VARIANTS
#  define PA_CUDA_TUNING_VARIANTS 0
#endif

namespace {

/* 4-byte global -> shared copy (4-byte cp.async takes .ca only), in the caller's next
 * commit group. */
__device__ __forceinline__ void pa_cp_async_4(uint32_t dst, const void *src) {
#if PA_HOPPER_ARCH_OK
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(dst), "l"(src) : "memory");
#endif
}

/* A wgmma shared-memory descriptor with the 128-byte swizzle from the start address in
 * 16-byte units (`at16` = address / 16; shared addresses stay below 256 KiB, so it fits
 * the 14-bit field and a step of `off` bytes adds off / 16): pa_wgmma_desc without the
 * masking and shifting per call, so that with uniform operands each HGMMA's descriptor
 * is one uniform add. */
template <uint32_t LBO, uint32_t SBO>
__device__ __forceinline__ uint64_t pa_hbwd_desc(uint32_t at16) {
  return ((uint64_t)(((SBO >> 4) & 0x3FFF) | (1u << 30)) << 32) |
         (uint64_t)((((LBO >> 4) & 0x3FFF) << 16) | at16);
}

template <int D, int BQ, bool BULK, bool DS2 = false>
struct pa_hopper_bwd_cfg {
  enum {
    block_k = 128, /* keys per block: two warpgroups x 64 */
    block_q = BQ,  /* query rows per tile: N of S^T, K of dV/dK, M of dQ (64 or 128) */
    threads = 256,
    panels = D / 64
  };
  static constexpr int k_panel = block_k * 128, q_panel = block_q * 128;
  static constexpr int kv_bytes = block_k * D * 2;   /* K or V */
  static constexpr int q_bytes = block_q * D * 2;    /* Q or dO */
  static constexpr int stats_bytes = 2 * block_q * 4; /* lse2, dsum */
  static constexpr int stage_bytes = 2 * q_bytes + 1024; /* Q, dO, stats (1024-aligned) */
  static_assert(stats_bytes <= 1024, "the statistics fit the stage's last 1024 bytes");
  static constexpr int ds_panel = block_q * 128; /* dS: [BQ queries x 64 keys] per panel */
  static constexpr int ds_bytes = block_k * block_q * 2;
  /* bulk dQ: each warp's [16 rows x 64] fp32 partial, rows padded to 72 floats */
  static constexpr int dq_row = 72, dq_warp_bytes = 16 * dq_row * 4;
  static constexpr int dq_bytes = BULK ? 8 * dq_warp_bytes : 0;
  /* DS2 (PA_HBWD_PIPE2): two dS buffers, the tile's by its stage */
  static constexpr int ds_all = DS2 ? 2 * ds_bytes : ds_bytes;
  static_assert(!(BULK && DS2), "bulk dQ's staging follows one dS buffer");
  /* [K][V][stage 0][stage 1][dS (x2: DS2)][bulk dQ] + 1024 to align the start */
  static constexpr int smem_bytes = 1024 + 2 * kv_bytes + 2 * stage_bytes + ds_all + dq_bytes;
  static_assert(D % 64 == 0 && BQ % 64 == 0, "whole 128-byte swizzle panels");
  static_assert(smem_bytes <= 227 * 1024, "shared memory above the sm_90 opt-in limit");
};

/* D[64 x 64] (+)= A[64 x 16] . B[16 x 64] from shared memory, A K-major, B MN-major
 * (imm-trans-b = 1): dQ = dS K. ACC = false: D = A . B, with D written only (its old
 * value is not an input, so it is not kept live from the previous tile). Reading dS^T
 * MN-major instead (imm-trans-a = 1, dS^T stored from the fragments by 4-byte stores,
 * up to the tenth session) was as fast at D = 128 and 5-6% slower at D = 64 (H200,
 * bench/RESULTS.md, eleventh session). */
template <typename T, bool ACC>
__device__ __forceinline__ void pa_wgmma_ss_kt64(float (&d)[8][4], uint64_t a, uint64_t b);
#if PA_HOPPER_ARCH_OK
#  define PA_HBWD_D32(c)                                                                        \
    c(d[0][0]), c(d[0][1]), c(d[0][2]), c(d[0][3]), c(d[1][0]), c(d[1][1]), c(d[1][2]),         \
        c(d[1][3]), c(d[2][0]), c(d[2][1]), c(d[2][2]), c(d[2][3]), c(d[3][0]), c(d[3][1]),     \
        c(d[3][2]), c(d[3][3]), c(d[4][0]), c(d[4][1]), c(d[4][2]), c(d[4][3]), c(d[5][0]),     \
        c(d[5][1]), c(d[5][2]), c(d[5][3]), c(d[6][0]), c(d[6][1]), c(d[6][2]), c(d[6][3]),     \
        c(d[7][0]), c(d[7][1]), c(d[7][2]), c(d[7][3])
#  define PA_HBWD_RW(x) "+f"(x)
#  define PA_HBWD_W(x) "=f"(x)
#  define PA_HBWD_REGS32                                                                        \
    "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,"  \
    "%24,%25,%26,%27,%28,%29,%30,%31}"
#  define PA_HBWD_TT64(TYPE, PTX)                                                               \
    template <>                                                                                 \
    __device__ __forceinline__ void pa_wgmma_ss_kt64<TYPE, true>(float(&d)[8][4], uint64_t a,   \
                                                                 uint64_t b) {                  \
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"                              \
                   "wgmma.mma_async.sync.aligned.m64n64k16.f32." PTX " " PA_HBWD_REGS32         \
                   ", %32, %33, p, 1, 1, 0, 1;\n}\n"                                          \
                   : PA_HBWD_D32(PA_HBWD_RW)                                                    \
                   : "l"(a), "l"(b), "n"(1)  );                                                 \
    }                                                                                           \
    template <>                                                                                 \
    __device__ __forceinline__ void pa_wgmma_ss_kt64<TYPE, false>(float(&d)[8][4], uint64_t a,  \
                                                                  uint64_t b) {                 \
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"                              \
                   "wgmma.mma_async.sync.aligned.m64n64k16.f32." PTX " " PA_HBWD_REGS32         \
                   ", %32, %33, p, 1, 1, 0, 1;\n}\n"                                          \
                   : PA_HBWD_D32(PA_HBWD_W)                                                     \
                   : "l"(a), "l"(b), "n"(0)  );                                                 \
    }
PA_HBWD_TT64(__nv_bfloat16, "bf16.bf16")
PA_HBWD_TT64(__half, "f16.f16")
#  undef PA_HBWD_TT64
#  undef PA_HBWD_D32
#  undef PA_HBWD_RW
#  undef PA_HBWD_W
#  undef PA_HBWD_REGS32
#else
template <typename T, bool ACC>
__device__ __forceinline__ void pa_wgmma_ss_kt64(float (&d)[8][4], uint64_t a, uint64_t b) {}
#endif

/* The variants (POLYATTN_CUDA_HOPPER_BWD_VARIANT=nsplit|ksplit|q128, read once per
 * process): the query tile and how the two warpgroups share dQ [BQ x D]:
 *   nsplit  64-row tiles; warpgroup w the dims 64w..64w+63 over all 128 keys (D = 128)
 *   ksplit  64-row tiles; warpgroup w all dims over its own 64 keys, in 64-dim passes
 *           (two partial sums per element; the only form at D = 64 with 64-row tiles)
 *   q128    128-row tiles (D = 64): warpgroup w the queries 64w..64w+63 over all keys
 * Defaults, measured on the H200 (bf16 S8192, bench/RESULTS.md): nsplit at D = 128
 * (313 TFLOP/s against ksplit's 252), q128 at D = 64 (281 against ksplit's 211); a
 * variant that does not apply to the bucket runs the bucket's default. ksplit is a tuning
 * form: compiled only with POLYATTN_CUDA_TUNING_VARIANTS, as are bulk and async below. */
enum { PA_HBWD_NSPLIT = 0, PA_HBWD_KSPLIT = 1, PA_HBWD_Q128 = 2, PA_HBWD_SPLIT_MASK = 3 };
/* Flag: dQ added by bulk reductions (cp.reduce.async.bulk .add.f32) of each warp's
 * rows staged in shared memory, instead of per-element red.global.add.v2.f32
 * (POLYATTN_CUDA_HOPPER_BWD_DQ=bulk|red; only with one dQ pass, i.e. not ksplit). */
enum { PA_HBWD_BULK = 4 };

int pa_hbwd_bulk() {
  if (!PA_CUDA_TUNING_VARIANTS) return 0;
  static const int v = [] {
    const char *env = getenv("POLYATTN_CUDA_HOPPER_BWD_DQ");
    return env && !strcmp(env, "bulk") ? 1 : 0;
  }();
  return v;
}

/* Flag: the tile's row statistics (lse2, dsum) come by 4-byte cp.async in the group of
 * Q and dO, instead of plain loads and stores after the loop's barrier, whose latency
 * the first warps of warpgroup 0 wait out before the tile's first wgmma
 * (POLYATTN_CUDA_HOPPER_BWD_STATS=async; default load). Not shown to help: on the
 * H200 (bf16 S8192, bench/RESULTS.md, sixth session) hd128 +3.5% in one round and -2.5%
 * in the next (after the instruction cuts), hd64 -2.4% and -1.9%. */
enum { PA_HBWD_STATS = 8 };

int pa_hbwd_stats() { /* read at each call */
  if (!PA_CUDA_TUNING_VARIANTS) return 0;
  const char *env = getenv("POLYATTN_CUDA_HOPPER_BWD_STATS");
  return env && !strcmp(env, "async") ? 1 : 0;
}

/* The order of the key blocks: block (x, y, z) takes key block y of the (kv head, batch
 * entry) pair z * gridDim.x + x, so that blocks start in groups of gridDim.x pairs, key
 * block by key block (the linear block index has x fastest); gridDim.x = 1 is the
 * plain order (key blocks fastest, then pairs). Causal problems (lpt): the first key
 * blocks meet the most query tiles, so the grouped order starts the longest blocks
 * first and ends the grid on short ones; the group is as many pairs as have their Q, dO
 * and dQ rows (8 * Sq * D bytes per query head) fit in PA_HBWD_LPT_L2 bytes (of the
 * H200's 50 MiB L2), so that the blocks running at once share few heads. */
#define PA_HBWD_LPT_L2 ((int64_t)16 << 20)

/* The schedule of a call (POLYATTN_CUDA_HOPPER_BWD_SCHED, read at each call):
 *   lpt    the grouped order for causal problems (else the plain order)
 *   epi    dK, dV stored through shared memory as 16-byte chunks (D = 128)
 *   pair   where epi does not apply (D = 64, or rows epi cannot take): dK, dV stored from
 *          the fragments as 4-byte pairs where the rows allow it (else per element)
 * Unset or "default": both. Else the '+'-separated names ("old": neither), or
 * "default-x" for the default without x. Measured: bench/RESULTS.md, seventh session. */
struct pa_hbwd_sched {
  bool lpt, epi, pair;
};

pa_hbwd_sched pa_hbwd_sched_get() {
  pa_hbwd_sched s = {true, true, true};
  const char *env = getenv("POLYATTN_CUDA_HOPPER_BWD_SCHED");
  if (!env || !*env) return s;
  if (!strncmp(env, "default", 7)) {
    if (strstr(env, "-lpt")) s.lpt = false;
    if (strstr(env, "-epi")) s.epi = false;
    if (strstr(env, "-pair")) s.pair = false;
    return s;
  }
  s.lpt = strstr(env, "lpt") != nullptr;
  s.epi = strstr(env, "epi") != nullptr;
  s.pair = strstr(env, "pair") != nullptr;
  return s;
}

int pa_hbwd_variant(int D) {
  static const int v = [] {
    const char *env = getenv("POLYATTN_CUDA_HOPPER_BWD_VARIANT");
    if (env && !strcmp(env, "ksplit") && PA_CUDA_TUNING_VARIANTS) return (int)PA_HBWD_KSPLIT;
    if (env && !strcmp(env, "q128")) return (int)PA_HBWD_Q128;
    if (env && !strcmp(env, "nsplit")) return (int)PA_HBWD_NSPLIT;
    return -1;
  }();
  if (D == 128) return v == PA_HBWD_KSPLIT ? (int)PA_HBWD_KSPLIT : (int)PA_HBWD_NSPLIT;
  return v == PA_HBWD_KSPLIT ? (int)PA_HBWD_KSPLIT : (int)PA_HBWD_Q128;
}

/* Flag: the stream-K tail (decision 100). A grid of W equal key blocks on P SMs (one
 * block per SM) runs ceil(W / P) waves of which the last is W % P / P full; at the
 * standard sweep's 2048 blocks on 132 SMs that is 15.5 waves of work in 16. With the
 * flag, the grid is one-dimensional: the first `dp` blocks (whole waves but one) run
 * whole key blocks as before, then P workers split the remaining T (P < T < 2P) key
 * blocks' T * X query-tile units evenly, each worker a contiguous run of units in
 * block order (at least X of them, so a key block is cut at most once, between two
 * neighbouring workers). Both parts of a cut block write their fp32 dK, dV partials to
 * the workspace in the threads' fragment order; the second to take the block's ticket
 * adds the other's and stores (a + b = b + a in fp32: the result does not depend on
 * which part is second). */
enum { PA_HBWD_SK = 16 };
/* Flag: dQ carried across the loop's top (decision 102; the default wherever the kernel
 * computes dQ): a tile's dQ product is not waited for at the tile's end; the next tile
 * waits for it after the loop's barrier and its own loads, adds it, then issues its
 * S^T, so that the barrier and the loads run while the tensor cores do dQ. dS in two
 * buffers (the tile's by its stage): the other warpgroup's dQ may still read the last
 * tile's. Adding after the S^T issue instead made ptxas serialize the wgmmas (C7514:
 * accumulator registers read inside a wgmma pipeline stage) and ran 7-15% below the old
 * loop; the statistics by cp.async with it 1.5-7% slower (bench/RESULTS.md, thirteenth
 * session; decision 102).
 * Not ksplit or bulk (one dQ pass, red adds). */
enum { PA_HBWD_PIPE2 = 64 };
/* The whole blocks run the plain kernel (their first `dp` in its grid), the workers
 * the PA_HBWD_SK kernel as a second grid: by default a programmatic dependent launch,
 * whose blocks start as the first grid's leave (the workers read nothing the first
 * grid writes; they wait for its end before their own, so that what follows in the
 * stream sees both); POLYATTN_CUDA_HOPPER_BWD_SK_LAUNCH=two (read at each call): a
 * plain launch after the first grid. One grid with every block in the workers' kernel
 * was measured and removed (decision 100: 1-10% slower, the workers' spills). */

struct pa_hbwd_sk {
  int dp;         /* whole key blocks before the workers (linear block ids 0 .. dp - 1) */
  int workers;    /* 0: no stream-K tail; else the workers' grid size */
  bool pdl;       /* the workers' grid a dependent launch */
  int nkb;        /* key blocks per (kv head, batch entry) pair */
  int x_units;    /* query-tile units of a key block: G * ceil(seqlen_q / BQ) */
  int units;      /* of the tail: (blocks - dp) * x_units, below 2^31 */
  /* [2 * workers][threads][D] fp32 partials: slots 2i and 2i + 1 hold the head and
   * the tail part of the key block cut at worker boundary i */
  float *part;
  unsigned *ticket; /* [workers], zeroed before the launch */
};

/* Pass `pass` of a worker (this block): the tail's key block tb0 + pass, where tb0
 * holds the worker's first unit; its units [x_lo, x_hi) and partial slot (-1: the
 * whole block); done when the worker's units end before the block. */
struct pa_hbwd_part {
  int pair, kb, x_lo, x_hi, slot;
  bool done;
};

__device__ __forceinline__ pa_hbwd_part pa_hbwd_sk_part(const pa_hbwd_sk &sk, int pass) {
  /* 32-bit arithmetic only (the plan keeps the tail's units below 2^31): 64-bit
   * divisions made ptxas keep the results, and all that follows, in vector registers */
  pa_hbwd_part r;
  const int wi = (int)blockIdx.x;
  const int base = sk.units / sk.workers, rem = sk.units % sk.workers;
  const int u0 = wi * base + min(wi, rem), u1 = u0 + base + (wi < rem ? 1 : 0);
  const int tb = u0 / sk.x_units + pass, b0 = tb * sk.x_units;
  r.done = b0 >= u1;
  r.x_lo = max(u0 - b0, 0);
  r.x_hi = min(sk.x_units, u1 - b0);
  const int blk = sk.dp + tb;
  r.pair = blk / sk.nkb;
  r.kb = blk - r.pair * sk.nkb;
  r.slot = r.x_lo > 0                ? 2 * wi + 1     /* the tail part, boundary wi */
           : r.x_hi < sk.x_units ? 2 * (wi + 1) /* the head part, boundary wi + 1 */
                                 : -1;
  return r;
}

template <int VARIANT>
struct pa_hbwd_bq {
  enum { value = (VARIANT & PA_HBWD_SPLIT_MASK) == PA_HBWD_Q128 ? 128 : 64 };
};

template <typename T, int D, int VARIANT>
__global__ void __launch_bounds__(256, 1)
    pa_hopper_bwd_kernel(const __grid_constant__ pa_problem p, pa_bwd_ws ws, int pairs, int epi_mode,
                         pa_hbwd_sk sk) {
#if PA_HOPPER_ARCH_OK
  typedef pa_hopper_bwd_cfg<D, pa_hbwd_bq<VARIANT>::value, (VARIANT & PA_HBWD_BULK) != 0,
                            (VARIANT & PA_HBWD_PIPE2) != 0>
      cfg;
  enum {
    NT = cfg::threads,
    BQ = cfg::block_q,
    BK = cfg::block_k,
    PANELS = cfg::panels,
    Q_TILES = BQ / 8,   /* 8-query chunks of S^T, dP^T */
    D_TILES = D / 8,    /* 8-dim chunks of dK, dV */
    D_STEPS = D / 16,   /* k16 steps over the head dim */
    Q_STEPS = BQ / 16,  /* k16 steps over the tile's queries */
    /* dQ: split over the keys (each warpgroup its own 64, both add) at D = 64 and in
     * the ksplit variant, else over the dims (each warpgroup 64 dims over all keys). */
    KS = (VARIANT & PA_HBWD_SPLIT_MASK) == PA_HBWD_KSPLIT,
    QS = (VARIANT & PA_HBWD_SPLIT_MASK) == PA_HBWD_Q128,
    BULK = (VARIANT & PA_HBWD_BULK) != 0,
    STATS = (VARIANT & PA_HBWD_STATS) != 0,
    SK = (VARIANT & PA_HBWD_SK) != 0,
    PIPE2 = (VARIANT & PA_HBWD_PIPE2) != 0,
    DQ_STEPS = KS ? BK / 32 : BK / 16, /* k16 steps of dQ */
    DQ_PASSES = KS ? D / 64 : 1        /* 64-dim passes of dQ per warpgroup */
  };
  static_assert(!PIPE2 || (!KS && !BULK), "dQ across the top: one pass, red adds");
  extern __shared__ __align__(1024) unsigned char pa_smem[];
  unsigned char *const base = pa_smem + ((1024u - (pa_hsmem(pa_smem) & 1023u)) & 1023u);
  const uint32_t s_k = pa_hsmem(base);
  const uint32_t s_v = s_k + cfg::kv_bytes;
  const uint32_t s_stage0 = s_v + cfg::kv_bytes; /* stage s: Q, dO, then lse2[BQ], dsum[BQ] */
  const uint32_t s_ds = s_stage0 + 2 * cfg::stage_bytes;
  unsigned char *const stage0_ptr = base + 2 * cfg::kv_bytes;
  unsigned char *const ds_ptr = stage0_ptr + 2 * cfg::stage_bytes;

  const int tid = threadIdx.x, warp = (tid % 128) / 32, lane = tid % 32;
  /* Stream-K workers (the SK kernel's blocks): one key block's part of their units per
   * pass of the loop below (pa_hbwd_sk_part); the plain kernel's blocks make one pass.
   * The loop costs the workers' kernel spills in the tile loop (ptxas, decision 100's
   * loop: 180 / 324 bytes per thread at D = 128, 268 / 504 at D = 64, against 36 / 68
   * and 116 / 204; moving the pass number to shared memory, unrolling the passes or
   * recomputing the block's values per pass did not lower them), which is why the whole
   * blocks run the plain kernel. With dQ carried (PA_HBWD_PIPE2, the default) and the
   * walk's jumps (decision 103): 64 / 108 and 116 / 228, against 36 / 52 and 120 / 204
   * in the plain kernel. */
  __shared__ unsigned sk_order;
#pragma unroll 1
  for (int pass = 0;; ++pass) {
    int pair, kb, x_lo = 0, x_hi = INT_MAX;
    if (!SK) {
      pair = blockIdx.z * gridDim.x + blockIdx.x; /* (kv head, batch entry) */
      kb = blockIdx.y;
      /* the whole blocks of a tail launched as its own grid: the first sk.dp only */
      if (sk.dp > 0 && kb + sk.nkb * pair >= sk.dp) return;
      pa_pdl_launch_dependents(); /* a dependent workers' grid may start as SMs come free */
    } else {
      const pa_hbwd_part pt = pa_hbwd_sk_part(sk, pass);
      if (pt.done) break;
      if (pass) __syncthreads(); /* the previous part's epilogue is done with shared memory */
      pair = pt.pair;
      kb = pt.kb;
      x_lo = pt.x_lo;
      x_hi = pt.x_hi;
    }
    pa_bwd_block c;
    if (pair >= pairs ||
        !pa_bwd_block_init<BQ>(c, p, pair / p.heads_kv, pair % p.heads_kv, kb * BK)) {
      if (SK) continue; /* both parts of a cut block skip it alike */
      return;               /* the last group's padding; keys past the entry's rows */
    }
    const int X = min(c.G * c.n_qt, x_hi); /* the walk's end (a worker's part: x_hi) */
    /* The warpgroup, through a shuffle so that the compiler knows it is warp-uniform (the
     * descriptor arithmetic then stays on the uniform datapath). */
    const int wg = __shfl_sync(0xffffffffu, tid / 128, 0);
    const int g8 = lane >> 2, t = lane & 3;
    float *const dq_stage = (float *)(ds_ptr + cfg::ds_bytes + (tid / 32) * cfg::dq_warp_bytes);
    const int wk = 64 * wg + 16 * warp; /* the warp's first key in the block */

    /* Prologue: K and V of the block, panel by panel (keys past len_k are zero). */
    {
      const T *k_g = (const T *)p.k.ptr + pa_view_row(&p.k, c.b, c.j0, c.seq.k_start, c.hk);
      const T *v_g = (const T *)p.v.ptr + pa_view_row(&p.v, c.b, c.j0, c.seq.k_start, c.hk);
      const int rows = c.seq.len_k - c.j0;
#pragma unroll
      for (int x = 0; x < PANELS; ++x) {
        pa_tile_load<BK, 64, NT>(s_k + x * cfg::k_panel, k_g + 64 * x, p.k.stride_s, rows,
                                 p.head_dim - 64 * x, (const T *)p.k.ptr, tid);
        pa_tile_load<BK, 64, NT>(s_v + x * cfg::k_panel, v_g + 64 * x, p.v.stride_s, rows,
                                 p.head_dim_v - 64 * x, (const T *)p.v.ptr, tid);
      }
      pa_cp_async_commit();
    }
    /* Q, dO and the statistics of tile x into `stage` (the stage is free: released by
     * the barrier before the call). */
    auto load_tile = [&](pa_bwd_at a, int stage) {
      const int h = c.hk * c.G + a.g, i0 = a.qt * BQ;
      const uint32_t s_q = s_stage0 + stage * cfg::stage_bytes, s_do = s_q + cfg::q_bytes;
      const int rows = c.seq.len_q - i0;
      const T *q_g = (const T *)p.q.ptr + pa_view_row(&p.q, c.b, i0, c.seq.q_start, h);
      const T *do_g = (const T *)p.dout.ptr + pa_view_row(&p.dout, c.b, i0, c.seq.q_start, h);
#pragma unroll
      for (int x = 0; x < PANELS; ++x) {
        pa_tile_load<BQ, 64, NT>(s_q + x * cfg::q_panel, q_g + 64 * x, p.q.stride_s, rows,
                                 p.head_dim - 64 * x, (const T *)p.q.ptr, tid);
        pa_tile_load<BQ, 64, NT>(s_do + x * cfg::q_panel, do_g + 64 * x, p.dout.stride_s, rows,
                                 p.head_dim_v - 64 * x, (const T *)p.dout.ptr, tid);
      }
      if (tid < BQ) {
        float *st = (float *)(stage0_ptr + stage * cfg::stage_bytes + 2 * cfg::q_bytes);
        const bool in = tid < rows;
        const int64_t at = h * ws.rows + c.row0 + i0 + tid;
        if (STATS && in) {
          pa_cp_async_4(pa_hsmem(st + tid), ws.lse2 + at);
          pa_cp_async_4(pa_hsmem(st + BQ + tid), ws.dsum + at);
        } else {
          st[tid] = in ? ws.lse2[at] : INFINITY; /* padded rows: P = 0 */
          st[BQ + tid] = in ? ws.dsum[at] : 0.0f;
        }
      }
      pa_cp_async_commit();
    };
    bool partial = false;
    pa_bwd_at at = {X, 0, 0};
    if (x_lo < X)
      at = pa_bwd_walk<BQ, BK>(p, c, pa_bwd_at{x_lo, x_lo / c.n_qt, x_lo % c.n_qt}, &partial);
    if (at.x < X) load_tile(at, 0);

    const bool general = p.softcap > 0.0f || p.alibi.buf;
    const float xscale = p.scale * PA_BWD_LOG2E;
    float dk[D_TILES][4], dv[D_TILES][4]; /* [64 keys x D] per warpgroup, fp32 */
#pragma unroll
    for (int n = 0; n < D_TILES; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) dk[n][e] = dv[n][e] = 0.0f;

    /* dQ [64 queries x 64 dims] per warpgroup and pass, added to the fp32 accumulator by
     * red.global.add (pairs where head_dim is even). */
    float dq[DQ_PASSES][8][4];
    auto dq_add = [&](float(&acc)[8][4], int hh, int ii0, int c0) {
      const bool pairs = (p.head_dim & 1) == 0;
      /* Whole 64-column rows: no column checks (q128 only: at D = 128 the extra path costs
       * spills, 128 against 32 bytes per thread). */
      const bool whole = QS && pairs && c0 + 64 <= p.head_dim;
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        const int64_t i = ii0 + (QS ? 64 * wg : 0) + 16 * warp + g8 + 8 * r;
        if (i >= c.seq.len_q) continue;
        float *dst = ws.dq_acc + ((c.row0 + i) * p.heads_q + hh) * p.head_dim;
        if (whole) {
          float *at = dst + c0 + 2 * t;
#pragma unroll
          for (int n = 0; n < 8; ++n) pa_bwd_red_add2(at + 8 * n, acc[n][2 * r], acc[n][2 * r + 1]);
        } else {
#pragma unroll
          for (int n = 0; n < 8; ++n)
            pa_bwd_dq_add2(dst, c0 + 8 * n + 2 * t, p.head_dim, pairs, acc[n][2 * r],
                           acc[n][2 * r + 1]);
        }
      }
    };

    /* PIPE2: the last tile's dQ (in flight) and its head and first row; none at first:
     * a first row past every sequence (supports() keeps seqlen_q <= INT_MAX / 2), so
     * that the add skips every row */
    int held_h = 0, held_i0 = INT_MAX / 2;
    for (int stage = 0; at.x < X; stage ^= 1) {
      pa_cp_async_wait<0>();
      pa_fence_proxy_async(); /* this thread's cp.async writes, to the wgmma reads */
      /* tile x (and K, V) visible; every thread is done with the other stage and with
       * this tile's dS buffer (PIPE2: the last tile's dQ may still read the other one) */
      __syncthreads();
      const bool tile_partial = partial;
      const pa_bwd_at next = pa_bwd_walk<BQ, BK>(p, c, pa_bwd_at_next(c, at), &partial);
      if (next.x < X) load_tile(next, stage ^ 1);

      const int h = c.hk * c.G + at.g, i0 = at.qt * BQ;
      const uint32_t s_q = s_stage0 + stage * cfg::stage_bytes, s_do = s_q + cfg::q_bytes;
      const float *lse2_s =
          (const float *)(stage0_ptr + stage * cfg::stage_bytes + 2 * cfg::q_bytes);
      const float *dsum_s = lse2_s + BQ;
      const uint32_t s_dst = s_ds + (PIPE2 ? stage * cfg::ds_bytes : 0); /* the tile's dS */
      /* k16 step kk of the head dim: the panel, then 32 bytes per step in its 128-byte
       * rows; the warpgroup's 64 keys start 64 rows into each K / V panel. */
      auto kv_off = [&](int kk) {
        return (uint32_t)((kk / 4) * cfg::k_panel + 64 * wg * 128 + (kk % 4) * 32);
      };
      auto q_off = [](int kk) { return (uint32_t)((kk / 4) * cfg::q_panel + (kk % 4) * 32); };

      /* S^T = K_w Q^T and dP^T = V_w dO^T: [64 keys x 64 queries] per warpgroup, two
       * commit groups, so that P's exponentials run while dP^T is on the tensor cores. */
      float s[Q_TILES][4], dp[Q_TILES][4];
      if constexpr (PIPE2) { /* the last tile's dQ, in flight over the barrier and loads */
        pa_wgmma_wait<0>();
        pa_wgmma_fence_regs(dq[0]);
        dq_add(dq[0], held_h, held_i0, QS ? 0 : 64 * wg);
      }
      pa_wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < D_STEPS; ++kk)
        pa_wgmma_ss<T, BQ>(s, pa_hbwd_desc<16, 1024>((s_k >> 4) + kv_off(kk) / 16),
                           pa_hbwd_desc<16, 1024>((s_q >> 4) + q_off(kk) / 16), kk > 0);
      pa_wgmma_commit();
#pragma unroll
      for (int kk = 0; kk < D_STEPS; ++kk)
        pa_wgmma_ss<T, BQ>(dp, pa_hbwd_desc<16, 1024>((s_v >> 4) + kv_off(kk) / 16),
                           pa_hbwd_desc<16, 1024>((s_do >> 4) + q_off(kk) / 16), kk > 0);
      pa_wgmma_commit();

      /* P and dS: element (key wk + g8 + 8 (e >> 1), query 8n + 2t + (e & 1)). */
      pa_bwd_tile tl;
      tl.h = h;
      tl.slope = pa_problem_alibi_slope(&p, c.b, h);
      tl.general = general;
      tl.range = pa_bwd_tile_range<BQ, BK>(c, i0);
      tl.partial = tile_partial;
      tl.xscale = xscale;
      /* The lean path (no softcap, ALiBi or partial block mask): P from the plain score;
       * MASKED (the tile crosses a causal/window/length edge) keeps (i, j) iff
       * dlo <= j - i <= dhi and j < len_k, pa_mask_keep's rule in the thread's two keys
       * and sixteen queries, instead of the general path's per-element row ranges. */
      auto lean = [&](auto masked) {
        constexpr bool MASKED = decltype(masked)::value;
        int dlo = INT_MIN, dhi = INT_MAX, ja = 0, da = 0;
        if constexpr (MASKED) {
          const int64_t off = (int64_t)c.mask.len_k - c.mask.len_q;
          if (c.mask.window_left >= 0) dlo = (int)max(off - c.mask.window_left, (int64_t)INT_MIN);
          if (c.mask.window_right >= 0) dhi = (int)min(off + c.mask.window_right, (int64_t)INT_MAX);
          ja = c.j0 + wk + g8;     /* the thread's first key; the second is ja + 8 */
          da = ja - (i0 + 2 * t);  /* j - i of element (n = 0, e = 0) */
        }
        pa_wgmma_wait<1>(); /* S^T landed */
        pa_wgmma_fence_regs(s);
#pragma unroll
        for (int n = 0; n < Q_TILES; ++n) {
          const float2 l2 = *(const float2 *)(lse2_s + 8 * n + 2 * t);
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const float v = pa_exp2(fmaf(s[n][e], xscale, -((e & 1) ? l2.y : l2.x)));
            if constexpr (MASKED) {
              const int d = da + 8 * (e >> 1) - 8 * n - (e & 1);
              s[n][e] = d >= dlo && d <= dhi && ja + 8 * (e >> 1) < c.mask.len_k ? v : 0.0f;
            } else {
              s[n][e] = v;
            }
          }
        }
        pa_wgmma_wait<0>();
        pa_wgmma_fence_regs(dp);
#pragma unroll
        for (int n = 0; n < Q_TILES; ++n) {
          const float2 ds = *(const float2 *)(dsum_s + 8 * n + 2 * t);
#pragma unroll
          for (int e = 0; e < 4; ++e)
            dp[n][e] = s[n][e] * (dp[n][e] - ((e & 1) ? ds.y : ds.x)) * p.scale;
        }
      };
      if (!general && !tile_partial) {
        if (tl.range)
          lean(std::true_type());
        else
          lean(std::false_type());
      } else {
        pa_wgmma_wait<0>();
        pa_wgmma_fence_regs(s);
        pa_wgmma_fence_regs(dp);
#pragma unroll
        for (int n = 0; n < Q_TILES; ++n)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int ql = 8 * n + 2 * t + (e & 1);
            float pr, ds;
            pa_bwd_p_ds(p, c, tl, i0 + ql, c.j0 + wk + g8 + 8 * (e >> 1), s[n][e], dp[n][e],
                        lse2_s[ql], dsum_s[ql], &pr, &ds);
            dp[n][e] = ds;
            s[n][e] = pr;
          }
      }

      /* P^T, dS^T as A fragments [64 keys x 16 queries] per k16 step: chunks 2kk, 2kk+1. */
      uint32_t pf[Q_STEPS][4], dsf[Q_STEPS][4];
#pragma unroll
      for (int kk = 0; kk < Q_STEPS; ++kk) {
        pf[kk][0] = pa_pack2<T>(s[2 * kk][0], s[2 * kk][1]);
        pf[kk][1] = pa_pack2<T>(s[2 * kk][2], s[2 * kk][3]);
        pf[kk][2] = pa_pack2<T>(s[2 * kk + 1][0], s[2 * kk + 1][1]);
        pf[kk][3] = pa_pack2<T>(s[2 * kk + 1][2], s[2 * kk + 1][3]);
        dsf[kk][0] = pa_pack2<T>(dp[2 * kk][0], dp[2 * kk][1]);
        dsf[kk][1] = pa_pack2<T>(dp[2 * kk][2], dp[2 * kk][3]);
        dsf[kk][2] = pa_pack2<T>(dp[2 * kk + 1][0], dp[2 * kk + 1][1]);
        dsf[kk][3] = pa_pack2<T>(dp[2 * kk + 1][2], dp[2 * kk + 1][3]);
      }

      if (PIPE2 || ws.dq_acc) {
        /* dS to shared memory K-major: the warpgroup's panel, [BQ queries x 64 keys] in
         * 128-byte rows. stmatrix .trans: matrix i of step kk (register dsf[kk][i]) holds
         * keys wk + 8 (i & 1) .. + 7 of queries 16 kk + 8 (i >> 1) .. + 7, stored as the
         * queries' rows; lane 8 i + j gives row j's address: the 16-byte chunk
         * 2 warp + (i & 1) of the row, swizzled by the row % 8 = j. Before the dK product
         * takes dsf as its A operand: PTX leaves reading an in-flight wgmma's A registers
         * undefined. */
        const int i = lane >> 3, j = lane & 7;
        const uint32_t at0 = s_dst + wg * cfg::ds_panel + (8 * (i >> 1) + j) * 128 +
                             (((2 * warp + (i & 1)) ^ j) << 4);
#pragma unroll
        for (int kk = 0; kk < Q_STEPS; ++kk) pa_stmatrix_x4_trans(at0 + kk * 16 * 128, dsf[kk]);
      }

      /* dV += P^T dO, dK += dS^T Q: B = dO, Q [queries x D] read MN-major (rows = K). */
      pa_wgmma_fence_regs(dv);
      pa_wgmma_fence_regs(dk);
      pa_wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < Q_STEPS; ++kk) {
        pa_wgmma_rs_tb<T, D>(dv, pf[kk],
                             pa_hbwd_desc<cfg::q_panel, 1024>((s_do >> 4) + kk * 128), 1);
        pa_wgmma_rs_tb<T, D>(dk, dsf[kk],
                             pa_hbwd_desc<cfg::q_panel, 1024>((s_q >> 4) + kk * 128), 1);
      }
      pa_wgmma_commit();

      if (PIPE2 || ws.dq_acc) { /* uniform: the mode of the call */
        pa_fence_proxy_async(); /* the stmatrix stores above, to dQ's wgmma */
        if (KS)
          pa_named_sync(1 + wg, 128); /* the warpgroup's own keys only */
        else
          pa_named_sync(1, NT); /* both warpgroups' dS: each takes a half over all keys */
        /* dQ [64 queries x 64 dims] per warpgroup and pass: A = dS K-major (rows =
         * queries; QS: the warpgroup's 64), k16 step kk = keys 16 kk .. : panel kk / 4 (KS:
         * the warpgroup's own keys only), 32 bytes per step in the 128-byte rows; B = K
         * (rows = keys) MN-major. Pass x of the K split covers dims 64x..64x+63; both
         * passes are issued before the first one's adds. */
        const uint32_t a0 = s_dst + (KS ? wg * cfg::ds_panel : 0) + (QS ? 64 * wg * 128 : 0);
        auto a_desc = [&](int kk) {
          return pa_hbwd_desc<16, 1024>((a0 + (kk / 4) * cfg::ds_panel + (kk % 4) * 32) >> 4);
        };
#pragma unroll
        for (int x = 0; x < DQ_PASSES; ++x) {
          const uint32_t b0 = KS   ? s_k + x * cfg::k_panel + 64 * wg * 128
                              : QS ? s_k
                                   : s_k + wg * cfg::k_panel;
          pa_wgmma_fence();
          pa_wgmma_ss_kt64<T, false>(dq[x], a_desc(0), pa_hbwd_desc<cfg::k_panel, 1024>(b0 >> 4));
#pragma unroll
          for (int kk = 1; kk < DQ_STEPS; ++kk)
            pa_wgmma_ss_kt64<T, true>(dq[x], a_desc(kk),
                                      pa_hbwd_desc<cfg::k_panel, 1024>((b0 >> 4) + kk * 128));
          pa_wgmma_commit();
        }
        if constexpr (PIPE2) { /* dQ left in flight: added by the next tile */
          pa_wgmma_wait<1>();
          held_h = h;
          held_i0 = i0;
        } else {
          const bool bulk_ok = (p.head_dim & 3) == 0; /* 16-byte rows and sizes */
#pragma unroll
          for (int x = 0; x < DQ_PASSES; ++x) {
            if (x == 0 && DQ_PASSES == 2) {
              pa_wgmma_wait<1>();
            } else {
              pa_wgmma_wait<0>();
            }
            pa_wgmma_fence_regs(dq[x]);
            const int c0 = KS ? 64 * x : QS ? 0 : 64 * wg;
            if (BULK && bulk_ok) {
              /* The warp's 16 rows to shared memory, then one bulk add per row (lanes
               * 0-15): the previous tile's bulk reads of this buffer must be done. */
              if (lane < 16) pa_bulk_wait_read0();
              __syncwarp();
#pragma unroll
              for (int r = 0; r < 2; ++r)
#pragma unroll
                for (int n = 0; n < 8; ++n)
                  *(float2 *)(dq_stage + (g8 + 8 * r) * cfg::dq_row + 8 * n + 2 * t) =
                      make_float2(dq[x][n][2 * r], dq[x][n][2 * r + 1]);
              pa_fence_proxy_async();
              __syncwarp();
              const int64_t i = i0 + (QS ? 64 * wg : 0) + 16 * warp + lane;
              if (lane < 16 && i < c.seq.len_q && c0 < p.head_dim) {
                const int cols = p.head_dim - c0 < 64 ? p.head_dim - c0 : 64;
                float *dst = ws.dq_acc + ((c.row0 + i) * p.heads_q + h) * p.head_dim + c0;
                asm volatile(
                    "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%0], [%1], %2;\n" ::"l"(
                        __cvta_generic_to_global(dst)),
                    "r"(pa_hsmem(dq_stage + lane * cfg::dq_row)), "r"(cols * 4)
                    : "memory");
                pa_bulk_commit();
              }
              continue;
            }
            dq_add(dq[x], h, i0, c0);
          }
        }
      } else {
        pa_wgmma_wait<0>();
      }
      pa_wgmma_fence_regs(dv);
      pa_wgmma_fence_regs(dk);
      at = next;
    }
    if constexpr (PIPE2) { /* the last tile's dQ */
      pa_wgmma_wait<0>();
      pa_wgmma_fence_regs(dq[0]);
      dq_add(dq[0], held_h, held_i0, QS ? 0 : 64 * wg);
    }
    pa_cp_async_wait<0>(); /* a block with no tile still has K and V in flight */
    if (BULK) asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory"); /* before smem goes */

    const int slot = SK ? pa_hbwd_sk_part(sk, pass).slot : -1;
    if (SK && slot >= 0) {
      /* A part of a cut block: the partial out in fragment order (float4 i of thread tid
       * at [i][tid]), then the block's ticket; the second part adds the first's. */
      float4 *mine = (float4 *)(sk.part + (int64_t)slot * NT * D) + tid;
#pragma unroll
      for (int n = 0; n < D_TILES; ++n) {
        __stcg(mine + n * NT, make_float4(dk[n][0], dk[n][1], dk[n][2], dk[n][3]));
        __stcg(mine + (D_TILES + n) * NT, make_float4(dv[n][0], dv[n][1], dv[n][2], dv[n][3]));
      }
      __threadfence();
      __syncthreads();
      if (tid == 0) sk_order = atomicAdd(sk.ticket + slot / 2, 1u);
      __syncthreads();
      if (sk_order == 0) continue; /* first: the other part stores the block */
      __threadfence();
      const float4 *other = (const float4 *)(sk.part + (int64_t)(slot ^ 1) * NT * D) + tid;
#pragma unroll
      for (int n = 0; n < D_TILES; ++n) {
        const float4 a = __ldcg(other + n * NT), b = __ldcg(other + (D_TILES + n) * NT);
        dk[n][0] += a.x;
        dk[n][1] += a.y;
        dk[n][2] += a.z;
        dk[n][3] += a.w;
        dv[n][0] += b.x;
        dv[n][1] += b.y;
        dv[n][2] += b.z;
        dv[n][3] += b.w;
      }
    }

    /* dK, dV of the block, once, in the dtype. Staged (D = 128; the views' rows 16-byte
     * aligned, head dims multiples of 8): each thread's fragments into shared memory (K,
     * V and the stages, free once both warpgroups are past their last product) as rows
     * padded by 16 bytes (the fragment stores hit 32 banks and take immediate offsets),
     * then 16-byte chunks out, a row's chunks on consecutive threads; else per element
     * from the fragments. At D = 64 the staged path raised ptxas's spills (176 to 188
     * bytes per thread; bench/results/2026-12-01s7-hbwd-ptxas). */
    T *dk_g = (T *)p.dk.ptr, *dv_g = (T *)p.dv.ptr;
    if (D == 128 && epi_mode == 2) {
      enum { RS = D * 2 + 16, CH = D / 8 }; /* padded row bytes; 16-byte chunks per row */
      static_assert(2 * BK * RS <= 2 * cfg::kv_bytes + 2 * cfg::stage_bytes, "dK, dV fit");
      __syncthreads();
      unsigned char *const rk = base + (wk + g8) * RS + 4 * t, *const rv = rk + BK * RS;
#pragma unroll
      for (int r = 0; r < 2; ++r)
#pragma unroll
        for (int n = 0; n < D_TILES; ++n) {
          *(uint32_t *)(rk + 8 * r * RS + 16 * n) = pa_pack2<T>(dk[n][2 * r], dk[n][2 * r + 1]);
          *(uint32_t *)(rv + 8 * r * RS + 16 * n) = pa_pack2<T>(dv[n][2 * r], dv[n][2 * r + 1]);
        }
      __syncthreads();
      const int ch = tid % CH;
#pragma unroll 1
      for (int it = 0; it < BK * CH / NT; ++it) {
        const int row = it * (NT / CH) + tid / CH, j = c.j0 + row;
        if (j >= c.rows_k) break; /* rows grow with it */
        const unsigned char *src = base + row * RS + 16 * ch;
        if (8 * ch < p.head_dim)
          *(uint4 *)(dk_g + pa_view_row(&p.dk, c.b, j, c.seq.k_start, c.hk) + 8 * ch) =
              *(const uint4 *)src;
        if (8 * ch < p.head_dim_v)
          *(uint4 *)(dv_g + pa_view_row(&p.dv, c.b, j, c.seq.k_start, c.hk) + 8 * ch) =
              *(const uint4 *)(src + BK * RS);
      }
    } else if (epi_mode == 1) {
      /* pairs: both head dims even, the rows 4-byte aligned: one 4-byte store per
       * fragment pair (columns 8n + 2t, + 1) instead of two 2-byte stores. */
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        const int j = c.j0 + wk + g8 + 8 * r;
        if (j >= c.rows_k) continue;
        T *const ka = dk_g + pa_view_row(&p.dk, c.b, j, c.seq.k_start, c.hk) + 2 * t;
        T *const va = dv_g + pa_view_row(&p.dv, c.b, j, c.seq.k_start, c.hk) + 2 * t;
#pragma unroll
        for (int n = 0; n < D_TILES; ++n) {
          if (8 * n + 2 * t < p.head_dim)
            *(uint32_t *)(ka + 8 * n) = pa_pack2<T>(dk[n][2 * r], dk[n][2 * r + 1]);
          if (8 * n + 2 * t < p.head_dim_v)
            *(uint32_t *)(va + 8 * n) = pa_pack2<T>(dv[n][2 * r], dv[n][2 * r + 1]);
        }
      }
    } else {
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        const int j = c.j0 + wk + g8 + 8 * r;
        if (j >= c.rows_k) continue;
        const int64_t ka = pa_view_row(&p.dk, c.b, j, c.seq.k_start, c.hk);
        const int64_t va = pa_view_row(&p.dv, c.b, j, c.seq.k_start, c.hk);
#pragma unroll
        for (int n = 0; n < D_TILES; ++n)
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            const int col = 8 * n + 2 * t + e;
            if (col < p.head_dim) dk_g[ka + col] = (T)dk[n][2 * r + e];
            if (col < p.head_dim_v) dv_g[va + col] = (T)dv[n][2 * r + e];
          }
      }
    }
    if (!SK) break;
  } /* the parts of a worker */
  if (SK && sk.pdl) pa_pdl_wait(); /* done after the first grid */
#else
  __trap(); /* never launched: pa_cuda_hopper_backward_supports() requires the sm_90a build */
#endif
}

/* The stream-K tail of a call (PA_HBWD_SK): workers = 0 where it does not apply.
 * POLYATTN_CUDA_HOPPER_BWD_SK (read at each call): "0" never; "force" for every
 * problem with more key blocks than SMs (also causal, windowed, block-sparse and varlen
 * ones, whose blocks differ in work: a test of the parts' bookkeeping, not a schedule),
 * "force:n" the same with n workers in place of the SM count;
 * unset: where every key block has the same work (no causal/window mask, dense,
 * not varlen, no seqused_k) and the last wave would leave at least 1/200 of the call's
 * SM time idle. Only the default variant of the bucket takes it. */
pa_hbwd_sk pa_hbwd_sk_plan(const pa_problem *p, const pa_cuda_device *dev) {
  pa_hbwd_sk sk = {};
  const char *env = getenv("POLYATTN_CUDA_HOPPER_BWD_SK");
  if (env && !strcmp(env, "0")) return sk;
  const bool force = env && !strncmp(env, "force", 5);
  const int D = pa_bwd_bucket(p);
  if (!D || pa_hbwd_variant(D) == PA_HBWD_KSPLIT || pa_hbwd_bulk() || pa_hbwd_stats()) return sk;
  const bool uniform = !p->causal && p->window_left < 0 && p->window_right < 0 && !p->varlen &&
                       !p->seqused_k.buf && p->sparsity == POLYATTN_SPARSITY_NONE;
  if (!uniform && !force) return sk;
  const int BQ = D == 64 ? 128 : 64; /* q128 at D = 64, nsplit at D = 128 */
  const int64_t nkb = (p->seqlen_k + 127) / 128, W = nkb * p->heads_kv * p->batch;
  /* "force:n": n workers in place of the SM count (tests: cuts in small problems) */
  const int P = force && env[5] == ':' ? atoi(env + 6) : dev->sm_count;
  if (P <= 0 || W <= P || W % P == 0 || W > INT_MAX) return sk;
  const int64_t full = W / P, R = W % P;
  /* idle SM time of the last wave: (P - R) / P of one wave in full + 1 */
  if (!force && 200 * (P - R) < P * (full + 1)) return sk;
  const int64_t X = (int64_t)(p->heads_q / p->heads_kv) * ((p->seqlen_q + BQ - 1) / BQ);
  if (X <= 0 || (W - (full - 1) * P) * X > INT_MAX) return sk;
  sk.dp = (int)((full - 1) * P);
  sk.workers = P;
  const char *lenv = getenv("POLYATTN_CUDA_HOPPER_BWD_SK_LAUNCH");
  sk.pdl = !(lenv && !strcmp(lenv, "two"));
  sk.nkb = (int)nkb;
  sk.x_units = (int)X;
  sk.units = (int)((W - sk.dp) * X);
  return sk;
}

/* The stream-K tail's workspace: the partial slots, then the tickets. */
size_t pa_hbwd_sk_bytes(const pa_problem *p, const pa_hbwd_sk &sk) {
  return sk.workers ? (size_t)2 * sk.workers * 256 * pa_bwd_bucket(p) * sizeof(float) +
                          (size_t)sk.workers * sizeof(unsigned)
                    : 0;
}

size_t pa_hbwd_sk_offset(const pa_problem *p, const pa_cuda_device *dev) {
  return (pa_bwd_workspace(p, dev) + 255) & ~(size_t)255;
}

template <typename T, int D, int VARIANT>
cudaError_t pa_hopper_bwd_launch_v(const pa_problem *p, const pa_bwd_ws &ws, bool lpt, bool epi,
                                   bool pair, cudaStream_t stream, pa_hbwd_sk sk = {}) {
  typedef pa_hopper_bwd_cfg<D, pa_hbwd_bq<VARIANT>::value, (VARIANT & PA_HBWD_BULK) != 0,
                            (VARIANT & PA_HBWD_PIPE2) != 0>
      cfg;
  const void *fn = (const void *)pa_hopper_bwd_kernel<T, D, VARIANT>;
  /* Not a stream operation: allowed while the stream is being captured. */
  cudaError_t e = cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       cfg::smem_bytes);
  if (e != cudaSuccess) return e;
  const int64_t nkb = (p->seqlen_k + cfg::block_k - 1) / cfg::block_k;
  const int64_t pairs = (int64_t)p->heads_kv * p->batch;
  int64_t group = 1;
  if (lpt && p->causal) {
    /* Pairs whose Q, dO (2 x 2 bytes) and dQ accumulator (4 bytes) rows, 8 * Sq * D bytes
     * per query head, fit PA_HBWD_LPT_L2 together. */
    const int64_t pair_bytes = (int64_t)8 * p->seqlen_q * D * (p->heads_q / p->heads_kv);
    /* POLYATTN_CUDA_HOPPER_BWD_LPT_MB=n (read per call): n MiB instead, to time the guess */
    const char *mb = getenv("POLYATTN_CUDA_HOPPER_BWD_LPT_MB");
    const int64_t l2 = mb && atoi(mb) > 0 ? (int64_t)atoi(mb) << 20 : PA_HBWD_LPT_L2;
    group = pair_bytes > 0 ? l2 / pair_bytes : 1;
  }
  /* POLYATTN_CUDA_HOPPER_BWD_GROUP=n (tests): groups of n pairs for every problem, so
   * that partial groups and non-causal problems take the grouped order too. */
  const char *genv = getenv("POLYATTN_CUDA_HOPPER_BWD_GROUP");
  if (genv && atoi(genv) > 0) group = atoi(genv);
  if (group > pairs) group = pairs;
  if (group < (pairs + 65534) / 65535) group = (pairs + 65534) / 65535; /* gridDim.z */
  if (group < 1) group = 1;
  const dim3 grid = (VARIANT & PA_HBWD_SK) ? dim3((unsigned)sk.workers)
                                           : dim3((unsigned)group, (unsigned)nkb,
                                                  (unsigned)((pairs + group - 1) / group));
  const pa_named_view out[] = {{&p->dk, "dk"}, {&p->dv, "dv"}};
  const bool staged = D == 128 && epi && p->head_dim % 8 == 0 && p->head_dim_v % 8 == 0 &&
                      !pa_first_misaligned_row(out);
  /* pair stores: 4-byte aligned rows (pointers, element strides even), even head dims */
  bool pair_ok = pair && p->head_dim % 2 == 0 && p->head_dim_v % 2 == 0;
  const pa_view *const dkv[] = {&p->dk, &p->dv};
  for (const pa_view *v : dkv)
    pair_ok = pair_ok && (uintptr_t)v->ptr % 4 == 0 && v->stride_b % 2 == 0 &&
              v->stride_s % 2 == 0 && v->stride_h % 2 == 0;
  const int epi_mode = staged ? 2 : pair_ok ? 1 : 0;
  /* the dependent launch only where a whole-block grid precedes it (dp > 0) */
  if ((VARIANT & PA_HBWD_SK) && sk.pdl && sk.dp > 0)
    return pa_launch_dependent(pa_hopper_bwd_kernel<T, D, VARIANT>, grid, dim3(cfg::threads),
                               cfg::smem_bytes, stream, *p, ws, (int)pairs, epi_mode, sk);
  pa_hopper_bwd_kernel<T, D, VARIANT><<<grid, cfg::threads, cfg::smem_bytes, stream>>>(
      *p, ws, (int)pairs, epi_mode, sk);
  return cudaGetLastError();
}

/* The tile loop's form: PA_HBWD_PIPE2 (dQ carried across the loop's top) wherever the
 * kernel computes dQ (not the deterministic mode); POLYATTN_CUDA_HOPPER_BWD_PIPE=0 (read
 * at each call) the loop of decision 100, which waits for dQ at each tile's end. */
int pa_hbwd_pipe(const pa_bwd_ws &ws) {
  if (!ws.dq_acc) return 0;
  const char *env = getenv("POLYATTN_CUDA_HOPPER_BWD_PIPE");
  return env && !strcmp(env, "0") ? 0 : (int)PA_HBWD_PIPE2;
}

/* The default variant of the bucket with the loop form's flag: whole key blocks, or the
 * whole blocks and the stream-K workers. */
template <typename T, int D, int FORM>
cudaError_t pa_hopper_bwd_launch_main(const pa_problem *p, const pa_bwd_ws &ws,
                                      const pa_hbwd_sk &sk, const pa_hbwd_sched &sc,
                                      cudaStream_t stream) {
  enum { MAIN = (D == 128 ? PA_HBWD_NSPLIT : PA_HBWD_Q128) | FORM };
  if (sk.workers) {
    cudaError_t e = cudaMemsetAsync(sk.ticket, 0, (size_t)sk.workers * sizeof(unsigned), stream);
    if (e == cudaSuccess && sk.dp > 0) /* the whole blocks first */
      e = pa_hopper_bwd_launch_v<T, D, MAIN>(p, ws, false, sc.epi, sc.pair, stream, sk);
    if (e != cudaSuccess) return e;
    return pa_hopper_bwd_launch_v<T, D, MAIN | PA_HBWD_SK>(p, ws, false, sc.epi, sc.pair, stream,
                                                           sk);
  }
  return pa_hopper_bwd_launch_v<T, D, MAIN>(p, ws, sc.lpt, sc.epi, sc.pair, stream);
}

template <typename T, int D>
cudaError_t pa_hopper_bwd_launch(const pa_problem *p, const pa_bwd_ws &ws, const pa_hbwd_sk &sk,
                                 cudaStream_t stream) {
  const pa_hbwd_sched sc = pa_hbwd_sched_get();
  enum { MAIN = D == 128 ? PA_HBWD_NSPLIT : PA_HBWD_Q128 };
  if constexpr (PA_CUDA_TUNING_VARIANTS) {
    if (pa_hbwd_variant(D) == PA_HBWD_KSPLIT)
      return pa_hopper_bwd_launch_v<T, D, PA_HBWD_KSPLIT>(p, ws, sc.lpt, sc.epi, sc.pair, stream);
    if (pa_hbwd_bulk())
      return pa_hopper_bwd_launch_v<T, D, MAIN | PA_HBWD_BULK>(p, ws, sc.lpt, sc.epi, sc.pair,
                                                               stream);
    if (pa_hbwd_stats())
      return pa_hopper_bwd_launch_v<T, D, MAIN | PA_HBWD_STATS>(p, ws, sc.lpt, sc.epi, sc.pair,
                                                                stream);
  }
  if (pa_hbwd_pipe(ws)) return pa_hopper_bwd_launch_main<T, D, PA_HBWD_PIPE2>(p, ws, sk, sc, stream);
  return pa_hopper_bwd_launch_main<T, D, 0>(p, ws, sk, sc, stream);
}

const char *pa_hopper_bwd_misaligned(const pa_problem *p) {
  const pa_named_view views[] = {{&p->q, "q"}, {&p->k, "k"}, {&p->v, "v"}, {&p->dout, "dout"}};
  return pa_first_misaligned_row(views);
}

} /* namespace */

int pa_cuda_hopper_backward_supports(const pa_problem *p, const pa_cuda_device *dev,
                                     pa_error *err) {
#define PA_NO(...)                                             \
  do {                                                         \
    if (err) snprintf(err->msg, sizeof err->msg, __VA_ARGS__); \
    return 0;                                                  \
  } while (0)
  if (!PA_CUDA_HOPPER_BUILT)
    PA_NO("the Hopper backward is not in this build (POLYATTN_CUDA_ARCHS has no 90, so no "
          "sm_90a code was compiled)");
  if (!pa_bwd_tiled_supports(p, dev, "Hopper", err)) return 0;
  if (p->dtype != POLYATTN_DTYPE_F16 && p->dtype != POLYATTN_DTYPE_BF16)
    PA_NO("the Hopper backward takes fp16 or bf16 inputs only");
  if (dev->cc_major != 9 || dev->cc_minor != 0)
    PA_NO("the Hopper backward runs on compute capability 9.0 only (sm_90a code; device is "
          "%d.%d)", dev->cc_major, dev->cc_minor);
  const int bucket = pa_bwd_bucket(p);
  if (!bucket)
    PA_NO("the Hopper backward takes head dims up to 128 (head_dim %d, head_dim_v %d)",
          (int)p->head_dim, (int)p->head_dim_v);
  if (p->seqlen_q > INT_MAX / 2)
    PA_NO("the Hopper backward takes at most 2^30 - 1 query rows per sequence (seqlen_q %lld)",
          (long long)p->seqlen_q);
  if ((p->seqlen_k + 127) / 128 > 65535 || (int64_t)p->heads_kv * p->batch > INT_MAX)
    PA_NO("the Hopper backward's grid takes at most 65535 blocks of 128 keys and 2^31 - 1 "
          "(kv head, batch entry) pairs");
  if (const char *name = pa_hopper_bwd_misaligned(p))
    PA_NO("the Hopper backward needs 16-byte aligned rows: %s's address and strides must be "
          "multiples of 16 bytes / 8 elements", name);
  /* the largest of the bucket's compiled kernels: bulk dQ's staging where the tuning
   * forms are compiled, else the two dS buffers of PA_HBWD_PIPE2 */
#if PA_CUDA_TUNING_VARIANTS
  const int smem = bucket == 64 ? pa_hopper_bwd_cfg<64, 128, true>::smem_bytes
                                : pa_hopper_bwd_cfg<128, 64, true>::smem_bytes;
#else
  const int smem = bucket == 64 ? pa_hopper_bwd_cfg<64, 128, false, true>::smem_bytes
                                : pa_hopper_bwd_cfg<128, 64, false, true>::smem_bytes;
#endif
  if ((size_t)smem > dev->smem_optin)
    PA_NO("the Hopper backward needs %d bytes of shared memory; the device allows %zu", smem,
          dev->smem_optin);
#undef PA_NO
  return 1;
}

size_t pa_cuda_hopper_backward_workspace(const pa_problem *p, const pa_cuda_device *dev) {
  const size_t sk = pa_hbwd_sk_bytes(p, pa_hbwd_sk_plan(p, dev));
  return sk ? pa_hbwd_sk_offset(p, dev) + sk : pa_bwd_workspace(p, dev);
}

cudaError_t pa_cuda_hopper_backward(const pa_problem *p, const pa_cuda_device *dev,
                                    void *workspace, cudaStream_t stream) {
  pa_hbwd_sk sk = pa_hbwd_sk_plan(p, dev);
  if (sk.workers) {
    if (!workspace) return cudaErrorInvalidValue;
    sk.part = (float *)((unsigned char *)workspace + pa_hbwd_sk_offset(p, dev));
    sk.ticket = (unsigned *)(sk.part + (size_t)2 * sk.workers * 256 * pa_bwd_bucket(p));
  }
  return pa_bwd_run(p, dev, workspace, stream, [&](const pa_bwd_ws &ws) {
    const bool bf16 = p->dtype == POLYATTN_DTYPE_BF16;
    return pa_bwd_bucket(p) == 64
               ? (bf16 ? pa_hopper_bwd_launch<__nv_bfloat16, 64>(p, ws, sk, stream)
                       : pa_hopper_bwd_launch<__half, 64>(p, ws, sk, stream))
               : (bf16 ? pa_hopper_bwd_launch<__nv_bfloat16, 128>(p, ws, sk, stream)
                       : pa_hopper_bwd_launch<__half, 128>(p, ws, sk, stream));
  });
}
