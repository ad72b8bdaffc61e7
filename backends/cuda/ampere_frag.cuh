/* The Ampere fragment layer of the forward tile loop (fwd_tile.cuh): mma.sync
 * m16n8k16 fragments, ldmatrix reads of swizzled tiles (ampere_tile.cuh), a
 * two-stage cp.async K/V pipeline, and the 2:4 variant (SP24: mma.sp m16n8k32,
 * ampere_sp24.cuh), which exists only here: AMD's matrix layer has no sparse
 * product in the targets this project builds (backends/hip/README.md).
 *
 * A warp owns m_tiles M tiles of 16 query rows; per M tile it holds
 *   S [16 rows x BK keys]  float[BK / 8][4]  mma C layout (pa_quad_map)
 *   O [16 rows x D]        float[D / 8][4]   the same layout
 *   P                      the A fragments of P.V, [16 rows x 16 keys] per k16 step
 *                          (2:4: [16 x 32] compressed per k32 step, plus metadata)
 * S goes to P without shared memory: the A fragment for keys 16kk..+15 is S
 * n-tiles 2kk (cols 0-7) and 2kk + 1 (cols 8-15). */
#ifndef PA_CUDA_AMPERE_FRAG_CUH
#define PA_CUDA_AMPERE_FRAG_CUH

#include "ampere_mma.cuh"
#include "ampere_softmax.cuh"
#include "ampere_sp24.cuh"
#include "ampere_tile.cuh"
#include "ampere_tune.cuh"
#include "block_ctx.cuh"

/* Commit groups of the K/V pipeline: each tile commits K, then V. The waits below
 * name how many groups may still be in flight. */
enum pa_pipe_pending {
  PENDING_V_OF_TILE = 1, /* K[n] landed; V[n] may be in flight */
  PENDING_NEXT_K_V = 2,  /* V[n] landed; K[n+1], V[n+1] may be in flight */
  PENDING_FIRST_K_V = 2  /* Q landed; K[first], V[first] may be in flight */
};

template <typename T, int D, int V, bool SP24>
struct pa_ampere_frag {
  typedef pa_ampere_cfg<D, V> cfg;
  typedef pa_tile_layout<D> layout;
  enum {
    lanes = 32,
    threads = cfg::threads,
    block_q = cfg::block_q,
    block_k = cfg::block_k,
    m_tiles = cfg::m_tiles, /* 16-row M tiles per warp */
    m_rows = 16,
    warp_rows = cfg::warp_rows,
    joint = cfg::kv_sync == PA_KV_JOINT,
    reverse_q = cfg::reverse_q,
    tree_max = cfg::tree_max,
    keep_max = cfg::keep_max,
    xpv = cfg::xpv && !SP24, /* step 3 in k16 steps between P.V's (fwd_tile.cuh; decision 142) */
    late_kv = cfg::late_kv, /* the next tile's copies after Q.K^T (fwd_tile.cuh; decision 143) */
    mask_guard = cfg::mask_guard, /* block-mask bits shifted per warp (fwd_tile.cuh; dec. 144) */
    /* a whole next tile's copies in parts between Q.K^T's k16 steps (fwd_tile.cuh; decision
     * 144); only where the whole-tile copies exist */
    spread_kv = cfg::spread_kv && pa_tile_full_shape<cfg::block_k, D, cfg::threads>::ok,
    rowsum = cfg::rowsum && !SP24, /* l by the tensor cores (warp_ops::pv's ls); not on mma.sp */
    stages = cfg::stages,
    list_offset = cfg::list_offset,
    S_TILES = block_k / 8,   /* n-tiles of S [16 x BK] per M tile */
    O_TILES = D / 8,         /* n-tiles of O [16 x D] per M tile */
    QK_STEPS = D / 16,       /* mma K steps of Q.K^T */
    PV_STEPS = block_k / 16, /* mma K steps of P.V */
    /* A fragments of P per M tile: one per k16 step, or under 2:4 one per k32 step */
    P_STEPS = SP24 ? block_k / 32 : block_k / 16,
    QF_M = cfg::q_in_regs ? m_tiles : 1,
    QF_K = cfg::q_in_regs ? QK_STEPS : 1
  };
  static_assert(stages == 2, "the cp.async pipeline has two stages");
  static_assert(!SP24 || block_k % 32 == 0, "2:4: whole mma.sp k32 steps per key tile");

