/* AUTO_BLOCK on CUDA: common/autoblock.c's estimator on the GPU, then the problem
 * handed on as BLOCK with the chosen mask in the workspace.
 *
 * Enqueued on the caller's stream, without synchronising (the dense-or-sparse
 * decision is made on the device, so the call stays capturable in a graph):
 *   1. zero the counters and the mask;
 *   2. pool:    the mean of each query block's Q rows and each key block's K rows,
 *               one warp per block, reading Q and K once at full width;
 *   3. choose:  per thread block 8 query blocks of one (b, h): the block scores as
 *               a small matrix product (pooled K staged through shared memory, each
 *               lane 2 query blocks x 8 key blocks of fma chains), then per query
 *               block the masses, the forced blocks and the kept set, found by a
 *               bitwise search whose every step is one sum over the warp's lanes
 *               (autoblock.c says why it is the shortest prefix by mass), written as
 *               mask bytes; kept / allowed counted;
 *   4. settle:  if kept / allowed > auto_density_cutoff, every mask byte becomes 1
 *               (the kernel then computes dense attention: BLOCK with an all-ones
 *               mask is dense); the used mask is copied to block_mask_out. With a
 *               dense gate (the caller's choice), the handed-on mask becomes all
 *               zeros instead and the gate is set, so that the dense kernel the
 *               caller launches next runs (cuda_dispatch.c).
 * Then any kernel that runs BLOCK runs the resolved problem.
 *
 * Agreement with the CPU estimator: every value is computed with common/autoblock.h's
 * float32 operations (the _rn intrinsics, explicit fmas, its own exp and tanh) in the
 * orders it defines, which are the orders the lanes here take: the pooled means' 8
 * interleaved row chains, one fma chain per dot product over the dims in order, and
 * the lane-then-butterfly sums of masses. So the mask equals the CPU's bit for bit,
 * with nothing left to libm (decision 79). */
#include <cuda_fp16.h>
#include <stdio.h>
#include <string.h>

#include "autoblock.h"
#include "block_ctx.cuh"
#include "convert.h"
#include "kernels.h"
#include "mask.h"

