/* plan, forward and backward of the HIP backend, all through pick_kernel(): the one
 * place that decides which kernel runs a problem and whether any can. The support
 * rules are the CUDA module's (cuda_dispatch.c): the same dtypes, the same
 * sparsity modes refused, a forced kernel that cannot run the call is UNSUPPORTED. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hip_internal.h"

typedef enum pa_hip_kernel {
  PA_HIP_KERNEL_NONE = 0,
  PA_HIP_KERNEL_SIMPLE, /* backends/cuda/fwd_simple.cu, bwd_simple.cu: fp32 math, any target */
  PA_HIP_KERNEL_DECODE, /* backends/cuda/fwd_decode.cu: split-KV, its fp32 split kernel */
  PA_HIP_KERNEL_MFMA    /* fwd_mfma.cu: CDNA matrix cores, opt-in until run on hardware */
} pa_hip_kernel;

static const char *kernel_name(pa_hip_kernel k) {
  switch (k) {
  case PA_HIP_KERNEL_SIMPLE: return "simple";
  case PA_HIP_KERNEL_DECODE: return "decode";
  case PA_HIP_KERNEL_MFMA: return "mfma";
  default: return "none";
  }
}

static pa_hip_kernel pick_kernel(const pa_problem *p, const pa_cuda_device *dev, pa_error *err) {
  const char *want = getenv("POLYATTN_HIP_KERNEL");
  pa_error why = {{0}};
  if (p->pass == PA_PASS_BACKWARD) { /* one kernel: the simple fp32 backward */
    if (want && *want && strcmp(want, "simple") != 0) {
      pa_fail(err, POLYATTN_ERR_UNSUPPORTED,
              "POLYATTN_HIP_KERNEL=%s: the HIP backward has only the simple kernel", want);
      return PA_HIP_KERNEL_NONE;
    }
    if (pa_cuda_simple_backward_supports(p, dev, &why)) return PA_HIP_KERNEL_SIMPLE;
    pa_fail(err, POLYATTN_ERR_UNSUPPORTED, "no HIP backward kernel runs this problem: %s",
            why.msg);
    return PA_HIP_KERNEL_NONE;
  }
  if (p->dtype != POLYATTN_DTYPE_F32 && p->dtype != POLYATTN_DTYPE_F16 &&
      p->dtype != POLYATTN_DTYPE_BF16) {
    pa_fail(err, POLYATTN_ERR_UNSUPPORTED, "dtype %s is not supported by the HIP backend",
            p->dtype == POLYATTN_DTYPE_FP8_E4M3 ? "fp8_e4m3" : "(not f32, f16 or bf16)");
    return PA_HIP_KERNEL_NONE;
  }
  if (p->sparsity == POLYATTN_SPARSITY_AUTO_BLOCK || p->sparsity == POLYATTN_SPARSITY_NM_2_4) {
    pa_fail(err, POLYATTN_ERR_UNSUPPORTED, "%s",
            p->sparsity == POLYATTN_SPARSITY_AUTO_BLOCK
                ? "AUTO_BLOCK sparsity is not implemented by the HIP backend yet (CUDA's GPU "
                  "estimator, auto_block.cu, is not built for HIP)"
                : "2:4 sparsity is not implemented by the HIP backend (CDNA3's smfmac is not "
                  "used yet; older targets have no sparse matrix instruction)");
    return PA_HIP_KERNEL_NONE;
  }
  if (want && *want) {
    if (!strcmp(want, "simple")) {
      if (pa_cuda_simple_supports(p, dev, &why)) return PA_HIP_KERNEL_SIMPLE;
    } else if (!strcmp(want, "decode")) {
      if (pa_cuda_decode_supports(p, dev, &why)) return PA_HIP_KERNEL_DECODE;
    } else if (!strcmp(want, "mfma")) {
      if (pa_hip_mfma_supports(p, dev, &why)) return PA_HIP_KERNEL_MFMA;
    } else {
      pa_fail(err, POLYATTN_ERR_UNSUPPORTED,
              "POLYATTN_HIP_KERNEL=%s is not one of simple, decode, mfma", want);
      return PA_HIP_KERNEL_NONE;
    }
    pa_fail(err, POLYATTN_ERR_UNSUPPORTED, "POLYATTN_HIP_KERNEL=%s: %s", want, why.msg);
    return PA_HIP_KERNEL_NONE;
  }
  /* As on CUDA, decode-shaped problems (Sq <= 16, <= 64 rows per kv head) go to the
   * split-KV kernel. The MFMA kernel is not picked by default until it has run on
   * AMD hardware (docs/decisions.md); the simple kernel serves the rest. */
  if (pa_cuda_decode_supports(p, dev, &why)) return PA_HIP_KERNEL_DECODE;
  why.msg[0] = '\0';
  if (pa_cuda_simple_supports(p, dev, &why)) return PA_HIP_KERNEL_SIMPLE;
  pa_fail(err, POLYATTN_ERR_UNSUPPORTED, "no HIP kernel runs this problem: %s", why.msg);
  return PA_HIP_KERNEL_NONE;
}