  typedef pa_quad_map<S_TILES, SP24> s_map; /* the score pass */
  /* the softmax operand: S, or under 2:4 the kept pair of each group (half the n-tiles) */
  typedef pa_quad_map<SP24 ? S_TILES / 2 : S_TILES> x_map;
  typedef pa_quad_map<O_TILES> o_map;
  typedef typename s_map::frag s_frag;
  typedef typename x_map::frag x_frag;
  typedef typename o_map::frag o_frag;
  typedef uint32_t q_frag[QF_M][QF_K][4]; /* Q A-fragments [16 x 16] per M tile and K step */
  struct p_frag {
    uint32_t a[P_STEPS][4];            /* P A-fragments [16 rows x 16 keys] per K step of P.V */
    uint32_t meta[SP24 ? P_STEPS : 1]; /* 2:4: mma.sp metadata per k32 step */
  };
  /* 2:4: where the softmax operand lives (the kept pairs) and their nibbles */
  struct select_t {
    float kept[SP24 ? S_TILES / 2 : 1][4];
    uint32_t nib[SP24 ? S_TILES / 2 : 1];
  };

  /* rows g, g + 8 of an M tile; the key part t */
  __device__ __forceinline__ static int thread_row(int lane) { return lane >> 2; }
  __device__ __forceinline__ static int key_lane(int lane) { return lane & 3; }

  /* ---- operand staging: Q, then K and V tiles through shared memory by cp.async.
   * Shared memory: [Q][K0][V0][K1][V1][block list head] (pa_ampere_cfg). */
  struct stage {
    const pa_problem &p;
    const pa_block_ctx &c;
    const int tid;
    const T *q_g, *k_g, *v_g;
    uint32_t s_q, s_kv; /* stage s: K at s_kv + s * stage_bytes, V after K */

