/* AUTO_BLOCK on CUDA: common/autoblock.c's estimator on the GPU, then the problem
 * handed on as BLOCK with the chosen mask in the workspace.
 *
 * Enqueued on the caller's stream, without synchronising (the dense-or-sparse
 * decision is made on the device, so the call stays capturable in a graph):
 *   1. zero the counters and the mask;
 *   2. pool_k:  mean of each key block's K rows per (b, kv head), in double;
 *   3. choose:  per (b, h, query block) the pooled Q, the block scores and masses,
 *               the kept set (forced blocks, then the candidates bitonic-sorted by
 *               decreasing mass, until the threshold), written as mask bytes;
 *               kept / allowed counted;
 *   4. settle:  if kept / allowed > auto_density_cutoff, every mask byte becomes 1
 *               (the kernel then computes dense attention: BLOCK with an all-ones
 *               mask is dense); the used mask is copied to block_mask_out. With a
 *               dense gate (the caller's choice), the handed-on mask becomes all
 *               zeros instead and the gate is set, so that the dense kernel the
 *               caller launches next runs (cuda_dispatch.c).
 * Then any kernel that runs BLOCK runs the resolved problem.
 *
 * Agreement with the CPU estimator: every sum is taken in the CPU's order (rows in
 * order for the means, dims in order for the dot products, key blocks in order for
 * the total, the forced blocks then the sorted candidates for the kept mass), with
 * _rn intrinsics so nvcc cannot fuse a multiply and an add the CPU keeps separate
 * (common/ is built with -std=c11 and no -mfma, so GCC does not contract there).
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

enum { POOL_MAX_THREADS = 256 };

struct auto_layout {
  size_t counters; /* 2 x uint64: allowed, kept; then the dense gate (int32) */
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

/* The choose kernel: one warp per query block, CHOOSE_WARPS warps (query blocks of
 * one (b, h)) per thread block, each warp on its own with no block barrier. Every
 * step is latency-bound (a few thousand dependent double operations per query
 * block); one warp each keeps up to 64 query blocks in flight per SM, where a
 * 128-thread block per query block kept about 7 (R1 of the fifth session, ncu: the
 * earlier kernel took 751 us at S16384, 64-key blocks, 15% of the dense forward).
 * A warp's shared memory: qbar[D]; per key block e (double: score, then mass); the
 * candidates' sort keys (double); per key block n (int32); the sort indices (int32),
 * padded to a power of two; the kept bytes. */
enum { CHOOSE_WARPS = 4 };

int sort_size(const pa_problem *p) {
  int n = 1;
  while (n < p->mask_kblocks) n <<= 1;
  return n;
}

size_t choose_warp_smem(const pa_problem *p) {
  const size_t nkb = (size_t)p->mask_kblocks, ns = (size_t)sort_size(p);
  return align_up((size_t)p->head_dim * 8 + nkb * 8 + ns * 8 + nkb * 4 + ns * 4 + nkb, 16);
}

/* Above 48 KiB the kernel opts in; 96 KiB fits every sm_80+ part (sm_86/89: 99 KiB). */
enum { CHOOSE_SMEM_MAX = 96 * 1024 };

/* Warps (query blocks) per thread block: CHOOSE_WARPS, fewer where that would not fit. */
int choose_qn(const pa_problem *p) {
  int qn = CHOOSE_WARPS;
  while (qn > 1 && qn * choose_warp_smem(p) > CHOOSE_SMEM_MAX) qn >>= 1;
  return qn;
}

size_t choose_smem(const pa_problem *p) { return choose_qn(p) * choose_warp_smem(p); }

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
#pragma unroll 8
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

/* Candidate a goes before b: larger mass, then lower key block (the CPU's qsort
 * order, cand_cmp); non-candidates and padding carry key -2, so they sort last. */
__device__ __forceinline__ bool before(double ka, int ia, double kb, int ib) {
  return ka > kb || (ka == kb && ia < ib);
}

