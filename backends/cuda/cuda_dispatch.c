/* plan, forward and backward of the CUDA backend, all through pa_cuda_pick_kernel():
 * the one place that decides which kernel runs a problem and whether any can. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_internal.h"

/* Whether cc 9.0 devices run the Hopper kernel by default (else only when forced
 * with POLYATTN_CUDA_KERNEL=hopper): on since it passed the forward sweep on the
 * H200 with the kernel forced (docs/decisions.md 54, bench/RESULTS.md). Problems it
 * declines fall back to the Ampere kernel. */
#ifndef PA_CUDA_HOPPER_DEFAULT
#  define PA_CUDA_HOPPER_DEFAULT 1
#endif

/* Whether the Hopper kernel is also the default at head dim 256: on since it passed
 * the hd256 cases of the forward sweep forced (15/15, three variants), memcheck and
 * synccheck on the H200, and ran 3.2x the Ampere kernel in the same process (bf16
 * S8192: 650.9 against 202.4 TFLOP/s; sixth session R1, bench/RESULTS.md, docs/
 * decisions.md 76). 0 keeps hd256 on the Ampere kernel unless forced. */
#ifndef PA_CUDA_HOPPER_D256_DEFAULT
#  define PA_CUDA_HOPPER_D256_DEFAULT 1
#endif

/* Whether cc 9.0 devices run the Hopper backward (bwd_hopper.cu) by default (else only
 * when forced with POLYATTN_CUDA_KERNEL=hopper or POLYATTN_CUDA_BACKWARD_KERNEL=hopper):
 * on since it passed the backward suite on the H200 with each variant forced and ran
 * 1.3-1.5x the Ampere backward (docs/decisions.md 74). Problems it declines fall back
 * to the Ampere kernel. */
#ifndef PA_CUDA_HOPPER_BWD_DEFAULT
#  define PA_CUDA_HOPPER_BWD_DEFAULT 1
#endif

/* Block masks finer than the Hopper kernel's 128 x 128 tiles leave most of its
 * listed tiles partly masked, and it masks those element by element (a wgmma spans
 * a warpgroup's 64 rows, so it cannot skip per warp); the Ampere kernel's list
 * skips per warp (block_list.cuh). On the H200 (bf16 hd128 S8192, 25% density),
 * both kernels on the list: 64 x 64 blocks 6.13 ms on Hopper, 1.67 ms on Ampere;
 * 128 x 128 blocks 0.583 ms on Hopper (3.44x its dense time; decisions 65, 68). So
 * by default such problems (AUTO_BLOCK's 64 x 64 too) run on the Ampere kernel;
 * forcing the Hopper kernel still runs them, correctly. */
static int block_mask_finer_than_hopper_tiles(const pa_problem *p) {
  return p->sparsity == POLYATTN_SPARSITY_BLOCK &&
         (p->block_q % PA_CUDA_HOPPER_TILE != 0 || p->block_k % PA_CUDA_HOPPER_TILE != 0);
}

static const char *kernel_name(pa_cuda_kernel k) {
  switch (k) {
  case PA_CUDA_KERNEL_SIMPLE: return "simple";
  case PA_CUDA_KERNEL_AMPERE: return "ampere";
  case PA_CUDA_KERNEL_VOLTA: return "volta";
  case PA_CUDA_KERNEL_DECODE: return "decode";
  case PA_CUDA_KERNEL_HOPPER: return "hopper";
  case PA_CUDA_KERNEL_HOPPER_FP8: return "hopper-fp8";
  default: return "none";
  }
}

