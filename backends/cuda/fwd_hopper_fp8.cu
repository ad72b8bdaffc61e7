/* The FP8 (e4m3) forward kernel for Hopper (sm_90a): q, k, v in fp8 with float32
 * descale factors, out in bf16 (issue 9; decisions 77, 78).
 *
 * One block computes 128 query rows of one (batch entry, query head) with 384
 * threads, as fwd_hopper.cu's two-consumer shape (or 192 rows with 512 threads and
 * three consumers, "-wg3", the hd64 default):
 *   warpgroup 0, the producer: thread 0 issues TMA copies of the Q tile and, one key
 *     tile ahead, of K and V (BK keys each: 128, or 192 in the defaults) into a 2-stage
 *     ring; then its four warps transpose the tile's V (keys x dims, as stored) into
 *     V^T (dims x keys) in shared memory (ldmatrix.trans, byte permutes, stmatrix),
 *     because an 8-bit wgmma takes both operands K-major (no imm-trans for
 *     e4m3): for O += P.V the reduction runs over keys, so B = V^T must hold a dim's
 *     keys contiguously. The keys are also permuted within each 16-key group
 *     (key_of_pos below) so that P's fp8 A fragment is the S accumulator's
 *     registers packed in place, with no shuffles (FlashAttention-3 permutes P across
 *     lanes instead).
 *   two (or three) consumer warpgroups, 64 query rows each: S = Q.K^T by wgmma m64nBKk32 .e4m3
 *     (both operands in shared memory), the masks and the online softmax of
 *     common/softmax.h on the accumulator (the Ampere/Hopper fragment code), P scaled
 *     by 2^8 and rounded to e4m3 (FlashAttention-3's offset: P <= 256 uses e4m3's
 *     range, so small probabilities keep their bits), O += P.V^T by wgmma m64nDk32
 *     with P from registers.
 * The descales fold into the softmax scale (q, k) and the final normalisation (v).
 *
 * Shared-memory tiles (TMA, swizzled): Q, K, V rows of D bytes with the 128-byte
 * swizzle at hd128 and the 64-byte one at hd64 (a row is then 64 bytes); V^T rows of
 * 128 bytes (the 128 keys of a dim), 128-byte swizzle, at BK 128, or three blocks of
 * 64-byte rows (64 keys), 64-byte swizzle, at BK 192. Both swizzles are
 * Swizzle<b,4,3>: byte offset x of a 1024-aligned tile lives at
 * x ^ (((x >> 7) & (SW / 16 - 1)) << 4).
 *
 * Run-time features are the Hopper kernel's (block_ctx.cuh, frag_scores.cuh): causal,
 * windows, softcap, ALiBi, GQA, varlen, seqused_k, LSE. Not: block masks, AUTO_BLOCK,
 * 2:4 (UNSUPPORTED). */
#define PA_CUDA_HOPPER_FP8_REAL 1

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <atomic>

#include <cuda.h>
#include <cuda_fp8.h>

#include "block_ctx.cuh"
#include "kernels.h"
#include "mask.h"

#include "ampere_mma.cuh"
#include "ampere_softmax.cuh"
#include "ampere_tile.cuh"
#include "frag_scores.cuh"
#include "hopper_ptx.cuh"
#include "hopper_tma.h"

#ifndef PA_CUDA_HOPPER_BUILT
#  define PA_CUDA_HOPPER_BUILT 0
#endif

/* The tuning-only variants of PA_FP8_VARIANT_LIST are compiled only with the CMake
 * option POLYATTN_CUDA_TUNING_VARIANTS (decision 114) */
#ifndef PA_CUDA_TUNING_VARIANTS
#  define PA_CUDA_TUNING_VARIANTS 0
#endif

namespace {

/* ---- fp8 wgmma (e4m3 x e4m3 -> f32), k32 per instruction ---- */

/* D[64 x N] (+)= A[64 x 32] . B[32 x N], both from shared memory, K-major. */
template <int N>
__device__ __forceinline__ void pa_wgmma_fp8_ss(float (&d)[N / 8][4], uint64_t a, uint64_t b,
                                                int scale_d);
/* The same with A from registers: per warp, mma.sync m16n8k32's 8-bit A layout (reg 0:
 * row g, k 4t..4t+3; reg 1: row g + 8, same k; regs 2, 3: k + 16; g = lane / 4,
 * t = lane % 4). */
template <int N>
__device__ __forceinline__ void pa_wgmma_fp8_rs(float (&d)[N / 8][4], const uint32_t (&a)[4],
                                                uint64_t b, int scale_d);
#if PA_HOPPER_ARCH_OK
template <>
__device__ __forceinline__ void pa_wgmma_fp8_ss<128>(float (&d)[16][4], uint64_t a, uint64_t b, int scale_d) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}, %64, %65, p, 1, 1;\n}\n"
      : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]), "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]), "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3]), "+f"(d[4][0]), "+f"(d[4][1]), "+f"(d[4][2]), "+f"(d[4][3]), "+f"(d[5][0]), "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]), "+f"(d[6][0]), "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]), "+f"(d[7][0]), "+f"(d[7][1]), "+f"(d[7][2]), "+f"(d[7][3]), "+f"(d[8][0]), "+f"(d[8][1]), "+f"(d[8][2]), "+f"(d[8][3]), "+f"(d[9][0]), "+f"(d[9][1]), "+f"(d[9][2]), "+f"(d[9][3]), "+f"(d[10][0]), "+f"(d[10][1]), "+f"(d[10][2]), "+f"(d[10][3]), "+f"(d[11][0]), "+f"(d[11][1]), "+f"(d[11][2]), "+f"(d[11][3]), "+f"(d[12][0]), "+f"(d[12][1]), "+f"(d[12][2]), "+f"(d[12][3]), "+f"(d[13][0]), "+f"(d[13][1]), "+f"(d[13][2]), "+f"(d[13][3]), "+f"(d[14][0]), "+f"(d[14][1]), "+f"(d[14][2]), "+f"(d[14][3]), "+f"(d[15][0]), "+f"(d[15][1]), "+f"(d[15][2]), "+f"(d[15][3])
      : "l"(a), "l"(b), "r"(scale_d));
}

#if PA_CUDA_TUNING_VARIANTS /* S of the 64-key tuning variants (PA_FP8_K64) */
template <>
__device__ __forceinline__ void pa_wgmma_fp8_ss<64>(float (&d)[8][4], uint64_t a, uint64_t b, int scale_d) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}, %32, %33, p, 1, 1;\n}\n"
      : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]), "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]), "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3]), "+f"(d[4][0]), "+f"(d[4][1]), "+f"(d[4][2]), "+f"(d[4][3]), "+f"(d[5][0]), "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]), "+f"(d[6][0]), "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]), "+f"(d[7][0]), "+f"(d[7][1]), "+f"(d[7][2]), "+f"(d[7][3])
      : "l"(a), "l"(b), "r"(scale_d));
}
#endif

template <>
__device__ __forceinline__ void pa_wgmma_fp8_ss<192>(float (&d)[24][4], uint64_t a, uint64_t b, int scale_d) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %98, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n192k32.f32.e4m3.e4m3 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95}, %96, %97, p, 1, 1;\n}\n"
      : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]), "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]), "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3]), "+f"(d[4][0]), "+f"(d[4][1]), "+f"(d[4][2]), "+f"(d[4][3]), "+f"(d[5][0]), "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]), "+f"(d[6][0]), "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]), "+f"(d[7][0]), "+f"(d[7][1]), "+f"(d[7][2]), "+f"(d[7][3]), "+f"(d[8][0]), "+f"(d[8][1]), "+f"(d[8][2]), "+f"(d[8][3]), "+f"(d[9][0]), "+f"(d[9][1]), "+f"(d[9][2]), "+f"(d[9][3]), "+f"(d[10][0]), "+f"(d[10][1]), "+f"(d[10][2]), "+f"(d[10][3]), "+f"(d[11][0]), "+f"(d[11][1]), "+f"(d[11][2]), "+f"(d[11][3]), "+f"(d[12][0]), "+f"(d[12][1]), "+f"(d[12][2]), "+f"(d[12][3]), "+f"(d[13][0]), "+f"(d[13][1]), "+f"(d[13][2]), "+f"(d[13][3]), "+f"(d[14][0]), "+f"(d[14][1]), "+f"(d[14][2]), "+f"(d[14][3]), "+f"(d[15][0]), "+f"(d[15][1]), "+f"(d[15][2]), "+f"(d[15][3]), "+f"(d[16][0]), "+f"(d[16][1]), "+f"(d[16][2]), "+f"(d[16][3]), "+f"(d[17][0]), "+f"(d[17][1]), "+f"(d[17][2]), "+f"(d[17][3]), "+f"(d[18][0]), "+f"(d[18][1]), "+f"(d[18][2]), "+f"(d[18][3]), "+f"(d[19][0]), "+f"(d[19][1]), "+f"(d[19][2]), "+f"(d[19][3]), "+f"(d[20][0]), "+f"(d[20][1]), "+f"(d[20][2]), "+f"(d[20][3]), "+f"(d[21][0]), "+f"(d[21][1]), "+f"(d[21][2]), "+f"(d[21][3]), "+f"(d[22][0]), "+f"(d[22][1]), "+f"(d[22][2]), "+f"(d[22][3]), "+f"(d[23][0]), "+f"(d[23][1]), "+f"(d[23][2]), "+f"(d[23][3])
      : "l"(a), "l"(b), "r"(scale_d));
}

template <>
__device__ __forceinline__ void pa_wgmma_fp8_rs<64>(float (&d)[8][4], const uint32_t (&a)[4], uint64_t b, int scale_d) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}, {%32, %33, %34, %35}, %36, p, 1, 1;\n}\n"
      : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]), "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]), "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3]), "+f"(d[4][0]), "+f"(d[4][1]), "+f"(d[4][2]), "+f"(d[4][3]), "+f"(d[5][0]), "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]), "+f"(d[6][0]), "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]), "+f"(d[7][0]), "+f"(d[7][1]), "+f"(d[7][2]), "+f"(d[7][3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(scale_d));
}

template <>
__device__ __forceinline__ void pa_wgmma_fp8_rs<128>(float (&d)[16][4], const uint32_t (&a)[4], uint64_t b, int scale_d) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}, {%64, %65, %66, %67}, %68, p, 1, 1;\n}\n"
      : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]), "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]), "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3]), "+f"(d[4][0]), "+f"(d[4][1]), "+f"(d[4][2]), "+f"(d[4][3]), "+f"(d[5][0]), "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]), "+f"(d[6][0]), "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]), "+f"(d[7][0]), "+f"(d[7][1]), "+f"(d[7][2]), "+f"(d[7][3]), "+f"(d[8][0]), "+f"(d[8][1]), "+f"(d[8][2]), "+f"(d[8][3]), "+f"(d[9][0]), "+f"(d[9][1]), "+f"(d[9][2]), "+f"(d[9][3]), "+f"(d[10][0]), "+f"(d[10][1]), "+f"(d[10][2]), "+f"(d[10][3]), "+f"(d[11][0]), "+f"(d[11][1]), "+f"(d[11][2]), "+f"(d[11][3]), "+f"(d[12][0]), "+f"(d[12][1]), "+f"(d[12][2]), "+f"(d[12][3]), "+f"(d[13][0]), "+f"(d[13][1]), "+f"(d[13][2]), "+f"(d[13][3]), "+f"(d[14][0]), "+f"(d[14][1]), "+f"(d[14][2]), "+f"(d[14][3]), "+f"(d[15][0]), "+f"(d[15][1]), "+f"(d[15][2]), "+f"(d[15][3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(scale_d));
}
/* ROWSUM: N = D + 8, the extra 8 columns the row sums (V^T's rows of ones) */
template <>
__device__ __forceinline__ void pa_wgmma_fp8_rs<72>(float (&d)[9][4], const uint32_t (&a)[4], uint64_t b, int scale_d) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %41, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n72k32.f32.e4m3.e4m3 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35}, {%36, %37, %38, %39}, %40, p, 1, 1;\n}\n"
      : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]), "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]), "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3]), "+f"(d[4][0]), "+f"(d[4][1]), "+f"(d[4][2]), "+f"(d[4][3]), "+f"(d[5][0]), "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]), "+f"(d[6][0]), "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]), "+f"(d[7][0]), "+f"(d[7][1]), "+f"(d[7][2]), "+f"(d[7][3]), "+f"(d[8][0]), "+f"(d[8][1]), "+f"(d[8][2]), "+f"(d[8][3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(scale_d));
}

