/* The Ampere forward kernel (sm_80+, also run on sm_90): FlashAttention-2 for fp16
 * and bf16 with mma.sync m16n8k16, ldmatrix and cp.async.
 *
 * The kernel is the forward tile loop of fwd_tile.cuh (written once; the HIP
 * module's MFMA kernel is the other instance) on the Ampere fragment layer of
 * ampere_frag.cuh. One block computes `block_q` query rows of one (batch entry,
 * query head); each warp owns 16 or 32 of those rows (one or two mma M tiles,
 * ampere_tune.cuh) and keeps their Q fragments (optionally), S = Q.K^T and the O
 * accumulator in registers. Key tiles of `block_k` rows stream through a two-stage
 * cp.async pipeline: tile n + 1's K and V load while tile n is computed. The online
 * softmax (frag_softmax.cuh) runs on the S fragments; P goes from the S
 * accumulators straight into A fragments of P.V, without shared memory.
 *
 * Everything but the head dim and dtype is a run-time value: causal, windows,
 * softcap, ALiBi, GQA, varlen, seqused_k, block masks. Key tiles outside the rows'
 * mask range (pa_mask_rows_range) are never loaded; under BLOCK sparsity the kernel
 * visits only the tiles of a list built on the GPU before it (block_list.cuh), so
 * its time falls with density. Per-element masking runs only on tiles that need it.
 *
 * Files: fwd_tile.cuh (the loop), ampere_frag.cuh (the fragment layer: staging,
 * products, the 2:4 hooks, the epilogue), ampere_tune.cuh (the tuning table),
 * ampere_tile.cuh (swizzled tiles, cp.async loads), ampere_mma.cuh (PTX wrappers,
 * fragment layouts), ampere_softmax.cuh (mma.sync's C layout as a fragment map),
 * frag_scores.cuh and frag_softmax.cuh (score pass and softmax steps on any map).
 * This file: the kernel's entry, the head-dim buckets and variants, the launch and
 * the support rules. */
#define PA_CUDA_AMPERE_REAL 1
/* PA_CUDA_AMPERE_M3=1: hd64's three-M-tile rows (m3k64tj, m3k64t; decision 141) also in a
 * build without the tuning variants (bench/gpu/s49.sh's module) */
#ifndef PA_CUDA_AMPERE_M3
#define PA_CUDA_AMPERE_M3 0
#endif
/* PA_CUDA_AMPERE_XPV=1: the "-x" rows (m2k64-km-rs-x, m2k128tj-x; decision 142) also in a
 * build without the tuning variants (bench/gpu/s49_x.sh's module) */
#ifndef PA_CUDA_AMPERE_XPV
#define PA_CUDA_AMPERE_XPV 0
#endif
/* PA_CUDA_AMPERE_LK=1: the "-lk" rows (m2k64-km-rs-lk, m2k128tj-lk; decision 143) also in a
 * build without the tuning variants (bench/gpu/s49_x.sh FORM=lk's module) */
#ifndef PA_CUDA_AMPERE_LK
#define PA_CUDA_AMPERE_LK 0
#endif
/* PA_CUDA_AMPERE_SC=1: the "-sc" and "-mg" rows (m2k64-km-rs-mg-sc, m2k128tj-sc, m2k128tj-mg;
 * decision 144) also in a build without the tuning variants (bench/gpu/s50.sh's module) */
#ifndef PA_CUDA_AMPERE_SC
#define PA_CUDA_AMPERE_SC 0
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <atomic>

#include "block_ctx.cuh"
#include "block_list.cuh"
#include "kernels.h"
#include "mask.h"

#include "ampere_frag.cuh"
#include "ampere_tune.cuh"
#include "fwd_tile.cuh"

