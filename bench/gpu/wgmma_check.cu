/* A standalone check of the Hopper path's building blocks (backends/cuda/hopper_ptx.cuh)
 * against a CPU matmul: one warpgroup loads Q [64 x D], K [128 x D], V [128 x D] with
 * TMA (128-byte swizzle, one mbarrier), then
 *   S = Q . K^T  by wgmma m64n128k16, both operands from shared memory, K-major (SS);
 *   O = P . V    by wgmma m64nDk16, P [64 x 128] from registers, V MN-major (RS,
 *                imm-trans-b = 1): the two products of the forward kernel;
 * for bf16 and fp16 and D = 64 and 128. Prints the max abs error against a double
 * product of the same (rounded) inputs, relative to the largest |ref|, and exits 1 if
 * any case is above 1e-3 (fp32 accumulation of exactly representable products), 2 on
 * a CUDA error, 77 (skip) without an sm_90 device.
 *
 * Build (no libcuda link: the driver's cuTensorMapEncodeTiled comes through the runtime):
 *   nvcc -std=c++17 -O2 -gencode=arch=compute_90a,code=sm_90a -Ibackends/cuda \
 *     bench/gpu/wgmma_check.cu -o build/bin/wgmma_check */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>
#include <cuda_runtime.h>

#include "hopper_ptx.cuh"

#include "cuda_check.h"

struct maps {
  CUtensorMap q, k, v;
};

template <typename T>
__device__ __forceinline__ uint32_t ld_pair(const T *p) {
  return *(const uint32_t *)p;
}

template <typename T, int D>
__global__ void __launch_bounds__(128, 1)
    check_kernel(const __grid_constant__ maps m, const T *pg, float *sg, float *og) {
#if PA_HOPPER_ARCH_OK
  extern __shared__ __align__(1024) unsigned char smem[];
  __shared__ __align__(8) uint64_t bar;
  const uint32_t s_q = (pa_hsmem(smem) + 1023u) & ~1023u;
  const uint32_t s_k = s_q + 64 * D * 2, s_v = s_k + 128 * D * 2;
  const uint32_t b = pa_hsmem(&bar);
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
  if (tid == 0) {
    pa_mbar_init(b, 1);
    pa_mbar_init_fence();
  }
  __syncthreads();
  if (tid == 0) {
    pa_mbar_arrive_expect_tx(b, (64 + 128 + 128) * D * 2);
    for (int x = 0; x < D / 64; ++x) {
      pa_tma_load_4d(s_q + x * 64 * 128, &m.q, b, 64 * x, 0, 0, 0);
      pa_tma_load_4d(s_k + x * 128 * 128, &m.k, b, 64 * x, 0, 0, 0);
      pa_tma_load_4d(s_v + x * 128 * 128, &m.v, b, 64 * x, 0, 0, 0);
    }
  }
  pa_mbar_wait(b, 0);

  float s[16][4];
  pa_wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk) {
    const uint32_t off = (kk % 4) * 32;
    pa_wgmma_ss<T, 128>(s, pa_wgmma_desc(s_q + (kk / 4) * 64 * 128 + off, 16, 1024),
                        pa_wgmma_desc(s_k + (kk / 4) * 128 * 128 + off, 16, 1024), kk > 0);
  }
  pa_wgmma_commit();
  pa_wgmma_wait<0>();
  pa_wgmma_fence_regs(s);
  const int r0 = 16 * warp + g;
  for (int i = 0; i < 16; ++i) {
    const int col = 8 * i + 2 * t;
    sg[r0 * 128 + col] = s[i][0];
    sg[r0 * 128 + col + 1] = s[i][1];
    sg[(r0 + 8) * 128 + col] = s[i][2];
    sg[(r0 + 8) * 128 + col + 1] = s[i][3];
  }

  float o[D / 8][4];
