/* fp16 / bf16 / fp8 (e4m3) <-> fp32 conversion, bit-exact round-to-nearest-even, for
 * C, CUDA and HIP. Device kernels may use the vendor intrinsics; these define the
 * result. */
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

/* fp8 e4m3 (OCP "E4M3FN", as CUDA's __nv_fp8_e4m3): 1 sign, 4 exponent bits (bias 7),
 * 3 mantissa bits; no infinities, 0x7f / 0xff are NaN; largest finite 448, smallest
 * normal 2^-6, subnormals m * 2^-9. */
PA_HD static inline float pa_fp8_e4m3_to_f32(uint8_t b) {
  const uint32_t sign = (uint32_t)(b & 0x80u) << 24;
  const uint32_t e = (b >> 3) & 0xfu, m = b & 0x7u;
  if (e == 0xfu && m == 0x7u) return pa_bits_f32(sign | 0x7fc00000u); /* NaN */
  if (e == 0) {
    const float f = (float)m * 0.001953125f; /* m * 2^-9, exact */
    return sign ? -f : f;
  }
  return pa_bits_f32(sign | ((e + 120u) << 23) | (m << 20));
}

/* fp32 to e4m3, round to nearest even, saturating: |x| that rounds above 448 (and
 * +-inf) gives +-448, NaN gives NaN (cvt.rn.satfinite.e4m3x2.f32's rule). */
PA_HD static inline uint8_t pa_f32_to_fp8_e4m3(float f) {
  const uint32_t u = pa_f32_bits(f);
  const uint8_t sign = (uint8_t)((u >> 24) & 0x80u);
  const uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return (uint8_t)(sign | 0x7fu);
  /* 464 = 448 + half an ulp (32): from there up the rounding would leave the range */
  if (a >= 0x43e80000u) return (uint8_t)(sign | 0x7eu);
  if (a < 0x3c800000u) { /* below 2^-6: subnormal, q = round(|f| * 2^9) in 0..8 */
    const float r = pa_bits_f32(a) * 512.0f;              /* exact: a power of two */
    const float q = (r + 8388608.0f) - 8388608.0f;        /* rint (RNE), r < 2^23 */
    return (uint8_t)(sign | (uint8_t)q);                  /* q = 8 is 2^-6's code */
  }
  /* normal: rebias the exponent (127 -> 7), round 23 -> 3 mantissa bits to even */
  uint32_t e = a - (120u << 23);
  e += 0x7ffffu + ((e >> 20) & 1u);
  const uint32_t code = e >> 20;
  return (uint8_t)(sign | (code > 0x7eu ? 0x7eu : code));
}

/* Load element `i` of a buffer of `dtype` (F32, F16, BF16 or FP8_E4M3) as float. */
PA_HD static inline float pa_load_f32(const void *base, int64_t i, polyattn_dtype dtype) {
  switch (dtype) {
  case POLYATTN_DTYPE_F16: return pa_f16_to_f32(((const uint16_t *)base)[i]);
  case POLYATTN_DTYPE_BF16: return pa_bf16_to_f32(((const uint16_t *)base)[i]);
  case POLYATTN_DTYPE_FP8_E4M3: return pa_fp8_e4m3_to_f32(((const uint8_t *)base)[i]);
  default: return ((const float *)base)[i];
  }
}

/* Store `x` as element `i` of a buffer of `dtype`, rounding to nearest even. */
PA_HD static inline void pa_store_f32(void *base, int64_t i, polyattn_dtype dtype, float x) {
  switch (dtype) {
  case POLYATTN_DTYPE_F16: ((uint16_t *)base)[i] = pa_f32_to_f16(x); break;
  case POLYATTN_DTYPE_BF16: ((uint16_t *)base)[i] = pa_f32_to_bf16(x); break;
  case POLYATTN_DTYPE_FP8_E4M3: ((uint8_t *)base)[i] = pa_f32_to_fp8_e4m3(x); break;
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
  case POLYATTN_DTYPE_FP8_E4M3: return pa_fp8_e4m3_to_f32(pa_f32_to_fp8_e4m3(f));
  default: return f;
  }
}

#endif