namespace {

/* The kernel: the forward tile loop (fwd_tile.cuh) on the Ampere fragment layer
 * (ampere_frag.cuh). SP24: the NM_2_4 variant (ampere_sp24.cuh): K read in 2:4
 * group order, the two largest of each group of four kept (sp24_select = 0 keeps
 * the first two: a timing variant that computes something else), softmax on the
 * kept entries only, P.V on mma.sp m16n8k32. */
template <typename T, int D, int V, bool SP24>
__global__ void __launch_bounds__(pa_ampere_cfg<D, V>::threads, pa_ampere_cfg<D, V>::min_blocks)
    pa_ampere_fwd_kernel(const __grid_constant__ pa_problem p, const int32_t *block_list,
                         int sp24_select) {
#if PA_AMPERE_ARCH_OK
  extern __shared__ __align__(128) unsigned char pa_smem[];
  pa_fwd_tile<pa_ampere_frag<T, D, V, SP24>>(p, block_list, sp24_select, pa_smem);
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

/* POLYATTN_CUDA_AMPERE_VARIANT (ampere_tune.cuh): read at each call, as the Hopper
 * kernel's variables are, so that one process can time several (bench/compare_torch.py
 * --variants; until the twenty-third session it was read once per process, and such
 * comparisons timed the first variant only). Unknown names run the default variant
 * (the library never prints). */
const char *const pa_variant_names[PA_VARIANT_COUNT] = {
    "base",    "m2",       "m2j",      "m2k64",       "m2k64j",      "m2k128",     "m2k128t",
    "m2k128tj", "m2k64-km", "m2k128tj-km", "m2k128tj-rs", "m2k64-km-rs", "m3k64tj", "m3k64t",
    "m2k64-km-rs-x", "m2k128tj-x", "m2k64-km-rs-lk", "m2k128tj-lk", "m2k64-km-rs-mg-sc",
    "m2k128tj-sc", "m2k128tj-mg", "auto"};

int pa_variant() {
  const char *env = getenv("POLYATTN_CUDA_AMPERE_VARIANT");
  if (!env || !*env) return (int)PA_VARIANT_DEFAULT;
  for (int i = 0; i < PA_VARIANT_COUNT; ++i)
    if (!strcmp(env, pa_variant_names[i])) return i;
  return (int)PA_VARIANT_DEFAULT;
}

/* The (head dim, variant) instantiations compiled: hd64 m2k128tj, hd128 m2k64-km-rs and
 * m2k64-km (what "auto" runs: the latter with LSE or 2:4, pa_variant_for), and with
 * PA_CUDA_TUNING_VARIANTS (CMake option POLYATTN_CUDA_TUNING_VARIANTS) also hd64 base, m2,
 * m2j, m2k128, m2k128t, m2k128tj-km, m2k128tj-rs, m3k64tj and m3k64t (these two also with
 * PA_CUDA_AMPERE_M3), m2k128tj-x and m2k128tj-lk, hd128 base, m2, m2k64j, m2k64,
 * m2k64-km-rs-x and m2k64-km-rs-lk (the "-x" rows also with PA_CUDA_AMPERE_XPV, the "-lk"
 * rows with PA_CUDA_AMPERE_LK; m2j runs m2's row; the "-rs" rows without their 2:4
 * kernels); a variant without a compiled row
 * runs the head dim's "auto" row. Every other head dim runs its base row, whatever the
 * variant. The callback gets the pair as a type: f(pa_inst<D, V>()) is instantiated
 * for each compiled pair. */
template <int D, int V>
struct pa_inst {
  enum { d = D, v = V };
};

/* "auto": the variant measured fastest per bucket (ampere_tune.cuh); at hd64 the
 * 128-key tiles with tree maxima and one barrier per tile for every mask: plain, causal
 * and sliding windows (bench/RESULTS.md, twenty-third and twenty-seventh sessions; until
 * the latter a left window ran m2j, 5-11% slower); at hd128 the 64-key tiles with the
 * softmax's kept maximum (thirty-third session, decision 124: +2.7-4.2% over m2k64) and,
 * for calls without LSE, the row sums by the tensor cores (thirty-fourth session,
 * decision 125: m2k64-km-rs, +1.0-1.5%, causal +0.2-0.3%; pa_variant_for gives calls with
 * LSE or 2:4 m2k64-km). */
int pa_auto_variant(int bucket) {
  if (bucket == 64) return PA_VARIANT_M2K128TJ;
  return bucket == 128 ? PA_VARIANT_M2K64KMRS : PA_VARIANT_BASE;
}

/* The rows with the tensor cores' row sums (rowsum, ampere_tune.cuh) run only without
 * LSE and without 2:4: a call that asks for the LSE (their l sums the rounded P) or runs
 * the 2:4 kernel (mma.sp has no such sum here) gets the row they were made from. */
int pa_variant_for(const pa_problem *p, int variant) {
  if (variant == PA_VARIANT_AUTO) variant = pa_auto_variant(pa_bucket(p));
  if (!p->lse.buf && p->sparsity != POLYATTN_SPARSITY_NM_2_4) return variant;
  if (variant == PA_VARIANT_M2K128TJRS) return PA_VARIANT_M2K128TJ;
  if (variant == PA_VARIANT_M2K64KMRS || variant == PA_VARIANT_M2K64KMRSX ||
      variant == PA_VARIANT_M2K64KMRSLK || variant == PA_VARIANT_M2K64KMRSMGSC)
    return PA_VARIANT_M2K64KM;
  return variant;
}

template <typename F>
auto pa_with_inst(int bucket, int variant, F &&f) -> decltype(f(pa_inst<32, 0>())) {
  if (variant == PA_VARIANT_AUTO) variant = pa_auto_variant(bucket);
  switch (bucket) {
  case 32: return f(pa_inst<32, PA_VARIANT_BASE>());
  case 64:
#if PA_CUDA_TUNING_VARIANTS
    if (variant == PA_VARIANT_M2) return f(pa_inst<64, PA_VARIANT_M2>());
    if (variant == PA_VARIANT_BASE) return f(pa_inst<64, PA_VARIANT_BASE>());
    if (variant == PA_VARIANT_M2K128) return f(pa_inst<64, PA_VARIANT_M2K128>());
    if (variant == PA_VARIANT_M2K128T) return f(pa_inst<64, PA_VARIANT_M2K128T>());
    if (variant == PA_VARIANT_M2J) return f(pa_inst<64, PA_VARIANT_M2J>());
    if (variant == PA_VARIANT_M2K128TJKM) return f(pa_inst<64, PA_VARIANT_M2K128TJKM>());
    if (variant == PA_VARIANT_M2K128TJRS) return f(pa_inst<64, PA_VARIANT_M2K128TJRS>());
#endif
#if PA_CUDA_TUNING_VARIANTS || PA_CUDA_AMPERE_M3
    if (variant == PA_VARIANT_M3K64TJ) return f(pa_inst<64, PA_VARIANT_M3K64TJ>());
    if (variant == PA_VARIANT_M3K64T) return f(pa_inst<64, PA_VARIANT_M3K64T>());
#endif
#if PA_CUDA_TUNING_VARIANTS || PA_CUDA_AMPERE_XPV
    if (variant == PA_VARIANT_M2K128TJX) return f(pa_inst<64, PA_VARIANT_M2K128TJX>());
#endif
#if PA_CUDA_TUNING_VARIANTS || PA_CUDA_AMPERE_LK
    if (variant == PA_VARIANT_M2K128TJLK) return f(pa_inst<64, PA_VARIANT_M2K128TJLK>());
#endif
#if PA_CUDA_TUNING_VARIANTS || PA_CUDA_AMPERE_SC
    if (variant == PA_VARIANT_M2K128TJSC) return f(pa_inst<64, PA_VARIANT_M2K128TJSC>());
    if (variant == PA_VARIANT_M2K128TJMG) return f(pa_inst<64, PA_VARIANT_M2K128TJMG>());
#endif
    return f(pa_inst<64, PA_VARIANT_M2K128TJ>());
  case 96: return f(pa_inst<96, PA_VARIANT_BASE>());
  case 128:
#if PA_CUDA_TUNING_VARIANTS
    if (variant == PA_VARIANT_M2K64J) return f(pa_inst<128, PA_VARIANT_M2K64J>());
    if (variant == PA_VARIANT_M2K64) return f(pa_inst<128, PA_VARIANT_M2K64>());
    if (variant == PA_VARIANT_M2 || variant == PA_VARIANT_M2J) /* no m2j row: spills */
      return f(pa_inst<128, PA_VARIANT_M2>());
    if (variant == PA_VARIANT_BASE) return f(pa_inst<128, PA_VARIANT_BASE>());
#endif
#if PA_CUDA_TUNING_VARIANTS || PA_CUDA_AMPERE_XPV
    if (variant == PA_VARIANT_M2K64KMRSX) return f(pa_inst<128, PA_VARIANT_M2K64KMRSX>());
#endif
#if PA_CUDA_TUNING_VARIANTS || PA_CUDA_AMPERE_LK
    if (variant == PA_VARIANT_M2K64KMRSLK) return f(pa_inst<128, PA_VARIANT_M2K64KMRSLK>());
#endif
#if PA_CUDA_TUNING_VARIANTS || PA_CUDA_AMPERE_SC
    if (variant == PA_VARIANT_M2K64KMRSMGSC) return f(pa_inst<128, PA_VARIANT_M2K64KMRSMGSC>());
#endif
    if (variant == PA_VARIANT_M2K64KMRS) return f(pa_inst<128, PA_VARIANT_M2K64KMRS>());
    return f(pa_inst<128, PA_VARIANT_M2K64KM>());
  case 192: return f(pa_inst<192, PA_VARIANT_BASE>());
  case 256: return f(pa_inst<256, PA_VARIANT_BASE>());
  }
  return f(pa_inst<0, -1>());
}

int pa_smem_bytes(int bucket, int variant) {
  return pa_with_inst(bucket, variant, [](auto inst) -> int {
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
  const int variant = pa_variant_for(p, pa_variant());
  return pa_with_inst(pa_bucket(p), variant, [&](auto inst) -> cudaError_t {
    typedef decltype(inst) I;
    if constexpr (I::d == 0) return cudaErrorInvalidValue;
    else if (p->sparsity == POLYATTN_SPARSITY_NM_2_4) {
      /* a "-rs" row never sees 2:4 (pa_variant_for), so its 2:4 kernel is not compiled */
      if constexpr (pa_ampere_cfg<I::d, I::v>::rowsum) return cudaErrorInvalidValue;
      else return pa_launch<T, I::d, I::v, true>(p, workspace, stream);
    } else {
      return pa_launch<T, I::d, I::v, false>(p, workspace, stream);
    }
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
  const int smem = pa_smem_bytes(pa_bucket(p), pa_variant_for(p, pa_variant()));
  if ((size_t)smem > dev->smem_optin)
    PA_NO("the Ampere kernel needs %d bytes of shared memory for head dim %d; the device "
          "allows %zu", smem, pa_bucket(p), dev->smem_optin);
#undef PA_NO
  return 1;
}

size_t pa_cuda_ampere_workspace(const pa_problem *p, const pa_cuda_device *dev) {
  (void)dev; /* no split-KV here; BLOCK's key-tile list for the kernel's tile shape */
  if (!pa_uses_block_list(p)) return 0;
  /* Sized for every row the head dim can run, not only the variable's row now: it is
   * read again at each call, and a row with narrower key tiles needs a longer list. */
  size_t most = 0;
  for (int v = 0; v < PA_VARIANT_COUNT; ++v) {
    const size_t bytes = pa_with_inst(pa_bucket(p), v, [&](auto inst) -> size_t {
      typedef decltype(inst) I;
      if constexpr (I::d == 0) return 0;
      else return pa_block_list_bytes(p, pa_ampere_cfg<I::d, I::v>::block_q,
                                      pa_ampere_cfg<I::d, I::v>::block_k);
    });
    if (bytes > most) most = bytes;
  }
  return most;
}

cudaError_t pa_cuda_ampere_forward(const pa_problem *p, const pa_cuda_device *dev,
                                   void *workspace, cudaStream_t stream) {
  (void)dev;
  if (p->seqlen_q <= 0 || p->batch <= 0 || p->heads_q <= 0) return cudaSuccess;
#if PA_HAS_MMA_SYNC /* fwd_ampere_pipe.cu: an experimental schedule (CUDA builds only) */
  if (const int on = pa_cuda_ampere_pipe_wanted(p))
    return pa_cuda_ampere_pipe_forward(p, on, stream);
#endif
  if (p->dtype == POLYATTN_DTYPE_BF16) return pa_launch_bucket<__nv_bfloat16>(p, workspace, stream);
  return pa_launch_bucket<__half>(p, workspace, stream);
}
