/* The prep and convert kernels around the tensor-core backward kernels
 * (bwd_ampere.cu, bwd_volta.cu), and their workspace (bwd_common.cuh says what
 * each part holds). */
#include "bwd_common.cuh"

#include <stdio.h>

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

size_t align256(size_t n) { return (n + 255) & ~(size_t)255; }

size_t stats_bytes(const pa_problem *p) {
  return align256((size_t)stat_rows(p) * (size_t)p->heads_q * sizeof(float));
}

dim3 row_grid(const pa_problem *p) {
  return dim3((unsigned)((p->seqlen_q + kPrepRows - 1) / kPrepRows), (unsigned)p->heads_q,
              (unsigned)p->batch);
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
  pa_bwd_prep_kernel<<<row_grid(p), kPrepWarps * 32, 0, stream>>>(*p, ws);
  return cudaGetLastError();
}

cudaError_t pa_bwd_finish(const pa_problem *p, const pa_cuda_device *dev, const pa_bwd_ws &ws,
                          void *tail, cudaStream_t stream) {
  if (!has_rows(p)) return cudaSuccess;
  if (p->deterministic) return pa_cuda_simple_backward_dq(p, dev, tail, stream);
  pa_bwd_convert_kernel<<<row_grid(p), kPrepWarps * 32, 0, stream>>>(*p, ws);
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
