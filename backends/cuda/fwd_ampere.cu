/* The Ampere forward kernel (sm_80+, also run on sm_90): FlashAttention-2 for fp16
 * and bf16 with mma.sync m16n8k16, ldmatrix and cp.async.
 *
 * One block computes `block_q` query rows of one (batch entry, query head); each
 * warp owns 16 or 32 of those rows (one or two mma M tiles, ampere_tune.cuh) and
 * keeps their Q fragments (optionally), S = Q.K^T and the O accumulator in registers. Key tiles of `block_k` rows stream through a
 * two-stage cp.async pipeline: tile n + 1's K and V load while tile n is computed.
 * The online softmax (ampere_softmax.cuh) runs on the S fragments; P goes from the
 * S accumulators straight into A fragments of P.V, without shared memory.
 *
 * Everything but the head dim and dtype is a run-time value: causal, windows,
 * softcap, ALiBi, GQA, varlen, seqused_k, block masks. Key tiles outside the rows'
 * mask range (pa_mask_rows_range) are never loaded; under BLOCK sparsity the kernel
 * visits only the tiles of a list built on the GPU before it (block_list.cuh), so
 * its time falls with density. Per-element masking runs only on tiles that need it.
 *
 * Files: ampere_tune.cuh (the tuning table), ampere_tile.cuh (swizzled tiles,
 * cp.async loads), ampere_mma.cuh (PTX wrappers, fragment layouts),
 * ampere_softmax.cuh (softmax steps on fragments). */
#define PA_CUDA_AMPERE_REAL 1

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <atomic>

#include "block_ctx.cuh"
#include "block_list.cuh"
#include "kernels.h"
#include "mask.h"

#include "ampere_mma.cuh"
#include "ampere_softmax.cuh"
#include "ampere_sp24.cuh"
#include "frag_scores.cuh"
#include "ampere_tile.cuh"
#include "ampere_tune.cuh"

