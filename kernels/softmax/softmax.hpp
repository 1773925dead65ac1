// Softmax over the last dim:  y[r, c] = exp(x[r, c] - max_r) / sum_c' exp(x[r, c'] - max_r)
//
// x, y [rows, cols] row-major with row strides (elements); fp32 accumulation; cols up to 2^31.
// Rows that fit in registers (see common/row_config.hpp) are read once, and so are longer
// vectorized rows up to 128k bf16 / fp32 elements, split over the CTAs of a cluster; others
// take an online-softmax pass (running max and rescaled sum) and a write pass.
// A row of all -inf gives NaN, like torch. Plain C++ header: safe to include without nvcc.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "common/dtype.hpp"
#include "common/kernel_call.hpp"

namespace ts::kernels {

struct SoftmaxArgs {
  const void* x = nullptr;  // [rows, cols]
  void* y = nullptr;        // [rows, cols]; may alias x when the strides match
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int64_t x_row_stride = 0;
  std::int64_t y_row_stride = 0;
  DType dtype = DType::bf16;
  int config = -1;  // index into kRowConfigs, then the cluster configs; -1: heuristic
};

cudaError_t softmax_launch(const SoftmaxArgs& args, cudaStream_t stream);
int softmax_num_configs();
void softmax_reference(const SoftmaxArgs& args);

/// The spec's call (input x [*B, N]; output y [*B, N]) as Args.
inline std::optional<SoftmaxArgs> softmax_args(const KernelCall& c) {
  return has_arity(c, 1, 1, 0) ? row_args<SoftmaxArgs>(c) : std::nullopt;
}

}  // namespace ts::kernels
