/* What lets one header compile as C11 host code, CUDA and HIP device code. */
#ifndef PA_PORTABLE_H
#define PA_PORTABLE_H

#include <math.h>

#if defined(__CUDACC__) || defined(__HIPCC__)
#  define PA_HD __host__ __device__
#else
#  define PA_HD
#endif

#endif
