/* PTX wrappers of the Ampere forward kernel (fwd_ampere.cu): cp.async, ldmatrix,
 * mma.sync m16n8k16 with fp32 accumulators, and the register fragments they fill.
 *
 * Fragment layouts (PTX ISA, "Matrix Fragments for mma.m16n8k16 with floating point
 * type"); lane = 4 * g + t, g = lane >> 2 (group), t = lane & 3 (thread in group):
 *   A [16 x 16] row-major, 4 x .b32 (2 halves each, low half = lower column):
 *     a[0] = (row g,   cols 2t, 2t+1)     a[1] = (row g+8, cols 2t, 2t+1)
 *     a[2] = (row g,   cols 2t+8, 2t+9)   a[3] = (row g+8, cols 2t+8, 2t+9)
 *   B [16 x 8] (k x n) "col": 2 x .b32
 *     b[0] = (k 2t, 2t+1;   n g)          b[1] = (k 2t+8, 2t+9; n g)
 *   C/D [16 x 8] fp32: c[0], c[1] = (row g, cols 2t, 2t+1); c[2], c[3] = row g+8.
 * ldmatrix .x4: lanes 8i..8i+7 give the row addresses of 8x8 matrix i; register i
 * of a lane then holds (row g, cols 2t, 2t+1) of matrix i, or with .trans
 * (rows 2t, 2t+1; col g), i.e. the B fragment of a matrix stored k-major. */
#ifndef PA_CUDA_AMPERE_MMA_CUH
#define PA_CUDA_AMPERE_MMA_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

/* The device code needs sm_80 (cp.async, bf16 mma). Older targets of the same
 * module compile the kernel to a trap; pa_cuda_ampere_supports() never picks it. */
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
#  define PA_AMPERE_ARCH_OK 1
#else
#  define PA_AMPERE_ARCH_OK 0
#endif

/* PA_CUDA_CP_L2_128B=1 (a measurement switch, default 0): every cp.async of these wrappers
 * carries the .L2::128B prefetch-size hint (PTX ISA 7.4, sm_80), as CuTe's SM80 copies do:
 * L2 may fetch the whole 128-byte line around a 16-byte chunk at once. Level on an H100
 * (decision 145). */
#ifndef PA_CUDA_CP_L2_128B
#  define PA_CUDA_CP_L2_128B 0
#endif
#if PA_CUDA_CP_L2_128B
#  define PA_CP_ASYNC_CG "cp.async.cg.shared.global.L2::128B"
#else
#  define PA_CP_ASYNC_CG "cp.async.cg.shared.global"
#endif

/* Shared-memory address of a generic pointer into shared memory. */
__device__ __forceinline__ uint32_t pa_smem_addr(const void *p) {
  return (uint32_t)__cvta_generic_to_shared(p);
}

/* 16-byte global -> shared copy that bypasses L1; bytes [src_bytes, 16) of the
 * destination are zero-filled (src_bytes = 0: no global read at all). */
__device__ __forceinline__ void pa_cp_async_16(uint32_t dst, const void *src, int src_bytes) {
#if PA_AMPERE_ARCH_OK
  asm volatile(PA_CP_ASYNC_CG " [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
               "r"(src_bytes)
               : "memory");
#endif
}

/* The same copy of a whole chunk: no source size, no zero fill (the whole tiles of
 * pa_tile_load_full and of the decode kernel's lean copies). */
__device__ __forceinline__ void pa_cp_async_16_full(uint32_t dst, const void *src) {
#if PA_AMPERE_ARCH_OK
  asm volatile(PA_CP_ASYNC_CG " [%0], [%1], 16;\n" ::"r"(dst), "l"(src) : "memory");
#endif
}

__device__ __forceinline__ void pa_cp_async_commit() {
#if PA_AMPERE_ARCH_OK
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

/* Wait until at most `N` of this thread's most recent commit groups are pending. */
template <int N>
__device__ __forceinline__ void pa_cp_async_wait() {
#if PA_AMPERE_ARCH_OK
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}

/* Four 8x8 b16 matrices (see the header comment for who holds what). */
__device__ __forceinline__ void pa_ldmatrix_x4(uint32_t (&r)[4], uint32_t addr) {
#if PA_AMPERE_ARCH_OK
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
#endif
}

__device__ __forceinline__ void pa_ldmatrix_x4_trans(uint32_t (&r)[4], uint32_t addr) {
#if PA_AMPERE_ARCH_OK
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
#endif
}

/* One mma.sync of shape m16n8 with fp32 C and D, INSTR its name and types (as
 * "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"): d += a . b, a in four registers and
 * b in two. */
#define PA_MMA_16N8_F32(INSTR, d, a, b0, b1)                                             \
  asm(INSTR " {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"         \
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])                                    \
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1))

