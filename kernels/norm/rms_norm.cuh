// RMSNorm kernel. One row group (kWarpsPerRow warps) per row; the row's full 16-byte vectors
// stay in registers when they fit (read x once, write y once), else they are streamed twice.
// Elements past the last full vector (cols % kVec) are a scalar tail. kVec == 1 is the
// unaligned fallback: every element is its own "vector".
#pragma once

#include <cstdint>

#include "common/reduce.cuh"
#include "common/row_config.hpp"
#include "common/vec.cuh"

namespace ts::kernels {
namespace {

template <class T>
struct RmsNormParams {
  const T* x;
  T* y;
  const T* w;
  std::int64_t rows, cols, x_row_stride, y_row_stride;
  float eps;
};

// kPrefetchWeights: configs that load w after the reduction ask for its lines in L1 first
// (row_config.hpp, kNormPrefetchConfigs).
template <class T, int kVec, int kWarpsPerRow, int kRowsPerCta, int kVecsPerThread,
          bool kPrefetchWeights>
__global__ void __launch_bounds__(kWarpsPerRow * 32 * kRowsPerCta)
    rms_norm_kernel(const RmsNormParams<T> p) {
  static_assert(kWarpsPerRow == 1 || kRowsPerCta == 1, "group_sum syncs the whole CTA");
  constexpr int kThreadsPerRow = kWarpsPerRow * 32;
  __shared__ float scratch[kRowsPerCta][kWarpsPerRow];

  const int group = threadIdx.x / kThreadsPerRow;
  const int t = threadIdx.x % kThreadsPerRow;
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * kRowsPerCta + group;
  if (row >= p.rows) return;  // only possible for warp-per-row configs: no barrier follows

  const T* x = p.x + row * p.x_row_stride;
  T* y = p.y + row * p.y_row_stride;
  const std::int64_t nvec = p.cols / kVec;
  const bool cached = nvec <= static_cast<std::int64_t>(kThreadsPerRow) * kVecsPerThread;

  Vec<T, kVec> regs[kVecsPerThread];
  constexpr bool kPreloadW = kVecsPerThread <= kNormPreloadMaxVecs;  // row_config.hpp: why
  Vec<T, kVec> wregs[kPreloadW ? kVecsPerThread : 1];
  float sum_sq = 0.f;
  if (cached) {
#pragma unroll
    for (int i = 0; i < kVecsPerThread; ++i) {
      const std::int64_t j = t + i * kThreadsPerRow;
      if (j < nvec) regs[i] = load_vec<T, kVec>(x + j * kVec);
    }
    if constexpr (kPreloadW) {
#pragma unroll
      for (int i = 0; i < kVecsPerThread; ++i) {
        const std::int64_t j = t + i * kThreadsPerRow;
        if (j < nvec) wregs[i] = load_vec<T, kVec>(p.w + j * kVec);
      }
    } else if constexpr (kPrefetchWeights) {
      prefetch_row_share<T, kVec, kThreadsPerRow, kVecsPerThread>(p.w, nvec, t);
    }
#pragma unroll
    for (int i = 0; i < kVecsPerThread; ++i) {
      if (t + i * kThreadsPerRow < nvec) {
#pragma unroll
        for (int e = 0; e < kVec; ++e) {
          const float v = to_float(regs[i].v[e]);
          sum_sq += v * v;
        }
      }
    }
  } else {
    for (std::int64_t j = t; j < nvec; j += kThreadsPerRow) {
      const Vec<T, kVec> v = load_vec<T, kVec>(x + j * kVec);
#pragma unroll
      for (int e = 0; e < kVec; ++e) sum_sq += to_float(v.v[e]) * to_float(v.v[e]);
    }
  }
  for (std::int64_t c = nvec * kVec + t; c < p.cols; c += kThreadsPerRow) {
    const float v = to_float(x[c]);
    sum_sq += v * v;
  }

  // rsqrtf is one MUFU.RSQ (2 ulp); 1.f / sqrtf(s / cols) is an IEEE square root and two IEEE
  // divisions with slow-path branches, all on the serial path after the reduction.
  const float inv_cols = 1.f / static_cast<float>(p.cols);  // off the critical path
  sum_sq = group_sum<kWarpsPerRow>(sum_sq, scratch[group]);
  const float inv_rms = rsqrtf(sum_sq * inv_cols + p.eps);

  auto normalize = [&](const Vec<T, kVec>& in, const Vec<T, kVec>& w, std::int64_t j) {
    Vec<T, kVec> out;
#pragma unroll
    for (int e = 0; e < kVec; ++e)
      out.v[e] = from_float<T>(to_float(in.v[e]) * inv_rms * to_float(w.v[e]));
    store_vec<T, kVec>(y + j * kVec, out);
  };
  if (cached) {
#pragma unroll
    for (int i = 0; i < kVecsPerThread; ++i) {
      const std::int64_t j = t + i * kThreadsPerRow;
      if (j >= nvec) continue;
      if constexpr (kPreloadW)
        normalize(regs[i], wregs[i], j);
      else
        normalize(regs[i], load_vec<T, kVec>(p.w + j * kVec), j);
    }
  } else {
    for (std::int64_t j = t; j < nvec; j += kThreadsPerRow)
      normalize(load_vec<T, kVec>(x + j * kVec), load_vec<T, kVec>(p.w + j * kVec), j);
  }
  for (std::int64_t c = nvec * kVec + t; c < p.cols; c += kThreadsPerRow)
    y[c] = from_float<T>(to_float(x[c]) * inv_rms * to_float(p.w[c]));
}

// ---- persistent kernel: a CTA walks rows r, r + gridDim.x, ... ---------------------------------
//
// For whole-vector rows that fit one CTA's registers (nvec <= kThreads * kVecsPerThread). The
// weight slice is loaded once per CTA, not once per row, and row r + gridDim.x is loaded before
// row r is reduced and written, so each CTA keeps a row in flight through its own reduction
// (the one-row kernel has nothing in flight between its load and its store). Registers per
// thread: 3 * kVecsPerThread vectors (w, this row, the next). Rows are independent, so y may
// alias x: row r is written after row r + gridDim.x was read, and no other CTA touches either.
template <class T, int kVec, int kThreads, int kVecsPerThread>
__global__ void __launch_bounds__(kThreads) rms_norm_persistent_kernel(const RmsNormParams<T> p) {
  constexpr int kWarps = kThreads / 32;
  __shared__ float scratch[kWarps];
  const int t = threadIdx.x;
  const std::int64_t nvec = p.cols / kVec;
  const float inv_cols = 1.f / static_cast<float>(p.cols);
  Vec<T, kVec> w[kVecsPerThread];
  load_row_share<T, kVec, kThreads>(w, p.w, nvec, t);
  walk_rows_prefetched<T, kVec, kThreads, kVecsPerThread>(
      p.x, p.x_row_stride, p.rows, nvec,
      [&](const Vec<T, kVec>(&x)[kVecsPerThread], std::int64_t row) {
        float sum_sq = 0.f;
#pragma unroll
        for (int i = 0; i < kVecsPerThread; ++i)
          if (t + i * kThreads < nvec)
#pragma unroll
            for (int e = 0; e < kVec; ++e) sum_sq += to_float(x[i].v[e]) * to_float(x[i].v[e]);
        sum_sq = group_sum<kWarps>(sum_sq, scratch);
        const float inv_rms = rsqrtf(sum_sq * inv_cols + p.eps);
        T* y = p.y + row * p.y_row_stride;
#pragma unroll
        for (int i = 0; i < kVecsPerThread; ++i) {
          const std::int64_t j = t + i * kThreads;
          if (j < nvec) {
            Vec<T, kVec> out;
#pragma unroll
            for (int e = 0; e < kVec; ++e)
              out.v[e] = from_float<T>(to_float(x[i].v[e]) * inv_rms * to_float(w[i].v[e]));
            store_vec<T, kVec>(y + j * kVec, out);
          }
        }
      });
}

}  // namespace
}  // namespace ts::kernels