namespace {

/* Commit groups of the K/V pipeline: each tile commits K, then V. The waits below
 * name how many groups may still be in flight. */
enum pa_pipe_pending {
  PENDING_V_OF_TILE = 1, /* K[n] landed; V[n] may be in flight */
  PENDING_NEXT_K_V = 2,  /* V[n] landed; K[n+1], V[n+1] may be in flight */
  PENDING_FIRST_K_V = 2  /* Q landed; K[first], V[first] may be in flight */
};

/* SP24: the NM_2_4 variant (ampere_sp24.cuh): K read in 2:4 group order, the two
 * largest of each group of four kept (sp24_select = 0 keeps the first two: a timing
 * variant that computes something else), softmax on the kept entries only, P.V on
 * mma.sp m16n8k32. */
template <typename T, int D, int V, bool SP24>
__global__ void __launch_bounds__(pa_ampere_cfg<D, V>::threads, pa_ampere_cfg<D, V>::min_blocks)
    pa_ampere_fwd_kernel(const __grid_constant__ pa_problem p, const int32_t *block_list,
                         int sp24_select) {
#if PA_AMPERE_ARCH_OK
  typedef pa_ampere_cfg<D, V> cfg;
  typedef pa_tile_layout<D> layout;
  enum {
    NT = cfg::threads,
    BQ = cfg::block_q,
    BK = cfg::block_k,
    MT = cfg::m_tiles,  /* 16-row M tiles per warp */
    S_TILES = BK / 8,   /* n-tiles of S [16 x BK] per M tile */
    O_TILES = D / 8,    /* n-tiles of O [16 x D] per M tile */
    QK_STEPS = D / 16,  /* mma K steps of Q.K^T */
    PV_STEPS = BK / 16, /* mma K steps of P.V */
    /* A fragments of P per M tile: one per k16 step, or under 2:4 one per k32 step */
    P_STEPS = SP24 ? BK / 32 : BK / 16,
    JOINT = cfg::kv_sync == PA_KV_JOINT
  };
  static_assert(!SP24 || BK % 32 == 0, "2:4: whole mma.sp k32 steps per key tile");
  extern __shared__ __align__(128) unsigned char pa_smem[];

  pa_block_ctx c;
  /* reverse_q: query blocks run last-first; under a causal mask the later rows keep
   * the most keys, and starting them first leaves the short blocks for the grid's tail. */
  const int i0 = (cfg::reverse_q ? gridDim.x - 1 - blockIdx.x : blockIdx.x) * BQ;
  if (!pa_block_ctx_init(c, p, blockIdx.z, blockIdx.y, i0, BQ)) return; /* past the end */
  const int n_lo = (int)(c.klo / BK);
  const int n_hi = c.klo < c.khi ? (int)((c.khi + BK - 1) / BK) : n_lo;

  const float slope = pa_problem_alibi_slope(&p, c.b, c.h);
  const bool general = p.softcap > 0.0f || slope != 0.0f || !(p.scale > 0.0f);
  const float xscale = general ? 1.0f : p.scale * PA_LOG2E;
  /* BLOCK: the key tiles to visit come from the list built before the kernel
   * (block_list.cuh); NULL when there is no block mask. */
  const bool use_block_mask = block_list != nullptr;

  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int t = lane & 3;
  const int wrow = warp * cfg::warp_rows;    /* the warp's first row in the tile */
  const bool warp_active = c.i0 + wrow < c.seq.len_q;

  const T *q_g = (const T *)p.q.ptr + pa_view_row(&p.q, c.b, c.i0, c.seq.q_start, c.h);
  const T *k_g = (const T *)p.k.ptr + pa_view_row(&p.k, c.b, 0, c.seq.k_start, c.hk);
  const T *v_g = (const T *)p.v.ptr + pa_view_row(&p.v, c.b, 0, c.seq.k_start, c.hk);
  const uint32_t s_q = pa_smem_addr(pa_smem);
  const uint32_t s_kv = s_q + cfg::q_bytes; /* stage s: K at + s * stage_bytes, V after K */

  /* Prologue: Q, then the first kept tile's K and V. */
  pa_tile_load<BQ, D, NT>(s_q, q_g, p.q.stride_s, c.seq.len_q - c.i0, p.head_dim,
                          (const T *)p.q.ptr, tid);
  pa_cp_async_commit();
  /* BLOCK: the list entry's per-warp bits (block_list.cuh) of tile n; 0 when dense */
  int32_t *list_s = (int32_t *)(pa_smem + cfg::list_offset);
  int bits = use_block_mask ? pa_block_walk_start<NT>(
                                  list_s, pa_block_walk_slot(block_list, p, c, BQ, BK), tid)
                            : 0;
  int n = use_block_mask ? pa_block_entry_tile(bits) : n_lo;
  auto load_kv = [&](int tile, int stage) {
    /* The per-chunk offsets are loop-invariant; hoisted out of the key loop they
     * would hold ~4 registers per chunk for the whole loop. An opaque copy of tid
     * makes the compiler recompute them here (a few integer ops per chunk). */
    int ltid = tid;
    asm volatile("" : "+r"(ltid));
    const uint32_t s_k = s_kv + stage * cfg::stage_bytes;
    const int rows = c.seq.len_k - tile * BK;
    pa_tile_load<BK, D, NT>(s_k, k_g + (int64_t)tile * BK * p.k.stride_s, p.k.stride_s, rows,
                            p.head_dim, (const T *)p.k.ptr, ltid);
    pa_cp_async_commit();
    pa_tile_load<BK, D, NT>(s_k + cfg::kv_tile_bytes, v_g + (int64_t)tile * BK * p.v.stride_s,
                            p.v.stride_s, rows, p.head_dim_v, (const T *)p.v.ptr, ltid);
    pa_cp_async_commit();
  };
  if (n < n_hi) {
    load_kv(n, 0);
    pa_cp_async_wait<PENDING_FIRST_K_V>();
  } else {
    pa_cp_async_wait<0>();
  }
  __syncthreads();

  const pa_ldsm_lane<D, PA_LDSM_ROW_PAIR> ldsm_rows(lane); /* Q and V */
  const pa_ldsm_lane<D, SP24 ? PA_LDSM_COL_PAIR_24 : PA_LDSM_COL_PAIR> ldsm_cols(lane); /* K */
  const uint32_t s_q_warp = s_q + wrow * layout::chunks * 16; /* the warp's Q rows */
  enum { QF_M = cfg::q_in_regs ? MT : 1, QF_K = cfg::q_in_regs ? QK_STEPS : 1 };
  uint32_t q_frag[QF_M][QF_K][4]; /* Q A-fragments [16 x 16] per M tile and K step */
  if (cfg::q_in_regs) {
#pragma unroll
    for (int mt = 0; mt < QF_M; ++mt)
#pragma unroll
      for (int kk = 0; kk < QF_K; ++kk)
        pa_ldmatrix_x4(q_frag[mt][kk], ldsm_rows.at(s_q_warp, 16 * mt, kk));
  }

  float o[MT][O_TILES][4]; /* O accumulator [16 rows x D] per M tile */
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int d = 0; d < O_TILES; ++d) o[mt][d][0] = o[mt][d][1] = o[mt][d][2] = o[mt][d][3] = 0.0f;
  pa_softmax_row sm[MT][2];
#pragma unroll
  for (int mt = 0; mt < MT; ++mt) sm[mt][0] = sm[mt][1] = pa_softmax_start();

