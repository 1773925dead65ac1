// fp64 CPU reference for SiluAndMul over host pointers (the same Args as the launcher).
#include <cmath>
#include <cstdint>

#include "activation/silu_and_mul.hpp"
#include "common/host_convert.hpp"

namespace ts::kernels {

void silu_and_mul_reference(const SiluAndMulArgs& a) {
  for (std::int64_t r = 0; r < a.rows; ++r) {
    const std::int64_t xo = r * a.x_row_stride, yo = r * a.y_row_stride;
    for (std::int64_t c = 0; c < a.cols; ++c) {
      const double gate = load_element(a.x, a.dtype, xo + c);
      const double up = load_element(a.x, a.dtype, xo + a.cols + c);
      store_element(a.y, a.dtype, yo + c, gate / (1.0 + std::exp(-gate)) * up);
    }
  }
}

TS_REGISTER_KERNEL(reference, silu_and_mul, "SiluAndMulFwdOp",
                   (run_reference<silu_and_mul_args, silu_and_mul_reference>), one_config);

}  // namespace ts::kernels
