/* The tensor-core split kernel of the decode forward (included by fwd_decode.cu,
 * inside its namespace: it uses decode_plan, kWarpSize, kRowPad).
 *
 * Why: the fp32 split kernel spends per key tile three block barriers and ~8 shared
 * loads per FMA on the scores; at 64 keys per tile it measured 29% of the H200's
 * copy bandwidth. Here every warp is a split of its own: it streams its own run of
 * keys through its own cp.async ring (kMmaStages tiles of kMmaKeys keys, K and V),
 * with no block barrier after Q is staged, and does both products on the tensor
 * cores with the R <= 16 query rows of a GQA group as the M = 16 rows of
 * mma.m16n8k16 (rows past R are zero and never written):
 *   S [16 x 32 keys]  = Q [16 x D] . K^T      Q as A fragments held for the whole loop,
 *                                             K rows by ldmatrix (B = K^T, "col")
 *   softmax           the fragment steps of ampere_softmax.cuh (common/softmax.h)
 *   O [16 x Dv]      += P [16 x 32] . V       P re-packed from S's accumulators as A,
 *                                             V rows by ldmatrix.trans
 * Each warp's partial (O unnormalised, m in natural-log units, l) is split number
 * blockIdx.x * L.warps + warp. How the partials are merged is L.merge (decode_merge;
 * the last, ticket, is the default, the fastest measured on the H200: docs/decisions.md
 * 72 and 81):
 *   kernel   written to the workspace; decode_merge_kernel combines them (a second launch)
 *   pdl      the same, the merge kernel launched as a programmatic dependent (sm_90):
 *            its blocks are resident before this grid ends and wait on griddepcontrol
 *   cluster  the blocks of one (batch entry, kv head) form a thread-block cluster
 *            (sm_90, <= 8 blocks); each stages its warps' partials in its own shared
 *            memory and the cluster merges them over distributed shared memory, in
 *            split order, into O and LSE: no workspace, no second launch.
 *   ticket   written to the workspace as for `kernel`; then each block takes a ticket
 *            (an arrival count per (batch entry, kv head) in the workspace) and the
 *            last block of the pair to arrive merges its rows, in split order, and
 *            puts the count back to zero: one launch, no merge kernel. The count
 *            word carries a 48-bit tag (kTicketTag): a word without the tag counts
 *            as zero, so a workspace that held anything else needs no memset; only
 *            a word that already holds the tag and a count below the block count
 *            (which this kernel never leaves behind) would be misread.
 * L.early issues the first K/V tiles before Q is staged (Q's load latency hidden
 * behind them) instead of after.
 *
 * The kernel's variant is the template parameter V, bits of decode_variant, chosen on
 * the host (a run-time switch inside the loop costs 30-40%, decision 82).
 * How a warp's K/V rows reach its ring (bit kCopyLean): both copy 16 bytes per
 * cp.async, lane l taking chunk l % 16 of rows l / 16 + 2m (at hd 128):
 *   lean   (the default) a tile with all its rows and D = Dv = the bucket (at hd 128
 *          every tile but perhaps a split's last) is unpredicated copies from one row
 *          pointer stepped by 2 rows (shared-memory offsets immediates, no zero-fill
 *          operand); any other tile as in async
 *   async  one loop for every tile: per copy, the row and chunk from the index, the
 *          64-bit address, and the zero-fill tests (row past the split's end, column
 *          past D or Dv)
 * Two others were measured on the H200 and removed (decision 84): one cp.async.bulk
 * per K/V row on an mbarrier (capped at 2.44 TB/s at every length), and TMA boxes of
 * 32 rows x 64 columns into a swizzled ring (level with lean at Sk 4k, 2-4% slower at
 * 32k and 128k).
 * kVarK16 (eighth session, a tuning aid: decision 90): tiles of 16 keys and up to 8
 * warps (splits) per block in the same shared memory, two warps per SM
 * sub-partition. Measured on the H200 against the default: 1% faster at Sk 32k and
 * 128k, 1.0-1.3 us slower at 4k (the merge of 16 splits). Also measured and removed
 * (decisions 90, 91): O's rescale skipped when no row's maximum moved, two Q.K^T
 * accumulator sets, the block's warps taking its tiles in turn, the .L2::256B hint,
 * and the kernel as a programmatic dependent launch.
 *
 * Rows: r = i * G + g (query row i, head g of the group), as in the fp32 kernel.
 * Masks: a tile inside every row's key range with no block mask takes the fast path
 * (raw dot products, scale folded into exp2); any other tile, and every tile with a
 * softcap, ALiBi or a non-positive scale, is scored element by element with
 * pa_mask_keep / pa_block_mask_keep / pa_score. */
#ifndef PA_CUDA_DECODE_MMA_CUH
#define PA_CUDA_DECODE_MMA_CUH

