// Fallback GEMM for shapes the TMA kernels cannot take (unaligned pointers or leading dims,
// contiguous extents not a multiple of 8 elements, K == 0): a plain shared-memory tiled
// CUDA-core kernel, fp32 accumulation, any strides. Correct everywhere, not fast.
//
//   CTA: 64 x 64 output tile, 256 threads, each thread a 4 x 4 micro-tile (rows ty + 16 i,
//   cols tx + 16 j); K is walked 16 at a time through smem tiles As[16][64], Bs[16][64].
#pragma once

#include <cstdint>

#include "common/vec.cuh"

namespace ts::kernels {
namespace {

template <class T>
struct GemmFallbackParams {
  const T* a;
  const T* b;
  T* d;
  std::int64_t M, N, K, lda, ldb, ldd;
  bool trans_a, trans_b;
};

constexpr int kFbTile = 64, kFbK = 16, kFbThreads = 256;

template <class T>
__global__ void __launch_bounds__(kFbThreads) gemm_fallback_kernel(const GemmFallbackParams<T> p) {
  __shared__ float As[kFbK][kFbTile + 1];  // As[k][m]
  __shared__ float Bs[kFbK][kFbTile + 1];  // Bs[k][n]
  const std::int64_t m0 = static_cast<std::int64_t>(blockIdx.x) * kFbTile;
  const std::int64_t n0 = static_cast<std::int64_t>(blockIdx.y) * kFbTile;
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  float acc[4][4] = {};
  for (std::int64_t k0 = 0; k0 < p.K; k0 += kFbK) {
    // 64 x 16 = 1024 elements of each operand, 4 per thread.
    for (int e = threadIdx.x; e < kFbTile * kFbK; e += kFbThreads) {
      const int kk = e % kFbK, mm = e / kFbK;
      const std::int64_t m = m0 + mm, n = n0 + mm, k = k0 + kk;
      float av = 0.f, bv = 0.f;
      if (m < p.M && k < p.K) av = to_float(p.trans_a ? p.a[k * p.lda + m] : p.a[m * p.lda + k]);
      if (n < p.N && k < p.K) bv = to_float(p.trans_b ? p.b[n * p.ldb + k] : p.b[k * p.ldb + n]);
      As[kk][mm] = av;
      Bs[kk][mm] = bv;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kFbK; ++kk) {
      float ar[4], br[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) ar[i] = As[kk][ty + 16 * i];
#pragma unroll
      for (int j = 0; j < 4; ++j) br[j] = Bs[kk][tx + 16 * j];
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(ar[i], br[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const std::int64_t m = m0 + ty + 16 * i;
    if (m >= p.M) continue;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const std::int64_t n = n0 + tx + 16 * j;
      if (n < p.N) p.d[m * p.ldd + n] = from_float<T>(acc[i][j]);
    }
  }
}

}  // namespace
}  // namespace ts::kernels
