// LayerNorm forward:  y[r, :] = (x[r, :] - mean) / sqrt(var + eps) * w + b    x, y [rows, cols]
//
// var is the biased (population) variance, as in torch.nn.functional.layer_norm. w and b are
// optional ([cols], nullptr: 1 and 0). Row stride in elements; fp32 accumulation; one dtype for
// x, w, b, y. Plain C++ header: safe to include without nvcc.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "common/dtype.hpp"
#include "common/kernel_call.hpp"

namespace ts::kernels {

struct LayerNormArgs {
  const void* x = nullptr;  // [rows, cols], row stride x_row_stride
  void* y = nullptr;        // [rows, cols], row stride y_row_stride
  const void* w = nullptr;  // [cols] or nullptr
  const void* b = nullptr;  // [cols] or nullptr
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int64_t x_row_stride = 0;
  std::int64_t y_row_stride = 0;
  float eps = 1e-5f;
  DType dtype = DType::bf16;
  int config = -1;  // index into kRowConfigs, then kPersistentConfigs (common/row_config.hpp,
                    // tuning candidates); -1: heuristic
};

cudaError_t layer_norm_launch(const LayerNormArgs& args, cudaStream_t stream);
int layer_norm_num_configs();
void layer_norm_reference(const LayerNormArgs& args);

/// The spec's call (inputs x [*B, N], weight [N]?, bias [N]?; output y; params eps) as Args.
inline std::optional<LayerNormArgs> layer_norm_args(const KernelCall& c) {
  if (!has_arity(c, 3, 1, 1)) return std::nullopt;
  auto a = row_args<LayerNormArgs>(c);
  if (a) {
    a->w = c.inputs[1].data;
    a->b = c.inputs[2].data;
    a->eps = static_cast<float>(c.params[0].real());
  }
  return a;
}

}  // namespace ts::kernels
