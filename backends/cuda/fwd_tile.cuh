/* The forward tile loop, FlashAttention-2 style, written once for every matrix
 * instruction set: the CUDA Ampere kernel (fwd_ampere.cu, mma.sync) and the HIP
 * module's MFMA kernel (backends/hip/fwd_mfma.cu) are two instances of it, with
 * different fragment layers L (ampere_frag.cuh, backends/hip/mfma_frag.cuh).
 *
 * One block computes L::block_q query rows of one (batch entry, query head); each
 * warp (L::lanes lanes: a CUDA warp, an AMD wavefront) owns L::warp_rows of them as
 * L::m_tiles fragment tiles and keeps S, P and the O accumulator in registers. Key
 * tiles of L::block_k rows go through shared memory, L::stages deep: with two
 * stages, tile n + 1 is loaded while tile n is computed. Per tile:
 *   S = Q . K^T                 L's product
 *   scores and masks            pa_tile_scores (frag_scores.cuh): scale, softcap,
 *                               ALiBi, causal / window / length range, block mask
 *   online softmax 1-3          frag_softmax.cuh on L's fragment maps
 *   P                           L::to_p: S's registers as the operand of P.V
 *   O += P . V                  L's product
 * and at the end step 4 (normalise, LSE) and L::store. Key tiles outside the rows'
 * mask range (pa_mask_rows_range) are never loaded; under BLOCK sparsity the loop
 * visits only the tiles of a list built on the GPU before it (block_list.cuh), so
 * its time falls with density. Per-element masking runs only on tiles that need it.
 * Everything but L (head dim, dtype, tile shape) is a run-time value.
 *
 * What a fragment layer L provides (the wave width is L::lanes; nothing here
 * depends on it otherwise):
 *   lanes threads block_q block_k m_tiles m_rows warp_rows   the shape
 *   joint        1: one barrier per tile (K and V waited together); 0: a second
 *                barrier before P.V (V may still be in flight during S)
 *   reverse_q    query blocks last-first (causal: the longest first)
 *   tree_max     1: the row maxima as balanced trees (frag_softmax.cuh TREE)
 *   keep_max     1: the softmax's kept maximum (frag_softmax.cuh pa_tile_softmax_keep,
 *                p <= 2^8; O rescaled only where a row's reference moved; its maps
 *                then need F::any, the warp's vote)
 *   rowsum       1: the row sums l by the matrix unit: step 3 computes the exponentials
 *                only, and warp_ops::pv(o, p, v_tile, ls) also returns P times ones, each
 *                lane its rows' whole sums of the tile's rounded P (ls[mt][2r], o_map's
 *                layout; o_map::rows == 2), added to l; step 4 then takes one lane's l
 *   stages       1 or 2 K/V buffers; list_offset: the block list's shared bytes
 *   s_map x_map o_map   fragment maps (frag_softmax.cuh, frag_scores.cuh) of S, of
 *                the softmax operand (S, or what a selection keeps of it) and of O
 *   s_frag x_frag o_frag q_frag p_frag select_t   the register fragments
 *   thread_row(lane), key_lane(lane)   the lane's parts of row and key (F::row, F::key)
 *   stage        operand staging: load_q, load_kv(tile, stage), the pipeline waits
 *                (wait_first, wait_all, wait_tile, wait_v), k_tile(stage), v_tile(k)
 *   warp_ops     load_q(q), qk(s, q, k_tile), pv(o, p, v_tile)
 *   softmax_operand(s, sel, sp24_select, key_t)   S, or its selection (2:4)
 *   to_p(x, sel, p, key_t), store(p, c, smem, wrow, lane, key_t, o, lse) */
#ifndef PA_CUDA_FWD_TILE_CUH
#define PA_CUDA_FWD_TILE_CUH

#include "block_ctx.cuh"
#include "block_list.cuh"
#include "frag_scores.cuh"
#include "frag_softmax.cuh"
#include "mask.h"

