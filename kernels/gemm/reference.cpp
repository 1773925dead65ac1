// fp64 CPU reference for the GEMM over host pointers (the same Args as the launcher); d is
// rounded to the dtype the way the kernels round their fp32 accumulator.
#include <cstdint>
#include <vector>

#include "common/host_convert.hpp"
#include "gemm/gemm.hpp"

namespace ts::kernels {

void gemm_reference(const GemmArgs& g) {
  // Widen b once into [N][K] so the inner loop runs over contiguous doubles.
  std::vector<double> bt(static_cast<std::size_t>(g.N * g.K));
  for (std::int64_t n = 0; n < g.N; ++n)
    for (std::int64_t k = 0; k < g.K; ++k)
      bt[n * g.K + k] = load_element(g.b, g.dtype, g.trans_b ? n * g.ldb + k : k * g.ldb + n);
  std::vector<double> arow(static_cast<std::size_t>(g.K));
  for (std::int64_t m = 0; m < g.M; ++m) {
    for (std::int64_t k = 0; k < g.K; ++k)
      arow[k] = load_element(g.a, g.dtype, g.trans_a ? k * g.lda + m : m * g.lda + k);
    for (std::int64_t n = 0; n < g.N; ++n) {
      const double* brow = bt.data() + n * g.K;
      double acc = 0.0;
      for (std::int64_t k = 0; k < g.K; ++k) acc += arow[k] * brow[k];
      store_element(g.d, g.dtype, m * g.ldd + n, acc);
    }
  }
}

TS_REGISTER_KERNEL(reference, gemm, "GEMMFwdOp", (run_reference<gemm_args, gemm_reference>),
                   one_config);

}  // namespace ts::kernels
