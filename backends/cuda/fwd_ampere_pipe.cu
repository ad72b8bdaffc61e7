/* An experimental schedule of the Ampere forward kernel (fwd_ampere.cu) for head-dim
 * buckets 64 and 128: each key tile (128 keys at hd64, 64 at hd128) is computed as two
 * halves whose products and softmax steps are interleaved, so that one warp's
 * tensor-core work runs under its own softmax. Selected with POLYATTN_CUDA_AMPERE_PIPE
 * (read at each call: 1; 3 adds the balanced-tree row maxima and one ldmatrix offset
 * per operand, hd64's default row's choices, decisions 115 and 126; 5 is 3 with the
 * halves rotated across tiles on three stages, hd64 only) for dense problems (sparsity
 * NONE) of buckets 64 (33-64) and 128 (97-128); everything else stays on fwd_ampere.cu's
 * kernels. Bucket 64 and settings 3 and 5 were added in the forty-sixth session: at hd64
 * the two 64-key halves fit the 255 registers without spills (hd128's 32-key halves spill
 * 28 bytes, setting 5 116), and the SASS interleaves one half's HMMA with the other's
 * MUFU / FFMA.
 *
 * Why: the default hd128 row (m2k64: 4 warps x 32 query rows, 64-key tiles, 2 blocks
 * per SM, 255 registers) runs at 2 warps per scheduler, and ncu on the H200 found the
 * tensor pipe 45% busy with 54% of cycles issuing nothing (bench/RESULTS.md, second
 * session): inside a warp the order S = Q.K^T, softmax, O += P.V leaves the tensor
 * cores idle during the softmax unless the scheduler's one other warp happens to be
 * in a product. A second S tile in registers (software pipelining across tiles) does
 * not fit beside the 128-register O accumulator; two halves of one tile do (S0, S1:
 * 32 registers each), in this order per tile:
 *   S0 = Q.K0^T                       (mask S0 if the tile needs it)
 *   S1 = Q.K1^T   || softmax(S0) -> P0, alpha0       one basic block each, so ptxas
 *   O *= alpha0                                        can interleave the mma with
 *   O += P0.V0    || softmax(S1) -> P1, alpha1         the FFMA/MUFU of the other
 *   O *= alpha1                                        half
 *   O += P1.V1
 * Rescaling O is skipped when no row of the warp changed its maximum (alpha = 1 for
 * all: x * 1 == x, so the result is the same bits), which after the first tiles is
 * the common case: it saves 128 FMUL per half. K and V of a tile are waited for
 * together (one barrier per tile, m2k64j's schedule), tile n + 1 loading meanwhile.
 *
 * The steps are common/softmax.h's, on fragments (ampere_softmax.cuh); masks and
 * scores are frag_scores.cuh's; the tiles and loads ampere_tile.cuh's.
 *
 * Measured 6-8% slower than m2k64 on the H200 (docs/decisions.md 73), and in the
 * forty-sixth session on an H100 beside the default rows (sustained, decision 137): hd64
 * 14-16% slower (settings 1 and 3; 5: 27%), hd128 24%; so it is a tuning aid: compiled only
 * with the CMake option POLYATTN_CUDA_TUNING_VARIANTS (or -DPA_CUDA_AMPERE_PIPE_BUILD=1
 * on this file, as bench/gpu/s46.sh's module was built), like the other non-default rows
 * of ampere_tune.cuh; without it the variable is ignored. */

#include <stdlib.h>

#include <atomic>

#include "block_ctx.cuh"
#include "kernels.h"
#include "mask.h"

#include "ampere_mma.cuh"
#include "ampere_softmax.cuh"
#include "ampere_tile.cuh"
#include "frag_scores.cuh"

/* compiled only in tuning builds (or with -DPA_CUDA_AMPERE_PIPE_BUILD=1) */
#ifndef PA_CUDA_AMPERE_PIPE_BUILD
#  define PA_CUDA_AMPERE_PIPE_BUILD PA_CUDA_TUNING_VARIANTS
#endif

