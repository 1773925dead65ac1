// NeoX RoPE kernel. Grid (tokens, item chunks). The items of a token are its rotation vectors,
// q heads first then k heads: item = head * (half / kVec) + v, covering dims
// [v * kVec, (v + 1) * kVec) of the first half and the same dims of the second half. Each thread
// does one item: two 16-byte loads of x, kVec cos and sin floats (L1/L2-resident, shared by all
// heads of the token), two 16-byte stores.
#pragma once

#include <cstdint>

#include "common/vec.cuh"

namespace ts::kernels {
namespace {

template <class T>
struct RopeParams {
  const T* q;
  T* q_out;
  const T* k;
  T* k_out;
  const std::int64_t* positions;
  const float* cos;
  const float* sin;
  std::int64_t tokens, q_heads, k_heads, head_dim, rotary_dim;
  std::int64_t q_token_stride, q_head_stride, k_token_stride, k_head_stride;
  std::int64_t max_position, cache_row_stride;
};

template <class T, int kVec, int kThreads>
__global__ void __launch_bounds__(kThreads) rope_kernel(const RopeParams<T> p) {
  const std::int64_t token = blockIdx.x;
  const std::int64_t half = p.rotary_dim / 2;
  const std::int64_t vecs_per_head = half / kVec;
  const std::int64_t k_heads = p.k ? p.k_heads : 0;
  const std::int64_t items = (p.q_heads + k_heads) * vecs_per_head;
  const std::int64_t pos = p.positions[token];
  const bool valid = pos >= 0 && pos < p.max_position;

  const std::int64_t item = static_cast<std::int64_t>(blockIdx.y) * kThreads + threadIdx.x;
  if (item < items) {
    std::int64_t head = item / vecs_per_head;
    const std::int64_t d = (item - head * vecs_per_head) * kVec;
    const T* in;
    T* out;
    if (head < p.q_heads) {
      const std::int64_t off = token * p.q_token_stride + head * p.q_head_stride;
      in = p.q + off;
      out = p.q_out + off;
    } else {
      head -= p.q_heads;
      const std::int64_t off = token * p.k_token_stride + head * p.k_head_stride;
      in = p.k + off;
      out = p.k_out + off;
    }
    const Vec<T, kVec> x1 = load_vec<T, kVec>(in + d);
    const Vec<T, kVec> x2 = load_vec<T, kVec>(in + d + half);
    Vec<T, kVec> o1, o2;
    if (valid) {
      const float* cos = p.cos + pos * p.cache_row_stride + d;
      const float* sin = p.sin + pos * p.cache_row_stride + d;
#pragma unroll
      for (int e = 0; e < kVec; ++e) {
        const float c = __ldg(cos + e), s = __ldg(sin + e);
        const float a = to_float(x1.v[e]), b = to_float(x2.v[e]);
        o1.v[e] = from_float<T>(a * c - b * s);
        o2.v[e] = from_float<T>(b * c + a * s);
      }
    } else {
      o1 = x1;
      o2 = x2;
    }
    store_vec<T, kVec>(out + d, o1);
    store_vec<T, kVec>(out + d + half, o2);
  }

  // Out of place: copy the pass-through dims [rotary_dim, head_dim) of every head.
  const std::int64_t pass = p.head_dim - p.rotary_dim;
  const bool in_place = p.q_out == p.q && (!p.k || p.k_out == p.k);
  if (pass > 0 && !in_place && blockIdx.y == 0) {
    for (std::int64_t e = threadIdx.x; e < (p.q_heads + k_heads) * pass; e += kThreads) {
      std::int64_t head = e / pass;
      const std::int64_t d = p.rotary_dim + (e - head * pass);
      if (head < p.q_heads) {
        const std::int64_t off = token * p.q_token_stride + head * p.q_head_stride + d;
        p.q_out[off] = p.q[off];
      } else {
        head -= p.q_heads;
        const std::int64_t off = token * p.k_token_stride + head * p.k_head_stride + d;
        p.k_out[off] = p.k[off];
      }
    }
  }
}

}  // namespace
}  // namespace ts::kernels
