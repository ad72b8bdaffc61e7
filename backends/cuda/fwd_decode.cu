/* The split-KV decode forward (flash-decoding): few query rows, long K/V.
 *
 * Decode is bound by memory bandwidth: every K/V byte is read once and used for a
 * handful of query rows. So one block serves one (batch entry, kv head, split of
 * the keys) and ALL the query rows that read that kv head: the Hq/Hkv heads of the
 * GQA group times the Sq rows (r = i * G + g, at most kMaxRows). K/V tiles stream
 * into shared memory with 16-byte cp.async copies, kStages tiles in flight, and the
 * math is fp32 on CUDA cores (the tensor cores have nothing to gain at <= 64 rows).
 *
 * Per key tile the block takes the online-softmax steps of common/softmax.h:
 *   scores   S[r][j] = pa_score(q_r . k_j) or -inf (pa_mask_keep, block mask)
 *   softmax  one warp per row: update max, p = exp(s - m), rescale, accumulate
 *   P.V      acc[r][dv] = alpha_r * acc[r][dv] + sum_j p[r][j] * v_j[dv]
 * Each split writes its partial (O unnormalised fp32, m, l) per query row into the
 * workspace; decode_merge_kernel then combines the splits of a row in a fixed order
 * with pa_softmax_merge and writes O in the input dtype and LSE (the tensor-core
 * kernel merges in its own last block instead: decode_mma.cuh). Split boundaries
 * depend only on the problem and the device: results are bit-identical run to run.
 *
 * Only the head-dim bucket (64, 128, 256) is a template parameter; dtype, head dims,
 * rows, masks, varlen, seqused_k, ALiBi, softcap are run-time values. Rows of K/V
 * that are not 16-byte aligned take a plain-load path into the same tiles. */
#include "kernels.h" /* first: the GPU runtime (gpu_runtime.h) */
#if PA_HAS_MMA_SYNC
#  include <cuda_bf16.h>
#  include <cuda_fp16.h>
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <string.h>

#include <atomic>

#if PA_HAS_MMA_SYNC
#  include <cooperative_groups.h> /* the cluster merge (decode_mma.cuh, sm_90 code only) */

#  include "ampere_mma.cuh"
#  include "ampere_softmax.cuh"
#endif
#include "convert.h"
#include "warp_reduce.cuh"
#include "mask.h"
#include "softmax.h"

