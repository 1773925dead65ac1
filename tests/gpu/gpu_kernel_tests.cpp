// gpu_kernel_tests: every memory-bound kernel against its fp64 CPU reference over a sweep of
// awkward shapes, strides and every launch config. Prints one PASS/FAIL line per case and
// exits non-zero on any failure. Run on a GPU machine only (never by CI).
//
// Check, per element of the output (ref = fp64 result rounded to the dtype):
//   |got - ref| <= atol + rtol * |ref|      NaN never passes
//   dtype   rtol     atol (norms, silu, rope: O(1) outputs)   atol (softmax: outputs down to 1/N)
//   f32     1e-4     1e-5                                    1e-9
//   f16     4e-3     5e-4                                    1e-7
//   bf16    1.6e-2   4e-3                                    1e-6
// rtol is 2 ulp of f16/bf16 (fp32-vs-fp64 math can flip one rounding) and, for f32, the
// fp32 accumulation error of rows up to 131072 long. Output padding between rows (strided
// cases) and untouched elements must keep their poison (NaN) bytes exactly.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "activation/gated_mul.hpp"
#include "gpu_common.hpp"
#include "norm/layer_norm.hpp"
#include "norm/rms_norm.hpp"
#include "rope/rope.hpp"
#include "softmax/softmax.hpp"

