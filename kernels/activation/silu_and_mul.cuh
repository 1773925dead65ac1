// SiluAndMul kernel: a pure stream (read 2 vectors, write 1). CTA (bx, by) covers the column
// chunk bx of kThreads * kVecsPerThread vectors, for rows by, by + gridDim.y, ...; each thread
// issues all kVecsPerThread pairs of loads before its first store. kVec == 1 is the fallback
// for unaligned pointers/strides or cols not a multiple of the vector width (the up half of
// a row then starts off a 16-byte boundary).
#pragma once

#include <cstdint>

#include "common/fast_math.cuh"
#include "common/vec.cuh"

namespace ts::kernels {
namespace {

template <class T>
struct SiluAndMulParams {
  const T* x;
  T* y;
  std::int64_t rows, cols, x_row_stride, y_row_stride;
};

__device__ __forceinline__ float silu_times(float gate, float up) {
  // silu(g) = g / (1 + e^-g) = g / (1 + 2^(-g log2 e)): one MUFU.EX2 and an approximate
  // division (reciprocal and multiply, 2 ulp) where the IEEE one takes about ten instructions; at
  // bf16 16384 x 14336 the exact pair cost about as long as the HBM traffic. For g < -87 the
  // denominator passes 2^126 and __fdividef returns 0, as silu(g) (below 1e-36) rounds anyway.
  return __fdividef(gate, 1.f + exp2_ftz(-gate * 1.4426950408889634f)) * up;
}

template <class T, int kVec, int kThreads, int kVecsPerThread>
__global__ void __launch_bounds__(kThreads) silu_and_mul_kernel(const SiluAndMulParams<T> p) {
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
      if (j < nvec) {
        Vec<T, kVec> out;
#pragma unroll
        for (int e = 0; e < kVec; ++e)
          out.v[e] = from_float<T>(silu_times(to_float(g[i].v[e]), to_float(u[i].v[e])));
        store_vec<T, kVec>(y + j * kVec, out);
      }
    }
  }
}

}  // namespace
}  // namespace ts::kernels
