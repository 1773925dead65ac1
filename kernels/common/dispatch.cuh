// Turns run-time choices (dtype, config index, vectorized or not) into template instantiations.
#pragma once

#include <cuda_runtime_api.h>

#include <type_traits>
#include <utility>

#include "common/dtype.hpp"
#include "common/row_config.hpp"
#include "common/vec.cuh"

namespace ts::kernels {

/// Calls f(T{}) with T the device storage type of `dtype`.
template <class F>
cudaError_t dispatch_dtype(DType dtype, F&& f) {
  switch (dtype) {
    case DType::f16:
      return f(__half{});
    case DType::bf16:
      return f(__nv_bfloat16{});
    case DType::f32:
      return f(float{});
  }
  return cudaErrorInvalidValue;
}

/// Calls f(std::integral_constant<int, I>{}) for config index I = config in [0, kN): one
/// instantiation per config, chosen at run time.
template <int kN, class F>
cudaError_t dispatch_config(int config, F&& f) {
  cudaError_t err = cudaErrorInvalidValue;
  [&]<int... kI>(std::integer_sequence<int, kI...>) {
    ((config == kI ? (err = f(std::integral_constant<int, kI>{}), true) : false) || ...);
  }
  (std::make_integer_sequence<int, kN>{});
  return err;
}

/// dispatch_config over the shared row configs (kRowConfigs).
template <class F>
cudaError_t dispatch_row_config(int config, F&& f) {
  return dispatch_config<kNumRowConfigs>(config, static_cast<F&&>(f));
}

/// The norms' launch dispatch: configs [0, kNumRowConfigs) are row kernels (16-byte vectors
/// when `vectorized`, else scalars); the next kNumPersistentConfigs are persistent kernels that
/// hold whole rows in registers, served only for whole-vector rows that fit (else
/// cudaErrorInvalidValue); the last kNumNormPrefetchConfigs are row kernels kNormPrefetchConfigs
/// that prefetch their weights. Launches through row(T{}, integral_constant<kVec>,
/// integral_constant<kConfig>, bool_constant<kPrefetchWeights>) or persistent(T{},
/// integral_constant<kConfig>).
template <class Row, class Persistent>
cudaError_t dispatch_row_kernel(DType dtype, int config, bool vectorized, std::int64_t cols,
                                Row&& row, Persistent&& persistent) {
  const cudaError_t err = dispatch_dtype(dtype, [&](auto tag) {
    constexpr int kVec = 16 / sizeof(tag);
    auto row_kernel = [&](auto cfg, auto prefetch) {
      if (vectorized)
        row(tag, std::integral_constant<int, kVec>{}, cfg, prefetch);
      else
        row(tag, std::integral_constant<int, 1>{}, cfg, prefetch);
      return cudaSuccess;
    };
    if (config >= kNumRowConfigs + kNumPersistentConfigs) {
      return dispatch_config<kNumNormPrefetchConfigs>(
          config - kNumRowConfigs - kNumPersistentConfigs, [&](auto i) {
            return row_kernel(std::integral_constant<int, kNormPrefetchConfigs[i.value]>{},
                              std::true_type{});
          });
    }
    if (config >= kNumRowConfigs) {
      if (!vectorized || cols % kVec != 0 ||
          cols / kVec > kPersistentConfigs[config - kNumRowConfigs].capacity_vecs())
        return cudaErrorInvalidValue;
      return dispatch_config<kNumPersistentConfigs>(config - kNumRowConfigs, [&](auto cfg) {
        persistent(tag, cfg);
        return cudaSuccess;
      });
    }
    return dispatch_row_config(config,
                               [&](auto cfg) { return row_kernel(cfg, std::false_type{}); });
  });
  return err != cudaSuccess ? err : cudaGetLastError();
}

/// Multiprocessor count of the current device (0 if it cannot be read).
inline int current_sm_count() {
  int device = 0, sms = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return 0;
  if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) return 0;
  return sms;
}

/// Launches a persistent kernel (one that walks rows r, r + gridDim.x, ...): as many CTAs as
/// can be resident at once, at most one per row. The occupancy is read once per kernel.
template <auto kKernel, int kThreads, class Params>
void launch_persistent(const Params& p, std::int64_t rows, cudaStream_t stream) {
  static const int per_sm = [] {
    int n = 0;
    return cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kKernel, kThreads, 0) == cudaSuccess
               ? n
               : 1;
  }();
  const int sms = current_sm_count();
  const std::int64_t resident = std::int64_t{per_sm > 0 ? per_sm : 1} * (sms > 0 ? sms : 1);
  kKernel<<<static_cast<unsigned>(rows < resident ? rows : resident), kThreads, 0, stream>>>(p);
}

}  // namespace ts::kernels