#include "ampere_mma.cuh"
#include "ampere_softmax.cuh"
#include "ampere_tile.cuh" /* pa_tile_layout: the K/V ring's swizzle */
#include "pdl.cuh"
#include "ticket.cuh"

constexpr int kMmaRows = 16;    /* the M of mma.m16n8k16: query rows per block */
constexpr int kMmaKeys = 32;    /* keys per warp tile (16 under kVarK16) */
constexpr int kMmaStages = 3;   /* tiles in flight per warp (the one computed included) */
constexpr int kMmaWarpsMax = 4; /* warps (= splits) per block at 32-key tiles */

/* The kernel's variant bits (template parameter V; POLYATTN_CUDA_DECODE_COPY and
 * POLYATTN_CUDA_DECODE_VARIANT, fwd_decode.cu `variant_mode`). kCopyAsync is no bit. */
enum decode_variant { kCopyAsync = 0, kCopyLean = 1, kVarK16 = 2 };
/* Keys per tile, and warps per block at most, of variant v: 16-key tiles take half a
 * 32-key ring, so twice the warps fit in the same shared memory. */
__host__ __device__ constexpr int mma_keys(int v) { return v & kVarK16 ? kMmaKeys / 2 : kMmaKeys; }
__host__ __device__ constexpr int mma_warps_max(int v) { return v & kVarK16 ? 2 * kMmaWarpsMax : kMmaWarpsMax; }

/* Bytes of one staged Q row of head-dim bucket db: 16 bytes of padding shift
 * consecutive rows by four banks, so ldmatrix's eight rows hit distinct banks. */
__host__ __device__ constexpr int mma_pitch(int db) { return db * 2 + kRowPad; }
/* Bytes of one K or V row in a warp's ring: unpadded, the 16-byte chunks of row r
 * XOR-swizzled by r & 7 (ampere_tile.cuh's pa_tile_layout), so ldmatrix's eight rows hit
 * distinct banks and every 128-byte line of shared memory holds one 128-byte line of
 * the global row. With padded rows (the sixth to thirteenth sessions) a warp's copy of
 * two rows straddled lines, and the copies asked L2 for 1.5x the sectors they needed
 * (bench/RESULTS.md, fourteenth session). */
__host__ __device__ constexpr int mma_kv_pitch(int db) { return db * 2; }
/* One warp's ring of `keys`-key tiles, and the staged Q. */
__host__ __device__ constexpr size_t mma_ring_bytes(int db, int keys = kMmaKeys) {
  return (size_t)kMmaStages * 2 * keys * mma_kv_pitch(db);
}
__host__ __device__ constexpr size_t mma_q_bytes(int db) { return (size_t)kMmaRows * mma_pitch(db); }
/* The kernel aligns its dynamic shared memory to 128 bytes (the rings' lines): the
 * plan adds this much. */
constexpr int kMmaSmemAlign = 128;

/* Cluster merge: at most this many blocks per (batch entry, kv head) (the portable
 * cluster size), so at most kClusterSplits partials per row. Each block stages its
 * warps' partials ([warps][16 rows][db] fp32 and m, l per row) in its ring, and the
 * per-row split factors ([16][kClusterSplits], then 1/l per row) in the Q region. */
constexpr int kClusterMaxBlocks = 8;
constexpr int kClusterSplits = kClusterMaxBlocks * kMmaWarpsMax;
static_assert((kMmaRows * kClusterSplits + kMmaRows) * 4 <= (int)mma_q_bytes(64),
              "the cluster merge's factors fit in the Q region");
static_assert(kMmaWarpsMax * kMmaRows * (128 + 2) * 4 <= (int)mma_ring_bytes(128),
              "a block's staged partials fit in one warp's ring");

/* Ticket merge: the arrival word is kTicketTag << 16 | blocks arrived so far. */
constexpr unsigned long long kTicketTag = 0x7ff5dec0de11ull; /* a float NaN payload in its high half */
/* Splits whose partials one merging thread loads at once: a block's warps times two
 * (8 at 32-key tiles, 16 under kVarK16), so that the default grid's merge (two blocks
 * per (batch entry, kv head) at Sk 4k) is one L2 round trip. */
__host__ __device__ constexpr int ticket_batch(int v) { return 2 * mma_warps_max(v); }

/* Timeline stamps (PA_DECODE_TL builds only: bench/gpu/decode_timeline.cu): slot k of
 * this block's kDecodeTlSlots words gets the global timer (ns) or a value; in the
 * library the macros are empty. */