    __device__ __forceinline__ stage(const pa_problem &p_, const pa_block_ctx &c_,
                                     unsigned char *smem, int tid_)
        : p(p_), c(c_), tid(tid_) {
      q_g = (const T *)p.q.ptr + pa_view_row(&p.q, c.b, c.i0, c.seq.q_start, c.h);
      k_g = (const T *)p.k.ptr + pa_view_row(&p.k, c.b, 0, c.seq.k_start, c.hk);
      v_g = (const T *)p.v.ptr + pa_view_row(&p.v, c.b, 0, c.seq.k_start, c.hk);
      s_q = pa_smem_addr(smem);
      s_kv = s_q + cfg::q_bytes;
    }
    __device__ __forceinline__ void load_q() {
      pa_tile_load<block_q, D, threads>(s_q, q_g, p.q.stride_s, c.seq.len_q - c.i0, p.head_dim,
                                        (const T *)p.q.ptr, tid);
      pa_cp_async_commit();
    }
    __device__ __forceinline__ void load_kv(int tile, int st) {
      /* The per-chunk offsets are loop-invariant; hoisted out of the key loop they
       * would hold ~4 registers per chunk for the whole loop. An opaque copy of tid
       * makes the compiler recompute them here: ~6 instructions per copy on the
       * whole-tile path, ~33 on the general one (bench/RESULTS.md, fourteenth session). */
      int ltid = tid;
      asm volatile("" : "+r"(ltid));
      const uint32_t s_k = s_kv + st * cfg::stage_bytes;
      const int rows = c.seq.len_k - tile * block_k;
      const T *k_t = k_g + (int64_t)tile * block_k * p.k.stride_s;
      const T *v_t = v_g + (int64_t)tile * block_k * p.v.stride_s;
      /* A whole tile (every row inside the sequence, head dims = the bucket) takes the
       * copies without bounds tests (pa_tile_load_full); a tile-uniform branch. */
      if constexpr (pa_tile_full_shape<block_k, D, threads>::ok) {
        if (rows >= block_k && p.head_dim == D && p.head_dim_v == D) {
          pa_tile_load_full<block_k, D, threads>(s_k, k_t, p.k.stride_s, (unsigned)ltid);
          pa_cp_async_commit();
          pa_tile_load_full<block_k, D, threads>(s_k + cfg::kv_tile_bytes, v_t, p.v.stride_s,
                                                 (unsigned)ltid);
          pa_cp_async_commit();
          return;
        }
      }
      pa_tile_load<block_k, D, threads>(s_k, k_t, p.k.stride_s, rows, p.head_dim,
                                        (const T *)p.k.ptr, ltid);
      pa_cp_async_commit();
      pa_tile_load<block_k, D, threads>(s_k + cfg::kv_tile_bytes, v_t, p.v.stride_s, rows,
                                        p.head_dim_v, (const T *)p.v.ptr, ltid);
      pa_cp_async_commit();
    }
    /* spread_kv: tile `tile` takes pa_tile_load_full's copies (every row inside the sequence,
     * head dims = the bucket). load_kv keeps its own form of the test: calling this there
     * reorders the defaults' PTX (fifty-first session), which no measurement has covered. */
    __device__ __forceinline__ bool whole(int tile) const {
      return c.seq.len_k - tile * block_k >= block_k && p.head_dim == D && p.head_dim_v == D;
    }
    /* spread_kv: part j of a whole tile's copies, one part per Q.K^T k16 step (QK_STEPS
     * parts): K's passes in the first half of the parts, V's in the second, each half
     * committed after its last part, so the groups are load_kv's (K, then V) */
    __device__ __forceinline__ void load_kv_part(int tile, int st, int j) {
      enum {
        half = QK_STEPS / 2,
        passes = pa_tile_full_shape<block_k, D, threads>::passes,
        per = passes / half
      };
      static_assert(QK_STEPS % 2 == 0 && passes % half == 0, "whole passes per part");
      int ltid = tid; /* opaque, as in load_kv: the offsets recomputed, not held */
      asm volatile("" : "+r"(ltid));
      const bool is_v = j >= half;
      const int jj = is_v ? j - half : j;
      const uint32_t s_t = s_kv + st * cfg::stage_bytes + (is_v ? cfg::kv_tile_bytes : 0);
      const int64_t stride = is_v ? p.v.stride_s : p.k.stride_s;
      const T *g = (is_v ? v_g : k_g) + (int64_t)tile * block_k * stride;
      pa_tile_load_full<block_k, D, threads>(s_t, g, stride, (unsigned)ltid, jj * per,
                                             jj * per + per);
      if (jj == half - 1) pa_cp_async_commit();
    }
    /* the prologue: Q and the first tile's K and V in flight (first) or nothing */
    __device__ __forceinline__ void wait_first() { pa_cp_async_wait<PENDING_FIRST_K_V>(); }
    __device__ __forceinline__ void wait_all() { pa_cp_async_wait<0>(); }
    /* top of a tile: K[n] landed (joint: and V[n]) */
    __device__ __forceinline__ void wait_tile() {
      if (joint) pa_cp_async_wait<0>();
      else pa_cp_async_wait<PENDING_V_OF_TILE>();
    }
    /* split schedule, before P.V: V[n] landed */
    __device__ __forceinline__ void wait_v(bool more) {
      if (more) pa_cp_async_wait<PENDING_NEXT_K_V>();
      else pa_cp_async_wait<0>();
    }
    __device__ __forceinline__ uint32_t k_tile(int st) const { return s_kv + st * cfg::stage_bytes; }
    __device__ __forceinline__ static uint32_t v_tile(uint32_t k) { return k + cfg::kv_tile_bytes; }
  };

  /* ---- one warp's products */
  struct warp_ops {
    /* ONE_LDSM: the lane's ldmatrix offsets as one register each (pa_ldsm_lane ONE; its
     * XOR needs every tile base at a multiple of 128 bytes, asserted below) in the dense
     * hd64 kernels: ptxas then spills 8 bytes instead of 16 in m2k128tj (two local loads
     * per key tile instead of four) and the H200 measured +2.6-3.0% (thirty-fifth session,
     * decision 126); at hd128 (no spills either way) it measured 0.9-1.4% slower, and the
     * 2:4 kernels spilled more with it (hd64 68 bytes against 36). */
    static constexpr bool ONE_LDSM = !SP24 && D == 64;
    static_assert(cfg::q_bytes % 128 == 0 && cfg::kv_tile_bytes % 128 == 0 &&
                      cfg::stage_bytes % 128 == 0 && (16 * layout::chunks * 16) % 128 == 0,
                  "tile bases (and a warp's Q rows) at multiples of 128 bytes");
    const pa_ldsm_lane<D, PA_LDSM_ROW_PAIR, ONE_LDSM> ldsm_rows; /* Q and V */
    const pa_ldsm_lane<D, SP24 ? PA_LDSM_COL_PAIR_24 : PA_LDSM_COL_PAIR, ONE_LDSM> ldsm_cols; /* K */
    const uint32_t s_q_warp; /* the warp's Q rows */

    __device__ __forceinline__ warp_ops(const stage &st, int wrow, int lane)
        : ldsm_rows(lane), ldsm_cols(lane), s_q_warp(st.s_q + wrow * layout::chunks * 16) {}