  /* it: the visit count; the K/V stage is it & 1, and the block walk's next list
   * entry it + 1 (one register for both: the hd64 / hd128 rows are at 255). */
  for (int it = 0; n < n_hi; ++it) {
    const int stage = it & 1;
    if (JOINT) pa_cp_async_wait<0>();
    else pa_cp_async_wait<PENDING_V_OF_TILE>();
    __syncthreads(); /* K[n] (JOINT: and V[n]) visible; every warp is done with the other stage */
    /* this warp's rows: all of the tile's mask blocks are 0 (skip) / some are (partial) */
    const bool tile_skip = pa_block_entry_skip(bits, warp);
    const bool tile_partial = pa_block_entry_partial(bits, warp);
    int next = n + 1;
    if (use_block_mask) {
      bits = pa_block_walk_at(list_s, pa_block_walk_slot(block_list, p, c, BQ, BK), it + 1);
      next = pa_block_entry_tile(bits);
    }
    if (next < n_hi) load_kv(next, stage ^ 1);

    const uint32_t s_k = s_kv + stage * cfg::stage_bytes;
    const uint32_t s_v = s_k + cfg::kv_tile_bytes;
    const int k0 = n * BK;
    uint32_t p_frag[MT][P_STEPS][4]; /* P A-fragments [16 rows x 16 keys] per K step of P.V */
    uint32_t p_meta[MT][SP24 ? P_STEPS : 1]; /* 2:4: mma.sp metadata per k32 step */
    if (warp_active && !tile_skip) {
      float s[MT][S_TILES][4]; /* S [16 rows x BK keys] per M tile */
      /* S = Q . K^T */
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int j = 0; j < S_TILES; ++j) s[mt][j][0] = s[mt][j][1] = s[mt][j][2] = s[mt][j][3] = 0.0f;
#pragma unroll
      for (int kk = 0; kk < QK_STEPS; ++kk) {
        uint32_t a[MT][4];
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
          if (cfg::q_in_regs) {
#pragma unroll
            for (int x = 0; x < 4; ++x)
              a[mt][x] = q_frag[cfg::q_in_regs ? mt : 0][cfg::q_in_regs ? kk : 0][x];
          } else {
            pa_ldmatrix_x4(a[mt], ldsm_rows.at(s_q_warp, 16 * mt, kk));
          }
        }
#pragma unroll
        for (int nn = 0; nn < S_TILES / 2; ++nn) {
          uint32_t bk[4]; /* K B-fragments: keys 16nn..+7 and +8..+15, dims 16kk..+15 */
          pa_ldmatrix_x4(bk, ldsm_cols.at(s_k, 16 * nn, kk));
#pragma unroll
          for (int mt = 0; mt < MT; ++mt) {
            pa_mma_16816<T>(s[mt][2 * nn], a[mt], bk[0], bk[1]);
            pa_mma_16816<T>(s[mt][2 * nn + 1], a[mt], bk[2], bk[3]);
          }
        }
      }

