// Launcher for attention: validates Args, takes the CuTe wgmma kernel when cp.async can move
// 16-byte chunks of every operand, the one-warp-per-query fallback otherwise.
#include "attention/attention.hpp"

#include <cmath>

#include "attention/attention_fallback.cuh"
#include "attention/attention_sm90.cuh"
#include "common/vec.cuh"

namespace ts::kernels {
namespace {

// Configs (AttentionArgs::config), per head dim. kBlockM is 128 (two warpgroups); kBlockN is
// 128, or 64 where named (D = 256 always uses 64: its O accumulator takes 128 registers).
//   0: overlapped kernel (softmax of block j+1 under the P V wgmma of block j), kBlockN 128
//   1: overlapped kernel, kBlockN 64
//   2: plain kernel (S, softmax, P V in sequence), kBlockN 128
//   3: plain kernel, kBlockN 64
constexpr int kNumAttnConfigs = 4;
constexpr const char* kAttnConfigNames[3][kNumAttnConfigs] = {
    {"D64 overlap 128x128", "D64 overlap 128x64", "D64 plain 128x128", "D64 plain 128x64"},
    {"D128 overlap 128x128", "D128 overlap 128x64", "D128 plain 128x128", "D128 plain 128x64"},
    {"D256 overlap 128x64", "D256 overlap 128x64 (as 0)", "D256 plain 128x64",
     "D256 plain 128x64 (as 2)"}};

constexpr std::int64_t kMaxInt = (std::int64_t{1} << 31) - 1;

bool valid(const AttentionArgs& a) {
  if (a.dtype != DType::f16 && a.dtype != DType::bf16) return false;
  if (a.D != 64 && a.D != 128 && a.D != 256) return false;
  if (a.B < 0 || a.Hq < 0 || a.Hkv < 1 || a.Sq < 0 || a.Skv < 0) return false;
  if (a.Hq % a.Hkv != 0) return false;
  if (a.Sq > 0 && a.Skv == 0 && a.B > 0 && a.Hq > 0) return false;
  if (a.B > 65535 || a.Hq > 65535 || a.Sq > kMaxInt || a.Skv > kMaxInt) return false;
  if (!(a.scale >= 0.f) || !std::isfinite(a.scale)) return false;
  if (a.config < -1 || a.config >= kNumAttnConfigs) return false;
  if (a.q_strides[3] != 1 || a.k_strides[3] != 1 || a.v_strides[3] != 1 || a.o_strides[3] != 1)
    return false;
  return true;
}

bool tensor_core_path(const AttentionArgs& a) {
  if (!is_aligned16(a.q) || !is_aligned16(a.k) || !is_aligned16(a.v) || !is_aligned16(a.o))
    return false;
  for (int i = 0; i < 3; ++i)
    if (a.q_strides[i] % 8 || a.k_strides[i] % 8 || a.v_strides[i] % 8 || a.o_strides[i] % 8)
      return false;
  return true;
}

template <class Traits, bool kOverlap>
cudaError_t launch_sm90(const AttentionArgs& a, float scale, cudaStream_t stream) {
  attn::AttnParams p{};
  p.q = a.q;
  p.k = a.k;
  p.v = a.v;
  p.o = a.o;
  for (int i = 0; i < 3; ++i) {
    p.q_stride[i] = a.q_strides[i];
    p.k_stride[i] = a.k_strides[i];
    p.v_stride[i] = a.v_strides[i];
    p.o_stride[i] = a.o_strides[i];
  }
  p.Hq = static_cast<int>(a.Hq);
  p.group = static_cast<int>(a.Hq / a.Hkv);
  p.Sq = static_cast<int>(a.Sq);
  p.Skv = static_cast<int>(a.Skv);
  p.scale_log2 = scale * 1.4426950408889634f;
  p.causal = a.is_causal;
  auto kernel = kOverlap ? attn::attention_kernel_overlap<Traits> : attn::attention_kernel<Traits>;
  // Raise the dynamic shared-memory limit once per instantiation (thread-safe static init).
  static const cudaError_t attr_err =
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Traits::kSmemBytes);
  if (attr_err != cudaSuccess) return attr_err;
  const dim3 grid(static_cast<unsigned>((a.Sq + Traits::kBlockM - 1) / Traits::kBlockM),
                  static_cast<unsigned>(a.Hq), static_cast<unsigned>(a.B));
  kernel<<<grid, Traits::kThreads, Traits::kSmemBytes, stream>>>(p);
  return cudaGetLastError();
}

template <class T, int kHeadDim, int kBlockN>
cudaError_t launch_variant(const AttentionArgs& a, bool overlap, float scale, cudaStream_t stream) {
  using Traits = attn::AttnTraits<T, kHeadDim, 128, kBlockN, 2>;
  return overlap ? launch_sm90<Traits, true>(a, scale, stream)
                 : launch_sm90<Traits, false>(a, scale, stream);
}

template <class T>
cudaError_t dispatch_sm90(const AttentionArgs& a, int config, float scale, cudaStream_t stream) {
  const bool overlap = config < 2, wide = config % 2 == 0;
  switch (a.D) {
    case 64:
      return wide ? launch_variant<T, 64, 128>(a, overlap, scale, stream)
                  : launch_variant<T, 64, 64>(a, overlap, scale, stream);
    case 128:
      return wide ? launch_variant<T, 128, 128>(a, overlap, scale, stream)
                  : launch_variant<T, 128, 64>(a, overlap, scale, stream);
    case 256:
      return launch_variant<T, 256, 64>(a, overlap, scale, stream);
  }
  return cudaErrorInvalidValue;
}

template <class T>
cudaError_t launch_fallback(const AttentionArgs& a, float scale, cudaStream_t stream) {
  attn::AttnFallbackParams p{};
  p.q = a.q;
  p.k = a.k;
  p.v = a.v;
  p.o = a.o;
  for (int i = 0; i < 4; ++i) {
    p.q_stride[i] = a.q_strides[i];
    p.k_stride[i] = a.k_strides[i];
    p.v_stride[i] = a.v_strides[i];
    p.o_stride[i] = a.o_strides[i];
  }
  p.B = a.B;
  p.Hq = a.Hq;
  p.Sq = a.Sq;
  p.Skv = a.Skv;
  p.group = a.Hq / a.Hkv;
  p.scale = scale;
  p.causal = a.is_causal;
  const dim3 grid(static_cast<unsigned>((a.Sq + attn::kFallbackWarps - 1) / attn::kFallbackWarps),
                  static_cast<unsigned>(a.Hq), static_cast<unsigned>(a.B));
  if (grid.x == 0 || (a.Sq + attn::kFallbackWarps - 1) / attn::kFallbackWarps > kMaxInt)
    return cudaErrorInvalidValue;
  switch (a.D) {
    case 64:
      attn::attention_fallback_kernel<T, 64><<<grid, attn::kFallbackWarps * 32, 0, stream>>>(p);
      break;
    case 128:
      attn::attention_fallback_kernel<T, 128><<<grid, attn::kFallbackWarps * 32, 0, stream>>>(p);
      break;
    case 256:
      attn::attention_fallback_kernel<T, 256><<<grid, attn::kFallbackWarps * 32, 0, stream>>>(p);
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace

int attention_num_configs() {
  return kNumAttnConfigs;
}

const char* attention_config_name(int config, std::int64_t D) {
  if (config < 0 || config >= kNumAttnConfigs) return "";
  const int d = D == 64 ? 0 : D == 128 ? 1 : D == 256 ? 2 : -1;
  return d < 0 ? "" : kAttnConfigNames[d][config];
}

bool attention_uses_tensor_cores(const AttentionArgs& a) {
  return valid(a) && tensor_core_path(a);
}

cudaError_t attention_launch(const AttentionArgs& a, cudaStream_t stream) {
  if (!valid(a)) return cudaErrorInvalidValue;
  if (a.B == 0 || a.Hq == 0 || a.Sq == 0) return cudaSuccess;
  if (!a.q || !a.k || !a.v || !a.o) return cudaErrorInvalidValue;
  const float scale = a.scale > 0.f ? a.scale : 1.f / std::sqrt(static_cast<float>(a.D));
  const int config = a.config >= 0 ? a.config : 0;
  if (tensor_core_path(a)) {
    return a.dtype == DType::f16 ? dispatch_sm90<cutlass::half_t>(a, config, scale, stream)
                                 : dispatch_sm90<cutlass::bfloat16_t>(a, config, scale, stream);
  }
  return a.dtype == DType::f16 ? launch_fallback<__half>(a, scale, stream)
                               : launch_fallback<__nv_bfloat16>(a, scale, stream);
}

}  // namespace ts::kernels
