// Softmax kernel: same row mapping as the norms. Works in the log2 domain, z = x * log2(e),
// so each exponential is one MUFU.EX2 (exp2_ftz) instead of expf's longer sequence: at bf16
// 16384x8192 two expf per element would cost about as long as the HBM traffic.
#pragma once

#include <cooperative_groups.h>

#include <cstdint>

#include "common/fast_math.cuh"
#include "common/reduce.cuh"
#include "common/vec.cuh"

namespace ts::kernels {
namespace {

constexpr float kLog2e = 1.4426950408889634f;

template <class T>
struct SoftmaxParams {
  const T* x;
  T* y;
  std::int64_t rows, cols, x_row_stride, y_row_stride;
};

template <class T, int kVec, int kWarpsPerRow, int kRowsPerCta, int kVecsPerThread>
__global__ void __launch_bounds__(kWarpsPerRow * 32 * kRowsPerCta)
    softmax_kernel(const SoftmaxParams<T> p) {
  static_assert(kWarpsPerRow == 1 || kRowsPerCta == 1, "group reductions sync the whole CTA");
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

  // Per thread: running max m (log2 domain) and sum of exp2(z - m).
  float m = -INFINITY, s = 0.f;
  auto accumulate = [&](float z) {  // online update for one element
    if (z > m) {
      s = s * exp2_ftz(m - z) + 1.f;  // m == -inf: exp2_ftz(-inf) = 0
      m = z;
    } else {
      s += exp2_ftz(z - m);  // z == m == -inf gives NaN: guarded below
    }
  };

  Vec<T, kVec> regs[kVecsPerThread];
  if (cached) {
#pragma unroll
    for (int i = 0; i < kVecsPerThread; ++i) {
      const std::int64_t j = t + i * kThreadsPerRow;
      if (j < nvec) regs[i] = load_vec<T, kVec>(x + j * kVec);
    }
    // Max first, then one exp2_ftz per element (no rescaling inside the loop).
#pragma unroll
    for (int i = 0; i < kVecsPerThread; ++i)
      if (t + i * kThreadsPerRow < nvec)
#pragma unroll
        for (int e = 0; e < kVec; ++e) m = fmaxf(m, to_float(regs[i].v[e]) * kLog2e);
    for (std::int64_t c = tail + t; c < p.cols; c += kThreadsPerRow)
      m = fmaxf(m, to_float(x[c]) * kLog2e);
    m = group_max<kWarpsPerRow>(m, scratch[group]);
#pragma unroll
    for (int i = 0; i < kVecsPerThread; ++i)
      if (t + i * kThreadsPerRow < nvec)
#pragma unroll
        for (int e = 0; e < kVec; ++e) s += exp2_ftz(fmaf(to_float(regs[i].v[e]), kLog2e, -m));
    for (std::int64_t c = tail + t; c < p.cols; c += kThreadsPerRow)
      s += exp2_ftz(fmaf(to_float(x[c]), kLog2e, -m));
    s = group_sum<kWarpsPerRow>(s, scratch[group]);
  } else {
    for (std::int64_t j = t; j < nvec; j += kThreadsPerRow) {
      const Vec<T, kVec> v = load_vec<T, kVec>(x + j * kVec);
      float vmax = -INFINITY;  // one rescale per vector, not per element
#pragma unroll
      for (int e = 0; e < kVec; ++e) vmax = fmaxf(vmax, to_float(v.v[e]) * kLog2e);
      if (vmax > m) {
        s = (m == -INFINITY) ? 0.f : s * exp2_ftz(m - vmax);
        m = vmax;
      }
      if (m != -INFINITY)
#pragma unroll
        for (int e = 0; e < kVec; ++e) s += exp2_ftz(fmaf(to_float(v.v[e]), kLog2e, -m));
    }
    for (std::int64_t c = tail + t; c < p.cols; c += kThreadsPerRow) {
      const float z = to_float(x[c]) * kLog2e;
      if (z != -INFINITY || m != -INFINITY) accumulate(z);
    }
    const float row_max = group_max<kWarpsPerRow>(m, scratch[group]);
    s = (m == -INFINITY) ? 0.f : s * exp2_ftz(m - row_max);
    m = row_max;
    s = group_sum<kWarpsPerRow>(s, scratch[group]);
  }
  const float inv_sum = 1.f / s;

  auto write = [&](const Vec<T, kVec>& in, std::int64_t j) {
    Vec<T, kVec> out;
#pragma unroll
    for (int e = 0; e < kVec; ++e)
      out.v[e] = from_float<T>(exp2_ftz(fmaf(to_float(in.v[e]), kLog2e, -m)) * inv_sum);
    store_vec<T, kVec>(y + j * kVec, out);
  };
  if (cached) {
#pragma unroll
    for (int i = 0; i < kVecsPerThread; ++i) {
      const std::int64_t j = t + i * kThreadsPerRow;
      if (j < nvec) write(regs[i], j);
    }
  } else {
    for (std::int64_t j = t; j < nvec; j += kThreadsPerRow)
      write(load_vec<T, kVec>(x + j * kVec), j);
  }
  for (std::int64_t c = tail + t; c < p.cols; c += kThreadsPerRow)
    y[c] = from_float<T>(exp2_ftz(fmaf(to_float(x[c]), kLog2e, -m)) * inv_sum);
}

// ---- cluster kernel: long rows split over the CTAs of a thread-block cluster ----------------
//
// A row of nvec 16-byte vectors is cut into kCluster slices of ceil(nvec / kCluster) vectors;
// CTA `rank` of the cluster keeps slice `rank` in registers (kThreads x kVecsPerThread vectors
// at most), so the row is read from HBM once however long it is (a CTA alone holds 64k bf16 at
// most; rows of 128k then streamed twice, and 16 decode rows ran on 16 SMs). Each CTA reduces its
// slice to (max m_r, sum s_r of exp2(z - m_r)), publishes it in shared memory, and after a
// cluster barrier reads all kCluster pairs through distributed shared memory:
//   M = max_r m_r,  S = sum_r s_r * exp2(m_r - M)       (slices that are all -inf add nothing)
// A second barrier keeps every CTA's pair alive until all have read it. Grid: (kCluster, rows)
// with rows looped by gridDim.y; vectorized rows only (cols % kVec == 0, 16-byte aligned).
template <class T, int kVec, int kThreads, int kVecsPerThread, int kCluster>
__global__ void __cluster_dims__(kCluster, 1, 1) __launch_bounds__(kThreads)
    softmax_cluster_kernel(const SoftmaxParams<T> p) {
  namespace cg = cooperative_groups;
  constexpr int kWarps = kThreads / 32;
  __shared__ float scratch[kWarps];
  __shared__ float2 partial;  // (m_r, s_r) of this CTA, read by the whole cluster
  cg::cluster_group cluster = cg::this_cluster();
  const int rank = static_cast<int>(cluster.block_rank());
  const int t = threadIdx.x;
  const std::int64_t nvec = p.cols / kVec;
  const std::int64_t slice = (nvec + kCluster - 1) / kCluster;
  const std::int64_t begin = rank * slice;
  const std::int64_t end = begin + slice < nvec ? begin + slice : nvec;

  for (std::int64_t row = blockIdx.y; row < p.rows; row += gridDim.y) {
    const T* x = p.x + row * p.x_row_stride;
    T* y = p.y + row * p.y_row_stride;
    Vec<T, kVec> regs[kVecsPerThread];
#pragma unroll
    for (int i = 0; i < kVecsPerThread; ++i) {
      const std::int64_t j = begin + t + i * kThreads;
      if (j < end) regs[i] = load_vec<T, kVec>(x + j * kVec);
    }
    float m = -INFINITY;
#pragma unroll
    for (int i = 0; i < kVecsPerThread; ++i)
      if (begin + t + i * kThreads < end)
#pragma unroll
        for (int e = 0; e < kVec; ++e) m = fmaxf(m, to_float(regs[i].v[e]) * kLog2e);
    m = group_max<kWarps>(m, scratch);
    float s = 0.f;
    if (m != -INFINITY) {
#pragma unroll
      for (int i = 0; i < kVecsPerThread; ++i)
        if (begin + t + i * kThreads < end)
#pragma unroll
          for (int e = 0; e < kVec; ++e) s += exp2_ftz(fmaf(to_float(regs[i].v[e]), kLog2e, -m));
    }
    s = group_sum<kWarps>(s, scratch);
    if (t == 0) partial = make_float2(m, s);
    cluster.sync();  // every CTA's partial is published
    float row_max = -INFINITY, row_sum = 0.f;
    float2 parts[kCluster];
#pragma unroll
    for (int r = 0; r < kCluster; ++r) {
      parts[r] = *cluster.map_shared_rank(&partial, r);
      row_max = fmaxf(row_max, parts[r].x);
    }
#pragma unroll
    for (int r = 0; r < kCluster; ++r)
      if (parts[r].x != -INFINITY) row_sum += parts[r].y * exp2_ftz(parts[r].x - row_max);
    cluster.sync();  // every CTA has read every partial: they may be overwritten or freed
    const float inv_sum = 1.f / row_sum;  // a row of all -inf: 1 / 0, and exp2(NaN) below
#pragma unroll
    for (int i = 0; i < kVecsPerThread; ++i) {
      const std::int64_t j = begin + t + i * kThreads;
      if (j < end) {
        Vec<T, kVec> out;
#pragma unroll
        for (int e = 0; e < kVec; ++e)
          out.v[e] =
              from_float<T>(exp2_ftz(fmaf(to_float(regs[i].v[e]), kLog2e, -row_max)) * inv_sum);
        store_vec<T, kVec>(y + j * kVec, out);
      }
    }
  }
}

}  // namespace
}  // namespace ts::kernels