#if PA_CUDA_AMPERE_PIPE_BUILD
namespace {

/* The shape: m2k64's / m2k128tj's (ampere_tune.cuh), which this schedule replaces;
 * ROT (PV & 2, below) keeps three stages. */
template <int D, int PV = 0>
struct pa_pipe_cfg {
  enum {
    warps = 4,
    threads = 32 * warps,
    m_tiles = 2,              /* 16-row mma M tiles per warp */
    warp_rows = 16 * m_tiles, /* 32 */
    block_q = warp_rows * warps,
    block_k = D == 64 ? 128 : 64, /* m2k128tj's (hd64) and m2k64's (hd128) key tiles */
    half = block_k / 2,           /* keys per half tile */
    min_blocks = 2,
    stages = PV & 2 ? 3 : 2
  };
  static constexpr int q_bytes = block_q * D * 2;
  static constexpr int kv_tile_bytes = block_k * D * 2;
  static constexpr int stage_bytes = 2 * kv_tile_bytes;
  static constexpr int smem_bytes = q_bytes + stages * stage_bytes;
  static_assert(min_blocks * smem_bytes <= 227 * 1024, "two blocks per SM on sm_90");
};

/* PV & 1: the row maxima as balanced trees and one ldmatrix offset per operand and lane
 * (TREE, ONE: hd64's default row's choices); PV & 2: ROT, the halves rotated across
 * tiles on a three-stage ring, so that every softmax runs beside products:
 *   qk(S1 of n) || softmax(S0 of n);  pv(P0 of n), qk(S0 of n + 1) || softmax(S1 of n);
 *   pv(P1 of n), then the next tile's first step (its barrier in the middle of tile n,
 *   where every warp is done with tile n - 1's stage, which takes tile n + 2's load) */
template <typename T, int D, int PV>
__global__ void __launch_bounds__(pa_pipe_cfg<D, PV>::threads, pa_pipe_cfg<D, PV>::min_blocks)
    pa_ampere_pipe_kernel(const __grid_constant__ pa_problem p) {
#if PA_AMPERE_ARCH_OK
  typedef pa_pipe_cfg<D, PV> cfg;
  enum { TREE = PV & 1, ONE = PV & 1, ROT = (PV & 2) != 0 };
  typedef pa_tile_layout<D> layout;
  enum {
    NT = cfg::threads,
    BQ = cfg::block_q,
    BK = cfg::block_k,
    MT = cfg::m_tiles,
    HT = cfg::half / 8,      /* n-tiles of S [16 x 32 keys] per M tile */
    HK = cfg::half / 16,     /* mma K steps of P.V per half */
    O_TILES = D / 8,
    QK_STEPS = D / 16
  };
  extern __shared__ __align__(128) unsigned char pa_smem[];

  pa_block_ctx c;
  const int i0 = (gridDim.x - 1 - blockIdx.x) * BQ; /* last query block first (causal tails) */
  if (!pa_block_ctx_init(c, p, blockIdx.z, blockIdx.y, i0, BQ)) return;
  const int n_lo = (int)(c.klo / BK);
  const int n_hi = c.klo < c.khi ? (int)((c.khi + BK - 1) / BK) : n_lo;

  const float slope = pa_problem_alibi_slope(&p, c.b, c.h);
  const bool general = p.softcap > 0.0f || slope != 0.0f || !(p.scale > 0.0f);
  const float xscale = general ? 1.0f : p.scale * PA_LOG2E;

  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int t = lane & 3;
  const int wrow = warp * cfg::warp_rows;
  const bool warp_active = c.i0 + wrow < c.seq.len_q;

  const T *q_g = (const T *)p.q.ptr + pa_view_row(&p.q, c.b, c.i0, c.seq.q_start, c.h);
  const T *k_g = (const T *)p.k.ptr + pa_view_row(&p.k, c.b, 0, c.seq.k_start, c.hk);
  const T *v_g = (const T *)p.v.ptr + pa_view_row(&p.v, c.b, 0, c.seq.k_start, c.hk);
  const uint32_t s_q = pa_smem_addr(pa_smem);
  const uint32_t s_kv = s_q + cfg::q_bytes; /* stage s: K at + s * stage_bytes, V after K */

  /* Prologue: Q and the first tile's K and V in one group. */
  pa_tile_load<BQ, D, NT>(s_q, q_g, p.q.stride_s, c.seq.len_q - c.i0, p.head_dim,
                          (const T *)p.q.ptr, tid);
  auto load_kv = [&](int tile, int stage) {
    int ltid = tid; /* opaque: keeps the per-chunk offsets out of the loop's registers */
    asm volatile("" : "+r"(ltid));
    const uint32_t s_k = s_kv + stage * cfg::stage_bytes;
    const int rows = c.seq.len_k - tile * BK;
    pa_tile_load<BK, D, NT>(s_k, k_g + (int64_t)tile * BK * p.k.stride_s, p.k.stride_s, rows,
                            p.head_dim, (const T *)p.k.ptr, ltid);
    pa_tile_load<BK, D, NT>(s_k + cfg::kv_tile_bytes, v_g + (int64_t)tile * BK * p.v.stride_s,
                            p.v.stride_s, rows, p.head_dim_v, (const T *)p.v.ptr, ltid);
  };
  int n = n_lo;
  if (n < n_hi) load_kv(n, 0);
  pa_cp_async_commit();

  const pa_ldsm_lane<D, PA_LDSM_ROW_PAIR, ONE> ldsm_rows(lane); /* Q and V */
  const pa_ldsm_lane<D, PA_LDSM_COL_PAIR, ONE> ldsm_cols(lane); /* K */
  const uint32_t s_q_warp = s_q + wrow * layout::chunks * 16;

  float o[MT][O_TILES][4]; /* O accumulator [16 rows x D] per M tile */
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int d = 0; d < O_TILES; ++d) o[mt][d][0] = o[mt][d][1] = o[mt][d][2] = o[mt][d][3] = 0.0f;
  pa_softmax_row sm[MT][2];
#pragma unroll
  for (int mt = 0; mt < MT; ++mt) sm[mt][0] = sm[mt][1] = pa_softmax_start();

