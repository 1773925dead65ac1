// Launcher for NeoX RoPE: validates Args, picks vector width and CTA size, launches.
#include "rope/rope.hpp"

#include "common/dispatch.cuh"
#include "rope/rope.cuh"

namespace ts::kernels {
namespace {

// Configs 0-2: one CTA row per token (grid tokens x item chunks) of 64/128/256 threads.
// Configs 3-4: the flattened kernel, 256 threads, 2 or 4 items per thread.
struct RopeConfig {
  int threads;
  int unroll;  // 0: per-token kernel
};
constexpr RopeConfig kRopeConfigs[] = {{64, 0}, {128, 0}, {256, 0}, {256, 2}, {256, 4}};
constexpr int kNumRopeConfigs = sizeof(kRopeConfigs) / sizeof(kRopeConfigs[0]);

template <class T, int kVec, int kConfig, bool kVecCs>
void launch_rope(const RopeArgs& a, std::int64_t rotary_dim, std::int64_t cache_row_stride,
                 cudaStream_t stream) {
  const RopeParams<T> p{static_cast<const T*>(a.q),
                        static_cast<T*>(a.q_out),
                        static_cast<const T*>(a.k),
                        static_cast<T*>(a.k_out),
                        a.positions,
                        a.cos,
                        a.sin,
                        a.tokens,
                        a.q_heads,
                        a.k_heads,
                        a.head_dim,
                        rotary_dim,
                        a.q_token_stride,
                        a.q_head_stride,
                        a.k_token_stride,
                        a.k_head_stride,
                        a.max_position,
                        cache_row_stride};
  const std::int64_t heads = a.q_heads + (a.k ? a.k_heads : 0);
  const std::int64_t items = heads * (rotary_dim / 2 / kVec);
  constexpr RopeConfig c = kRopeConfigs[kConfig];
  if constexpr (c.unroll > 0) {
    const std::int64_t total = items * a.tokens;
    const std::int64_t blocks = (total + c.threads * c.unroll - 1) / (c.threads * c.unroll);
    if (blocks > 0)
      rope_flat_kernel<T, kVec, c.threads, c.unroll, kVecCs>
          <<<static_cast<unsigned>(blocks), c.threads, 0, stream>>>(p, items, total);
  } else {
    const std::int64_t chunks = items > 0 ? (items + c.threads - 1) / c.threads : 1;
    rope_kernel<T, kVec, c.threads, kVecCs>
        <<<dim3(static_cast<unsigned>(a.tokens), static_cast<unsigned>(chunks)), c.threads, 0,
           stream>>>(p);
  }
}

bool aligned_elems(std::int64_t stride, int vec) {
  return stride % vec == 0;
}

}  // namespace

int rope_num_configs() {
  return kNumRopeConfigs;
}

cudaError_t rope_launch(const RopeArgs& a, cudaStream_t stream) {
  const std::int64_t rotary_dim = a.rotary_dim == 0 ? a.head_dim : a.rotary_dim;
  const std::int64_t cache_row_stride =
      a.cache_row_stride == 0 ? rotary_dim / 2 : a.cache_row_stride;
  if (a.tokens < 0 || a.q_heads < 0 || a.k_heads < 0 || a.head_dim <= 0)
    return cudaErrorInvalidValue;
  if (rotary_dim <= 0 || rotary_dim % 2 != 0 || rotary_dim > a.head_dim)
    return cudaErrorInvalidValue;
  if (cache_row_stride < rotary_dim / 2 || a.max_position < 0) return cudaErrorInvalidValue;
  if (a.config < -1 || a.config >= kNumRopeConfigs) return cudaErrorInvalidValue;
  if (a.tokens == 0) return cudaSuccess;
  if (a.tokens > (std::int64_t{1} << 31) - 1) return cudaErrorInvalidValue;
  if (!a.positions || (a.q_heads > 0 && (!a.q || !a.q_out))) return cudaErrorInvalidValue;
  // An empty cache (no position in range: every token left as it is) may have no memory.
  if (a.max_position > 0 && (!a.cos || !a.sin)) return cudaErrorInvalidValue;
  if (a.k && !a.k_out) return cudaErrorInvalidValue;

  const int vec = vec_width(a.dtype);
  const bool k_ok =
      !a.k || (is_aligned16(a.k) && is_aligned16(a.k_out) && aligned_elems(a.k_token_stride, vec) &&
               aligned_elems(a.k_head_stride, vec));
  const bool vectorized = (rotary_dim / 2) % vec == 0 && is_aligned16(a.q) &&
                          is_aligned16(a.q_out) && aligned_elems(a.q_token_stride, vec) &&
                          aligned_elems(a.q_head_stride, vec) && k_ok;
  // cos/sin as LDG.128s: every row start and sin's offset from cos on 4 floats.
  const bool vector_cs = is_aligned16(a.cos) && is_aligned16(a.sin) && cache_row_stride % 4 == 0;
  const std::int64_t heads = a.q_heads + (a.k ? a.k_heads : 0);
  const std::int64_t items = heads * (rotary_dim / 2 / (vectorized ? vec : 1));
  if ((items + 63) / 64 > 65535) return cudaErrorInvalidValue;  // grid.y limit
  // The flattened kernel rotates only: out of place with pass-through dims needs the per-token
  // kernel, which also copies dims [rotary_dim, head_dim).
  const bool copies_pass_through =
      rotary_dim < a.head_dim && !(a.q_out == a.q && (!a.k || a.k_out == a.k));
  int config = a.config;
  if (config < 0)
    // 64-thread CTAs fit the common item counts per token exactly ((Hq + Hk) * 8 for head dim 128
    // in 16 bits: 320 for Llama-3-8B, 576 for 70B), where 128 threads leave a CTA half empty: on
    // the H200, Llama-3-8B prefill (8192 tokens, bf16, in place) ran 49.5 us with config 0 and
    // 50.4 with config 1; the flattened configs 52.4 and 68.9 (dev/rope_probe.py). The
    // scalar path (half not a multiple of the vector) keeps 128: GPT-NeoX-20B's partial rotary
    // row ran 64.4 us with config 0 against 47.8 with config 1.
    config = vectorized || items <= 64 || a.tokens < 2 * current_sm_count() ? 0 : 1;
  if (kRopeConfigs[config].unroll > 0 && copies_pass_through) return cudaErrorInvalidValue;
  if ((items + kRopeConfigs[config].threads - 1) / kRopeConfigs[config].threads > 65535)
    return cudaErrorInvalidValue;

  const cudaError_t err = dispatch_dtype(a.dtype, [&](auto tag) {
    using T = decltype(tag);
    return dispatch_config<kNumRopeConfigs>(config, [&](auto c) {
      constexpr int kVec = 16 / sizeof(T);  // 4 or 8: whole float4s of cos/sin
      if (!vectorized)
        launch_rope<T, 1, c.value, false>(a, rotary_dim, cache_row_stride, stream);
      else if (vector_cs)
        launch_rope<T, kVec, c.value, true>(a, rotary_dim, cache_row_stride, stream);
      else
        launch_rope<T, kVec, c.value, false>(a, rotary_dim, cache_row_stride, stream);
      return cudaSuccess;
    });
  });
  if (err != cudaSuccess) return err;
  return cudaGetLastError();
}

TS_REGISTER_KERNEL(cuda, rope_neox, "RoPENeoXFwdOp", (run_launch<rope_args, rope_launch>),
                   rope_num_configs);

}  // namespace ts::kernels
