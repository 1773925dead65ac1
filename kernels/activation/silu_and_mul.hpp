// SiluAndMul (the SwiGLU gate):  y[r, c] = silu(x[r, c]) * x[r, cols + c],  silu(v) = v / (1 +
// e^-v)
//
// x [rows, 2 * cols] (gate half then up half), y [rows, cols]; row strides in elements; fp32
// math; one dtype for x and y. Plain C++ header: safe to include without nvcc.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "common/dtype.hpp"
#include "common/kernel_call.hpp"

namespace ts::kernels {

struct SiluAndMulArgs {
  const void* x = nullptr;  // [rows, 2 * cols], row stride x_row_stride (>= 2 * cols)
  void* y = nullptr;        // [rows, cols], row stride y_row_stride (>= cols)
  std::int64_t rows = 0;
  std::int64_t cols = 0;  // output width N (input width is 2N)
  std::int64_t x_row_stride = 0;
  std::int64_t y_row_stride = 0;
  DType dtype = DType::bf16;
  int config = -1;  // index into silu_and_mul configs; -1: heuristic
};

cudaError_t silu_and_mul_launch(const SiluAndMulArgs& args, cudaStream_t stream);
int silu_and_mul_num_configs();
void silu_and_mul_reference(const SiluAndMulArgs& args);

/// The spec's call (input x [*B, 2N]; output y [*B, N]) as Args.
inline std::optional<SiluAndMulArgs> silu_and_mul_args(const KernelCall& c) {
  return has_arity(c, 1, 1, 0) ? row_args<SiluAndMulArgs>(c) : std::nullopt;
}

}  // namespace ts::kernels
