// NeoX-style rotary embedding (vLLM's rotary_embedding with is_neox_style = true):
//
//   for token t, head h, i in [0, rotary_dim / 2), with p = positions[t], half = rotary_dim / 2:
//     x1 = x[t, h, i], x2 = x[t, h, i + half], c = cos[p, i], s = sin[p, i]
//     out[t, h, i]        = x1 * c - x2 * s
//     out[t, h, i + half] = x2 * c + x1 * s
//   dims [rotary_dim, head_dim) are passed through.
//
// q [tokens, q_heads, head_dim] and k [tokens, k_heads, head_dim] with token and head strides
// in elements (last dim contiguous). In place when q_out == q (and k_out == k), like vLLM;
// out of place otherwise (the pass-through dims are then copied). k may be nullptr (q only).
// cos/sin are fp32 rows of `cache_row_stride` elements per position, rotary_dim / 2 used:
// separate [max_position, rotary_dim / 2] tables, or vLLM's cos_sin_cache [max_position,
// rotary_dim] with sin = cos + rotary_dim / 2 and cache_row_stride = rotary_dim.
// A position outside [0, max_position) leaves its token unrotated (copied when out of place):
// the launcher cannot read device positions without a sync, and must never fault on them.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "common/dtype.hpp"
#include "common/kernel_call.hpp"

namespace ts::kernels {

struct RopeArgs {
  const void* q = nullptr;
  void* q_out = nullptr;                    // == q: in place
  const void* k = nullptr;                  // nullptr: rotate q only
  void* k_out = nullptr;                    // == k: in place
  const std::int64_t* positions = nullptr;  // [tokens], device memory
  const float* cos = nullptr;               // [max_position, >= rotary_dim / 2]
  const float* sin = nullptr;
  std::int64_t tokens = 0;
  std::int64_t q_heads = 0;
  std::int64_t k_heads = 0;
  std::int64_t head_dim = 0;
  std::int64_t rotary_dim = 0;                         // 0: head_dim; must be even and <= head_dim
  std::int64_t q_token_stride = 0, q_head_stride = 0;  // elements, for q and q_out
  std::int64_t k_token_stride = 0, k_head_stride = 0;  // elements, for k and k_out
  std::int64_t max_position = 0;
  std::int64_t cache_row_stride = 0;  // elements between positions in cos/sin; 0: rotary_dim / 2
  DType dtype = DType::bf16;
  int config = -1;  // index into rope configs; -1: heuristic
};

cudaError_t rope_launch(const RopeArgs& args, cudaStream_t stream);
int rope_num_configs();
void rope_reference(const RopeArgs& args);

/// The spec's call (inputs positions [S] int64, q [S, Hq, D], k [S, Hk, D], both rotated in
/// place, cos_sin_cache [P, R] fp32 whose rows hold R/2 cos values then R/2 sin values) as Args.
inline std::optional<RopeArgs> rope_args(const KernelCall& c) {
  if (!has_arity(c, 4, 0, 0)) return std::nullopt;
  const TensorArg &positions = c.inputs[0], &q = c.inputs[1], &k = c.inputs[2],
                  &cache = c.inputs[3];
  const auto dtype = float_dtype(q);
  if (q.rank != 3 || k.rank != 3 || cache.rank != 2 || !dtype) return std::nullopt;
  RopeArgs a;
  a.positions = positions.ptr<const std::int64_t>();
  a.q = q.data;
  a.q_out = q.data;
  a.k = k.data;
  a.k_out = k.data;
  a.cos = cache.ptr<const float>();
  a.sin = cache.present() ? cache.ptr<const float>() + cache.size(1) / 2 : nullptr;
  a.tokens = q.size(0);
  a.q_heads = q.size(1);
  a.k_heads = k.size(1);
  a.head_dim = q.size(2);
  a.rotary_dim = cache.size(1);
  a.q_token_stride = q.stride(0);
  a.q_head_stride = q.stride(1);
  a.k_token_stride = k.stride(0);
  a.k_head_stride = k.stride(1);
  a.max_position = cache.size(0);
  a.cache_row_stride = cache.size(0) > 1 ? cache.stride(0) : cache.size(1);
  a.dtype = *dtype;
  a.config = c.config;
  return a;
}

}  // namespace ts::kernels