/* Grid: (ceil(mask_qblocks / qn), heads_q, batch), 32 * qn threads; warp w takes
 * query block qn * blockIdx.x + w. Every value is computed by the same operations in
 * the same order as on the CPU: the lanes split the dims (pooled Q) and the key
 * blocks (scores), never a sum. */
__global__ void __launch_bounds__(32 * CHOOSE_WARPS)
    choose_kernel(const __grid_constant__ pa_problem p, const double *kbar, uint8_t *mask,
                  unsigned long long *counters, int nsort, int qn, int warp_bytes) {
  extern __shared__ __align__(16) unsigned char smem[];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int qb = blockIdx.x * qn + warp, h = blockIdx.y, b = blockIdx.z;
  if (qb >= p.mask_qblocks) return; /* warps are independent: no block barrier below */
  const int nkb = p.mask_kblocks, D = p.head_dim, bk = p.block_k;
  const int hk = h / (p.heads_q / p.heads_kv);
  const pa_seq seq = pa_problem_seq(&p, b);
  const int64_t i0 = (int64_t)qb * p.block_q;
  if (i0 >= seq.len_q) return; /* the mask row stays 0, as on the CPU */
  const int64_t i1 = i0 + p.block_q < seq.len_q ? i0 + p.block_q : seq.len_q;
  const pa_mask m = pa_problem_mask(&p, &seq);
  const int64_t len_k = m.len_k;

  unsigned char *base = smem + (size_t)warp * warp_bytes;
  double *qbar = (double *)base; /* [D] */
  double *e = qbar + D;          /* [nkb] score, then mass */
  double *key = e + nkb;         /* [nsort] sort keys */
  int *n = (int *)(key + nsort); /* [nkb] allowed keys */
  int *idx = n + nkb;            /* [nsort] */
  uint8_t *row = (uint8_t *)(idx + nsort); /* [nkb] */

  /* the mean of the block's Q rows: lane's dims lane + 32j, each summed in row order
   * (the dims are independent chains, so the loads of a row overlap) */
  enum { DJ = POLYATTN_MAX_HEAD_DIM / 32 };
  double qs[DJ];
#pragma unroll
  for (int j = 0; j < DJ; ++j) qs[j] = 0.0;
#pragma unroll 2
  for (int64_t r = i0; r < i1; ++r) {
    const int64_t at = pa_view_row(&p.q, b, r, seq.q_start, h);
#pragma unroll
    for (int j = 0; j < DJ; ++j)
      if (lane + 32 * j < D)
        qs[j] = __dadd_rn(qs[j], (double)pa_load_f32(p.q.ptr, at + lane + 32 * j, p.dtype));
  }
#pragma unroll
  for (int j = 0; j < DJ; ++j)
    if (lane + 32 * j < D) qbar[lane + 32 * j] = qs[j] / (double)(i1 - i0);
  __syncwarp();

  /* the block scores: lane's key blocks kb0 + lane + 32j, KJ dot products at once
   * (each over the dims in order) */
  enum { KJ = 4 };
  int64_t lo, hi;
  pa_mask_rows_range(&m, i0, i1, &lo, &hi);
  const double slope = (double)pa_problem_alibi_slope(&p, b, h);
  const double *kb_base = kbar + ((int64_t)b * p.heads_kv + hk) * D * nkb;
  double my_max = -INFINITY;
  for (int kb0 = 0; kb0 < nkb; kb0 += 32 * KJ) {
    double dot[KJ];
    int nn[KJ];
    bool any = false;
#pragma unroll
    for (int j = 0; j < KJ; ++j) {
      const int kb = kb0 + lane + 32 * j;
      dot[j] = 0.0;
      nn[j] = 0;
      if (kb >= nkb) continue;
      const int64_t k0 = (int64_t)kb * bk, k1 = k0 + bk < len_k ? k0 + bk : len_k;
      const int64_t a = k0 > lo ? k0 : lo, z = k1 < hi ? k1 : hi;
      nn[j] = z > a ? (int)(z - a) : 0;
      n[kb] = nn[j];
      row[kb] = 0;
      any |= nn[j] != 0;
    }
    if (any) {
#pragma unroll 2
      for (int d = 0; d < D; ++d) {
        const double qd = qbar[d];
        const double *kd = kb_base + (int64_t)d * nkb + kb0 + lane;
#pragma unroll
        for (int j = 0; j < KJ; ++j)
          if (nn[j]) dot[j] = __dadd_rn(dot[j], __dmul_rn(qd, kd[32 * j]));
      }
    }
#pragma unroll
    for (int j = 0; j < KJ; ++j) {
      if (!nn[j]) continue;
      const int kb = kb0 + lane + 32 * j;
      const int64_t k0 = (int64_t)kb * bk;
      const int64_t a = k0 > lo ? k0 : lo;
      e[kb] = score_f64(dot[j], (double)p.scale, (double)p.softcap, slope, &m, i0 + (i1 - i0 - 1) / 2,
                        a + (nn[j] - 1) / 2);
      my_max = fmax(my_max, e[kb]);
    }
  }
  /* max is exact in any order */
  for (int o = 16; o; o >>= 1) my_max = fmax(my_max, __shfl_xor_sync(0xffffffffu, my_max, o));
  const double max_e = my_max;
  if (max_e == -INFINITY) return; /* nothing allowed */
  __syncwarp();

  /* masses (in place of e), forced blocks, the candidates' sort keys */
  int64_t d0 = pa_mask_diag(&m, i0), d1 = pa_mask_diag(&m, i1 - 1);
  d0 = d0 < 0 ? 0 : d0 >= len_k ? len_k - 1 : d0;
  d1 = d1 < 0 ? 0 : d1 >= len_k ? len_k - 1 : d1;
  int cand = 0;
  for (int x = lane; x < nsort; x += 32) {
    key[x] = -2.0;
    idx[x] = x;
    if (x >= nkb || !n[x]) continue;
    e[x] = __dmul_rn((double)n[x], exp(__dsub_rn(e[x], max_e)));
    const int forced = x == 0 || (x >= d0 / bk && x <= d1 / bk);
    if (forced || p.block_threshold >= 1.0f) row[x] = 1;
    else key[x] = e[x], ++cand;
  }
  for (int o = 16; o; o >>= 1) cand += __shfl_xor_sync(0xffffffffu, cand, o);
  __syncwarp();

  /* lane 0: the total and the forced blocks' mass, in key-block order (the CPU's sums) */
  double mass = 0.0, target = 0.0;
  if (lane == 0) {
    double total = 0.0;
#pragma unroll 4
    for (int kb = 0; kb < nkb; ++kb) {
      if (!n[kb]) continue;
      total = __dadd_rn(total, e[kb]);
      if (row[kb]) mass = __dadd_rn(mass, e[kb]);
    }
    target = __dmul_rn((double)p.block_threshold, total);
  }
  for (int k = 2; k <= nsort; k <<= 1) /* bitonic sort, `before` order */
    for (int j = k >> 1; j > 0; j >>= 1) {
      __syncwarp();
      for (int x = lane; x < nsort; x += 32) {
        const int l = x ^ j;
        if (l <= x) continue;
        const bool up = (x & k) == 0;
        const bool swap = up ? before(key[l], idx[l], key[x], idx[x])
                             : before(key[x], idx[x], key[l], idx[l]);
        if (swap) {
          const double tk = key[x];
          key[x] = key[l];
          key[l] = tk;
          const int ti = idx[x];
          idx[x] = idx[l];
          idx[l] = ti;
        }
      }
    }
  __syncwarp();

  if (lane == 0) { /* candidates in order until the threshold (the CPU's loop) */
    for (int c = 0; c < cand && mass < target; ++c) {
      row[idx[c]] = 1;
      mass = __dadd_rn(mass, key[c]);
    }
  }
  __syncwarp();
  int allowed = 0, kept = 0;
  uint8_t *dst = mask + (((int64_t)b * p.heads_q + h) * p.mask_qblocks + qb) * nkb;
  for (int kb = lane; kb < nkb; kb += 32) {
    dst[kb] = row[kb];
    allowed += n[kb] != 0;
    kept += row[kb];
  }
  for (int o = 16; o; o >>= 1) {
    allowed += __shfl_xor_sync(0xffffffffu, allowed, o);
    kept += __shfl_xor_sync(0xffffffffu, kept, o);
  }
  if (lane == 0) {
    atomicAdd(&counters[0], (unsigned long long)allowed);
    atomicAdd(&counters[1], (unsigned long long)kept);
  }
}