    __device__ __forceinline__ void load_q(q_frag &q) const {
      if (cfg::q_in_regs) {
#pragma unroll
        for (int mt = 0; mt < QF_M; ++mt)
#pragma unroll
          for (int kk = 0; kk < QF_K; ++kk)
            pa_ldmatrix_x4(q[mt][kk], ldsm_rows.at(s_q_warp, 16 * mt, kk));
      }
    }

    /* S = Q . K^T for every M tile; s_k: the K tile */
    __device__ __forceinline__ void qk(s_frag (&s)[m_tiles], const q_frag &q, uint32_t s_k) const {
      qk(s, q, s_k, [](int) {});
    }
    /* the same, with between(kk) called after k16 step kk's products are issued (spread_kv) */
    template <typename F>
    __device__ __forceinline__ void qk(s_frag (&s)[m_tiles], const q_frag &q, uint32_t s_k,
                                       F &&between) const {
#pragma unroll
      for (int mt = 0; mt < m_tiles; ++mt)
#pragma unroll
        for (int j = 0; j < S_TILES; ++j) s[mt][j][0] = s[mt][j][1] = s[mt][j][2] = s[mt][j][3] = 0.0f;
#pragma unroll
      for (int kk = 0; kk < QK_STEPS; ++kk) {
        uint32_t a[m_tiles][4];
#pragma unroll
        for (int mt = 0; mt < m_tiles; ++mt) {
          if (cfg::q_in_regs) {
#pragma unroll
            for (int x = 0; x < 4; ++x)
              a[mt][x] = q[cfg::q_in_regs ? mt : 0][cfg::q_in_regs ? kk : 0][x];
          } else {
            pa_ldmatrix_x4(a[mt], ldsm_rows.at(s_q_warp, 16 * mt, kk));
          }
        }
#pragma unroll
        for (int nn = 0; nn < S_TILES / 2; ++nn) {
          uint32_t bk[4]; /* K B-fragments: keys 16nn..+7 and +8..+15, dims 16kk..+15 */
          pa_ldmatrix_x4(bk, ldsm_cols.at(s_k, 16 * nn, kk));
#pragma unroll
          for (int mt = 0; mt < m_tiles; ++mt) {
            pa_mma_16816<T>(s[mt][2 * nn], a[mt], bk[0], bk[1]);
            pa_mma_16816<T>(s[mt][2 * nn + 1], a[mt], bk[2], bk[3]);
          }
        }
        between(kk);
      }
    }