template <>
__device__ __forceinline__ void pa_wgmma_fp8_rs<136>(float (&d)[17][4], const uint32_t (&a)[4], uint64_t b, int scale_d) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %73, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n136k32.f32.e4m3.e4m3 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,%64,%65,%66,%67}, {%68, %69, %70, %71}, %72, p, 1, 1;\n}\n"
      : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]), "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]), "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3]), "+f"(d[4][0]), "+f"(d[4][1]), "+f"(d[4][2]), "+f"(d[4][3]), "+f"(d[5][0]), "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]), "+f"(d[6][0]), "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]), "+f"(d[7][0]), "+f"(d[7][1]), "+f"(d[7][2]), "+f"(d[7][3]), "+f"(d[8][0]), "+f"(d[8][1]), "+f"(d[8][2]), "+f"(d[8][3]), "+f"(d[9][0]), "+f"(d[9][1]), "+f"(d[9][2]), "+f"(d[9][3]), "+f"(d[10][0]), "+f"(d[10][1]), "+f"(d[10][2]), "+f"(d[10][3]), "+f"(d[11][0]), "+f"(d[11][1]), "+f"(d[11][2]), "+f"(d[11][3]), "+f"(d[12][0]), "+f"(d[12][1]), "+f"(d[12][2]), "+f"(d[12][3]), "+f"(d[13][0]), "+f"(d[13][1]), "+f"(d[13][2]), "+f"(d[13][3]), "+f"(d[14][0]), "+f"(d[14][1]), "+f"(d[14][2]), "+f"(d[14][3]), "+f"(d[15][0]), "+f"(d[15][1]), "+f"(d[15][2]), "+f"(d[15][3]), "+f"(d[16][0]), "+f"(d[16][1]), "+f"(d[16][2]), "+f"(d[16][3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(scale_d));
}
#else
template <int N>
__device__ __forceinline__ void pa_wgmma_fp8_ss(float (&d)[N / 8][4], uint64_t a, uint64_t b,
                                                int scale_d) {}
template <int N>
__device__ __forceinline__ void pa_wgmma_fp8_rs(float (&d)[N / 8][4], const uint32_t (&a)[4],
                                                uint64_t b, int scale_d) {}
#endif

/* A shared-memory descriptor, K-major, swizzle SW bytes (128: layout type 1, 64: 2);
 * SBO = 8 rows of SW bytes. */
template <int SW>
__device__ __forceinline__ uint64_t pa_fp8_desc(uint32_t addr) {
  static_assert(SW == 128 || SW == 64, "swizzle");
  return (uint64_t)((addr & 0x3FFFF) >> 4) | ((uint64_t)1 << 16) |
         ((uint64_t)(((8 * SW) >> 4) & 0x3FFF) << 32) | ((SW == 128 ? 1ull : 2ull) << 62);
}

/* Byte offset x of a tile with the SW-byte swizzle, as stored: the general formula
 * (pa_fp8_transpose_v folds it into per-lane bases; bench/gpu/fp8_check.cu's probe uses it). */
template <int SW>
__device__ __forceinline__ uint32_t pa_swz(uint32_t x) {
  return x ^ (((x >> 7) & (SW / 16 - 1)) << 4);
}

/* P's A fragment takes S accumulator chunks 4kk..4kk+3 as they are: reg 0 of the
 * k32 step kk holds (row g) keys 2t, 2t+1 of chunk 4kk and of chunk 4kk + 1, so A
 * position p (0..15 of a 16-key half) is key
 *   key_of_pos(p) = 8 * ((p >> 1) & 1) + 2 * (p >> 2) + (p & 1),
 * and V^T's byte p of a 16-key group holds that key: the 16 bytes of a dim's key
 * group are the words [k0 k1 k8 k9] [k2 k3 k10 k11] [k4 k5 k12 k13] [k6 k7 k14 k15]. */

/* Shared memory of a shape: [Q][K0][V0][Vt0][K1][V1][Vt1], 1024-byte aligned, + 1024
 * to align the start (Q: 64 rows per consumer warpgroup; K, V, V^T: bk keys; with
 * `rowsum`, V^T has 8 more rows, of ones, and each stage is rounded up to 1024 bytes). */
constexpr int pa_fp8_stage_bytes(int d, int bk, int rowsum) {
  return (2 * bk * d + bk * (d + 8 * rowsum) + 1023) / 1024 * 1024;
}
constexpr int pa_fp8_smem_bytes(int d, int stages, int bk, int nwg, int rowsum) {
  return 1024 + 64 * nwg * d + stages * pa_fp8_stage_bytes(d, bk, rowsum);
}

/* The shape of one instantiation (head dim D, 8-bit elements). */
template <int D, int STAGES = 2, int BK = 128, int NWG = 2, int ROWSUM = 0>
struct pa_fp8_cfg {
  enum {
    consumers = NWG, /* consumer warpgroups of 64 query rows: 2, or 3 ("-wg3", hd64) */
    block_q = 64 * NWG,
    block_k = BK, /* keys per tile: 128, 192 ("-k192") or 64 ("-k64") */
    /* V^T: blocks of vt_sw keys (bytes) per dim row, swizzled by as much: one block of
     * 128 at BK 128, three of 64 at BK 192 */
    vt_sw = BK % 128 == 0 ? 128 : 64,
    vt_rows = D + 8 * ROWSUM, /* V^T's rows: the dims, and ROWSUM's 8 rows of ones */
    threads = 128 * (NWG + 1),
    stages = STAGES, /* K/V/V^T ring depth: 2, or 3 ("-s3") */
    sw = D >= 128 ? 128 : 64, /* swizzle of the Q, K, V tiles: their rows are D bytes */
    /* setmaxnreg: 128 x 72 + 256 x 216 = 64512 = 384 x 168, the launch's allocation
     * (the producer's transpose needs far fewer: 8 words and up to 8 row bases); with
     * three consumers 128 x 72 + 384 x 144 = 64512 = 512 x 126; ROWSUM with two
     * consumers 128 x 56 + 256 x 224 (at 216 its 4 more O registers spilled 8 bytes
     * in the consumers, ptxas 13.0) */
    producer_regs = NWG == 2 && ROWSUM ? 56 : 72,
    consumer_regs = NWG == 3 ? 144 : ROWSUM ? 224 : 216
  };
  static constexpr int q_bytes = block_q * D, kv_bytes = block_k * D;
  static constexpr int stage_bytes = pa_fp8_stage_bytes(D, BK, ROWSUM);
  static constexpr int smem_bytes = pa_fp8_smem_bytes(D, STAGES, BK, NWG, ROWSUM);
  static_assert(D == 64 || D == 128, "head dims 64 and 128");
  static_assert(BK == 64 || BK == 128 || BK == 192, "key tiles of 64, 128 or 192");
  static_assert(smem_bytes <= 227 * 1024, "shared memory above the sm_90 opt-in limit");
  static_assert(NWG == 2 || (NWG == 3 && BK * D == 8192), "three consumers: hd64 x 128 keys, hd128 x 64");
  static_assert(producer_regs * 128 + consumer_regs * 128 * NWG <= pa_setmaxnreg_pool(threads),
                "setmaxnreg budgets above the block's registers");
};

