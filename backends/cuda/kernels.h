/* The CUDA forward kernels' launch interface (backends/cuda/).
 *
 * Every kernel receives the validated pa_problem by value (its views' ptr fields
 * are device addresses; cu_seqlens, seqused_k, alibi and block masks are read on
 * the device with the common/ helpers, which are PA_HD). pa_cuda_pick_kernel() is
 * the one function that decides which kernel runs and whether the problem is
 * supported: plan and forward both call it, so they cannot disagree. */
#ifndef PA_CUDA_KERNELS_H
#define PA_CUDA_KERNELS_H

#include "gpu_runtime.h"

#include "problem.h"

/* C linkage: the host side of the module (cuda_*.c) is C, the kernels are CUDA C++. */
#ifdef __cplusplus
extern "C" {
#endif

typedef enum pa_cuda_kernel {
  PA_CUDA_KERNEL_NONE = 0,
  PA_CUDA_KERNEL_SIMPLE,  /* fp32 math on CUDA cores, any dtype, any arch (forward and backward) */
  PA_CUDA_KERNEL_AMPERE,  /* mma.sync m16n8k16 fp16/bf16, ldmatrix, cp.async; sm_80+ */
  PA_CUDA_KERNEL_VOLTA,   /* mma.sync m8n8k4 fp16; sm_70+ (forced on newer GPUs) */
  PA_CUDA_KERNEL_DECODE,  /* split-KV decode: (Hq/Hkv) x Sq <= 64 rows; mma.sync for f16/bf16 up to 16 rows, else fp32 */
  PA_CUDA_KERNEL_HOPPER,  /* wgmma + TMA, warp-specialised, fp16/bf16, hd 64/128/256; sm_90a (cc 9.0) */
  PA_CUDA_KERNEL_HOPPER_FP8 /* wgmma e4m3 + TMA, fp8 q/k/v -> bf16 out, hd 64/128; sm_90a */
} pa_cuda_kernel;

/* What the kernels need to know about the device. */
typedef struct pa_cuda_device {
  int cc_major, cc_minor;
  int sm_count;
  size_t smem_optin; /* shared memory per block after opting in */
} pa_cuda_device;

/* Each kernel family: whether it can run `p` on `dev` (0/1, with the reason in
 * err when not), its workspace bytes, and its launch on `stream`. */
int pa_cuda_simple_supports(const pa_problem *p, const pa_cuda_device *dev, pa_error *err);
size_t pa_cuda_simple_workspace(const pa_problem *p, const pa_cuda_device *dev);
cudaError_t pa_cuda_simple_forward(const pa_problem *p, const pa_cuda_device *dev,
                                   void *workspace, cudaStream_t stream);

int pa_cuda_ampere_supports(const pa_problem *p, const pa_cuda_device *dev, pa_error *err);
size_t pa_cuda_ampere_workspace(const pa_problem *p, const pa_cuda_device *dev);
cudaError_t pa_cuda_ampere_forward(const pa_problem *p, const pa_cuda_device *dev,
                                   void *workspace, cudaStream_t stream);
/* fwd_ampere_pipe.cu: an experimental schedule of the Ampere kernel for head-dim
 * buckets 64 and 128, dense problems, chosen by POLYATTN_CUDA_AMPERE_PIPE (1, 3, 5; the
 * setting wanted() returns is forward()'s `on`) inside pa_cuda_ampere_forward (supports and
 * workspace are the Ampere kernel's); tuning builds only. */
int pa_cuda_ampere_pipe_wanted(const pa_problem *p);
cudaError_t pa_cuda_ampere_pipe_forward(const pa_problem *p, int on, cudaStream_t stream);

/* fwd_decode.cu (+ decode_mma.cuh): decode-shaped problems (Sq <= 16, (Hq/Hkv) x Sq
 * <= 64), split over the keys; the workspace holds the splits' partial O, max and sum
 * (fp32) and, for the ticket merge, one arrival word per (batch entry, kv head). */
int pa_cuda_decode_supports(const pa_problem *p, const pa_cuda_device *dev, pa_error *err);
size_t pa_cuda_decode_workspace(const pa_problem *p, const pa_cuda_device *dev);
cudaError_t pa_cuda_decode_forward(const pa_problem *p, const pa_cuda_device *dev,
                                   void *workspace, cudaStream_t stream);

/* The Hopper kernel's query and key tile (fwd_hopper.cu asserts it). */
enum { PA_CUDA_HOPPER_TILE = 128 };

/* fwd_hopper.cu: fp16/bf16, head dims 64, 128 and 256 (= head_dim_v), cc 9.0, compiled for
 * sm_90a only when POLYATTN_CUDA_ARCHS holds 90 (else supports() says so). */
int pa_cuda_hopper_supports(const pa_problem *p, const pa_cuda_device *dev, pa_error *err);
size_t pa_cuda_hopper_workspace(const pa_problem *p, const pa_cuda_device *dev);
cudaError_t pa_cuda_hopper_forward(const pa_problem *p, const pa_cuda_device *dev,
                                   void *workspace, cudaStream_t stream);
/* The same, launched to run only if the device int *dense_gate is nonzero when the
 * kernel starts (AUTO_BLOCK's dense fallback, decided on the device; else its blocks
 * return at once). */
cudaError_t pa_cuda_hopper_forward_gated(const pa_problem *p, const pa_cuda_device *dev,
                                         void *workspace, const int32_t *dense_gate,
                                         cudaStream_t stream);

/* fwd_hopper_fp8.cu: FP8 (e4m3) q, k, v with descales, bf16 out, head dims 64 and 128
 * (= head_dim_v), cc 9.0, sm_90a build only; the one kernel for FP8 problems. */
int pa_cuda_hopper_fp8_supports(const pa_problem *p, const pa_cuda_device *dev, pa_error *err);
cudaError_t pa_cuda_hopper_fp8_forward(const pa_problem *p, const pa_cuda_device *dev,
                                       cudaStream_t stream);

/* fwd_volta.cu: fp16 only (m8n8k4 has no bf16 form), cc >= 7.0. */
int pa_cuda_volta_supports(const pa_problem *p, const pa_cuda_device *dev, pa_error *err);
size_t pa_cuda_volta_workspace(const pa_problem *p, const pa_cuda_device *dev);
cudaError_t pa_cuda_volta_forward(const pa_problem *p, const pa_cuda_device *dev,
                                  void *workspace, cudaStream_t stream);

/* bwd_simple.cu: the backward pass, fp32 math, any dtype and arch (dense, BLOCK);
 * the workspace holds each query row's recomputed lse and D_i (fp32). */
int pa_cuda_simple_backward_supports(const pa_problem *p, const pa_cuda_device *dev,
                                     pa_error *err);
size_t pa_cuda_simple_backward_workspace(const pa_problem *p, const pa_cuda_device *dev);
cudaError_t pa_cuda_simple_backward(const pa_problem *p, const pa_cuda_device *dev,
                                    void *workspace, cudaStream_t stream);
/* Its dQ kernel alone (same workspace): the Ampere backward's deterministic dQ. */
cudaError_t pa_cuda_simple_backward_dq(const pa_problem *p, const pa_cuda_device *dev,
                                       void *workspace, cudaStream_t stream);

/* bwd_ampere.cu: the tensor-core backward, fp16/bf16, sm_80+, head dims up to 128
 * (buckets 64, 128), dense and BLOCK; dQ through an fp32 workspace with atomics, or
 * (deterministic) the simple dQ kernel. Workspace: lse2 and D_i per row and head,
 * then the fp32 dQ accumulator (or the simple dQ kernel's workspace). */
int pa_cuda_ampere_backward_supports(const pa_problem *p, const pa_cuda_device *dev,
                                     pa_error *err);
size_t pa_cuda_ampere_backward_workspace(const pa_problem *p, const pa_cuda_device *dev);
cudaError_t pa_cuda_ampere_backward(const pa_problem *p, const pa_cuda_device *dev,
                                    void *workspace, cudaStream_t stream);

/* bwd_volta.cu: the m8n8k4 backward, fp16 only, cc >= 7.0 (forced on newer GPUs),
 * head dims up to 128, dense and BLOCK; the Ampere backward's workspace and dQ modes
 * (bwd_common.cuh). */
int pa_cuda_volta_backward_supports(const pa_problem *p, const pa_cuda_device *dev,
                                    pa_error *err);
size_t pa_cuda_volta_backward_workspace(const pa_problem *p, const pa_cuda_device *dev);
cudaError_t pa_cuda_volta_backward(const pa_problem *p, const pa_cuda_device *dev,
                                   void *workspace, cudaStream_t stream);
/* bwd_hopper.cu: the wgmma backward, fp16/bf16, cc 9.0 (sm_90a build), head dims up
 * to 128 (buckets 64, 128), dense and BLOCK; the Ampere backward's workspace and dQ
 * modes (bwd_common.cuh). */
int pa_cuda_hopper_backward_supports(const pa_problem *p, const pa_cuda_device *dev,
                                     pa_error *err);
size_t pa_cuda_hopper_backward_workspace(const pa_problem *p, const pa_cuda_device *dev);
cudaError_t pa_cuda_hopper_backward(const pa_problem *p, const pa_cuda_device *dev,
                                    void *workspace, cudaStream_t stream);
/* auto_block.cu: AUTO_BLOCK's estimator on the GPU (common/autoblock.c's, in
 * common/autoblock.h's arithmetic and orders: the same mask bit for bit). The
 * workspace: counters, the chosen mask, pooled Q and K, then (from pa_cuda_auto_block_workspace(p) on) the BLOCK kernel's own. resolve
 * enqueues the estimate and fills `r` as the BLOCK problem over the chosen mask;
 * when the density is above the cut-off the mask handed on is all ones (dense), or,
 * with `dense_gate` non-NULL, all zeros, and *dense_gate then points to a device int
 * that is nonzero exactly then (the caller runs the dense kernel after the BLOCK one,
 * gated on it: cuda_dispatch.c). as_block fills the same `r` without running
 * anything (workspace may be NULL), for kernel choice and planning. */
int pa_cuda_auto_block_supports(const pa_problem *p, pa_error *err);
size_t pa_cuda_auto_block_workspace(const pa_problem *p);
void pa_cuda_auto_block_as_block(const pa_problem *p, void *workspace, pa_problem *r);
cudaError_t pa_cuda_auto_block_resolve(const pa_problem *p, void *workspace, cudaStream_t stream,
                                       pa_problem *r, const int32_t **dense_gate);

/* The kernel for `p` on `dev` (cuda_dispatch.c): PA_CUDA_KERNEL_NONE with the reason
 * in err when no kernel can run it. Env POLYATTN_CUDA_KERNEL=simple|ampere|volta|decode|hopper|hopper-fp8
 * forces one (then NONE if that one cannot run it). */
pa_cuda_kernel pa_cuda_pick_kernel(const pa_problem *p, const pa_cuda_device *dev, pa_error *err);

#ifdef __cplusplus
}
#endif
#endif
