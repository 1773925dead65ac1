// RMSNorm forward:  y[r, :] = x[r, :] / sqrt(mean(x[r, :]^2) + eps) * w      x, y [rows, cols]
//
// Row-major with a row stride (elements between consecutive rows), last dim contiguous; fp32
// accumulation; x, w and y share one dtype. Plain C++ header: safe to include without nvcc.
//
//   ts::kernels::RmsNormArgs a{.x = x, .y = y, .w = w, .rows = m, .cols = n,
//                              .x_row_stride = n, .y_row_stride = n, .dtype = DType::bf16};
//   cudaError_t err = ts::kernels::rms_norm_launch(a, stream);
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "common/dtype.hpp"
#include "common/kernel_call.hpp"

namespace ts::kernels {

struct RmsNormArgs {
  const void* x = nullptr;  // [rows, cols], row stride x_row_stride
  void* y = nullptr;        // [rows, cols], row stride y_row_stride; may alias x when strides match
  const void* w = nullptr;  // [cols]
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int64_t x_row_stride = 0;  // elements, >= cols
  std::int64_t y_row_stride = 0;  // elements, >= cols
  float eps = 1e-6f;
  DType dtype = DType::bf16;
  int config = -1;  // index into kRowConfigs, then kPersistentConfigs (common/row_config.hpp,
                    // tuning candidates); -1: heuristic
};

/// Enqueues the kernel on `stream`. cudaErrorInvalidValue for malformed args; never throws,
/// never allocates. rows == 0 is a no-op.
cudaError_t rms_norm_launch(const RmsNormArgs& args, cudaStream_t stream);

/// Number of launch configurations (valid values of RmsNormArgs::config).
int rms_norm_num_configs();

/// fp64 CPU reference over host pointers (same Args); writes y rounded to dtype.
void rms_norm_reference(const RmsNormArgs& args);

/// The spec's call (inputs x [*B, N], weight [N]; output y [*B, N]; params eps) as Args; nullopt
/// when x's or y's leading dims do not collapse into one row stride.
inline std::optional<RmsNormArgs> rms_norm_args(const KernelCall& c) {
  if (!has_arity(c, 2, 1, 1)) return std::nullopt;
  auto a = row_args<RmsNormArgs>(c);
  if (a) {
    a->w = c.inputs[1].data;
    a->eps = static_cast<float>(c.params[0].real());
  }
  return a;
}

}  // namespace ts::kernels
