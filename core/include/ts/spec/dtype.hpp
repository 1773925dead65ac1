// Element types known to the spec language. A spec names them by their torch spelling.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace ts::spec {

enum class DType : uint8_t {
  float16,
  bfloat16,
  float32,
  float64,
  float8_e4m3fn,
  float8_e5m2,
  int8,
  int16,
  int32,
  int64,
  uint8,
  bool_,
};
inline constexpr int kNumDTypes = 12;

/// "bfloat16" for DType::bfloat16; the spelling a spec and torch use.
std::string_view dtype_name(DType t) noexcept;
/// Inverse of dtype_name; also accepts the short forms f16, bf16, f32, f64, half, float, bool.
std::optional<DType> parse_dtype(std::string_view name) noexcept;
/// Bytes per element: 2 for float16.
int dtype_size(DType t) noexcept;
/// int8 to int64 and uint8: the dtypes whose values can index.
constexpr bool is_integer(DType t) noexcept {
  return t >= DType::int8 && t <= DType::uint8;
}

/// A set of dtypes, as declared by `DType[float16 | bfloat16]`.
class DTypeSet {
 public:
  constexpr DTypeSet() = default;
  static constexpr DTypeSet all() { return DTypeSet((1u << kNumDTypes) - 1); }
  constexpr void insert(DType t) { bits_ |= 1u << static_cast<unsigned>(t); }
  constexpr bool contains(DType t) const { return bits_ >> static_cast<unsigned>(t) & 1u; }
  constexpr bool empty() const { return bits_ == 0; }
  constexpr uint32_t bits() const { return bits_; }

 private:
  constexpr explicit DTypeSet(uint32_t bits) : bits_(bits) {}
  uint32_t bits_ = 0;
};

}  // namespace ts::spec