namespace {

/* ------------------------------------------------------------------ tuning */
/* Untuned first choices (bench/gpu/decode.sh measures them; bench/RESULTS.md
 * records the numbers):
 * - 256 threads, at most 128 registers so that two blocks share an SM;
 * - a K tile (and a V tile) of 16 KiB before padding, kStages tiles in flight per
 *   block: 2 blocks x 2 tiles x 32 KiB loading per SM is several times the
 *   bandwidth-latency product of an H200 SM (~4.2 TB/s x 1 us / 132 = 32 KiB);
 * - a split keeps >= kMinSplitKeys keys, so the merge stays a small fraction;
 * - kSplitOverheadTiles: what starting and finishing a block costs, in tiles, in
 *   the cost model that picks the split count (decode_plan). */
constexpr int kWarpSize = 32;
constexpr int kThreads = 256;
constexpr int kWarps = kThreads / kWarpSize;
constexpr int kMinBlocksPerSm = 2;
constexpr int kTileBytes = 16384;
constexpr int kStages = 3;
constexpr int kRowPad = 16;      /* bytes after each smem row: rows j, j+1 shift bank group */
constexpr int kMaxRows = 64;     /* query rows per block: (Hq / Hkv) * Sq */
constexpr int kMaxSq = 16;       /* decode-shaped: at most this many query rows per head */
constexpr int kRowChunk = 4;     /* rows whose scores a thread computes per K pass */
constexpr int kMaxRowsPerThread = 4; /* P.V accumulator rows per thread */
constexpr int kMinSplitKeys = 256;
constexpr int kMaxSplits = 256;
constexpr int kSplitOverheadTiles = 2;
constexpr int kMergeThreads = 128;
constexpr unsigned kFullMask = 0xffffffffu;
constexpr size_t kDefaultSmem = 48 * 1024;

/* The key groups' accumulators at the end, at most [kThreads / (bucket / 8) groups]
 * x [kMaxRowsPerThread rows] x [bucket] fp32 for any bucket, reuse the K/V stages. */
static_assert((size_t)kThreads * 8 * kMaxRowsPerThread * 4 <= (size_t)kStages * 2 * kTileBytes,
              "the final reduction fits in the K/V stages");

/* Rows a block can serve with head-dim bucket `db`: the P.V threads of one 8-column
 * chunk (kThreads / (db / 8)) hold kMaxRowsPerThread rows each. 64 for db = 128. */
__host__ __device__ constexpr int rows_limit(int db) {
  return kThreads / (db / 8) * kMaxRowsPerThread < kMaxRows ? kThreads / (db / 8) * kMaxRowsPerThread
                                                            : kMaxRows;
}
static_assert(sizeof(pa_problem) <= 4096, "the problem is passed as a kernel parameter");

/* How the tensor-core kernel's split partials become O (decode_mma.cuh explains;
 * POLYATTN_CUDA_DECODE_MERGE=kernel|pdl|cluster|ticket). The fp32 kernel always uses
 * the merge kernel. */
enum decode_merge { kMergeKernel = 0, kMergePdl = 1, kMergeCluster = 2, kMergeTicket = 3 };
constexpr int kMergeDefault = kMergeTicket; /* sixth session, decision 81 (bench/RESULTS.md) */
constexpr int kEarlyDefault = 1; /* K/V before Q: Sk 4k 43.0 -> 41.7 us (graph replay), decision 72 */

/* PA_DECODE_TL=1 (bench/gpu/decode_timeline.cu only): the tensor-core kernel writes
 * global-timer stamps of each block's phases to decode_plan::tl (decode_mma.cuh). */
#ifndef PA_DECODE_TL
#  define PA_DECODE_TL 0
#endif

/* Everything both kernels need besides the problem; decode_plan fills it. */
struct decode_plan {
  int bucket;          /* head-dim bucket >= max(D, Dv): 64, 128 or 256 */
  int esize;           /* bytes per element */
  int tile_keys;       /* keys per tile: kTileBytes / (bucket * esize) */
  int row_bytes;       /* smem pitch of a K/V row */
  int splits, split_keys;
  int max_rows;        /* (Hq / Hkv) * seqlen_q */
  int64_t rows_total;  /* query rows in the workspace: total_q (varlen) or B * Sq */
  size_t smem, workspace;
  int aligned;         /* K and V rows allow 16-byte copies */
  int mma;             /* the tensor-core split kernel (decode_mma.cuh), else fp32 */
  int warps;           /* mma: warps per block, each its own split */
  int merge;           /* decode_merge; kMergeKernel unless the mma kernel serves */
  int early;           /* mma: first K/V tiles issued before Q is staged */
  int variant;         /* mma: decode_variant bits (copy form, tile keys, ...) */
  float *part_o;       /* [splits][rows_total][Hq][Dv] */
  float *part_m, *part_l; /* [splits][rows_total][Hq] */
  unsigned long long *tickets; /* kMergeTicket: [batch][heads_kv] arrival words, 8-byte aligned */
#if PA_DECODE_TL
  unsigned long long *tl; /* [blocks][kDecodeTlSlots] stamps, or null */
#endif
};

int bucket_of(int d) { return d <= 64 ? 64 : d <= 128 ? 128 : 256; }

#if PA_HAS_MMA_SYNC
#  include "decode_mma.cuh"
#else
constexpr int kMmaRows = 16; /* no tensor-core split kernel in this build (HIP) */
#endif

/* Shared memory of the split kernel, by region (bytes). */
__host__ __device__ inline size_t stage_bytes(const decode_plan &L) { return (size_t)kStages * 2 * L.tile_keys * L.row_bytes; }
size_t smem_bytes(const decode_plan &L) {
  return stage_bytes(L) + (size_t)L.max_rows * L.bucket * 4 /* q */ +
         (size_t)L.max_rows * L.tile_keys * 4 /* scores */ + 4 * kMaxRows * 4 /* per row */;
}

int rows_aligned(const pa_view &v, int dim, int esize) {
  return (uintptr_t)v.ptr % 16 == 0 && (v.stride_b * esize) % 16 == 0 &&
         (v.stride_s * esize) % 16 == 0 && (v.stride_h * esize) % 16 == 0 && dim % 8 == 0;
}

/* Whether the tensor-core split kernel can serve the problem with plan L (bucket,
 * esize and alignment filled): 16-bit storage, 16-byte rows (Q too), at most 16
 * query rows per kv head, head dims up to 128 (the O accumulator lives in
 * registers), sm_80+, and one warp's ring fits in shared memory. */
int mma_possible(const pa_problem *p, const pa_cuda_device *dev, const decode_plan &L) {
#if PA_HAS_MMA_SYNC
  return (p->dtype == POLYATTN_DTYPE_F16 || p->dtype == POLYATTN_DTYPE_BF16) && L.aligned &&
         rows_aligned(p->q, p->head_dim, L.esize) && L.max_rows <= kMmaRows && L.bucket <= 128 &&
         dev->cc_major >= 8 &&
         kMmaSmemAlign + mma_q_bytes(L.bucket) + mma_ring_bytes(L.bucket) <= dev->smem_optin;
#else
  (void)p, (void)dev, (void)L;
  return 0;
#endif
}

/* Whether the tensor-core split kernel running on this device was compiled for
 * sm_90 (not JIT-compiled from older PTX): only then does it hold the cluster and
 * programmatic-launch code. Asked once per process (the module has one build). */
int decode_arch90(const pa_cuda_device *dev) {
#if PA_HAS_MMA_SYNC
  if (dev->cc_major < 9) return 0;
  static std::atomic<int> known(-1);
  int v = known.load(std::memory_order_acquire);
  if (v < 0) {
    cudaFuncAttributes a;
    v = cudaFuncGetAttributes(&a, decode_mma_kernel<__nv_bfloat16, 128, kCopyLean>) == cudaSuccess && /* the default */
        a.ptxVersion >= 90;
    known.store(v, std::memory_order_release);
  }
  return v;
#else
  (void)dev;
  return 0;
#endif
}

/* POLYATTN_CUDA_DECODE_MERGE=kernel|pdl|cluster|ticket picks how the tensor-core
 * kernel's partials are merged (decode_mma.cuh); pdl and cluster need sm_90 code
 * (else the merge kernel). Plan, workspace and forward read it alike. */
int merge_mode(const pa_cuda_device *dev) {
  const char *env = getenv("POLYATTN_CUDA_DECODE_MERGE");
  int want = kMergeDefault;
  if (env && !strcmp(env, "kernel")) want = kMergeKernel;
  else if (env && !strcmp(env, "pdl")) want = kMergePdl;
  else if (env && !strcmp(env, "cluster")) want = kMergeCluster;
  else if (env && !strcmp(env, "ticket")) want = kMergeTicket;
  return (want == kMergePdl || want == kMergeCluster) && !decode_arch90(dev) ? (int)kMergeKernel
                                                                            : want;
}

/* The partials start at the first 16-byte boundary of the workspace (the plan adds the
 * slack): the tensor-core kernel writes O's partials as float2 and its last block reads
 * them as float4. */
constexpr size_t kPartsAlign = 16;
char *parts_base(void *workspace) {
  return reinterpret_cast<char *>(((uintptr_t)workspace + kPartsAlign - 1) / kPartsAlign * kPartsAlign);
}
/* Bytes of the partials (O, m, l of every split and row); the ticket merge's arrival
 * words follow them, 8-byte aligned (bind_workspace). */
size_t parts_bytes(const pa_problem *p, const decode_plan &L) {
  return (size_t)L.splits * (size_t)L.rows_total * (size_t)p->heads_q *
         ((size_t)p->head_dim_v + 2) * sizeof(float);
}
/* The tensor-core kernel's variant (decode_mma.cuh, decode_variant bits).
 * POLYATTN_CUDA_DECODE_COPY=lean|async picks the K/V copies (lean: Sk 4k 42.7 -> 41.7
 * us under graph replay, decision 84); POLYATTN_CUDA_DECODE_VARIANT=a+b+... (token
 * k16, decision 90; "base" for none) sets the other bits. Only the instances of
 * kVariantsBuilt exist (launch_mma_dtype); any other combination runs the default.
 * The two tuning variants are compiled only with the CMake option
 * POLYATTN_CUDA_TUNING_VARIANTS (decision 114). */
#if PA_HAS_MMA_SYNC
constexpr int kVariantDefault = kCopyLean;
#  if PA_CUDA_TUNING_VARIANTS
constexpr int kVariantsBuilt[] = {kCopyAsync, kCopyLean, kCopyLean | kVarK16};
#  else
constexpr int kVariantsBuilt[] = {kCopyLean};
#  endif
#endif
int variant_mode() {
#if PA_HAS_MMA_SYNC
  int v = kVariantDefault;
  if (const char *env = getenv("POLYATTN_CUDA_DECODE_VARIANT")) {
    v &= kCopyLean;
    for (const char *at = env; *at;) {
      const size_t n = strcspn(at, "+");
      if (n == 3 && !strncmp(at, "k16", n)) v |= kVarK16;
      at += n + (at[n] == '+');
    }
  }
  const char *copy = getenv("POLYATTN_CUDA_DECODE_COPY");
  if (copy && !strcmp(copy, "async")) v &= ~kCopyLean;
  else if (copy && !strcmp(copy, "lean")) v |= kCopyLean;
  for (int b : kVariantsBuilt)
    if (b == v) return v;
  return kVariantDefault;
#else
  return 0;
#endif
}
/* Whether each call zeroes the ticket words first (POLYATTN_CUDA_DECODE_TICKET_ZERO=1:
 * a memset per call, for measuring what the tagged words save; decode_mma.cuh explains
 * the tag). */
int ticket_zero() {
  const char *env = getenv("POLYATTN_CUDA_DECODE_TICKET_ZERO");
  return env && *env && strcmp(env, "0") != 0;
}

/* The split rule. Tasks are (batch, kv head) pairs; a block serves `unit` splits (1
 * for the fp32 kernel, L.warps for the tensor-core one) and the device holds `slots`
 * blocks at once (by registers and shared memory). A split count s costs
 * ceil(tasks * s / unit / slots) waves of ceil(tiles / s) + overhead tiles; the
 * cheapest s wins (the smaller on ties), with every split >= kMinSplitKeys.
 * pa_plan_tiles() is not used: its rule counts one task per query head and stops
 * at one block per SM, which suits compute-bound tiles, not a memory-bound block
 * serving a whole GQA group that needs several resident blocks per SM. */
decode_plan make_plan(const pa_problem *p, const pa_cuda_device *dev) {
  decode_plan L = {};
  const int dmax = p->head_dim > p->head_dim_v ? p->head_dim : p->head_dim_v;
  L.bucket = bucket_of(dmax);
  L.esize = p->dtype == POLYATTN_DTYPE_F32 ? 4 : 2;
  L.max_rows = (p->heads_q / (p->heads_kv > 0 ? p->heads_kv : 1)) * p->seqlen_q;
  L.rows_total = p->varlen ? p->total_q : (int64_t)p->batch * p->seqlen_q;
  L.aligned = rows_aligned(p->k, p->head_dim, L.esize) && rows_aligned(p->v, p->head_dim_v, L.esize);

  /* POLYATTN_CUDA_DECODE_PATH=scalar keeps the fp32 kernel (tests and tuning). */
  const char *path = getenv("POLYATTN_CUDA_DECODE_PATH");
  L.mma = !(path && !strcmp(path, "scalar")) && mma_possible(p, dev, L);
  L.merge = L.mma ? merge_mode(dev) : kMergeKernel;
  const char *early = getenv("POLYATTN_CUDA_DECODE_EARLY");
  L.early = early && *early ? strcmp(early, "0") != 0 : kEarlyDefault;
  L.variant = L.mma ? variant_mode() : 0;
  int unit = 1, per_sm;
#if PA_HAS_MMA_SYNC
  if (L.mma) {
    L.tile_keys = mma_keys(L.variant);
    L.row_bytes = mma_kv_pitch(L.bucket);
    const size_t ring = mma_ring_bytes(L.bucket, L.tile_keys),
                 q = kMmaSmemAlign + mma_q_bytes(L.bucket); /* + the kernel's alignment pad */
    const int most_warps = mma_warps_max(L.variant);
    L.warps = (int)((dev->smem_optin - q) / ring);
    L.warps = L.warps > most_warps ? most_warps : L.warps;
    /* the cluster merge's shared arrays hold kMmaWarpsMax warps' partials per block */
    if (L.merge == kMergeCluster && most_warps > kMmaWarpsMax) L.merge = kMergeKernel;
    /* Tuning aid: POLYATTN_CUDA_DECODE_WARPS=n takes n < L.warps warps (splits) per
     * block, so that more, smaller blocks share an SM. Plan and forward read it alike. */
    if (const char *env = getenv("POLYATTN_CUDA_DECODE_WARPS")) {
      const long n = strtol(env, nullptr, 10);
      if (n >= 1 && n < L.warps) L.warps = (int)n;
    }
    L.smem = q + (size_t)L.warps * ring;
    unit = L.warps;
    per_sm = (int)((dev->smem_optin + 1024) / (L.smem + 1024));
    per_sm = per_sm < 1 ? 1 : per_sm > 4 ? 4 : per_sm;
  } else
#endif
  {
    L.tile_keys = kTileBytes / (L.bucket * L.esize);
    L.row_bytes = L.bucket * L.esize + kRowPad;
    L.warps = 0;
    L.smem = smem_bytes(L);
    per_sm = (int)((dev->smem_optin + 1024) / (L.smem + 1024));
    per_sm = per_sm < 1 ? 1 : per_sm > kMinBlocksPerSm ? kMinBlocksPerSm : per_sm;
  }

  const int64_t sk = p->seqlen_k > 0 ? p->seqlen_k : 1;
  const int64_t tasks = (int64_t)p->batch * p->heads_kv > 0 ? (int64_t)p->batch * p->heads_kv : 1;
  const int64_t slots = (int64_t)(dev->sm_count > 0 ? dev->sm_count : 1) * per_sm;
  int64_t most = sk / kMinSplitKeys;
  most = most < unit ? unit : most > kMaxSplits ? kMaxSplits : most;
  most = most / unit * unit;
  int64_t best_s = unit, best_cost = -1;
  for (int64_t s = unit; s <= most; s += unit) {
    const int64_t keys = (sk + s - 1) / s;
    const int64_t tiles = (keys + L.tile_keys - 1) / L.tile_keys;
    const int64_t cost = ((tasks * (s / unit) + slots - 1) / slots) * (tiles + kSplitOverheadTiles);
    if (best_cost < 0 || cost < best_cost) best_cost = cost, best_s = s;
  }
  /* Tuning aid (bench/gpu/decode.sh tune): POLYATTN_CUDA_DECODE_SPLITS=n fixes the
   * count, rounded up to whole blocks and clamped to [unit, most]. Plan and forward
   * read it alike. */
  if (const char *env = getenv("POLYATTN_CUDA_DECODE_SPLITS")) {
    const long n = strtol(env, nullptr, 10);
    if (n > 0) best_s = (n + unit - 1) / unit * unit < most ? (n + unit - 1) / unit * unit : most;
  }
  /* Whole tiles per split; the last split takes the rest, and splits past the keys
   * (to fill the last block) write empty partials. */
  const int64_t keys = ((sk + best_s - 1) / best_s + L.tile_keys - 1) / L.tile_keys * L.tile_keys;
  L.split_keys = (int)keys;
  L.splits = (int)(((sk + keys - 1) / keys + unit - 1) / unit * unit);
#if PA_HAS_MMA_SYNC
  /* One cluster per (batch entry, kv head) holds at most kClusterMaxBlocks blocks: a
   * problem whose best split count needs more (few kv heads and batch entries, long
   * keys) keeps them and merges with the merge kernel instead. */
  if (L.merge == kMergeCluster && L.splits / unit > kClusterMaxBlocks) L.merge = kMergeKernel;
#endif
  L.workspace = L.merge == kMergeCluster ? 0 /* partials stay in shared memory */
                : kPartsAlign - 1 + parts_bytes(p, L);
  if (L.merge == kMergeTicket) /* the arrival words, aligned to 8 bytes in any workspace */
    L.workspace += 8 + (size_t)p->batch * (size_t)p->heads_kv * sizeof(unsigned long long);
  return L;
}

/* The plan's pointers into the caller's workspace: the partials from its first 16-byte
 * boundary, the ticket merge's arrival words after them (8-byte aligned). */
void bind_workspace(const pa_problem *p, decode_plan *L, void *workspace) {
  if (!L->workspace) return;
  const size_t n_part = (size_t)L->splits * (size_t)L->rows_total * (size_t)p->heads_q;
  L->part_o = reinterpret_cast<float *>(parts_base(workspace));
  L->part_m = L->part_o + n_part * (size_t)p->head_dim_v;
  L->part_l = L->part_m + n_part;
  if (L->merge == kMergeTicket) {
    const uintptr_t at = (uintptr_t)L->part_o + parts_bytes(p, *L);
    L->tickets = reinterpret_cast<unsigned long long *>((at + 7) / 8 * 8);
  }
}

/* ------------------------------------------------------------ device helpers */

/* 16-byte global -> shared copy: cp.async on sm_80+, a plain copy before. */
__device__ __forceinline__ void copy16_async(void *dst, const void *src) {
#if __CUDA_ARCH__ >= 800
  const uint32_t d = (uint32_t)__cvta_generic_to_shared(dst);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(d), "l"(src) : "memory");
#else
  *static_cast<uint4 *>(dst) = __ldg(static_cast<const uint4 *>(src));
#endif
}
__device__ __forceinline__ void copy_commit() {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}
/* Wait until at most N of this thread's latest commit groups are pending. */
template <int N>
__device__ __forceinline__ void copy_wait() {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}

