/* CK(call): a CUDA runtime call in the standalone GPU tools of bench/gpu/ (ampere_check,
 * wgmma_check, fp8_check, fp8_timeline): on an error it prints the call and the error
 * and exits with status 2. */
#ifndef PA_BENCH_CUDA_CHECK_H
#define PA_BENCH_CUDA_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime.h>

#define CK(x)                                                                             \
  do {                                                                                    \
    cudaError_t e_ = (x);                                                                 \
    if (e_ != cudaSuccess) {                                                              \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      exit(2);                                                                            \
    }                                                                                     \
  } while (0)

#endif
