/* The prep and convert kernels around the tensor-core backward kernels
 * (bwd_ampere.cu, bwd_volta.cu), and their workspace (bwd_common.cuh says what
 * each part holds). */
#include "bwd_common.cuh"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert.h"
#include "warp_reduce.cuh"

namespace {

constexpr int kPrepWarps = 4;
constexpr int kPrepRowsPerWarp = 4;
constexpr int kPrepRows = kPrepWarps * kPrepRowsPerWarp;

int64_t stat_rows(const pa_problem *p) {
  return p->varlen ? p->total_q : (int64_t)p->batch * p->seqlen_q;
}

__device__ __forceinline__ int64_t first_row(const pa_problem &p, int b, const pa_seq &seq) {
  return p.varlen ? seq.q_start : (int64_t)b * p.seqlen_q;
}

/* prep: D_i, lse2, and (atomic mode) the dQ accumulator's rows zeroed. */
__global__ void __launch_bounds__(kPrepWarps * 32)
    pa_bwd_prep_kernel(const __grid_constant__ pa_problem p, pa_bwd_ws ws) {
  const int h = blockIdx.y, b = blockIdx.z;
  const pa_seq seq = pa_problem_seq(&p, b);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t row0 = first_row(p, b, seq);
#pragma unroll 1
  for (int r = 0; r < kPrepRowsPerWarp; ++r) {
    const int64_t i = (int64_t)blockIdx.x * kPrepRows + warp * kPrepRowsPerWarp + r;
    if (i >= seq.len_q) break;
    const int64_t at_do = pa_view_row(&p.dout, b, i, seq.q_start, h);
    const int64_t at_o = pa_view_row(&p.o, b, i, seq.q_start, h);
    float acc = 0.0f;
    for (int d = lane; d < p.head_dim_v; d += 32)
      acc = fmaf(pa_load_f32(p.dout.ptr, at_do + d, p.dtype), pa_load_f32(p.o.ptr, at_o + d, p.dtype),
                 acc);
    acc = pa_warp_sum(acc);
    if (lane == 0) {
      const float lse = ((const float *)p.lse.ptr)[pa_lse_index(&p.lse, b, h, i, seq.q_start)];
      ws.dsum[h * ws.rows + row0 + i] = acc;
      ws.lse2[h * ws.rows + row0 + i] = lse == -INFINITY ? INFINITY : lse * PA_BWD_LOG2E;
    }
    if (ws.dq_acc) {
      float *dq = ws.dq_acc + ((row0 + i) * p.heads_q + h) * p.head_dim;
      for (int d = lane; d < p.head_dim; d += 32) dq[d] = 0.0f;
    }
  }
}

/* convert: dQ = the fp32 accumulator, in the dtype. */
__global__ void __launch_bounds__(kPrepWarps * 32)
    pa_bwd_convert_kernel(const __grid_constant__ pa_problem p, pa_bwd_ws ws) {
  const int h = blockIdx.y, b = blockIdx.z;
  const pa_seq seq = pa_problem_seq(&p, b);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t row0 = first_row(p, b, seq);
#pragma unroll 1
  for (int r = 0; r < kPrepRowsPerWarp; ++r) {
    const int64_t i = (int64_t)blockIdx.x * kPrepRows + warp * kPrepRowsPerWarp + r;
    if (i >= seq.len_q) break;
    const float *dq = ws.dq_acc + ((row0 + i) * p.heads_q + h) * p.head_dim;
    const int64_t at = pa_view_row(&p.dq, b, i, seq.q_start, h);
    for (int d = lane; d < p.head_dim; d += 32) pa_store_f32(p.dq.ptr, at + d, p.dtype, dq[d]);
  }
}

/* The 16-bit forms (fp16, bf16; head dims up to 128; decision 92): each lane sums the
 * same elements in the same order as the kernels above (d = lane, lane + 32, ..., then
 * the butterfly) and rounds dQ by the same functions, so D_i and dQ come out as theirs
 * (not compared bit for bit on a GPU), but a warp issues every
 * load of its ROWS rows before it uses any (KN = 2 elements per lane and tensor where
 * head_dim_v <= 64, else 4), zeroes dQ's rows with 16-byte stores and converts with
 * 16-byte loads and 8-byte stores (two rows per warp step where head_dim <= 64). The
 * kernels above keep about one row's loads in flight per warp: on the H200 their prep
 * ran at 32% of DRAM bandwidth (hd128 S2048, bench/RESULTS.md, eighth session). */
template <bool BF16>
__device__ __forceinline__ float pa_bwd_h2f(uint16_t x) {
  return BF16 ? pa_bf16_to_f32(x) : pa_f16_to_f32(x);
}

template <bool BF16, int ROWS, int KN>
__global__ void __launch_bounds__(kPrepWarps * 32)
    pa_bwd_prep16_kernel(const __grid_constant__ pa_problem p, pa_bwd_ws ws) {
  const int h = blockIdx.y, b = blockIdx.z;
  const pa_seq seq = pa_problem_seq(&p, b);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t row0 = first_row(p, b, seq);
  const int64_t ib = ((int64_t)blockIdx.x * kPrepWarps + warp) * ROWS;
  const uint16_t *dout = (const uint16_t *)p.dout.ptr, *o = (const uint16_t *)p.o.ptr;
  uint16_t xd[ROWS][KN], xo[ROWS][KN];
  float lse[ROWS];
#pragma unroll
  for (int r = 0; r < ROWS; ++r) {
    const int64_t i = ib + r;
    const bool in = i < seq.len_q;
    const int64_t at_do = in ? pa_view_row(&p.dout, b, i, seq.q_start, h) : 0;
    const int64_t at_o = in ? pa_view_row(&p.o, b, i, seq.q_start, h) : 0;
#pragma unroll
    for (int k = 0; k < KN; ++k) {
      const int d = lane + 32 * k;
      const bool ok = in && d < p.head_dim_v;
      xd[r][k] = ok ? dout[at_do + d] : (uint16_t)0;
      xo[r][k] = ok ? o[at_o + d] : (uint16_t)0;
    }
    lse[r] = in && lane == 0
                 ? ((const float *)p.lse.ptr)[pa_lse_index(&p.lse, b, h, i, seq.q_start)]
                 : 0.0f;
  }
#pragma unroll
  for (int r = 0; r < ROWS; ++r) {
    const int64_t i = ib + r;
    if (i >= seq.len_q) break;
    float acc = 0.0f;
#pragma unroll
    for (int k = 0; k < KN; ++k)
      if (lane + 32 * k < p.head_dim_v)
        acc = fmaf(pa_bwd_h2f<BF16>(xd[r][k]), pa_bwd_h2f<BF16>(xo[r][k]), acc);
    acc = pa_warp_sum(acc);
    if (lane == 0) {
      ws.dsum[h * ws.rows + row0 + i] = acc;
      ws.lse2[h * ws.rows + row0 + i] = lse[r] == -INFINITY ? INFINITY : lse[r] * PA_BWD_LOG2E;
    }
    if (ws.dq_acc) {
      float *dq = ws.dq_acc + ((row0 + i) * p.heads_q + h) * p.head_dim;
      if ((p.head_dim & 3) == 0) {
        if (4 * lane < p.head_dim) *(float4 *)(dq + 4 * lane) = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      } else {
        for (int d = lane; d < p.head_dim; d += 32) dq[d] = 0.0f;
      }
    }
  }
}

/* prep, 16-byte form (fp16, bf16; head_dim_v a multiple of 8 up to 128, dO's and O's
 * rows 16-byte aligned, head_dim a multiple of 4; decision 101). D_i comes out bit for
 * bit as prep16's (and the per-row kernel's): there lane L (of 32) sums the products of
 * elements L, L + 32, ... (KO = 2 of them at head_dim_v <= 64, else 4) in that order,
 * then the warp's butterfly adds lanes xor 16, 8, 4, 2, 1. Here a row is two lanes
 * (h = lane % 2) and the warp 16 rows; with old lane L = 8m + j, lane h loads the
 * 16-byte chunks m + 4k (elements 8m + 32k .. + 7) for m = h and m = h + 2, so that
 * each old lane's chain over k, and the butterfly's xor 16 (m ^ 2) and xor 4, 2, 1
 * (j), are additions in its own registers; only xor 8 (m ^ 1) is a shuffle, 8 per row.
 * A lane's 4 KO loads per tensor are issued before any use (prep16: KO two-byte loads
 * per lane and tensor for 4 or 8 rows). The dQ accumulator's rows are zeroed by 16-byte
 * stores, 32 per warp step over the warp's rows. */
template <bool BF16, int KO>
__global__ void __launch_bounds__(kPrepWarps * 32)
    pa_bwd_prep_v16_kernel(const __grid_constant__ pa_problem p, pa_bwd_ws ws) {
  enum { ROWS = 16, NC = 2 * KO }; /* rows per warp; chunks per lane and tensor */
  const int h = blockIdx.y, b = blockIdx.z;
  const pa_seq seq = pa_problem_seq(&p, b);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t row0 = first_row(p, b, seq);
  const int64_t ib = ((int64_t)blockIdx.x * kPrepWarps + warp) * ROWS;
  const int half = lane & 1;
  const int64_t i = ib + lane / 2; /* the lane's row */
  const bool in = i < seq.len_q;
  const uint16_t *dout = (const uint16_t *)p.dout.ptr, *o = (const uint16_t *)p.o.ptr;
  const int64_t at_do = in ? pa_view_row(&p.dout, b, i, seq.q_start, h) : 0;
  const int64_t at_o = in ? pa_view_row(&p.o, b, i, seq.q_start, h) : 0;
  /* chunk n = s + 2k of the lane (s: m = half + 2s): elements 8 (half + 2s + 4k) .. */
  uint4 xd[NC], xo[NC];
#pragma unroll
  for (int n = 0; n < NC; ++n) {
    const int e0 = 8 * (half + 2 * (n % 2) + 4 * (n / 2));
    const bool ok = in && e0 < p.head_dim_v;
    xd[n] = ok ? *(const uint4 *)(dout + at_do + e0) : make_uint4(0, 0, 0, 0);
    xo[n] = ok ? *(const uint4 *)(o + at_o + e0) : make_uint4(0, 0, 0, 0);
  }
  const float lse =
      in ? ((const float *)p.lse.ptr)[pa_lse_index(&p.lse, b, h, i, seq.q_start)] : 0.0f;
  if (ws.dq_acc) {
    const int chunks = p.head_dim / 4; /* 16-byte chunks of a dQ row */
    for (int k = lane; k < ROWS * chunks; k += 32) {
      const int r = k / chunks, c = k - r * chunks;
      if (ib + r < seq.len_q)
        *(float4 *)(ws.dq_acc + ((row0 + ib + r) * p.heads_q + h) * p.head_dim + 4 * c) =
            make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    }
  }
  /* old lane 8m + j's chain, m = half + 2s: a[s][j] = ((p_k0 + p_k1) + ...) */
  float a[2][8];
#pragma unroll
  for (int n = 0; n < NC; ++n) {
    const uint32_t wd[4] = {xd[n].x, xd[n].y, xd[n].z, xd[n].w};
    const uint32_t wo[4] = {xo[n].x, xo[n].y, xo[n].z, xo[n].w};
#pragma unroll
    for (int e = 0; e < 8; ++e) {
      const uint32_t sh = (e & 1) ? 16 : 0;
      const float x = pa_bwd_h2f<BF16>((uint16_t)(wd[e / 2] >> sh));
      const float y = pa_bwd_h2f<BF16>((uint16_t)(wo[e / 2] >> sh));
      float &acc = a[n % 2][e];
      acc = fmaf(x, y, n < 2 ? 0.0f : acc); /* as prep16: the first from 0 */
    }
  }
  /* the butterfly: xor 16 (m ^ 2: s), xor 8 (m ^ 1: the other lane), xor 4, 2, 1 (j) */
  float c[8];
#pragma unroll
  for (int j = 0; j < 8; ++j) c[j] = a[0][j] + a[1][j];
#pragma unroll
  for (int j = 0; j < 8; ++j) c[j] += __shfl_xor_sync(0xffffffffu, c[j], 1);
#pragma unroll
  for (int w = 4; w >= 1; w /= 2) /* old lanes j and j ^ w hold the same sum: keep j < w */
#pragma unroll
    for (int j = 0; j < w; ++j) c[j] = c[j] + c[j + w];
  if (half == 0 && in) {
    ws.dsum[h * ws.rows + row0 + i] = c[0];
    ws.lse2[h * ws.rows + row0 + i] = lse == -INFINITY ? INFINITY : lse * PA_BWD_LOG2E;
  }
}

/* convert, 16-bit: head_dim % 4 == 0, dq's rows 8-byte aligned (checked by the host).
 * ROWS rows per warp; at head_dim <= 64 a row takes 16 lanes and a step two rows. */
template <bool BF16, int ROWS>
__global__ void __launch_bounds__(kPrepWarps * 32)
    pa_bwd_convert16_kernel(const __grid_constant__ pa_problem p, pa_bwd_ws ws) {
  const int h = blockIdx.y, b = blockIdx.z;
  const pa_seq seq = pa_problem_seq(&p, b);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t row0 = first_row(p, b, seq);
  const int64_t ib = ((int64_t)blockIdx.x * kPrepWarps + warp) * ROWS;
  const bool half = p.head_dim <= 64;
  const int lr = half ? lane >> 4 : 0, lc = half ? lane & 15 : lane;
  const int steps = half ? ROWS / 2 : ROWS;
  const bool col = 4 * lc < p.head_dim;
  float4 x[ROWS];
#pragma unroll
  for (int r = 0; r < ROWS; ++r) {
    const int64_t i = ib + (half ? 2 * r + lr : r);
    x[r] = r < steps && i < seq.len_q && col
               ? *(const float4 *)(ws.dq_acc + ((row0 + i) * p.heads_q + h) * p.head_dim + 4 * lc)
               : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  }
#pragma unroll
  for (int r = 0; r < ROWS; ++r) {
    const int64_t i = ib + (half ? 2 * r + lr : r);
    if (r >= steps || i >= seq.len_q || !col) break;
    const int64_t at = pa_view_row(&p.dq, b, i, seq.q_start, h) + 4 * lc;
    uint2 v;
    v.x = (uint32_t)(BF16 ? pa_f32_to_bf16(x[r].x) : pa_f32_to_f16(x[r].x)) |
          (uint32_t)(BF16 ? pa_f32_to_bf16(x[r].y) : pa_f32_to_f16(x[r].y)) << 16;
    v.y = (uint32_t)(BF16 ? pa_f32_to_bf16(x[r].z) : pa_f32_to_f16(x[r].z)) |
          (uint32_t)(BF16 ? pa_f32_to_bf16(x[r].w) : pa_f32_to_f16(x[r].w)) << 16;
    *(uint2 *)((uint16_t *)p.dq.ptr + at) = v;
  }
}

/* Rows per warp of the 16-bit forms for a row of `dim` elements: 8 at dim <= 64, else 4
 * (the prep then holds 16 elements per lane and tensor either way; 8 rows at hd128 took
 * 96 registers and ran slower, 114 against 94 us). POLYATTN_CUDA_BWD_PREP (read at
 * each call): "old" the per-row kernels above (0), "fast4" / "fast8" 4 or 8 rows at
 * every head dim, "fast" this rule; for the prep, any of them in place of the 16-byte
 * form (prep_v16). Measured: bench/RESULTS.md, eighth session (R1, R2). */
int prep_rows(int dim) {
  const char *env = getenv("POLYATTN_CUDA_BWD_PREP");
  if (env && !strcmp(env, "old")) return 0;
  if (env && !strcmp(env, "fast4")) return 4;
  if (env && !strcmp(env, "fast8")) return 8;
  return dim <= 64 ? 8 : 4;
}

bool is16(const pa_problem *p) {
  return p->dtype == POLYATTN_DTYPE_F16 || p->dtype == POLYATTN_DTYPE_BF16;
}

/* Whether the call's prep is the 16-byte form (pa_bwd_prep_v16_kernel): the default
 * where the dtype (fp16, bf16), the head dims and dO's and O's alignment allow it;
 * POLYATTN_CUDA_BWD_PREP set to "fast", "fast4", "fast8" or "old" keeps the kernels
 * above (prep_rows). */
bool prep_v16(const pa_problem *p) {
  const char *env = getenv("POLYATTN_CUDA_BWD_PREP");
  if (env && *env && strcmp(env, "v16")) return false;
  bool ok = is16(p) && p->head_dim_v % 8 == 0 && p->head_dim_v <= 128 && p->head_dim % 4 == 0;
  const pa_view *const in[] = {&p->dout, &p->o};
  for (const pa_view *v : in)
    ok = ok && (uintptr_t)v->ptr % 16 == 0 && v->stride_b % 8 == 0 && v->stride_s % 8 == 0 &&
         v->stride_h % 8 == 0;
  return ok;
}

dim3 row_grid(const pa_problem *p, int rows_per_warp) {
  const int rows = kPrepWarps * rows_per_warp;
  return dim3((unsigned)((p->seqlen_q + rows - 1) / rows), (unsigned)p->heads_q,
              (unsigned)p->batch);
}

template <bool BF16, int ROWS>
void prep16_launch(const pa_problem *p, const pa_bwd_ws &ws, cudaStream_t stream) {
  if (p->head_dim_v <= 64)
    pa_bwd_prep16_kernel<BF16, ROWS, 2><<<row_grid(p, ROWS), kPrepWarps * 32, 0, stream>>>(*p, ws);
  else
    pa_bwd_prep16_kernel<BF16, ROWS, 4><<<row_grid(p, ROWS), kPrepWarps * 32, 0, stream>>>(*p, ws);
}

size_t align256(size_t n) { return (n + 255) & ~(size_t)255; }

size_t stats_bytes(const pa_problem *p) {
  return align256((size_t)stat_rows(p) * (size_t)p->heads_q * sizeof(float));
}

bool has_rows(const pa_problem *p) { return p->seqlen_q > 0 && p->total_q > 0; }

} /* namespace */

