// fp64 CPU references for RMSNorm and LayerNorm over host pointers (the same Args as the
// launchers). Outputs are rounded to the dtype the way the kernels round them.
#include <cmath>
#include <cstdint>

#include "common/host_convert.hpp"
#include "norm/layer_norm.hpp"
#include "norm/rms_norm.hpp"

namespace ts::kernels {

void rms_norm_reference(const RmsNormArgs& a) {
  for (std::int64_t r = 0; r < a.rows; ++r) {
    const std::int64_t xo = r * a.x_row_stride, yo = r * a.y_row_stride;
    double sum_sq = 0.0;
    for (std::int64_t c = 0; c < a.cols; ++c) {
      const double v = load_element(a.x, a.dtype, xo + c);
      sum_sq += v * v;
    }
    const double inv_rms = 1.0 / std::sqrt(sum_sq / static_cast<double>(a.cols) + a.eps);
    for (std::int64_t c = 0; c < a.cols; ++c) {
      const double v = load_element(a.x, a.dtype, xo + c) * inv_rms * load_element(a.w, a.dtype, c);
      store_element(a.y, a.dtype, yo + c, v);
    }
  }
}

void layer_norm_reference(const LayerNormArgs& a) {
  for (std::int64_t r = 0; r < a.rows; ++r) {
    const std::int64_t xo = r * a.x_row_stride, yo = r * a.y_row_stride;
    double sum = 0.0;
    for (std::int64_t c = 0; c < a.cols; ++c) sum += load_element(a.x, a.dtype, xo + c);
    const double mean = sum / static_cast<double>(a.cols);
    double sum_dev = 0.0;
    for (std::int64_t c = 0; c < a.cols; ++c) {
      const double d = load_element(a.x, a.dtype, xo + c) - mean;
      sum_dev += d * d;
    }
    const double inv_std = 1.0 / std::sqrt(sum_dev / static_cast<double>(a.cols) + a.eps);
    for (std::int64_t c = 0; c < a.cols; ++c) {
      double v = (load_element(a.x, a.dtype, xo + c) - mean) * inv_std;
      if (a.w) v *= load_element(a.w, a.dtype, c);
      if (a.b) v += load_element(a.b, a.dtype, c);
      store_element(a.y, a.dtype, yo + c, v);
    }
  }
}

TS_REGISTER_KERNEL(reference, rms_norm, "RMSNormFwdOp",
                   (run_reference<rms_norm_args, rms_norm_reference>), one_config);
TS_REGISTER_KERNEL(reference, layer_norm, "LayerNormFwdOp",
                   (run_reference<layer_norm_args, layer_norm_reference>), one_config);

}  // namespace ts::kernels