    /* O += P . V for every M tile; s_v: the V tile */
    __device__ __forceinline__ void pv(o_frag (&o)[m_tiles], const p_frag (&pf)[m_tiles],
                                       uint32_t s_v) const {
      if constexpr (SP24) {
        /* on the sparse tensor cores, 32 keys per mma.sp */
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
            for (int mt = 0; mt < m_tiles; ++mt) {
              pa_mma_sp_16832<T>(o[mt][2 * dd], pf[mt].a[q], b_lo, pf[mt].meta[q]);
              pa_mma_sp_16832<T>(o[mt][2 * dd + 1], pf[mt].a[q], b_hi, pf[mt].meta[q]);
            }
          }
        }
      } else {
        float unused[1][4];
        pv_dense<false>(o, pf, s_v, unused);
      }
    }

    /* rowsum: O += P . V as pv does, and ls[mt] = P . ones, the M tile's row sums of the
     * P that P.V multiplies: every column of C is the whole row's sum, so each lane gets
     * its two rows' sums (ls[mt][0], ls[mt][2]) without the quad's shuffles. One more mma
     * per M tile and k16 step; ls starts at zero for each tile. */
    __device__ __forceinline__ void pv(o_frag (&o)[m_tiles], const p_frag (&pf)[m_tiles],
                                       uint32_t s_v, float (&ls)[m_tiles][4]) const {
      static_assert(rowsum, "the row sums by the tensor cores: dense rows with rowsum only");
#pragma unroll
      for (int mt = 0; mt < m_tiles; ++mt) ls[mt][0] = ls[mt][1] = ls[mt][2] = ls[mt][3] = 0.0f;
      pv_dense<true>(o, pf, s_v, ls);
    }

    template <bool RS, int LM>
    __device__ __forceinline__ void pv_dense(o_frag (&o)[m_tiles], const p_frag (&pf)[m_tiles],
                                             uint32_t s_v, float (&ls)[LM][4]) const {
#pragma unroll
      for (int kk = 0; kk < PV_STEPS; ++kk) pv_step<RS>(o, pf, s_v, ls, kk);
    }

    /* P.V's k16 step kk (keys 16kk .. +15) for every M tile (RS: and its row sums) */
    template <bool RS, int LM>
    __device__ __forceinline__ void pv_step(o_frag (&o)[m_tiles], const p_frag (&pf)[m_tiles],
                                            uint32_t s_v, float (&ls)[LM][4], int kk) const {
      const uint32_t ones = pa_one2<T>();
#pragma unroll
      for (int dd = 0; dd < O_TILES / 2; ++dd) {
        uint32_t bv[4]; /* V B-fragments (.trans): keys 16kk..+15, dims 16dd..+7 and +8..+15 */
        pa_ldmatrix_x4_trans(bv, ldsm_rows.at(s_v, 16 * kk, dd));
#pragma unroll
        for (int mt = 0; mt < m_tiles; ++mt) {
          pa_mma_16816<T>(o[mt][2 * dd], pf[mt].a[kk], bv[0], bv[1]);
          pa_mma_16816<T>(o[mt][2 * dd + 1], pf[mt].a[kk], bv[2], bv[3]);
        }
      }
      if constexpr (RS) {
#pragma unroll
        for (int mt = 0; mt < m_tiles; ++mt) pa_mma_16816<T>(ls[mt], pf[mt].a[kk], ones, ones);
      }
      (void)ones;
    }
  };

  /* The fragment the softmax runs on: S itself, or under 2:4 the two largest of each
   * group of four (sp24_select = 0 keeps the first two: a timing variant that
   * computes something else). */
  __device__ __forceinline__ static x_frag &softmax_operand(s_frag &s, select_t &sel,
                                                            int sp24_select, int t) {
    if constexpr (SP24) {
      pa_sp24_select<S_TILES>(s, sel.kept, sel.nib, sp24_select != 0, t);
      return sel.kept;
    } else {
      (void)sel;
      (void)sp24_select;
      (void)t;
      return s;
    }
  }

  /* P (the softmax operand after step 3) to the dtype's A fragments now, so only
   * half the registers wait across the barrier. */
  __device__ __forceinline__ static void to_p(const x_frag &x, const select_t &sel, p_frag &pf,
                                              int t) {
    if constexpr (SP24) {
      pa_sp24_fragments<T, S_TILES / 2>(x, sel.nib, t, pf.a, pf.meta);
    } else {
      (void)sel;
      (void)t;
#pragma unroll
      for (int kk = 0; kk < PV_STEPS; ++kk) to_p_step(x, pf, kk);
    }
  }

  /* to_p's k16 step kk alone (dense rows): P's A fragment of keys 16kk .. +15 */
  __device__ __forceinline__ static void to_p_step(const x_frag &x, p_frag &pf, int kk) {
    pf.a[kk][0] = pa_pack2<T>(x[2 * kk][0], x[2 * kk][1]);
    pf.a[kk][1] = pa_pack2<T>(x[2 * kk][2], x[2 * kk][3]);
    pf.a[kk][2] = pa_pack2<T>(x[2 * kk + 1][0], x[2 * kk + 1][1]);
    pf.a[kk][3] = pa_pack2<T>(x[2 * kk + 1][2], x[2 * kk + 1][3]);
  }

  /* The epilogue after step 4: O through the warp's own rows of the Q tile (swizzled)
   * into 16-byte stores; LSE by the quad's first thread. No block barrier: each warp
   * stages only its own rows. */
  __device__ __forceinline__ static void store(const pa_problem &p, const pa_block_ctx &c,
                                               unsigned char *smem, int wrow, int lane, int t,
                                               const o_frag (&o)[m_tiles],
                                               const float (&lse)[m_tiles][2]) {
    __syncwarp(); /* this warp's ldmatrix reads of its Q rows are complete */
    unsigned char *stage_o = smem;
#pragma unroll
    for (int mt = 0; mt < m_tiles; ++mt)
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
    for (int it = 0; it < warp_rows * layout::chunks / 32; ++it) {
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
      for (int mt = 0; mt < m_tiles; ++mt)
#pragma unroll
        for (int r = 0; r < 2; ++r) {
          const int i = c.i0 + wrow + 16 * mt + (lane >> 2) + 8 * r;
          if (i < c.seq.len_q) lse_g[pa_lse_index(&p.lse, c.b, c.h, i, c.seq.q_start)] = lse[mt][r];
        }
    }
  }
};

#endif