  /* S [16 x 32 keys] per M tile = Q . K[key0 .. key0 + 32)^T */
  auto qk = [&](float (&s)[MT][HT][4], uint32_t s_k, int key0) {
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int j = 0; j < HT; ++j) s[mt][j][0] = s[mt][j][1] = s[mt][j][2] = s[mt][j][3] = 0.0f;
#pragma unroll
    for (int kk = 0; kk < QK_STEPS; ++kk) {
      uint32_t a[MT][4];
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) pa_ldmatrix_x4(a[mt], ldsm_rows.at(s_q_warp, 16 * mt, kk));
#pragma unroll
      for (int nn = 0; nn < HT / 2; ++nn) {
        uint32_t bk[4]; /* keys key0 + 16nn .. +15, dims 16kk .. +15 */
        pa_ldmatrix_x4(bk, ldsm_cols.at(s_k, key0 + 16 * nn, kk));
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
          pa_mma_16816<T>(s[mt][2 * nn], a[mt], bk[0], bk[1]);
          pa_mma_16816<T>(s[mt][2 * nn + 1], a[mt], bk[2], bk[3]);
        }
      }
    }
  };
  /* Softmax steps 1 and 3 on one half (l rescaled too; O is rescaled by the caller,
   * after the previous half's P.V), P packed into A fragments. */
  auto soft = [&](float (&s)[MT][HT][4], uint32_t (&pf)[MT][HK][4], float (&alpha)[MT][2]) {
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
      pa_frag_softmax_update_max<HT, TREE>(sm[mt], s[mt], xscale, alpha[mt]);
      pa_softmax_rescale(&sm[mt][0], alpha[mt][0]);
      pa_softmax_rescale(&sm[mt][1], alpha[mt][1]);
      pa_frag_softmax_accumulate(sm[mt], s[mt], xscale);
#pragma unroll
      for (int kk = 0; kk < HK; ++kk) {
        pf[mt][kk][0] = pa_pack2<T>(s[mt][2 * kk][0], s[mt][2 * kk][1]);
        pf[mt][kk][1] = pa_pack2<T>(s[mt][2 * kk][2], s[mt][2 * kk][3]);
        pf[mt][kk][2] = pa_pack2<T>(s[mt][2 * kk + 1][0], s[mt][2 * kk + 1][1]);
        pf[mt][kk][3] = pa_pack2<T>(s[mt][2 * kk + 1][2], s[mt][2 * kk + 1][3]);
      }
    }
  };
  /* O *= alpha, skipped when alpha is 1 for every row of the warp (exact either way). */
  auto rescale_o = [&](const float (&alpha)[MT][2]) {
    bool moved = false;
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) moved |= alpha[mt][0] != 1.0f || alpha[mt][1] != 1.0f;
    if (__any_sync(0xffffffffu, moved)) {
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int d = 0; d < O_TILES; ++d) {
          o[mt][d][0] *= alpha[mt][0];
          o[mt][d][1] *= alpha[mt][0];
          o[mt][d][2] *= alpha[mt][1];
          o[mt][d][3] *= alpha[mt][1];
        }
    }
  };
  /* O += P . V[key0 .. key0 + 32) */
  auto pv = [&](const uint32_t (&pf)[MT][HK][4], uint32_t s_v, int key0) {
#pragma unroll
    for (int kk = 0; kk < HK; ++kk)
#pragma unroll
      for (int dd = 0; dd < O_TILES / 2; ++dd) {
        uint32_t bv[4]; /* keys key0 + 16kk .. +15, dims 16dd .. +15 (.trans) */
        pa_ldmatrix_x4_trans(bv, ldsm_rows.at(s_v, key0 + 16 * kk, dd));
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
          pa_mma_16816<T>(o[mt][2 * dd], pf[mt][kk], bv[0], bv[1]);
          pa_mma_16816<T>(o[mt][2 * dd + 1], pf[mt][kk], bv[2], bv[3]);
        }
      }
  };

  /* whether key tile m needs its masks tested per element (else only `general` masks) */
  auto tile_range = [&](int m) {
    const int k0 = m * BK;
    return !(c.lo_last <= k0 && c.hi_first >= k0 + BK);
  };
  /* scores and masks of the half whose first key is key0 */
  auto mask_half = [&](float (&s)[MT][HT][4], int key0, bool range) {
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
      pa_frag_scores<HT>(s[mt], p, c, general, slope, range, false, key0,
                         c.i0 + wrow + 16 * mt + (lane >> 2), t);
  };
  if constexpr (ROT) {
    /* ROT: tile n in stage (n - n_lo) % 3; tile n + 2's load is issued in the middle of
     * tile n, once every warp is past tile n - 1 */
    if (n + 1 < n_hi) load_kv(n + 1, 1);
    pa_cp_async_commit();
    float s0[MT][HT][4], s1[MT][HT][4];
    uint32_t p0[MT][HK][4], p1[MT][HK][4];
    float a0[MT][2], a1[MT][2];
    int st = 0; /* tile n's stage */
    pa_cp_async_wait<1>();
    __syncthreads(); /* Q, K[n], V[n] visible */
    bool range = false, masked = false;
    auto tile_flags = [&](int m) {
      range = tile_range(m);
      masked = range || general;
    };
    if (warp_active && n < n_hi) {
      tile_flags(n);
      qk(s0, s_kv, 0);
      if (masked) mask_half(s0, n * BK, range);
    }
    for (; n < n_hi; ++n) {
      const uint32_t s_k = s_kv + st * cfg::stage_bytes;
      const uint32_t s_v = s_k + cfg::kv_tile_bytes;
      const int st1 = st == 2 ? 0 : st + 1;
      const bool next = n + 1 < n_hi;
      const bool masked_n = masked, range_n = range;
      if (warp_active) {
        qk(s1, s_k, cfg::half); /* || */
        soft(s0, p0, a0);
        if (masked_n) mask_half(s1, n * BK + cfg::half, range_n);
        rescale_o(a0);
        pv(p0, s_v, 0);
      }
      if (next) {
        pa_cp_async_wait<0>(); /* tile n + 1's group, the last committed */
        __syncthreads(); /* K[n + 1], V[n + 1] visible; every warp is done with tile n - 1 */
        if (n + 2 < n_hi) load_kv(n + 2, st == 0 ? 2 : st - 1);
        pa_cp_async_commit();
        if (warp_active) {
          tile_flags(n + 1);
          qk(s0, s_kv + st1 * cfg::stage_bytes, 0); /* || */
        }
      }
      if (warp_active) {
        soft(s1, p1, a1);
        /* tile n + 1's first half masked once S1 is packed (fewer registers live) */
        if (next && masked) mask_half(s0, (n + 1) * BK, range);
        rescale_o(a1);
        pv(p1, s_v, cfg::half);
      }
      st = st1;
    }
  } else {
    for (int it = 0; n < n_hi; ++it) {
      const int stage = it & 1;
      pa_cp_async_wait<0>();
      __syncthreads(); /* K[n], V[n] (and Q) visible; every warp is done with the other stage */
      if (n + 1 < n_hi) load_kv(n + 1, stage ^ 1);
      pa_cp_async_commit();

      if (warp_active) {
        const uint32_t s_k = s_kv + stage * cfg::stage_bytes;
        const uint32_t s_v = s_k + cfg::kv_tile_bytes;
        const int k0 = n * BK;
        const bool range = tile_range(n);
        const bool masked = range || general;
        float s0[MT][HT][4], s1[MT][HT][4];
        uint32_t p0[MT][HK][4], p1[MT][HK][4];
        float a0[MT][2], a1[MT][2];

        qk(s0, s_k, 0);
        if (masked) mask_half(s0, k0, range);
        qk(s1, s_k, cfg::half); /* || */
        soft(s0, p0, a0);
        if (masked) mask_half(s1, k0 + cfg::half, range);
        rescale_o(a0);
        pv(p0, s_v, 0); /* || */
        soft(s1, p1, a1);
        rescale_o(a1);
        pv(p1, s_v, cfg::half);
      }
      ++n;
    }
  }
  pa_cp_async_wait<0>();

  if (!warp_active) return; /* no barrier follows: each warp stages only its own rows */

  /* Step 4: normalise, then O through the warp's own rows of the Q tile into 16-byte
   * stores; LSE by the quad's first thread (as fwd_ampere.cu). */
  float lse[MT][2];
