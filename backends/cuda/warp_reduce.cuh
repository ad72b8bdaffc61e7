/* Butterfly reductions over a full warp: every lane ends with the same value, and
 * the order of the additions is fixed, so the result is deterministic. */
#ifndef PA_CUDA_WARP_REDUCE_CUH
#define PA_CUDA_WARP_REDUCE_CUH

__device__ __forceinline__ float pa_warp_max(float x) {
  for (int o = 16; o > 0; o >>= 1) x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, o));
  return x;
}

__device__ __forceinline__ float pa_warp_sum(float x) {
  for (int o = 16; o > 0; o >>= 1) x += __shfl_xor_sync(0xffffffffu, x, o);
  return x;
}

#endif