/* A kernel forced by name: it runs the problem or the call is unsupported. */
static pa_cuda_kernel pick_forced(const char *want, const pa_problem *p, const pa_cuda_device *dev,
                                  pa_error *err) {
  pa_error why = {{0}};
  if (!strcmp(want, "simple")) {
    if (pa_cuda_simple_supports(p, dev, &why)) return PA_CUDA_KERNEL_SIMPLE;
  } else if (!strcmp(want, "ampere")) {
    if (dev->cc_major < 8)
      snprintf(why.msg, sizeof why.msg, "needs compute capability 8.0 or newer, the device has %d.%d",
               dev->cc_major, dev->cc_minor);
    else if (pa_cuda_ampere_supports(p, dev, &why))
      return PA_CUDA_KERNEL_AMPERE;
  } else if (!strcmp(want, "volta") || !strcmp(want, "sm70")) {
    if (pa_cuda_volta_supports(p, dev, &why)) return PA_CUDA_KERNEL_VOLTA; /* any cc >= 7.0 */
  } else if (!strcmp(want, "decode")) {
    if (pa_cuda_decode_supports(p, dev, &why)) return PA_CUDA_KERNEL_DECODE;
  } else if (!strcmp(want, "hopper")) {
    if (pa_cuda_hopper_supports(p, dev, &why)) return PA_CUDA_KERNEL_HOPPER;
  } else if (!strcmp(want, "hopper-fp8")) {
    if (pa_cuda_hopper_fp8_supports(p, dev, &why)) return PA_CUDA_KERNEL_HOPPER_FP8;
  } else {
    pa_fail(err, POLYATTN_ERR_UNSUPPORTED,
                 "POLYATTN_CUDA_KERNEL=%s is not one of simple, ampere, volta, decode, hopper, "
                 "hopper-fp8", want);
    return PA_CUDA_KERNEL_NONE;
  }
  pa_fail(err, POLYATTN_ERR_UNSUPPORTED, "POLYATTN_CUDA_KERNEL=%s: %s", want, why.msg);
  return PA_CUDA_KERNEL_NONE;
}

/* The backward: on cc 9.0 the Hopper (wgmma) kernel where PA_CUDA_HOPPER_BWD_DEFAULT
 * is on, then the Ampere tensor-core kernel where it applies (f16/bf16, sm_80+, head
 * dims up to 128), on cc 7.x the Volta one (fp16, head dims up to 128), else the
 * simple fp32 kernel. POLYATTN_CUDA_KERNEL=simple, =ampere, =volta or =hopper forces
 * one; naming a forward-only kernel makes the backward UNSUPPORTED. */
static pa_cuda_kernel pick_backward(const pa_problem *p, const pa_cuda_device *dev, pa_error *err) {
  /* POLYATTN_CUDA_BACKWARD_KERNEL forces the backward alone (the forward that makes
   * O and LSE keeps its own choice); else POLYATTN_CUDA_KERNEL forces both. */
  const char *want = getenv("POLYATTN_CUDA_BACKWARD_KERNEL");
  if (!want || !*want) want = getenv("POLYATTN_CUDA_KERNEL");
  pa_error why = {{0}};
  if (want && *want) {
    if (!strcmp(want, "simple")) {
      if (pa_cuda_simple_backward_supports(p, dev, &why)) return PA_CUDA_KERNEL_SIMPLE;
    } else if (!strcmp(want, "ampere")) {
      if (pa_cuda_ampere_backward_supports(p, dev, &why)) return PA_CUDA_KERNEL_AMPERE;
    } else if (!strcmp(want, "volta") || !strcmp(want, "sm70")) {
      if (pa_cuda_volta_backward_supports(p, dev, &why)) return PA_CUDA_KERNEL_VOLTA;
    } else if (!strcmp(want, "hopper")) {
      if (pa_cuda_hopper_backward_supports(p, dev, &why)) return PA_CUDA_KERNEL_HOPPER;
    } else {
      snprintf(why.msg, sizeof why.msg,
               "the CUDA backward has the simple, ampere, volta and hopper kernels only");
    }
    pa_fail(err, POLYATTN_ERR_UNSUPPORTED, "forced backward kernel %s: %s", want, why.msg);
    return PA_CUDA_KERNEL_NONE;
  }
  if (PA_CUDA_HOPPER_BWD_DEFAULT && dev->cc_major == 9 &&
      pa_cuda_hopper_backward_supports(p, dev, &why))
    return PA_CUDA_KERNEL_HOPPER; /* declining is not an error: fall back */
  if (pa_cuda_ampere_backward_supports(p, dev, &why))
    return PA_CUDA_KERNEL_AMPERE;
  if (dev->cc_major == 7 && pa_cuda_volta_backward_supports(p, dev, &why))
    return PA_CUDA_KERNEL_VOLTA;
  if (pa_cuda_simple_backward_supports(p, dev, &why)) return PA_CUDA_KERNEL_SIMPLE;
  pa_fail(err, POLYATTN_ERR_UNSUPPORTED, "no CUDA backward kernel runs this problem: %s", why.msg);
  return PA_CUDA_KERNEL_NONE;
}

