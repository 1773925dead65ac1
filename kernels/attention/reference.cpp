// fp64 CPU reference for attention over host pointers (the same Args as the launcher): exact
// softmax per query row (max-subtracted), o rounded to the dtype.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "attention/attention.hpp"
#include "common/host_convert.hpp"

namespace ts::kernels {

void attention_reference(const AttentionArgs& a) {
  const double scale = a.scale > 0 ? a.scale : 1.0 / std::sqrt(static_cast<double>(a.D));
  const std::int64_t group = a.Hkv > 0 ? a.Hq / a.Hkv : 1;
  std::vector<double> s(static_cast<std::size_t>(a.Skv));
  std::vector<double> acc(static_cast<std::size_t>(a.D));
  for (std::int64_t b = 0; b < a.B; ++b) {
    for (std::int64_t h = 0; h < a.Hq; ++h) {
      const std::int64_t g = h / group;
      const std::int64_t qo = b * a.q_strides[0] + h * a.q_strides[1];
      const std::int64_t ko = b * a.k_strides[0] + g * a.k_strides[1];
      const std::int64_t vo = b * a.v_strides[0] + g * a.v_strides[1];
      const std::int64_t oo = b * a.o_strides[0] + h * a.o_strides[1];
      for (std::int64_t i = 0; i < a.Sq; ++i) {
        const std::int64_t keys = a.is_causal ? std::min(a.Skv, i + 1) : a.Skv;
        double mx = -std::numeric_limits<double>::infinity();
        for (std::int64_t j = 0; j < keys; ++j) {
          double dot = 0.0;
          for (std::int64_t d = 0; d < a.D; ++d)
            dot += load_element(a.q, a.dtype, qo + i * a.q_strides[2] + d * a.q_strides[3]) *
                   load_element(a.k, a.dtype, ko + j * a.k_strides[2] + d * a.k_strides[3]);
          s[j] = dot * scale;
          mx = std::max(mx, s[j]);
        }
        double sum = 0.0;
        for (std::int64_t j = 0; j < keys; ++j) {
          s[j] = std::exp(s[j] - mx);
          sum += s[j];
        }
        for (std::int64_t d = 0; d < a.D; ++d) acc[d] = 0.0;
        for (std::int64_t j = 0; j < keys; ++j) {
          const double p = s[j] / sum;
          for (std::int64_t d = 0; d < a.D; ++d)
            acc[d] += p * load_element(a.v, a.dtype, vo + j * a.v_strides[2] + d * a.v_strides[3]);
        }
        for (std::int64_t d = 0; d < a.D; ++d)
          store_element(a.o, a.dtype, oo + i * a.o_strides[2] + d * a.o_strides[3],
                        keys > 0 ? acc[d] : 0.0);
      }
    }
  }
}

TS_REGISTER_KERNEL(reference, attention, "MultiHeadAttentionFwdOp",
                   (run_reference<attention_args, attention_reference>), one_config);

}  // namespace ts::kernels
