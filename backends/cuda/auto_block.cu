/* AUTO_BLOCK on CUDA: common/autoblock.c's estimator on the GPU, then the problem
 * handed on as BLOCK with the chosen mask in the workspace.
 *
 * Enqueued on the caller's stream, without synchronising (the dense-or-sparse
 * decision is made on the device, so the call stays capturable in a graph):
 *   1. zero the counters and the mask;
 *   2. pool_k:  mean of each key block's K rows per (b, kv head), in double;
 *   3. choose:  per (b, h, query block) the pooled Q, the block scores and masses,
 *               the kept set (forced blocks, then by decreasing mass until the
 *               threshold), written as mask bytes; kept / allowed counted;
 *   4. settle:  if kept / allowed > auto_density_cutoff, every mask byte becomes 1
 *               (the kernel then computes dense attention: BLOCK with an all-ones
 *               mask is dense); the used mask is copied to block_mask_out.
 * Then any kernel that runs BLOCK runs the resolved problem.
 *
 * Agreement with the CPU estimator: every sum is taken in the CPU's order (rows in
 * order for the means, dims in order for the dot products, key blocks in order for
 * the total, the forced blocks then the sorted candidates for the kept mass), with
 * _rn intrinsics so nvcc cannot fuse a multiply and an add the CPU keeps separate.
 * exp (and tanh under softcap) are CUDA's, within 1 ulp of glibc's but not always
 * equal: a block whose cumulative mass lands within a few ulps of
 * block_threshold x total, or two candidate masses equal to the last ulp, can be
 * chosen differently. Nothing else differs. */
#include <stdio.h>
#include <string.h>

#include "block_ctx.cuh"
#include "convert.h"
#include "kernels.h"
#include "mask.h"