pa_cuda_kernel pa_cuda_pick_kernel(const pa_problem *p, const pa_cuda_device *dev, pa_error *err) {
  if (p->pass == PA_PASS_BACKWARD && p->sparsity == POLYATTN_SPARSITY_AUTO_BLOCK) {
    pa_fail(err, POLYATTN_ERR_UNSUPPORTED,
            "the backward of AUTO_BLOCK takes the mask the forward chose (block_mask_out) as BLOCK");
    return PA_CUDA_KERNEL_NONE;
  }
  if (p->sparsity == POLYATTN_SPARSITY_AUTO_BLOCK) {
    /* The estimator (auto_block.cu) hands the kernel a BLOCK problem. */
    pa_error why = {{0}};
    if (!pa_cuda_auto_block_supports(p, &why)) {
      pa_fail(err, POLYATTN_ERR_UNSUPPORTED, "%s", why.msg);
      return PA_CUDA_KERNEL_NONE;
    }
    pa_problem r;
    pa_cuda_auto_block_as_block(p, NULL, &r);
    return pa_cuda_pick_kernel(&r, dev, err);
  }
  if (p->pass == PA_PASS_BACKWARD) return pick_backward(p, dev, err);
  if (p->dtype == POLYATTN_DTYPE_FP8_E4M3) {
    /* one kernel computes fp8 (decision 77); forcing another one names it and fails */
    const char *forced = getenv("POLYATTN_CUDA_KERNEL");
    if (forced && *forced && strcmp(forced, "hopper-fp8") != 0)
      return pick_forced(forced, p, dev, err);
    /* Opt-in (decision 78): its LSE misses DESIGN.md's 1e-3 on Hopper's fp8 accumulation */
    const char *opt = getenv("POLYATTN_CUDA_FP8");
    const int opted_in = (forced && *forced) || (opt && !strcmp(opt, "1"));
    if (!opted_in) {
      pa_fail(err, POLYATTN_ERR_UNSUPPORTED,
              "fp8_e4m3: the FP8 kernel is opt-in (POLYATTN_CUDA_FP8=1 or "
              "POLYATTN_CUDA_KERNEL=hopper-fp8): its outputs meet the tolerance rule but its "
              "LSE misses the 1e-3 contract by up to ~1e-2 (Hopper's fp8 accumulation of "
              "Q.K^T; docs/decisions.md 78)");
      return PA_CUDA_KERNEL_NONE;
    }
    pa_error why = {{0}};
    if (pa_cuda_hopper_fp8_supports(p, dev, &why)) return PA_CUDA_KERNEL_HOPPER_FP8;
    pa_fail(err, POLYATTN_ERR_UNSUPPORTED, "fp8_e4m3: %s", why.msg);
    return PA_CUDA_KERNEL_NONE;
  }
  if (p->dtype != POLYATTN_DTYPE_F32 && p->dtype != POLYATTN_DTYPE_F16 &&
      p->dtype != POLYATTN_DTYPE_BF16) {
    pa_fail(err, POLYATTN_ERR_UNSUPPORTED, "dtype %s is not supported by the CUDA backend",
                 p->dtype == POLYATTN_DTYPE_FP8_E4M3 ? "fp8_e4m3" : "(not f32, f16 or bf16)");
    return PA_CUDA_KERNEL_NONE;
  }
  /* NM_2_4 needs nothing here: the Ampere kernel (its SP24 variant) and the simple
   * kernel run it, the decode and Volta kernels decline it. */
  const char *want = getenv("POLYATTN_CUDA_KERNEL");
  if (want && *want) return pick_forced(want, p, dev, err);

  {
    pa_error why = {{0}}; /* decode-shaped (Sq <= 16, <= 64 rows per kv head): split-KV */
    if (pa_cuda_decode_supports(p, dev, &why)) return PA_CUDA_KERNEL_DECODE;
  }
  if (PA_CUDA_HOPPER_DEFAULT && dev->cc_major == 9 && !block_mask_finer_than_hopper_tiles(p) &&
      (p->head_dim != 256 || PA_CUDA_HOPPER_D256_DEFAULT)) {
    pa_error why = {{0}}; /* the Hopper kernel declining is not an error: Ampere next */
    if (pa_cuda_hopper_supports(p, dev, &why)) return PA_CUDA_KERNEL_HOPPER;
  }
  if ((p->dtype == POLYATTN_DTYPE_F16 || p->dtype == POLYATTN_DTYPE_BF16) && dev->cc_major >= 8) {
    pa_error why = {{0}}; /* the Ampere kernel declining is not an error: fall back */
    if (pa_cuda_ampere_supports(p, dev, &why)) return PA_CUDA_KERNEL_AMPERE;
  }
  if (p->dtype == POLYATTN_DTYPE_F16 && dev->cc_major == 7) {
    pa_error why = {{0}}; /* Volta/Turing: the m8n8k4 kernel, else fall back */
    if (pa_cuda_volta_supports(p, dev, &why)) return PA_CUDA_KERNEL_VOLTA;
  }
  pa_error why = {{0}};
  if (pa_cuda_simple_supports(p, dev, &why)) return PA_CUDA_KERNEL_SIMPLE;
  pa_fail(err, POLYATTN_ERR_UNSUPPORTED, "no CUDA kernel runs this problem: %s", why.msg);
  return PA_CUDA_KERNEL_NONE;
}