      /* Scores and masks; then softmax steps 1-3 of common/softmax.h, per M tile. */
      const bool range = !(c.lo_last <= k0 && c.hi_first >= k0 + BK);
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) {
        pa_frag_scores<S_TILES, SP24>(s[mt], p, c, general, slope, range, tile_partial, k0,
                                      c.i0 + wrow + 16 * mt + (lane >> 2), t);
        if constexpr (SP24) {
          float kept[S_TILES / 2][4]; /* the kept pairs: S's fragment shape, half the n-tiles */
          uint32_t nib[S_TILES / 2];
          pa_sp24_select<S_TILES>(s[mt], kept, nib, sp24_select != 0, t);
          float alpha[2];
          pa_frag_softmax_update_max(sm[mt], kept, xscale, alpha);
          pa_frag_softmax_rescale(sm[mt], alpha, o[mt]);
          pa_frag_softmax_accumulate(sm[mt], kept, xscale);
          pa_sp24_fragments<T, S_TILES / 2>(kept, nib, t, p_frag[mt], p_meta[mt]);
        } else {
          float alpha[2];
          pa_frag_softmax_update_max(sm[mt], s[mt], xscale, alpha);
          pa_frag_softmax_rescale(sm[mt], alpha, o[mt]);
          pa_frag_softmax_accumulate(sm[mt], s[mt], xscale);
          /* P to dtype now, so only half the registers wait across the barrier: the A
           * fragment for keys 16kk..+15 is S n-tiles 2kk (cols 0-7) and 2kk+1 (cols 8-15). */
#pragma unroll
          for (int kk = 0; kk < PV_STEPS; ++kk) {
            p_frag[mt][kk][0] = pa_pack2<T>(s[mt][2 * kk][0], s[mt][2 * kk][1]);
            p_frag[mt][kk][1] = pa_pack2<T>(s[mt][2 * kk][2], s[mt][2 * kk][3]);
            p_frag[mt][kk][2] = pa_pack2<T>(s[mt][2 * kk + 1][0], s[mt][2 * kk + 1][1]);
            p_frag[mt][kk][3] = pa_pack2<T>(s[mt][2 * kk + 1][2], s[mt][2 * kk + 1][3]);
          }
        }
      }
    }

    if (!JOINT) {
      if (next < n_hi) pa_cp_async_wait<PENDING_NEXT_K_V>();
      else pa_cp_async_wait<0>();
      __syncthreads(); /* V[n] visible */
    }

    if (warp_active && !tile_skip) {
      if constexpr (SP24) {
        /* O += P . V on the sparse tensor cores, 32 keys per mma.sp */
#pragma unroll
        for (int q = 0; q < P_STEPS; ++q) {
#pragma unroll
          for (int dd = 0; dd < O_TILES / 2; ++dd) {
            uint32_t v0[4], v1[4]; /* V B-fragments (.trans): keys 32q..+15 and +16..+31 */
            pa_ldmatrix_x4_trans(v0, ldsm_rows.at(s_v, 32 * q, dd));
            pa_ldmatrix_x4_trans(v1, ldsm_rows.at(s_v, 32 * q + 16, dd));
            const uint32_t b_lo[4] = {v0[0], v0[1], v1[0], v1[1]}; /* dims 16dd..+7 */
            const uint32_t b_hi[4] = {v0[2], v0[3], v1[2], v1[3]}; /* dims 16dd+8..+15 */
#pragma unroll
            for (int mt = 0; mt < MT; ++mt) {
              pa_mma_sp_16832<T>(o[mt][2 * dd], p_frag[mt][q], b_lo, p_meta[mt][q]);
              pa_mma_sp_16832<T>(o[mt][2 * dd + 1], p_frag[mt][q], b_hi, p_meta[mt][q]);
            }
          }
        }
      } else {
        /* O += P . V */
#pragma unroll
        for (int kk = 0; kk < PV_STEPS; ++kk) {
#pragma unroll
          for (int dd = 0; dd < O_TILES / 2; ++dd) {
            uint32_t bv[4]; /* V B-fragments (.trans): keys 16kk..+15, dims 16dd..+7 and +8..+15 */
            pa_ldmatrix_x4_trans(bv, ldsm_rows.at(s_v, 16 * kk, dd));
#pragma unroll
            for (int mt = 0; mt < MT; ++mt) {
              pa_mma_16816<T>(o[mt][2 * dd], p_frag[mt][kk], bv[0], bv[1]);
              pa_mma_16816<T>(o[mt][2 * dd + 1], p_frag[mt][kk], bv[2], bv[3]);
            }
          }
        }
      }
    }
    n = next;
  }

  if (!warp_active) return; /* no barrier follows: each warp stages only its own rows */

  /* Step 4: normalise, then O through the warp's own rows of the Q tile (swizzled)
   * into 16-byte stores; LSE by the quad's first thread. */
  float lse[MT][2];
