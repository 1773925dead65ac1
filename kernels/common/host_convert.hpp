// Host-side conversions between fp16/bf16 storage and float/double, with no CUDA headers.
// Used by the CPU references and the GPU test harness; round-to-nearest-even like the device's
// __float2half_rn / __float2bfloat16_rn, so a reference rounds its output the way a kernel does.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "common/dtype.hpp"

namespace ts::kernels {

inline float bf16_bits_to_float(std::uint16_t bits) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
}

inline std::uint16_t float_to_bf16_bits(float value) {
  std::uint32_t u = std::bit_cast<std::uint32_t>(value);
  if (std::isnan(value)) return static_cast<std::uint16_t>((u >> 16) | 0x40);  // keep it a NaN
  u += 0x7fff + ((u >> 16) & 1);  // round to nearest, ties to even
  return static_cast<std::uint16_t>(u >> 16);
}

inline float half_bits_to_float(std::uint16_t bits) {
  const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000) << 16;
  const int exponent = (bits >> 10) & 0x1f;
  const std::uint32_t mantissa = bits & 0x3ff;
  float magnitude;
  if (exponent == 0) {
    magnitude = std::ldexp(static_cast<float>(mantissa), -24);  // zero or subnormal
  } else if (exponent == 31) {
    magnitude = mantissa ? NAN : INFINITY;
  } else {
    magnitude = std::ldexp(static_cast<float>(mantissa | 0x400), exponent - 25);
  }
  return std::bit_cast<float>(std::bit_cast<std::uint32_t>(magnitude) | sign);
}

inline std::uint16_t float_to_half_bits(float value) {
  const std::uint32_t u = std::bit_cast<std::uint32_t>(value);
  const std::uint16_t sign = static_cast<std::uint16_t>((u >> 16) & 0x8000);
  const float a = std::fabs(value);
  if (std::isnan(value)) return sign | 0x7e00;
  if (a >= 65520.0f) return sign | 0x7c00;  // rounds to infinity
  if (a < 0x1p-14f) {
    // Subnormal range: the value is a multiple of 2^-24; nearbyint rounds ties to even.
    return sign | static_cast<std::uint16_t>(std::nearbyint(a * 0x1p24f));
  }
  // Normal range: drop 13 mantissa bits with round-to-nearest-even on the float's bits.
  std::uint32_t bits = std::bit_cast<std::uint32_t>(a);
  bits += 0xfff + ((bits >> 13) & 1);
  const std::uint32_t exponent = (bits >> 23) - 127 + 15;
  return sign | static_cast<std::uint16_t>((exponent << 10) | ((bits >> 13) & 0x3ff));
}

/// Element `index` of a buffer of `dtype`, widened to double.
inline double load_element(const void* base, DType dtype, std::int64_t index) {
  switch (dtype) {
    case DType::f16:
      return half_bits_to_float(static_cast<const std::uint16_t*>(base)[index]);
    case DType::bf16:
      return bf16_bits_to_float(static_cast<const std::uint16_t*>(base)[index]);
    case DType::f32:
      return static_cast<const float*>(base)[index];
  }
  return 0.0;
}

/// Rounds `value` to `dtype` (through float) and stores it as element `index`.
inline void store_element(void* base, DType dtype, std::int64_t index, double value) {
  const float f = static_cast<float>(value);
  switch (dtype) {
    case DType::f16:
      static_cast<std::uint16_t*>(base)[index] = float_to_half_bits(f);
      return;
    case DType::bf16:
      static_cast<std::uint16_t*>(base)[index] = float_to_bf16_bits(f);
      return;
    case DType::f32:
      static_cast<float*>(base)[index] = f;
      return;
  }
}

}  // namespace ts::kernels