namespace {

enum { CHOOSE_THREADS = 128, POOL_MAX_THREADS = 256 };

struct auto_layout {
  size_t counters; /* 2 x uint64: allowed, kept */
  size_t mask;     /* [B][Hq][mask_qblocks][mask_kblocks] bytes */
  size_t kbar;     /* [B][Hkv][D][mask_kblocks] doubles (dims outer: coalesced reads) */
  size_t end;      /* the kernel's own workspace starts here (256-aligned) */
};

size_t align_up(size_t x, size_t a) { return (x + a - 1) / a * a; }

auto_layout make_layout(const pa_problem *p) {
  auto_layout L;
  L.counters = 0;
  L.mask = 256;
  const size_t mask_bytes =
      (size_t)p->batch * p->heads_q * (size_t)p->mask_qblocks * (size_t)p->mask_kblocks;
  L.kbar = align_up(L.mask + mask_bytes, 256);
  L.end = align_up(L.kbar + (size_t)p->batch * p->heads_kv * (size_t)p->head_dim *
                                (size_t)p->mask_kblocks * sizeof(double),
                   256);
  return L;
}

/* The choose kernel's shared memory: qbar[D], then per key block e (double), n
 * (int32), order (int32) and the kept byte. */
size_t choose_smem(const pa_problem *p) {
  return (size_t)p->head_dim * 8 + (size_t)p->mask_kblocks * (8 + 4 + 4 + 1);
}

/* Grid: (mask_kblocks, heads_kv, batch); thread d of the block: dims d, d + blockDim... */
__global__ void pool_k_kernel(const __grid_constant__ pa_problem p, double *kbar) {
  const int kb = blockIdx.x, hk = blockIdx.y, b = blockIdx.z;
  const pa_seq seq = pa_problem_seq(&p, b);
  const pa_mask m = pa_problem_mask(&p, &seq);
  const int64_t len_k = m.len_k; /* seqused_k applied */
  const int64_t k0 = (int64_t)kb * p.block_k;
  const int64_t k1 = k0 + p.block_k < len_k ? k0 + p.block_k : len_k;
  if (k0 >= k1) return; /* the CPU leaves these unset and never reads them */
  double *dst = kbar + ((int64_t)b * p.heads_kv + hk) * p.head_dim * p.mask_kblocks;
  for (int d = threadIdx.x; d < p.head_dim; d += blockDim.x) {
    double sum = 0.0;
    for (int64_t r = k0; r < k1; ++r)
      sum = __dadd_rn(sum, (double)pa_load_f32(p.k.ptr, pa_view_row(&p.k, b, r, seq.k_start, hk) + d,
                                               p.dtype));
    dst[(int64_t)d * p.mask_kblocks + kb] = sum / (double)(k1 - k0);
  }
}

/* pa_score_f64 of common/mask.h, with the same operation order, unfused. */
__device__ double score_f64(double dot, double scale, double softcap, double slope,
                            const pa_mask *m, int64_t i, int64_t j) {
  double s = __dmul_rn(dot, scale);
  if (softcap > 0.0) s = __dmul_rn(softcap, tanh(s / softcap));
  if (slope != 0.0) {
    int64_t dist = pa_mask_diag(m, i) - j;
    if (dist < 0) dist = -dist;
    s = __dsub_rn(s, __dmul_rn(slope, (double)dist));
  }
  return s;
}

/* Grid: (mask_qblocks, heads_q, batch), CHOOSE_THREADS threads. */
__global__ void __launch_bounds__(CHOOSE_THREADS)
    choose_kernel(const __grid_constant__ pa_problem p, const double *kbar, uint8_t *mask,
                  unsigned long long *counters) {
  extern __shared__ __align__(16) unsigned char smem[];
  const int qb = blockIdx.x, h = blockIdx.y, b = blockIdx.z, tid = threadIdx.x;
  const int nkb = p.mask_kblocks, D = p.head_dim, bk = p.block_k;
  const int hk = h / (p.heads_q / p.heads_kv);
  const pa_seq seq = pa_problem_seq(&p, b);
  const int64_t i0 = (int64_t)qb * p.block_q;
  if (i0 >= seq.len_q) return; /* the mask row stays 0, as on the CPU */
  const int64_t i1 = i0 + p.block_q < seq.len_q ? i0 + p.block_q : seq.len_q;
  const pa_mask m = pa_problem_mask(&p, &seq);
  const int64_t len_k = m.len_k;

  double *qbar = (double *)smem;
  double *e = qbar + D;
  int *n = (int *)(e + nkb);
  int *order = n + nkb;
  uint8_t *row = (uint8_t *)(order + nkb);
  __shared__ double warp_max[CHOOSE_THREADS / 32];

  for (int d = tid; d < D; d += CHOOSE_THREADS) {
    double sum = 0.0;
    for (int64_t r = i0; r < i1; ++r)
      sum = __dadd_rn(sum, (double)pa_load_f32(p.q.ptr, pa_view_row(&p.q, b, r, seq.q_start, h) + d,
                                               p.dtype));
    qbar[d] = sum / (double)(i1 - i0);
  }
  __syncthreads();

  int64_t lo, hi;
  pa_mask_rows_range(&m, i0, i1, &lo, &hi);
  const double slope = (double)pa_problem_alibi_slope(&p, b, h);
  const double *kb_base = kbar + ((int64_t)b * p.heads_kv + hk) * D * nkb;
  double my_max = -INFINITY;
  for (int kb = tid; kb < nkb; kb += CHOOSE_THREADS) {
    const int64_t k0 = (int64_t)kb * bk, k1 = k0 + bk < len_k ? k0 + bk : len_k;
    const int64_t a = k0 > lo ? k0 : lo, z = k1 < hi ? k1 : hi;
    n[kb] = z > a ? (int)(z - a) : 0;
    row[kb] = 0;
    if (!n[kb]) continue;
    double dot = 0.0;
    for (int d = 0; d < D; ++d) dot = __dadd_rn(dot, __dmul_rn(qbar[d], kb_base[(int64_t)d * nkb + kb]));
    e[kb] = score_f64(dot, (double)p.scale, (double)p.softcap, slope, &m, i0 + (i1 - i0 - 1) / 2,
                      a + (n[kb] - 1) / 2);
    my_max = fmax(my_max, e[kb]);
  }
  /* max is exact in any order */
  for (int o = 16; o; o >>= 1) my_max = fmax(my_max, __shfl_xor_sync(0xffffffffu, my_max, o));
  if (tid % 32 == 0) warp_max[tid / 32] = my_max;
  __syncthreads();
  double max_e = warp_max[0];
  for (int w = 1; w < CHOOSE_THREADS / 32; ++w) max_e = fmax(max_e, warp_max[w]);
  if (max_e == -INFINITY) return; /* nothing allowed */

  /* masses (in place of e), forced blocks */
  int64_t d0 = pa_mask_diag(&m, i0), d1 = pa_mask_diag(&m, i1 - 1);
  d0 = d0 < 0 ? 0 : d0 >= len_k ? len_k - 1 : d0;
  d1 = d1 < 0 ? 0 : d1 >= len_k ? len_k - 1 : d1;
  for (int kb = tid; kb < nkb; kb += CHOOSE_THREADS) {
    if (!n[kb]) continue;
    e[kb] = __dmul_rn((double)n[kb], exp(__dsub_rn(e[kb], max_e)));
    const int forced = kb == 0 || (kb >= d0 / bk && kb <= d1 / bk);
    if (forced || p.block_threshold >= 1.0f) row[kb] = 1;
  }
  __syncthreads();
  /* candidates' ranks: decreasing mass, then increasing kb (the CPU's qsort order) */
  for (int kb = tid; kb < nkb; kb += CHOOSE_THREADS) {
    if (!n[kb] || row[kb]) continue;
    int rank = 0;
    for (int c = 0; c < nkb; ++c)
      if (n[c] && !row[c] && (e[c] > e[kb] || (e[c] == e[kb] && c < kb))) ++rank;
    order[rank] = kb;
  }
  __syncthreads();

  if (tid == 0) {
    double total = 0.0, mass = 0.0;
    int allowed = 0, kept = 0, nc = 0;
    for (int kb = 0; kb < nkb; ++kb) {
      if (!n[kb]) continue;
      ++allowed;
      total = __dadd_rn(total, e[kb]);
      if (row[kb]) mass = __dadd_rn(mass, e[kb]);
      else ++nc;
    }
    const double target = __dmul_rn((double)p.block_threshold, total);
    for (int c = 0; c < nc && mass < target; ++c) {
      row[order[c]] = 1;
      mass = __dadd_rn(mass, e[order[c]]);
    }
    for (int kb = 0; kb < nkb; ++kb) kept += row[kb];
    atomicAdd(&counters[0], (unsigned long long)allowed);
    atomicAdd(&counters[1], (unsigned long long)kept);
  }
  __syncthreads();
  uint8_t *dst = mask + (((int64_t)b * p.heads_q + h) * p.mask_qblocks + qb) * nkb;
  for (int kb = tid; kb < nkb; kb += CHOOSE_THREADS) dst[kb] = row[kb];
}

/* One thread per mask byte: all ones when the density is above the cut-off; the
 * used mask to block_mask_out. */
__global__ void settle_kernel(const __grid_constant__ pa_problem p, uint8_t *mask,
                              const unsigned long long *counters, int64_t total) {
  const int64_t x = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (x >= total) return;
  const unsigned long long allowed = counters[0], kept = counters[1];
  const double density = allowed ? (double)kept / (double)allowed : 1.0;
  const bool dense = density > (double)p.auto_density_cutoff;
  const uint8_t v = dense ? 1 : mask[x];
  mask[x] = v;
  const pa_view *mo = &p.block_mask_out;
  if (mo->buf && mo->ptr) {
    const int nkb = p.mask_kblocks, nqb = p.mask_qblocks;
    const int64_t kb = x % nkb, qb = x / nkb % nqb, h = x / ((int64_t)nkb * nqb) % p.heads_q,
                  b = x / ((int64_t)nkb * nqb * p.heads_q);
    ((uint8_t *)mo->ptr)[b * mo->stride_b + h * mo->stride_h + qb * mo->stride_s + kb] = v;
  }
}

} /* namespace */

