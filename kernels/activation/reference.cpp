// fp64 CPU reference of the gated multiplies over host pointers (the same Args as the launcher).
#include <cmath>
#include <cstdint>
#include <numbers>

#include "activation/gated_mul.hpp"
#include "common/host_convert.hpp"

namespace ts::kernels {

namespace {

double activate(GatedActivation act, double g) {
  switch (act) {
    case GatedActivation::silu:
      return g / (1.0 + std::exp(-g));
    case GatedActivation::gelu_tanh:
      return 0.5 * g *
             (1.0 + std::tanh(std::sqrt(2.0 / std::numbers::pi) * (g + 0.044715 * g * g * g)));
  }
  return g;
}

}  // namespace

void gated_mul_reference(const GatedMulArgs& a) {
  for (std::int64_t r = 0; r < a.rows; ++r) {
    const std::int64_t xo = r * a.x_row_stride, yo = r * a.y_row_stride;
    for (std::int64_t c = 0; c < a.cols; ++c) {
      const double gate = load_element(a.x, a.dtype, xo + c);
      const double up = load_element(a.x, a.dtype, xo + a.cols + c);
      store_element(a.y, a.dtype, yo + c, activate(a.activation, gate) * up);
    }
  }
}

TS_REGISTER_KERNEL(reference, silu_and_mul, "SiluAndMulFwdOp",
                   (run_reference<gated_mul_args<GatedActivation::silu>, gated_mul_reference>),
                   one_config);

TS_REGISTER_KERNEL(reference, gelu_tanh_and_mul, "GeluTanhAndMulFwdOp",
                   (run_reference<gated_mul_args<GatedActivation::gelu_tanh>, gated_mul_reference>),
                   one_config);

}  // namespace ts::kernels