/* A variant (the kernel's template int V): the consumers' schedule in bits 0-1,
 *   serial    each product waited for: S, softmax, P.V, tile after tile;
 *   pipe      FlashAttention-3's intra-warpgroup overlap: S of tile n + 1 issued with
 *             P.V of tile n, the softmax of n + 1 under that P.V;
 *   pingpong  pipe, and the two consumers take turns issuing (named barriers), so
 *             one's softmax runs while the other's products have the tensor cores;
 * and the bits
 *   PA_FP8_S3   a three-stage ring;
 *   PA_FP8_E16  the softmax's exponentials two per MUFU instruction in fp16
 *               (ampere_softmax.cuh, pa_exp2_pair_f16): p has 11 bits there and is
 *               rounded to e4m3's 4 right after, and the special-function unit's
 *               16 exponentials per clock per SM are ~1024 clocks per 128 x 128 tile,
 *               as long as the tile's fp8 products at the tensor cores' peak.
 *   PA_FP8_F16  step 3 and P's packing fused in f16x2: 2^8 p = 2^(x xscale - m xscale + 8)
 *               by one FFMA per element (the 2^8 folded into the exponent) and one
 *               ex2.approx.f16x2 and one cvt.rn.satfinite.e4m3x2.f16x2 per pair, the
 *               tile's row sums in f16x2 (two per row, at most PV_STEPS * 2 terms <= 256
 *               per half), added to l in float32. Per element ~3.5 instructions instead
 *               of ~5.5 (E16 alone adds the f16 packing and unpacking to the float32
 *               path). On sm_90 ptxas turns each ex2.approx.f16x2 into two MUFU.EX2.F16
 *               (seventeenth session's SASS), so neither saves exponential-unit work.
 *   PA_FP8_GAIN P's 2^8 inside the exponent: step 3 computes 2^(x xscale - m xscale + 8)
 *               and l sums those (divided by 2^8 before step 4), so the pack has no
 *               multiply (64 FMUL per warp and 128-key tile fewer).
 *   PA_FP8_SKIP O's rescale skipped when no row of the warp moved its maximum (one
 *               vote; alpha is then exactly 1, the result unchanged).
 *   PA_FP8_K192 key tiles of 192 (S is 96 registers): the per-tile costs (waits,
 *               barriers, the row reductions' shuffles, O's rescale) over 1.5x the keys;
 *               V^T in three 64-key blocks with the 64-byte swizzle.
 *   PA_FP8_TREE the row maxima as balanced trees (frag_softmax.cuh TREE): a chain of
 *               log2 depth before the exponentials instead of one of S_TILES
 *   PA_FP8_WG3  three consumer warpgroups (192 query rows, 512 threads, 144 registers
 *               per consumer thread; four warps per scheduler instead of three): hd64
 *               with 128-key tiles or hd128 with 64-key tiles (the S and O
 *               accumulators' registers), not with pingpong
 *   PA_FP8_K64  key tiles of 64
 *   PA_FP8_ROWSUM  the row sums l by the tensor cores: V^T gets 8 more rows, all ones
 *               (written once per stage), so P.V^T's 8 extra output columns are each
 *               sum(P) over the tile's keys, rescaled with O by alpha; the softmax
 *               loses its FADD per element (96 per thread and 192-key tile), the
 *               products gain 8 of 128 (72 of 64) output columns. l is then the sum of
 *               the e4m3-rounded P that multiplies V, not of the unrounded p.
 *   PA_FP8_KEEPM the softmax's kept maximum (frag_softmax.cuh pa_tile_softmax_keep,
 *               the 16-bit kernel's PA_HV_KEEPM, decision 122): a warp's rows keep
 *               their reference m while no score exceeds it by more than
 *               PA_FP8_KEEP_LOG2; such tiles skip the quad shuffles, alpha and the
 *               rescales of l and O (one vote on the threads' own row maxima replaces
 *               SKIP's vote after the reductions). The threshold is P's headroom
 *               in e4m3: 2^8 p <= 2^8.75 = 430.5 < 448, e4m3's largest finite value.
 *   PA_FP8_PLAIN the score pass without the softcap / ALiBi / scale <= 0 path (the
 *               16-bit kernel's PA_HV_PLAIN, decision 128): run only for problems
 *               pa_hopper_plain accepts (pa_fp8_variant drops the bit for the others);
 *               hd64's defaults' (with LSE and without) since decision 131.
 *   PA_FP8_XTURN the exponentials take turns too: a consumer waits on named barrier
 *               EXP0 + cw before its step 3 and lets the next go after it (a ring of the
 *               active consumers), so no two consumers' exponentials share the
 *               special-function unit. A tuning aid (decision 138): the guess was that
 *               the softmaxes, longer than a consumer's products, overlap and halve
 *               each other's exponential rate; with the turns the iteration was no
 *               shorter (hd128 level without LSE, -6% with it; hd64 -15%).
 *   PA_FP8_P2   P packed into a second register set (the pipelined loop unrolled by two):
 *               P of tile n is packed while P.V of tile n - 1 still reads the other set,
 *               and the wait for that P.V comes after the pack, so ptxas no longer puts
 *               it above the exponentials. A tuning aid (decision 139): hd128 without
 *               LSE +0.8% at S8192, +1.3% at S16384, level causal 8192, -0.5% at S2048
 *               (20 bytes of spills); with LSE (216 registers) it spills 216 bytes and
 *               ptxas serialises the wgmma.
 *   PA_FP8_VOTEP the kept maximum decided after the exponentials (frag_softmax.cuh
 *               pa_tile_softmax_late / _late_vote, decision 140): once every row of the
 *               warp has a finite m, step 3 runs against the kept m at once, with no row
 *               maxima before it; P is packed, and the vote then asks whether any
 *               thread's largest 2^8 p exceeds 2^8.75 (KEEPM's bound). The rare warp
 *               over it moves its rows' m up by powers of two and packs P again; where a
 *               p overflowed (scores lost) it recomputes its S rows by mma.sync m16n8k32,
 *               Q from shared memory and K from global memory (pa_fp8_recompute_s), and
 *               takes the usual steps. The row maxima then sit among the exponentials
 *               instead of before them, and the P.V wait below them ("-kp"; pipelined
 *               schedules only; with XTURN, "-kp-x", the turns enclose the late step 3).
 *               A tuning aid: a consumer's softmax is shorter, but the consumers wait
 *               longer for their turns, and the kernel is slower (hd128 without LSE 3-11%,
 *               with "-x" 6-13%, hd64 17%; the forms without ROWSUM miss the output bound,
 *               as KEEPM's do: l sums the unrounded p, P rounds the largest).
 * POLYATTN_CUDA_FP8_VARIANT names one (host side). */
#define PA_FP8_KEEP_LOG2 0.75f
enum { PA_FP8_SERIAL = 0, PA_FP8_PIPE = 1, PA_FP8_PINGPONG = 2, PA_FP8_SCHED = 3, PA_FP8_S3 = 4,
       PA_FP8_E16 = 8, PA_FP8_F16 = 16, PA_FP8_GAIN = 32, PA_FP8_SKIP = 64,
       PA_FP8_K192 = 128, PA_FP8_TREE = 256, PA_FP8_WG3 = 512, PA_FP8_K64 = 1024,
       PA_FP8_ROWSUM = 2048, PA_FP8_KEEPM = 4096, PA_FP8_PLAIN = 8192, PA_FP8_XTURN = 16384,
       PA_FP8_P2 = 32768, PA_FP8_VOTEP = 65536 };
/* The shape variant v asks for at head dim d: keys per tile, ring depth, consumer
 * warpgroups ("-wg3" keeps three only where their accumulators fit: hd64 x 128 keys,
 * hd128 x 64, two stages; elsewhere it runs with two). */
constexpr int pa_fp8_bk(int v) { return v & PA_FP8_K192 ? 192 : v & PA_FP8_K64 ? 64 : 128; }
constexpr int pa_fp8_stages(int v) { return v & PA_FP8_S3 ? 3 : 2; }
constexpr int pa_fp8_nwg(int d, int v) {
  return (v & PA_FP8_WG3) && !(v & PA_FP8_S3) && d * pa_fp8_bk(v) == 8192 ? 3 : 2;
}
template <int D, int V>
using pa_fp8_cfg_of = pa_fp8_cfg<D, pa_fp8_stages(V), pa_fp8_bk(V), pa_fp8_nwg(D, V),
                                 (V & PA_FP8_ROWSUM) ? 1 : 0>;

enum {
  PA_FP8_MAX_STAGES = 3,
  PA_FP8_MBAR_Q_FULL = 0,
  PA_FP8_MBAR_K_FULL = 1,                                       /* x stages: K landed (TMA) */
  PA_FP8_MBAR_V_FULL = PA_FP8_MBAR_K_FULL + PA_FP8_MAX_STAGES,  /* V landed, for the transposer */
  PA_FP8_MBAR_VT_FULL = PA_FP8_MBAR_V_FULL + PA_FP8_MAX_STAGES, /* V^T written (4 producer warps) */
  PA_FP8_MBAR_K_EMPTY = PA_FP8_MBAR_VT_FULL + PA_FP8_MAX_STAGES, /* K read (8 consumer warps) */
  PA_FP8_MBAR_VT_EMPTY = PA_FP8_MBAR_K_EMPTY + PA_FP8_MAX_STAGES, /* V^T read (8 consumer warps) */
  PA_FP8_MBARS = PA_FP8_MBAR_VT_EMPTY + PA_FP8_MAX_STAGES,
  PA_FP8_BAR_PRODUCER = 1, /* named barrier of the producer's 128 threads */
  PA_FP8_BAR_TURN0 = 2,    /* pingpong: consumer cw's turn is named barrier TURN0 + cw */
  PA_FP8_BAR_EXP0 = 4      /* XTURN: consumer cw's turn at the exponentials, EXP0 + cw (4-6) */
};

struct pa_fp8_args {
  CUtensorMap tq, tk, tv;
  pa_problem p;
  /* without pingpong turns: a consumer warpgroup whose 64 rows all lie past the
   * sequence's end does no work (the ring's release counts leave it out; as the bf16
   * kernel's, decision 119; POLYATTN_CUDA_HOPPER_IDLE=0 keeps it computing) */
  int skip_idle;
};

/* Two fp32 to two e4m3 (round to nearest even, saturating to +-448), lo in byte 0. */
__device__ __forceinline__ uint32_t pa_fp8x2(float lo, float hi) {
  return (uint32_t)__nv_cvt_float2_to_fp8x2(make_float2(lo, hi), __NV_SATFINITE, __NV_E4M3);
}
__device__ __forceinline__ uint32_t pa_fp8x4(float a, float b, float c, float d) {
  return pa_fp8x2(a, b) | (pa_fp8x2(c, d) << 16);
}

/* d[16 x 8] += a[16 x 32] . b[32 x 8] in e4m3, fp32 accumulate (sm_89+): the fragments of
 * pa_mma_16816's with bytes for 16-bit elements (a 32-bit register holds 4 consecutive k),
 * so ldmatrix.b16 of 16-byte rows loads them as it loads the 16-bit ones. */
__device__ __forceinline__ void pa_mma_16832_e4m3(float (&d)[4], const uint32_t (&a)[4],
                                                  uint32_t b0, uint32_t b1) {
#if PA_HOPPER_ARCH_OK
  PA_MMA_16N8_F32("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32", d, a, b0, b1);
#endif
}

/* VOTEP's rare path: a warp's 16 rows of S = Q . K^T again by mma.sync m16n8k32, whose C
 * fragment is the wgmma accumulator's per-warp layout: A from q (its warpgroup's Q rows in
 * shared memory, the tiles' swizzle above), B straight from global memory, so that K's
 * stage need not be held for it (held, the producer's next loads and V transposes waited
 * for the vote: 5-19% slower, forty-eighth session). k: the row of key k0 + g (g = lane /
 * 4, k0 the tile's first key), ks: the row stride in bytes, nk: the keys from there to the
 * sequence's end (rows 8j >= nk read as zeros: masked anyway). Out of line, its result
 * through local memory: inlined, ptxas scheduled its loads into the key loop's registers
 * (452 bytes of spills at hd128 x 192 keys). */
template <int D, int SW, int S_TILES>
__device__ __noinline__ void pa_fp8_recompute_s(float (*s)[4], uint32_t q, const uint8_t *k,
                                                int64_t ks, int nk) {
  const int wq = (threadIdx.x % 128) / 32, ln = threadIdx.x % 32, mi = ln >> 3, rr = ln & 7;
  const int t4 = 4 * (ln & 3);
  float acc[S_TILES][4];
#pragma unroll
  for (int j = 0; j < S_TILES; ++j) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.0f;
#pragma unroll 1
  for (int kk = 0; kk < D / 32; ++kk) {
    const int qr = 16 * wq + 8 * (mi & 1) + rr; /* ldmatrix row: chunk 2kk + mi / 2 */
    const uint32_t x = (uint32_t)(qr * D + 16 * (2 * kk + (mi >> 1)));
    uint32_t af[4];
    pa_ldmatrix_x4(af, q + (x ^ (((x >> 7) & (SW / 16 - 1)) << 4)));
#pragma unroll
    for (int j = 0; j < S_TILES; ++j) {
      uint32_t b0 = 0, b1 = 0;
      if (8 * j < nk) {
        const uint8_t *r = k + 8 * j * ks + 32 * kk + t4;
        b0 = *(const uint32_t *)r;
        b1 = *(const uint32_t *)(r + 16);
      }
      pa_mma_16832_e4m3(acc[j], af, b0, b1);
    }
  }
#pragma unroll
  for (int j = 0; j < S_TILES; ++j)
#pragma unroll
    for (int x = 0; x < 4; ++x) s[j][x] = acc[j][x];
}

