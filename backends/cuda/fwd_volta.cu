/* The Volta forward kernel (sm_70+; forced on newer GPUs): FlashAttention-2 for
 * fp16 with mma.sync m8n8k4 (HMMA.884), written to be simple and correct rather
 * than fast. bf16 has no m8n8k4 form; fp32 inputs run on the simple kernel.
 *
 * One block computes `block_q` query rows of one (batch entry, query head); each
 * warp owns 16 of them. Q, then each key tile's K and V, are staged in shared
 * memory with plain loads (no cp.async or ldmatrix: those are sm_80/sm_75). Per
 * key tile a warp computes S = Q.K^T [16 x BK] in m8n8k4 accumulators, runs the
 * online softmax on them (volta_softmax.cuh), writes P as fp16 to its own shared
 * [16 x BK] tile (by the accumulator map) and reads it back as A fragments (by the
 * A map) for O += P.V: the two maps differ, and shared memory is the plain way
 * across. Lane maps: volta_layout.h (checked on the host by tests/test_mma_layout.c).
 *
 * Everything but the head dim is a run-time value: causal, windows, softcap, ALiBi,
 * GQA, varlen, seqused_k, block masks, strides (any alignment). Key tiles outside the
 * rows' mask range (pa_mask_rows_range) or whose covering mask blocks are all 0 are
 * never loaded; per-element masking runs only on tiles that need it.
 *
 * Files: volta_tune.cuh (the tuning table), volta_mma.cuh (PTX wrappers, tile
 * loads), volta_softmax.cuh (softmax steps on fragments), volta_layout.h (maps). */
#define PA_CUDA_VOLTA_REAL 1

#include <stdio.h>

#include <atomic>

#include "block_ctx.cuh"
#include "kernels.h"
#include "mask.h"

#include "volta_layout.h"
#include "volta_mma.cuh"
#include "volta_softmax.cuh"
#include "volta_tune.cuh"

namespace {

/* Scores of one warp tile: S [16 rows x BK keys] holds raw dot products; on the
 * general path turn them into x = score * log2(e) with pa_score (scale, softcap,
 * ALiBi, in that order), then set masked entries to -inf. `range` applies the
 * causal/window/length mask (pa_mask_row_range per row), `block` the per-element
 * block mask. row[r] are the thread's two rows (pa_volta_row) within the sequence. */
template <int NTILES>
__device__ __forceinline__ void pa_vfrag_scores(float (&s)[NTILES][8], const pa_problem &p,
                                                const pa_block_ctx &c, bool general, float slope,
                                                bool range, bool block, int k0, int lane,
                                                const int (&row_in)[2]) {
  /* Opaque copies: otherwise the per-element columns and ALiBi distances, which do
   * not depend on k0, are hoisted out of the key loop into registers held for the
   * whole loop. This runs on the general path and boundary tiles only. */
  int row[2] = {row_in[0], row_in[1]};
  asm volatile("" : "+r"(lane), "+r"(row[0]), "+r"(row[1]));
  int lo[2], hi[2];
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    int64_t l, u;
    pa_mask_row_range(&c.mask, row[r], &l, &u);
    lo[r] = (int)l;
    hi[r] = (int)u;
  }
  if (general) {
#pragma unroll
    for (int n = 0; n < NTILES; ++n)
#pragma unroll
      for (int i = 0; i < 8; ++i) {
        const int j = k0 + 16 * n + pa_volta_c_col(lane, i);
        s[n][i] = pa_score(s[n][i], p.scale, p.softcap, slope, &c.mask, row[pa_volta_elem_row(i)],
                           j) * PA_VOLTA_LOG2E;
      }
  }
  if (range || block) {
#pragma unroll
    for (int n = 0; n < NTILES; ++n)
#pragma unroll
      for (int i = 0; i < 8; ++i) {
        const int r = pa_volta_elem_row(i);
        const int j = k0 + 16 * n + pa_volta_c_col(lane, i);
        /* pa_mask_keep(i, j) == (lo(i) <= j < hi(i)); rows past len_q are never
         * written, and must not index the block mask. */
        bool keep = !range || (j >= lo[r] && j < hi[r]);
        if (block && keep && row[r] < c.seq.len_q)
          keep = pa_block_mask_keep(&p.block_mask, c.b, c.h, row[r] / p.block_q, j / p.block_k);
        if (!keep) s[n][i] = -INFINITY;
      }
  }
}