extern "C" {

int pa_cuda_auto_block_supports(const pa_problem *p, pa_error *err) {
  if (choose_smem(p) > 48 * 1024) {
    if (err)
      snprintf(err->msg, sizeof err->msg,
               "AUTO_BLOCK on CUDA takes at most %d key blocks (Sk / block_k); this problem has %d",
               (int)((48 * 1024 - (size_t)p->head_dim * 8) / 17), p->mask_kblocks);
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
                                       pa_problem *r) {
  if (!workspace) return cudaErrorInvalidValue;
  const auto_layout L = make_layout(p);
  char *ws = (char *)workspace;
  cudaError_t e = cudaMemsetAsync(ws, 0, L.kbar, stream); /* counters and mask */
  if (e != cudaSuccess) return e;
  pa_cuda_auto_block_as_block(p, workspace, r);
  if (p->batch <= 0 || p->heads_q <= 0 || p->mask_qblocks <= 0 || p->mask_kblocks <= 0)
    return cudaSuccess;
  double *kbar = (double *)(ws + L.kbar);
  uint8_t *mask = (uint8_t *)(ws + L.mask);
  unsigned long long *counters = (unsigned long long *)(ws + L.counters);
  const int pool_threads = p->head_dim < POOL_MAX_THREADS ? p->head_dim : POOL_MAX_THREADS;
  pool_k_kernel<<<dim3(p->mask_kblocks, p->heads_kv, p->batch), pool_threads, 0, stream>>>(*p, kbar);
  choose_kernel<<<dim3(p->mask_qblocks, p->heads_q, p->batch), CHOOSE_THREADS, choose_smem(p),
                  stream>>>(*p, kbar, mask, counters);
  const int64_t total = (int64_t)p->batch * p->heads_q * p->mask_qblocks * p->mask_kblocks;
  settle_kernel<<<(unsigned)((total + 255) / 256), 256, 0, stream>>>(*p, mask, counters, total);
  return cudaGetLastError();
}

} /* extern "C" */