/* Eight consecutive elements of a smem row (native dtype) as fp32. */
__device__ __forceinline__ void load8(const char *src, polyattn_dtype dtype, float (&f)[8]) {
  if (dtype == POLYATTN_DTYPE_F32) {
    const float4 a = *reinterpret_cast<const float4 *>(src);
    const float4 b = *reinterpret_cast<const float4 *>(src + 16);
    f[0] = a.x, f[1] = a.y, f[2] = a.z, f[3] = a.w, f[4] = b.x, f[5] = b.y, f[6] = b.z, f[7] = b.w;
    return;
  }
  const uint4 u = *reinterpret_cast<const uint4 *>(src);
  const uint32_t w[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
  for (int t = 0; t < 4; ++t) {
    if (dtype == POLYATTN_DTYPE_BF16) {
      f[2 * t] = __uint_as_float(w[t] << 16);
      f[2 * t + 1] = __uint_as_float(w[t] & 0xffff0000u);
    } else {
      const float2 x = __half22float2(*reinterpret_cast<const __half2 *>(&w[t]));
      f[2 * t] = x.x, f[2 * t + 1] = x.y;
    }
  }
}


/* What a block knows about its (batch entry, kv head, split). */
struct split_ctx {
  int b, hkv, G, R;     /* G query heads per kv head; R = G * len_q rows, r = i * G + g */
  pa_seq seq;
  pa_mask mask;
  int k_begin;          /* first key of tile 0 */
  int k_end;            /* keys [k_begin, k_end) may be kept by some row */
  int tiles;
};

/* Copy `rows` K (or V) rows of `dim` elements starting at key `k0` into a tile. */
__device__ __forceinline__ void load_rows(char *tile, const pa_view &v, const split_ctx &c,
                                          int64_t k0, int rows, int dim, const decode_plan &L,
                                          int tid) {
  const int esize = L.esize;
  const char *base = static_cast<const char *>(v.ptr) +
                     pa_view_row(&v, c.b, k0, c.seq.k_start, c.hkv) * esize;
  const int64_t pitch = v.stride_s * esize;
  if (L.aligned) {
    const int cpr = dim * esize / 16; /* 16-byte chunks per row */
    for (int idx = tid; idx < rows * cpr; idx += kThreads) {
      const int j = idx / cpr, ch = idx - j * cpr;
      copy16_async(tile + j * L.row_bytes + ch * 16, base + j * pitch + ch * 16);
    }
  } else {
    /* Plain loads; columns [dim, dim rounded up to 8) are zeroed (whole chunks are read). */
    const int dpad = (dim + 7) / 8 * 8;
    for (int idx = tid; idx < rows * dpad; idx += kThreads) {
      const int j = idx / dpad, d = idx - j * dpad;
      char *dst = tile + j * L.row_bytes + d * esize;
      if (esize == 4)
        *reinterpret_cast<uint32_t *>(dst) =
            d < dim ? *reinterpret_cast<const uint32_t *>(base + j * pitch + d * 4) : 0u;
      else
        *reinterpret_cast<uint16_t *>(dst) =
            d < dim ? *reinterpret_cast<const uint16_t *>(base + j * pitch + d * 2) : (uint16_t)0;
    }
  }
}

/* Block masks: the first tile >= n that some (row, key) pair of the block may keep,
 * or c.tiles. Called by all threads (uniform result). */
__device__ int next_kept_tile(const pa_problem &p, const split_ctx &c, const decode_plan &L, int n,
                              int tid) {
  if (!p.block_mask.buf) return n;
  for (; n < c.tiles; ++n) {
    const int64_t k0 = c.k_begin + (int64_t)n * L.tile_keys;
    const int64_t k1 = k0 + L.tile_keys < c.k_end ? k0 + L.tile_keys : c.k_end;
    const int kb0 = (int)(k0 / p.block_k), nkb = (int)((k1 - 1) / p.block_k) - kb0 + 1;
    const int nqb = (c.seq.len_q - 1) / p.block_q + 1;
    int any = 0;
    for (int x = tid; x < c.G * nqb * nkb; x += kThreads) {
      const int g = x / (nqb * nkb), qb = x / nkb % nqb, kb = kb0 + x % nkb;
      any |= pa_block_mask_keep(&p.block_mask, c.b, c.hkv * c.G + g, qb, kb);
    }
    if (__syncthreads_or(any)) return n;
  }
  return n;
}

/* ------------------------------------------------------------ split kernel */

template <int DB>
__global__ void __launch_bounds__(kThreads, kMinBlocksPerSm)
    decode_split_kernel(const __grid_constant__ pa_problem p, const __grid_constant__ decode_plan L) {
  constexpr int kChunks = DB / 8; /* 8-element chunks of a padded row */
  extern __shared__ __align__(16) char smem[];
  const int tid = threadIdx.x, lane = tid % kWarpSize, warp = tid / kWarpSize;
  const polyattn_dtype dtype = p.dtype;
  const int D = p.head_dim, Dv = p.head_dim_v, tk = L.tile_keys;
  const int split = blockIdx.x;

  split_ctx c;
  c.b = blockIdx.z;
  c.hkv = blockIdx.y;
  c.G = p.heads_q / p.heads_kv;
  c.seq = pa_problem_seq(&p, c.b);
  if (c.seq.len_q <= 0) return; /* no row to write */
  c.R = c.G * c.seq.len_q;
  c.mask.len_q = c.seq.len_q;
  c.mask.len_k = c.seq.len_k;
  c.mask.window_left = p.window_left;
  c.mask.window_right = p.window_right;
  {
    int64_t lo, hi;
    pa_mask_rows_range(&c.mask, 0, c.seq.len_q, &lo, &hi);
    const int64_t s0 = (int64_t)split * L.split_keys, s1 = s0 + L.split_keys;
    c.k_begin = (int)(lo > s0 ? lo : s0);
    c.k_end = (int)(hi < s1 ? hi : s1); /* hi <= len_k */
    c.tiles = c.k_end > c.k_begin ? (int)((c.k_end - c.k_begin + tk - 1) / tk) : 0;
  }
  const int R = c.R;

  /* Shared memory: K/V stages (reused by the final reduction), Q, scores, rows. */
  char *stages = smem;
  float *q_s = reinterpret_cast<float *>(smem + stage_bytes(L)); /* [R][DB] */
  float *s_s = q_s + (size_t)L.max_rows * DB;                   /* [R][tk] scores, then p */
  float *m_s = s_s + (size_t)L.max_rows * tk;                   /* [kMaxRows] running max */
  float *l_s = m_s + kMaxRows, *alpha_s = l_s + kMaxRows, *slope_s = alpha_s + kMaxRows;
  auto k_tile = [&](int slot) { return stages + (size_t)(2 * slot) * tk * L.row_bytes; };
  auto v_tile = [&](int slot) { return stages + (size_t)(2 * slot + 1) * tk * L.row_bytes; };

  const int dq = (D + 7) / 8 * 8; /* Q columns staged, zero beyond D */
  for (int idx = tid; idx < R * dq; idx += kThreads) {
    const int r = idx / dq, d = idx - r * dq, i = r / c.G, h = c.hkv * c.G + r % c.G;
    q_s[r * DB + d] =
        d < D ? pa_load_f32(p.q.ptr, pa_view_row(&p.q, c.b, i, c.seq.q_start, h) + d, dtype) : 0.0f;
  }
  for (int r = tid; r < R; r += kThreads) {
    const int h = c.hkv * c.G + r % c.G;
    m_s[r] = -INFINITY;
    l_s[r] = 0.0f;
    slope_s[r] = p.alibi.buf ? static_cast<const float *>(
                                   p.alibi.ptr)[(int64_t)c.b * p.alibi.stride_b +
                                                (int64_t)h * p.alibi.stride_h]
                             : 0.0f;
  }

  /* P.V mapping: thread = (8-column chunk cv, row group rg, key group kg). */
  const int ngroups = kThreads / kChunks;
  int nrow_g = 1;
  while (nrow_g < ngroups && (R + nrow_g - 1) / nrow_g > kMaxRowsPerThread) nrow_g *= 2;
  const int nkey_g = ngroups / nrow_g;
  const int cv = tid % kChunks, rg = tid / kChunks % nrow_g, kg = tid / kChunks / nrow_g;
  const int ncv = (Dv + 7) / 8;
  float acc[kMaxRowsPerThread][8];
#pragma unroll
  for (int u = 0; u < kMaxRowsPerThread; ++u)
#pragma unroll
    for (int e = 0; e < 8; ++e) acc[u][e] = 0.0f;

  /* Scores mapping: thread = (key j of the tile, slot among tpk threads per key);
   * slot s handles chunks s, s + tpk, ... (interleaved: distinct q banks). */
  const int tpk = kThreads / tk, kj = tid / tpk, slot = tid % tpk;
  const int nck = (D + 7) / 8, cpt = kChunks / tpk;

  /* The pipeline: tile n is in slot (its sequence number) % kStages. */
  int load_n = next_kept_tile(p, c, L, 0, tid), comp_n = load_n;
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (load_n < c.tiles) {
      const int64_t k0 = c.k_begin + (int64_t)load_n * tk;
      const int nk = (int)(c.k_end - k0 < tk ? c.k_end - k0 : tk);
      load_rows(k_tile(s), p.k, c, k0, nk, D, L, tid);
      load_rows(v_tile(s), p.v, c, k0, nk, Dv, L, tid);
      load_n = next_kept_tile(p, c, L, load_n + 1, tid);
    }
    copy_commit();
  }

  for (int it = 0; comp_n < c.tiles; ++it) {
    if (load_n < c.tiles) { /* into the slot computed last iteration */
      const int s = (it + kStages - 1) % kStages;
      const int64_t k0 = c.k_begin + (int64_t)load_n * tk;
      const int nk = (int)(c.k_end - k0 < tk ? c.k_end - k0 : tk);
      load_rows(k_tile(s), p.k, c, k0, nk, D, L, tid);
      load_rows(v_tile(s), p.v, c, k0, nk, Dv, L, tid);
      load_n = next_kept_tile(p, c, L, load_n + 1, tid);
    }
    copy_commit();
    copy_wait<kStages - 1>();
    __syncthreads(); /* tile comp_n landed for every thread; Q and rows are staged */

    const int slot_c = it % kStages;
    const int64_t k0 = c.k_begin + (int64_t)comp_n * tk;
    const int nk = (int)(c.k_end - k0 < tk ? c.k_end - k0 : tk);

    /* Scores: dot products of key kj with every row, kRowChunk rows per K pass. */
    {
      const char *krow = k_tile(slot_c) + kj * L.row_bytes;
      const int64_t j = k0 + kj;
      for (int r0 = 0; r0 < R; r0 += kRowChunk) {
        float dot[kRowChunk];
#pragma unroll
        for (int u = 0; u < kRowChunk; ++u) dot[u] = 0.0f;
#pragma unroll 2
        for (int m = 0; m < cpt; ++m) {
          const int ch = slot + m * tpk;
          if (ch >= nck) break;
          float kf[8];
          load8(krow + ch * 8 * L.esize, dtype, kf);
#pragma unroll
          for (int u = 0; u < kRowChunk; ++u) {
            if (r0 + u >= R) break;
            const float4 *q4 = reinterpret_cast<const float4 *>(q_s + (r0 + u) * DB + ch * 8);
            const float4 qa = q4[0], qb = q4[1];
            float d = dot[u];
            d = fmaf(qa.x, kf[0], d), d = fmaf(qa.y, kf[1], d), d = fmaf(qa.z, kf[2], d);
            d = fmaf(qa.w, kf[3], d), d = fmaf(qb.x, kf[4], d), d = fmaf(qb.y, kf[5], d);
            d = fmaf(qb.z, kf[6], d), d = fmaf(qb.w, kf[7], d);
            dot[u] = d;
          }
        }
#pragma unroll
        for (int u = 0; u < kRowChunk; ++u)
          for (int o = tpk / 2; o > 0; o >>= 1)
            dot[u] += __shfl_xor_sync(kFullMask, dot[u], o, kWarpSize);
#pragma unroll
        for (int u = 0; u < kRowChunk; ++u) {
          const int r = r0 + u;
          if (r >= R || slot != u % tpk) continue;
          const int i = r / c.G, h = c.hkv * c.G + r % c.G;
          const bool kept = kj < nk && pa_mask_keep(&c.mask, i, j) &&
                            pa_block_mask_keep(&p.block_mask, c.b, h, i / p.block_q,
                                               (int32_t)(j / p.block_k));
          s_s[r * tk + kj] =
              kept ? pa_score(dot[u], p.scale, p.softcap, slope_s[r], &c.mask, i, j) : -INFINITY;
        }
      }
    }
    __syncthreads();

    /* Softmax steps, one warp per row: update max, p, rescale, accumulate. */
    for (int r = warp; r < R; r += kWarps) {
      float sv[4], mx = -INFINITY;
#pragma unroll
      for (int t = 0; t < 4; ++t) {
        const int jj = lane + t * kWarpSize;
        sv[t] = jj < tk ? s_s[r * tk + jj] : -INFINITY;
        mx = fmaxf(mx, sv[t]);
      }
      pa_softmax_row row;
      row.m = m_s[r];
      row.l = l_s[r];
      const float alpha = pa_softmax_update_max(&row, pa_warp_max<kWarpSize>(mx));
      const float ref = pa_softmax_ref(&row);
      float sum = 0.0f;
#pragma unroll
      for (int t = 0; t < 4; ++t) {
        const int jj = lane + t * kWarpSize;
        const float pr = sv[t] == -INFINITY ? 0.0f : expf(sv[t] - ref);
        if (jj < tk) s_s[r * tk + jj] = pr;
        sum += pr;
      }
      pa_softmax_rescale(&row, alpha);
      pa_softmax_accumulate(&row, pa_warp_sum<kWarpSize>(sum));
      __syncwarp(); /* every lane has read m_s[r], l_s[r] (racecheck: shuffles do not order smem) */
      if (lane == 0) m_s[r] = row.m, l_s[r] = row.l, alpha_s[r] = alpha;
    }
    __syncthreads();

    /* P.V: rescale by alpha, then keys kg, kg + nkey_g, ... of the tile. */
#pragma unroll
    for (int u = 0; u < kMaxRowsPerThread; ++u) {
      const int r = rg + u * nrow_g;
      if (r < R) {
        const float a = alpha_s[r];
#pragma unroll
        for (int e = 0; e < 8; ++e) acc[u][e] *= a;
      }
    }
    if (cv < ncv) {
      const char *vcol = v_tile(slot_c) + cv * 8 * L.esize;
      for (int jj = kg; jj < nk; jj += nkey_g) {
        float vf[8];
        load8(vcol + jj * L.row_bytes, dtype, vf);
#pragma unroll
        for (int u = 0; u < kMaxRowsPerThread; ++u) {
          const int r = rg + u * nrow_g;
          if (r >= R) break;
          const float pj = s_s[r * tk + jj];
#pragma unroll
          for (int e = 0; e < 8; ++e) acc[u][e] = fmaf(pj, vf[e], acc[u][e]);
        }
      }
    }
    __syncthreads(); /* the slot may be refilled, the scores rewritten */
    comp_n = next_kept_tile(p, c, L, comp_n + 1, tid);
  }

  /* Sum the key groups' accumulators in a fixed order, write the partial. */
  copy_wait<0>();
  __syncthreads();
  float *red = reinterpret_cast<float *>(stages); /* [nkey_g][R][DB] */
  if (cv < ncv) {
#pragma unroll
    for (int u = 0; u < kMaxRowsPerThread; ++u) {
      const int r = rg + u * nrow_g;
      if (r >= R) break;
      float4 *dst = reinterpret_cast<float4 *>(red + ((size_t)kg * R + r) * DB + cv * 8);
      dst[0] = make_float4(acc[u][0], acc[u][1], acc[u][2], acc[u][3]);
      dst[1] = make_float4(acc[u][4], acc[u][5], acc[u][6], acc[u][7]);
    }
  }
  __syncthreads();
  const int64_t row0 = p.varlen ? c.seq.q_start : (int64_t)c.b * p.seqlen_q;
  for (int idx = tid; idx < R * Dv; idx += kThreads) {
    const int r = idx / Dv, d = idx - r * Dv, i = r / c.G, h = c.hkv * c.G + r % c.G;
    float o = 0.0f;
    for (int g = 0; g < nkey_g; ++g) o += red[((size_t)g * R + r) * DB + d];
    L.part_o[(((int64_t)split * L.rows_total + row0 + i) * p.heads_q + h) * Dv + d] = o;
  }
  for (int r = tid; r < R; r += kThreads) {
    const int i = r / c.G, h = c.hkv * c.G + r % c.G;
    const int64_t at = ((int64_t)split * L.rows_total + row0 + i) * p.heads_q + h;
    L.part_m[at] = m_s[r];
    L.part_l[at] = l_s[r];
  }
}

