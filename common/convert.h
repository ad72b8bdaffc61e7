/* fp16 / bf16 <-> fp32 conversion, bit-exact round-to-nearest-even, for C, CUDA
 * and HIP. Device kernels may use the vendor intrinsics; these define the result. */
#ifndef PA_CONVERT_H
#define PA_CONVERT_H

#include <stdint.h>
#include <string.h>

#include "polyattn.h"
#include "portable.h"

PA_HD static inline uint32_t pa_f32_bits(float f) {
  uint32_t u;
  PA_MEMCPY(&u, &f, 4);
  return u;
}
PA_HD static inline float pa_bits_f32(uint32_t u) {
  float f;
  PA_MEMCPY(&f, &u, 4);
  return f;
}

PA_HD static inline float pa_bf16_to_f32(uint16_t h) { return pa_bits_f32((uint32_t)h << 16); }

PA_HD static inline uint16_t pa_f32_to_bf16(float f) {
  uint32_t u = pa_f32_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u); /* quiet NaN */
  u += 0x7fffu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}

PA_HD static inline float pa_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t man = h & 0x3ffu;
  if (exp == 0x1fu) return pa_bits_f32(sign | 0x7f800000u | (man << 13));
  if (exp == 0) {
    if (man == 0) return pa_bits_f32(sign);
    /* subnormal: value = man * 2^-24 */
    float f = (float)man * 5.9604644775390625e-8f;
    return sign ? -f : f;
  }
  return pa_bits_f32(sign | ((exp + 112u) << 23) | (man << 13));
}

PA_HD static inline uint16_t pa_f32_to_f16(float f) {
  uint32_t u = pa_f32_bits(f);
  uint32_t sign = (u >> 16) & 0x8000u;
  uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return (uint16_t)(sign | 0x7e00u);     /* NaN */
  if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u);    /* rounds to >= 65520: inf */
  if (a < 0x38800000u) {                                      /* below 2^-14: subnormal */
    /* round(|f| * 2^24) to nearest even, done exactly in float: adding 0.5 (2^-1)
     * places the integer part of |f|*2^24 ... use the magic-number trick */
    float af = pa_bits_f32(a);
    float r = af * 16777216.0f; /* exact (power of two) */
    /* rint via 2^23 magic, valid since r < 1024 */
    float t = (r + 8388608.0f) - 8388608.0f;
    return (uint16_t)(sign | (uint32_t)t);
  }
  /* normal: rebias exponent, round mantissa 23 -> 10 bits to nearest even */
  uint32_t e = a - (112u << 23);
  e += 0xfffu + ((e >> 13) & 1u);
  return (uint16_t)(sign | (e >> 13));
}

/* Load element `i` of a buffer of `dtype` (F32, F16 or BF16) as float. */
PA_HD static inline float pa_load_f32(const void *base, int64_t i, polyattn_dtype dtype) {
  switch (dtype) {
  case POLYATTN_DTYPE_F16: return pa_f16_to_f32(((const uint16_t *)base)[i]);
  case POLYATTN_DTYPE_BF16: return pa_bf16_to_f32(((const uint16_t *)base)[i]);
  default: return ((const float *)base)[i];
  }
}

/* Store `x` as element `i` of a buffer of `dtype`, rounding to nearest even. */
PA_HD static inline void pa_store_f32(void *base, int64_t i, polyattn_dtype dtype, float x) {
  switch (dtype) {
  case POLYATTN_DTYPE_F16: ((uint16_t *)base)[i] = pa_f32_to_f16(x); break;
  case POLYATTN_DTYPE_BF16: ((uint16_t *)base)[i] = pa_f32_to_bf16(x); break;
  default: ((float *)base)[i] = x; break;
  }
}

/* x rounded to the nearest value representable in `dtype` (the tolerance rule
 * and the naive reference use it). F32 rounds from double. */
static inline double pa_round_to_dtype(double x, polyattn_dtype dtype) {
  float f = (float)x;
  switch (dtype) {
  case POLYATTN_DTYPE_F16: return pa_f16_to_f32(pa_f32_to_f16(f));
  case POLYATTN_DTYPE_BF16: return pa_bf16_to_f32(pa_f32_to_bf16(f));
  default: return f;
  }
}

#endif
