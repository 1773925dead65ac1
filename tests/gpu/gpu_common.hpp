// Small helpers shared by gpu_kernel_tests and gpu_kernel_bench: a CUDA check macro, device
// buffers, a fast seeded RNG, random fills and a row-parallel loop for the CPU references.
// Plain C++ + the CUDA runtime: the GPU machine has no GoogleTest or fmt.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "common/dtype.hpp"
#include "common/host_convert.hpp"

#define TS_CUDA_CHECK(expr)                                                     \
  do {                                                                          \
    const cudaError_t ts_err_ = (expr);                                         \
    if (ts_err_ != cudaSuccess) {                                               \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #expr, \
                   cudaGetErrorString(ts_err_));                                \
      std::exit(2);                                                             \
    }                                                                           \
  } while (0)

namespace ts::gpu_test {

using kernels::DType;

/// Owns one cudaMalloc allocation.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
    TS_CUDA_CHECK(cudaMalloc(&ptr_, std::max<std::size_t>(bytes, 16)));
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(o.ptr_), bytes_(o.bytes_) { o.ptr_ = nullptr; }
  ~DeviceBuffer() {
    if (ptr_) cudaFree(ptr_);
  }
  void* get() const { return ptr_; }
  std::size_t bytes() const { return bytes_; }
  void upload(const void* host) const {
    TS_CUDA_CHECK(cudaMemcpy(ptr_, host, bytes_, cudaMemcpyHostToDevice));
  }
  void download(void* host) const {
    TS_CUDA_CHECK(cudaMemcpy(host, ptr_, bytes_, cudaMemcpyDeviceToHost));
  }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

/// splitmix64: fast, seedable, good enough for test data.
struct Rng {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double uniform(double lo, double hi) {
    return lo + (hi - lo) * static_cast<double>(next() >> 11) * 0x1p-53;
  }
};

/// Runs fn(begin, end) over [0, n) split across the host's cores.
template <class F>
void parallel_for(std::int64_t n, F&& fn) {
  const std::int64_t workers = std::clamp<std::int64_t>(
      static_cast<std::int64_t>(std::thread::hardware_concurrency()), 1, 32);
  if (n < 2 * workers) {
    fn(std::int64_t{0}, n);
    return;
  }
  std::vector<std::thread> threads;
  const std::int64_t chunk = (n + workers - 1) / workers;
  for (std::int64_t b = 0; b < n; b += chunk)
    threads.emplace_back([&fn, b, e = std::min(n, b + chunk)] { fn(b, e); });
  for (auto& t : threads) t.join();
}

/// `count` random elements of `dtype` in [lo, hi) (rounded to dtype), seeded by `seed`.
inline std::vector<std::uint8_t> random_buffer(DType dtype, std::int64_t count, double lo,
                                               double hi, std::uint64_t seed) {
  std::vector<std::uint8_t> buf(static_cast<std::size_t>(count) * kernels::dtype_size(dtype));
  parallel_for(count, [&](std::int64_t b, std::int64_t e) {
    Rng rng{seed * 0x100000001b3ull + static_cast<std::uint64_t>(b)};
    for (std::int64_t i = b; i < e; ++i)
      kernels::store_element(buf.data(), dtype, i, rng.uniform(lo, hi));
  });
  return buf;
}

}  // namespace ts::gpu_test
