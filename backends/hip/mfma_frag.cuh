/* The MFMA fragment layer of the forward tile loop (backends/cuda/fwd_tile.cuh):
 * fp16/bf16 on CDNA (gfx908 fp16 only, gfx90a, gfx94x), v_mfma_f32_32x32x8 with
 * fp32 accumulators, one 64-lane wavefront per 32 query rows. The loop, the score
 * pass and the online softmax are the CUDA Ampere kernel's; only this file differs.
 *
 * Not yet run on AMD hardware (none was available): compiled for the CDNA targets
 * in CI; every lane-to-element map below is a function of mfma_layout.h, which
 * tests/test_mfma_layout.c checks against models of the instructions.
 *
 * Wavefront w owns query rows wrow = 32 w .. +31 of the block, one row per lane
 * pair (lanes l and l + 32 hold row pa_mfma32_b_col(l)). Per key tile of 32 keys:
 *   S^T [32 keys x 32 rows] = K [32 x D] . Q^T [D x 32]    D / 8 MFMAs; Q^T's B
 *                              fragments are read from global memory once
 *   scores, softmax            on S^T's accumulator: a lane holds 16 keys of its
 *                              row (pa_mfma32_cd_row), lane l ^ 32 the other 16,
 *                              so a row reduction is one shuffle (Mask 32, Width 64)
 *   O^T [Dv x 32 rows] += V^T [Dv x 32] . P^T [32 x 32]   P^T's B fragments are
 *                              S^T's accumulators rounded to the dtype, in place
 *                              (pa_mfma32_cd_as_b: no shuffle, no shared memory)
 * Computing the transposed products is what lets P stay in registers: the MFMA
 * accumulator layout of S^T is the B layout of P^T.
 *
 * Staging: plain loads, element by element (any stride, no alignment rule): K row
 * major and V transposed, [K | V^T] per stage, each row padded by 4 elements (8
 * bytes: rows stay 8-byte aligned for the 4-element fragment loads, consecutive
 * rows shift across banks). Two stages where they fit the 64 KiB of LDS a CDNA
 * workgroup has (head dims up to 128), else one. Untuned first choices, not
 * measured (no AMD GPU). */
#ifndef PA_HIP_MFMA_FRAG_CUH
#define PA_HIP_MFMA_FRAG_CUH

#include <stdint.h>

#include "block_ctx.cuh"
#include "block_list.cuh"
#include "convert.h"
#include "hip/mfma.cuh"
#include "warp_reduce.cuh"

/* The rows of an MFMA 32x32 accumulator, as frag_softmax.cuh / frag_scores.cuh see
 * them: one row per lane (its column of the transposed product), NB [32 x 32]
 * blocks of 16 registers each. */
template <int NB>
struct pa_mfma32_map {
  typedef float frag[NB][PA_MFMA32_CD_REGS];
  enum { rows = 1, elems = NB * PA_MFMA32_CD_REGS };
  template <typename A>
  __device__ __forceinline__ static auto &at(A &f, int r, int k, int x) {
    (void)r;
    return f[(2 * k + x) / PA_MFMA32_CD_REGS][(2 * k + x) % PA_MFMA32_CD_REGS];
  }
  __device__ __forceinline__ static float row_max(float v) {
    return pa_lanes_max<PA_MFMA32_LANES, 32>(v); /* lanes l and l ^ 32 */
  }
  __device__ __forceinline__ static float row_sum(float v) {
    return pa_lanes_sum<PA_MFMA32_LANES, 32>(v);
  }
  __device__ __forceinline__ static float exp2(float x) { return exp2f(x); }
  /* row_t: the lane's row; key_t: the lane */
  __device__ __forceinline__ static int row(int row_t, int r) {
    (void)r;
    return row_t;
  }
  __device__ __forceinline__ static int key(int k0, int lane, int k, int x) {
    return k0 + pa_mfma32_cd_row(lane, 2 * k + x);
  }
};