/* ------------------------------------------------------------ merge kernel */

/* One block per (query row, query head, batch entry): the splits' partials merged
 * in split order by pa_softmax_merge against the rows' common maximum. */
__global__ void __launch_bounds__(kMergeThreads)
    decode_merge_kernel(const __grid_constant__ pa_problem p, const __grid_constant__ decode_plan L) {
  __shared__ float factor[kMaxSplits];
#if PA_HAS_MMA_SYNC
  if (L.merge == kMergePdl) pa_pdl_wait(); /* the split grid is complete and its writes visible */
#endif
  const int i = blockIdx.x, h = blockIdx.y, b = blockIdx.z;
  const int tid = threadIdx.x, lane = tid % kWarpSize;
  const pa_seq seq = pa_problem_seq(&p, b);
  if (i >= seq.len_q) return;
  const int64_t row = (p.varlen ? seq.q_start : (int64_t)b * p.seqlen_q) + i;
  const int64_t stride = L.rows_total * p.heads_q; /* between splits */
  const int64_t at0 = row * p.heads_q + h;

  /* Every warp computes the same maximum and sum (fixed order, no shared state). */
  float mx = -INFINITY;
  for (int s = lane; s < L.splits; s += kWarpSize) mx = fmaxf(mx, L.part_m[at0 + s * stride]);
  pa_softmax_row total;
  total.m = pa_warp_max<kWarpSize>(mx);
  total.l = 0.0f;
  float lsum = 0.0f;
  for (int s = lane; s < L.splits; s += kWarpSize) {
    pa_softmax_row part, base = total;
    part.m = L.part_m[at0 + s * stride];
    part.l = L.part_l[at0 + s * stride];
    float keep_base, scale;
    lsum += pa_softmax_merge(base, part, &keep_base, &scale).l;
    if (tid < kWarpSize) factor[s] = scale;
  }
  total.l = pa_warp_sum<kWarpSize>(lsum);
  __syncthreads();

  const float norm = pa_softmax_normaliser(&total);
  const int Dv = p.head_dim_v;
  const int64_t o_row = pa_view_row(&p.o, b, i, seq.q_start, h);
  for (int d = tid; d < Dv; d += kMergeThreads) {
    float o = 0.0f;
    for (int s = 0; s < L.splits; ++s)
      if (factor[s] != 0.0f) o = fmaf(factor[s], L.part_o[(at0 + s * stride) * Dv + d], o);
    pa_store_f32(p.o.ptr, o_row + d, p.dtype, o * norm);
  }
  if (p.lse.buf && tid == 0)
    static_cast<float *>(p.lse.ptr)[pa_lse_index(&p.lse, b, h, i, seq.q_start)] =
        pa_softmax_lse(&total);
}