/* One thread per mask byte: all ones when the density is above the cut-off; the
 * used mask to block_mask_out. With a gate (non-NULL), a dense estimate sets it and
 * hands the BLOCK kernel an all-zero mask instead: the dense kernel launched after it
 * computes the output, and the BLOCK kernel only writes empty rows first. */
__global__ void settle_kernel(const __grid_constant__ pa_problem p, uint8_t *mask,
                              const unsigned long long *counters, int64_t total, int32_t *gate) {
  const int64_t x = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (x >= total) return;
  const unsigned long long allowed = counters[0], kept = counters[1];
  const double density = allowed ? (double)kept / (double)allowed : 1.0;
  const bool dense = density > (double)p.auto_density_cutoff;
  const uint8_t v = dense ? 1 : mask[x];
  mask[x] = gate && dense ? 0 : v;
  if (gate && x == 0) *gate = dense;
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
  if (choose_warp_smem(p) > CHOOSE_SMEM_MAX) {
    if (err)
      snprintf(err->msg, sizeof err->msg,
               "AUTO_BLOCK on CUDA takes at most about %d key blocks (Sk / block_k); this "
               "problem has %d",
               (int)(CHOOSE_SMEM_MAX / 25), p->mask_kblocks);
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
  cudaError_t e = cudaMemsetAsync(ws, 0, L.kbar, stream); /* counters, gate and mask */
  if (e != cudaSuccess) return e;
  pa_cuda_auto_block_as_block(p, workspace, r);
  if (p->batch <= 0 || p->heads_q <= 0 || p->mask_qblocks <= 0 || p->mask_kblocks <= 0)
    return cudaSuccess;
  double *kbar = (double *)(ws + L.kbar);
  uint8_t *mask = (uint8_t *)(ws + L.mask);
  unsigned long long *counters = (unsigned long long *)(ws + L.counters);
  const int pool_threads = p->head_dim < POOL_MAX_THREADS ? p->head_dim : POOL_MAX_THREADS;
  pool_k_kernel<<<dim3(p->mask_kblocks, p->heads_kv, p->batch), pool_threads, 0, stream>>>(*p, kbar);
  const size_t smem = choose_smem(p);
  if (smem > 48 * 1024) {
    /* not a stream operation: allowed while the stream is being captured */
    e = cudaFuncSetAttribute((const void *)choose_kernel,
                             cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (e != cudaSuccess) return e;
  }
  const int qn = choose_qn(p);
  choose_kernel<<<dim3((p->mask_qblocks + qn - 1) / qn, p->heads_q, p->batch), 32 * qn, smem,
                  stream>>>(*p, kbar, mask, counters, sort_size(p), qn, (int)choose_warp_smem(p));
  const int64_t total = (int64_t)p->batch * p->heads_q * p->mask_qblocks * p->mask_kblocks;
  settle_kernel<<<(unsigned)((total + 255) / 256), 256, 0, stream>>>(*p, mask, counters, total,
                                                                    gate);
  return cudaGetLastError();
}

} /* extern "C" */
