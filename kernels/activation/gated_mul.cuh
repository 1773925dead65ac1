// Gated-multiply kernels: a pure stream (read 2 vectors, write 1). CTA (bx, by) covers the column
// chunk bx of kThreads * kVecsPerThread vectors, for rows by, by + gridDim.y, ...; each thread
// issues all kVecsPerThread pairs of loads before its first store. kVec == 1 is the fallback
// for unaligned pointers/strides or cols not a multiple of the vector width (the up half of
// a row then starts off a 16-byte boundary).
#pragma once

#include <cstdint>

#include "activation/gated_mul.hpp"
#include "common/fast_math.cuh"
#include "common/vec.cuh"

namespace ts::kernels {
namespace {

template <class T>
struct GatedMulParams {
  const T* x;
  T* y;
  std::int64_t rows, cols, x_row_stride, y_row_stride;
};

// act(gate) * up in fp32, one function per GatedActivation.
template <GatedActivation kAct>
__device__ __forceinline__ float gated_times(float gate, float up);

template <>
__device__ __forceinline__ float gated_times<GatedActivation::silu>(float gate, float up) {
  // silu(g) = g / (1 + e^-g) = g / (1 + 2^(-g log2 e)): one MUFU.EX2 and an approximate
  // division (reciprocal and multiply, 2 ulp) where the IEEE one takes about ten instructions; at
  // bf16 16384 x 14336 the exact pair cost about as long as the HBM traffic. For g < -87 the
  // denominator passes 2^126 and __fdividef returns 0, as silu(g) (below 1e-36) rounds anyway.
  return __fdividef(gate, 1.f + exp2_ftz(-gate * 1.4426950408889634f)) * up;
}

template <>
__device__ __forceinline__ float gated_times<GatedActivation::gelu_tanh>(float gate, float up) {
  // 0.5 g (1 + tanh(u)) = g / (1 + e^(-2u)): the logistic form has no cancellation where tanh
  // nears -1, and costs what silu does (one MUFU.EX2, an approximate division) plus the cubic.
  constexpr float kTwoSqrt2OverPiLog2e = 2.f * 0.7978845608028654f * 1.4426950408889634f;
  const float u = gate * fmaf(0.044715f * gate, gate, 1.f);
  return __fdividef(gate, 1.f + exp2_ftz(-kTwoSqrt2OverPiLog2e * u)) * up;
}

template <GatedActivation kAct, class T, int kVec>
__device__ __forceinline__ Vec<T, kVec> gated_times(const Vec<T, kVec>& gate,
                                                    const Vec<T, kVec>& up) {
  Vec<T, kVec> out;
#pragma unroll
  for (int e = 0; e < kVec; ++e)
    out.v[e] = from_float<T>(gated_times<kAct>(to_float(gate.v[e]), to_float(up.v[e])));
  return out;
}

template <GatedActivation kAct, class T, int kVec, int kThreads, int kVecsPerThread>
__global__ void __launch_bounds__(kThreads) gated_mul_kernel(const GatedMulParams<T> p) {
  const std::int64_t nvec = p.cols / kVec;  // exact: kVec divides cols (launcher checks)
  const std::int64_t first =
      static_cast<std::int64_t>(blockIdx.x) * kThreads * kVecsPerThread + threadIdx.x;
  for (std::int64_t row = blockIdx.y; row < p.rows; row += gridDim.y) {
    const T* gate = p.x + row * p.x_row_stride;
    const T* up = gate + p.cols;
    T* y = p.y + row * p.y_row_stride;
    Vec<T, kVec> g[kVecsPerThread], u[kVecsPerThread];
#pragma unroll
    for (int i = 0; i < kVecsPerThread; ++i) {
      const std::int64_t j = first + i * kThreads;
      if (j < nvec) {
        g[i] = load_vec<T, kVec>(gate + j * kVec);
        u[i] = load_vec<T, kVec>(up + j * kVec);
      }
    }
#pragma unroll
    for (int i = 0; i < kVecsPerThread; ++i) {
      const std::int64_t j = first + i * kThreads;
      if (j < nvec) store_vec<T, kVec>(y + j * kVec, gated_times<kAct>(g[i], u[i]));
    }
  }
}

// The same stream over the flattened output, as torch.compile's Triton kernel walks it: CTA b
// covers output vectors [b, b + 1) * kThreads * kVecsPerThread of rows * nvec, across row ends,
// so no CTA is left with a partial column chunk. Output vector f is (row f / nvec, column f %
// nvec); the launcher takes this kernel only when rows * nvec < 2^31 (32-bit division).
template <GatedActivation kAct, class T, int kVec, int kThreads, int kVecsPerThread>
__global__ void __launch_bounds__(kThreads) gated_mul_flat_kernel(const GatedMulParams<T> p) {
  const auto nvec = static_cast<std::uint32_t>(p.cols / kVec);
  const auto total = static_cast<std::uint32_t>(p.rows) * nvec;
  const std::uint32_t first = blockIdx.x * (kThreads * kVecsPerThread) + threadIdx.x;
  Vec<T, kVec> g[kVecsPerThread], u[kVecsPerThread];
  T* y[kVecsPerThread];
#pragma unroll
  for (int i = 0; i < kVecsPerThread; ++i) {
    const std::uint32_t f = first + i * kThreads;
    if (f < total) {
      const std::uint32_t row = f / nvec, c = f - row * nvec;
      const T* gate = p.x + row * p.x_row_stride + std::int64_t{c} * kVec;
      g[i] = load_vec<T, kVec>(gate);
      u[i] = load_vec<T, kVec>(gate + p.cols);
      y[i] = p.y + row * p.y_row_stride + std::int64_t{c} * kVec;
    }
  }
#pragma unroll
  for (int i = 0; i < kVecsPerThread; ++i)
    if (first + i * kThreads < total) store_vec<T, kVec>(y[i], gated_times<kAct>(g[i], u[i]));
}

}  // namespace
}  // namespace ts::kernels