namespace {

struct auto_layout {
  size_t counters; /* 2 x uint64: allowed, kept; then the dense gate (int32) */
  size_t mask;     /* [B][Hq][mask_qblocks][mask_kblocks] bytes */
  size_t qbar;     /* [B][Hq][mask_qblocks][D] floats */
  size_t kbar;     /* [B][Hkv][D][mask_kblocks] floats (dims outer: the choose kernel
                      stages rows of it) */
  size_t end;      /* the kernel's own workspace starts here (256-aligned) */
};

size_t align_up(size_t x, size_t a) { return (x + a - 1) / a * a; }

auto_layout make_layout(const pa_problem *p) {
  auto_layout L;
  L.counters = 0;
  L.mask = 256;
  const size_t mask_bytes =
      (size_t)p->batch * p->heads_q * (size_t)p->mask_qblocks * (size_t)p->mask_kblocks;
  L.qbar = align_up(L.mask + mask_bytes, 256);
  L.kbar = align_up(L.qbar + (size_t)p->batch * p->heads_q * (size_t)p->mask_qblocks *
                                 (size_t)p->head_dim * sizeof(float),
                    256);
  L.end = align_up(L.kbar + (size_t)p->batch * p->heads_kv * (size_t)p->head_dim *
                                (size_t)p->mask_kblocks * sizeof(float),
                   256);
  return L;
}

/* ------------------------------------------------------------------ pool */

/* One warp per (Q or K) block: lane l holds dims VEC * l + 32 * VEC * u + e (u < U,
 * e < VEC) and PA_AB_POOL_CHAINS row chains of each, and reads ROWS rows at a time
 * (ROWS * U loads in flight per lane, each warp load a contiguous run of the row).
 * R1 with 8 rows a step at hd128: 135 us at S16384 (latency-bound, ~1 TB/s), so
 * the hd <= 128 16-bit instance takes 16; the others keep 8 (registers). */
enum { POOL_WARPS = 4 };

/* VEC consecutive elements of a row, raw (VEC = 4: one 8-byte load of a 16-bit
 * dtype, the host checked the alignment; VEC = 1: one element of any dtype, as
 * float bits). */
template <int VEC> struct pool_raw { uint2 v; };
template <> struct pool_raw<1> { uint32_t v; };

template <int VEC>
__device__ __forceinline__ pool_raw<VEC> pool_load(const void *base, int64_t at,
                                                   polyattn_dtype dtype) {
  pool_raw<VEC> r;
  if constexpr (VEC == 4)
    r.v = __ldg((const uint2 *)((const uint16_t *)base + at));
  else
    r.v = __float_as_uint(pa_load_f32(base, at, dtype));
  return r;
}

/* Element e of a raw load as float: exact conversions, as pa_load_f32. */
template <int VEC>
__device__ __forceinline__ float pool_elem(const pool_raw<VEC> &r, int e, polyattn_dtype dtype) {
  if constexpr (VEC == 4) {
    const uint32_t w = e < 2 ? r.v.x : r.v.y;
    const uint16_t h = (uint16_t)(e % 2 ? w >> 16 : w & 0xffffu);
    return dtype == POLYATTN_DTYPE_BF16 ? __uint_as_float((uint32_t)h << 16)
                                        : __half2float(__ushort_as_half(h));
  } else {
    return __uint_as_float(r.v);
  }
}

template <int VEC, int U, int ROWS>
__global__ void __launch_bounds__(32 * POOL_WARPS)
    pool_kernel(const __grid_constant__ pa_problem p, float *qbar, float *kbar, int64_t nq_items,
                int64_t nk_items) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t item = (int64_t)blockIdx.x * POOL_WARPS + warp;
  if (item >= nq_items + nk_items) return;
  const bool isq = item < nq_items;
  const int64_t it = isq ? item : item - nq_items;
  const int nblk = isq ? p.mask_qblocks : p.mask_kblocks;
  const int heads = isq ? p.heads_q : p.heads_kv;
  /* heads fastest: neighbouring warps read neighbouring heads of the same rows, so
   * a token's whole row (all heads, contiguous in the usual layout) is read at once */
  const int head = (int)(it % heads), blk = (int)(it / heads % nblk), b = (int)(it / heads / nblk);
  const pa_seq seq = pa_problem_seq(&p, b);
  const int64_t len = isq ? seq.len_q : seq.len_k; /* seqused_k applied */
  const int bsz = isq ? p.block_q : p.block_k;
  const int64_t r0 = (int64_t)blk * bsz;
  if (r0 >= len) return; /* the CPU never pools these; the choose kernel never reads them */
  const int64_t r1 = r0 + bsz < len ? r0 + bsz : len;
  const pa_view *view = isq ? &p.q : &p.k;
  const int64_t row0 = pa_view_row(view, b, r0, isq ? seq.q_start : seq.k_start, head);
  const int64_t rstride = view->stride_s;
  const int D = p.head_dim;
  enum { C = PA_AB_POOL_CHAINS };
  static_assert(ROWS % C == 0, "row k of a step is chain k % C");

  float c[C][U * VEC];
#pragma unroll
  for (int k = 0; k < C; ++k)
#pragma unroll
    for (int x = 0; x < U * VEC; ++x) c[k][x] = 0.0f;
  for (int64_t rb = 0; rb < r1 - r0; rb += ROWS) {
    pool_raw<VEC> raw[ROWS][U]; /* row r0 + rb + k: chain k % C */
#pragma unroll
    for (int k = 0; k < ROWS; ++k) {
      const int64_t at = row0 + (rb + k < r1 - r0 ? rb + k : 0) * rstride;
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int d = VEC * lane + 32 * VEC * u;
        if (d < D) raw[k][u] = pool_load<VEC>(view->ptr, at + d, p.dtype);
      }
    }
#pragma unroll
    for (int k = 0; k < ROWS; ++k)
      if (rb + k < r1 - r0)
#pragma unroll
        for (int u = 0; u < U; ++u)
          if (VEC * lane + 32 * VEC * u < D)
#pragma unroll
            for (int e = 0; e < VEC; ++e)
              c[k % C][u * VEC + e] = pa_ab_add(c[k % C][u * VEC + e], pool_elem<VEC>(raw[k][u], e, p.dtype));
  }
  const int nkb = p.mask_kblocks;
#pragma unroll
  for (int u = 0; u < U; ++u)
#pragma unroll
    for (int e = 0; e < VEC; ++e) {
      const int d = VEC * lane + 32 * VEC * u + e;
      if (d >= D) continue;
      float ch[C];
#pragma unroll
      for (int k = 0; k < C; ++k) ch[k] = c[k][u * VEC + e];
      const float mean = pa_ab_pool_combine(ch, r1 - r0);
      if (isq)
        qbar[(((int64_t)b * p.heads_q + head) * p.mask_qblocks + blk) * D + d] = mean;
      else
        kbar[(((int64_t)b * p.heads_kv + head) * D + d) * nkb + blk] = mean;
    }
}