#pragma unroll
  for (int mt = 0; mt < MT; ++mt) pa_frag_softmax_normalise(sm[mt], xscale, o[mt], lse[mt]);
  __syncwarp(); /* this warp's ldmatrix reads of its Q rows are complete */
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
    } else { /* the last, partial chunk of a head dim that is not a multiple of 8 */
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

/* Head-dim buckets compiled; a head dim runs in the smallest bucket >= max(D, Dv). */
const int pa_buckets[] = {32, 64, 96, 128, 192, 256};

int pa_bucket(const pa_problem *p) {
  const int d = p->head_dim > p->head_dim_v ? p->head_dim : p->head_dim_v;
  for (int b : pa_buckets)
    if (d <= b) return b;
  return 0;
}

/* POLYATTN_CUDA_AMPERE_VARIANT (ampere_tune.cuh): read once per process. Unknown
 * names run the default variant (the library never prints). */
const char *const pa_variant_names[PA_VARIANT_COUNT] = {"base",   "m2",     "m2j", "m2k64",
                                                        "m2k64j", "m2k128", "auto"};

int pa_variant() {
  static const int v = [] {
    const char *env = getenv("POLYATTN_CUDA_AMPERE_VARIANT");
    if (!env || !*env) return (int)PA_VARIANT_DEFAULT;
    for (int i = 0; i < PA_VARIANT_COUNT; ++i)
      if (!strcmp(env, pa_variant_names[i])) return i;
    return (int)PA_VARIANT_DEFAULT;
  }();
  return v;
}

/* The (head dim, variant) instantiations compiled: hd64 has the m2j and m2k128 rows,
 * hd128 m2k64 (what "auto" runs), and with PA_CUDA_TUNING_VARIANTS (CMake option
 * POLYATTN_CUDA_TUNING_VARIANTS) also hd64 base and m2, hd128 base, m2 and m2k64j
 * (m2j runs m2's row); a variant without a compiled row runs the head dim's "auto"
 * row. Every other head dim runs its base row, whatever the variant. The callback
 * gets the pair as a type: f(pa_inst<D, V>()) is instantiated for each compiled pair. */
template <int D, int V>
struct pa_inst {
  enum { d = D, v = V };
};

/* "auto": the variant measured fastest per bucket (ampere_tune.cuh); at hd64 the
 * 128-key tiles win without a causal/window mask (bf16 S=4096: 258 against 235
 * TFLOP/s) and lose with one (150 against 180: more tiles straddle the diagonal). */
int pa_auto_variant(int bucket, int banded) {
  if (bucket == 64) return banded ? PA_VARIANT_M2J : PA_VARIANT_M2K128;
  return bucket == 128 ? PA_VARIANT_M2K64 : PA_VARIANT_BASE;
}

int pa_banded(const pa_problem *p) { return p->window_left >= 0 || p->window_right >= 0; }

template <typename F>
auto pa_with_inst(int bucket, int variant, int banded, F &&f) -> decltype(f(pa_inst<32, 0>())) {
  if (variant == PA_VARIANT_AUTO) variant = pa_auto_variant(bucket, banded);
  switch (bucket) {
  case 32: return f(pa_inst<32, PA_VARIANT_BASE>());
  case 64:
#if PA_CUDA_TUNING_VARIANTS
    if (variant == PA_VARIANT_M2) return f(pa_inst<64, PA_VARIANT_M2>());
    if (variant == PA_VARIANT_BASE) return f(pa_inst<64, PA_VARIANT_BASE>());
#endif
    if (variant == PA_VARIANT_M2J) return f(pa_inst<64, PA_VARIANT_M2J>());
    if (variant == PA_VARIANT_M2K128) return f(pa_inst<64, PA_VARIANT_M2K128>());
    return banded ? f(pa_inst<64, PA_VARIANT_M2J>()) : f(pa_inst<64, PA_VARIANT_M2K128>());
  case 96: return f(pa_inst<96, PA_VARIANT_BASE>());
  case 128:
#if PA_CUDA_TUNING_VARIANTS
    if (variant == PA_VARIANT_M2K64J) return f(pa_inst<128, PA_VARIANT_M2K64J>());
    if (variant == PA_VARIANT_M2 || variant == PA_VARIANT_M2J) /* no m2j row: spills */
      return f(pa_inst<128, PA_VARIANT_M2>());
    if (variant == PA_VARIANT_BASE) return f(pa_inst<128, PA_VARIANT_BASE>());
#endif
    return f(pa_inst<128, PA_VARIANT_M2K64>());
  case 192: return f(pa_inst<192, PA_VARIANT_BASE>());
  case 256: return f(pa_inst<256, PA_VARIANT_BASE>());
  }
  return f(pa_inst<0, -1>());
}

int pa_smem_bytes(int bucket, int variant, int banded) {
  return pa_with_inst(bucket, variant, banded, [](auto inst) -> int {
    typedef decltype(inst) I;
    if constexpr (I::d == 0) return 0;
    else return pa_ampere_cfg<I::d, I::v>::smem_bytes;
  });
}

/* Per instantiation: the devices on which the shared-memory opt-in was set. */
template <typename T, int D, int V, bool SP24>
std::atomic<unsigned long long> &pa_smem_opted() {
  static std::atomic<unsigned long long> mask(0);
  return mask;
}

/* BLOCK sparsity with a mask: the kernel walks a key-tile list in the workspace. */
bool pa_uses_block_list(const pa_problem *p) {
  return p->sparsity == POLYATTN_SPARSITY_BLOCK && p->block_mask.buf;
}

/* POLYATTN_CUDA_SP24_SELECT=0: the 2:4 kernel keeps the first two keys of each group
 * instead of the two largest (wrong results; for timing the selection's cost, bench/
 * RESULTS.md). Read once per process. */
int pa_sp24_select_on() {
  static const int on = [] {
    const char *env = getenv("POLYATTN_CUDA_SP24_SELECT");
    return !(env && !strcmp(env, "0"));
  }();
  return on;
}

template <typename T, int D, int V, bool SP24>
cudaError_t pa_launch(const pa_problem *p, void *workspace, cudaStream_t stream) {
  typedef pa_ampere_cfg<D, V> cfg;
  const void *fn = (const void *)pa_ampere_fwd_kernel<T, D, V, SP24>;
  int device = 0;
  cudaError_t e = cudaGetDevice(&device);
  if (e != cudaSuccess) return e;
  const unsigned long long bit = device < 64 ? 1ull << device : 0;
  if (!bit || !(pa_smem_opted<T, D, V, SP24>().load(std::memory_order_acquire) & bit)) {
    e = cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, cfg::smem_bytes);
    if (e != cudaSuccess) return e;
    pa_smem_opted<T, D, V, SP24>().fetch_or(bit, std::memory_order_acq_rel);
  }
  const dim3 grid((unsigned)((p->seqlen_q + cfg::block_q - 1) / cfg::block_q),
                  (unsigned)p->heads_q, (unsigned)p->batch);
  int32_t *list = nullptr;
  if (pa_uses_block_list(p)) {
    if (!workspace) return cudaErrorInvalidValue; /* the plan asked for the list's bytes */
    list = static_cast<int32_t *>(workspace);
    e = pa_block_list_build<cfg::block_q, cfg::block_k, cfg::warp_rows>(p, list, stream);
    if (e != cudaSuccess) return e;
  }
  pa_ampere_fwd_kernel<T, D, V, SP24><<<grid, cfg::threads, cfg::smem_bytes, stream>>>(
      *p, list, pa_sp24_select_on());
  return cudaGetLastError();
}

