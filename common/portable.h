/* What lets one header compile as C11 host code, CUDA and HIP device code. */
#ifndef PA_PORTABLE_H
#define PA_PORTABLE_H

#include <math.h>

#if defined(__CUDACC__) || defined(__HIPCC__)
#  define PA_HD __host__ __device__
#else
#  define PA_HD
#endif

/* memcpy in PA_HD code: HIP's headers declare no device memcpy (clang's builtin
 * lowers to the same loads and stores); CUDA and C use the library's. */
#if defined(__HIPCC__)
#  define PA_MEMCPY __builtin_memcpy
#else
#  define PA_MEMCPY memcpy
#endif

#endif