#pragma unroll
  for (int i = 0; i < D / 8; ++i) o[i][0] = o[i][1] = o[i][2] = o[i][3] = 0.0f;
  pa_wgmma_fence_regs(o);
  pa_wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < 8; ++kk) {
    uint32_t af[4]; /* rows r0, r0 + 8; keys 16kk + 2t (+1), + 8 */
    af[0] = ld_pair(pg + r0 * 128 + 16 * kk + 2 * t);
    af[1] = ld_pair(pg + (r0 + 8) * 128 + 16 * kk + 2 * t);
    af[2] = ld_pair(pg + r0 * 128 + 16 * kk + 8 + 2 * t);
    af[3] = ld_pair(pg + (r0 + 8) * 128 + 16 * kk + 8 + 2 * t);
    pa_wgmma_rs_tb<T, D>(o, af, pa_wgmma_desc(s_v + kk * 16 * 128, 128 * 128, 1024), 1);
  }
  pa_wgmma_commit();
  pa_wgmma_wait<0>();
  pa_wgmma_fence_regs(o);
  for (int i = 0; i < D / 8; ++i) {
    const int col = 8 * i + 2 * t;
    og[r0 * D + col] = o[i][0];
    og[r0 * D + col + 1] = o[i][1];
    og[(r0 + 8) * D + col] = o[i][2];
    og[(r0 + 8) * D + col + 1] = o[i][3];
  }
#endif
}

typedef CUresult (*encode_fn)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *,
                              const cuuint64_t *, const cuuint64_t *, const cuuint32_t *,
                              const cuuint32_t *, CUtensorMapInterleave, CUtensorMapSwizzle,
                              CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

static void make_map(encode_fn fn, CUtensorMap *m, void *ptr, int rows, int d, bool bf16) {
  const cuuint64_t dims[4] = {(cuuint64_t)d, (cuuint64_t)rows, 1, 1};
  const cuuint64_t rowb = (cuuint64_t)d * 2;
  const cuuint64_t strides[3] = {rowb, rowb * rows, rowb * rows};
  const cuuint32_t box[4] = {64, (cuuint32_t)rows, 1, 1};
  const cuuint32_t es[4] = {1, 1, 1, 1};
  CUresult r = fn(m, bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 4,
                  ptr, dims, strides, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
                  CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                  CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    fprintf(stderr, "cuTensorMapEncodeTiled: %d\n", (int)r);
    exit(2);
  }
}

static uint16_t to16(float x, bool bf16) {
  if (bf16) {
    __nv_bfloat16 h = __float2bfloat16_rn(x);
    return *(uint16_t *)&h;
  }
  __half h = __float2half_rn(x);
  return *(uint16_t *)&h;
}
static float from16(uint16_t u, bool bf16) {
  if (bf16) return __bfloat162float(*(__nv_bfloat16 *)&u);
  return __half2float(*(__half *)&u);
}

static unsigned long long rng = 0x9E3779B97F4A7C15ull;
static float urand() { /* uniform in [-1, 1) */
  rng = rng * 6364136223846793005ull + 1442695040888963407ull;
  return (float)((rng >> 40) & 0xFFFFFF) / 8388608.0f - 1.0f;
}

