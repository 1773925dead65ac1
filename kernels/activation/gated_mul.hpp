// Gated multiplies (the GLU family):  y[r, c] = act(x[r, c]) * x[r, cols + c]
//   silu:       act(v) = v / (1 + e^-v)                     SwiGLU's gate (SiluAndMulFwdOp)
//   gelu_tanh:  act(v) = v / (1 + e^(-2 u)),                GeGLU's gate (GeluTanhAndMulFwdOp)
//               u = sqrt(2 / pi) (v + 0.044715 v^3)         (= 0.5 v (1 + tanh(u)))
//
// x [rows, 2 * cols] (gate half then up half), y [rows, cols]; row strides in elements; fp32
// math; one dtype for x and y. Plain C++ header: safe to include without nvcc.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "common/dtype.hpp"
#include "common/kernel_call.hpp"

namespace ts::kernels {

enum class GatedActivation : int { silu, gelu_tanh };

struct GatedMulArgs {
  const void* x = nullptr;  // [rows, 2 * cols], row stride x_row_stride (>= 2 * cols)
  void* y = nullptr;        // [rows, cols], row stride y_row_stride (>= cols)
  std::int64_t rows = 0;
  std::int64_t cols = 0;  // output width N (input width is 2N)
  std::int64_t x_row_stride = 0;
  std::int64_t y_row_stride = 0;
  DType dtype = DType::bf16;
  int config = -1;  // index into the gated_mul configs; -1: heuristic
  GatedActivation activation = GatedActivation::silu;
};

cudaError_t gated_mul_launch(const GatedMulArgs& args, cudaStream_t stream);
int gated_mul_num_configs();
void gated_mul_reference(const GatedMulArgs& args);

/// A spec call of a gated multiply (input x [*B, 2N]; output y [*B, N]) as Args.
template <GatedActivation kActivation>
std::optional<GatedMulArgs> gated_mul_args(const KernelCall& c) {
  auto a = has_arity(c, 1, 1, 0) ? row_args<GatedMulArgs>(c) : std::nullopt;
  if (a) a->activation = kActivation;
  return a;
}

}  // namespace ts::kernels
