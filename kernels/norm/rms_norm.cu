// Launcher for RMSNorm: validates Args, picks vector width and row config, launches.
#include "norm/rms_norm.hpp"

#include <algorithm>

#include "common/dispatch.cuh"
#include "norm/rms_norm.cuh"

namespace ts::kernels {
namespace {

template <class T>
RmsNormParams<T> params_of(const RmsNormArgs& a) {
  return {static_cast<const T*>(a.x),
          static_cast<T*>(a.y),
          static_cast<const T*>(a.w),
          a.rows,
          a.cols,
          a.x_row_stride,
          a.y_row_stride,
          a.eps};
}

template <class T, int kVec, int kConfig>
void launch_rms_norm(const RmsNormArgs& a, cudaStream_t stream) {
  constexpr RowConfig c = kRowConfigs[kConfig];
  const RmsNormParams<T> p = params_of<T>(a);
  const auto grid = static_cast<unsigned>((a.rows + c.rows_per_cta - 1) / c.rows_per_cta);
  rms_norm_kernel<T, kVec, c.warps_per_row, c.rows_per_cta, c.vecs_per_thread>
      <<<grid, c.threads_per_cta(), 0, stream>>>(p);
}

// Persistent configs (rms_norm_persistent_kernel), tuning indices kNumRowConfigs + i; never the
// default until measured. A row of up to threads * vecs_per_thread whole vectors.
struct PersistentConfig {
  int threads;
  int vecs_per_thread;
};
constexpr PersistentConfig kPersistentConfigs[] = {{128, 4}, {256, 2}, {256, 4}, {512, 2}};
constexpr int kNumPersistentConfigs = sizeof(kPersistentConfigs) / sizeof(kPersistentConfigs[0]);

template <class T, int kConfig>
cudaError_t launch_rms_norm_persistent(const RmsNormArgs& a, cudaStream_t stream) {
  constexpr PersistentConfig c = kPersistentConfigs[kConfig];
  constexpr int kVec = 16 / sizeof(T);
  auto* kernel = &rms_norm_persistent_kernel<T, kVec, c.threads, c.vecs_per_thread>;
  // As many CTAs as can be resident at once: each then walks rows (occupancy read once).
  static const int per_sm = [&] {
    int n = 0;
    return cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernel, c.threads, 0) == cudaSuccess
               ? n
               : 1;
  }();
  const std::int64_t resident = std::int64_t{std::max(1, per_sm)} * std::max(1, current_sm_count());
  const auto grid = static_cast<unsigned>(std::min(a.rows, resident));
  const RmsNormParams<T> p = params_of<T>(a);
  kernel<<<grid, c.threads, 0, stream>>>(p);
  return cudaSuccess;
}

}  // namespace

int rms_norm_num_configs() {
  return kNumRowConfigs + kNumPersistentConfigs;
}

cudaError_t rms_norm_launch(const RmsNormArgs& a, cudaStream_t stream) {
  if (a.rows < 0 || a.cols <= 0 || a.x_row_stride < a.cols || a.y_row_stride < a.cols)
    return cudaErrorInvalidValue;
  if (a.config < -1 || a.config >= rms_norm_num_configs()) return cudaErrorInvalidValue;
  if (a.rows == 0) return cudaSuccess;
  if (!a.x || !a.y || !a.w) return cudaErrorInvalidValue;
  if (a.rows > (std::int64_t{1} << 31) - 1) return cudaErrorInvalidValue;

  const int vec = vec_width(a.dtype);
  const bool vectorized = is_aligned16(a.x) && is_aligned16(a.y) && is_aligned16(a.w) &&
                          a.x_row_stride % vec == 0 && a.y_row_stride % vec == 0;
  const std::int64_t row_vecs = vectorized ? a.cols / vec : a.cols;
  const int config =
      a.config >= 0 ? a.config : pick_row_config(a.rows, row_vecs, current_sm_count());

  const cudaError_t err = dispatch_dtype(a.dtype, [&](auto tag) {
    using T = decltype(tag);
    if (config >= kNumRowConfigs) {  // persistent: whole-vector rows that fit, else not served
      const PersistentConfig c = kPersistentConfigs[config - kNumRowConfigs];
      if (!vectorized || a.cols % vec != 0 ||
          row_vecs > std::int64_t{c.threads} * c.vecs_per_thread)
        return cudaErrorInvalidValue;
      return dispatch_config<kNumPersistentConfigs>(config - kNumRowConfigs, [&](auto cfg) {
        return launch_rms_norm_persistent<T, cfg.value>(a, stream);
      });
    }
    return dispatch_row_config(config, [&](auto cfg) {
      if (vectorized)
        launch_rms_norm<T, 16 / sizeof(T), cfg.value>(a, stream);
      else
        launch_rms_norm<T, 1, cfg.value>(a, stream);
      return cudaSuccess;
    });
  });
  if (err != cudaSuccess) return err;
  return cudaGetLastError();
}

}  // namespace ts::kernels
