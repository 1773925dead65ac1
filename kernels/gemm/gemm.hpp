// Dense matrix product  d[M, N] = op(a)[M, K] @ op(b)[K, N]   (fp32 accumulation)
//
// a is stored [M, K] row-major, or [K, M] when trans_a; b is stored [K, N], or [N, K] when
// trans_b (the default: d = a @ b.T, as nn.Linear stores its weight). d is [M, N] row-major.
// Leading dims are in elements (the row stride of each stored matrix). a, b and d share one
// dtype (f16 or bf16). Plain C++ header: safe to include without nvcc.
//
//   ts::kernels::GemmArgs g{.a = x, .b = w, .d = y, .M = m, .N = n, .K = k,
//                           .lda = k, .ldb = k, .ldd = n};          // y = x @ w.T
//   cudaError_t err = ts::kernels::gemm_launch(g, stream);
//
// Kernels: CUTLASS 3 sm_90a (TMA + warp-specialized wgmma) when every pointer is 16-byte
// aligned and every leading dim and contiguous extent is a multiple of 8 elements (TMA's
// 16-byte rule); otherwise a plain tiled CUDA-core kernel that is correct for any shape and
// stride but an order of magnitude slower (gemm_uses_tensor_cores() says which one runs). Decode
// shapes (M <= 16, b stored [N, K], K % 8 == 0) take an mma.sync kernel that streams b.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "common/dtype.hpp"
#include "common/kernel_call.hpp"

namespace ts::kernels {

struct GemmArgs {
  const void* a = nullptr;  // [M, K] (lda), or [K, M] when trans_a
  const void* b = nullptr;  // [K, N] (ldb), or [N, K] when trans_b
  void* d = nullptr;        // [M, N] (ldd); must not alias a or b
  std::int64_t M = 0, N = 0, K = 0;
  std::int64_t lda = 0, ldb = 0, ldd = 0;  // elements between consecutive stored rows
  bool trans_a = false;
  bool trans_b = true;
  DType dtype = DType::bf16;  // f16 or bf16
  int config = -1;            // a tensor-core config (gemm_config_name); -1: heuristic
};

/// Enqueues the product on `stream`. cudaErrorInvalidValue for malformed args (f32, leading dim
/// smaller than the stored row, null pointers); never throws, never allocates. M or N == 0 is
/// a no-op; K == 0 writes zeros.
cudaError_t gemm_launch(const GemmArgs& args, cudaStream_t stream);

/// Number of tensor-core launch configurations (valid values of GemmArgs::config): the CUTLASS
/// table (gemm/gemm_configs.hpp), then the decode-shape kernel (M <= 16, trans_b;
/// gemm/gemm_skinny.cuh; the default where it serves). Shapes a config cannot serve run
/// elsewhere: a CUTLASS config's on the fallback, the decode kernel's as with config -1.
int gemm_num_configs();

/// Human-readable name of config `config` (tile, cluster, schedule), "" when out of range.
const char* gemm_config_name(int config);

/// True when `args` runs on tensor cores (CUTLASS or the decode-shape kernel), false when it
/// takes the CUDA-core fallback.
bool gemm_uses_tensor_cores(const GemmArgs& args);

/// The config gemm_launch uses for `args` with config == -1 on a device with `num_sms`
/// multiprocessors: the decode-shape kernel where it serves, else the CUTLASS heuristic's.
int gemm_default_config(const GemmArgs& args, int num_sms);

/// fp64 CPU reference over host pointers (same Args); writes d rounded to dtype.
void gemm_reference(const GemmArgs& args);

/// The spec's call (inputs a, b stored row-major, [M, K] / [K, N] or transposed per the params
/// trans_a, trans_b; output d [M, N]) as Args. A single stored row's stride is its length.
inline std::optional<GemmArgs> gemm_args(const KernelCall& c) {
  if (!has_arity(c, 2, 1, 2)) return std::nullopt;
  const TensorArg &a = c.inputs[0], &b = c.inputs[1], &d = c.outputs[0];
  const auto dtype = float_dtype(a);
  if (a.rank != 2 || b.rank != 2 || d.rank != 2 || !dtype) return std::nullopt;
  auto leading = [](const TensorArg& t) {
    return t.size(0) <= 1 ? std::max<std::int64_t>(t.size(1), 1) : t.stride(0);
  };
  GemmArgs g;
  g.a = a.data;
  g.b = b.data;
  g.d = d.data;
  g.trans_a = c.params[0].boolean();
  g.trans_b = c.params[1].boolean();
  g.M = d.size(0);
  g.N = d.size(1);
  g.K = g.trans_a ? a.size(0) : a.size(1);
  g.lda = leading(a);
  g.ldb = leading(b);
  g.ldd = leading(d);
  g.dtype = *dtype;
  g.config = c.config;
  return g;
}

}  // namespace ts::kernels
