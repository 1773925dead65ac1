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

// kVec cos (or sin) values at p: LDG.128s when kVecCs (p 16-byte aligned), else scalar loads.
// On the H200 the 16 scalar loads per item of the bf16 path were most of its load instructions.
template <int kVec, bool kVecCs>
__device__ __forceinline__ void load_cs(const float* p, float (&out)[kVec]) {
  if constexpr (kVecCs) {
    static_assert(kVec % 4 == 0);
#pragma unroll
    for (int e = 0; e < kVec; e += 4) {
      const float4 v = __ldg(reinterpret_cast<const float4*>(p + e));
      out[e] = v.x, out[e + 1] = v.y, out[e + 2] = v.z, out[e + 3] = v.w;
    }
  } else {
#pragma unroll
    for (int e = 0; e < kVec; ++e) out[e] = __ldg(p + e);
  }
}

// One rotation vector: kVec dims of the first rotary half at `d` and the same dims of the second.
template <class T, int kVec, bool kVecCs>
__device__ __forceinline__ void rotate_vec(const Vec<T, kVec>& x1, const Vec<T, kVec>& x2,
                                           const float* cos, const float* sin, bool valid, T* out,
                                           std::int64_t half) {
  Vec<T, kVec> o1, o2;
  if (valid) {
    float c[kVec], s[kVec];
    load_cs<kVec, kVecCs>(cos, c);
    load_cs<kVec, kVecCs>(sin, s);
#pragma unroll
    for (int e = 0; e < kVec; ++e) {
      const float a = to_float(x1.v[e]), b = to_float(x2.v[e]);
      o1.v[e] = from_float<T>(a * c[e] - b * s[e]);
      o2.v[e] = from_float<T>(b * c[e] + a * s[e]);
    }
  } else {
    o1 = x1;
    o2 = x2;
  }
  store_vec<T, kVec>(out, o1);
  store_vec<T, kVec>(out + half, o2);
}

// Where item `item` of token `token` lives: q heads first, then k heads.
template <class T>
__device__ __forceinline__ std::int64_t item_offset(const RopeParams<T>& p, std::int64_t token,
                                                    std::int64_t head, bool* is_q) {
  *is_q = head < p.q_heads;
  return *is_q ? token * p.q_token_stride + head * p.q_head_stride
               : token * p.k_token_stride + (head - p.q_heads) * p.k_head_stride;
}

template <class T, int kVec, int kThreads, bool kVecCs>
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
    const std::int64_t head = item / vecs_per_head;
    const std::int64_t d = (item - head * vecs_per_head) * kVec;
    bool is_q;
    const std::int64_t off = item_offset(p, token, head, &is_q) + d;
    const T* in = (is_q ? p.q : p.k) + off;
    T* out = (is_q ? p.q_out : p.k_out) + off;
    const std::int64_t row = valid ? pos * p.cache_row_stride + d : 0;
    rotate_vec<T, kVec, kVecCs>(load_vec<T, kVec>(in), load_vec<T, kVec>(in + half), p.cos + row,
                                p.sin + row, valid, out, half);
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

// Flattened variant for many tokens: the (token, item) space is one index range, each thread
// does kUnroll items kThreads apart and issues all their loads before any store, so each thread
// keeps 2 * kUnroll 16-byte loads in flight (the per-token grid above keeps only two, which
// leaves HBM under-subscribed). Rotation only: out of place with pass-through dims uses the
// per-token kernel.
template <class T, int kVec, int kThreads, int kUnroll, bool kVecCs>
__global__ void __launch_bounds__(kThreads)
    rope_flat_kernel(const RopeParams<T> p, std::int64_t items_per_token, std::int64_t total) {
  const std::int64_t half = p.rotary_dim / 2;
  const std::int64_t vecs_per_head = half / kVec;
  const std::int64_t base =
      static_cast<std::int64_t>(blockIdx.x) * kThreads * kUnroll + threadIdx.x;
  Vec<T, kVec> x1[kUnroll], x2[kUnroll];
  std::int64_t off[kUnroll], row[kUnroll];
  bool is_q[kUnroll], valid[kUnroll];
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    const std::int64_t g = base + static_cast<std::int64_t>(u) * kThreads;
    if (g >= total) continue;
    const std::int64_t token = g / items_per_token;
    const std::int64_t item = g - token * items_per_token;
    const std::int64_t head = item / vecs_per_head;
    const std::int64_t d = (item - head * vecs_per_head) * kVec;
    off[u] = item_offset(p, token, head, &is_q[u]) + d;
    const T* in = (is_q[u] ? p.q : p.k) + off[u];
    x1[u] = load_vec<T, kVec>(in);
    x2[u] = load_vec<T, kVec>(in + half);
    const std::int64_t pos = p.positions[token];
    valid[u] = pos >= 0 && pos < p.max_position;
    row[u] = valid[u] ? pos * p.cache_row_stride + d : 0;
  }
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    const std::int64_t g = base + static_cast<std::int64_t>(u) * kThreads;
    if (g >= total) continue;
    rotate_vec<T, kVec, kVecCs>(x1[u], x2[u], p.cos + row[u], p.sin + row[u], valid[u],
                                (is_q[u] ? p.q_out : p.k_out) + off[u], half);
  }
}

}  // namespace
}  // namespace ts::kernels