/* ------------------------------------------------------------ launch */

/* Per bucket: the devices on which the shared-memory opt-in was set. */
template <int DB>
std::atomic<unsigned long long> &smem_opted() {
  static std::atomic<unsigned long long> mask(0);
  return mask;
}

template <int DB>
cudaError_t launch_split(const pa_problem *p, const decode_plan &L, cudaStream_t stream) {
  if (L.smem > kDefaultSmem) {
    int device = 0;
    cudaError_t e = cudaGetDevice(&device);
    if (e != cudaSuccess) return e;
    const unsigned long long bit = device < 64 ? 1ull << device : 0;
    if (!bit || !(smem_opted<DB>().load(std::memory_order_acquire) & bit)) {
      /* the largest any problem of this bucket asks for, so one opt-in serves all */
      decode_plan most = L;
      most.max_rows = kMaxRows;
      most.tile_keys = kTileBytes / (DB * 2);
      most.row_bytes = DB * 2 + kRowPad;
      size_t want = smem_bytes(most);
      most.tile_keys = kTileBytes / (DB * 4);
      most.row_bytes = DB * 4 + kRowPad;
      if (smem_bytes(most) > want) want = smem_bytes(most);
      if (want < L.smem) want = L.smem;
      e = cudaFuncSetAttribute(decode_split_kernel<DB>,
                               cudaFuncAttributeMaxDynamicSharedMemorySize, (int)want);
      if (e != cudaSuccess) /* the device may allow less: ask for what this call needs */
        e = cudaFuncSetAttribute(decode_split_kernel<DB>,
                                 cudaFuncAttributeMaxDynamicSharedMemorySize, (int)L.smem);
      else
        smem_opted<DB>().fetch_or(bit, std::memory_order_acq_rel);
      if (e != cudaSuccess) return e;
    }
  }
  const dim3 grid((unsigned)L.splits, (unsigned)p->heads_kv, (unsigned)p->batch);
  decode_split_kernel<DB><<<grid, kThreads, L.smem, stream>>>(*p, L);
  return cudaGetLastError();
}

