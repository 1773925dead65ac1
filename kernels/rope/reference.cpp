// fp64 CPU reference for NeoX RoPE over host pointers (the same Args as the launcher).
#include <cstdint>
#include <vector>

#include "common/host_convert.hpp"
#include "rope/rope.hpp"

namespace ts::kernels {
namespace {

void rotate_heads(const void* in, void* out, std::int64_t heads, std::int64_t token_stride,
                  std::int64_t head_stride, std::int64_t token, const RopeArgs& a,
                  std::int64_t rotary_dim, std::int64_t cache_row_stride) {
  const std::int64_t half = rotary_dim / 2;
  const std::int64_t pos = a.positions[token];
  const bool valid = pos >= 0 && pos < a.max_position;
  std::vector<double> row(static_cast<std::size_t>(a.head_dim));
  for (std::int64_t h = 0; h < heads; ++h) {
    const std::int64_t base = token * token_stride + h * head_stride;
    // Read the whole head before writing: in == out is allowed.
    for (std::int64_t d = 0; d < a.head_dim; ++d)
      row[static_cast<std::size_t>(d)] = load_element(in, a.dtype, base + d);
    for (std::int64_t i = 0; i < half; ++i) {
      const double x1 = row[static_cast<std::size_t>(i)],
                   x2 = row[static_cast<std::size_t>(i + half)];
      double o1 = x1, o2 = x2;
      if (valid) {
        const double c = a.cos[pos * cache_row_stride + i], s = a.sin[pos * cache_row_stride + i];
        o1 = x1 * c - x2 * s;
        o2 = x2 * c + x1 * s;
      }
      store_element(out, a.dtype, base + i, o1);
      store_element(out, a.dtype, base + i + half, o2);
    }
    for (std::int64_t d = rotary_dim; d < a.head_dim; ++d)
      store_element(out, a.dtype, base + d, row[static_cast<std::size_t>(d)]);
  }
}

}  // namespace

void rope_reference(const RopeArgs& a) {
  const std::int64_t rotary_dim = a.rotary_dim == 0 ? a.head_dim : a.rotary_dim;
  const std::int64_t cache_row_stride =
      a.cache_row_stride == 0 ? rotary_dim / 2 : a.cache_row_stride;
  for (std::int64_t t = 0; t < a.tokens; ++t) {
    rotate_heads(a.q, a.q_out, a.q_heads, a.q_token_stride, a.q_head_stride, t, a, rotary_dim,
                 cache_row_stride);
    if (a.k)
      rotate_heads(a.k, a.k_out, a.k_heads, a.k_token_stride, a.k_head_stride, t, a, rotary_dim,
                   cache_row_stride);
  }
}

TS_REGISTER_KERNEL(reference, rope_neox, "RoPENeoXFwdOp",
                   (run_reference<rope_args, rope_reference>), one_config);

}  // namespace ts::kernels