/* Transpose one BK-key V tile (src: keys x D bytes, the D-byte swizzle) into V^T (dst: D
 * rows of BK keys, in blocks of VSW keys per row with the VSW-byte swizzle, keys
 * permuted per 16-key group as above; a block holds ROWS rows, D or ROWSUM's D + 8):
 * warp `warp` of the producer's four, in units of 16 keys x 32 dims (512 bytes). ldmatrix.x4.trans reads a unit as four 8x8 matrices of
 * 16-bit elements (keys 0-7 / 8-15 x dims 0-15 / 16-31; an element is a pair of dims),
 * so lane l = 4j + q receives the 2 x 2 byte blocks (keys 2q, 2q + 1) x (dims 2j, 2j + 1)
 * of keys 0-7 and of keys 8-15; two byte permutes per block pair give a dim's word
 * [k2q k2q+1 k2q+8 k2q+9], which is bytes 4q..4q+3 of V^T's permuted 16-key chunk
 * (key_of_pos above), and stmatrix.x4 writes the four matrices' 8 rows of 16 bytes.
 * Lanes 0-15 keep the even dim of their pair in the first register and lanes 16-31 the
 * odd one, so each stored matrix's 8 dims are distinct mod 8 and its rows hit distinct
 * banks under both V^T swizzles (the loads' 8 consecutive keys do under both tile
 * swizzles). Per unit: one ldmatrix, four permutes, one stmatrix, addresses as
 * immediates on per-lane bases. Warp w takes dims 32 (w % (D / 32)) .. + 31 of every
 * (4 / (D / 32))-th key group from w / (D / 32): 12 units per warp at hd128 x 192 keys.
 * (It replaced, in the sixteenth session, a byte transposer of 16 8-byte loads, 80
 * permutes and 8 16-byte stores per 16 keys x 8 dims: 99 against ~230 producer
 * instructions per 192-key tile, +3-4% at hd128 and +4-6% at hd64, decision 107.) */
template <int D, int BK, int VSW, int ROWS = D>
__device__ __forceinline__ void pa_fp8_transpose_v(uint32_t src, uint32_t dst, int warp, int lane) {
  enum { NC = D / 32, WPC = 4 / NC, G = BK / 16, GPB = VSW / 16, UNITS = G / WPC, OFFS = GPB / WPC };
  static_assert(G % WPC == 0 && GPB % WPC == 0, "whole key groups per warp");
  const int c32 = warp % NC, m0 = warp / NC;
  const int k = lane >> 3, r = lane & 7; /* this lane's row r of matrix k */
  const int pat = D == 128 ? r : (r >> 1) & 3; /* the tile's swizzle of key 8x + r */
  const uint32_t lsrc =
      src + (uint32_t)((16 * m0 + 8 * (k & 1) + r) * D + (((2 * c32 + (k >> 1)) ^ pat) << 4));
  const int dd = 32 * c32 + 16 * (k >> 1) + 2 * r + ((r >> 2) ^ (k & 1)); /* the row's dim */
  const int spat = VSW == 128 ? dd & 7 : (dd >> 1) & 3;
  uint32_t off[OFFS]; /* key group m0 + WPC e of a V^T block, row dd */
#pragma unroll
  for (int e = 0; e < OFFS; ++e) off[e] = dst + (uint32_t)(dd * VSW + (((m0 + WPC * e) ^ spat) << 4));
  const uint32_t sx = lane < 16 ? 0x6420u : 0x7531u, sy = sx ^ 0x1111u; /* even / odd dim bytes */
#pragma unroll
  for (int i = 0; i < UNITS; ++i) {
    uint32_t v[4], o[4];
    pa_ldmatrix_x4_trans(v, lsrc + (uint32_t)(WPC * i * 16 * D));
    o[0] = __byte_perm(v[0], v[1], sx);
    o[1] = __byte_perm(v[0], v[1], sy);
    o[2] = __byte_perm(v[2], v[3], sx);
    o[3] = __byte_perm(v[2], v[3], sy);
    pa_stmatrix_x4(off[(WPC * i % GPB) / WPC] + (uint32_t)(WPC * i / GPB * ROWS * VSW), o);
  }
}

/* Phase timestamps for bench/gpu/fp8_timeline.cu (which defines PA_FP8_TIMELINE before
 * including this file; the library never does): lane 0 of the first warp of each
 * warpgroup (0: the producer, 1-3: consumers) of the blocks of batch entry 0, head
 * pa_fp8_tl_head (0 unless the harness sets it),
 * query tiles < PA_FP8_TL_BLOCKS, records the SM clock at up to 8 points of each of its
 * first PA_FP8_TL_ITERS loop iterations (slot 8 + k of iteration 0 for the prologue; of
 * iteration 0, slot 12 the SM clock and slot 14 the global ns timer at the block's start
 * (warpgroup 0) and at each consumer's end). */
#ifdef PA_FP8_TIMELINE
enum { PA_FP8_TL_BLOCKS = 64, PA_FP8_TL_ITERS = 48 };
__device__ uint32_t pa_fp8_tl[PA_FP8_TL_BLOCKS][4][PA_FP8_TL_ITERS][16];
__device__ int pa_fp8_tl_head; /* the head whose blocks record (0: the first wave's) */
#endif
#if defined(PA_FP8_TIMELINE) && PA_FP8_TIMELINE /* 0: the array, no stamps (a control) */
/* special register REG ("clock", or "globaltimer_lo": the ns timer's low word) */
#  define PA_FP8_STAMP_REG(wg, it, k, REG)                                                     \
    do {                                                                                       \
      if (pa_tl_on && (threadIdx.x & 127) == 0 && (it) < PA_FP8_TL_ITERS) {                     \
        uint32_t c_;                                                                           \
        asm volatile("mov.u32 %0, %%" REG ";\n" : "=r"(c_)::"memory");                          \
        pa_fp8_tl[blockIdx.x][wg][it][k] = c_;                                                 \
      }                                                                                        \
    } while (0)
#else
#  define PA_FP8_STAMP_REG(wg, it, k, REG) ((void)0)
#endif
#define PA_FP8_STAMP(wg, it, k) PA_FP8_STAMP_REG(wg, it, k, "clock")
#define PA_FP8_STAMP_NS(wg, it, k) PA_FP8_STAMP_REG(wg, it, k, "globaltimer_lo")
/* PA_FP8_NO_TRANSPOSE (the timeline harness only, never the library): the producer skips
 * the V transpose and hands the consumers whatever its V^T slot holds, so that the
 * kernel's time without the transpose's work can be measured; its results are wrong. */
#ifndef PA_FP8_NO_TRANSPOSE
#  define PA_FP8_NO_TRANSPOSE 0
#endif