/* The tensor-core split kernel: L.warps warps per block, each one split. Its shared
 * memory depends on the bucket and the device only, so one opt-in per (kernel,
 * device) serves every call. */
#if PA_HAS_MMA_SYNC
template <typename T, int DB, int V>
cudaError_t launch_mma(const pa_problem *p, const decode_plan &L, cudaStream_t stream) {
  static std::atomic<unsigned long long> opted(0);
  int device = 0;
  cudaError_t e = cudaGetDevice(&device);
  if (e != cudaSuccess) return e;
  const unsigned long long bit = device < 64 ? 1ull << device : 0;
  if (L.smem > kDefaultSmem && (!bit || !(opted.load(std::memory_order_acquire) & bit))) {
    /* the most any plan asks for (mma_warps_max(V) warps; POLYATTN_CUDA_DECODE_WARPS
     * may ask for fewer), so one opt-in serves every call; else what this call needs */
    const size_t most = kMmaSmemAlign + mma_q_bytes(DB) +
                        (size_t)mma_warps_max(V) * mma_ring_bytes(DB, mma_keys(V));
    e = cudaFuncSetAttribute(decode_mma_kernel<T, DB, V>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             (int)(most > L.smem ? most : L.smem));
    if (e == cudaSuccess) {
      opted.fetch_or(bit, std::memory_order_acq_rel);
    } else {
      (void)cudaGetLastError(); /* not left for the launch check below */
      e = cudaFuncSetAttribute(decode_mma_kernel<T, DB, V>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               (int)L.smem);
    }
    if (e != cudaSuccess) return e;
  }
  const dim3 grid((unsigned)(L.splits / L.warps), (unsigned)p->heads_kv, (unsigned)p->batch);
  if (L.merge != kMergeCluster) {
    decode_mma_kernel<T, DB, V><<<grid, L.warps * kWarpSize, L.smem, stream>>>(*p, L);
    return cudaGetLastError();
  }
  /* One cluster per (batch entry, kv head): its grid.x blocks (<= kClusterMaxBlocks). */
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = grid;
  cfg.blockDim = dim3((unsigned)(L.warps * kWarpSize));
  cfg.dynamicSmemBytes = L.smem;
  cfg.stream = stream;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = grid.x;
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  return cudaLaunchKernelEx(&cfg, decode_mma_kernel<T, DB, V>, *p, L);
}

