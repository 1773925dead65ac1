// Launcher for NeoX RoPE: validates Args, picks vector width and CTA size, launches.
#include "rope/rope.hpp"

#include "common/dispatch.cuh"
#include "rope/rope.cuh"

namespace ts::kernels {
namespace {

constexpr int kRopeThreads[] = {64, 128, 256};
constexpr int kNumRopeConfigs = sizeof(kRopeThreads) / sizeof(kRopeThreads[0]);

template <class T, int kVec, int kThreads>
void launch_rope(const RopeArgs& a, std::int64_t rotary_dim, std::int64_t cache_row_stride,
                 cudaStream_t stream) {
  const RopeParams<T> p{static_cast<const T*>(a.q),
                        static_cast<T*>(a.q_out),
                        static_cast<const T*>(a.k),
                        static_cast<T*>(a.k_out),
                        a.positions,
                        a.cos,
                        a.sin,
                        a.tokens,
                        a.q_heads,
                        a.k_heads,
                        a.head_dim,
                        rotary_dim,
                        a.q_token_stride,
                        a.q_head_stride,
                        a.k_token_stride,
                        a.k_head_stride,
                        a.max_position,
                        cache_row_stride};
  const std::int64_t heads = a.q_heads + (a.k ? a.k_heads : 0);
  const std::int64_t items = heads * (rotary_dim / 2 / kVec);
  const std::int64_t chunks = items > 0 ? (items + kThreads - 1) / kThreads : 1;
  rope_kernel<T, kVec, kThreads>
      <<<dim3(static_cast<unsigned>(a.tokens), static_cast<unsigned>(chunks)), kThreads, 0,
         stream>>>(p);
}

bool aligned_elems(std::int64_t stride, int vec) {
  return stride % vec == 0;
}

}  // namespace

int rope_num_configs() {
  return kNumRopeConfigs;
}

cudaError_t rope_launch(const RopeArgs& a, cudaStream_t stream) {
  const std::int64_t rotary_dim = a.rotary_dim == 0 ? a.head_dim : a.rotary_dim;
  const std::int64_t cache_row_stride =
      a.cache_row_stride == 0 ? rotary_dim / 2 : a.cache_row_stride;
  if (a.tokens < 0 || a.q_heads < 0 || a.k_heads < 0 || a.head_dim <= 0)
    return cudaErrorInvalidValue;
  if (rotary_dim <= 0 || rotary_dim % 2 != 0 || rotary_dim > a.head_dim)
    return cudaErrorInvalidValue;
  if (cache_row_stride < rotary_dim / 2 || a.max_position < 0) return cudaErrorInvalidValue;
  if (a.config < -1 || a.config >= kNumRopeConfigs) return cudaErrorInvalidValue;
  if (a.tokens == 0) return cudaSuccess;
  if (a.tokens > (std::int64_t{1} << 31) - 1) return cudaErrorInvalidValue;
  if (!a.q || !a.q_out || !a.positions || !a.cos || !a.sin) return cudaErrorInvalidValue;
  if (a.k && !a.k_out) return cudaErrorInvalidValue;

  const int vec = vec_width(a.dtype);
  const bool k_ok =
      !a.k || (is_aligned16(a.k) && is_aligned16(a.k_out) && aligned_elems(a.k_token_stride, vec) &&
               aligned_elems(a.k_head_stride, vec));
  const bool vectorized = (rotary_dim / 2) % vec == 0 && is_aligned16(a.q) &&
                          is_aligned16(a.q_out) && aligned_elems(a.q_token_stride, vec) &&
                          aligned_elems(a.q_head_stride, vec) && k_ok;
  const std::int64_t heads = a.q_heads + (a.k ? a.k_heads : 0);
  const std::int64_t items = heads * (rotary_dim / 2 / (vectorized ? vec : 1));
  if ((items + 63) / 64 > 65535) return cudaErrorInvalidValue;  // grid.y limit
  int config = a.config;
  if (config < 0) config = items <= 64 || a.tokens < 2 * current_sm_count() ? 0 : 1;
  if ((items + kRopeThreads[config] - 1) / kRopeThreads[config] > 65535)
    return cudaErrorInvalidValue;

  const cudaError_t err = dispatch_dtype(a.dtype, [&](auto tag) {
    using T = decltype(tag);
    auto run = [&](auto threads) {
      if (vectorized)
        launch_rope<T, 16 / sizeof(T), threads.value>(a, rotary_dim, cache_row_stride, stream);
      else
        launch_rope<T, 1, threads.value>(a, rotary_dim, cache_row_stride, stream);
      return cudaSuccess;
    };
    switch (config) {
      case 0:
        return run(std::integral_constant<int, 64>{});
      case 1:
        return run(std::integral_constant<int, 128>{});
      case 2:
        return run(std::integral_constant<int, 256>{});
    }
    return cudaErrorInvalidValue;
  });
  if (err != cudaSuccess) return err;
  return cudaGetLastError();
}

}  // namespace ts::kernels
