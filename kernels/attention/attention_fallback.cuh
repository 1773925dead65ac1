// Fallback attention for operands the wgmma kernel cannot take (pointers not 16-byte aligned,
// strides not multiples of 8): one warp per query row, keys visited one at a time with an online
// softmax in fp32; each lane owns D / 32 of the head dims. Correct for any strides, slow.
#pragma once

#include <cmath>
#include <cstdint>

#include "common/reduce.cuh"
#include "common/vec.cuh"

namespace ts::kernels::attn {

struct AttnFallbackParams {
  const void* q;
  const void* k;
  const void* v;
  void* o;
  std::int64_t q_stride[4], k_stride[4], v_stride[4], o_stride[4];
  std::int64_t B, Hq, Sq, Skv, group;
  float scale;
  bool causal;
};

constexpr int kFallbackWarps = 4;

template <class T, int kHeadDim>
__global__ void __launch_bounds__(kFallbackWarps * 32)
    attention_fallback_kernel(const AttnFallbackParams p) {
  constexpr int kPerLane = kHeadDim / 32;
  const int lane = threadIdx.x % 32;
  const std::int64_t row =
      static_cast<std::int64_t>(blockIdx.x) * kFallbackWarps + threadIdx.x / 32;
  if (row >= p.Sq) return;
  const std::int64_t h = blockIdx.y, b = blockIdx.z, g = h / p.group;
  const T* q =
      static_cast<const T*>(p.q) + b * p.q_stride[0] + h * p.q_stride[1] + row * p.q_stride[2];
  const T* k = static_cast<const T*>(p.k) + b * p.k_stride[0] + g * p.k_stride[1];
  const T* v = static_cast<const T*>(p.v) + b * p.v_stride[0] + g * p.v_stride[1];
  T* o = static_cast<T*>(p.o) + b * p.o_stride[0] + h * p.o_stride[1] + row * p.o_stride[2];

  float qr[kPerLane], acc[kPerLane];
#pragma unroll
  for (int i = 0; i < kPerLane; ++i) {
    qr[i] = to_float(q[(lane + 32 * i) * p.q_stride[3]]) * p.scale;
    acc[i] = 0.f;
  }
  const std::int64_t keys = p.causal ? min(p.Skv, row + 1) : p.Skv;
  float mx = -INFINITY, sum = 0.f;
  for (std::int64_t j = 0; j < keys; ++j) {
    float dot = 0.f;
#pragma unroll
    for (int i = 0; i < kPerLane; ++i)
      dot = fmaf(qr[i], to_float(k[j * p.k_stride[2] + (lane + 32 * i) * p.k_stride[3]]), dot);
    dot = warp_sum(dot);
    const float new_mx = fmaxf(mx, dot);
    const float correction = expf(mx - new_mx), e = expf(dot - new_mx);
    sum = sum * correction + e;
#pragma unroll
    for (int i = 0; i < kPerLane; ++i)
      acc[i] = fmaf(e, to_float(v[j * p.v_stride[2] + (lane + 32 * i) * p.v_stride[3]]),
                    acc[i] * correction);
    mx = new_mx;
  }
  const float inv = sum > 0.f ? 1.f / sum : 0.f;
#pragma unroll
  for (int i = 0; i < kPerLane; ++i)
    o[(lane + 32 * i) * p.o_stride[3]] = from_float<T>(acc[i] * inv);
}

}  // namespace ts::kernels::attn