constexpr int kDecodeTlSlots = 32;
enum decode_tl_slot {
  kTlStart = 0,      /* block start */
  kTlSm = 1,         /* its SM id */
  kTlFirstTile = 2,  /* + w: warp w's first tile landed (w < 8) */
  kTlLoopEnd = 10,   /* + w: warp w's loop ended */
  kTlPartials = 18,  /* the block's partials written */
  kTlTicket = 19,    /* its ticket taken (cluster merge: the cluster's barrier passed) */
  kTlMerged = 20,    /* the merge done (the last block; cluster: every block) */
  kTlMergedFlag = 21 /* 1 when kTlMerged is set */
};
#if PA_DECODE_TL
__device__ __forceinline__ unsigned long long decode_tl_now() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
#  define PA_DECODE_STAMP(k, value)                                                           \
    do {                                                                                     \
      if (L.tl)                                                                              \
        L.tl[((size_t)(blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x) *      \
                 kDecodeTlSlots + (k)] = (value);                                            \
    } while (0)
#  define PA_DECODE_STAMP_NOW(k) PA_DECODE_STAMP(k, decode_tl_now())
#else
#  define PA_DECODE_STAMP(k, value) \
    do {                            \
    } while (0)
#  define PA_DECODE_STAMP_NOW(k) PA_DECODE_STAMP(k, 0)
#endif

/* Programmatic dependent launch: pdl.cuh (the host asks for it on sm_90 only:
 * decode_arch90()). */

/* The arrival: a compare-and-swap with acquire and release semantics at GPU scope
 * (the release publishes the block's partials, ordered before it by a barrier; the
 * acquire makes the other blocks' visible to the block that arrives last). */
__device__ __forceinline__ unsigned long long ticket_cas(unsigned long long *w, unsigned long long cmp,
                                                         unsigned long long val) {
  unsigned long long old;
  asm volatile("atom.acq_rel.gpu.global.cas.b64 %0, [%1], %2, %3;\n"
               : "=l"(old)
               : "l"(w), "l"(cmp), "l"(val)
               : "memory");
  return old;
}

/* The ticket merge, run by every block after its warps wrote their partials: the arrival
 * (barrier, then one release), and in the last block of the (batch entry, kv head) the
 * merge of its R rows over all L.splits splits in split order (so results do not depend
 * on which block arrives last). Each thread merges 4 columns of one row: per batch of
 * kTicketBatch splits it loads their m, l and O at once (clamped indices, no branches:
 * one L2 round trip per batch, one batch in all when splits <= kTicketBatch, as at Sk
 * 4k), then folds the batch into running (m, l, O) sums against the batch's maximum.
 * The code is kept short on purpose: it runs once per block, at the end (probably from
 * a cold instruction cache), and it is the last thing a call waits for; the longer form
 * before took 1.9 us there against 1.15 (bench/RESULTS.md, eighteenth session).
 * Partials are read with ld.global.cg: other blocks wrote them, so not from L1. */
template <typename T, int kTicketBatch>
__device__ __forceinline__ void ticket_merge(const pa_problem &p, const decode_plan &L, const pa_seq seq,
                                          int b, int hkv, int G, int R, int64_t row0) {
  __shared__ int last;
  __syncthreads(); /* every warp's partial is written (the release below covers them) */
  if (threadIdx.x == 0) {
    PA_DECODE_STAMP_NOW(kTlPartials);
    unsigned long long *w = L.tickets + (size_t)b * p.heads_kv + hkv;
    /* The word loaded first: guessing the last arrival's word instead (no load) measured
     * 0.3-0.6 us slower at Sk 4k, the pair's two blocks often arriving together. */
    const unsigned long long seen = pa_ticket_arrive(w, kTicketTag, __ldcg(w), ticket_cas);
    PA_DECODE_STAMP_NOW(kTlTicket);
    last = seen + 1 == gridDim.x;
    if (last) atomicExch(w, 0ull); /* the next call (stream order) starts at zero */
  }
  __syncthreads(); /* the acquire above orders the other threads' loads below */
  if (!last) return;

  const int Dv = p.head_dim_v, dv4 = Dv / 4, ns = L.splits;
  const int64_t stride = L.rows_total * p.heads_q; /* between splits */
  for (int idx = threadIdx.x; idx < R * dv4; idx += blockDim.x) {
    const int r = idx / dv4, d = (idx - r * dv4) * 4;
    const int i = r / G, h = hkv * G + r % G;
    const int64_t at0 = (row0 + i) * p.heads_q + h;
    float m_run = -INFINITY, l_run = 0.0f, acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll 1
    for (int s0 = 0; s0 < ns; s0 += kTicketBatch) {
      float mv[kTicketBatch], lv[kTicketBatch], ov[kTicketBatch][4];
#pragma unroll
      for (int k = 0; k < kTicketBatch; ++k) {
        const int64_t at = at0 + (int64_t)min(s0 + k, ns - 1) * stride; /* past ns: a copy, weight 0 */
        mv[k] = s0 + k < ns ? __ldcg(L.part_m + at) : -INFINITY;
        lv[k] = __ldcg(L.part_l + at);
        /* one 16-byte load: part_o is 16-byte aligned (parts_base), Dv % 8 == 0 */
        const float4 v = __ldcg(reinterpret_cast<const float4 *>(L.part_o + at * Dv + d));
        ov[k][0] = v.x, ov[k][1] = v.y, ov[k][2] = v.z, ov[k][3] = v.w;
      }
      float mx = m_run;
#pragma unroll
      for (int k = 0; k < kTicketBatch; ++k) mx = fmaxf(mx, mv[k]);
      /* pa_softmax_merge's factors against mx, which is >= every m folded so far */
      const float keep = m_run == -INFINITY ? 0.0f : __expf(m_run - mx);
      l_run *= keep;
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[e] *= keep;
#pragma unroll
      for (int k = 0; k < kTicketBatch; ++k) {
        const float f = mv[k] == -INFINITY ? 0.0f : __expf(mv[k] - mx);
        l_run = fmaf(lv[k], f, l_run);
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[e] = f != 0.0f ? fmaf(f, ov[k][e], acc[e]) : acc[e];
      }
      m_run = mx;
    }
    pa_softmax_row total;
    total.m = m_run;
    total.l = l_run;
    const float norm = pa_softmax_normaliser(&total);
    T *o = static_cast<T *>(p.o.ptr) + pa_view_row(&p.o, b, i, seq.q_start, h) + d;
#pragma unroll
    for (int e = 0; e < 4; ++e) o[e] = pa_from_f32<T>(acc[e] * norm);
    if (p.lse.buf && d == 0)
      static_cast<float *>(p.lse.ptr)[pa_lse_index(&p.lse, b, h, i, seq.q_start)] = pa_softmax_lse(&total);
  }
#if PA_DECODE_TL
  __syncthreads(); /* every thread's share merged */
  if (threadIdx.x == 0) {
    PA_DECODE_STAMP_NOW(kTlMerged);
    PA_DECODE_STAMP(kTlMergedFlag, 1ull);
  }
#endif
}

template <typename T, int DB, int V>
__global__ void __launch_bounds__(mma_warps_max(V) * kWarpSize)
    decode_mma_kernel(const __grid_constant__ pa_problem p, const __grid_constant__ decode_plan L) {
#if PA_AMPERE_ARCH_OK
  constexpr bool kLean = (V & kCopyLean) != 0;
  constexpr int kKeys = mma_keys(V); /* keys per tile */
  constexpr int KT = DB / 16;       /* k-steps of Q.K^T over the head dim */
  constexpr int NT = kKeys / 8;     /* score n-tiles */
  constexpr int DT = DB / 8;        /* output n-tiles */
  constexpr int kPitch = mma_pitch(DB);       /* staged Q */
  constexpr int kKvPitch = mma_kv_pitch(DB);  /* K and V rings (swizzled) */
  constexpr int kChunks = DB / 8;   /* 16-byte chunks per row */
  typedef pa_tile_layout<DB> kv_layout; /* the rings' rows: kKvPitch bytes, swizzled */
  static_assert(kChunks % 8 == 0 && kv_layout::chunks * 16 == kKvPitch,
                "the ring's swizzle permutes 8 chunks (128 bytes) of unpadded rows");
  extern __shared__ __align__(16) char smem_raw[];
  char *const smem = smem_raw + ((kMmaSmemAlign - (pa_smem_addr(smem_raw) & (kMmaSmemAlign - 1))) &
                                 (kMmaSmemAlign - 1));
  const int lane = threadIdx.x % kWarpSize, warp = threadIdx.x / kWarpSize;
#if PA_DECODE_TL
  if (threadIdx.x == 0) {
    unsigned sm;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    PA_DECODE_STAMP_NOW(kTlStart);
    PA_DECODE_STAMP(kTlSm, sm);
    PA_DECODE_STAMP(kTlMergedFlag, 0ull);
  }
#endif
  const int g = lane >> 2, t = lane & 3;
  const int b = blockIdx.z, hkv = blockIdx.y;
  const int G = p.heads_q / p.heads_kv, D = p.head_dim, Dv = p.head_dim_v;
  const pa_seq seq = pa_problem_seq(&p, b);
  if (seq.len_q <= 0) return; /* no row to write */
  const int R = G * seq.len_q;
  const pa_mask mask = pa_problem_mask(&p, &seq);

  /* This warp's keys: [k_begin, k_end) of the rows' union range and its split. */
  const int split = blockIdx.x * L.warps + warp;
  int64_t lo_any, hi_any, lo_all, hi_all, unused;
  pa_mask_rows_range(&mask, 0, seq.len_q, &lo_any, &hi_any);
  pa_mask_row_range(&mask, seq.len_q - 1, &lo_all, &unused); /* keys every row keeps: */
  pa_mask_row_range(&mask, 0, &unused, &hi_all);              /* [lo_all, hi_all) */
  const int64_t s0 = (int64_t)split * L.split_keys;
  const int64_t k_begin = lo_any > s0 ? lo_any : s0;
  const int64_t k_end = hi_any < s0 + L.split_keys ? hi_any : s0 + L.split_keys;
  const int tiles = k_end > k_begin ? (int)((k_end - k_begin + kKeys - 1) / kKeys) : 0;

  constexpr int kTileBytesKV = kKeys * kKvPitch; /* one K (V) tile */
  char *ring = smem + mma_q_bytes(DB) + (size_t)warp * mma_ring_bytes(DB, kKeys);
  auto k_tile = [&](int slot) { return ring + (size_t)(2 * slot) * kTileBytesKV; };
  auto v_tile = [&](int slot) { return ring + (size_t)(2 * slot + 1) * kTileBytesKV; };
  /* Shared address of 16-byte chunk c of row r of a K or V tile at `tile`. */
  auto chunk_addr = [&](const char *tile, int r, int c) -> uint32_t {
    return pa_smem_addr(tile + r * kKvPitch + kv_layout::chunk_bytes(r, c));
  };

  /* Copy tile n's K and V rows into `slot`; rows past k_end and columns past D (Dv)
   * are zero-filled without a global read, so no NaN of stale smem meets a p = 0.
   * lean: lane l copies chunk lch of rows lrow + m * kRowStep of a whole tile. */
  constexpr int kRowStep = kWarpSize / kChunks;
  static_assert(kWarpSize % kChunks == 0 && kKeys % kRowStep == 0, "lean: whole rows per warp pass");
  const int lrow = lane / kChunks, lch = lane % kChunks;
  const bool full_dims = D == DB && Dv == DB;
  auto load_tile = [&](int n, int slot) {
    const int64_t k0 = k_begin + (int64_t)n * kKeys;
    const int nk = (int)(k_end - k0 < kKeys ? k_end - k0 : kKeys);
    const uint32_t ks = pa_smem_addr(k_tile(slot)), vs = pa_smem_addr(v_tile(slot));
    const int64_t kp = p.k.stride_s * 2, vp = p.v.stride_s * 2;
    if constexpr (kLean) {
      if (full_dims && nk == kKeys) {
        const char *kg = static_cast<const char *>(p.k.ptr) +
                         pa_view_row(&p.k, b, k0 + lrow, seq.k_start, hkv) * 2 + lch * 16;
        const char *vg = static_cast<const char *>(p.v.ptr) +
                         pa_view_row(&p.v, b, k0 + lrow, seq.k_start, hkv) * 2 + lch * 16;
#pragma unroll
        for (int m = 0; m < kKeys / kRowStep; ++m) {
          const int r = lrow + m * kRowStep;
          const uint32_t off = r * kKvPitch + kv_layout::chunk_bytes(r, lch);
          pa_cp_async_16_full(ks + off, kg + m * kRowStep * kp);
          pa_cp_async_16_full(vs + off, vg + m * kRowStep * vp);
        }
        return;
      }
    }
    const char *kg = static_cast<const char *>(p.k.ptr) + pa_view_row(&p.k, b, k0, seq.k_start, hkv) * 2;
    const char *vg = static_cast<const char *>(p.v.ptr) + pa_view_row(&p.v, b, k0, seq.k_start, hkv) * 2;
#pragma unroll 4
    for (int idx = lane; idx < kKeys * kChunks; idx += kWarpSize) {
      const int j = idx / kChunks, ch = idx - j * kChunks;
      const bool kin = j < nk && ch * 8 < D, vin = j < nk && ch * 8 < Dv;
      const uint32_t off = j * kKvPitch + kv_layout::chunk_bytes(j, ch);
      pa_cp_async_16(ks + off, kin ? kg + j * kp + ch * 16 : kg, kin ? 16 : 0);
      pa_cp_async_16(vs + off, vin ? vg + j * vp + ch * 16 : vg, vin ? 16 : 0);
    }
  };

  /* Block masks: the first tile >= n that some (row, key) pair may keep. */
  auto next_kept = [&](int n) {
    if (!p.block_mask.buf) return n;
    const int nqb = (seq.len_q - 1) / p.block_q + 1;
    for (; n < tiles; ++n) {
      const int64_t k0 = k_begin + (int64_t)n * kKeys;
      const int64_t k1 = k0 + kKeys < k_end ? k0 + kKeys : k_end;
      const int kb0 = (int)(k0 / p.block_k), nkb = (int)((k1 - 1) / p.block_k) - kb0 + 1;
      int any = 0;
      for (int x = lane; x < G * nqb * nkb; x += kWarpSize) {
        const int gg = x / (nqb * nkb), qb = x / nkb % nqb, kb = kb0 + x % nkb;
        any |= pa_block_mask_keep(&p.block_mask, b, hkv * G + gg, qb, kb);
      }
      if (__any_sync(0xffffffffu, any)) return n;
    }
    return n;
  };

  /* The two rows this thread holds (g, g + 8). */
  int row_i[2], row_h[2];
  float slope[2];
#pragma unroll
  for (int rr = 0; rr < 2; ++rr) {
    const int r = g + 8 * rr;
    row_i[rr] = r < R ? r / G : -1;
    row_h[rr] = hkv * G + (r < R ? r % G : 0);
    slope[rr] = pa_problem_alibi_slope(&p, b, row_h[rr]);
  }
  const bool fast = p.softcap == 0.0f && !p.alibi.buf && p.scale > 0.0f;
  const float xscale = fast ? p.scale * PA_LOG2E : 1.0f;

  float o[DT][4];
#pragma unroll
  for (int n = 0; n < DT; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.0f;
  pa_softmax_row row[2];
  row[0].m = row[1].m = -INFINITY;
  row[0].l = row[1].l = 0.0f;

  /* Q rows -> smem (zero past R and past D) -> A fragments, the block's one barrier. */
  char *q_s = smem;
  uint32_t qa[KT][4];
  auto stage_q = [&]() {
    for (int idx = threadIdx.x; idx < kMmaRows * kChunks; idx += blockDim.x) {
      const int r = idx / kChunks, ch = idx - r * kChunks;
      uint4 v = make_uint4(0u, 0u, 0u, 0u);
      if (r < R && ch * 8 < D) {
        const int i = r / G, h = hkv * G + r % G;
        v = *reinterpret_cast<const uint4 *>(static_cast<const T *>(p.q.ptr) +
                                             pa_view_row(&p.q, b, i, seq.q_start, h) + ch * 8);
      }
      *reinterpret_cast<uint4 *>(q_s + r * kPitch + ch * 16) = v;
    }
    __syncthreads();
#pragma unroll
    for (int ks = 0; ks < KT; ++ks) /* matrices: rows 0-7 / 8-15 x cols 0-7 / 8-15 */
      pa_ldmatrix_x4(qa[ks], pa_smem_addr(q_s + ((lane & 7) + ((lane >> 3) & 1) * 8) * kPitch +
                                          ks * 32 + (lane >> 4) * 16));
  };

  /* The ring: the tile computed in iteration `it` sits in slot it % kMmaStages. */
  if (L.merge == kMergePdl) pa_pdl_launch_dependents(); /* the merge grid may be scheduled */
  if (!L.early) stage_q();
  int load_n = next_kept(0), comp_n = load_n;
#pragma unroll
  for (int s = 0; s < kMmaStages - 1; ++s) {
    if (load_n < tiles) {
      load_tile(load_n, s);
      load_n = next_kept(load_n + 1);
    }
    pa_cp_async_commit();
  }
  if (L.early) stage_q(); /* its global loads overlap the first tiles' */

  for (int it = 0; comp_n < tiles; ++it) {
    if (load_n < tiles) { /* into the slot computed last iteration */
      load_tile(load_n, (it + kMmaStages - 1) % kMmaStages);
      load_n = next_kept(load_n + 1);
    }
    const int slot = it % kMmaStages;
    const int64_t k0 = k_begin + (int64_t)comp_n * kKeys;
    const char *kt = k_tile(slot), *vt = v_tile(slot);
    pa_cp_async_commit();
    pa_cp_async_wait<kMmaStages - 1>();
    __syncwarp(); /* every lane's copies of tile comp_n are visible to the warp */
    if (it == 0 && lane == 0) PA_DECODE_STAMP_NOW(kTlFirstTile + warp);

    /* S = Q . K^T; x4 matrices: keys 0-7 / 8-15 of a 16-key pair x dims 0-7 / 8-15. */
    float s[NT][4];
#pragma unroll
    for (int n = 0; n < NT; ++n) s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.0f;
#pragma unroll
    for (int ks = 0; ks < KT; ++ks) {
      if (ks * 16 >= D) break;
#pragma unroll
      for (int np = 0; np < NT / 2; ++np) {
        uint32_t kb[4];
        pa_ldmatrix_x4(kb, chunk_addr(kt, np * 16 + (lane & 7) + ((lane >> 4) & 1) * 8,
                                      ks * 2 + ((lane >> 3) & 1)));
        pa_mma_16816<T>(s[2 * np], qa[ks], kb[0], kb[1]);
        pa_mma_16816<T>(s[2 * np + 1], qa[ks], kb[2], kb[3]);
      }
    }

    /* Scores: raw on the fast path inside every row's range, else element-wise. */
    const bool whole = fast && !p.block_mask.buf && k0 >= lo_all && k0 + kKeys <= hi_all &&
                       k0 + kKeys <= k_end;
    if (!whole) {
#pragma unroll
      for (int n = 0; n < NT; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int rr = e >> 1, i = row_i[rr];
          const int64_t j = k0 + n * 8 + 2 * t + (e & 1);
          const bool kept = i >= 0 && j < k_end && pa_mask_keep(&mask, i, j) &&
                            pa_block_mask_keep(&p.block_mask, b, row_h[rr], i / p.block_q,
                                               (int32_t)(j / p.block_k));
          s[n][e] = !kept ? -INFINITY
                    : fast ? s[n][e]
                           : pa_score(s[n][e], p.scale, p.softcap, slope[rr], &mask, i, j) * PA_LOG2E;
        }
    }

    float alpha[2];
    pa_frag_softmax_update_max<NT>(row, s, xscale, alpha);
    pa_frag_softmax_rescale<DT>(row, alpha, o);
    pa_frag_softmax_accumulate<NT>(row, s, xscale);

    /* O += P . V; P's A fragment for keys 16kk..16kk+15 is n-tiles 2kk, 2kk + 1 of S.
     * x4.trans matrices: keys 0-7 / 8-15 x value columns 0-7 / 8-15 of a 16-column pair. */
#pragma unroll
    for (int kk = 0; kk < NT / 2; ++kk) {
      const uint32_t pa[4] = {pa_pack2<T>(s[2 * kk][0], s[2 * kk][1]),
                              pa_pack2<T>(s[2 * kk][2], s[2 * kk][3]),
                              pa_pack2<T>(s[2 * kk + 1][0], s[2 * kk + 1][1]),
                              pa_pack2<T>(s[2 * kk + 1][2], s[2 * kk + 1][3])};
#pragma unroll
      for (int dp = 0; dp < DT / 2; ++dp) {
        if (dp * 16 >= Dv) break;
        uint32_t vb[4];
        pa_ldmatrix_x4_trans(vb, chunk_addr(vt, kk * 16 + (lane & 7) + ((lane >> 3) & 1) * 8,
                                            dp * 2 + (lane >> 4)));
        pa_mma_16816<T>(o[2 * dp], pa, vb[0], vb[1]);
        pa_mma_16816<T>(o[2 * dp + 1], pa, vb[2], vb[3]);
      }
    }
    __syncwarp(); /* the slot is read: the next iteration may refill it */
    comp_n = next_kept(comp_n + 1);
  }
  pa_cp_async_wait<0>();
  if (lane == 0) PA_DECODE_STAMP_NOW(kTlLoopEnd + warp);
  const int64_t row0 = p.varlen ? seq.q_start : (int64_t)b * p.seqlen_q;
  float l_row[2];
#pragma unroll
  for (int rr = 0; rr < 2; ++rr) l_row[rr] = pa_quad_sum(row[rr].l);

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if (mma_warps_max(V) <= kMmaWarpsMax && L.merge == kMergeCluster) { /* the plan keeps K16 off it */
    namespace cg = cooperative_groups;
    cg::cluster_group cluster = cg::this_cluster();
    /* 1. This block's partials into its own ring (every warp is done with the ring and Q). */
    __syncthreads();
    float *po = reinterpret_cast<float *>(smem + mma_q_bytes(DB)); /* [warps][16][DB] */
    float *pm = po + L.warps * kMmaRows * DB, *pl = pm + L.warps * kMmaRows; /* [warps][16] */
#pragma unroll
    for (int rr = 0; rr < 2; ++rr) {
      const int r = g + 8 * rr;
      float *dst = po + (warp * kMmaRows + r) * DB;
#pragma unroll
      for (int n = 0; n < DT; ++n)
        *reinterpret_cast<float2 *>(dst + n * 8 + 2 * t) = make_float2(o[n][2 * rr], o[n][2 * rr + 1]);
      if (t == 0) {
        pm[warp * kMmaRows + r] = row[rr].m == -INFINITY ? -INFINITY : row[rr].m * xscale * PA_LN2;
        pl[warp * kMmaRows + r] = l_row[rr];
      }
    }
    if (threadIdx.x == 0) PA_DECODE_STAMP_NOW(kTlPartials);
    cluster.sync(); /* every block's partials are visible to the cluster */
    if (threadIdx.x == 0) PA_DECODE_STAMP_NOW(kTlTicket);

    /* 2. Per row, the splits' factors against the rows' common maximum, in split order
     *    (split s = rank * warps + warp: the order of decode_merge_kernel). The remote
     *    loads of a row are issued together (unrolled, predicated), not one per
     *    dependent step: a DSMEM load costs hundreds of cycles. */
    const int nb = (int)cluster.num_blocks(), ns = nb * L.warps, rank = (int)cluster.block_rank();
    float *fac = reinterpret_cast<float *>(smem); /* [16][kClusterSplits], then 1/l [16] */
    float *norm = fac + kMmaRows * kClusterSplits;
    if (threadIdx.x < R) {
      const int r = threadIdx.x;
      float mv[kClusterSplits], lv[kClusterSplits];
#pragma unroll
      for (int s = 0; s < kClusterSplits; ++s) {
        mv[s] = -INFINITY;
        lv[s] = 0.0f;
        if (s < ns) {
          const int at = (s % L.warps) * kMmaRows + r;
          mv[s] = cluster.map_shared_rank(pm, s / L.warps)[at];
          lv[s] = cluster.map_shared_rank(pl, s / L.warps)[at];
        }
      }
      pa_softmax_row total;
      total.m = -INFINITY;
#pragma unroll
      for (int s = 0; s < kClusterSplits; ++s) total.m = fmaxf(total.m, mv[s]);
      total.l = 0.0f;
#pragma unroll
      for (int s = 0; s < kClusterSplits; ++s) {
        if (s >= ns) break;
        pa_softmax_row part, base = total;
        part.m = mv[s];
        part.l = lv[s];
        float keep_base, scale;
        pa_softmax_merge(base, part, &keep_base, &scale);
        fac[r * kClusterSplits + s] = scale;
        total.l = fmaf(part.l, scale, total.l);
      }
      norm[r] = pa_softmax_normaliser(&total);
      if (p.lse.buf && rank == 0) {
        const int i = r / G, h = hkv * G + r % G;
        static_cast<float *>(p.lse.ptr)[pa_lse_index(&p.lse, b, h, i, seq.q_start)] =
            pa_softmax_lse(&total);
      }
    }
    __syncthreads();

    /* 3. O: this block's share of the (row, 4-column) groups (Dv % 8 == 0 here), the
     *    splits summed in order, kMergeBatch remote float4 loads in flight at a time. */
    constexpr int kMergeBatch = 8;
    const int dv4 = Dv / 4;
    for (int idx = rank * (int)blockDim.x + (int)threadIdx.x; idx < R * dv4; idx += nb * (int)blockDim.x) {
      const int r = idx / dv4, d = (idx - r * dv4) * 4;
      float4 acc = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      for (int s0 = 0; s0 < ns; s0 += kMergeBatch) {
        float4 v[kMergeBatch];
#pragma unroll
        for (int k = 0; k < kMergeBatch; ++k) {
          const int s = s0 + k;
          v[k] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
          if (s < ns)
            v[k] = *reinterpret_cast<const float4 *>(
                cluster.map_shared_rank(po, s / L.warps) + ((s % L.warps) * kMmaRows + r) * DB + d);
        }
#pragma unroll
        for (int k = 0; k < kMergeBatch; ++k) {
          const int s = s0 + k;
          const float f = s < ns ? fac[r * kClusterSplits + s] : 0.0f;
          if (f != 0.0f) {
            acc.x = fmaf(f, v[k].x, acc.x);
            acc.y = fmaf(f, v[k].y, acc.y);
            acc.z = fmaf(f, v[k].z, acc.z);
            acc.w = fmaf(f, v[k].w, acc.w);
          }
        }
      }
      const int i = r / G, h = hkv * G + r % G;
      const int64_t at = pa_view_row(&p.o, b, i, seq.q_start, h) + d;
      pa_store_f32(p.o.ptr, at, p.dtype, acc.x * norm[r]);
      pa_store_f32(p.o.ptr, at + 1, p.dtype, acc.y * norm[r]);
      pa_store_f32(p.o.ptr, at + 2, p.dtype, acc.z * norm[r]);
      pa_store_f32(p.o.ptr, at + 3, p.dtype, acc.w * norm[r]);
    }
    cluster.sync(); /* no block leaves while another may still read its shared memory */
    if (threadIdx.x == 0) {
      PA_DECODE_STAMP_NOW(kTlMerged);
      PA_DECODE_STAMP(kTlMergedFlag, 1ull);
    }
    return;
  }
#endif

  /* The partial of this warp's split: O unnormalised, m in natural-log units, l. */
#pragma unroll
  for (int rr = 0; rr < 2; ++rr) {
    const float l = l_row[rr];
    const int i = row_i[rr];
    if (i < 0) continue;
    const int64_t at = ((int64_t)split * L.rows_total + row0 + i) * p.heads_q + row_h[rr];
    float *dst = L.part_o + at * Dv;
#pragma unroll
    for (int n = 0; n < DT; ++n) { /* Dv % 8 == 0 here; part_o 16-byte aligned (parts_base) */
      const int d = n * 8 + 2 * t;
      if (d < Dv) *reinterpret_cast<float2 *>(dst + d) = make_float2(o[n][2 * rr], o[n][2 * rr + 1]);
    }
    if (t == 0) {
      L.part_m[at] = row[rr].m == -INFINITY ? -INFINITY : row[rr].m * xscale * PA_LN2;
      L.part_l[at] = l;
    }
  }
  if (L.merge == kMergeTicket) ticket_merge<T, ticket_batch(V)>(p, L, seq, b, hkv, G, R, row0);
#if PA_DECODE_TL
  if (L.merge != kMergeTicket) { /* the merge kernel's blocks come later: the block's end */
    __syncthreads();
    if (threadIdx.x == 0) {
      PA_DECODE_STAMP_NOW(kTlPartials);
      PA_DECODE_STAMP_NOW(kTlTicket);
    }
  }
#endif
#else
  __trap(); /* pa_cuda_decode_supports() never plans this path below sm_80 */
#endif
}

#endif
