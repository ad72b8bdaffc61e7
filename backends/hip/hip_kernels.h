/* The HIP module's own kernel: the MFMA forward (fwd_mfma.cu). The other kernels
 * are backends/cuda's, through backends/cuda/kernels.h (pa_cuda_* names: one source,
 * two vendors). pa_cuda_device describes an AMD device as hip_device.c fills it:
 * cc_major is the gfx major version and cc_minor the minor and stepping digits as
 * one hex byte (gfx90a: 9, 0x0a; gfx942: 9, 0x42; gfx1030: 10, 0x30). */
#ifndef PA_HIP_KERNELS_H
#define PA_HIP_KERNELS_H

#include "kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Whether `dev` has the MFMA instructions of `dtype` that fwd_mfma.cu uses (see
 * backends/hip/mfma.cuh): f16 on gfx908, gfx90a, gfx94x; bf16 on gfx90a, gfx94x. */
int pa_hip_has_mfma(const pa_cuda_device *dev, polyattn_dtype dtype);

int pa_hip_mfma_supports(const pa_problem *p, const pa_cuda_device *dev, pa_error *err);
size_t pa_hip_mfma_workspace(const pa_problem *p, const pa_cuda_device *dev);
cudaError_t pa_hip_mfma_forward(const pa_problem *p, const pa_cuda_device *dev, void *workspace,
                                cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