size_t pa_bwd_workspace(const pa_problem *p, const pa_cuda_device *dev) {
  const size_t tail = p->deterministic
                          ? pa_cuda_simple_backward_workspace(p, dev)
                          : (size_t)stat_rows(p) * (size_t)p->heads_q * (size_t)p->head_dim *
                                sizeof(float);
  return 2 * stats_bytes(p) + tail;
}

pa_bwd_ws pa_bwd_ws_carve(const pa_problem *p, void *workspace, void **tail) {
  unsigned char *w = (unsigned char *)workspace;
  pa_bwd_ws ws;
  ws.rows = stat_rows(p);
  ws.lse2 = (float *)w;
  ws.dsum = (float *)(w + stats_bytes(p));
  *tail = w + 2 * stats_bytes(p);
  ws.dq_acc = p->deterministic ? nullptr : (float *)*tail;
  return ws;
}

cudaError_t pa_bwd_prep(const pa_problem *p, const pa_bwd_ws &ws, cudaStream_t stream) {
  if (!has_rows(p)) return cudaSuccess;
  if (prep_v16(p)) {
    const bool bf16 = p->dtype == POLYATTN_DTYPE_BF16;
    const dim3 g = row_grid(p, 16), t(kPrepWarps * 32);
    if (p->head_dim_v <= 64)
      bf16 ? pa_bwd_prep_v16_kernel<true, 2><<<g, t, 0, stream>>>(*p, ws)
           : pa_bwd_prep_v16_kernel<false, 2><<<g, t, 0, stream>>>(*p, ws);
    else
      bf16 ? pa_bwd_prep_v16_kernel<true, 4><<<g, t, 0, stream>>>(*p, ws)
           : pa_bwd_prep_v16_kernel<false, 4><<<g, t, 0, stream>>>(*p, ws);
    return cudaGetLastError();
  }
  const int rows = prep_rows(p->head_dim_v);
  if (rows == 0 || !is16(p) || p->head_dim_v > 128 || p->head_dim > 128) {
    pa_bwd_prep_kernel<<<row_grid(p, kPrepRowsPerWarp), kPrepWarps * 32, 0, stream>>>(*p, ws);
    return cudaGetLastError();
  }
  const bool bf16 = p->dtype == POLYATTN_DTYPE_BF16;
  if (rows == 4)
    bf16 ? prep16_launch<true, 4>(p, ws, stream) : prep16_launch<false, 4>(p, ws, stream);
  else
    bf16 ? prep16_launch<true, 8>(p, ws, stream) : prep16_launch<false, 8>(p, ws, stream);
  return cudaGetLastError();
}

