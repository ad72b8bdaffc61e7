/* Butterfly reductions over a logical warp of Width lanes: every lane of the group
 * ends with the same value, and the order of the additions is fixed, so the result
 * is deterministic. Width is the kernel's own warp (its kWarpSize), a power of two
 * no wider than the hardware's: 32 on NVIDIA; on AMD a 32-lane group is a whole
 * RDNA wave32 or one half of a CDNA wavefront of 64, and the shuffles stay inside
 * it (backends/hip/hip_vendor.h). The default, 32, is the warp of every kernel in
 * backends/cuda; the kernels the HIP module shares pass it explicitly. */
#ifndef PA_CUDA_WARP_REDUCE_CUH
#define PA_CUDA_WARP_REDUCE_CUH

template <int Width = 32>
__device__ __forceinline__ float pa_warp_max(float x) {
  static_assert(Width >= 2 && (Width & (Width - 1)) == 0, "a power-of-two lane group");
  for (int o = Width / 2; o > 0; o >>= 1) x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, o, Width));
  return x;
}

template <int Width = 32>
__device__ __forceinline__ float pa_warp_sum(float x) {
  static_assert(Width >= 2 && (Width & (Width - 1)) == 0, "a power-of-two lane group");
  for (int o = Width / 2; o > 0; o >>= 1) x += __shfl_xor_sync(0xffffffffu, x, o, Width);
  return x;
}

/* The same over only the lanes whose index differs from this lane's in the bits of
 * Mask: the lanes of a fragment that hold one matrix row. mma.sync's quad is Mask 3
 * in a 32-lane warp (xor 1, then 2); MFMA 32x32's lane pair l, l + 32 is Mask 32 in
 * a 64-lane wavefront. Width is the group the shuffles address, the kernel's warp. */
template <int Width, int Mask>
__device__ __forceinline__ float pa_lanes_max(float x) {
  static_assert(Mask > 0 && Mask < Width, "lane bits inside the group");
#pragma unroll
  for (int o = 1; o < Width; o <<= 1)
    if (Mask & o) x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, o, Width));
  return x;
}

template <int Width, int Mask>
__device__ __forceinline__ float pa_lanes_sum(float x) {
  static_assert(Mask > 0 && Mask < Width, "lane bits inside the group");
#pragma unroll
  for (int o = 1; o < Width; o <<= 1)
    if (Mask & o) x += __shfl_xor_sync(0xffffffffu, x, o, Width);
  return x;
}

#endif