/* Four consecutive 16-bit elements (8-byte aligned) as an A or B fragment. */
__device__ __forceinline__ pa_i16x4 pa_mfma_load4(const uint16_t *s) {
  return *reinterpret_cast<const pa_i16x4 *>(s);
}

__device__ __forceinline__ pa_f32x16 pa_mfma_acc(const float (&f)[PA_MFMA32_CD_REGS]) {
  pa_f32x16 v;
#pragma unroll
  for (int r = 0; r < PA_MFMA32_CD_REGS; ++r) v[r] = f[r];
  return v;
}

__device__ __forceinline__ void pa_mfma_unacc(float (&f)[PA_MFMA32_CD_REGS], pa_f32x16 v) {
#pragma unroll
  for (int r = 0; r < PA_MFMA32_CD_REGS; ++r) f[r] = v[r];
}

enum {
  PA_MFMA_LDS_BYTES = 64 * 1024, /* LDS per workgroup on CDNA (MI100, MI200, MI300) */
  PA_MFMA_PAD = 4                /* 16-bit elements after each shared-memory row */
};

template <int DTYPE, int DB>
struct pa_mfma_frag {
  enum {
    lanes = PA_MFMA32_LANES, /* a CDNA wavefront */
    waves = 2,               /* untuned: two wavefronts share each K/V tile */
    threads = waves * lanes,
    m_tiles = 1,
    m_rows = PA_MFMA32_N,    /* S^T's columns are query rows */
    warp_rows = PA_MFMA32_N,
    block_q = waves * warp_rows,
    block_k = PA_MFMA32_M,   /* S^T's rows are keys */
    joint = 1,               /* the loads are done when a thread passes them */
    reverse_q = 0,
    tree_max = 0,            /* the row maxima in a chain (fwd_tile.cuh) */
    keep_max = 0,            /* the running maximum, not a kept one (fwd_tile.cuh) */
    rowsum = 0,              /* l summed by the softmax, not by the matrix unit (fwd_tile.cuh) */
    xpv = 0,                 /* step 3 whole before P.V (fwd_tile.cuh) */
    late_kv = 0,             /* the next tile's loads before Q.K^T (fwd_tile.cuh) */
    mask_guard = 0,          /* the block-mask bits tested on every tile (fwd_tile.cuh) */
    spread_kv = 0,           /* the next tile's loads in one burst (fwd_tile.cuh) */
    QK_STEPS = DB / PA_MFMA32_K,    /* k-steps of K . Q^T over the head dim */
    O_BLOCKS = DB / PA_MFMA32_M,    /* [32 x 32] blocks of O^T */
    PV_STEPS = block_k / PA_MFMA32_K, /* k-steps of V^T . P^T */
    k_pitch = DB + PA_MFMA_PAD,
    vt_pitch = block_k + PA_MFMA_PAD,
    stage_elems = block_k * k_pitch + DB * vt_pitch, /* K [32][k_pitch], V^T [DB][vt_pitch] */
    stage_bytes = 2 * stage_elems,
    stages = 2 * stage_bytes + PA_BLOCK_LIST_SMEM_BYTES <= PA_MFMA_LDS_BYTES ? 2 : 1,
    list_offset = stages * stage_bytes,
    smem_bytes = list_offset + PA_BLOCK_LIST_SMEM_BYTES
  };
  static_assert(PV_STEPS * 4 == PA_MFMA32_CD_REGS, "S^T's 16 accumulators are P^T's 4 k-steps");
  static_assert(DB % PA_MFMA32_M == 0, "whole [32 x 32] blocks of O^T");

  typedef pa_mfma32_map<1> s_map;
  typedef s_map x_map;
  typedef pa_mfma32_map<O_BLOCKS> o_map;
  typedef typename s_map::frag s_frag;
  typedef s_frag x_frag;
  typedef typename o_map::frag o_frag;
  typedef pa_i16x4 q_frag[QK_STEPS]; /* Q^T's B fragments: row, dims 8 ks + b_k(lane, e) */
  struct p_frag {
    pa_i16x4 b[PV_STEPS]; /* P^T's B fragments per k-step */
  };
  struct select_t {};