template <int D>
__global__ void __launch_bounds__(pa_volta_cfg<D>::threads, 1)
    pa_volta_fwd_kernel(const __grid_constant__ pa_problem p) {
#if PA_VOLTA_ARCH_OK
  typedef pa_volta_cfg<D> cfg;
  enum {
    NT = cfg::threads,
    BQ = cfg::block_q,
    BK = cfg::block_k,
    LD = cfg::ld,
    LDP = cfg::ld_p,
    S_TILES = BK / 16, /* [16 x 16] blocks of S [16 x BK] per warp */
    O_TILES = D / 16,  /* [16 x 16] blocks of O [16 x D] per warp */
    QK_STEPS = D / 4,  /* mma K steps of Q.K^T */
    PV_STEPS = BK / 4  /* mma K steps of P.V */
  };
  extern __shared__ __align__(16) unsigned char pa_smem[];

  pa_block_ctx c;
  if (!pa_block_ctx_init(c, p, blockIdx.z, blockIdx.y, blockIdx.x * BQ, BQ)) return;
  const int n_lo = (int)(c.klo / BK);
  const int n_hi = c.klo < c.khi ? (int)((c.khi + BK - 1) / BK) : n_lo;

  const float slope = pa_problem_alibi_slope(&p, c.b, c.h);
  const bool general = p.softcap > 0.0f || slope != 0.0f || !(p.scale > 0.0f);
  const float xscale = general ? 1.0f : p.scale * PA_VOLTA_LOG2E;
  const bool use_block_mask = p.sparsity == POLYATTN_SPARSITY_BLOCK && p.block_mask.buf;

  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int wrow = warp * 16; /* the warp's first row in the block's tile */
  const bool warp_active = c.i0 + wrow < c.seq.len_q;

  const uint16_t *q_g = (const uint16_t *)p.q.ptr + pa_view_row(&p.q, c.b, c.i0, c.seq.q_start, c.h);
  const uint16_t *k_g = (const uint16_t *)p.k.ptr + pa_view_row(&p.k, c.b, 0, c.seq.k_start, c.hk);
  const uint16_t *v_g = (const uint16_t *)p.v.ptr + pa_view_row(&p.v, c.b, 0, c.seq.k_start, c.hk);
  uint16_t *s_q = (uint16_t *)pa_smem;                /* [BQ x LD] */
  uint16_t *s_k = s_q + cfg::q_elems;                 /* [BK x LD] */
  uint16_t *s_v = s_k + cfg::kv_elems;                /* [BK x LD] */
  uint16_t *s_p = s_v + cfg::kv_elems + warp * cfg::p_elems; /* this warp's [16 x LDP] */

  pa_volta_tile_load<BQ, D, NT>(s_q, q_g, p.q.stride_s, c.seq.len_q - c.i0, p.head_dim, tid);
  bool partial = false;
  int n = use_block_mask ? pa_block_mask_next<BK, NT>(p, c, n_lo, n_hi, tid, &partial) : n_lo;

  /* The lane's fixed rows and columns in the fragment maps. */
  const uint16_t *q_frag = s_q + (wrow + pa_volta_a_row(lane)) * LD;      /* A: Q row */
  const uint16_t *k_frag = s_k + pa_volta_bcol_n(lane) * LD;             /* B .col: K row */
  const uint16_t *p_frag = s_p + pa_volta_a_row(lane) * LDP;             /* A: P row */
  const uint16_t *v_frag = s_v + pa_volta_brow_k(lane) * LD + pa_volta_brow_n(lane, 0);
  const int row[2] = {c.i0 + wrow + pa_volta_row(lane, 0), c.i0 + wrow + pa_volta_row(lane, 1)};

  float o[O_TILES][8]; /* O accumulator [16 rows x D] per warp */
#pragma unroll
  for (int d = 0; d < O_TILES; ++d)
#pragma unroll
    for (int i = 0; i < 8; ++i) o[d][i] = 0.0f;
  pa_softmax_row sm[2] = {pa_softmax_start(), pa_softmax_start()};

  while (n < n_hi) {
    __syncthreads(); /* Q stored (first tile); every warp done with the last K, V */
    const int rows = c.seq.len_k - n * BK;
    pa_volta_tile_load<BK, D, NT>(s_k, k_g + (int64_t)n * BK * p.k.stride_s, p.k.stride_s, rows,
                                  p.head_dim, tid);
    pa_volta_tile_load<BK, D, NT>(s_v, v_g + (int64_t)n * BK * p.v.stride_s, p.v.stride_s, rows,
                                  p.head_dim_v, tid);
    __syncthreads(); /* K, V visible */
    const bool tile_partial = partial;
    const int next = use_block_mask ? pa_block_mask_next<BK, NT>(p, c, n + 1, n_hi, tid, &partial)
                                    : n + 1;

    if (warp_active) {
      const int k0 = n * BK;
      float s[S_TILES][8]; /* S [16 rows x BK keys] per warp */
#pragma unroll
      for (int t = 0; t < S_TILES; ++t)
#pragma unroll
        for (int i = 0; i < 8; ++i) s[t][i] = 0.0f;
      /* S = Q . K^T */
#pragma unroll 2
      for (int kk = 0; kk < QK_STEPS; ++kk) {
        const uint2 a = pa_volta_lds64(q_frag + 4 * kk);
#pragma unroll
        for (int t = 0; t < S_TILES; ++t)
          pa_mma_884_row_col(s[t], a, pa_volta_lds64(k_frag + 16 * t * LD + 4 * kk));
      }

      /* Scores and masks; then softmax steps 1-3 of common/softmax.h. */
      const bool range = !(c.lo_last <= k0 && c.hi_first >= k0 + BK);
      pa_vfrag_scores<S_TILES>(s, p, c, general, slope, range, tile_partial, k0, lane, row);
      float alpha[2];
      pa_vfrag_softmax_update_max(sm, s, xscale, alpha);
      pa_vfrag_softmax_rescale(sm, alpha, o);
      pa_vfrag_softmax_accumulate(sm, s, xscale);

      /* P to fp16 through the warp's shared tile: written by the C map, read by the A map. */
#pragma unroll
      for (int t = 0; t < S_TILES; ++t)
#pragma unroll
        for (int i = 0; i < 8; i += 2)
          *(uint32_t *)(s_p + pa_volta_c_row(lane, i) * LDP + 16 * t + pa_volta_c_col(lane, i)) =
              pa_volta_pack2(s[t][i], s[t][i + 1]);
      __syncwarp();

      /* O += P . V */
#pragma unroll 1 /* D / 16 independent mma per step already */
      for (int kk = 0; kk < PV_STEPS; ++kk) {
        const uint2 a = pa_volta_lds64(p_frag + 4 * kk);
#pragma unroll
        for (int d = 0; d < O_TILES; ++d)
          pa_mma_884_row_row(o[d], a, pa_volta_lds64(v_frag + 4 * kk * LD + 16 * d));
      }
      __syncwarp(); /* every lane's P reads done before the next tile rewrites P */
    }
    n = next;
  }

  /* Every thread's Q stores (the tile load spreads rows over the block) are done
   * before a warp reuses its Q rows for O, even when no key tile ran. */
  __syncthreads();
  if (!warp_active) return; /* no barrier follows: each warp stages only its own rows */

  /* Step 4: normalise, then O through the warp's own 16 rows of the Q tile into
   * (16-byte where aligned) stores; LSE by one of the four lanes of each row. */
  float lse[2];
  pa_vfrag_softmax_normalise(sm, xscale, o, lse);
  uint16_t *stage_o = s_q + wrow * LD; /* [16 x LD], this warp's rows only */
#pragma unroll
  for (int d = 0; d < O_TILES; ++d)
#pragma unroll
    for (int i = 0; i < 8; i += 2)
      *(uint32_t *)(stage_o + pa_volta_c_row(lane, i) * LD + 16 * d + pa_volta_c_col(lane, i)) =
          pa_volta_pack2(o[d][i], o[d][i + 1]);
  __syncwarp();

  uint16_t *o_g = (uint16_t *)p.o.ptr;
  const int dv = p.head_dim_v;
  enum { CHUNKS = D / 8 };
#pragma unroll 2
  for (int x = lane; x < 16 * CHUNKS; x += 32) {
    const int r = x / CHUNKS, col = (x % CHUNKS) * 8;
    const int i = c.i0 + wrow + r;
    if (i >= c.seq.len_q || col >= dv) continue;
    const uint16_t *src = stage_o + r * LD + col;
    uint16_t *dst = o_g + pa_view_row(&p.o, c.b, i, c.seq.q_start, c.h) + col;
    if (col + 8 <= dv && ((uintptr_t)dst & 15) == 0) {
      const uint2 lo = pa_volta_lds64(src), hi = pa_volta_lds64(src + 4);
      *(uint4 *)dst = make_uint4(lo.x, lo.y, hi.x, hi.y);
    } else { /* odd strides or offsets, or the tail of a head dim */
      for (int k = 0; k < 8 && col + k < dv; ++k) dst[k] = src[k];
    }
  }

  if (p.lse.buf && (lane & (PA_VOLTA_ROW_XOR_A | PA_VOLTA_ROW_XOR_B)) == 0) {
    float *lse_g = (float *)p.lse.ptr;
#pragma unroll
    for (int r = 0; r < 2; ++r)
      if (row[r] < c.seq.len_q) lse_g[pa_lse_index(&p.lse, c.b, c.h, row[r], c.seq.q_start)] = lse[r];
  }
#else
  __trap(); /* never launched: pa_cuda_volta_supports() requires sm_70 */
#endif
}