cudaError_t pa_bwd_finish(const pa_problem *p, const pa_cuda_device *dev, const pa_bwd_ws &ws,
                          void *tail, cudaStream_t stream) {
  if (!has_rows(p)) return cudaSuccess;
  if (p->deterministic) return pa_cuda_simple_backward_dq(p, dev, tail, stream);
  const int rows = prep_rows(p->head_dim);
  const bool v16 = rows != 0 && is16(p) && p->head_dim % 4 == 0 && p->head_dim <= 128 &&
                   (uintptr_t)p->dq.ptr % 8 == 0 && p->dq.stride_b % 4 == 0 &&
                   p->dq.stride_s % 4 == 0 && p->dq.stride_h % 4 == 0;
  const bool bf16 = p->dtype == POLYATTN_DTYPE_BF16;
  const dim3 g = row_grid(p, rows ? rows : kPrepRowsPerWarp);
  if (!v16)
    pa_bwd_convert_kernel<<<row_grid(p, kPrepRowsPerWarp), kPrepWarps * 32, 0, stream>>>(*p, ws);
  else if (rows == 4)
    bf16 ? pa_bwd_convert16_kernel<true, 4><<<g, kPrepWarps * 32, 0, stream>>>(*p, ws)
         : pa_bwd_convert16_kernel<false, 4><<<g, kPrepWarps * 32, 0, stream>>>(*p, ws);
  else
    bf16 ? pa_bwd_convert16_kernel<true, 8><<<g, kPrepWarps * 32, 0, stream>>>(*p, ws)
         : pa_bwd_convert16_kernel<false, 8><<<g, kPrepWarps * 32, 0, stream>>>(*p, ws);
  return cudaGetLastError();
}