/* ---------------------------------------------------------------- choose */

/* CH_WARPS warps per thread block, CH_ROWS query blocks per warp (each K value
 * read from shared memory feeds CH_ROWS fmas), key blocks in chunks of 32 * CH_VC
 * (CH_VC fma chains per lane and row), pooled K staged CH_DC dims at a time. */
enum { CH_WARPS = 4, CH_ROWS = 2, CH_VC = 8, CH_DC = 8 };
enum { CH_QB = CH_WARPS * CH_ROWS, CH_KC = 32 * CH_VC };
static_assert(CH_DC * CH_KC % (32 * CH_WARPS) == 0, "the staging splits evenly");

/* A key block's word in shared memory once its mass is known: the mass's bits
 * (bit 31 clear: masses are >= 0) for a candidate, with bit 31 set for a forced
 * block, all ones for a block not allowed. Before that, the score's bits. */
enum : uint32_t { W_FORCED = 0x80000000u, W_OUT = 0xffffffffu };

size_t choose_smem(const pa_problem *p) {
  return (size_t)CH_DC * CH_KC * 4 + (size_t)CH_QB * p->head_dim * 4 +
         (size_t)CH_QB * p->mask_kblocks * 4;
}

/* Above 48 KiB the kernel opts in; 96 KiB fits every sm_80+ part (sm_86/89: 99 KiB). */
enum { CHOOSE_SMEM_MAX = 96 * 1024 };

/* Whether word w's block is in the set "forced, or a candidate at or above
 * (t_hi, t_lo)" (all = every allowed block), and its mass. */
__device__ __forceinline__ bool in_set(uint32_t w, uint32_t rank, bool all, uint32_t t_hi,
                                       uint32_t t_lo) {
  if (w == W_OUT) return false;
  if (w & W_FORCED) return true;
  return all || pa_ab_at_or_above(w, rank, t_hi, t_lo);
}

/* autoblock.h's lane sum of each row's set, for the warp's CH_ROWS rows at once
 * (row r's words at words + r * nkb). */
__device__ __forceinline__ void lane_sums(const uint32_t *words, int nkb, uint32_t kb_mask,
                                          int lane, bool all, const uint32_t *t_hi,
                                          const uint32_t *t_lo, float *sum) {
  float s[CH_ROWS];
#pragma unroll
  for (int r = 0; r < CH_ROWS; ++r) s[r] = 0.0f;
  for (int kb = lane; kb < nkb; kb += 32) {
#pragma unroll
    for (int r = 0; r < CH_ROWS; ++r) {
      const uint32_t w = words[(size_t)r * nkb + kb];
      if (in_set(w, kb_mask - (uint32_t)kb, all, t_hi[r], t_lo[r]))
        s[r] = pa_ab_add(s[r], __uint_as_float(w & ~W_FORCED));
    }
  }
#pragma unroll
  for (int o = 16; o; o >>= 1)
#pragma unroll
    for (int r = 0; r < CH_ROWS; ++r)
      s[r] = pa_ab_add(s[r], __shfl_xor_sync(0xffffffffu, s[r], o));
#pragma unroll
  for (int r = 0; r < CH_ROWS; ++r) sum[r] = s[r];
}

/* Grid: (ceil(mask_qblocks / CH_QB), heads_q, batch), 32 * CH_WARPS threads; warp w
 * takes query blocks CH_QB * blockIdx.x + CH_ROWS * w + r. */