/* Head-dim buckets compiled (fp16 only); a head dim runs in the smallest bucket
 * >= max(D, Dv), its extra columns zero. */
const int pa_volta_buckets[] = {64, 128, 256};

int pa_volta_bucket(const pa_problem *p) {
  const int d = p->head_dim > p->head_dim_v ? p->head_dim : p->head_dim_v;
  for (int b : pa_volta_buckets)
    if (d <= b) return b;
  return 0;
}

int pa_volta_smem_bytes(int bucket) {
  switch (bucket) {
  case 64: return pa_volta_cfg<64>::smem_bytes;
  case 128: return pa_volta_cfg<128>::smem_bytes;
  case 256: return pa_volta_cfg<256>::smem_bytes;
  }
  return 0;
}

/* Per instantiation: the devices on which the shared-memory opt-in was set. */
template <int D>
std::atomic<unsigned long long> &pa_volta_smem_opted() {
  static std::atomic<unsigned long long> mask(0);
  return mask;
}

template <int D>
cudaError_t pa_volta_launch(const pa_problem *p, cudaStream_t stream) {
  typedef pa_volta_cfg<D> cfg;
  const void *fn = (const void *)pa_volta_fwd_kernel<D>;
  if (cfg::smem_bytes > 48 * 1024) { /* above the default: opt in once per device */
    int device = 0;
    cudaError_t e = cudaGetDevice(&device);
    if (e != cudaSuccess) return e;
    const unsigned long long bit = device < 64 ? 1ull << device : 0;
    if (!bit || !(pa_volta_smem_opted<D>().load(std::memory_order_acquire) & bit)) {
      e = cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, cfg::smem_bytes);
      if (e != cudaSuccess) return e;
      pa_volta_smem_opted<D>().fetch_or(bit, std::memory_order_acq_rel);
    }
  }
  const dim3 grid((unsigned)((p->seqlen_q + cfg::block_q - 1) / cfg::block_q),
                  (unsigned)p->heads_q, (unsigned)p->batch);
  pa_volta_fwd_kernel<D><<<grid, cfg::threads, cfg::smem_bytes, stream>>>(*p);
  return cudaGetLastError();
}

} /* namespace */

