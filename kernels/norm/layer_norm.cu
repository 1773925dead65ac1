// Launcher for LayerNorm: validates Args, picks vector width and row config, launches.
#include "norm/layer_norm.hpp"

#include "common/dispatch.cuh"
#include "norm/layer_norm.cuh"

namespace ts::kernels {
namespace {

template <class T>
LayerNormParams<T> params_of(const LayerNormArgs& a) {
  return {static_cast<const T*>(a.x),
          static_cast<T*>(a.y),
          static_cast<const T*>(a.w),
          static_cast<const T*>(a.b),
          a.rows,
          a.cols,
          a.x_row_stride,
          a.y_row_stride,
          a.eps};
}

template <class T, int kVec, int kConfig, bool kPrefetchWeights>
void launch_layer_norm(const LayerNormArgs& a, cudaStream_t stream) {
  constexpr RowConfig c = kRowConfigs[kConfig];
  const auto grid = static_cast<unsigned>((a.rows + c.rows_per_cta - 1) / c.rows_per_cta);
  layer_norm_kernel<T, kVec, c.warps_per_row, c.rows_per_cta, c.vecs_per_thread, kPrefetchWeights>
      <<<grid, c.threads_per_cta(), 0, stream>>>(params_of<T>(a));
}

template <class T, int kConfig>
void launch_layer_norm_persistent(const LayerNormArgs& a, cudaStream_t stream) {
  constexpr PersistentConfig c = kPersistentConfigs[kConfig];
  launch_persistent<&layer_norm_persistent_kernel<T, 16 / sizeof(T), c.threads, c.vecs_per_thread>,
                    c.threads>(params_of<T>(a), a.rows, stream);
}

}  // namespace

int layer_norm_num_configs() {
  return kNumNormConfigs;
}

cudaError_t layer_norm_launch(const LayerNormArgs& a, cudaStream_t stream) {
  if (a.rows < 0 || a.cols <= 0 || a.x_row_stride < a.cols || a.y_row_stride < a.cols)
    return cudaErrorInvalidValue;
  if (a.config < -1 || a.config >= layer_norm_num_configs()) return cudaErrorInvalidValue;
  if (a.rows == 0) return cudaSuccess;
  if (!a.x || !a.y) return cudaErrorInvalidValue;
  if (a.rows > (std::int64_t{1} << 31) - 1) return cudaErrorInvalidValue;

  const int vec = vec_width(a.dtype);
  const bool vectorized = is_aligned16(a.x) && is_aligned16(a.y) && is_aligned16(a.w) &&
                          is_aligned16(a.b) && a.x_row_stride % vec == 0 &&
                          a.y_row_stride % vec == 0;
  const std::int64_t row_vecs = vectorized ? a.cols / vec : a.cols;
  const int config =
      a.config >= 0 ? a.config : pick_row_config(a.rows, row_vecs, current_sm_count());

  return dispatch_row_kernel(
      a.dtype, config, vectorized, a.cols,
      [&](auto tag, auto width, auto cfg, auto prefetch) {
        launch_layer_norm<decltype(tag), width.value, cfg.value, prefetch.value>(a, stream);
      },
      [&](auto tag, auto cfg) {
        launch_layer_norm_persistent<decltype(tag), cfg.value>(a, stream);
      });
}

TS_REGISTER_KERNEL(cuda, layer_norm, "LayerNormFwdOp",
                   (run_launch<layer_norm_args, layer_norm_launch>), layer_norm_num_configs);

}  // namespace ts::kernels