template <typename T>
cudaError_t pa_launch_bucket(const pa_problem *p, void *workspace, cudaStream_t stream) {
  return pa_with_inst(pa_bucket(p), pa_variant(), pa_banded(p), [&](auto inst) -> cudaError_t {
    typedef decltype(inst) I;
    if constexpr (I::d == 0) return cudaErrorInvalidValue;
    else if (p->sparsity == POLYATTN_SPARSITY_NM_2_4)
      return pa_launch<T, I::d, I::v, true>(p, workspace, stream);
    else return pa_launch<T, I::d, I::v, false>(p, workspace, stream);
  });
}

/* cp.async copies 16-byte chunks from row starts: every q/k/v/o row must be 16-byte
 * aligned (ampere_tile.cuh). */
const char *pa_misaligned(const pa_problem *p) {
  const pa_named_view views[] = {{&p->q, "q"}, {&p->k, "k"}, {&p->v, "v"}, {&p->o, "out"}};
  return pa_first_misaligned_row(views);
}

} /* namespace */

int pa_cuda_ampere_supports(const pa_problem *p, const pa_cuda_device *dev, pa_error *err) {
#define PA_NO(...)                                            \
  do {                                                        \
    if (err) snprintf(err->msg, sizeof err->msg, __VA_ARGS__); \
    return 0;                                                 \
  } while (0)
  {
    /* The shared rules, 2:4 aside: this kernel has the NM_2_4 variant (SP24). */
    pa_problem shared = *p;
    if (shared.sparsity == POLYATTN_SPARSITY_NM_2_4) shared.sparsity = POLYATTN_SPARSITY_NONE;
    if (!pa_tiled_forward_supports(&shared, "Ampere", err)) return 0;
  }
  if (p->dtype != POLYATTN_DTYPE_F16 && p->dtype != POLYATTN_DTYPE_BF16)
    PA_NO("the Ampere kernel takes fp16 or bf16 inputs only");
  if (dev->cc_major < 8)
    PA_NO("the Ampere kernel needs compute capability 8.0 or newer (device is %d.%d)",
          dev->cc_major, dev->cc_minor);
  if (pa_uses_block_list(p) && (p->seqlen_k + 31) / 32 >= (1 << (31 - PA_BLOCK_LIST_N_SHIFT)))
    PA_NO("the Ampere kernel's BLOCK tile list indexes at most 2^15 key tiles (Sk up to 1M)");
  if (const char *name = pa_misaligned(p))
    PA_NO("the Ampere kernel needs 16-byte aligned rows: %s's address and strides must be "
          "multiples of 16 bytes / 8 elements", name);
  const int smem = pa_smem_bytes(pa_bucket(p), pa_variant(), pa_banded(p));
  if ((size_t)smem > dev->smem_optin)
    PA_NO("the Ampere kernel needs %d bytes of shared memory for head dim %d; the device "
          "allows %zu", smem, pa_bucket(p), dev->smem_optin);
#undef PA_NO
  return 1;
}

