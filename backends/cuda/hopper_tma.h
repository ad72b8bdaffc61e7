/* Host code shared by the Hopper forward kernels (fwd_hopper.cu, fwd_hopper_fp8.cu):
 * cuTensorMapEncodeTiled through the CUDA runtime's driver entry point (the module keeps
 * its static CUDA runtime and does not link libcuda; NULL when the driver lacks it), the
 * idle-consumer setting and which problems the plain-only score passes run. */
#ifndef PA_HOPPER_TMA_H
#define PA_HOPPER_TMA_H

#include <cuda.h>
#include <cuda_runtime.h>
#include <stdlib.h>
#include <string.h>

#include "problem.h"

typedef CUresult (*pa_encode_tiled_fn)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *,
                                       const cuuint64_t *, const cuuint64_t *, const cuuint32_t *,
                                       const cuuint32_t *, CUtensorMapInterleave,
                                       CUtensorMapSwizzle, CUtensorMapL2promotion,
                                       CUtensorMapFloatOOBfill);

inline pa_encode_tiled_fn pa_encode_tiled() {
  static const pa_encode_tiled_fn fn = [] {
    void *f = nullptr;
    cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault,
                                         &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess)
      return (pa_encode_tiled_fn) nullptr;
    return (pa_encode_tiled_fn)f;
  }();
  return fn;
}

/* Whether consumer warpgroups without a row in the sequence may exit (decision 119;
 * POLYATTN_CUDA_HOPPER_IDLE=0, a tuning aid, keeps them computing), read at each call.
 * The kernels apply it where their schedule allows (no pingpong turns, one tile per block). */
inline int pa_hopper_skip_idle() {
  const char *env = getenv("POLYATTN_CUDA_HOPPER_IDLE");
  return !(env && !strcmp(env, "0"));
}

/* A problem without a block mask, softcap, ALiBi or scale <= 0: what the kernels whose
 * score pass has no general or block-mask path run (the 16-bit kernel's wide key tiles
 * and its "-pn" forms, PA_HV_PLAIN; the FP8 kernel's PA_FP8_PLAIN). */
inline bool pa_hopper_plain(const pa_problem *p) {
  return p->sparsity != POLYATTN_SPARSITY_BLOCK && !(p->softcap > 0.0f) && !p->alibi.buf &&
         p->scale > 0.0f;
}

#endif /* PA_HOPPER_TMA_H */