polyattn_status pa_hip_plan(void *bctx, const pa_problem *p, size_t *workspace_bytes,
                            pa_error *err) {
  const pa_hip_ctx *ctx = (const pa_hip_ctx *)bctx;
  const pa_hip_kernel k = pick_kernel(p, &ctx->dev, err);
  if (k == PA_HIP_KERNEL_NONE) return POLYATTN_ERR_UNSUPPORTED;
  if (p->pass == PA_PASS_BACKWARD)
    *workspace_bytes = pa_cuda_simple_backward_workspace(p, &ctx->dev);
  else if (k == PA_HIP_KERNEL_MFMA)
    *workspace_bytes = pa_hip_mfma_workspace(p, &ctx->dev);
  else if (k == PA_HIP_KERNEL_DECODE)
    *workspace_bytes = pa_cuda_decode_workspace(p, &ctx->dev);
  else
    *workspace_bytes = pa_cuda_simple_workspace(p, &ctx->dev);
  return POLYATTN_OK;
}

/* Enqueue on the context's stream: no allocation, no synchronisation, so the call
 * can be captured in a HIP graph. */
polyattn_status pa_hip_forward(void *bctx, const pa_problem *p,
                               const struct polyattn_buffer *workspace, pa_error *err) {
  const pa_hip_ctx *ctx = (const pa_hip_ctx *)bctx;
  const pa_hip_kernel k = pick_kernel(p, &ctx->dev, err);
  if (k == PA_HIP_KERNEL_NONE) return POLYATTN_ERR_UNSUPPORTED;
  void *ws = workspace ? workspace->address : NULL;
  hipError_t e = hipSetDevice(ctx->device);
  if (e != hipSuccess) return pa_hip_status(err, e, "hipSetDevice");
  if (k == PA_HIP_KERNEL_MFMA)
    e = pa_hip_mfma_forward(p, &ctx->dev, ws, ctx->stream);
  else if (k == PA_HIP_KERNEL_DECODE)
    e = pa_cuda_decode_forward(p, &ctx->dev, ws, ctx->stream);
  else
    e = pa_cuda_simple_forward(p, &ctx->dev, ws, ctx->stream);
  if (e == hipSuccess) e = hipGetLastError();
  if (e != hipSuccess) {
    char what[64];
    snprintf(what, sizeof what, "HIP %s forward", kernel_name(k));
    return pa_hip_status(err, e, what);
  }
  return POLYATTN_OK;
}

polyattn_status pa_hip_backward(void *bctx, const pa_problem *p,
                                const struct polyattn_buffer *workspace, pa_error *err) {
  const pa_hip_ctx *ctx = (const pa_hip_ctx *)bctx;
  if (pick_kernel(p, &ctx->dev, err) == PA_HIP_KERNEL_NONE) return POLYATTN_ERR_UNSUPPORTED;
  hipError_t e = hipSetDevice(ctx->device);
  if (e != hipSuccess) return pa_hip_status(err, e, "hipSetDevice");
  e = pa_cuda_simple_backward(p, &ctx->dev, workspace ? workspace->address : NULL, ctx->stream);
  if (e == hipSuccess) e = hipGetLastError();
  if (e != hipSuccess) return pa_hip_status(err, e, "HIP simple backward");
  return POLYATTN_OK;
}
