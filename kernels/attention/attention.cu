// Launcher for attention: validates Args, takes the CuTe wgmma kernel when cp.async can move
// 16-byte chunks of every operand, the one-warp-per-query fallback otherwise.
#include "attention/attention.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <type_traits>

#include "attention/attention_fallback.cuh"
#include "attention/attention_pack.hpp"
#include "attention/attention_sm90.cuh"
#include "common/dispatch.cuh"
#include "common/vec.cuh"

namespace ts::kernels {
namespace {

// Configs (AttentionArgs::config). kBlockM is 128 everywhere; kBlockN 128 or 64 as named
// (D = 256 always uses 64 and the plain kernel: its O accumulator alone takes 128 registers).
//   0: plain (S, softmax, P V in sequence; all warps copy), 128 x 128   (default where TMA cannot
//      describe K or V)
//   1: plain, 128 x 64
//   2: overlapped (softmax of block j+1 under the P V wgmma of block j), 128 x 128
//   3: overlapped, 128 x 64
//   4: warp-specialized (cp.async producer warpgroup, two ping-pong consumers), 128 x 128, 2 stages
//   5: warp-specialized, 128 x 64, 3 stages
//   6: warp-specialized with TMA loads (one producer thread), 128 x 128, 2 stages
//   7: warp-specialized with TMA loads, 128 x 128, 3 stages
//   8: warp-specialized with TMA loads, consumers overlapped (softmax of block n under the P V
//      wgmma of block n - 1: FlashAttention-3's schedule), 128 x 128, 2 stages   (default)
//   9: as 8, 3 stages
//  10, 11: 9, 8 persistent: one CTA per SM walks the tiles (the producer loads the next tile's K
//      and V, each consumer its next Q rows, while the current tile's last P V and output stores
//      run), instead of one CTA per tile
// H100, bf16 D = 128, us per call (tileops bench --tune; K and V in separate rings,
// causal tiles longest first), configs 0/4/6/7/8/9/10/11:
//   Llama-3-8B prefill 8k causal  1534 / 1883 / 935 / 947 / 876 / 1000 / 934 / 948
//   Llama-3-70B prefill 4k causal 1560 / 2033 / 1031 / 1045 / 968 / 1164 / 964 / 992
//   Llama-3-8B prefill 2k causal   461 /  563 / 313 / 317 / 299 /  301 / 283 / 281
//   Llama-3-8B decode 4k           95 /  128 /  94 /  97 /  94 /   95 /  95 /  95
// MHA 2k non-causal (before its tiles went back to query blocks fastest: one run earlier,
// configs 6-9, 11: 513 / 513 / 472 / 471 / 467). So TMA takes a third off the plain kernel, 8 is
// within 6% of the best everywhere, persistence pays on short causal tiles (2k: 281 against 299).
// Tried and dropped: 128 x 176 tiles (FlashAttention-3's non-causal D = 128 tile), 2 stages in
// sequence and overlapped, plain and persistent: 1404-1640 us on the 8k row, 796-868 on MHA 2k.
// D = 64 takes the same default unmeasured (every config passes the contract tests there).
// ptxas -v (nvcc 13.0): at D = 128, 2 spills 140 bytes (255 registers); the warp-specialized
// kernels compile to 168 registers at entry (65536 / 384 threads), the consumers taking 240 after
// setmaxnreg, without spills.
constexpr int kNumAttnConfigs = 12;
constexpr int kDefaultConfig = 8, kDefaultConfigNoTma = 0;
constexpr const char* kAttnConfigNames[kNumAttnConfigs] = {
    "plain 128x128",
    "plain 128x64",
    "overlapped 128x128",
    "overlapped 128x64",
    "warp-specialized 128x128 2 stages",
    "warp-specialized 128x64 3 stages",
    "warp-specialized TMA 128x128 2 stages",
    "warp-specialized TMA 128x128 3 stages",
    "overlapped TMA 128x128 2 stages",
    "overlapped TMA 128x128 3 stages",
    "persistent overlapped TMA 128x128 3 stages",
    "persistent overlapped TMA 128x128 2 stages"};

constexpr std::int64_t kMaxInt = (std::int64_t{1} << 31) - 1;

bool valid(const AttentionArgs& a) {
  if (a.dtype != DType::f16 && a.dtype != DType::bf16) return false;
  if (a.D != 64 && a.D != 128 && a.D != 256) return false;
  if (a.B < 0 || a.Hq < 0 || a.Hkv < 1 || a.Sq < 0 || a.Skv < 0) return false;
  if (a.Hq % a.Hkv != 0) return false;
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

// o = 0 where there are no keys (Skv == 0), as SDPA returns: a grid-stride loop over the
// elements of o's [B, Hq, Sq, D] view (its strides; f16 and bf16 zero are the same bits).
__global__ void zero_output(std::uint16_t* o, std::int64_t hq, std::int64_t sq, std::int64_t d,
                            std::int64_t sb, std::int64_t sh, std::int64_t ss, std::int64_t n) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    const std::int64_t e = i % d, row = i / d, s = row % sq, h = row / sq % hq, b = row / sq / hq;
    o[b * sb + h * sh + s * ss + e] = 0;
  }
}

cudaError_t launch_zero_output(const AttentionArgs& a, cudaStream_t stream) {
  const std::int64_t n = a.B * a.Hq * a.Sq * a.D;
  const auto blocks = static_cast<unsigned>(std::min<std::int64_t>((n + 255) / 256, 4096));
  zero_output<<<blocks, 256, 0, stream>>>(static_cast<std::uint16_t*>(a.o), a.Hq, a.Sq, a.D,
                                          a.o_strides[0], a.o_strides[1], a.o_strides[2], n);
  return cudaGetLastError();
}

enum class Variant { plain, overlap };

attn::AttnParams params_of(const AttentionArgs& a, float scale) {
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
  p.group = static_cast<int>(a.Hq / a.Hkv);
  p.scale_log2 = scale * 1.4426950408889634f;
  // Causal tiles longest first, in L2-sized sections of heads; non-causal ones (all of one
  // length) with query blocks fastest, so the CTAs running at once share fewer heads' K and V
  // (MHA 2k on the H100: 467 us in this order, 498 in sections of 32 heads).
  const int section =
      a.is_causal ? static_cast<int>(attn::ws_tile_section(a.B, a.Hq, p.group, a.Skv, a.D)) : 1;
  p.shape = {static_cast<int>(a.B),
             static_cast<int>(a.Hq),
             static_cast<int>(a.Sq),
             static_cast<int>(a.Skv),
             a.is_causal,
             section};
  return p;
}

dim3 grid_of(const AttentionArgs& a, int block_m) {
  return dim3(static_cast<unsigned>((a.Sq + block_m - 1) / block_m), static_cast<unsigned>(a.Hq),
              static_cast<unsigned>(a.B));
}

// Raises the kernel's dynamic shared-memory limit once per instantiation (thread-safe static).
template <auto kKernel, int kSmem>
cudaError_t allow_smem() {
  static const cudaError_t err =
      cudaFuncSetAttribute(kKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem);
  return err;
}

// The variant's kernel (only the chosen one is instantiated).
template <class Traits, Variant kVariant>
constexpr auto kernel_of() {
  if constexpr (kVariant == Variant::overlap)
    return attn::attention_kernel_overlap<Traits>;
  else
    return attn::attention_kernel<Traits>;
}

template <class Traits, Variant kVariant>
cudaError_t launch_sm90(const AttentionArgs& a, float scale, cudaStream_t stream) {
  constexpr auto kKernel = kernel_of<Traits, kVariant>();
  constexpr int kSmem = Traits::kSmemBytes;
  constexpr int kThreads = Traits::kThreads;
  if (const cudaError_t err = allow_smem<kKernel, kSmem>(); err != cudaSuccess) return err;
  kKernel<<<grid_of(a, Traits::kBlockM), kThreads, kSmem, stream>>>(params_of(a, scale));
  return cudaGetLastError();
}

// TMA strides of one K or V tensor as (s, h, b), or nothing when TMA cannot describe it. A mode
// of extent 1 is never stepped, so it takes a placeholder stride; the others must be positive
// (no broadcast views) and below 2^40 bytes (alignment to 16 bytes: tensor_core_path).
std::optional<std::array<std::int64_t, 3>> kv_tma_strides(const std::int64_t (&strides)[4],
                                                          const AttentionArgs& a) {
  const std::int64_t extent[3] = {a.Skv, a.Hkv, a.B};
  const int mode[3] = {2, 1, 0};  // AttentionArgs strides are (b, h, s, d)
  std::array<std::int64_t, 3> out{};
  std::int64_t placeholder = a.D;
  for (int i = 0; i < 3; ++i) {
    out[i] = extent[i] > 1 ? strides[mode[i]] : placeholder;
    if (out[i] <= 0 || out[i] >= (std::int64_t{1} << 39)) return std::nullopt;  // 2-byte elements
    placeholder = out[i] * extent[i];
  }
  return out;
}

// The warp-specialized kernel, its producer copying with TMA or with cp.async; one CTA per
// 128-row tile, or (persistent) one per SM walking the tiles.
template <class Traits, bool kTma, bool kOverlap, bool kPersistent = false>
cudaError_t launch_sm90_ws(const AttentionArgs& a, float scale, cudaStream_t stream) {
  using Element = typename Traits::Element;
  using Tma = std::conditional_t<kTma, attn::KvTma<Traits>, attn::NoTma>;
  constexpr auto kKernel = attn::attention_kernel_ws<Traits, Tma, kOverlap>;
  constexpr int kSmem = attn::WsShared<Traits>::kBytes;
  if (const cudaError_t err = allow_smem<kKernel, kSmem>(); err != cudaSuccess) return err;
  const attn::AttnParams p = params_of(a, scale);
  std::int64_t ctas = std::min(attn::ws_num_tiles(p.shape, Traits::kBlockM), kMaxInt);
  if constexpr (kPersistent) ctas = std::min<std::int64_t>(ctas, std::max(current_sm_count(), 1));
  const dim3 grid(static_cast<unsigned>(ctas));
  if constexpr (kTma) {
    const auto ks = kv_tma_strides(a.k_strides, a), vs = kv_tma_strides(a.v_strides, a);
    if (!ks || !vs) return cudaErrorInvalidValue;
    const int skv = static_cast<int>(a.Skv), hkv = static_cast<int>(a.Hkv);
    const int b = static_cast<int>(a.B);
    const Tma tma_k = attn::make_kv_tma<Traits>(static_cast<const Element*>(a.k), skv, hkv, b,
                                                (*ks)[0], (*ks)[1], (*ks)[2]);
    const Tma tma_v = attn::make_kv_tma<Traits>(static_cast<const Element*>(a.v), skv, hkv, b,
                                                (*vs)[0], (*vs)[1], (*vs)[2]);
    kKernel<<<grid, attn::kWsThreads, kSmem, stream>>>(p, tma_k, tma_v);
  } else {
    kKernel<<<grid, attn::kWsThreads, kSmem, stream>>>(p, Tma{}, Tma{});
  }
  return cudaGetLastError();
}

// One case per config (see the table above): only the tiles a config uses are instantiated.
template <class T, int kHeadDim>
cudaError_t dispatch_head_dim(const AttentionArgs& a, int config, float scale,
                              cudaStream_t stream) {
  using Wide2 = attn::AttnTraits<T, kHeadDim, 128, 128, 2>;
  using Wide3 = attn::AttnTraits<T, kHeadDim, 128, 128, 3>;
  using Narrow2 = attn::AttnTraits<T, kHeadDim, 128, 64, 2>;
  switch (config) {
    case 0:
      return launch_sm90<Wide2, Variant::plain>(a, scale, stream);
    case 1:
      return launch_sm90<Narrow2, Variant::plain>(a, scale, stream);
    case 2:
      return launch_sm90<Wide2, Variant::overlap>(a, scale, stream);
    case 3:
      return launch_sm90<Narrow2, Variant::overlap>(a, scale, stream);
    case 4:
      return launch_sm90_ws<Wide2, false, false>(a, scale, stream);
    case 5:
      return launch_sm90_ws<attn::AttnTraits<T, kHeadDim, 128, 64, 3>, false, false>(a, scale,
                                                                                     stream);
    case 6:
      return launch_sm90_ws<Wide2, true, false>(a, scale, stream);
    case 7:
      return launch_sm90_ws<Wide3, true, false>(a, scale, stream);
    case 8:
      return launch_sm90_ws<Wide2, true, true>(a, scale, stream);
    case 9:
      return launch_sm90_ws<Wide3, true, true>(a, scale, stream);
    case 10:
      return launch_sm90_ws<Wide3, true, true, true>(a, scale, stream);
    case 11:
      return launch_sm90_ws<Wide2, true, true, true>(a, scale, stream);
  }
  return cudaErrorInvalidValue;
}

template <class T>
cudaError_t dispatch_sm90(const AttentionArgs& a, int config, float scale, cudaStream_t stream) {
  static_assert(kNumAttnConfigs == 12, "add a case to dispatch_head_dim for every config");
  switch (a.D) {
    case 64:
      return dispatch_head_dim<T, 64>(a, config, scale, stream);
    case 128:
      return dispatch_head_dim<T, 128>(a, config, scale, stream);
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
  if (!a.o || (a.Skv > 0 && (!a.q || !a.k || !a.v))) return cudaErrorInvalidValue;
  if (a.Skv == 0) return launch_zero_output(a, stream);
  const float scale = a.scale > 0.f ? a.scale : 1.f / std::sqrt(static_cast<float>(a.D));
  if (tensor_core_path(a)) {
    const bool tma = kv_tma_strides(a.k_strides, a) && kv_tma_strides(a.v_strides, a);
    const int config = a.config >= 0 ? a.config : tma ? kDefaultConfig : kDefaultConfigNoTma;
    AttentionArgs packed = a;
    pack_query_groups(packed);
    return a.dtype == DType::f16
               ? dispatch_sm90<cutlass::half_t>(packed, config, scale, stream)
               : dispatch_sm90<cutlass::bfloat16_t>(packed, config, scale, stream);
  }
  return a.dtype == DType::f16 ? launch_fallback<__half>(a, scale, stream)
                               : launch_fallback<__nv_bfloat16>(a, scale, stream);
}

TS_REGISTER_KERNEL(cuda, attention, "MultiHeadAttentionFwdOp",
                   (run_launch<attention_args, attention_launch>), attention_num_configs);

}  // namespace ts::kernels