int pa_cuda_volta_supports(const pa_problem *p, const pa_cuda_device *dev, pa_error *err) {
#define PA_NO(...)                                             \
  do {                                                         \
    if (err) snprintf(err->msg, sizeof err->msg, __VA_ARGS__); \
    return 0;                                                  \
  } while (0)
  if (!pa_tiled_forward_supports(p, "Volta", err)) return 0;
  if (p->dtype == POLYATTN_DTYPE_BF16)
    PA_NO("the Volta kernel takes fp16 only: mma.m8n8k4 has no bf16 form (bf16 tensor cores "
          "need sm_80, the Ampere kernel)");
  if (p->dtype != POLYATTN_DTYPE_F16)
    PA_NO("the Volta kernel takes fp16 only (fp32 inputs run on the simple kernel)");
  if (dev->cc_major < 7)
    PA_NO("the Volta kernel needs compute capability 7.0 or newer (device is %d.%d)",
          dev->cc_major, dev->cc_minor);
  const int smem = pa_volta_smem_bytes(pa_volta_bucket(p));
  if ((size_t)smem > dev->smem_optin)
    PA_NO("the Volta kernel needs %d bytes of shared memory for head dim %d; the device "
          "allows %zu", smem, pa_volta_bucket(p), dev->smem_optin);
#undef PA_NO
  return 1;
}

size_t pa_cuda_volta_workspace(const pa_problem *p, const pa_cuda_device *dev) {
  (void)p;
  (void)dev;
  return 0; /* no split-KV here */
}

cudaError_t pa_cuda_volta_forward(const pa_problem *p, const pa_cuda_device *dev,
                                  void *workspace, cudaStream_t stream) {
  (void)dev;
  (void)workspace;
  if (p->seqlen_q <= 0 || p->batch <= 0 || p->heads_q <= 0) return cudaSuccess;
  switch (pa_volta_bucket(p)) {
  case 64: return pa_volta_launch<64>(p, stream);
  case 128: return pa_volta_launch<128>(p, stream);
  case 256: return pa_volta_launch<256>(p, stream);
  }
  return cudaErrorInvalidValue;
}