template <int D, int V>
__global__ void __launch_bounds__(pa_fp8_cfg_of<D, V>::threads, 1)
    pa_hopper_fp8_kernel(const __grid_constant__ pa_fp8_args a) {
#if PA_HOPPER_ARCH_OK
  typedef pa_fp8_cfg_of<D, V> cfg;
  static_assert(!(V & PA_FP8_WG3) || (V & PA_FP8_SCHED) != PA_FP8_PINGPONG,
                "pingpong takes two consumers");
  static_assert(!(V & PA_FP8_ROWSUM) || !(V & (PA_FP8_F16 | PA_FP8_E16)),
                "ROWSUM's exponentials are the float32 ones");
  static_assert(!(V & PA_FP8_KEEPM) || !(V & (PA_FP8_F16 | PA_FP8_E16)),
                "the kept maximum's exponentials are the float32 ones");
  static_assert(!(V & PA_FP8_XTURN) ||
                    ((V & PA_FP8_SCHED) != PA_FP8_SERIAL && !(V & (PA_FP8_KEEPM | PA_FP8_F16))),
                "the exponentials' turns: pipe or pingpong, step 3 apart from the maxima");
  static_assert(!(V & PA_FP8_P2) || (V & PA_FP8_SCHED) != PA_FP8_SERIAL,
                "a second P register set serves the pipelined loop only");
  static_assert(!(V & PA_FP8_VOTEP) ||
                    ((V & PA_FP8_SCHED) != PA_FP8_SERIAL &&
                     !(V & (PA_FP8_KEEPM | PA_FP8_F16 | PA_FP8_E16 | PA_FP8_P2))),
                "the late vote: pipelined, float32 exponentials, one P register set");
  enum {
    VSW = cfg::vt_sw,
    PIPE = (V & PA_FP8_SCHED) != PA_FP8_SERIAL,
    PINGPONG = (V & PA_FP8_SCHED) == PA_FP8_PINGPONG,
    EXP16 = (V & PA_FP8_E16) != 0,
    FUSED = (V & PA_FP8_F16) != 0,
    GAIN = (V & PA_FP8_GAIN) != 0 && !FUSED && !EXP16,
    SKIP = (V & PA_FP8_SKIP) != 0,
    TREE = (V & PA_FP8_TREE) != 0,
    ROWSUM = (V & PA_FP8_ROWSUM) != 0,
    KEEPM = (V & PA_FP8_KEEPM) != 0,
    PLAIN = (V & PA_FP8_PLAIN) != 0,
    XTURN = (V & PA_FP8_XTURN) != 0,
    P2 = (V & PA_FP8_P2) != 0,
    VOTEP = (V & PA_FP8_VOTEP) != 0,
    VT_ROWS = cfg::vt_rows,
    OT = D / 8 + ROWSUM, /* 8-column chunks of the O accumulator (ROWSUM: + l's) */
    BQ = cfg::block_q,
    BK = cfg::block_k,
    SW = cfg::sw,
    STAGES = cfg::stages,
    S_TILES = BK / 8,  /* 8-key chunks of the S accumulator */
    O_TILES = D / 8,   /* 8-dim chunks of the O accumulator */
    QK_STEPS = D / 32, /* k32 steps of Q.K^T */
    PV_STEPS = BK / 32 /* k32 steps of P.V */
  };
  const pa_problem &p = a.p;
  extern __shared__ __align__(1024) unsigned char pa_smem[];
  __shared__ __align__(8) uint64_t bars[PA_FP8_MBARS];
  const uint32_t s_q = (pa_hsmem(pa_smem) + 1023u) & ~1023u;
  const uint32_t s_st = s_q + cfg::q_bytes; /* stage s: K, V, V^T at + s * stage_bytes */
  auto s_k = [&](int s) { return s_st + s * cfg::stage_bytes; };
  auto s_v = [&](int s) { return s_st + s * cfg::stage_bytes + cfg::kv_bytes; };
  auto s_vt = [&](int s) { return s_st + s * cfg::stage_bytes + 2 * cfg::kv_bytes; };
  static_assert(cfg::stage_bytes % 1024 == 0 && (VT_ROWS * VSW) % (8 * VSW) == 0,
                "V^T blocks on the swizzle's period");
  auto bar = [&](int i) { return pa_hsmem(&bars[i]); };

  pa_block_ctx c;
  const int i0 = (gridDim.x - 1 - blockIdx.x) * BQ; /* later (causal: longer) rows first */
  if (!pa_block_ctx_init(c, p, blockIdx.z, blockIdx.y, i0, BQ)) return;
  const int n_lo = (int)(c.klo / BK);
  const int n_hi = c.klo < c.khi ? (int)((c.khi + BK - 1) / BK) : n_lo;
  /* the consumer warpgroups with a row in the sequence (a.skip_idle; the turns of the
   * pingpong schedule need both) */
  const int active =
      !PINGPONG && a.skip_idle ? pa_block_ctx_warpgroups(c, cfg::consumers) : (int)cfg::consumers;
  const int tid = threadIdx.x;
  const int bcoord = p.varlen ? 0 : c.b;
#if defined(PA_FP8_TIMELINE) && PA_FP8_TIMELINE
  const bool pa_tl_on =
      blockIdx.y == pa_fp8_tl_head && blockIdx.z == 0 && blockIdx.x < PA_FP8_TL_BLOCKS;
#endif
  PA_FP8_STAMP(0, 0, 12); /* the block's start: slots 12 (clock) and 14 (ns) of iteration 0 */
  PA_FP8_STAMP_NS(0, 0, 14);

  if (tid == 0) {
    pa_mbar_init(bar(PA_FP8_MBAR_Q_FULL), 1);
    for (int s = 0; s < STAGES; ++s) {
      pa_mbar_init(bar(PA_FP8_MBAR_K_FULL + s), 1);
      pa_mbar_init(bar(PA_FP8_MBAR_V_FULL + s), 1);
      pa_mbar_init(bar(PA_FP8_MBAR_VT_FULL + s), 4);
      pa_mbar_init(bar(PA_FP8_MBAR_K_EMPTY + s), 4 * active);
      pa_mbar_init(bar(PA_FP8_MBAR_VT_EMPTY + s), 4 * active);
    }
    pa_mbar_init_fence();
  }
  __syncthreads();

  if (tid < 128) {
    /* The producer. */
    pa_setmaxnreg_dec<cfg::producer_regs>();
    auto issue = [&](int it) { /* thread 0: K and V of the it-th tile into its stage */
      const int s = it % STAGES, ph = (it / STAGES) & 1;
      pa_mbar_wait(bar(PA_FP8_MBAR_K_EMPTY + s), ph ^ 1);
      const int krow = (int)c.seq.k_start + (n_lo + it) * BK;
      pa_mbar_arrive_expect_tx(bar(PA_FP8_MBAR_K_FULL + s), cfg::kv_bytes);
      pa_tma_load_4d(s_k(s), &a.tk, bar(PA_FP8_MBAR_K_FULL + s), 0, krow, c.hk, bcoord);
      /* V's staging buffer of this stage was last read by the transpose of tile
       * it - STAGES, which every producer thread finished before the named barrier */
      pa_mbar_arrive_expect_tx(bar(PA_FP8_MBAR_V_FULL + s), cfg::kv_bytes);
      pa_tma_load_4d(s_v(s), &a.tv, bar(PA_FP8_MBAR_V_FULL + s), 0, krow, c.hk, bcoord);
    };
    const int tiles = n_hi - n_lo;
    if (ROWSUM) /* V^T's rows D..D+7 of every block and stage: e4m3 1.0 (0x38) in every
                 * byte; made visible to wgmma by the fence after tile 0's transpose */
      for (int s = 0; s < STAGES; ++s)
        for (int j = tid; j < 2 * BK; j += 128)
          pa_st_shared_b32(s_vt(s) + (uint32_t)((j / (2 * VSW)) * VT_ROWS * VSW + D * VSW +
                                                4 * (j % (2 * VSW))),
                           0x38383838u);
    if (tid == 0) {
      pa_mbar_arrive_expect_tx(bar(PA_FP8_MBAR_Q_FULL), cfg::q_bytes);
      pa_tma_load_4d(s_q, &a.tq, bar(PA_FP8_MBAR_Q_FULL), 0, (int)c.seq.q_start + c.i0, c.h,
                     bcoord);
      if (tiles > 0) issue(0);
    }
    for (int it = 0; it < tiles; ++it) {
      const int s = it % STAGES, ph = (it / STAGES) & 1;
      PA_FP8_STAMP(0, it, 0);
      if (tid == 0 && it + 1 < tiles) issue(it + 1);
      PA_FP8_STAMP(0, it, 1);
      pa_mbar_wait(bar(PA_FP8_MBAR_V_FULL + s), ph);
      PA_FP8_STAMP(0, it, 2);
      pa_mbar_wait(bar(PA_FP8_MBAR_VT_EMPTY + s), ph ^ 1);
      PA_FP8_STAMP(0, it, 3);
      if (!PA_FP8_NO_TRANSPOSE)
        pa_fp8_transpose_v<D, BK, VSW, VT_ROWS>(s_v(s), s_vt(s), tid / 32, tid % 32);
      pa_fence_proxy_async(); /* the st.shared above, visible to wgmma */
      __syncwarp();
      if ((tid & 31) == 0) pa_mbar_arrive(bar(PA_FP8_MBAR_VT_FULL + s));
      __syncwarp();
      PA_FP8_STAMP(0, it, 4);
      pa_named_sync(PA_FP8_BAR_PRODUCER, 128);
      PA_FP8_STAMP(0, it, 5);
    }
    return;
  }

  /* A consumer warpgroup: 64 query rows. */
  pa_setmaxnreg_inc<cfg::consumer_regs>();
  const int cw = tid / 128 - 1;
  if (cw >= active) return; /* no row of this warpgroup's is in the sequence */
  const int warp = (tid % 128) / 32, lane = tid % 32, t = lane & 3;
  const int row0 = 64 * cw + 16 * warp;
  const float slope = pa_problem_alibi_slope(&p, c.b, c.h);
  const float qk_descale =
      pa_problem_descale(&p.q_descale, c.b, c.hk) * pa_problem_descale(&p.k_descale, c.b, c.hk);
  const float v_descale = pa_problem_descale(&p.v_descale, c.b, c.hk);
  /* PLAIN: the general pass compiled out (the host runs such a kernel on plain problems) */
  const bool general = !PLAIN && (p.softcap > 0.0f || slope != 0.0f || !(p.scale > 0.0f));
  /* fast path: x = raw fp8 dot product, score * log2(e) = x * xscale */
  const float xscale = general ? 1.0f : p.scale * qk_descale * PA_LOG2E;

  float o[OT][4]; /* ROWSUM: chunk O_TILES holds the rows' l (all 8 columns) */
#pragma unroll
  for (int d = 0; d < OT; ++d) o[d][0] = o[d][1] = o[d][2] = o[d][3] = 0.0f;
  pa_softmax_row sm[2] = {pa_softmax_start(), pa_softmax_start()};
  const uint32_t s_q_wg = s_q + cw * 64 * D; /* this warpgroup's 64 rows */

  auto warp_arrive = [&](int b) {
    __syncwarp();
    if (lane == 0) pa_mbar_arrive(bar(b));
  };

  auto issue_qk = [&](float (&sacc)[S_TILES][4], int s) { /* S = Q . K^T, committed */
    pa_wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < QK_STEPS; ++kk)
      pa_wgmma_fp8_ss<BK>(sacc, pa_fp8_desc<SW>(s_q_wg + 32 * kk),
                          pa_fp8_desc<SW>(s_k(s) + 32 * kk), kk > 0);
    pa_wgmma_commit();
  };
  auto issue_pv = [&](const uint32_t (&pf)[PV_STEPS][4], int s) { /* O += P . V, committed */
    pa_wgmma_fence_regs(o);
    pa_wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < PV_STEPS; ++kk)
      pa_wgmma_fp8_rs<8 * OT>(
          o, pf[kk],
          pa_fp8_desc<VSW>(s_vt(s) + (32 * kk / VSW) * (VT_ROWS * VSW) + 32 * kk % VSW), 1);
    pa_wgmma_commit();
  };
  /* Scores, masks and softmax steps 1-3 (O's rescale by alpha is the caller's). KEEPM:
   * the kept maximum; `moved` says whether any row's reference moved (else alpha is 1
   * and O's rescale is skipped). */
  bool moved = true;
  /* VOTEP: whether this tile took the late path (pa_tile_softmax_late), and its
   * thread's largest 2^8 p and partial row sums per row, for the vote after the pack */
  bool late = false;
  float pmax[2], psum[2];
  auto scores = [&](float (&sacc)[S_TILES][4], int n) {
    if (general) { /* pa_score's scale is that of the real-valued q and k */
#pragma unroll
      for (int j = 0; j < S_TILES; ++j)
#pragma unroll
        for (int x = 0; x < 4; ++x) sacc[j][x] *= qk_descale;
    }
    const int k0 = n * BK;
    const bool range = !(c.lo_last <= k0 && c.hi_first >= k0 + BK);
    pa_frag_scores<S_TILES>(sacc, p, c, general, slope, range, false, k0,
                            c.i0 + row0 + (lane >> 2), t);
  };
  /* XTURN: the active consumers in a ring; the last opens with an arrive (consumer 0 goes
   * first) and skips its last arrive, as the issue turns do (all walk the same tiles) */
  const bool xturn = XTURN && active > 1;
  /* steps 1 and 2 (ROWSUM: step 3's exponentials only, l is P.V^T's ones column, set in
   * step 4) */
  auto update_max = [&](const float (&sacc)[S_TILES][4], float (&alpha)[2]) {
    pa_frag_softmax_update_max<S_TILES, TREE>(sm, sacc, xscale, alpha);
    if (!ROWSUM) pa_softmax_rescale(&sm[0], alpha[0]), pa_softmax_rescale(&sm[1], alpha[1]);
  };
  auto softmax = [&](float (&sacc)[S_TILES][4], int n, float (&alpha)[2]) {
    scores(sacc, n);
    if (VOTEP) {
      late = !__any_sync(0xffffffffu, pa_softmax_any_unset(sm));
      if (late) {
        if (xturn) pa_named_sync(PA_FP8_BAR_EXP0 + cw, 256);
        pa_tile_softmax_late<pa_quad_map<S_TILES>, GAIN ? 8 : 0, !ROWSUM>(sm, sacc, xscale, pmax,
                                                                          psum);
        if (xturn && !(cw == active - 1 && n + 1 == n_hi))
          pa_named_arrive(PA_FP8_BAR_EXP0 + (cw + 1) % active, 256);
        return;
      }
      moved = true;
    }
    if (KEEPM) {
      /* ROWSUM: l is rescaled too where m moves, unused (step 4 takes P.V^T's column) */
      moved = pa_tile_softmax_keep<pa_quad_map<S_TILES>, GAIN ? 8 : 0, !ROWSUM>(
          sm, sacc, xscale, PA_FP8_KEEP_LOG2, alpha);
      return;
    }
    update_max(sacc, alpha);
    if (xturn) pa_named_sync(PA_FP8_BAR_EXP0 + cw, 256);
    if (!FUSED)
      pa_frag_softmax_accumulate<S_TILES, EXP16, GAIN ? 8 : 0, !ROWSUM>(sm, sacc, xscale);
    if (xturn && !(cw == active - 1 && n + 1 == n_hi))
      pa_named_arrive(PA_FP8_BAR_EXP0 + (cw + 1) % active, 256);
  };
  auto rescale_o = [&](const float (&alpha)[2]) {
    if (KEEPM || VOTEP) {
      if (!moved) return; /* alpha is 1 (the kept maximum); SKIP's vote is this one */
    } else if (SKIP && __all_sync(0xffffffffu, alpha[0] == 1.0f && alpha[1] == 1.0f)) {
      return;
    }
#pragma unroll
    for (int d = 0; d < OT; ++d) {
      o[d][0] *= alpha[0];
      o[d][1] *= alpha[0];
      o[d][2] *= alpha[1];
      o[d][3] *= alpha[1];
    }
  };
  /* FUSED: step 3 and the pack in one pass (PA_FP8_F16 above); l gets sum(2^8 p) / 2^8. */
  auto accumulate_pack_f16 = [&](const float (&sacc)[S_TILES][4], uint32_t (&pf)[PV_STEPS][4]) {
    float ref[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) ref[r] = pa_softmax_ref(&sm[r]) * xscale - 8.0f;
    /* two f16x2 sums per row (chunks 4kk, 4kk + 1 and 4kk + 2, 4kk + 3): half the
     * dependent chain, and at most PV_STEPS * 2 terms <= 256 per half (<= 3072) */
    __half2 sum[2][2] = {{__float2half2_rn(0.0f), __float2half2_rn(0.0f)},
                         {__float2half2_rn(0.0f), __float2half2_rn(0.0f)}};
#pragma unroll
    for (int kk = 0; kk < PV_STEPS; ++kk) {
      uint32_t w[4][2]; /* chunk 4kk + c, row r: two e4m3 in 16 bits */
#pragma unroll
      for (int c4 = 0; c4 < 4; ++c4)
#pragma unroll
        for (int r = 0; r < 2; ++r) {
          const float(&sj)[4] = sacc[4 * kk + c4];
          const __half2 x = __floats2half2_rn(fmaf(sj[2 * r], xscale, -ref[r]),
                                              fmaf(sj[2 * r + 1], xscale, -ref[r]));
          uint32_t xi = *reinterpret_cast<const uint32_t *>(&x), yi;
          asm("ex2.approx.f16x2 %0, %1;\n" : "=r"(yi) : "r"(xi));
          const __half2 y = *reinterpret_cast<const __half2 *>(&yi);
          sum[r][c4 >> 1] = __hadd2(sum[r][c4 >> 1], y);
          w[c4][r] = (uint32_t)__nv_cvt_halfraw2_to_fp8x2(*reinterpret_cast<const __half2_raw *>(&y),
                                                          __NV_SATFINITE, __NV_E4M3);
        }
      pf[kk][0] = w[0][0] | (w[1][0] << 16);
      pf[kk][1] = w[0][1] | (w[1][1] << 16);
      pf[kk][2] = w[2][0] | (w[3][0] << 16);
      pf[kk][3] = w[2][1] | (w[3][1] << 16);
    }
#pragma unroll
    for (int r = 0; r < 2; ++r)
      pa_softmax_accumulate(&sm[r], ((__low2float(sum[r][0]) + __high2float(sum[r][0])) +
                                     (__low2float(sum[r][1]) + __high2float(sum[r][1]))) *
                                        (1.0f / 256.0f));
  };
  /* P * 2^8 to e4m3, packed in place: S chunks 4kk..4kk+3 are the k32 step kk */
  auto pack_p = [&](const float (&sacc)[S_TILES][4], uint32_t (&pf)[PV_STEPS][4]) {
    if (FUSED) {
      accumulate_pack_f16(sacc, pf);
      return;
    }
    const float f = GAIN ? 1.0f : 256.0f; /* GAIN: sacc already holds 2^8 p */
#pragma unroll
    for (int kk = 0; kk < PV_STEPS; ++kk) {
      const float(&c0)[4] = sacc[4 * kk], (&c1)[4] = sacc[4 * kk + 1];
      const float(&c2)[4] = sacc[4 * kk + 2], (&c3)[4] = sacc[4 * kk + 3];
      pf[kk][0] = pa_fp8x4(c0[0] * f, c0[1] * f, c1[0] * f, c1[1] * f);
      pf[kk][1] = pa_fp8x4(c0[2] * f, c0[3] * f, c1[2] * f, c1[3] * f);
      pf[kk][2] = pa_fp8x4(c2[0] * f, c2[1] * f, c3[0] * f, c3[1] * f);
      pf[kk][3] = pa_fp8x4(c2[2] * f, c2[3] * f, c3[2] * f, c3[3] * f);
    }
  };

  /* VOTEP: this warp's rows of S for key tile n again (pa_fp8_recompute_s), only where the
   * late vote lost scores */
  auto recompute_s = [&](float (&sacc)[S_TILES][4], int n) {
    const int key = n * BK + (lane >> 2);
    const uint8_t *kg =
        (const uint8_t *)p.k.ptr + pa_view_row(&p.k, c.b, key, c.seq.k_start, c.hk);
    float tmp[S_TILES][4];
    pa_fp8_recompute_s<D, SW, S_TILES>(tmp, s_q_wg, kg, p.k.stride_s, c.seq.len_k - key);
#pragma unroll
    for (int j = 0; j < S_TILES; ++j)
#pragma unroll
      for (int x = 0; x < 4; ++x) sacc[j][x] = tmp[j][x];
  };
  /* VOTEP: the vote after the pack (pa_tile_softmax_late_vote). Where a row's m moved, P
   * is packed again from the rescaled p; where scores were lost, S comes again (K from
   * global memory) and takes the usual steps. */
  auto vote = [&](float (&sacc)[S_TILES][4], int n, float (&alpha)[2],
                  uint32_t (&pcur)[PV_STEPS][4]) {
    if (!VOTEP || !late) return;
    const int r = pa_tile_softmax_late_vote<pa_quad_map<S_TILES>, GAIN ? 8 : 0, !ROWSUM>(
        sm, sacc, xscale, PA_FP8_KEEP_LOG2, pmax, psum, alpha);
    moved = r != 0;
    if (r == 0) return;
    if (r == 2) {
      recompute_s(sacc, n);
      scores(sacc, n);
      update_max(sacc, alpha);
      pa_frag_softmax_accumulate<S_TILES, false, GAIN ? 8 : 0, !ROWSUM>(sm, sacc, xscale);
    }
    pack_p(sacc, pcur);
  };

  pa_mbar_wait(bar(PA_FP8_MBAR_Q_FULL), 0);
  const int tiles = n_hi - n_lo;
  if (!PIPE) {
    /* One tile at a time: S, softmax, P.V, each waited for. */
    for (int it = 0; it < tiles; ++it) {
      const int s = it % STAGES, ph = (it / STAGES) & 1;
      float sacc[S_TILES][4], alpha[2];
      uint32_t pf[PV_STEPS][4];
      pa_mbar_wait(bar(PA_FP8_MBAR_K_FULL + s), ph);
      issue_qk(sacc, s);
      pa_wgmma_wait<0>();
      pa_wgmma_fence_regs(sacc);
      warp_arrive(PA_FP8_MBAR_K_EMPTY + s);
      softmax(sacc, n_lo + it, alpha);
      rescale_o(alpha);
      pack_p(sacc, pf);
      pa_mbar_wait(bar(PA_FP8_MBAR_VT_FULL + s), ph);
      issue_pv(pf, s);
      pa_wgmma_wait<0>();
      pa_wgmma_fence_regs(o);
      warp_arrive(PA_FP8_MBAR_VT_EMPTY + s);
    }
  } else if (tiles > 0) {
    /* FlashAttention-3's intra-warpgroup overlap: S of tile it and P.V of tile it - 1
     * issued together, the softmax of it under that P.V. */
    float sacc[S_TILES][4], alpha[2];
    uint32_t pf[PV_STEPS][4];
    /* pingpong: consumer cw issues after a sync on its named barrier, then lets the
     * other go; consumer 1 opens with an arrive so that consumer 0 goes first, and
     * skips its last arrive, which no sync would match (both walk the same tiles) */
    auto my_turn = [&] {
      if (PINGPONG) pa_named_sync(PA_FP8_BAR_TURN0 + cw, 256);
    };
    auto your_turn = [&](bool last) {
      if (PINGPONG && !(last && cw == 1)) pa_named_arrive(PA_FP8_BAR_TURN0 + (1 - cw), 256);
    };
    if (PINGPONG && cw == 1) pa_named_arrive(PA_FP8_BAR_TURN0, 256);
    if (XTURN && active > 1 && cw == active - 1) pa_named_arrive(PA_FP8_BAR_EXP0, 256);
    PA_FP8_STAMP(1 + cw, 0, 8);
    pa_mbar_wait(bar(PA_FP8_MBAR_K_FULL), 0);
    PA_FP8_STAMP(1 + cw, 0, 9);
    my_turn();
    issue_qk(sacc, 0);
    your_turn(false);
    pa_wgmma_wait<0>();
    pa_wgmma_fence_regs(sacc);
    warp_arrive(PA_FP8_MBAR_K_EMPTY);
    PA_FP8_STAMP(1 + cw, 0, 10);
    softmax(sacc, n_lo, alpha);
    pack_p(sacc, pf);
    PA_FP8_STAMP(1 + cw, 0, 11);
    /* P2: P of tile it packed into its own register set (pcur) while P.V of tile it - 1
     * still reads the other (pprev), then the wait for that P.V; the loop unrolled by two
     * so that both sets stay registers. Without P2 both are pf. */
    uint32_t pf2[P2 ? PV_STEPS : 1][4];
    auto step = [&](int it, uint32_t(&pcur)[PV_STEPS][4], uint32_t(&pprev)[PV_STEPS][4]) {
      const int s = it % STAGES, ph = (it / STAGES) & 1;
      const int sp = (it - 1) % STAGES, php = ((it - 1) / STAGES) & 1;
      PA_FP8_STAMP(1 + cw, it, 0);
      pa_mbar_wait(bar(PA_FP8_MBAR_K_FULL + s), ph);
      pa_mbar_wait(bar(PA_FP8_MBAR_VT_FULL + sp), php);
      PA_FP8_STAMP(1 + cw, it, 1);
      my_turn();
      PA_FP8_STAMP(1 + cw, it, 2);
      issue_qk(sacc, s);
      rescale_o(alpha); /* no P.V in flight: the last one was waited for */
      issue_pv(pprev, sp);
      your_turn(false);
      PA_FP8_STAMP(1 + cw, it, 3);
      pa_wgmma_wait<1>(); /* S landed; P.V of tile it - 1 may still run */
      pa_wgmma_fence_regs(sacc);
      PA_FP8_STAMP(1 + cw, it, 4);
      warp_arrive(PA_FP8_MBAR_K_EMPTY + s);
      softmax(sacc, n_lo + it, alpha);
      PA_FP8_STAMP(1 + cw, it, 5);
      /* (packing the next P into a second register set before this wait measured 11%
       * slower on the H200 at 128-key tiles: R2, pipe 643 against R1's 727 TFLOP/s at
       * hd128; P2 at 192-key tiles, decision 139) */
      if (P2) pack_p(sacc, pcur);
      pa_wgmma_wait<0>();
      pa_wgmma_fence_regs(o);
      PA_FP8_STAMP(1 + cw, it, 6);
      warp_arrive(PA_FP8_MBAR_VT_EMPTY + sp);
      if (!P2) pack_p(sacc, pcur);
      vote(sacc, n_lo + it, alpha, pcur);
      PA_FP8_STAMP(1 + cw, it, 7);
    };
    if constexpr (P2) { /* tile t's P in pf if t is even, in pf2 if odd */
      int it = 1;
      for (; it + 1 < tiles; it += 2) {
        step(it, pf2, pf);
        step(it + 1, pf, pf2);
      }
      if (it < tiles) step(it, pf2, pf);
    } else {
      for (int it = 1; it < tiles; ++it) step(it, pf, pf);
    }
    const int sl = (tiles - 1) % STAGES, phl = ((tiles - 1) / STAGES) & 1;
    pa_mbar_wait(bar(PA_FP8_MBAR_VT_FULL + sl), phl);
    my_turn();
    rescale_o(alpha);
    if constexpr (P2) {
      if ((tiles - 1) % 2) issue_pv(pf2, sl);
      else issue_pv(pf, sl);
    } else {
      issue_pv(pf, sl);
    }
    your_turn(true);
    pa_wgmma_wait<0>();
    pa_wgmma_fence_regs(o);
    warp_arrive(PA_FP8_MBAR_VT_EMPTY + sl);
  }

  /* Step 4: normalise (and undo the 2^8 of P, apply v's descale); bf16 out, LSE. */
  if (ROWSUM) /* each lane holds the whole row's sum: the quad's sum in step 4 takes one */
    for (int r = 0; r < 2; ++r) sm[r].l = t == 0 ? o[O_TILES][2 * r] : 0.0f;
  if (GAIN) sm[0].l *= 1.0f / 256.0f, sm[1].l *= 1.0f / 256.0f; /* l summed 2^8 p */
  float lse[2];
  pa_frag_softmax_normalise(sm, xscale, o, lse);
  const float post = v_descale * (1.0f / 256.0f);
  __nv_bfloat16 *o_g = (__nv_bfloat16 *)p.o.ptr;
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int i = c.i0 + row0 + (lane >> 2) + 8 * r;
    if (i >= c.seq.len_q) continue;
    __nv_bfloat16 *dst = o_g + pa_view_row(&p.o, c.b, i, c.seq.q_start, c.h) + 2 * t;
