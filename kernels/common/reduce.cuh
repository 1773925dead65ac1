// Warp and row-group reductions in fp32. A row group is `kWarps` consecutive warps of one CTA;
// with kWarps == 1 it is a register-only shuffle reduction with no shared memory and no barrier.
#pragma once

#include <cmath>

namespace ts::kernels {

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1)
    v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

/// Sum over the kWarps warps of a row group; every thread of the group gets the total.
/// `scratch` holds kWarps floats private to this group. With kWarps > 1 the whole CTA must call
/// it (it has __syncthreads), so such kernels put exactly one row group in a CTA.
template <int kWarps>
__device__ __forceinline__ float group_sum(float v, float* scratch) {
  v = warp_sum(v);
  if constexpr (kWarps == 1) {
    return v;
  } else {
    const int warp = (threadIdx.x / 32) % kWarps;
    if (threadIdx.x % 32 == 0) scratch[warp] = v;
    __syncthreads();
    float total = 0.f;
#pragma unroll
    for (int i = 0; i < kWarps; ++i) total += scratch[i];
    __syncthreads();  // scratch may be reused by the next reduction
    return total;
  }
}

template <int kWarps>
__device__ __forceinline__ float group_max(float v, float* scratch) {
  v = warp_max(v);
  if constexpr (kWarps == 1) {
    return v;
  } else {
    const int warp = (threadIdx.x / 32) % kWarps;
    if (threadIdx.x % 32 == 0) scratch[warp] = v;
    __syncthreads();
    float total = -INFINITY;
#pragma unroll
    for (int i = 0; i < kWarps; ++i) total = fmaxf(total, scratch[i]);
    __syncthreads();
    return total;
  }
}

}  // namespace ts::kernels
