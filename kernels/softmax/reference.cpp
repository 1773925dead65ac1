// fp64 CPU reference for softmax over host pointers (the same Args as the launcher).
#include <cmath>
#include <cstdint>
#include <limits>

#include "common/host_convert.hpp"
#include "softmax/softmax.hpp"

namespace ts::kernels {

void softmax_reference(const SoftmaxArgs& a) {
  for (std::int64_t r = 0; r < a.rows; ++r) {
    const std::int64_t xo = r * a.x_row_stride, yo = r * a.y_row_stride;
    double max = -std::numeric_limits<double>::infinity();
    for (std::int64_t c = 0; c < a.cols; ++c)
      max = std::fmax(max, load_element(a.x, a.dtype, xo + c));
    double sum = 0.0;
    for (std::int64_t c = 0; c < a.cols; ++c)
      sum += std::exp(load_element(a.x, a.dtype, xo + c) - max);
    for (std::int64_t c = 0; c < a.cols; ++c)
      store_element(a.y, a.dtype, yo + c, std::exp(load_element(a.x, a.dtype, xo + c) - max) / sum);
  }
}

TS_REGISTER_KERNEL(reference, softmax, "SoftmaxFwdOp",
                   (run_reference<softmax_args, softmax_reference>), one_config);

}  // namespace ts::kernels