__global__ void __launch_bounds__(32 * CH_WARPS, 4)
    choose_kernel(const __grid_constant__ pa_problem p, const float *qbar, const float *kbar,
                  uint8_t *mask, unsigned long long *counters) {
  extern __shared__ __align__(16) unsigned char smem[];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int h = blockIdx.y, b = blockIdx.z;
  const int nkb = p.mask_kblocks, nqb = p.mask_qblocks, D = p.head_dim, bk = p.block_k;
  const int hk = h / (p.heads_q / p.heads_kv);
  const pa_seq seq = pa_problem_seq(&p, b);
  const pa_mask m = pa_problem_mask(&p, &seq);
  const int64_t len_k = m.len_k;
  const int qb_first = blockIdx.x * CH_QB;

  float *ks = (float *)smem;                 /* [CH_DC][CH_KC] pooled K, staged */
  float *qs = ks + CH_DC * CH_KC;            /* [CH_QB][D] pooled Q */
  uint32_t *words = (uint32_t *)(qs + CH_QB * D); /* [CH_QB][nkb] score, then mass word */

  /* this warp's rows: [i0, i1), the keys they may see [lo, hi) */
  int64_t i0[CH_ROWS], i1[CH_ROWS], lo[CH_ROWS], hi[CH_ROWS];
  bool valid[CH_ROWS];
  uint32_t *const wbase = words + (size_t)CH_ROWS * warp * nkb; /* this warp's rows */
#pragma unroll
  for (int r = 0; r < CH_ROWS; ++r) {
    const int qb = qb_first + CH_ROWS * warp + r;
    i0[r] = (int64_t)qb * p.block_q;
    valid[r] = qb < nqb && i0[r] < seq.len_q; /* else the mask row stays 0, as on the CPU */
    i1[r] = valid[r] ? (i0[r] + p.block_q < seq.len_q ? i0[r] + p.block_q : seq.len_q) : i0[r] + 1;
    lo[r] = hi[r] = 0;
    if (valid[r]) pa_mask_rows_range(&m, i0[r], i1[r], &lo[r], &hi[r]);
  }

  for (int x = threadIdx.x; x < CH_QB * D; x += blockDim.x) {
    const int qb = qb_first + x / D;
    qs[x] = qb < nqb ? qbar[(((int64_t)b * p.heads_q + h) * nqb + qb) * D + x % D] : 0.0f;
  }

  /* the block scores, CH_KC key blocks at a time: lane's key blocks kc + lane + 32j,
   * each an fma chain over the dims in order (the staging goes through the dims in
   * order too) */
  const float slope = pa_problem_alibi_slope(&p, b, h);
  const float *kb_base = kbar + ((int64_t)b * p.heads_kv + hk) * D * nkb;
  float my_max[CH_ROWS];
#pragma unroll
  for (int r = 0; r < CH_ROWS; ++r) my_max[r] = -INFINITY;
  for (int kc = 0; kc < nkb; kc += CH_KC) {
    float acc[CH_ROWS][CH_VC];
#pragma unroll
    for (int r = 0; r < CH_ROWS; ++r)
#pragma unroll
      for (int j = 0; j < CH_VC; ++j) acc[r][j] = 0.0f;
    for (int dc = 0; dc < D; dc += CH_DC) {
      __syncthreads(); /* the previous stage is read (and, first time, qs written) */
      {
        /* every load first, then the stores: a store to shared memory between them
         * would make each load wait for the one before (generic pointers may alias),
         * which cost a round trip to L2 per value (R1: 133 us for this kernel) */
        enum { PER_THREAD = CH_DC * CH_KC / (32 * CH_WARPS) };
        float v[PER_THREAD];
#pragma unroll
        for (int i = 0; i < PER_THREAD; ++i) {
          const int x = (int)threadIdx.x + i * 32 * CH_WARPS;
          const int dd = x / CH_KC, kb = kc + x % CH_KC;
          v[i] = dc + dd < D && kb < nkb ? __ldg(kb_base + (int64_t)(dc + dd) * nkb + kb) : 0.0f;
        }
#pragma unroll
        for (int i = 0; i < PER_THREAD; ++i) ks[threadIdx.x + i * 32 * CH_WARPS] = v[i];
      }
      __syncthreads();
      const int dn = D - dc < CH_DC ? D - dc : CH_DC;
      for (int dd = 0; dd < dn; ++dd) {
        float q[CH_ROWS];
#pragma unroll
        for (int r = 0; r < CH_ROWS; ++r) q[r] = qs[(CH_ROWS * warp + r) * D + dc + dd];
#pragma unroll
        for (int j = 0; j < CH_VC; ++j) {
          const float k = ks[dd * CH_KC + lane + 32 * j];
#pragma unroll
          for (int r = 0; r < CH_ROWS; ++r) acc[r][j] = pa_ab_fma(q[r], k, acc[r][j]);
        }
      }
    }
#pragma unroll
    for (int j = 0; j < CH_VC; ++j) {
      const int kb = kc + lane + 32 * j;
      if (kb >= nkb) continue;
      const int64_t k0 = (int64_t)kb * bk, k1 = k0 + bk < len_k ? k0 + bk : len_k;
#pragma unroll
      for (int r = 0; r < CH_ROWS; ++r) {
        const int64_t a = k0 > lo[r] ? k0 : lo[r], z = k1 < hi[r] ? k1 : hi[r];
        if (!valid[r] || z <= a) {
          wbase[(size_t)r * nkb + kb] = W_OUT;
          continue;
        }
        const float e = pa_ab_score(acc[r][j], p.scale, p.softcap, slope, &m,
                                    i0[r] + (i1[r] - i0[r] - 1) / 2, a + (z - a - 1) / 2);
        wbase[(size_t)r * nkb + kb] = __float_as_uint(e);
        my_max[r] = fmaxf(my_max[r], e);
      }
    }
  }
  __syncwarp();

  /* masses and states; the max is exact in any order */
  uint32_t t_hi[CH_ROWS], t_lo[CH_ROWS];
  float target[CH_ROWS];
  const uint32_t kb_mask = pa_ab_kb_mask(nkb);
#pragma unroll
  for (int r = 0; r < CH_ROWS; ++r) {
    for (int o = 16; o; o >>= 1)
      my_max[r] = fmaxf(my_max[r], __shfl_xor_sync(0xffffffffu, my_max[r], o));
    int64_t d0 = pa_mask_diag(&m, i0[r]), d1 = pa_mask_diag(&m, i1[r] - 1);
    d0 = d0 < 0 ? 0 : d0 >= len_k ? len_k - 1 : d0;
    d1 = d1 < 0 ? 0 : d1 >= len_k ? len_k - 1 : d1;
    for (int kb = lane; kb < nkb; kb += 32) {
      const uint32_t w = wbase[(size_t)r * nkb + kb];
      if (w == W_OUT) continue;
      const int64_t k0 = (int64_t)kb * bk, k1 = k0 + bk < len_k ? k0 + bk : len_k;
      const int64_t a = k0 > lo[r] ? k0 : lo[r], z = k1 < hi[r] ? k1 : hi[r];
      const float mass = pa_ab_mass(z - a, __uint_as_float(w), my_max[r]);
      const bool forced = kb == 0 || (kb >= d0 / bk && kb <= d1 / bk);
      wbase[(size_t)r * nkb + kb] = __float_as_uint(mass) | (forced || p.block_threshold >= 1.0f ? W_FORCED : 0u);
    }
    t_hi[r] = t_lo[r] = 0xffffffffu; /* above every key: the forced blocks alone */
  }
  __syncwarp();

  /* the kept set (autoblock.c's search): the total, the forced blocks alone, then
   * the largest key whose set reaches block_threshold x total, bit by bit */
  float sum[CH_ROWS], total[CH_ROWS];
  lane_sums(wbase, nkb, kb_mask, lane, true, t_hi, t_lo, total);
  lane_sums(wbase, nkb, kb_mask, lane, false, t_hi, t_lo, sum);
  bool search = false;
#pragma unroll
  for (int r = 0; r < CH_ROWS; ++r) {
    target[r] = pa_ab_mul(p.block_threshold, total[r]);
    if (valid[r] && my_max[r] != -INFINITY && sum[r] < target[r]) {
      t_hi[r] = t_lo[r] = 0;
      search = true;
    }
  }
  if (search) {
    for (uint32_t bit = 1u << 30; bit; bit >>= 1) {
      uint32_t try_hi[CH_ROWS];
#pragma unroll
      for (int r = 0; r < CH_ROWS; ++r) try_hi[r] = t_hi[r] == 0xffffffffu ? t_hi[r] : t_hi[r] | bit;
      lane_sums(wbase, nkb, kb_mask, lane, false, try_hi, t_lo, sum);
#pragma unroll
      for (int r = 0; r < CH_ROWS; ++r)
        if (t_hi[r] != 0xffffffffu && sum[r] >= target[r]) t_hi[r] = try_hi[r];
    }
    for (uint32_t bit = (kb_mask + 1) >> 1; bit; bit >>= 1) {
      uint32_t try_lo[CH_ROWS];
#pragma unroll
      for (int r = 0; r < CH_ROWS; ++r) try_lo[r] = t_lo[r] == 0xffffffffu ? t_lo[r] : t_lo[r] | bit;
      lane_sums(wbase, nkb, kb_mask, lane, false, t_hi, try_lo, sum);
#pragma unroll
      for (int r = 0; r < CH_ROWS; ++r)
        if (t_lo[r] != 0xffffffffu && sum[r] >= target[r]) t_lo[r] = try_lo[r];
    }
  }

  int allowed = 0, kept = 0;
#pragma unroll
  for (int r = 0; r < CH_ROWS; ++r) {
    if (!valid[r] || my_max[r] == -INFINITY) continue;
    uint8_t *dst = mask + (((int64_t)b * p.heads_q + h) * nqb + qb_first + CH_ROWS * warp + r) * nkb;
    for (int kb = lane; kb < nkb; kb += 32) {
      const uint32_t w = wbase[(size_t)r * nkb + kb];
      const bool keep = in_set(w, kb_mask - (uint32_t)kb, false, t_hi[r], t_lo[r]);
      dst[kb] = keep;
      allowed += w != W_OUT;
      kept += keep;
    }
  }
  for (int o = 16; o; o >>= 1) {
    allowed += __shfl_xor_sync(0xffffffffu, allowed, o);
    kept += __shfl_xor_sync(0xffffffffu, kept, o);
  }
  if (lane == 0 && allowed) {
    atomicAdd(&counters[0], (unsigned long long)allowed);
    atomicAdd(&counters[1], (unsigned long long)kept);
  }
}

