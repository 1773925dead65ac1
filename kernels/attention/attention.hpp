// Scaled dot-product attention forward (FlashAttention-style), SDPA's layout and semantics:
//
//   o[b, h, i, :] = sum_j softmax_j(q[b, h, i, :] . k[b, g, j, :] * scale [+ mask]) v[b, g, j, :]
//   q, o [B, Hq, Sq, D]    k, v [B, Hkv, Skv, D]    g = h / (Hq / Hkv)   (grouped-query heads)
//
// Strides are in elements, index order (b, h, s, d); the last dim must be contiguous (stride 1).
// is_causal masks key j > query i (top-left aligned, as SDPA's is_causal). D is 64, 128 or 256;
// f16 or bf16 (the same for all four tensors); fp32 softmax and accumulation. scale == 0 means
// 1 / sqrt(D). Plain C++ header: safe to include without nvcc.
//
// Kernels: CuTe sm_90a kernels (wgmma for q k^T from shared memory and for p v with p in
// registers, online softmax in fp32; by default a TMA producer thread feeding two ping-pong
// consumer warpgroups) when every pointer is 16-byte aligned and every non-last stride is a
// multiple of 8; otherwise a one-warp-per-query CUDA-core kernel that is correct for any
// alignment but slow (attention_uses_tensor_cores()). Non-causal calls with few query rows
// (decode) run the query heads of each kv group as one head (attention_pack.hpp).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "common/dtype.hpp"
#include "common/kernel_call.hpp"

namespace ts::kernels {

struct AttentionArgs {
  const void* q = nullptr;  // [B, Hq, Sq, D]
  const void* k = nullptr;  // [B, Hkv, Skv, D]
  const void* v = nullptr;  // [B, Hkv, Skv, D]
  void* o = nullptr;        // [B, Hq, Sq, D]; must not alias q, k or v
  std::int64_t B = 0, Hq = 0, Hkv = 0, Sq = 0, Skv = 0, D = 0;
  std::int64_t q_strides[4] = {}, k_strides[4] = {}, v_strides[4] = {}, o_strides[4] = {};
  float scale = 0;  // softmax scale; 0: 1 / sqrt(D)
  bool is_causal = false;
  DType dtype = DType::bf16;  // f16 or bf16
  int config = -1;            // index into the tile configs (attention_config_name); -1: default
};

/// Enqueues the kernel on `stream`. cudaErrorInvalidValue for malformed args (unsupported D or
/// dtype, Hq not a multiple of Hkv, last stride != 1, negative scale); never throws, never
/// allocates. B, Hq or Sq == 0 is a no-op; Skv == 0 writes o = 0 (no keys), as SDPA does.
cudaError_t attention_launch(const AttentionArgs& args, cudaStream_t stream);

/// Number of tile configurations (valid values of AttentionArgs::config).
int attention_num_configs();

/// Human-readable name of config `config` for head dim `D` ("" when out of range).
const char* attention_config_name(int config, std::int64_t D);

/// True when `args` runs on the wgmma kernel, false when it takes the CUDA-core fallback.
bool attention_uses_tensor_cores(const AttentionArgs& args);

/// fp64 CPU reference over host pointers (same Args); writes o rounded to dtype.
void attention_reference(const AttentionArgs& args);

/// The spec's call (inputs q [B, Hq, Sq, D], k, v [B, Hkv, Skv, D]; output o [B, Hq, Sq, D];
/// params is_causal, scale: none is 1 / sqrt(D)) as Args.
inline std::optional<AttentionArgs> attention_args(const KernelCall& c) {
  if (!has_arity(c, 3, 1, 2)) return std::nullopt;
  const TensorArg &q = c.inputs[0], &k = c.inputs[1], &v = c.inputs[2], &o = c.outputs[0];
  const auto dtype = float_dtype(q);
  if (q.rank != 4 || k.rank != 4 || v.rank != 4 || o.rank != 4 || !dtype) return std::nullopt;
  AttentionArgs a;
  a.q = q.data;
  a.k = k.data;
  a.v = v.data;
  a.o = o.data;
  a.B = q.size(0);
  a.Hq = q.size(1);
  a.Sq = q.size(2);
  a.D = q.size(3);
  a.Hkv = k.size(1);
  a.Skv = k.size(2);
  for (int i = 0; i < 4; ++i) {
    a.q_strides[i] = q.strides[i];
    a.k_strides[i] = k.strides[i];
    a.v_strides[i] = v.strides[i];
    a.o_strides[i] = o.strides[i];
  }
  a.is_causal = c.params[0].boolean();
  a.scale = c.params[1].is_none() ? 0.0f : static_cast<float>(c.params[1].real());
  a.dtype = *dtype;
  a.config = c.config;
  return a;
}

}  // namespace ts::kernels
