// Turns run-time choices (dtype, config index, vectorized or not) into template instantiations.
#pragma once

#include <cuda_runtime_api.h>

#include <type_traits>

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

/// Calls f(std::integral_constant<int, I>{}) for config index I in [0, kNumRowConfigs).
template <class F>
cudaError_t dispatch_row_config(int config, F&& f) {
  static_assert(kNumRowConfigs == 8, "add a case below for every entry of kRowConfigs");
  switch (config) {
    case 0:
      return f(std::integral_constant<int, 0>{});
    case 1:
      return f(std::integral_constant<int, 1>{});
    case 2:
      return f(std::integral_constant<int, 2>{});
    case 3:
      return f(std::integral_constant<int, 3>{});
    case 4:
      return f(std::integral_constant<int, 4>{});
    case 5:
      return f(std::integral_constant<int, 5>{});
    case 6:
      return f(std::integral_constant<int, 6>{});
    case 7:
      return f(std::integral_constant<int, 7>{});
  }
  return cudaErrorInvalidValue;
}

/// Multiprocessor count of the current device (0 if it cannot be read).
inline int current_sm_count() {
  int device = 0, sms = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return 0;
  if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) return 0;
  return sms;
}

}  // namespace ts::kernels