  __device__ __forceinline__ static int thread_row(int lane) { return pa_mfma32_b_col(lane); }
  __device__ __forceinline__ static int key_lane(int lane) { return lane; }

  /* ---- operand staging: plain loads into [K | V^T] per stage */
  struct stage {
    const pa_problem &p;
    const pa_block_ctx &c;
    const int tid;
    uint16_t *const s_kv;

    __device__ __forceinline__ stage(const pa_problem &p_, const pa_block_ctx &c_,
                                     unsigned char *smem, int tid_)
        : p(p_), c(c_), tid(tid_), s_kv(reinterpret_cast<uint16_t *>(smem)) {}
    __device__ __forceinline__ void load_q() {} /* Q goes to registers from global memory */
    /* Keys past the sequence and dims past D / Dv are zeros: padded keys then give
     * p = 0 times a finite value. */
    __device__ __forceinline__ void load_kv(int tile, int st) {
      const int64_t k0 = (int64_t)tile * block_k;
      const int nk = c.seq.len_k - k0 < block_k ? (int)(c.seq.len_k - k0) : block_k;
      uint16_t *k_s = k_tile(st), *vt_s = v_tile(k_s);
      const uint16_t *k_g = static_cast<const uint16_t *>(p.k.ptr);
      const uint16_t *v_g = static_cast<const uint16_t *>(p.v.ptr);
      for (int idx = tid; idx < block_k * DB; idx += threads) {
        const int jj = idx / DB, d = idx % DB;
        const int64_t at = jj < nk ? pa_view_row(&p.k, c.b, k0 + jj, c.seq.k_start, c.hk) : 0;
        k_s[jj * k_pitch + d] = jj < nk && d < p.head_dim ? k_g[at + d] : (uint16_t)0;
      }
      for (int idx = tid; idx < block_k * DB; idx += threads) {
        const int jj = idx / DB, d = idx % DB;
        const int64_t at = jj < nk ? pa_view_row(&p.v, c.b, k0 + jj, c.seq.k_start, c.hk) : 0;
        vt_s[d * vt_pitch + jj] = jj < nk && d < p.head_dim_v ? v_g[at + d] : (uint16_t)0;
      }
    }
    /* nothing is in flight after a plain load: the loop's barriers order it */
    __device__ __forceinline__ void wait_first() {}
    __device__ __forceinline__ void wait_all() {}
    __device__ __forceinline__ void wait_tile() {}
    __device__ __forceinline__ void wait_v(bool) {}
    __device__ __forceinline__ uint16_t *k_tile(int st) const { return s_kv + st * stage_elems; }
    __device__ __forceinline__ static uint16_t *v_tile(uint16_t *k) {
      return k + block_k * k_pitch;
    }
  };

  /* ---- one wavefront's products */
  struct warp_ops {
    const pa_problem &p;
    const pa_block_ctx &c;
    const int wrow, lane;

    __device__ __forceinline__ warp_ops(const stage &st, int wrow_, int lane_)
        : p(st.p), c(st.c), wrow(wrow_), lane(lane_) {}

    __device__ __forceinline__ void load_q(q_frag &q) const {
      const int i = c.i0 + wrow + pa_mfma32_b_col(lane);
      const bool row_ok = i < c.seq.len_q;
      const uint16_t *q_g = static_cast<const uint16_t *>(p.q.ptr);
      const int64_t q_row = row_ok ? pa_view_row(&p.q, c.b, i, c.seq.q_start, c.h) : 0;
#pragma unroll
      for (int ks = 0; ks < QK_STEPS; ++ks)
#pragma unroll
        for (int e = 0; e < PA_MFMA32_AB_ELEMS; ++e) {
          const int d = ks * PA_MFMA32_K + pa_mfma32_b_k(lane, e);
          q[ks][e] = row_ok && d < p.head_dim ? (short)q_g[q_row + d] : (short)0;
        }
    }