#pragma unroll
    for (int d = 0; d < O_TILES; ++d)
      *(uint32_t *)(dst + 8 * d) =
          pa_pack2<__nv_bfloat16>(o[d][2 * r] * post, o[d][2 * r + 1] * post);
    if (p.lse.buf && t == 0)
      ((float *)p.lse.ptr)[pa_lse_index(&p.lse, c.b, c.h, i, c.seq.q_start)] = lse[r];
  }
  PA_FP8_STAMP(1 + cw, 0, 12); /* the consumer's end */
  PA_FP8_STAMP_NS(1 + cw, 0, 14);
#else
  __trap(); /* never launched: pa_cuda_hopper_fp8_supports() requires the sm_90a build */
#endif
}

/* ---- host side ---- */

/* A 4-D map over an fp8 q/k/v view: (head dim, rows, heads, batch), bytes as uint8;
 * boxes of D x box_rows, swizzled as the kernel reads them, zeros outside. */
bool pa_fp8_map(CUtensorMap *m, const pa_view *v, const pa_problem *p, int64_t rows, int heads,
                int box_rows) {
  pa_encode_tiled_fn fn = pa_encode_tiled();
  if (!fn || (uintptr_t)v->ptr % 16 != 0) return false;
  const int64_t batch = p->varlen ? 1 : p->batch;
  if (rows < 1) rows = 1;
  const cuuint64_t dims[4] = {(cuuint64_t)p->head_dim, (cuuint64_t)rows, (cuuint64_t)heads,
                              (cuuint64_t)batch};
  int64_t st[3] = {v->stride_s, v->stride_h, v->stride_b}; /* bytes: 1-byte elements */
  const int64_t filler = (rows * v->stride_s + 15) / 16 * 16;
  for (int x = 0; x < 3; ++x) {
    if (dims[x + 1] == 1) st[x] = filler > 0 ? filler : 16;
    if (st[x] <= 0 || st[x] % 16 != 0 || st[x] >= (1ll << 40)) return false;
  }
  const cuuint64_t strides[3] = {(cuuint64_t)st[0], (cuuint64_t)st[1], (cuuint64_t)st[2]};
  const cuuint32_t box[4] = {(cuuint32_t)p->head_dim, (cuuint32_t)box_rows, 1, 1};
  const cuuint32_t estr[4] = {1, 1, 1, 1};
  return fn(m, CU_TENSOR_MAP_DATA_TYPE_UINT8, 4, v->ptr, dims, strides, box, estr,
            CU_TENSOR_MAP_INTERLEAVE_NONE,
            p->head_dim >= 128 ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_64B,
            CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

bool pa_fp8_maps(pa_fp8_args *a, const pa_problem *p, int block_q, int block_k) {
  const int64_t rows_q = p->varlen ? p->total_q : p->seqlen_q;
  const int64_t rows_k = p->varlen ? p->total_k : p->seqlen_k;
  return pa_fp8_map(&a->tq, &p->q, p, rows_q, p->heads_q, block_q) &&
         pa_fp8_map(&a->tk, &p->k, p, rows_k, p->heads_kv, block_k) &&
         pa_fp8_map(&a->tv, &p->v, p, rows_k, p->heads_kv, block_k);
}

template <int D, int V>
std::atomic<unsigned long long> &pa_fp8_opted() {
  static std::atomic<unsigned long long> mask(0);
  return mask;
}

template <int D, int V>
cudaError_t pa_fp8_launch(const pa_problem *p, cudaStream_t stream) {
  if constexpr ((V & PA_FP8_WG3) && pa_fp8_nwg(D, V) != 3) { /* two consumers there */
    return pa_fp8_launch<D, V & ~PA_FP8_WG3>(p, stream);
  } else {
    typedef pa_fp8_cfg_of<D, V> cfg;
    pa_fp8_args args;
    memset(&args, 0, sizeof args);
    args.p = *p;
    args.skip_idle = pa_hopper_skip_idle();
    if (!pa_fp8_maps(&args, p, cfg::block_q, cfg::block_k)) return cudaErrorInvalidValue;
    const void *fn = (const void *)pa_hopper_fp8_kernel<D, V>;
    int device = 0;
    cudaError_t e = cudaGetDevice(&device);
    if (e != cudaSuccess) return e;
    const unsigned long long bit = device < 64 ? 1ull << device : 0;
    if (!bit || !(pa_fp8_opted<D, V>().load(std::memory_order_acquire) & bit)) {
      e = cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, cfg::smem_bytes);
      if (e != cudaSuccess) return e;
      pa_fp8_opted<D, V>().fetch_or(bit, std::memory_order_acq_rel);
    }
    const dim3 grid((unsigned)((p->seqlen_q + cfg::block_q - 1) / cfg::block_q),
                    (unsigned)p->heads_q, (unsigned)p->batch);
    pa_hopper_fp8_kernel<D, V><<<grid, cfg::threads, cfg::smem_bytes, stream>>>(args);
    return cudaGetLastError();
  }
}

/* The variants (POLYATTN_CUDA_FP8_VARIANT=name, read per call): name, bits, and whether
 * it ships (1: the defaults with and without ROWSUM, hd64's two forms with PLAIN, and
 * "serial", the reference the benchmarks compare against). The others are tuning aids,
 * compiled only with the CMake option POLYATTN_CUDA_TUNING_VARIANTS (decision 114, as
 * decision 112 for the 16-bit forward); without it their names run the default. */
#define PA_FP8_VARIANT_LIST(X)                 \
  X("serial", PA_FP8_SERIAL, 1)                   \
  X("pipe", PA_FP8_PIPE, 0)                       \
  X("pingpong", PA_FP8_PINGPONG, 0)               \
  X("serial-s3", PA_FP8_SERIAL | PA_FP8_S3, 0)    \
  X("pingpong-s3", PA_FP8_PINGPONG | PA_FP8_S3, 0) \
  X("serial-e16", PA_FP8_SERIAL | PA_FP8_E16, 0)   \
  X("pipe-e16", PA_FP8_PIPE | PA_FP8_E16, 0)       \
  X("pingpong-e16", PA_FP8_PINGPONG | PA_FP8_E16, 0) \
  X("pingpong-s3-e16", PA_FP8_PINGPONG | PA_FP8_S3 | PA_FP8_E16, 0) \
  X("serial-f16", PA_FP8_SERIAL | PA_FP8_F16, 0)   \
  X("pipe-f16", PA_FP8_PIPE | PA_FP8_F16, 0)       \
  X("pingpong-f16", PA_FP8_PINGPONG | PA_FP8_F16, 0) \
  X("pipe-gs", PA_FP8_PIPE | PA_FP8_GAIN | PA_FP8_SKIP, 0) \
  X("pingpong-gs", PA_FP8_PINGPONG | PA_FP8_GAIN | PA_FP8_SKIP, 0) \
  X("serial-gs-k192", PA_FP8_SERIAL | PA_FP8_GAIN | PA_FP8_SKIP | PA_FP8_K192, 0) \
  X("pipe-gs-k192", PA_FP8_PIPE | PA_FP8_GAIN | PA_FP8_SKIP | PA_FP8_K192, 0) \
  X("pingpong-gs-k192", PA_FP8_PINGPONG | PA_FP8_GAIN | PA_FP8_SKIP | PA_FP8_K192, 0) \
  X("pipe-gs-k192-t", PA_FP8_PIPE | PA_FP8_GAIN | PA_FP8_SKIP | PA_FP8_K192 | PA_FP8_TREE, 0) \
  X("pingpong-gs-k192-t", PA_FP8_PINGPONG | PA_FP8_GAIN | PA_FP8_SKIP | PA_FP8_K192 | PA_FP8_TREE, 1) \
  X("pipe-gs-t-wg3", PA_FP8_PIPE | PA_FP8_GAIN | PA_FP8_SKIP | PA_FP8_TREE | PA_FP8_WG3, 1) \
  X("pipe-gs-t-k64-wg3", PA_FP8_PIPE | PA_FP8_GAIN | PA_FP8_SKIP | PA_FP8_TREE | PA_FP8_K64 | PA_FP8_WG3, 0) \
  X("pipe-gs-t-k64", PA_FP8_PIPE | PA_FP8_GAIN | PA_FP8_SKIP | PA_FP8_TREE | PA_FP8_K64, 0) \
  X("serial-gs-t-wg3", PA_FP8_SERIAL | PA_FP8_GAIN | PA_FP8_SKIP | PA_FP8_TREE | PA_FP8_WG3, 0) \
  X("pingpong-gs-k192-t-r", PA_FP8_PINGPONG | PA_FP8_GAIN | PA_FP8_SKIP | PA_FP8_K192 | PA_FP8_TREE | PA_FP8_ROWSUM, 1) \
  X("pipe-gs-t-wg3-r", PA_FP8_PIPE | PA_FP8_GAIN | PA_FP8_SKIP | PA_FP8_TREE | PA_FP8_WG3 | PA_FP8_ROWSUM, 1) \
  X("pingpong-gs-k192-t-km", PA_FP8_DEFAULT_D128 | PA_FP8_KEEPM, 0) \
  X("pingpong-gs-k192-t-r-km", PA_FP8_DEFAULT_D128 | PA_FP8_ROWSUM | PA_FP8_KEEPM, 0) \
  X("pipe-gs-t-wg3-km", PA_FP8_DEFAULT_D64 | PA_FP8_KEEPM, 0) \
  X("pipe-gs-t-wg3-r-km", PA_FP8_DEFAULT_D64 | PA_FP8_ROWSUM | PA_FP8_KEEPM, 0) \
  X("pingpong-gs-k192-t-pn", PA_FP8_DEFAULT_D128 | PA_FP8_PLAIN, 0) \
  X("pingpong-gs-k192-t-r-pn", PA_FP8_DEFAULT_D128 | PA_FP8_ROWSUM | PA_FP8_PLAIN, 0) \
  X("pipe-gs-t-wg3-pn", PA_FP8_DEFAULT_D64 | PA_FP8_PLAIN, 1) \
  X("pipe-gs-t-wg3-r-pn", PA_FP8_DEFAULT_D64 | PA_FP8_ROWSUM | PA_FP8_PLAIN, 1) \
  X("pingpong-gs-k192-t-x", PA_FP8_DEFAULT_D128 | PA_FP8_XTURN, 0) \
  X("pingpong-gs-k192-t-r-x", PA_FP8_DEFAULT_D128 | PA_FP8_ROWSUM | PA_FP8_XTURN, 0) \
  X("pipe-gs-t-wg3-r-x", PA_FP8_DEFAULT_D64 | PA_FP8_ROWSUM | PA_FP8_XTURN, 0) \
  X("pipe-gs-t-wg3-r-pn-x", PA_FP8_DEFAULT_D64 | PA_FP8_ROWSUM | PA_FP8_PLAIN | PA_FP8_XTURN, 0) \
  X("pingpong-gs-k192-t-p2", PA_FP8_DEFAULT_D128 | PA_FP8_P2, 0) \
  X("pingpong-gs-k192-t-r-p2", PA_FP8_DEFAULT_D128 | PA_FP8_ROWSUM | PA_FP8_P2, 0) \
  X("pingpong-gs-k192-t-kp", PA_FP8_DEFAULT_D128 | PA_FP8_VOTEP, 0) \
  X("pingpong-gs-k192-t-r-kp", PA_FP8_DEFAULT_D128 | PA_FP8_ROWSUM | PA_FP8_VOTEP, 0) \
  X("pingpong-gs-k192-t-pn-kp", PA_FP8_DEFAULT_D128 | PA_FP8_PLAIN | PA_FP8_VOTEP, 0) \
  X("pingpong-gs-k192-t-r-pn-kp",                                                      \
    PA_FP8_DEFAULT_D128 | PA_FP8_ROWSUM | PA_FP8_PLAIN | PA_FP8_VOTEP, 0)               \
  X("pipe-gs-t-wg3-pn-kp", PA_FP8_DEFAULT_D64 | PA_FP8_PLAIN | PA_FP8_VOTEP, 0)        \
  X("pipe-gs-t-wg3-r-pn-kp",                                                           \
    PA_FP8_DEFAULT_D64 | PA_FP8_ROWSUM | PA_FP8_PLAIN | PA_FP8_VOTEP, 0)                \
  X("pingpong-gs-k192-t-r-pn-kp-x",                                                    \
    PA_FP8_DEFAULT_D128 | PA_FP8_ROWSUM | PA_FP8_PLAIN | PA_FP8_VOTEP | PA_FP8_XTURN, 0)

/* The defaults per head dim (decision 106; bench/RESULTS.md, fifteenth session): the
 * pipelined schedule, P's 2^8 in the exponent, O's rescale skipped where no maximum
 * moved, tree row maxima; at hd128 192-key tiles with the pingpong turns, at hd64 three
 * consumer warpgroups on 128-key tiles. Same process as SDPA at S8192 (TFLOP/s): hd128
 * 779.9 against serial's 669.9 (causal 709.6 / 615.4); hd64 559.0 against the
 * two-consumer pipe-gs-k192-t's 475.2 (serial 412.5; causal 484.2 / 434.7). Each passed
 * test_fp8 (outputs within DESIGN's rule; LSE as decision 78) and memcheck, racecheck
 * and synccheck on the H200. Without LSE both defaults add ROWSUM (decision 108,
 * pa_fp8_variant; seventeenth session: hd64 +3-4% at S >= 8192; nineteenth session,
 * sustained at the board's power cap, hd128 +1.1% at S8192, +1.2% at S16384, +0.8%
 * causal S8192, -0.6% at S2048; decision 110). */
enum {
  PA_FP8_DEFAULT_D128 = PA_FP8_PINGPONG | PA_FP8_GAIN | PA_FP8_SKIP | PA_FP8_K192 | PA_FP8_TREE,
  PA_FP8_DEFAULT_D64 = PA_FP8_PIPE | PA_FP8_GAIN | PA_FP8_SKIP | PA_FP8_TREE | PA_FP8_WG3
};

/* PLAIN forms are compiled only at their defaults' head dims, with or without XTURN or
 * VOTEP (the others, as before, at both; in the builds CI ships only hd64's
 * "pipe-gs-t-wg3-pn" and "pipe-gs-t-wg3-r-pn", decision 131). */
constexpr bool pa_fp8_compiled_at(int d, int v) {
  return !(v & PA_FP8_PLAIN) ||
         (v & ~(PA_FP8_ROWSUM | PA_FP8_PLAIN | PA_FP8_XTURN | PA_FP8_VOTEP)) ==
                                    (d == 64 ? PA_FP8_DEFAULT_D64 : PA_FP8_DEFAULT_D128);
}

/* The variant for problem p: POLYATTN_CUDA_FP8_VARIANT if it names one, else the default
 * of its head dim, which takes l from the tensor cores (ROWSUM) when no LSE is asked for
 * (decision 108: faster and O's error lower, but l, and so LSE, would carry the fp8
 * tensor cores' truncating accumulation). At hd128 the seventeenth session's timings
 * could not tell it from the default (level to -2.7% one process, +1.5% another); the
 * nineteenth's, sustained with the clock logged, put it 0.8-1.2% ahead at S >= 8192.
 * At hd64 both forms run plain problems on their PLAIN forms (decision 131, fortieth
 * session on an H100, sustained: without LSE +1.3-1.6% at S8192, +2.1% causal 8192; with
 * LSE +1.0-1.7% at S4096, S8192 and causal 8192); at hd128 PLAIN measured 0.5-1.0% slower
 * (level at S2048) and stays a tuning variant. */
int pa_fp8_variant(const pa_problem *p) {
  const int d = p->head_dim;
  struct named {
    const char *name;
    int v;
    bool compiled;
  };
#define PA_FP8_NAME(name, v, full) {name, v, (full) || PA_CUDA_TUNING_VARIANTS},
  static const named variants[] = {PA_FP8_VARIANT_LIST(PA_FP8_NAME)};
#undef PA_FP8_NAME
  /* PLAIN only where the problem is plain and the form is compiled at its head dim: else
   * the form without it runs */
  const int drop = pa_hopper_plain(p) ? 0 : PA_FP8_PLAIN;
  if (const char *env = getenv("POLYATTN_CUDA_FP8_VARIANT"))
    for (const named &x : variants)
      if (x.compiled && !strcmp(env, x.name))
        return x.v & ~(pa_fp8_compiled_at(d, x.v) ? drop : PA_FP8_PLAIN);
  if (d == 64) /* plain problems on "pipe-gs-t-wg3-pn" / "-r-pn" (decision 131) */
    return PA_FP8_DEFAULT_D64 | (p->lse.buf ? 0 : PA_FP8_ROWSUM) | (PA_FP8_PLAIN & ~drop);
  return PA_FP8_DEFAULT_D128 | (p->lse.buf ? 0 : PA_FP8_ROWSUM);
}

/* Launches variant v if it is compiled (a tuning-only one needs PA_CUDA_TUNING_VARIANTS);
 * *done says whether it was. bench/gpu/fp8_timeline.cu launches through it too. */
template <int D>
cudaError_t pa_fp8_run(int v, const pa_problem *p, cudaStream_t stream, bool *done) {
  *done = true;
  switch (v) {
#define PA_FP8_CASE(name, x, full)                                      \
  case (x):                                                             \
    if constexpr (((full) || PA_CUDA_TUNING_VARIANTS) && pa_fp8_compiled_at(D, (x)))      \
      return pa_fp8_launch<D, (x)>(p, stream);                                           \
    break;
    PA_FP8_VARIANT_LIST(PA_FP8_CASE)
#undef PA_FP8_CASE
  }
  *done = false;
  return cudaSuccess;
}

template <int D>
cudaError_t pa_fp8_run(const pa_problem *p, cudaStream_t stream) {
  bool done;
  const cudaError_t e = pa_fp8_run<D>(pa_fp8_variant(p), p, stream, &done);
  /* not reached: pa_fp8_variant returns a compiled variant */
  return done ? e : pa_fp8_launch<D, D == 64 ? PA_FP8_DEFAULT_D64 : PA_FP8_DEFAULT_D128>(p, stream);
}

} /* namespace */