polyattn_status pa_cuda_plan(void *bctx, const pa_problem *p, size_t *workspace_bytes,
                             pa_error *err) {
  const pa_cuda_ctx *ctx = (const pa_cuda_ctx *)bctx;
  if (p->pass == PA_PASS_FORWARD && p->sparsity == POLYATTN_SPARSITY_AUTO_BLOCK) {
    pa_problem r; /* the estimate's workspace, then the BLOCK kernel's */
    pa_cuda_auto_block_as_block(p, NULL, &r);
    polyattn_status st = pa_cuda_plan(bctx, &r, workspace_bytes, err);
    if (st == POLYATTN_OK) *workspace_bytes += pa_cuda_auto_block_workspace(p);
    return st;
  }
  const pa_cuda_kernel k = pa_cuda_pick_kernel(p, &ctx->dev, err);
  if (k != PA_CUDA_KERNEL_NONE && p->pass == PA_PASS_BACKWARD) {
    *workspace_bytes = k == PA_CUDA_KERNEL_AMPERE   ? pa_cuda_ampere_backward_workspace(p, &ctx->dev)
                       : k == PA_CUDA_KERNEL_VOLTA  ? pa_cuda_volta_backward_workspace(p, &ctx->dev)
                       : k == PA_CUDA_KERNEL_HOPPER ? pa_cuda_hopper_backward_workspace(p, &ctx->dev)
                                                    : pa_cuda_simple_backward_workspace(p, &ctx->dev);
    return POLYATTN_OK;
  }
  switch (k) {
  case PA_CUDA_KERNEL_SIMPLE: *workspace_bytes = pa_cuda_simple_workspace(p, &ctx->dev); break;
  case PA_CUDA_KERNEL_AMPERE: *workspace_bytes = pa_cuda_ampere_workspace(p, &ctx->dev); break;
  case PA_CUDA_KERNEL_DECODE: *workspace_bytes = pa_cuda_decode_workspace(p, &ctx->dev); break;
  case PA_CUDA_KERNEL_VOLTA: *workspace_bytes = pa_cuda_volta_workspace(p, &ctx->dev); break;
  case PA_CUDA_KERNEL_HOPPER: *workspace_bytes = pa_cuda_hopper_workspace(p, &ctx->dev); break;
  case PA_CUDA_KERNEL_HOPPER_FP8: *workspace_bytes = 0; break;
  default: return POLYATTN_ERR_UNSUPPORTED;
  }
  return POLYATTN_OK;
}

/* AUTO_BLOCK's dense fallback is decided on the device (the estimate's density
 * against the cut-off), so the host cannot choose the kernel after it. Where the
 * dense problem's own kernel is the Hopper one and the BLOCK kernel walks a tile list
 * (Hopper or Ampere), both are launched: the estimator hands the BLOCK kernel an
 * all-zero mask when it falls back (the kernel then only writes empty rows), and the
 * Hopper kernel after it runs the dense problem, without a mask, only then (its blocks
 * read the gate and return at once otherwise). Elsewhere the BLOCK kernel runs the
 * all-ones mask. Decision 69. */
static int auto_block_gated(const pa_problem *p, pa_cuda_kernel block_kernel,
                            const pa_cuda_device *dev, pa_problem *dense) {
  if (block_kernel != PA_CUDA_KERNEL_HOPPER && block_kernel != PA_CUDA_KERNEL_AMPERE) return 0;
  *dense = *p;
  dense->sparsity = POLYATTN_SPARSITY_NONE;
  memset(&dense->block_mask, 0, sizeof dense->block_mask);
  memset(&dense->block_mask_out, 0, sizeof dense->block_mask_out);
  pa_error why = {{0}};
  return pa_cuda_pick_kernel(dense, dev, &why) == PA_CUDA_KERNEL_HOPPER;
}