/* The tensor-core kernel's instance: dtype x bucket x variant (kVariantsBuilt). */
template <int V>
cudaError_t launch_mma_v(const pa_problem *p, const decode_plan &L, cudaStream_t stream) {
  const bool bf = p->dtype == POLYATTN_DTYPE_BF16, b64 = L.bucket == 64;
  return bf ? (b64 ? launch_mma<__nv_bfloat16, 64, V>(p, L, stream)
                   : launch_mma<__nv_bfloat16, 128, V>(p, L, stream))
            : (b64 ? launch_mma<__half, 64, V>(p, L, stream) : launch_mma<__half, 128, V>(p, L, stream));
}
cudaError_t launch_mma_dtype(const pa_problem *p, const decode_plan &L, cudaStream_t stream) {
  switch (L.variant) {
#  if PA_CUDA_TUNING_VARIANTS
  case kCopyAsync: return launch_mma_v<kCopyAsync>(p, L, stream);
  case kCopyLean | kVarK16: return launch_mma_v<kCopyLean | kVarK16>(p, L, stream);
#  endif
  default: return launch_mma_v<kCopyLean>(p, L, stream);
  }
}
#endif

/* The merge kernel; under kMergePdl as a programmatic dependent of the split kernel
 * (it may start before the split grid ends and waits in griddepcontrol.wait). */