int pa_bwd_tiled_supports(const pa_problem *p, const pa_cuda_device *dev, const char *kernel,
                          pa_error *err) {
  const char *why = nullptr;
  pa_error simple = {{0}};
  if (p->pass != PA_PASS_BACKWARD) why = "computes the backward pass only";
  else if (p->sparsity != POLYATTN_SPARSITY_NONE && p->sparsity != POLYATTN_SPARSITY_BLOCK)
    why = "supports dense and BLOCK sparsity only";
  else if (p->heads_q > 65535 || p->batch > 65535)
    why = "has grids that take at most 65535 heads and batch entries";
  else if (!p->lse.buf || !p->o.buf) why = "needs the forward's out and lse";
  else if (p->deterministic && !pa_cuda_simple_backward_supports(p, dev, &simple)) {
    /* deterministic mode: dQ comes from the simple backward's dQ kernel */
    if (err) snprintf(err->msg, sizeof err->msg, "deterministic mode: %s", simple.msg);
    return 0;
  }
  if (!why) return 1;
  if (err) snprintf(err->msg, sizeof err->msg, "the %s backward %s", kernel, why);
  return 0;
}

int pa_bwd_bucket(const pa_problem *p) {
  const int d = p->head_dim > p->head_dim_v ? p->head_dim : p->head_dim_v;
  return d <= 64 ? 64 : d <= 128 ? 128 : 0;
}
