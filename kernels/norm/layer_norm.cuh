// LayerNorm kernel: same row mapping as rms_norm.cuh. The variance is the mean of (x - mean)^2
// computed from the register copy (two reductions, no catastrophic cancellation of
// E[x^2] - E[x]^2). Rows longer than the register capacity are streamed three times.
#pragma once

#include <cstdint>

#include "common/reduce.cuh"
#include "common/row_config.hpp"
#include "common/vec.cuh"

namespace ts::kernels {
namespace {

template <class T>
struct LayerNormParams {
  const T* x;
  T* y;
  const T* w;  // nullptr: 1
  const T* b;  // nullptr: 0
  std::int64_t rows, cols, x_row_stride, y_row_stride;
  float eps;
};

// kPrefetchWeights: as rms_norm_kernel's, for w and b.
template <class T, int kVec, int kWarpsPerRow, int kRowsPerCta, int kVecsPerThread,
          bool kPrefetchWeights>
__global__ void __launch_bounds__(kWarpsPerRow * 32 * kRowsPerCta)
    layer_norm_kernel(const LayerNormParams<T> p) {
  static_assert(kWarpsPerRow == 1 || kRowsPerCta == 1, "group_sum syncs the whole CTA");
  constexpr int kThreadsPerRow = kWarpsPerRow * 32;
  __shared__ float scratch[kRowsPerCta][kWarpsPerRow];

  const int group = threadIdx.x / kThreadsPerRow;
  const int t = threadIdx.x % kThreadsPerRow;
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * kRowsPerCta + group;
  if (row >= p.rows) return;

  const T* x = p.x + row * p.x_row_stride;
  T* y = p.y + row * p.y_row_stride;
  const std::int64_t nvec = p.cols / kVec;
  const std::int64_t tail = nvec * kVec;
  const bool cached = nvec <= static_cast<std::int64_t>(kThreadsPerRow) * kVecsPerThread;
  const float inv_cols = 1.f / static_cast<float>(p.cols);

  Vec<T, kVec> regs[kVecsPerThread];
  constexpr bool kPreload = kVecsPerThread <= kNormPreloadMaxVecs;  // row_config.hpp: why
  Vec<T, kVec> wregs[kPreload ? kVecsPerThread : 1], bregs[kPreload ? kVecsPerThread : 1];
  float sum = 0.f;
  if (cached) {
#pragma unroll
    for (int i = 0; i < kVecsPerThread; ++i) {
      const std::int64_t j = t + i * kThreadsPerRow;
      if (j < nvec) regs[i] = load_vec<T, kVec>(x + j * kVec);
    }
    if constexpr (kPreload) {
#pragma unroll
      for (int i = 0; i < kVecsPerThread; ++i) {
        const std::int64_t j = t + i * kThreadsPerRow;
        if (j >= nvec) continue;
        if (p.w) wregs[i] = load_vec<T, kVec>(p.w + j * kVec);
        if (p.b) bregs[i] = load_vec<T, kVec>(p.b + j * kVec);
      }
    } else if constexpr (kPrefetchWeights) {
      if (p.w) prefetch_row_share<T, kVec, kThreadsPerRow, kVecsPerThread>(p.w, nvec, t);
      if (p.b) prefetch_row_share<T, kVec, kThreadsPerRow, kVecsPerThread>(p.b, nvec, t);
    }
#pragma unroll
    for (int i = 0; i < kVecsPerThread; ++i)
      if (t + i * kThreadsPerRow < nvec)
#pragma unroll
        for (int e = 0; e < kVec; ++e) sum += to_float(regs[i].v[e]);
  } else {
    for (std::int64_t j = t; j < nvec; j += kThreadsPerRow) {
      const Vec<T, kVec> v = load_vec<T, kVec>(x + j * kVec);
#pragma unroll
      for (int e = 0; e < kVec; ++e) sum += to_float(v.v[e]);
    }
  }
  for (std::int64_t c = tail + t; c < p.cols; c += kThreadsPerRow) sum += to_float(x[c]);
  const float mean = group_sum<kWarpsPerRow>(sum, scratch[group]) * inv_cols;

  float sum_dev = 0.f;
  if (cached) {
#pragma unroll
    for (int i = 0; i < kVecsPerThread; ++i)
      if (t + i * kThreadsPerRow < nvec)
#pragma unroll
        for (int e = 0; e < kVec; ++e) {
          const float d = to_float(regs[i].v[e]) - mean;
          sum_dev += d * d;
        }
  } else {
    for (std::int64_t j = t; j < nvec; j += kThreadsPerRow) {
      const Vec<T, kVec> v = load_vec<T, kVec>(x + j * kVec);
#pragma unroll
      for (int e = 0; e < kVec; ++e) {
        const float d = to_float(v.v[e]) - mean;
        sum_dev += d * d;
      }
    }
  }
  for (std::int64_t c = tail + t; c < p.cols; c += kThreadsPerRow) {
    const float d = to_float(x[c]) - mean;
    sum_dev += d * d;
  }
  const float var = group_sum<kWarpsPerRow>(sum_dev, scratch[group]) * inv_cols;
  const float inv_std = rsqrtf(var + p.eps);  // one MUFU.RSQ, see rms_norm.cuh

  // w, b: the preloaded vectors, or nullptr to load them here.
  auto normalize = [&](const Vec<T, kVec>& in, const Vec<T, kVec>* wpre, const Vec<T, kVec>* bpre,
                       std::int64_t j) {
    Vec<T, kVec> w, b, out;
    if (p.w) w = wpre ? *wpre : load_vec<T, kVec>(p.w + j * kVec);
    if (p.b) b = bpre ? *bpre : load_vec<T, kVec>(p.b + j * kVec);
#pragma unroll
    for (int e = 0; e < kVec; ++e) {
      float v = (to_float(in.v[e]) - mean) * inv_std;
      if (p.w) v *= to_float(w.v[e]);
      if (p.b) v += to_float(b.v[e]);
      out.v[e] = from_float<T>(v);
    }
    store_vec<T, kVec>(y + j * kVec, out);
  };
  if (cached) {
#pragma unroll
    for (int i = 0; i < kVecsPerThread; ++i) {
      const std::int64_t j = t + i * kThreadsPerRow;
      if (j >= nvec) continue;
      if constexpr (kPreload)
        normalize(regs[i], &wregs[i], &bregs[i], j);
      else
        normalize(regs[i], nullptr, nullptr, j);
    }
  } else {
    for (std::int64_t j = t; j < nvec; j += kThreadsPerRow)
      normalize(load_vec<T, kVec>(x + j * kVec), nullptr, nullptr, j);
  }
  for (std::int64_t c = tail + t; c < p.cols; c += kThreadsPerRow) {
    float v = (to_float(x[c]) - mean) * inv_std;
    if (p.w) v *= to_float(p.w[c]);
    if (p.b) v += to_float(p.b[c]);
    y[c] = from_float<T>(v);
  }
}

// ---- persistent kernel (common/row_config.hpp: kPersistentConfigs) ----------------------------
// As rms_norm_persistent_kernel: a CTA walks rows r, r + gridDim.x, ..., the weight and bias
// slices loaded once, row r + gridDim.x loaded before row r is reduced. Registers per thread:
// up to 4 * kVecsPerThread vectors (w, b, this row, the next). y may alias x.
template <class T, int kVec, int kThreads, int kVecsPerThread>
__global__ void __launch_bounds__(kThreads)
    layer_norm_persistent_kernel(const LayerNormParams<T> p) {
  constexpr int kWarps = kThreads / 32;
  __shared__ float scratch[kWarps];
  const int t = threadIdx.x;
  const std::int64_t nvec = p.cols / kVec;
  const float inv_cols = 1.f / static_cast<float>(p.cols);
  Vec<T, kVec> w[kVecsPerThread], b[kVecsPerThread];
  if (p.w) load_row_share<T, kVec, kThreads>(w, p.w, nvec, t);
  if (p.b) load_row_share<T, kVec, kThreads>(b, p.b, nvec, t);
  walk_rows_prefetched<T, kVec, kThreads, kVecsPerThread>(
      p.x, p.x_row_stride, p.rows, nvec,
      [&](const Vec<T, kVec>(&x)[kVecsPerThread], std::int64_t row) {
        float sum = 0.f;
#pragma unroll
        for (int i = 0; i < kVecsPerThread; ++i)
          if (t + i * kThreads < nvec)
#pragma unroll
            for (int e = 0; e < kVec; ++e) sum += to_float(x[i].v[e]);
        const float mean = group_sum<kWarps>(sum, scratch) * inv_cols;
        float sum_dev = 0.f;
#pragma unroll
        for (int i = 0; i < kVecsPerThread; ++i)
          if (t + i * kThreads < nvec)
#pragma unroll
            for (int e = 0; e < kVec; ++e) {
              const float d = to_float(x[i].v[e]) - mean;
              sum_dev += d * d;
            }
        const float var = group_sum<kWarps>(sum_dev, scratch) * inv_cols;
        const float inv_std = rsqrtf(var + p.eps);  // one MUFU.RSQ, see rms_norm.cuh
        T* y = p.y + row * p.y_row_stride;
#pragma unroll
        for (int i = 0; i < kVecsPerThread; ++i) {
          const std::int64_t j = t + i * kThreads;
          if (j < nvec) {
            Vec<T, kVec> out;
#pragma unroll
            for (int e = 0; e < kVec; ++e) {
              float v = (to_float(x[i].v[e]) - mean) * inv_std;
              if (p.w) v *= to_float(w[i].v[e]);
              if (p.b) v += to_float(b[i].v[e]);
              out.v[e] = from_float<T>(v);
            }
            store_vec<T, kVec>(y + j * kVec, out);
          }
        }
      });
}

}  // namespace
}  // namespace ts::kernels