/* d[16 x 8] += a[16 x 16] . b[16 x 8], fp32 accumulate; T is __half or __nv_bfloat16. */
template <typename T>
__device__ __forceinline__ void pa_mma_16816(float (&d)[4], const uint32_t (&a)[4], uint32_t b0,
                                             uint32_t b1);

template <>
__device__ __forceinline__ void pa_mma_16816<__half>(float (&d)[4], const uint32_t (&a)[4],
                                                     uint32_t b0, uint32_t b1) {
#if PA_AMPERE_ARCH_OK
  PA_MMA_16N8_F32("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", d, a, b0, b1);
#endif
}

template <>
__device__ __forceinline__ void pa_mma_16816<__nv_bfloat16>(float (&d)[4], const uint32_t (&a)[4],
                                                            uint32_t b0, uint32_t b1) {
#if PA_AMPERE_ARCH_OK
  PA_MMA_16N8_F32("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", d, a, b0, b1);
#endif
}

/* d[16 x 8] += A[16 x 32] . b[32 x 8] with A 2:4 sparse (mma.sp, sm_80+): `a` holds
 * A's kept values laid out as an m16n8k16 A fragment over the 16 compressed
 * columns (compressed columns 2g', 2g'+1 are the kept pair of 4-column group g'),
 * `b` two stacked k16 B fragments (b[0], b[1]: k 0-15; b[2], b[3]: k 16-31), and
 * `meta` the kept pairs' 2-bit column indices, lower index in the lower bits, as
 * supplied by threads 0 and 1 of each quad (sparsity selector 0; layout in
 * ampere_sp24.cuh, checked on the GPU by bench/gpu/mma_sp_probe.cu). */
template <typename T>
__device__ __forceinline__ void pa_mma_sp_16832(float (&d)[4], const uint32_t (&a)[4],
                                                const uint32_t (&b)[4], uint32_t meta);

template <>
__device__ __forceinline__ void pa_mma_sp_16832<__half>(float (&d)[4], const uint32_t (&a)[4],
                                                        const uint32_t (&b)[4], uint32_t meta) {
#if PA_AMPERE_ARCH_OK
  asm("mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9, %10, %11}, {%0, %1, %2, %3}, %12, 0x0;\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(b[2]), "r"(b[3]),
        "r"(meta));
#endif
}

template <>
__device__ __forceinline__ void pa_mma_sp_16832<__nv_bfloat16>(float (&d)[4],
                                                               const uint32_t (&a)[4],
                                                               const uint32_t (&b)[4],
                                                               uint32_t meta) {
#if PA_AMPERE_ARCH_OK
  asm("mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f32.bf16.bf16.f32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9, %10, %11}, {%0, %1, %2, %3}, %12, 0x0;\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(b[2]), "r"(b[3]),
        "r"(meta));
#endif
}

/* Two floats rounded to nearest even and packed: `lo` in bits 0-15 (the lower
 * column of a fragment pair), `hi` in bits 16-31. */
template <typename T>
__device__ __forceinline__ uint32_t pa_pack2(float lo, float hi);

template <>
__device__ __forceinline__ uint32_t pa_pack2<__half>(float lo, float hi) {
  __half2 h = __floats2half2_rn(lo, hi); /* .x = lo (low 16 bits), .y = hi */
  return *reinterpret_cast<uint32_t *>(&h);
}

template <>
__device__ __forceinline__ uint32_t pa_pack2<__nv_bfloat16>(float lo, float hi) {
  __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<uint32_t *>(&h);
}

/* Two T ones packed as pa_pack2 packs (a B fragment of ones: mma then sums A's rows). */
template <typename T>
__device__ __forceinline__ constexpr uint32_t pa_one2();
template <>
__device__ __forceinline__ constexpr uint32_t pa_one2<__half>() { return 0x3c003c00u; }
template <>
__device__ __forceinline__ constexpr uint32_t pa_one2<__nv_bfloat16>() { return 0x3f803f80u; }

/* One float rounded to nearest even into T (__half or __nv_bfloat16). */
template <typename T>
__device__ __forceinline__ T pa_from_f32(float x);
template <>
__device__ __forceinline__ __half pa_from_f32<__half>(float x) { return __float2half_rn(x); }
template <>
__device__ __forceinline__ __nv_bfloat16 pa_from_f32<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }

/* 2^x on the SFU (MUFU.EX2); 2^-inf = +0, which is how masked scores vanish. */
__device__ __forceinline__ float pa_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

#endif