/* ---------------------------------------------------------------- settle */

/* 16 mask bytes per thread: all ones when the density is above the cut-off; the
 * used mask to block_mask_out. With a gate (non-NULL), a dense estimate sets it and
 * hands the BLOCK kernel an all-zero mask instead: the dense kernel launched after it
 * computes the output, and the BLOCK kernel only writes empty rows first. */
enum { SETTLE_BYTES = 16 };

__global__ void settle_kernel(const __grid_constant__ pa_problem p, uint8_t *mask,
                              const unsigned long long *counters, int64_t total, int32_t *gate) {
  const int64_t x0 = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) * SETTLE_BYTES;
  if (x0 >= total) return;
  const unsigned long long allowed = counters[0], kept = counters[1];
  const double density = allowed ? (double)kept / (double)allowed : 1.0;
  const bool dense = density > (double)p.auto_density_cutoff;
  if (gate && x0 == 0) *gate = dense;
  const pa_view *mo = &p.block_mask_out;
  const bool out = mo->buf && mo->ptr;
  if (!dense && !out) return; /* the mask stays as chosen */
  const int nkb = p.mask_kblocks, nqb = p.mask_qblocks;
  const int64_t n = total - x0 < SETTLE_BYTES ? total - x0 : SETTLE_BYTES;
  if (dense && !out && n == SETTLE_BYTES) { /* the mask is 256-byte aligned (auto_layout) */
    const uint32_t v = gate ? 0u : 0x01010101u;
    *(uint4 *)(mask + x0) = make_uint4(v, v, v, v);
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    const int64_t x = x0 + i;
    const uint8_t v = dense ? 1 : mask[x];
    if (dense) mask[x] = gate ? 0 : 1;
    if (out) {
      const int64_t kb = x % nkb, qb = x / nkb % nqb, h = x / ((int64_t)nkb * nqb) % p.heads_q,
                    b = x / ((int64_t)nkb * nqb * p.heads_q);
      ((uint8_t *)mo->ptr)[b * mo->stride_b + h * mo->stride_h + qb * mo->stride_s + kb] = v;
    }
  }
}