cudaError_t launch_merge(const pa_problem *p, const decode_plan &L, cudaStream_t stream) {
  const dim3 grid((unsigned)p->seqlen_q, (unsigned)p->heads_q, (unsigned)p->batch);
#if PA_HAS_MMA_SYNC
  if (L.merge == kMergePdl)
    return pa_launch_dependent(decode_merge_kernel, grid, dim3(kMergeThreads), 0, stream, *p, L);
#endif
  decode_merge_kernel<<<grid, kMergeThreads, 0, stream>>>(*p, L);
  return cudaGetLastError();
}

} /* namespace */

int pa_cuda_decode_supports(const pa_problem *p, const pa_cuda_device *dev, pa_error *err) {
#define PA_NO(...)                                             \
  do {                                                         \
    if (err) snprintf(err->msg, sizeof err->msg, __VA_ARGS__); \
    return 0;                                                  \
  } while (0)
  if (p->pass != PA_PASS_FORWARD) PA_NO("the decode kernel computes the forward pass only");
  if (p->dtype != POLYATTN_DTYPE_F16 && p->dtype != POLYATTN_DTYPE_BF16 &&
      p->dtype != POLYATTN_DTYPE_F32)
    PA_NO("the decode kernel takes f32, f16 or bf16 inputs");
  if (p->sparsity != POLYATTN_SPARSITY_NONE && p->sparsity != POLYATTN_SPARSITY_BLOCK)
    PA_NO("the decode kernel supports dense and BLOCK sparsity only");
  if (p->head_dim < 1 || p->head_dim > 256 || p->head_dim_v < 1 || p->head_dim_v > 256)
    PA_NO("the decode kernel supports head dims up to 256 (head_dim %d, head_dim_v %d)",
          p->head_dim, p->head_dim_v);
  if (p->seqlen_q > kMaxSq)
    PA_NO("not decode-shaped: %d query rows per sequence, the decode kernel takes at most %d",
          p->seqlen_q, kMaxSq);
  if (p->heads_kv < 1 || p->heads_q % p->heads_kv != 0 ||
      (int64_t)(p->heads_q / p->heads_kv) * p->seqlen_q > kMaxRows)
    PA_NO("not decode-shaped: (Hq / Hkv) x Sq = %lld query rows per kv head, the decode "
          "kernel serves at most %d",
          p->heads_kv > 0 ? (long long)(p->heads_q / p->heads_kv) * p->seqlen_q : -1LL, kMaxRows);
  if (p->heads_q > 65535 || p->batch > 65535)
    PA_NO("the decode kernel's grid takes at most 65535 heads and batch entries");
  const decode_plan L = make_plan(p, dev);
  const char *path = getenv("POLYATTN_CUDA_DECODE_PATH");
  if (path && !strcmp(path, "mma") && !L.mma)
    PA_NO("POLYATTN_CUDA_DECODE_PATH=mma: the tensor-core decode kernel needs f16/bf16 on "
          "sm_80+, 16-byte aligned rows, head dims <= 128 and <= %d query rows per kv head",
          kMmaRows);
  if (L.mma) return 1; /* the checks below are the fp32 kernel's */
  if (L.max_rows > rows_limit(L.bucket))
    PA_NO("the decode kernel serves at most %d query rows per kv head at head dim %d; "
          "(Hq / Hkv) x Sq = %d",
          rows_limit(L.bucket), L.bucket, L.max_rows);
  if (L.smem > dev->smem_optin)
    PA_NO("the decode kernel needs %zu bytes of shared memory; the device allows %zu", L.smem,
          dev->smem_optin);
#undef PA_NO
  return 1;
}

size_t pa_cuda_decode_workspace(const pa_problem *p, const pa_cuda_device *dev) {
  if (p->batch <= 0 || p->heads_q <= 0 || p->seqlen_q <= 0 || p->total_q <= 0) return 0;
  return make_plan(p, dev).workspace;
}

cudaError_t pa_cuda_decode_forward(const pa_problem *p, const pa_cuda_device *dev,
                                   void *workspace, cudaStream_t stream) {
  if (p->batch <= 0 || p->heads_q <= 0 || p->seqlen_q <= 0 || p->total_q <= 0)
    return cudaSuccess; /* no row to write */
  decode_plan L = make_plan(p, dev);
  if (!workspace && L.workspace) return cudaErrorInvalidValue; /* the plan asked for it */
  bind_workspace(p, &L, workspace);
  if (L.merge == kMergeTicket) {
    if (ticket_zero()) {
      const cudaError_t z = cudaMemsetAsync(L.tickets, 0,
                                            (size_t)p->batch * p->heads_kv * sizeof(unsigned long long), stream);
      if (z != cudaSuccess) return z;
    }
  }
  cudaError_t e;
#if PA_HAS_MMA_SYNC
  if (L.mma) {
    e = launch_mma_dtype(p, L, stream);
  } else
#endif
  {
    switch (L.bucket) {
    case 64: e = launch_split<64>(p, L, stream); break;
    case 128: e = launch_split<128>(p, L, stream); break;
    default: e = launch_split<256>(p, L, stream); break;
    }
  }
  if (e != cudaSuccess) return e;
  return L.merge == kMergeCluster || L.merge == kMergeTicket ? cudaSuccess : launch_merge(p, L, stream);
}