#pragma unroll
  for (int mt = 0; mt < MT; ++mt) pa_frag_softmax_normalise(sm[mt], xscale, o[mt], lse[mt]);
  __syncwarp();
  unsigned char *stage_o = pa_smem;
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int d = 0; d < O_TILES; ++d)
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        const int srow = wrow + 16 * mt + (lane >> 2) + 8 * r;
        *(uint32_t *)(stage_o + layout::offset(srow, d) + 4 * t) =
            pa_pack2<T>(o[mt][d][2 * r], o[mt][d][2 * r + 1]);
      }
  __syncwarp();

  T *o_g = (T *)p.o.ptr;
  const int dv = p.head_dim_v;
#pragma unroll
  for (int it = 0; it < cfg::warp_rows * layout::chunks / 32; ++it) {
    const int x = lane + 32 * it;
    const int r = x / layout::chunks, chunk = x % layout::chunks;
    const int i = c.i0 + wrow + r;
    if (i >= c.seq.len_q || chunk * 8 >= dv) continue;
    const unsigned char *src = stage_o + layout::offset(wrow + r, chunk);
    T *dst = o_g + pa_view_row(&p.o, c.b, i, c.seq.q_start, c.h) + chunk * 8;
    if (chunk * 8 + 8 <= dv) {
      *(uint4 *)dst = *(const uint4 *)src;
    } else {
      for (int k = 0; chunk * 8 + k < dv; ++k) dst[k] = ((const T *)src)[k];
    }
  }

  if (p.lse.buf && t == 0) {
    float *lse_g = (float *)p.lse.ptr;
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        const int i = c.i0 + wrow + 16 * mt + (lane >> 2) + 8 * r;
        if (i < c.seq.len_q) lse_g[pa_lse_index(&p.lse, c.b, c.h, i, c.seq.q_start)] = lse[mt][r];
      }
  }
