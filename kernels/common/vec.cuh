// 16-byte vector loads/stores and fp16/bf16 <-> fp32 conversion for the memory-bound kernels.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "common/dtype.hpp"

namespace ts::kernels {

template <class T>
__device__ __forceinline__ float to_float(T v);
template <>
__device__ __forceinline__ float to_float<float>(float v) {
  return v;
}
template <>
__device__ __forceinline__ float to_float<__half>(__half v) {
  return __half2float(v);
}
template <>
__device__ __forceinline__ float to_float<__nv_bfloat16>(__nv_bfloat16 v) {
  return __bfloat162float(v);
}

template <class T>
__device__ __forceinline__ T from_float(float v);
template <>
__device__ __forceinline__ float from_float<float>(float v) {
  return v;
}
template <>
__device__ __forceinline__ __half from_float<__half>(float v) {
  return __float2half_rn(v);
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}

/// kN consecutive elements; with kN * sizeof(T) == 16 one LDG.128 / STG.128.
template <class T, int kN>
struct alignas(sizeof(T) * kN) Vec {
  T v[kN];
};

/// Loads a vector from `src`, which must be aligned to sizeof(Vec<T, kN>).
template <class T, int kN>
__device__ __forceinline__ Vec<T, kN> load_vec(const T* src) {
  Vec<T, kN> out;
  if constexpr (sizeof(Vec<T, kN>) == 16) {
    *reinterpret_cast<uint4*>(&out) = *reinterpret_cast<const uint4*>(src);
  } else {
    out = *reinterpret_cast<const Vec<T, kN>*>(src);
  }
  return out;
}

template <class T, int kN>
__device__ __forceinline__ void store_vec(T* dst, const Vec<T, kN>& value) {
  if constexpr (sizeof(Vec<T, kN>) == 16) {
    *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(&value);
  } else {
    *reinterpret_cast<Vec<T, kN>*>(dst) = value;
  }
}

/// Asks for the 128-byte line holding `p` in L1: no register is held and nothing waits, and a
/// load of that line issued later hits L1 instead of going to L2.
__device__ __forceinline__ void prefetch_l1(const void* p) {
  asm volatile("prefetch.global.L1 [%0];\n" ::"l"(p));
}

/// prefetch_l1 of a thread's share of a row (the vectors load_row_share would load).
template <class T, int kVec, int kThreads, int kN>
__device__ __forceinline__ void prefetch_row_share(const T* src, std::int64_t nvec, int t) {
#pragma unroll
  for (int i = 0; i < kN; ++i) {
    const std::int64_t j = t + static_cast<std::int64_t>(i) * kThreads;
    if (j < nvec) prefetch_l1(src + j * kVec);
  }
}

/// A thread's share of a row held in registers: vectors t, t + kThreads, ... (kN slots), those
/// below nvec loaded from src (the others left as they are).
template <class T, int kVec, int kThreads, int kN>
__device__ __forceinline__ void load_row_share(Vec<T, kVec> (&dst)[kN], const T* src,
                                               std::int64_t nvec, int t) {
#pragma unroll
  for (int i = 0; i < kN; ++i) {
    const std::int64_t j = t + static_cast<std::int64_t>(i) * kThreads;
    if (j < nvec) dst[i] = load_vec<T, kVec>(src + j * kVec);
  }
}

/// The persistent row walk: body(share, row) for rows blockIdx.x, + gridDim.x, ... below
/// `rows`, where share is this thread's load_row_share of the row; row r + gridDim.x is loaded
/// before body runs on row r, so a row stays in flight through the body's reductions. Every
/// thread of the CTA makes the same calls, so the body may synchronize the CTA.
template <class T, int kVec, int kThreads, int kN, class Body>
__device__ __forceinline__ void walk_rows_prefetched(const T* x, std::int64_t x_row_stride,
                                                     std::int64_t rows, std::int64_t nvec,
                                                     Body&& body) {
  const int t = threadIdx.x;
  std::int64_t row = blockIdx.x;
  if (row >= rows) return;
  Vec<T, kVec> cur[kN], next[kN];
  load_row_share<T, kVec, kThreads>(cur, x + row * x_row_stride, nvec, t);
  for (; row < rows; row += gridDim.x) {
    const std::int64_t following = row + gridDim.x;
    if (following < rows)
      load_row_share<T, kVec, kThreads>(next, x + following * x_row_stride, nvec, t);
    body(cur, row);
#pragma unroll
    for (int i = 0; i < kN; ++i) cur[i] = next[i];
  }
}

/// Storage type for a DType on the device.
template <DType D>
struct DeviceType;
template <>
struct DeviceType<DType::f16> {
  using type = __half;
};
template <>
struct DeviceType<DType::bf16> {
  using type = __nv_bfloat16;
};
template <>
struct DeviceType<DType::f32> {
  using type = float;
};

/// True when `p` may be accessed with 16-byte vectors.
inline bool is_aligned16(const void* p) {
  return (reinterpret_cast<std::uintptr_t>(p) & 15) == 0;
}

}  // namespace ts::kernels