template <typename T, int D>
static int run_case(encode_fn fn, bool bf16) {
  const int nq = 64 * D, nk = 128 * D, np = 64 * 128;
  uint16_t *hq = (uint16_t *)malloc(nq * 2), *hk = (uint16_t *)malloc(nk * 2),
           *hv = (uint16_t *)malloc(nk * 2), *hp = (uint16_t *)malloc(np * 2);
  for (int i = 0; i < nq; ++i) hq[i] = to16(urand(), bf16);
  for (int i = 0; i < nk; ++i) hk[i] = to16(urand(), bf16), hv[i] = to16(urand(), bf16);
  for (int i = 0; i < np; ++i) hp[i] = to16(urand() * 0.5f + 0.5f, bf16);
  void *dq, *dk, *dv, *dp;
  float *ds, *dout;
  CK(cudaMalloc(&dq, nq * 2));
  CK(cudaMalloc(&dk, nk * 2));
  CK(cudaMalloc(&dv, nk * 2));
  CK(cudaMalloc(&dp, np * 2));
  CK(cudaMalloc(&ds, 64 * 128 * 4));
  CK(cudaMalloc(&dout, 64 * D * 4));
  CK(cudaMemcpy(dq, hq, nq * 2, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dk, hk, nk * 2, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dv, hv, nk * 2, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dp, hp, np * 2, cudaMemcpyHostToDevice));
  CK(cudaMemset(ds, 0xFF, 64 * 128 * 4)); /* NaN poison: every element must be written */
  CK(cudaMemset(dout, 0xFF, 64 * D * 4));
  maps m;
  make_map(fn, &m.q, dq, 64, D, bf16);
  make_map(fn, &m.k, dk, 128, D, bf16);
  make_map(fn, &m.v, dv, 128, D, bf16);
  const int smem = 1024 + (64 + 256) * D * 2;
  CK(cudaFuncSetAttribute(check_kernel<T, D>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  check_kernel<T, D><<<1, 128, smem>>>(m, (const T *)dp, ds, dout);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  float *hs = (float *)malloc(64 * 128 * 4), *ho = (float *)malloc(64 * D * 4);
  CK(cudaMemcpy(hs, ds, 64 * 128 * 4, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(ho, dout, 64 * D * 4, cudaMemcpyDeviceToHost));
  double es = 0, ms = 0, eo = 0, mo = 0;
  for (int i = 0; i < 64; ++i)
    for (int j = 0; j < 128; ++j) {
      double r = 0;
      for (int x = 0; x < D; ++x)
        r += (double)from16(hq[i * D + x], bf16) * from16(hk[j * D + x], bf16);
      const double e = fabs(hs[i * 128 + j] - r);
      es = e > es || e != e ? e : es; /* NaN sticks */
      ms = fabs(r) > ms ? fabs(r) : ms;
    }
  for (int i = 0; i < 64; ++i)
    for (int x = 0; x < D; ++x) {
      double r = 0;
      for (int j = 0; j < 128; ++j)
        r += (double)from16(hp[i * 128 + j], bf16) * from16(hv[j * D + x], bf16);
      const double e = fabs(ho[i * D + x] - r);
      eo = e > eo || e != e ? e : eo;
      mo = fabs(r) > mo ? fabs(r) : mo;
    }
  const double rs = es / ms, ro = eo / mo;
  const bool ok = rs < 1e-3 && ro < 1e-3; /* NaN compares false: fails */
  printf("%-4s D=%-3d  S=Q.K^T (SS m64n128k16): max err %.3g (rel %.3g)   "
         "O=P.V (RS m64n%dk16, V MN-major): max err %.3g (rel %.3g)   %s\n",
         bf16 ? "bf16" : "f16", D, es, rs, D, eo, ro, ok ? "ok" : "FAIL");
  if (!ok) { /* where: the first few wrong elements of S and O */
    int shown = 0;
    for (int i = 0; i < 64 && shown < 6; ++i)
      for (int j = 0; j < 128 && shown < 6; ++j) {
        double r = 0;
        for (int x = 0; x < D; ++x)
          r += (double)from16(hq[i * D + x], bf16) * from16(hk[j * D + x], bf16);
        if (!(fabs(hs[i * 128 + j] - r) < 1e-3 * ms)) {
          printf("   S[%d][%d] = %g, want %g\n", i, j, hs[i * 128 + j], r);
          ++shown;
        }
      }
    shown = 0;
    for (int i = 0; i < 64 && shown < 6; ++i)
      for (int x = 0; x < D && shown < 6; ++x) {
        double r = 0;
        for (int j = 0; j < 128; ++j)
          r += (double)from16(hp[i * 128 + j], bf16) * from16(hv[j * D + x], bf16);
        if (!(fabs(ho[i * D + x] - r) < 1e-3 * mo)) {
          printf("   O[%d][%d] = %g, want %g\n", i, x, ho[i * D + x], r);
          ++shown;
        }
      }
  }
  cudaFree(dq), cudaFree(dk), cudaFree(dv), cudaFree(dp), cudaFree(ds), cudaFree(dout);
  free(hq), free(hk), free(hv), free(hp), free(hs), free(ho);
  return ok ? 0 : 1;
}

int main(void) {
  int dev = 0;
  cudaDeviceProp prop;
  if (cudaGetDevice(&dev) != cudaSuccess || cudaGetDeviceProperties(&prop, dev) != cudaSuccess ||
      prop.major != 9) {
    printf("SKIP: no compute capability 9.x device\n");
    return 77;
  }
  void *f = nullptr;
  cudaDriverEntryPointQueryResult q;
  CK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault, &q));
  if (q != cudaDriverEntryPointSuccess || !f) {
    printf("cuTensorMapEncodeTiled not found\n");
    return 2;
  }
  encode_fn fn = (encode_fn)f;
  printf("device: %s (cc %d.%d)\n", prop.name, prop.major, prop.minor);
  int bad = 0;
  bad |= run_case<__nv_bfloat16, 64>(fn, true);
  bad |= run_case<__nv_bfloat16, 128>(fn, true);
  bad |= run_case<__half, 64>(fn, false);
  bad |= run_case<__half, 128>(fn, false);
  printf(bad ? "wgmma_check: FAIL\n" : "wgmma_check: all ok\n");
  return bad;
}