size_t pa_cuda_ampere_workspace(const pa_problem *p, const pa_cuda_device *dev) {
  (void)dev; /* no split-KV here; BLOCK's key-tile list for the kernel's tile shape */
  if (!pa_uses_block_list(p)) return 0;
  return pa_with_inst(pa_bucket(p), pa_variant(), pa_banded(p), [&](auto inst) -> size_t {
    typedef decltype(inst) I;
    if constexpr (I::d == 0) return 0;
    else return pa_block_list_bytes(p, pa_ampere_cfg<I::d, I::v>::block_q,
                                    pa_ampere_cfg<I::d, I::v>::block_k);
  });
}

cudaError_t pa_cuda_ampere_forward(const pa_problem *p, const pa_cuda_device *dev,
                                   void *workspace, cudaStream_t stream) {
  (void)dev;
  if (p->seqlen_q <= 0 || p->batch <= 0 || p->heads_q <= 0) return cudaSuccess;
#if PA_HAS_MMA_SYNC /* fwd_ampere_pipe.cu: an experimental hd128 schedule (CUDA builds only) */
  if (pa_cuda_ampere_pipe_wanted(p)) return pa_cuda_ampere_pipe_forward(p, stream);
#endif
  if (p->dtype == POLYATTN_DTYPE_BF16) return pa_launch_bucket<__nv_bfloat16>(p, workspace, stream);
  return pa_launch_bucket<__half>(p, workspace, stream);
}