#else
  __trap(); /* never launched: pa_cuda_ampere_supports() requires sm_80 */
#endif
}

template <typename T, int D, int PV>
cudaError_t pa_pipe_launch(const pa_problem *p, cudaStream_t stream) {
  typedef pa_pipe_cfg<D, PV> cfg;
  static std::atomic<unsigned long long> opted(0);
  int device = 0;
  cudaError_t e = cudaGetDevice(&device);
  if (e != cudaSuccess) return e;
  const unsigned long long bit = device < 64 ? 1ull << device : 0;
  if (!bit || !(opted.load(std::memory_order_acquire) & bit)) {
    e = cudaFuncSetAttribute(pa_ampere_pipe_kernel<T, D, PV>,
                             cudaFuncAttributeMaxDynamicSharedMemorySize, cfg::smem_bytes);
    if (e != cudaSuccess) return e;
    opted.fetch_or(bit, std::memory_order_acq_rel);
  }
  const dim3 grid((unsigned)((p->seqlen_q + cfg::block_q - 1) / cfg::block_q),
                  (unsigned)p->heads_q, (unsigned)p->batch);
  pa_ampere_pipe_kernel<T, D, PV><<<grid, cfg::threads, cfg::smem_bytes, stream>>>(*p);
  return cudaGetLastError();
}

} /* namespace */
#endif