namespace ts::gpu_test {
namespace {

using kernels::dtype_name;
using kernels::dtype_size;
using kernels::load_element;

int g_failures = 0;
int g_cases = 0;

struct Tolerance {
  double rtol, atol;
};

Tolerance tolerance(DType dtype, bool small_outputs) {
  switch (dtype) {
    case DType::f32:
      return {1e-4, small_outputs ? 1e-9 : 1e-5};
    case DType::f16:
      return {4e-3, small_outputs ? 1e-7 : 5e-4};
    case DType::bf16:
      return {1.6e-2, small_outputs ? 1e-6 : 4e-3};
  }
  return {0, 0};
}

/// Compares two whole output buffers: elements in `valid(i)` numerically, the rest bytewise.
template <class Valid>
bool compare(const std::string& name, const std::vector<std::uint8_t>& got,
             const std::vector<std::uint8_t>& ref, DType dtype, Tolerance tol, Valid&& valid) {
  const std::int64_t n = static_cast<std::int64_t>(ref.size() / dtype_size(dtype));
  const std::size_t es = dtype_size(dtype);
  std::int64_t bad = 0, first_bad = -1;
  double max_err = 0.0;
  for (std::int64_t i = 0; i < n; ++i) {
    if (!valid(i)) {
      if (std::memcmp(got.data() + i * es, ref.data() + i * es, es) != 0) {
        if (first_bad < 0) first_bad = i;
        ++bad;
      }
      continue;
    }
    const double g = load_element(got.data(), dtype, i), r = load_element(ref.data(), dtype, i);
    const double err = std::fabs(g - r);
    if (!(err <= tol.atol + tol.rtol * std::fabs(r))) {  // NaN fails here
      if (first_bad < 0) first_bad = i;
      ++bad;
    }
    if (std::isfinite(err)) max_err = std::max(max_err, err);
  }
  ++g_cases;
  if (bad == 0) {
    std::printf("PASS %s max_abs_err=%.3g\n", name.c_str(), max_err);
    return true;
  }
  ++g_failures;
  std::printf("FAIL %s: %lld bad of %lld, first at %lld (got %g, ref %g), max_abs_err=%.3g\n",
              name.c_str(), static_cast<long long>(bad), static_cast<long long>(n),
              static_cast<long long>(first_bad), load_element(got.data(), dtype, first_bad),
              load_element(ref.data(), dtype, first_bad), max_err);
  return false;
}

void fail_launch(const std::string& name, cudaError_t err) {
  ++g_cases;
  ++g_failures;
  std::printf("FAIL %s: launch returned %s\n", name.c_str(), cudaGetErrorString(err));
}

std::vector<std::uint8_t> poison(std::size_t bytes) {
  return std::vector<std::uint8_t>(bytes, 0xff);
}

std::string shape_name(const char* op, DType dtype, std::int64_t m, std::int64_t n, std::int64_t xs,
                       std::int64_t ys, int config, const char* extra = "") {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%s %s M=%lld N=%lld x_stride=%lld y_stride=%lld config=%d%s", op,
                dtype_name(dtype), static_cast<long long>(m), static_cast<long long>(n),
                static_cast<long long>(xs), static_cast<long long>(ys), config, extra);
  return buf;
}

// ---- row ops: rms_norm, layer_norm, softmax, silu_and_mul --------------------------------------

enum class RowOp { rms_norm, layer_norm, layer_norm_no_affine, softmax, silu_and_mul };

const char* row_op_name(RowOp op) {
  switch (op) {
    case RowOp::rms_norm:
      return "rms_norm";
    case RowOp::layer_norm:
      return "layer_norm";
    case RowOp::layer_norm_no_affine:
      return "layer_norm(no w,b)";
    case RowOp::softmax:
      return "softmax";
    case RowOp::silu_and_mul:
      return "silu_and_mul";
  }
  return "?";
}

int row_op_num_configs(RowOp op) {
  switch (op) {
    case RowOp::rms_norm:
      return kernels::rms_norm_num_configs();
    case RowOp::layer_norm:
    case RowOp::layer_norm_no_affine:
      return kernels::layer_norm_num_configs();
    case RowOp::softmax:
      return kernels::softmax_num_configs();
    case RowOp::silu_and_mul:
      return kernels::gated_mul_num_configs();
  }
  return 0;
}

/// One case: M rows of N outputs; x row stride xs, y row stride ys (elements); in_place: y = x.
void run_row_case(RowOp op, DType dtype, std::int64_t m, std::int64_t n, std::int64_t xs,
                  std::int64_t ys, int config, bool in_place, std::uint64_t seed) {
  const std::size_t es = dtype_size(dtype);
  const std::int64_t x_cols = op == RowOp::silu_and_mul ? 2 * n : n;
  const std::int64_t x_count = (m - 1) * xs + x_cols, y_count = (m - 1) * ys + n;
  const double lo = op == RowOp::softmax ? -8.0 : -3.0, hi = -lo;
  const auto x_host = random_buffer(dtype, x_count, lo, hi, seed);
  const auto w_host = random_buffer(dtype, n, 0.5, 1.5, seed + 1);
  const auto b_host = random_buffer(dtype, n, -1.0, 1.0, seed + 2);

  DeviceBuffer x(x_host.size()), w(w_host.size()), b(b_host.size());
  x.upload(x_host.data());
  w.upload(w_host.data());
  b.upload(b_host.data());
  DeviceBuffer y_own(in_place ? 0 : static_cast<std::size_t>(y_count) * es);
  void* y_dev = in_place ? x.get() : y_own.get();
  std::vector<std::uint8_t> ref =
      in_place ? x_host : poison(static_cast<std::size_t>(y_count) * es);
  if (!in_place) TS_CUDA_CHECK(cudaMemset(y_dev, 0xff, y_count * es));

  // Launch on the device; the reference runs on host copies, row blocks in parallel.
  cudaError_t err = cudaSuccess;
  auto row_ptr = [](const void* base, std::int64_t row, std::int64_t stride, std::size_t es_) {
    return static_cast<const std::uint8_t*>(base) + row * stride * static_cast<std::int64_t>(es_);
  };
  const std::string name =
      shape_name(row_op_name(op), dtype, m, n, xs, ys, config, in_place ? " in_place" : "");
  // Row kernels whose Args are (x, y, rows, cols, x stride, y stride, dtype, config).
  auto plain_rows = [&](auto args_tag, auto launch, auto reference) {
    using Args = decltype(args_tag);
    err = launch(Args{x.get(), y_dev, m, n, xs, ys, dtype, config}, nullptr);
    parallel_for(m, [&](std::int64_t r0, std::int64_t r1) {
      reference(Args{row_ptr(x_host.data(), r0, xs, es),
                     const_cast<std::uint8_t*>(row_ptr(ref.data(), r0, ys, es)), r1 - r0, n, xs, ys,
                     dtype, -1});
    });
  };
  switch (op) {
    case RowOp::rms_norm: {
      kernels::RmsNormArgs a{x.get(), y_dev, w.get(), m, n, xs, ys, 1e-6f, dtype, config};
      err = kernels::rms_norm_launch(a, nullptr);
      parallel_for(m, [&](std::int64_t r0, std::int64_t r1) {
        kernels::RmsNormArgs h{row_ptr(x_host.data(), r0, xs, es),
                               const_cast<std::uint8_t*>(row_ptr(ref.data(), r0, ys, es)),
                               w_host.data(),
                               r1 - r0,
                               n,
                               xs,
                               ys,
                               1e-6f,
                               dtype,
                               -1};
        kernels::rms_norm_reference(h);
      });
      break;
    }
    case RowOp::layer_norm:
    case RowOp::layer_norm_no_affine: {
      const bool affine = op == RowOp::layer_norm;
      kernels::LayerNormArgs a{x.get(),
                               y_dev,
                               affine ? w.get() : nullptr,
                               affine ? b.get() : nullptr,
                               m,
                               n,
                               xs,
                               ys,
                               1e-5f,
                               dtype,
                               config};
      err = kernels::layer_norm_launch(a, nullptr);
      parallel_for(m, [&](std::int64_t r0, std::int64_t r1) {
        kernels::LayerNormArgs h{row_ptr(x_host.data(), r0, xs, es),
                                 const_cast<std::uint8_t*>(row_ptr(ref.data(), r0, ys, es)),
                                 affine ? w_host.data() : nullptr,
                                 affine ? b_host.data() : nullptr,
                                 r1 - r0,
                                 n,
                                 xs,
                                 ys,
                                 1e-5f,
                                 dtype,
                                 -1};
        kernels::layer_norm_reference(h);
      });
      break;
    }
    case RowOp::softmax:
      plain_rows(kernels::SoftmaxArgs{}, kernels::softmax_launch, kernels::softmax_reference);
      break;
    case RowOp::silu_and_mul:
      plain_rows(kernels::GatedMulArgs{}, kernels::gated_mul_launch, kernels::gated_mul_reference);
      break;
  }
  // An explicit config may not serve this shape (softmax's cluster configs hold rows up to a
  // size): the launcher says so with cudaErrorInvalidValue, as the autotuner expects.
  if (err == cudaErrorInvalidValue && config >= 0) return;
  if (err != cudaSuccess) return fail_launch(name, err);
  TS_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<std::uint8_t> got(ref.size());
  TS_CUDA_CHECK(cudaMemcpy(got.data(), y_dev, got.size(), cudaMemcpyDeviceToHost));
  compare(name, got, ref, dtype, tolerance(dtype, op == RowOp::softmax),
          [&](std::int64_t i) { return i % ys < n; });
}

void row_op_sweep(std::uint64_t& seed) {
  const DType dtypes[] = {DType::f32, DType::f16, DType::bf16};
  const std::int64_t ms[] = {1, 3, 129, 4096};
  const std::int64_t ns[] = {1, 7, 64, 127, 4096, 5120, 8192, 131072};
  const RowOp ops[] = {RowOp::rms_norm, RowOp::layer_norm, RowOp::softmax, RowOp::silu_and_mul};
  for (RowOp op : ops)
    for (DType dtype : dtypes)
      for (std::int64_t m : ms)
        for (std::int64_t n : ns) {
          if (m * n > (std::int64_t{1} << 26)) continue;  // 4096 x 131072: host memory and time
          const std::int64_t xw = op == RowOp::silu_and_mul ? 2 * n : n;
          run_row_case(op, dtype, m, n, xw, n, -1, false, ++seed);
          if (m == 3 || m == 129) {
            // Row strides: padded but still 16-byte aligned, then misaligned (scalar path).
            run_row_case(op, dtype, m, n, xw + 8, n + 16, -1, false, ++seed);
            run_row_case(op, dtype, m, n, xw + 3, n + 5, -1, false, ++seed);
          }
        }
  // LayerNorm without affine parameters; in-place rms_norm and softmax.
  for (DType dtype : dtypes)
    for (std::int64_t n : {7, 4096, 131072}) {
      run_row_case(RowOp::layer_norm_no_affine, dtype, 3, n, n, n, -1, false, ++seed);
      run_row_case(RowOp::rms_norm, dtype, 3, n, n, n, -1, true, ++seed);
      run_row_case(RowOp::softmax, dtype, 3, n, n, n, -1, true, ++seed);
    }
  // Every launch config (the autotuner's candidates) must be correct on its own, including the
  // register-cached and streamed paths and the scalar tail.
  for (RowOp op : ops)
    for (DType dtype : {DType::bf16, DType::f32})
      for (auto [m, n] : {std::pair<std::int64_t, std::int64_t>{129, 5120},
                          {5, 131072},
                          {9, 1003},
                          {300, 4096}})  // 300 x 4096: persistent rms_norm rows per CTA > 1
        for (int c = 0; c < row_op_num_configs(op); ++c) {
          const std::int64_t xw = op == RowOp::silu_and_mul ? 2 * n : n;
          run_row_case(op, dtype, m, n, xw, n, c, false, ++seed);
        }
}

// ---- rope ---------------------------------------------------------------------------------------

struct RopeShape {
  std::int64_t q_heads, k_heads, head_dim, rotary_dim;
};

/// qkv_fused: q and k are views into one [T, Hq + 2 Hk, D] buffer (token stride > Hq * D).
/// combined_cache: vLLM's cos_sin_cache [max_pos, rot] (sin = cos + rot / 2).
void run_rope_case(DType dtype, std::int64_t tokens, RopeShape s, bool in_place, bool qkv_fused,
                   bool combined_cache, int config, std::uint64_t seed) {
  const std::size_t es = dtype_size(dtype);
  const std::int64_t rot = s.rotary_dim, half = rot / 2, max_pos = 4096;
  const std::int64_t token_stride =
      qkv_fused ? (s.q_heads + 2 * s.k_heads) * s.head_dim : (s.q_heads + s.k_heads) * s.head_dim;
  // One buffer holds q then k per token (fused: then v), so both share the token stride.
  const std::int64_t count = tokens * token_stride;
  const auto qk_host = random_buffer(dtype, count, -2.0, 2.0, seed);

  // cos/sin tables for inv_freq = 10000^(-2i / rot); row stride `cache_stride`.
  const std::int64_t cache_stride = combined_cache ? rot : half;
  std::vector<float> cos_host(
      static_cast<std::size_t>(max_pos * cache_stride * (combined_cache ? 1 : 1)));
  std::vector<float> sin_host(combined_cache ? 0 : cos_host.size());
  for (std::int64_t p = 0; p < max_pos; ++p)
    for (std::int64_t i = 0; i < half; ++i) {
      const double angle =
          static_cast<double>(p) * std::pow(10000.0, -2.0 * i / static_cast<double>(rot));
      cos_host[p * cache_stride + i] = static_cast<float>(std::cos(angle));
      if (combined_cache)
        cos_host[p * cache_stride + half + i] = static_cast<float>(std::sin(angle));
      else
        sin_host[p * cache_stride + i] = static_cast<float>(std::sin(angle));
    }
  std::vector<std::int64_t> pos_host(static_cast<std::size_t>(tokens));
  Rng rng{seed ^ 0xabcdefull};
  for (auto& p : pos_host) p = static_cast<std::int64_t>(rng.next() % max_pos);
  if (tokens >= 3) {  // out-of-range positions must leave their token unrotated, not fault
    pos_host[1] = -1;
    pos_host[2] = max_pos;
  }

  DeviceBuffer qk(qk_host.size()), cos_dev(cos_host.size() * 4),
      sin_dev(std::max<std::size_t>(sin_host.size(), 1) * 4), pos_dev(pos_host.size() * 8);
  qk.upload(qk_host.data());
  cos_dev.upload(cos_host.data());
  if (!combined_cache) sin_dev.upload(sin_host.data());
  pos_dev.upload(pos_host.data());
  DeviceBuffer out_own(in_place ? 0 : qk_host.size());
  void* out_dev = in_place ? qk.get() : out_own.get();
  if (!in_place) TS_CUDA_CHECK(cudaMemset(out_dev, 0xff, qk_host.size()));

  const std::int64_t k_off = s.q_heads * s.head_dim;
  auto args_for = [&](const void* base, void* out, const float* c, const float* sn,
                      const std::int64_t* pos, std::int64_t t) {
    kernels::RopeArgs a;
    a.q = base;
    a.q_out = out;
    a.k = s.k_heads ? static_cast<const std::uint8_t*>(base) + k_off * es : nullptr;
    a.k_out = s.k_heads ? static_cast<std::uint8_t*>(out) + k_off * es : nullptr;
    a.positions = pos;
    a.cos = c;
    a.sin = sn;
    a.tokens = t;
    a.q_heads = s.q_heads;
    a.k_heads = s.k_heads;
    a.head_dim = s.head_dim;
    a.rotary_dim = rot == s.head_dim ? 0 : rot;  // 0 exercises the default
    a.q_token_stride = a.k_token_stride = token_stride;
    a.q_head_stride = a.k_head_stride = s.head_dim;
    a.max_position = max_pos;
    a.cache_row_stride = combined_cache ? rot : 0;
    a.dtype = dtype;
    a.config = config;
    return a;
  };
  const float* cos_d = static_cast<const float*>(cos_dev.get());
  const float* sin_d = combined_cache ? cos_d + half : static_cast<const float*>(sin_dev.get());
  const cudaError_t err =
      kernels::rope_launch(args_for(qk.get(), out_dev, cos_d, sin_d,
                                    static_cast<const std::int64_t*>(pos_dev.get()), tokens),
                           nullptr);

  std::vector<std::uint8_t> ref = in_place ? qk_host : poison(qk_host.size());
  const float* sin_h = combined_cache ? cos_host.data() + half : sin_host.data();
  parallel_for(tokens, [&](std::int64_t t0, std::int64_t t1) {
    kernels::rope_reference(args_for(qk_host.data() + t0 * token_stride * es,
                                     ref.data() + t0 * token_stride * es, cos_host.data(), sin_h,
                                     pos_host.data() + t0, t1 - t0));
  });

  char name[256];
  std::snprintf(
      name, sizeof name, "rope %s T=%lld Hq=%lld Hk=%lld D=%lld rot=%lld %s%s%s config=%d",
      dtype_name(dtype), static_cast<long long>(tokens), static_cast<long long>(s.q_heads),
      static_cast<long long>(s.k_heads), static_cast<long long>(s.head_dim),
      static_cast<long long>(rot), in_place ? "in_place" : "out_of_place",
      qkv_fused ? " qkv_fused" : "", combined_cache ? " cos_sin_cache" : "", config);
  if (err != cudaSuccess) return fail_launch(name, err);
  TS_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<std::uint8_t> got(ref.size());
  TS_CUDA_CHECK(cudaMemcpy(got.data(), out_dev, got.size(), cudaMemcpyDeviceToHost));
  const std::int64_t qk_width = (s.q_heads + s.k_heads) * s.head_dim;
  compare(name, got, ref, dtype, tolerance(dtype, false),
          [&](std::int64_t i) { return i % token_stride < qk_width; });
}

void rope_sweep(std::uint64_t& seed) {
  const RopeShape shapes[] = {
      {32, 8, 128, 128},                  // Llama-3-8B
      {8, 2, 64, 64},    {4, 1, 80, 80},  // half = 40: vectorized for every dtype
      {4, 2, 128, 64},                    // partial rotary: 64 pass-through dims
      {3, 1, 6, 6},                       // half = 3: scalar path
      {2, 0, 64, 64},                     // q only
  };
  for (DType dtype : {DType::f32, DType::f16, DType::bf16})
    for (std::int64_t tokens : {1, 3, 129, 4096})
      for (const RopeShape& s : shapes) {
        run_rope_case(dtype, tokens, s, true, false, false, -1, ++seed);
        run_rope_case(dtype, tokens, s, false, true, false, -1, ++seed);
        if (tokens == 129) run_rope_case(dtype, tokens, s, true, true, true, -1, ++seed);
      }
  for (int c = 0; c < kernels::rope_num_configs(); ++c) {
    run_rope_case(DType::bf16, 129, {32, 8, 128, 128}, false, true, false, c, ++seed);
    run_rope_case(DType::f16, 1000, {4, 2, 128, 64}, true, false, false, c, ++seed);
  }
}

// ---- argument validation: malformed args are errors, never faults ------------------------------

void invalid_args() {
  int bad = 0;
  kernels::RmsNormArgs r;
  r.rows = 4, r.cols = 8, r.x_row_stride = 4, r.y_row_stride = 8;  // stride < cols
  bad += kernels::rms_norm_launch(r, nullptr) != cudaErrorInvalidValue;
  r.x_row_stride = 8;  // null pointers
  bad += kernels::rms_norm_launch(r, nullptr) != cudaErrorInvalidValue;
  r.rows = 0;  // empty: no-op
  bad += kernels::rms_norm_launch(r, nullptr) != cudaSuccess;
  kernels::SoftmaxArgs s;
  s.rows = 1, s.cols = 4, s.x_row_stride = s.y_row_stride = 4, s.config = 99;
  bad += kernels::softmax_launch(s, nullptr) != cudaErrorInvalidValue;
  kernels::RopeArgs p;
  p.tokens = 1, p.q_heads = 1, p.head_dim = 8, p.rotary_dim = 7;  // odd rotary_dim
  bad += kernels::rope_launch(p, nullptr) != cudaErrorInvalidValue;
  ++g_cases;
  if (bad) ++g_failures;
  std::printf("%s invalid arguments are rejected without a launch (%d wrong)\n",
              bad ? "FAIL" : "PASS", bad);
}

}  // namespace
}  // namespace ts::gpu_test

int main(int argc, char** argv) {
  using namespace ts::gpu_test;
  bool only_rope = argc > 1 && std::strcmp(argv[1], "--rope") == 0;
  cudaDeviceProp prop{};
  TS_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s, %d SMs\n", prop.name, prop.multiProcessorCount);
  std::uint64_t seed = 20240601;
  invalid_args();
  if (!only_rope) row_op_sweep(seed);
  rope_sweep(seed);
  std::printf("SUMMARY: %d cases, %d failed -> %s\n", g_cases, g_failures,
              g_failures ? "FAIL" : "PASS");
  return g_failures ? 1 : 0;
}
