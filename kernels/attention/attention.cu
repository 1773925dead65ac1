// Launcher for attention: validates Args, takes the CuTe wgmma kernel when cp.async can move
// 16-byte chunks of every operand, the one-warp-per-query fallback otherwise.
#include "attention/attention.hpp"

#include <cmath>

#include "attention/attention_fallback.cuh"
#include "attention/attention_sm90.cuh"
#include "common/vec.cuh"

namespace ts::kernels {
namespace {

// Configs (AttentionArgs::config). kBlockM is 128 everywhere; kBlockN 128 or 64 as named
// (D = 256 always uses 64 and the plain kernel: its O accumulator alone takes 128 registers).
//   0: plain (S, softmax, P V in sequence; all warps copy), 128 x 128   (default; fastest on H200)
//   1: plain, 128 x 64
//   2: overlapped (softmax of block j+1 under the P V wgmma of block j), 128 x 128
//   3: overlapped, 128 x 64
//   4: warp-specialized (cp.async producer warpgroup, two ping-pong consumers), 128 x 128, 2 stages
//   5: warp-specialized, 128 x 64, 3 stages
// 2-5 are kept for measurement. ptxas -v (nvcc 13.0, this tree): at D = 128, 2 spills 140 bytes
// (255 registers); 4/5 compile to 168 registers at entry (65536 / 384 threads) with no spills,
// the consumers taking 240 after setmaxnreg, so their slower timing is not register pressure.
constexpr int kNumAttnConfigs = 6;
constexpr const char* kAttnConfigNames[kNumAttnConfigs] = {"plain 128x128",
                                                           "plain 128x64",
                                                           "overlapped 128x128",
                                                           "overlapped 128x64",
                                                           "warp-specialized 128x128 2 stages",
                                                           "warp-specialized 128x64 3 stages"};

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

enum class Variant { plain, overlap, warp_specialized };

template <class Traits, Variant kVariant>
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
  constexpr bool kWs = kVariant == Variant::warp_specialized;
  void (*kernel)(const attn::AttnParams) = nullptr;
  if constexpr (kWs)
    kernel = attn::attention_kernel_ws<Traits>;
  else if constexpr (kVariant == Variant::overlap)
    kernel = attn::attention_kernel_overlap<Traits>;
  else
    kernel = attn::attention_kernel<Traits>;
  constexpr int kSmem = kWs ? attn::WsShared<Traits>::kBytes : Traits::kSmemBytes;
  constexpr int kThreads = kWs ? attn::kWsThreads : Traits::kThreads;
  // Raise the dynamic shared-memory limit once per instantiation (thread-safe static init).
  static const cudaError_t attr_err =
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem);
  if (attr_err != cudaSuccess) return attr_err;
  const dim3 grid(static_cast<unsigned>((a.Sq + Traits::kBlockM - 1) / Traits::kBlockM),
                  static_cast<unsigned>(a.Hq), static_cast<unsigned>(a.B));
  kernel<<<grid, kThreads, kSmem, stream>>>(p);
  return cudaGetLastError();
}

template <class T, int kHeadDim, int kBlockN, int kStages>
cudaError_t launch_variant(const AttentionArgs& a, Variant variant, float scale,
                           cudaStream_t stream) {
  using Traits = attn::AttnTraits<T, kHeadDim, 128, kBlockN, kStages>;
  switch (variant) {
    case Variant::warp_specialized:
      return launch_sm90<Traits, Variant::warp_specialized>(a, scale, stream);
    case Variant::overlap:
      if constexpr (kStages == 2) return launch_sm90<Traits, Variant::overlap>(a, scale, stream);
      break;
    case Variant::plain:
      return launch_sm90<Traits, Variant::plain>(a, scale, stream);
  }
  return cudaErrorInvalidValue;
}

template <class T>
cudaError_t dispatch_sm90(const AttentionArgs& a, int config, float scale, cudaStream_t stream) {
  const bool wide = config % 2 == 0;
  const Variant variant = config < 2   ? Variant::plain
                          : config < 4 ? Variant::overlap
                                       : Variant::warp_specialized;
  switch (a.D) {
    case 64:
      if (variant == Variant::warp_specialized)
        return wide ? launch_variant<T, 64, 128, 2>(a, variant, scale, stream)
                    : launch_variant<T, 64, 64, 3>(a, variant, scale, stream);
      return wide ? launch_variant<T, 64, 128, 2>(a, variant, scale, stream)
                  : launch_variant<T, 64, 64, 2>(a, variant, scale, stream);
    case 128:
      if (variant == Variant::warp_specialized)
        return wide ? launch_variant<T, 128, 128, 2>(a, variant, scale, stream)
                    : launch_variant<T, 128, 64, 3>(a, variant, scale, stream);
      return wide ? launch_variant<T, 128, 128, 2>(a, variant, scale, stream)
                  : launch_variant<T, 128, 64, 2>(a, variant, scale, stream);
    case 256:
      return launch_sm90<attn::AttnTraits<T, 256, 128, 64, 2>, Variant::plain>(
          a, scale, stream);  // every config
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
  if (D == 256) return "plain 128x64 (every config for D 256)";
  return D == 64 || D == 128 ? kAttnConfigNames[config] : "";
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
