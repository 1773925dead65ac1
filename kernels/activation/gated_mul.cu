// Launcher for the gated multiplies: validates Args, picks vector width and config, launches.
#include "activation/gated_mul.hpp"

#include <algorithm>
#include <type_traits>

#include "activation/gated_mul.cuh"
#include "common/dispatch.cuh"

namespace ts::kernels {
namespace {

struct GatedConfig {
  int threads;
  int vecs_per_thread;
  // false: about 8 waves of CTAs, each looping over rows; true: one CTA per (row, column
  // chunk) up to 65535 rows, as torch.compile's Triton kernel has one program per tile.
  bool cta_per_row = false;
  // true: the flattened kernel (gated_mul_flat_kernel), one CTA per chunk of rows * cols.
  bool flat = false;
  // Bytes a vector load (when rows allow 16-byte ones): narrower spreads little work over more
  // threads, as Triton does at decode (448 CTAs of 256 threads, 4 bytes each, at 16 x 14336).
  int vec_bytes = 16;
};
// 0: wide rows, many vectors in flight per thread; 1: balanced; 2: short rows / few rows;
// 3-9: tuning candidates. torch.compile's Triton kernel reached 4.38 TB/s on bf16 8192 x 14336
// where config 1 reached 4.14 and the best of 0-6 4.22 (H200, tileops bench --tune); 7-9 are
// the same kernels as 2, 5 and 1 without the row loop (no new instantiation); 10-12 walk the
// flattened output, Triton's mapping; 13-14 do so with 4- and 8-byte vectors, for decode rows
// (16 x 14336: 0.90x torch.compile on the H100, whose kernel is 0.2 us shorter in ncu).
constexpr GatedConfig kGatedConfigs[] = {
    {256, 4},                  // 0
    {256, 2},                  // 1
    {128, 1},                  // 2
    {512, 2},                  // 3
    {128, 2},                  // 4
    {256, 1},                  // 5
    {512, 1},                  // 6
    {128, 1, true},            // 7
    {256, 1, true},            // 8
    {256, 2, true},            // 9
    {128, 1, false, true},     // 10
    {256, 1, false, true},     // 11
    {256, 2, false, true},     // 12
    {256, 1, false, true, 4},  // 13
    {128, 1, false, true, 8},  // 14
};
constexpr int kNumGatedConfigs = sizeof(kGatedConfigs) / sizeof(kGatedConfigs[0]);

// nvec: vectors of kVec elements a row. The flat kernel indexes output vectors in 32 bits:
// rows * nvec < 2^31 leaves the last CTA's indices (at most one chunk past the end) below 2^32.
template <GatedActivation kAct, class T, int kVec, int kConfig>
cudaError_t launch_gated_mul(const GatedMulArgs& a, int num_sms, cudaStream_t stream) {
  constexpr GatedConfig c = kGatedConfigs[kConfig];
  const std::int64_t nvec = a.cols / kVec;
  if (c.flat && a.rows > ((std::int64_t{1} << 31) - 1) / nvec) return cudaErrorInvalidValue;
  const GatedMulParams<T> p{static_cast<const T*>(a.x),
                            static_cast<T*>(a.y),
                            a.rows,
                            a.cols,
                            a.x_row_stride,
                            a.y_row_stride};
  const std::int64_t chunk = std::int64_t{c.threads} * c.vecs_per_thread;
  if constexpr (c.flat) {
    const auto ctas = static_cast<unsigned>((a.rows * nvec + chunk - 1) / chunk);
    gated_mul_flat_kernel<kAct, T, kVec, c.threads, c.vecs_per_thread>
        <<<ctas, c.threads, 0, stream>>>(p);
    return cudaSuccess;
  }
  const std::int64_t col_blocks = (nvec + chunk - 1) / chunk;
  // Enough CTAs for ~8 waves of the device; beyond that each CTA loops over rows.
  const std::int64_t want_rows =
      c.cta_per_row ? a.rows : std::max<std::int64_t>(1, std::int64_t{num_sms} * 64 / col_blocks);
  const std::int64_t grid_y = std::min<std::int64_t>({a.rows, want_rows, 65535});
  gated_mul_kernel<kAct, T, kVec, c.threads, c.vecs_per_thread>
      <<<dim3(static_cast<unsigned>(col_blocks), static_cast<unsigned>(grid_y)), c.threads, 0,
         stream>>>(p);
  return cudaSuccess;
}

// fn(std::integral_constant<GatedActivation, A>{}) for the call's activation A.
template <class Fn>
cudaError_t dispatch_activation(GatedActivation act, Fn&& fn) {
  using A = GatedActivation;
  switch (act) {
    case A::silu:
      return fn(std::integral_constant<A, A::silu>{});
    case A::gelu_tanh:
      return fn(std::integral_constant<A, A::gelu_tanh>{});
  }
  return cudaErrorInvalidValue;
}

}  // namespace

int gated_mul_num_configs() {
  return kNumGatedConfigs;
}

cudaError_t gated_mul_launch(const GatedMulArgs& a, cudaStream_t stream) {
  if (a.rows < 0 || a.cols <= 0 || a.x_row_stride < 2 * a.cols || a.y_row_stride < a.cols)
    return cudaErrorInvalidValue;
  if (a.config < -1 || a.config >= kNumGatedConfigs) return cudaErrorInvalidValue;
  if (a.rows == 0) return cudaSuccess;
  if (!a.x || !a.y) return cudaErrorInvalidValue;

  const int vec = vec_width(a.dtype);
  const bool vectorized = is_aligned16(a.x) && is_aligned16(a.y) && a.cols % vec == 0 &&
                          a.x_row_stride % vec == 0 && a.y_row_stride % vec == 0;
  const std::int64_t nvec = vectorized ? a.cols / vec : a.cols;
  if (nvec > (std::int64_t{1} << 40)) return cudaErrorInvalidValue;
  const int num_sms = std::max(1, current_sm_count());
  int config = a.config;
  if (config < 0) {
    // Little work: one vector per thread, so more CTAs share it; else two in flight each.
    // H200, bf16 16384 x 16384: 256 x 2 reached 97% of copy bandwidth, 256 x 4 only 81%.
    config = nvec * a.rows < std::int64_t{num_sms} * 256 * 4 ? 2 : 1;
  }

  const cudaError_t err = dispatch_activation(a.activation, [&](auto act) {
    return dispatch_dtype(a.dtype, [&](auto tag) {
      using T = decltype(tag);
      return dispatch_config<kNumGatedConfigs>(config, [&](auto cfg) {
        constexpr int kVec = std::max<int>(1, kGatedConfigs[cfg.value].vec_bytes / sizeof(T));
        if (vectorized) return launch_gated_mul<act.value, T, kVec, cfg.value>(a, num_sms, stream);
        return launch_gated_mul<act.value, T, 1, cfg.value>(a, num_sms, stream);
      });
    });
  });
  if (err != cudaSuccess) return err;
  return cudaGetLastError();
}

TS_REGISTER_KERNEL(cuda, silu_and_mul, "SiluAndMulFwdOp",
                   (run_launch<gated_mul_args<GatedActivation::silu>, gated_mul_launch>),
                   gated_mul_num_configs);

TS_REGISTER_KERNEL(cuda, gelu_tanh_and_mul, "GeluTanhAndMulFwdOp",
                   (run_launch<gated_mul_args<GatedActivation::gelu_tanh>, gated_mul_launch>),
                   gated_mul_num_configs);

}  // namespace ts::kernels