/* Enqueue on the context's stream: no allocation, no synchronisation, so the call
 * can be captured in a CUDA graph. */
polyattn_status pa_cuda_forward(void *bctx, const pa_problem *p,
                                const struct polyattn_buffer *workspace, pa_error *err) {
  const pa_cuda_ctx *ctx = (const pa_cuda_ctx *)bctx;
  pa_cuda_kernel k = pa_cuda_pick_kernel(p, &ctx->dev, err);
  if (k == PA_CUDA_KERNEL_NONE) return POLYATTN_ERR_UNSUPPORTED;
  void *ws = workspace ? workspace->address : NULL;
  cudaError_t e = cudaSetDevice(ctx->device);
  if (e != cudaSuccess) return pa_cuda_status(err, e, "cudaSetDevice");
  pa_problem resolved, dense;
  const int32_t *dense_gate = NULL;
  if (p->sparsity == POLYATTN_SPARSITY_AUTO_BLOCK) {
    /* the estimate, then the kernel on the chosen mask (auto_block.cu) */
    const int gated = auto_block_gated(p, k, &ctx->dev, &dense);
    e = pa_cuda_auto_block_resolve(p, ws, ctx->stream, &resolved, gated ? &dense_gate : NULL);
    if (e != cudaSuccess) return pa_cuda_status(err, e, "CUDA AUTO_BLOCK estimate");
    ws = (char *)ws + pa_cuda_auto_block_workspace(p);
    p = &resolved;
  }
  if (k == PA_CUDA_KERNEL_DECODE)
    e = pa_cuda_decode_forward(p, &ctx->dev, ws, ctx->stream);
  else if (k == PA_CUDA_KERNEL_VOLTA)
    e = pa_cuda_volta_forward(p, &ctx->dev, ws, ctx->stream);
  else if (k == PA_CUDA_KERNEL_HOPPER)
    e = pa_cuda_hopper_forward(p, &ctx->dev, ws, ctx->stream);
  else if (k == PA_CUDA_KERNEL_HOPPER_FP8)
    e = pa_cuda_hopper_fp8_forward(p, &ctx->dev, ctx->stream);
  else
    e = k == PA_CUDA_KERNEL_AMPERE ? pa_cuda_ampere_forward(p, &ctx->dev, ws, ctx->stream)
                                   : pa_cuda_simple_forward(p, &ctx->dev, ws, ctx->stream);
  if (e == cudaSuccess && dense_gate) {
    k = PA_CUDA_KERNEL_HOPPER; /* for the message */
    e = pa_cuda_hopper_forward_gated(&dense, &ctx->dev, NULL, dense_gate, ctx->stream);
  }
  if (e == cudaSuccess) e = cudaGetLastError();
  if (e != cudaSuccess) {
    char what[64];
    snprintf(what, sizeof what, "CUDA %s forward", kernel_name(k));
    return pa_cuda_status(err, e, what);
  }
  return POLYATTN_OK;
}

/* Enqueue on the context's stream, like forward: capturable in a CUDA graph. */
polyattn_status pa_cuda_backward(void *bctx, const pa_problem *p,
                                 const struct polyattn_buffer *workspace, pa_error *err) {
  const pa_cuda_ctx *ctx = (const pa_cuda_ctx *)bctx;
  const pa_cuda_kernel k = pa_cuda_pick_kernel(p, &ctx->dev, err);
  if (k == PA_CUDA_KERNEL_NONE) return POLYATTN_ERR_UNSUPPORTED;
  cudaError_t e = cudaSetDevice(ctx->device);
  if (e != cudaSuccess) return pa_cuda_status(err, e, "cudaSetDevice");
  void *ws = workspace ? workspace->address : NULL;
  e = k == PA_CUDA_KERNEL_AMPERE   ? pa_cuda_ampere_backward(p, &ctx->dev, ws, ctx->stream)
      : k == PA_CUDA_KERNEL_VOLTA  ? pa_cuda_volta_backward(p, &ctx->dev, ws, ctx->stream)
      : k == PA_CUDA_KERNEL_HOPPER ? pa_cuda_hopper_backward(p, &ctx->dev, ws, ctx->stream)
                                   : pa_cuda_simple_backward(p, &ctx->dev, ws, ctx->stream);
  if (e == cudaSuccess) e = cudaGetLastError();
  if (e != cudaSuccess) {
    char what[64];
    snprintf(what, sizeof what, "CUDA %s backward", kernel_name(k));
    return pa_cuda_status(err, e, what);
  }
  return POLYATTN_OK;
}