int pa_cuda_hopper_fp8_supports(const pa_problem *p, const pa_cuda_device *dev, pa_error *err) {
#define PA_NO(...)                                             \
  do {                                                         \
    if (err) snprintf(err->msg, sizeof err->msg, __VA_ARGS__); \
    return 0;                                                  \
  } while (0)
  if (!PA_CUDA_HOPPER_BUILT)
    PA_NO("the hopper-fp8 kernel is not in this build (POLYATTN_CUDA_ARCHS has no 90, so no "
          "sm_90a code was compiled)");
  if (p->dtype != POLYATTN_DTYPE_FP8_E4M3)
    PA_NO("the hopper-fp8 kernel takes fp8_e4m3 inputs only");
  if (p->pass != PA_PASS_FORWARD) PA_NO("the hopper-fp8 kernel computes the forward only");
  if (dev->cc_major != 9 || dev->cc_minor != 0)
    PA_NO("fp8 attention runs on compute capability 9.0 (Hopper, sm_90a) only; the device is "
          "%d.%d", dev->cc_major, dev->cc_minor);
  if (p->sparsity != POLYATTN_SPARSITY_NONE)
    PA_NO("the hopper-fp8 kernel computes dense attention only (no block masks, AUTO_BLOCK "
          "or 2:4)");
  if (p->head_dim != p->head_dim_v || (p->head_dim != 64 && p->head_dim != 128))
    PA_NO("the hopper-fp8 kernel has head dims 64 and 128 (equal for q/k and v) only; this "
          "problem has %d and %d", p->head_dim, p->head_dim_v);
  if (p->heads_q > 65535 || p->batch > 65535)
    PA_NO("the hopper-fp8 kernel's grid takes at most 65535 heads and batch entries");
  if ((p->varlen ? p->total_k : (int64_t)p->seqlen_k) <= 0)
    PA_NO("the hopper-fp8 kernel needs at least one key row");
  const pa_view *vs[3] = {&p->q, &p->k, &p->v};
  const char *names[3] = {"q", "k", "v"};
  for (int i = 0; i < 3; ++i)
    if ((p->varlen ? 0 : vs[i]->stride_b % 16) || vs[i]->stride_s % 16 || vs[i]->stride_h % 16 ||
        vs[i]->offset % 16)
      PA_NO("the hopper-fp8 kernel needs 16-byte aligned rows: %s's offset and strides must be "
            "multiples of 16 elements", names[i]);
  if (p->o.stride_s % 2 || p->o.stride_h % 2 || p->o.stride_b % 2 || p->o.offset % 4)
    PA_NO("the hopper-fp8 kernel stores out in 4-byte pairs: out's offset must be a multiple of "
          "4 bytes and its strides even");
  const int var = pa_fp8_variant(p);
  const int d = p->head_dim, bk = pa_fp8_bk(var), nwg = pa_fp8_nwg(d, var);
  const int smem = pa_fp8_smem_bytes(d, pa_fp8_stages(var), bk, nwg, (var & PA_FP8_ROWSUM) ? 1 : 0);
  if ((size_t)smem > dev->smem_optin)
    PA_NO("the hopper-fp8 kernel needs %d bytes of shared memory; the device allows %zu", smem,
          dev->smem_optin);
  if (p->q.ptr && p->k.ptr && p->v.ptr) {
    pa_fp8_args a;
    if (!pa_fp8_maps(&a, p, 64 * nwg, bk))
      PA_NO("the hopper-fp8 kernel could not describe q/k/v to the tensor-memory accelerator "
            "(cuTensorMapEncodeTiled refused the strides, or the driver lacks it)");
  }
#undef PA_NO
  return 1;
}

cudaError_t pa_cuda_hopper_fp8_forward(const pa_problem *p, const pa_cuda_device *dev,
                                       cudaStream_t stream) {
  (void)dev;
  if (p->seqlen_q <= 0 || p->batch <= 0 || p->heads_q <= 0) return cudaSuccess;
  return p->head_dim == 64 ? pa_fp8_run<64>(p, stream) : pa_fp8_run<128>(p, stream);
}