/* POLYATTN_CUDA_AMPERE_PIPE=1 or 3 (5: bucket 64 only; read at each call), a dense
 * problem, and the head-dim bucket 64 (max(D, Dv) in 33..64) or 128 (97..128). pa_cuda_ampere_supports()
 * has already accepted the problem (dtype, arch, alignment; this kernel's shared memory
 * is the m2k128tj / m2k64 row's minus the block list's). Returns the setting, 0 if off. */
int pa_cuda_ampere_pipe_wanted(const pa_problem *p) {
  if (!PA_CUDA_AMPERE_PIPE_BUILD || p->sparsity != POLYATTN_SPARSITY_NONE) return 0;
  const char *env = getenv("POLYATTN_CUDA_AMPERE_PIPE");
  const int on = env && *env ? atoi(env) : 0;
  const int d = p->head_dim > p->head_dim_v ? p->head_dim : p->head_dim_v;
  return ((on == 1 || on == 3) && ((d > 32 && d <= 64) || (d > 96 && d <= 128))) ||
                 (on == 5 && d > 32 && d <= 64)
             ? on
             : 0;
}

/* `on`: pa_cuda_ampere_pipe_wanted()'s setting (1, 3 or 5) */
cudaError_t pa_cuda_ampere_pipe_forward(const pa_problem *p, int on, cudaStream_t stream) {
#if PA_CUDA_AMPERE_PIPE_BUILD
  const int d = p->head_dim > p->head_dim_v ? p->head_dim : p->head_dim_v;
  const bool bf16 = p->dtype == POLYATTN_DTYPE_BF16;
  if (d <= 64) {
    if (on == 3)
      return bf16 ? pa_pipe_launch<__nv_bfloat16, 64, 1>(p, stream)
                  : pa_pipe_launch<__half, 64, 1>(p, stream);
    if (on == 5)
      return bf16 ? pa_pipe_launch<__nv_bfloat16, 64, 3>(p, stream)
                  : pa_pipe_launch<__half, 64, 3>(p, stream);
    return bf16 ? pa_pipe_launch<__nv_bfloat16, 64, 0>(p, stream)
                : pa_pipe_launch<__half, 64, 0>(p, stream);
  }
  return bf16 ? pa_pipe_launch<__nv_bfloat16, 128, 0>(p, stream)
              : pa_pipe_launch<__half, 128, 0>(p, stream);
#else
  (void)p;
  (void)on;
  (void)stream;
  return cudaErrorNotSupported; /* never called: pa_cuda_ampere_pipe_wanted() is 0 */
#endif
}
