// Element types the memory-bound kernels accept, shared by launchers, references and bindings.
// Plain C++ (no CUDA): the nanobind extension and the spec glue include it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ts::kernels {

/// Storage type of a tensor's elements. Arithmetic is always fp32 on the device.
enum class DType : int { f16 = 0, bf16 = 1, f32 = 2 };

constexpr std::size_t dtype_size(DType dtype) {
  return dtype == DType::f32 ? 4 : 2;
}

constexpr const char* dtype_name(DType dtype) {
  switch (dtype) {
    case DType::f16:
      return "f16";
    case DType::bf16:
      return "bf16";
    case DType::f32:
      return "f32";
  }
  return "?";
}

/// Elements in one 16-byte vector access: 8 for f16/bf16, 4 for f32.
constexpr int vec_width(DType dtype) {
  return static_cast<int>(16 / dtype_size(dtype));
}

}  // namespace ts::kernels