    /* S^T = K . Q^T: A = K rows (keys) from shared memory */
    __device__ __forceinline__ void qk(s_frag (&s)[m_tiles], const q_frag &q,
                                       const uint16_t *k_s) const {
      pa_f32x16 acc;
#pragma unroll
      for (int r = 0; r < PA_MFMA32_CD_REGS; ++r) acc[r] = 0.0f;
#pragma unroll
      for (int ks = 0; ks < QK_STEPS; ++ks)
        acc = pa_mfma32<DTYPE>(pa_mfma_load4(k_s + pa_mfma32_a_row(lane) * k_pitch +
                                             ks * PA_MFMA32_K + pa_mfma32_a_k(lane, 0)),
                               q[ks], acc);
      pa_mfma_unacc(s[0][0], acc);
    }

    /* O^T += V^T . P^T: A = V^T rows (dims) from shared memory */
    __device__ __forceinline__ void pv(o_frag (&o)[m_tiles], const p_frag (&pf)[m_tiles],
                                       const uint16_t *vt_s) const {
#pragma unroll
      for (int ob = 0; ob < O_BLOCKS; ++ob) {
        pa_f32x16 acc = pa_mfma_acc(o[0][ob]);
#pragma unroll
        for (int ks = 0; ks < PV_STEPS; ++ks)
          acc = pa_mfma32<DTYPE>(
              pa_mfma_load4(vt_s + (ob * PA_MFMA32_M + pa_mfma32_a_row(lane)) * vt_pitch +
                            ks * PA_MFMA32_K + pa_mfma32_a_k(lane, 0)),
              pf[0].b[ks], acc);
        pa_mfma_unacc(o[0][ob], acc);
      }
    }
  };

  /* no selection: the softmax runs on S itself */
  __device__ __forceinline__ static x_frag &softmax_operand(s_frag &s, select_t &, int, int) {
    return s;
  }

  /* P^T's B fragments: S^T's accumulators rounded to the dtype, in place */
  __device__ __forceinline__ static void to_p(const x_frag &x, const select_t &, p_frag &pf,
                                              int) {
#pragma unroll
    for (int ks = 0; ks < PV_STEPS; ++ks)
#pragma unroll
      for (int e = 0; e < PA_MFMA32_AB_ELEMS; ++e)
        pf.b[ks][e] = pa_mfma_round<DTYPE>(x[0][pa_mfma32_cd_as_b(ks, e)]);
  }

  /* The epilogue after step 4: a lane writes its 16 dims of each O^T block for its
   * row; the first half of the wavefront writes the LSE. */
  __device__ __forceinline__ static void store(const pa_problem &p, const pa_block_ctx &c,
                                               unsigned char *, int wrow, int lane, int,
                                               const o_frag (&o)[m_tiles],
                                               const float (&lse)[m_tiles][1]) {
    const int i = c.i0 + wrow + pa_mfma32_b_col(lane);
    if (i >= c.seq.len_q) return;
    const int64_t o_row = pa_view_row(&p.o, c.b, i, c.seq.q_start, c.h);
#pragma unroll
    for (int ob = 0; ob < O_BLOCKS; ++ob)
#pragma unroll
      for (int r = 0; r < PA_MFMA32_CD_REGS; ++r) {
        const int d = ob * PA_MFMA32_M + pa_mfma32_cd_row(lane, r);
        if (d < p.head_dim_v) pa_store_f32(p.o.ptr, o_row + d, p.dtype, o[0][ob][r]);
      }
    if (p.lse.buf && pa_mfma32_half(lane) == 0)
      static_cast<float *>(p.lse.ptr)[pa_lse_index(&p.lse, c.b, c.h, i, c.seq.q_start)] = lse[0][0];
  }
};

#endif