/* The pool kernel's load width: 8-byte loads of four 16-bit elements where every
 * Q and K row starts 8-byte aligned and D is a multiple of 4, else one element. */
bool pool_vec4(const pa_problem *p) {
  if (p->dtype != POLYATTN_DTYPE_F16 && p->dtype != POLYATTN_DTYPE_BF16) return false;
  if (p->head_dim % 4) return false;
  const pa_view *v[2] = {&p->q, &p->k};
  for (int i = 0; i < 2; ++i)
    if ((uintptr_t)v[i]->ptr % 8 || v[i]->stride_b % 4 || v[i]->stride_s % 4 || v[i]->stride_h % 4)
      return false;
  return true;
}

} /* namespace */

extern "C" {

int pa_cuda_auto_block_supports(const pa_problem *p, pa_error *err) {
  if (choose_smem(p) > CHOOSE_SMEM_MAX) {
    if (err)
      snprintf(err->msg, sizeof err->msg,
               "AUTO_BLOCK on CUDA takes at most %d key blocks (Sk / block_k) at this head "
               "dim; this problem has %d",
               (int)((CHOOSE_SMEM_MAX - (size_t)CH_DC * CH_KC * 4 - (size_t)CH_QB * p->head_dim * 4) /
                     (CH_QB * 4)),
               p->mask_kblocks);
    return 0;
  }
  return 1;
}

size_t pa_cuda_auto_block_workspace(const pa_problem *p) { return make_layout(p).end; }

void pa_cuda_auto_block_as_block(const pa_problem *p, void *workspace, pa_problem *r) {
  *r = *p;
  r->sparsity = POLYATTN_SPARSITY_BLOCK;
  memset(&r->block_mask, 0, sizeof r->block_mask);
  memset(&r->block_mask_out, 0, sizeof r->block_mask_out);
  const auto_layout L = make_layout(p);
  r->block_mask.buf = p->q.buf; /* any non-NULL marks the view present */
  r->block_mask.ptr = workspace ? (char *)workspace + L.mask : NULL;
  r->block_mask.stride_b = (int64_t)p->heads_q * p->mask_qblocks * p->mask_kblocks;
  r->block_mask.stride_h = (int64_t)p->mask_qblocks * p->mask_kblocks;
  r->block_mask.stride_s = p->mask_kblocks;
}

cudaError_t pa_cuda_auto_block_resolve(const pa_problem *p, void *workspace, cudaStream_t stream,
                                       pa_problem *r, const int32_t **dense_gate) {
  if (!workspace) return cudaErrorInvalidValue;
  const auto_layout L = make_layout(p);
  char *ws = (char *)workspace;
  int32_t *gate = dense_gate ? (int32_t *)(ws + L.counters + 2 * sizeof(unsigned long long)) : NULL;
  if (dense_gate) *dense_gate = gate;
  cudaError_t e = cudaMemsetAsync(ws, 0, L.qbar, stream); /* counters, gate and mask */
  if (e != cudaSuccess) return e;
  pa_cuda_auto_block_as_block(p, workspace, r);
  if (p->batch <= 0 || p->heads_q <= 0 || p->mask_qblocks <= 0 || p->mask_kblocks <= 0)
    return cudaSuccess;
  float *qbar = (float *)(ws + L.qbar), *kbar = (float *)(ws + L.kbar);
  uint8_t *mask = (uint8_t *)(ws + L.mask);
  unsigned long long *counters = (unsigned long long *)(ws + L.counters);

  const int64_t nq_items = (int64_t)p->batch * p->heads_q * p->mask_qblocks;
  const int64_t nk_items = (int64_t)p->batch * p->heads_kv * p->mask_kblocks;
  const unsigned pool_blocks = (unsigned)((nq_items + nk_items + POOL_WARPS - 1) / POOL_WARPS);
  if (pool_vec4(p) && p->head_dim <= 128)
    pool_kernel<4, 1, 16><<<pool_blocks, 32 * POOL_WARPS, 0, stream>>>(*p, qbar, kbar, nq_items, nk_items);
  else if (pool_vec4(p))
    pool_kernel<4, 2, 8><<<pool_blocks, 32 * POOL_WARPS, 0, stream>>>(*p, qbar, kbar, nq_items, nk_items);
  else
    pool_kernel<1, POLYATTN_MAX_HEAD_DIM / 32, 8>
        <<<pool_blocks, 32 * POOL_WARPS, 0, stream>>>(*p, qbar, kbar, nq_items, nk_items);

  const size_t smem = choose_smem(p);
  if (smem > 48 * 1024) {
    /* not a stream operation: allowed while the stream is being captured */
    e = cudaFuncSetAttribute((const void *)choose_kernel,
                             cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (e != cudaSuccess) return e;
  }
  choose_kernel<<<dim3((p->mask_qblocks + CH_QB - 1) / CH_QB, p->heads_q, p->batch), 32 * CH_WARPS,
                  smem, stream>>>(*p, qbar, kbar, mask, counters);
  const int64_t total = (int64_t)p->batch * p->heads_q * p->mask_qblocks * p->mask_kblocks;
  const int64_t settle_threads = (total + SETTLE_BYTES - 1) / SETTLE_BYTES;
  settle_kernel<<<(unsigned)((settle_threads + 255) / 256), 256, 0, stream>>>(*p, mask, counters,
                                                                             total, gate);
  return cudaGetLastError();
}

} /* extern "C" */
