#include "ts/spec/dtype.hpp"

#include <array>
#include <utility>

namespace ts::spec {
namespace {

struct DTypeRow {
  DType type;
  std::string_view name;
  int size;
};

constexpr std::array<DTypeRow, kNumDTypes> kRows = {{
    {DType::float16, "float16", 2},
    {DType::bfloat16, "bfloat16", 2},
    {DType::float32, "float32", 4},
    {DType::float64, "float64", 8},
    {DType::float8_e4m3fn, "float8_e4m3fn", 1},
    {DType::float8_e5m2, "float8_e5m2", 1},
    {DType::int8, "int8", 1},
    {DType::int16, "int16", 2},
    {DType::int32, "int32", 4},
    {DType::int64, "int64", 8},
    {DType::uint8, "uint8", 1},
    {DType::bool_, "bool", 1},
}};

constexpr std::array<std::pair<std::string_view, DType>, 7> kAliases = {{
    {"f16", DType::float16},
    {"half", DType::float16},
    {"bf16", DType::bfloat16},
    {"f32", DType::float32},
    {"float", DType::float32},
    {"f64", DType::float64},
    {"double", DType::float64},
}};

}  // namespace

std::string_view dtype_name(DType t) noexcept {
  return kRows[static_cast<size_t>(t)].name;
}

int dtype_size(DType t) noexcept {
  return kRows[static_cast<size_t>(t)].size;
}

std::optional<DType> parse_dtype(std::string_view name) noexcept {
  for (const auto& row : kRows)
    if (row.name == name) return row.type;
  for (const auto& [alias, type] : kAliases)
    if (alias == name) return type;
  return std::nullopt;
}

}  // namespace ts::spec