/* The body of a forward kernel: each backend's __global__ function (its name, launch
 * bounds, target guard) calls this with its layer and the dynamic shared memory. */
template <typename L>
__device__ __forceinline__ void pa_fwd_tile(const pa_problem &p, const int32_t *block_list,
                                            int sp24_select, unsigned char *smem) {
  enum {
    NT = L::threads,
    BQ = L::block_q,
    BK = L::block_k,
    MT = L::m_tiles,
    JOINT = L::joint
  };
  typedef typename L::s_map s_map;
  typedef typename L::x_map x_map;
  typedef typename L::o_map o_map;
  static_assert(x_map::rows == o_map::rows, "the softmax rows are O's rows");
  static_assert(L::stages == 1 || L::stages == 2, "one or two K/V stages");
  static_assert(!L::spread_kv || (L::stages == 2 && !L::xpv && !L::late_kv),
                "spread_kv: two stages, the copies in the plain order's Q.K^T only");

  pa_block_ctx c;
  /* reverse_q: query blocks run last-first; under a causal mask the later rows keep
   * the most keys, and starting them first leaves the short blocks for the grid's tail. */
  const int i0 = (L::reverse_q ? gridDim.x - 1 - blockIdx.x : blockIdx.x) * BQ;
  if (!pa_block_ctx_init(c, p, blockIdx.z, blockIdx.y, i0, BQ)) return; /* past the end */
  const int n_lo = (int)(c.klo / BK);
  const int n_hi = c.klo < c.khi ? (int)((c.khi + BK - 1) / BK) : n_lo;

  const float slope = pa_problem_alibi_slope(&p, c.b, c.h);
  const bool general = p.softcap > 0.0f || slope != 0.0f || !(p.scale > 0.0f);
  const float xscale = general ? 1.0f : p.scale * PA_LOG2E;
  /* BLOCK: the key tiles to visit come from the list built before the kernel
   * (block_list.cuh); NULL when there is no block mask. */
  const bool use_block_mask = block_list != nullptr;

  const int tid = threadIdx.x, warp = tid / L::lanes, lane = tid % L::lanes;
  const int key_t = L::key_lane(lane);
  const int wrow = warp * L::warp_rows; /* the warp's first row in the tile */
  const bool warp_active = c.i0 + wrow < c.seq.len_q;

  typename L::stage st(p, c, smem, tid);

  /* Prologue: Q, then the first kept tile's K and V. */
  st.load_q();
  /* BLOCK: the list entry's per-warp bits (block_list.cuh) of tile n; 0 when dense */
  int32_t *list_s = (int32_t *)(smem + L::list_offset);
  int bits = use_block_mask ? pa_block_walk_start<NT>(
                                  list_s, pa_block_walk_slot(block_list, p, c, BQ, BK), tid)
                            : 0;
  int n = use_block_mask ? pa_block_entry_tile(bits) : n_lo;
  /* mask_guard (decision 144): each entry's row-group bits shifted to this warp's when it is
   * read, so the loop tests bits 0 and 8 and holds no per-warp masks (ptxas keeps two for
   * the whole loop otherwise: spilled at hd64, two local loads per tile without a mask) */
  if (L::mask_guard) bits = pa_block_entry_for(bits, warp);
  if (n < n_hi) {
    st.load_kv(n, 0);
    st.wait_first();
  } else {
    st.wait_all();
  }
  __syncthreads();

  const typename L::warp_ops w(st, wrow, lane);
  typename L::q_frag q;
  w.load_q(q);

  typename L::o_frag o[MT]; /* O accumulator per M tile */
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int k = 0; k < o_map::elems / 2; ++k)
#pragma unroll
      for (int r = o_map::rows - 1; r >= 0; --r)
        o_map::at(o[mt], r, k, 0) = o_map::at(o[mt], r, k, 1) = 0.0f;
  pa_softmax_row sm[MT][x_map::rows];
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int r = x_map::rows - 1; r >= 0; --r) sm[mt][r] = pa_softmax_start();

  /* it: the visit count; the K/V stage is it & 1, and the block walk's next list
   * entry it + 1 (one register for both: the hd64 / hd128 rows are at 255). */
  for (int it = 0; n < n_hi; ++it) {
    const int stage = L::stages == 2 ? it & 1 : 0;
    st.wait_tile();
    __syncthreads(); /* K[n] (JOINT: and V[n]) visible; every warp is done with the other stage */
    /* this warp's rows: all of the tile's mask blocks are 0 (skip) / some are (partial).
     * mask_guard: bits already holds this warp's bits as group 0's */
    const int g = L::mask_guard ? 0 : warp;
    const bool tile_skip = pa_block_entry_skip(bits, g);
    const bool tile_partial = pa_block_entry_partial(bits, g);
    int next = n + 1;
    if (use_block_mask) {
      bits = pa_block_walk_at(list_s, pa_block_walk_slot(block_list, p, c, BQ, BK), it + 1);
      next = pa_block_entry_tile(bits);
      if (L::mask_guard) bits = pa_block_entry_for(bits, warp);
    }
    /* busy: this warp has rows and products on the tile. late_kv (decision 143): a busy warp
     * copies the next tile after its Q.K^T is issued; the others copy it here */
    const bool busy = warp_active && !tile_skip;
    /* spread_kv (decision 144): a busy warp issues a whole next tile's copies in parts
     * between its Q.K^T's k16 steps, not as one burst ahead of its first ldmatrix */
    bool spread = false;
    if constexpr (L::spread_kv) spread = busy && next < n_hi && st.whole(next);
    if (L::stages == 2 && (!L::late_kv || !busy) && !spread && next < n_hi)
      st.load_kv(next, stage ^ 1);

    const auto s_k = st.k_tile(stage);
    const auto s_v = st.v_tile(s_k);
    const int k0 = n * BK;
    /* the score pass (scores and masks) on M tile mt's S */
    const auto score_pass = [&](typename L::s_frag &sf, int mt, bool range) {
      pa_tile_scores<s_map>(sf, p, c, general, slope, range, tile_partial, k0,
                            c.i0 + wrow + L::m_rows * mt + L::thread_row(lane), key_t);
    };
    typename L::p_frag pf[MT]; /* P as the operand of P.V */
    if constexpr (L::xpv) {
      /* Step 3 in P.V's k16 steps (decision 142): steps 1-2 for every M tile, V's barrier,
       * then per key step the exponentials of its P fragments and its products, so that one
       * step's exponentials can issue beside the previous step's mma. */
      typename L::s_frag s[MT]; /* S per M tile, P in place once step 3 has run */
      if (warp_active && !tile_skip) {
        w.qk(s, q, s_k);
        const bool range = !(c.lo_last <= k0 && c.hi_first >= k0 + BK);
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
          score_pass(s[mt], mt, range);
          float alpha[x_map::rows];
          if constexpr (L::keep_max != 0) {
            if (pa_tile_softmax_keep_ref<x_map>(sm[mt], s[mt], xscale, PA_SOFTMAX_KEEP_LOG2,
                                                alpha))
              pa_tile_softmax_rescale_acc<o_map>(alpha, o[mt]);
          } else {
            pa_tile_softmax_update_max<x_map, L::tree_max != 0>(sm[mt], s[mt], xscale, alpha);
            pa_tile_softmax_rescale<o_map>(sm[mt], alpha, o[mt]);
          }
        }
      }
      if (!JOINT) {
        st.wait_v(next < n_hi);
        __syncthreads(); /* V[n] visible */
      }
      if (warp_active && !tile_skip) {
        float sum[MT][x_map::rows] = {}; /* the tile's row sums of p (without rowsum) */
        float ls[MT][4] = {};               /* the tile's row sums of P (rowsum) */
#pragma unroll
        for (int kk = 0; kk < L::PV_STEPS; ++kk) {
#pragma unroll
          for (int mt = 0; mt < MT; ++mt) {
            pa_tile_softmax_exp_range<x_map, !L::rowsum>(sm[mt], s[mt], xscale, 2 * kk,
                                                          2 * kk + 2, sum[mt]);
            L::to_p_step(s[mt], pf[mt], kk);
          }
          w.template pv_step<L::rowsum != 0>(o, pf, s_v, ls, kk);
        }
#pragma unroll
        for (int mt = 0; mt < MT; ++mt)
#pragma unroll
          for (int r = 0; r < x_map::rows; ++r) /* rowsum: ls[mt][2r] is row r (2 rows) */
            pa_softmax_accumulate(&sm[mt][r], L::rowsum ? ls[mt][2 * r] : sum[mt][r]);
      }
    } else {
      if (warp_active && !tile_skip) {
        typename L::s_frag s[MT]; /* S per M tile */
        if constexpr (L::spread_kv) {
          w.qk(s, q, s_k, [&](int kk) {
            if (spread) st.load_kv_part(next, stage ^ 1, kk);
          });
        } else {
          w.qk(s, q, s_k);
        }
        if (L::late_kv && L::stages == 2 && next < n_hi) st.load_kv(next, stage ^ 1);

        /* Scores and masks; then softmax steps 1-3 of common/softmax.h, per M tile. */
        const bool range = !(c.lo_last <= k0 && c.hi_first >= k0 + BK);
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
          score_pass(s[mt], mt, range);
          typename L::select_t sel;
          typename L::x_frag &x = L::softmax_operand(s[mt], sel, sp24_select, key_t);
          float alpha[x_map::rows];
          if constexpr (L::keep_max != 0) {
            /* the kept maximum: O is rescaled only on tiles where some row's m moved */
            if (pa_tile_softmax_keep<x_map, 0, !L::rowsum>(sm[mt], x, xscale,
                                                            PA_SOFTMAX_KEEP_LOG2, alpha))
              pa_tile_softmax_rescale_acc<o_map>(alpha, o[mt]);
          } else {
            pa_tile_softmax_update_max<x_map, L::tree_max != 0>(sm[mt], x, xscale, alpha);
            pa_tile_softmax_rescale<o_map>(sm[mt], alpha, o[mt]);
            pa_tile_softmax_accumulate<x_map, false, 0, !L::rowsum>(sm[mt], x, xscale);
          }
          L::to_p(x, sel, pf[mt], key_t);
        }
      }

      if (!JOINT) {
        st.wait_v(next < n_hi);
        __syncthreads(); /* V[n] visible */
      }

      if (warp_active && !tile_skip) {
        if constexpr (L::rowsum) {
          float ls[MT][4]; /* the tile's row sums of P (rowsum) */
          w.pv(o, pf, s_v, ls);
#pragma unroll
          for (int mt = 0; mt < MT; ++mt)
#pragma unroll
            for (int r = 0; r < 2; ++r) pa_softmax_accumulate(&sm[mt][r], ls[mt][2 * r]);
        } else {
          w.pv(o, pf, s_v);
        }
      }
    }
    if (L::stages == 1 && next < n_hi) {
      __syncthreads(); /* every warp is done with the only stage */
      st.load_kv(next, 0);
    }
    n = next;
  }

  if (!warp_active) return; /* no barrier follows: each warp stores only its own rows */

  /* Step 4: normalise; then the layer's epilogue stores O and LSE. */
  float lse[MT][o_map::rows];
  if constexpr (L::rowsum) { /* every lane of a row holds its whole l: the lanes' sum takes one */
    static_assert(o_map::rows == 2, "rowsum: ls[mt][2r] is row r of the mma C layout");
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int r = 0; r < 2; ++r) sm[mt][r].l = key_t == 0 ? sm[mt][r].l : 0.0f;
  }
#pragma unroll
  for (int mt = 0; mt < MT; ++mt) pa_tile_softmax_normalise<o_map>(sm[mt], xscale, o[mt], lse[mt]);
  L::store(p, c, smem, wrow, lane, key_t, o, lse);
}

#endif
