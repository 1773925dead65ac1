// gpu_mm_tests: the GEMM and attention kernels against their fp64 CPU references over sweeps of
// shapes (1, odd, not a multiple of any tile), dtypes, transposes, strides, causal masks,
// grouped-query heads and every launch config. One PASS/FAIL line per case; exit code 1 on any
// failure. Run on a GPU machine only (never by CI).
//
// Check, per output element (ref = fp64 result rounded to the dtype, s = the output's scale):
//   |got - ref| <= atol * s + rtol * |ref|      NaN never passes
//   gemm:      s = sqrt(K) (inputs in [-1, 1]);  f16: rtol 4e-3, atol 1e-3;  bf16: 1.6e-2, 8e-3
//   attention: s = 1 (outputs are convex mixes of v in [-1, 1]);  f16: 4e-3, 2e-3;  bf16: 1.6e-2,
//              1e-2 (p is rounded to 16 bits before the p v product, as in every flash kernel)
// plus a relative L2 error ||got - ref|| / ||ref|| under 1e-2 (bf16) / 2e-3 (f16). Output
// padding (leading dims larger than the row) must keep its poison bytes.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "attention/attention.hpp"
#include "gemm/gemm.hpp"
#include "gpu_common.hpp"

namespace ts::gpu_test {
namespace {

using kernels::dtype_name;
using kernels::dtype_size;
using kernels::load_element;

int g_failures = 0;
int g_cases = 0;

struct Tolerance {
  double rtol, atol, rel_l2;
};

template <class Valid>
void compare(const std::string& name, const std::vector<std::uint8_t>& got,
             const std::vector<std::uint8_t>& ref, DType dtype, Tolerance tol, Valid&& valid) {
  const std::size_t es = dtype_size(dtype);
  const std::int64_t n = static_cast<std::int64_t>(ref.size() / es);
  std::int64_t bad = 0, first_bad = -1;
  double max_err = 0.0, err2 = 0.0, ref2 = 0.0;
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
    if (!(err <= tol.atol + tol.rtol * std::fabs(r))) {
      if (first_bad < 0) first_bad = i;
      ++bad;
    }
    if (std::isfinite(err)) max_err = std::max(max_err, err);
    err2 += (g - r) * (g - r);
    ref2 += r * r;
  }
  const double rel = ref2 > 0 ? std::sqrt(err2 / ref2) : std::sqrt(err2);
  ++g_cases;
  if (bad == 0 && rel <= tol.rel_l2) {
    std::printf("PASS %s max_abs_err=%.3g rel_l2=%.3g\n", name.c_str(), max_err, rel);
    return;
  }
  ++g_failures;
  if (first_bad < 0) first_bad = 0;
  std::printf(
      "FAIL %s: %lld bad of %lld, first at %lld (got %g, ref %g), max_abs_err=%.3g "
      "rel_l2=%.3g\n",
      name.c_str(), static_cast<long long>(bad), static_cast<long long>(n),
      static_cast<long long>(first_bad), load_element(got.data(), dtype, first_bad),
      load_element(ref.data(), dtype, first_bad), max_err, rel);
  std::fflush(stdout);
}

void fail(const std::string& name, const char* why) {
  ++g_cases;
  ++g_failures;
  std::printf("FAIL %s: %s\n", name.c_str(), why);
}

// ---- GEMM ----------------------------------------------------------------------------------

struct GemmCase {
  std::int64_t M, N, K;
  std::int64_t pad_a = 0, pad_b = 0, pad_d = 0;  // leading dim = row length + pad
  std::int64_t offset = 0;                       // elements added to every base pointer
};

void run_gemm_case(DType dtype, const GemmCase& c, bool ta, bool tb, int config,
                   std::uint64_t seed) {
  const std::size_t es = dtype_size(dtype);
  const std::int64_t a_rows = ta ? c.K : c.M, a_cols = ta ? c.M : c.K;
  const std::int64_t b_rows = tb ? c.N : c.K, b_cols = tb ? c.K : c.N;
  const std::int64_t lda = a_cols + c.pad_a, ldb = b_cols + c.pad_b, ldd = c.N + c.pad_d;
  const std::int64_t a_count = c.offset + a_rows * lda, b_count = c.offset + b_rows * ldb;
  const std::int64_t d_count = c.offset + c.M * ldd;
  const auto a_host = random_buffer(dtype, std::max<std::int64_t>(a_count, 1), -1, 1, seed);
  const auto b_host = random_buffer(dtype, std::max<std::int64_t>(b_count, 1), -1, 1, seed + 1);
  std::vector<std::uint8_t> ref(static_cast<std::size_t>(d_count) * es, 0xff);
  DeviceBuffer a(a_host.size()), b(b_host.size()), d(ref.size());
  a.upload(a_host.data());
  b.upload(b_host.data());
  d.upload(ref.data());  // poison

  auto at = [&](const void* base, std::int64_t off) {
    return static_cast<const std::uint8_t*>(base) + off * static_cast<std::int64_t>(es);
  };
  kernels::GemmArgs g;
  g.a = at(a.get(), c.offset), g.b = at(b.get(), c.offset);
  g.d = const_cast<std::uint8_t*>(at(d.get(), c.offset));
  g.M = c.M, g.N = c.N, g.K = c.K, g.lda = lda, g.ldb = ldb, g.ldd = ldd;
  g.trans_a = ta, g.trans_b = tb, g.dtype = dtype, g.config = config;
  char name[256];
  std::snprintf(name, sizeof name,
                "gemm %s M=%lld N=%lld K=%lld trans_a=%d trans_b=%d ld+=(%lld,%lld,%lld) "
                "offset=%lld config=%d path=%s",
                dtype_name(dtype), (long long)c.M, (long long)c.N, (long long)c.K, ta, tb,
                (long long)c.pad_a, (long long)c.pad_b, (long long)c.pad_d, (long long)c.offset,
                config, kernels::gemm_uses_tensor_cores(g) ? "tensor cores" : "fallback");
  const cudaError_t err = kernels::gemm_launch(g, nullptr);
  if (err != cudaSuccess) return fail(name, cudaGetErrorString(err));
  TS_CUDA_CHECK(cudaDeviceSynchronize());

  // Reference: row blocks of d in parallel (a's rows for !trans_a, a's columns otherwise).
  parallel_for(c.M, [&](std::int64_t m0, std::int64_t m1) {
    kernels::GemmArgs h = g;
    h.a = at(a_host.data(), c.offset + (ta ? m0 : m0 * lda));
    h.b = at(b_host.data(), c.offset);
    h.d = const_cast<std::uint8_t*>(at(ref.data(), c.offset + m0 * ldd));
    h.M = m1 - m0;
    kernels::gemm_reference(h);
  });
  std::vector<std::uint8_t> got(ref.size());
  d.download(got.data());
  const double s = std::sqrt(static_cast<double>(std::max<std::int64_t>(c.K, 1)));
  const Tolerance tol =
      dtype == DType::f16 ? Tolerance{4e-3, 1e-3 * s, 2e-3} : Tolerance{1.6e-2, 8e-3 * s, 1e-2};
  compare(name, got, ref, dtype, tol, [&](std::int64_t i) {
    const std::int64_t j = i - c.offset;
    return j >= 0 && j % ldd < c.N && j / ldd < c.M;
  });
}

void gemm_sweep(std::uint64_t& seed) {
  const GemmCase shapes[] = {
      {128, 128, 64},
      {1024, 1024, 1024},
      {1000, 1000, 1000},  // aligned, tile-odd
      {257, 384, 520},
      {1, 4096, 4096},
      {16, 6144, 512},  // M = 1, decode-like
      {129, 136, 72},
      {2048, 512, 256},  // more than a wave of tiles
      {127, 129, 65},
      {1, 1, 1},
      {3, 5, 7},                    // odd: the fallback
      {64, 64, 0},                  // K = 0: zeros
      {200, 136, 264, 8, 16, 24},   // padded leading dims
      {200, 136, 264, 3, 5, 1},     // unaligned leading dims
      {256, 256, 128, 0, 0, 0, 1},  // unaligned pointers
  };
  for (DType dtype : {DType::bf16, DType::f16})
    for (bool ta : {false, true})
      for (bool tb : {false, true})
        for (const GemmCase& c : shapes) run_gemm_case(dtype, c, ta, tb, -1, ++seed);
  for (int config = 0; config < kernels::gemm_num_configs(); ++config)
    for (DType dtype : {DType::bf16, DType::f16})
      for (bool ta : {false, true})
        for (bool tb : {false, true})
          // The last two: decode shapes (M <= 16) for the decode-shape config, which takes
          // them only with trans_b; rows and columns past M and N, K not a multiple of 32.
          for (const GemmCase& c : {GemmCase{520, 264, 200}, GemmCase{1024, 1024, 1024},
                                    GemmCase{16, 6144, 512}, GemmCase{7, 200, 1032}})
            run_gemm_case(dtype, c, ta, tb, config, ++seed);
}

// ---- attention -------------------------------------------------------------------------------

struct AttnCase {
  std::int64_t B, Hq, Hkv, Sq, Skv, D;
  bool causal;
  bool seq_major = false;   // tensors stored [B, S, H, D] and viewed as [B, H, S, D]
  std::int64_t offset = 0;  // elements added to every base pointer (unaligned: the fallback)
};

// Strides (b, h, s, d) of a [B, H, S, D] view of a buffer stored [B, H, S, D] or [B, S, H, D].
void strides_of(std::int64_t H, std::int64_t S, std::int64_t D, bool seq_major,
                std::int64_t out[4]) {
  out[0] = H * S * D;
  out[1] = seq_major ? D : S * D;
  out[2] = seq_major ? H * D : D;
  out[3] = 1;
}

void run_attention_case(DType dtype, const AttnCase& c, int config, std::uint64_t seed) {
  const std::size_t es = dtype_size(dtype);
  const std::int64_t q_count = c.offset + c.B * c.Hq * c.Sq * c.D;
  const std::int64_t kv_count = c.offset + c.B * c.Hkv * c.Skv * c.D;
  const auto q_host = random_buffer(dtype, q_count, -3, 3, seed);  // scores of O(1) spread
  const auto k_host = random_buffer(dtype, kv_count, -1, 1, seed + 1);
  const auto v_host = random_buffer(dtype, kv_count, -1, 1, seed + 2);
  std::vector<std::uint8_t> ref(static_cast<std::size_t>(q_count) * es, 0xff);
  DeviceBuffer q(q_host.size()), k(k_host.size()), v(v_host.size()), o(ref.size());
  q.upload(q_host.data());
  k.upload(k_host.data());
  v.upload(v_host.data());
  o.upload(ref.data());

  auto at = [&](const void* base, std::int64_t off) {
    return const_cast<std::uint8_t*>(static_cast<const std::uint8_t*>(base) +
                                     off * static_cast<std::int64_t>(es));
  };
  kernels::AttentionArgs a;
  a.q = at(q.get(), c.offset), a.k = at(k.get(), c.offset), a.v = at(v.get(), c.offset);
  a.o = at(o.get(), c.offset);
  a.B = c.B, a.Hq = c.Hq, a.Hkv = c.Hkv, a.Sq = c.Sq, a.Skv = c.Skv, a.D = c.D;
  strides_of(c.Hq, c.Sq, c.D, c.seq_major, a.q_strides);
  strides_of(c.Hq, c.Sq, c.D, c.seq_major, a.o_strides);
  strides_of(c.Hkv, c.Skv, c.D, c.seq_major, a.k_strides);
  strides_of(c.Hkv, c.Skv, c.D, c.seq_major, a.v_strides);
  a.is_causal = c.causal, a.dtype = dtype, a.config = config;
  char name[256];
  std::snprintf(name, sizeof name,
                "attention %s B=%lld Hq=%lld Hkv=%lld Sq=%lld Skv=%lld D=%lld causal=%d "
                "seq_major=%d offset=%lld config=%d path=%s",
                dtype_name(dtype), (long long)c.B, (long long)c.Hq, (long long)c.Hkv,
                (long long)c.Sq, (long long)c.Skv, (long long)c.D, c.causal, c.seq_major,
                (long long)c.offset, config,
                kernels::attention_uses_tensor_cores(a) ? "wgmma" : "fallback");
  const cudaError_t err = kernels::attention_launch(a, nullptr);
  if (err != cudaSuccess) return fail(name, cudaGetErrorString(err));
  TS_CUDA_CHECK(cudaDeviceSynchronize());

  // Reference: one (b, h) pair per task, as a B = 1, Hq = Hkv = 1 problem.
  const std::int64_t group = c.Hq / c.Hkv;
  parallel_for(c.B * c.Hq, [&](std::int64_t p0, std::int64_t p1) {
    for (std::int64_t pair = p0; pair < p1; ++pair) {
      const std::int64_t b = pair / c.Hq, h = pair % c.Hq, g = h / group;
      kernels::AttentionArgs r = a;
      r.q = at(q_host.data(), c.offset + b * a.q_strides[0] + h * a.q_strides[1]);
      r.o = at(ref.data(), c.offset + b * a.o_strides[0] + h * a.o_strides[1]);
      r.k = at(k_host.data(), c.offset + b * a.k_strides[0] + g * a.k_strides[1]);
      r.v = at(v_host.data(), c.offset + b * a.v_strides[0] + g * a.v_strides[1]);
      r.B = 1, r.Hq = 1, r.Hkv = 1;
      kernels::attention_reference(r);
    }
  });
  std::vector<std::uint8_t> got(ref.size());
  o.download(got.data());
  const Tolerance tol =
      dtype == DType::f16 ? Tolerance{4e-3, 2e-3, 2e-3} : Tolerance{1.6e-2, 1e-2, 1e-2};
  compare(name, got, ref, dtype, tol, [&](std::int64_t i) { return i >= c.offset; });
}

void attention_sweep(std::uint64_t& seed) {
  const AttnCase shapes[] = {
      {1, 2, 1, 128, 128, 64, false},
      {1, 2, 1, 128, 128, 64, true},
      {2, 4, 2, 200, 333, 128, false},
      {2, 4, 2, 200, 333, 128, true},  // odd lengths
      {1, 2, 2, 1, 77, 128, false},
      {2, 8, 2, 1, 1000, 128, true},  // one query
      {1, 2, 1, 300, 300, 256, true},
      {1, 2, 1, 300, 300, 256, false},  // D = 256
      {1, 4, 1, 513, 1000, 64, true},
      {1, 2, 1, 1000, 300, 128, true},  // Sq != Skv
      {2, 8, 2, 1024, 1024, 128, true},
      {1, 4, 4, 777, 777, 128, false},
      {1, 4, 2, 300, 500, 128, true, true},     // [B, S, H, D]
      {1, 2, 1, 130, 70, 128, true, false, 1},  // unaligned
      {1, 2, 2, 65, 65, 64, false, false, 3},
      {1, 2, 1, 40, 50, 256, true, false, 5},
  };
  for (DType dtype : {DType::bf16, DType::f16})
    for (const AttnCase& c : shapes) run_attention_case(dtype, c, -1, ++seed);
  for (int config = 0; config < kernels::attention_num_configs(); ++config)
    for (DType dtype : {DType::bf16, DType::f16})
      for (std::int64_t D : {64, 128, 256})
        for (bool causal : {false, true})
          run_attention_case(dtype, {2, 4, 2, 333, 333, D, causal}, config, ++seed);
}

// ---- argument validation --------------------------------------------------------------------

void invalid_args() {
  int bad = 0;
  kernels::GemmArgs g;
  g.M = g.N = g.K = 8, g.lda = g.ldb = g.ldd = 8;
  bad += kernels::gemm_launch(g, nullptr) != cudaErrorInvalidValue;  // null pointers
  g.lda = 4;
  bad += kernels::gemm_launch(g, nullptr) != cudaErrorInvalidValue;  // lda < K
  g.lda = 8, g.dtype = DType::f32;
  bad += kernels::gemm_launch(g, nullptr) != cudaErrorInvalidValue;  // f32
  g.dtype = DType::bf16, g.config = 99;
  bad += kernels::gemm_launch(g, nullptr) != cudaErrorInvalidValue;
  g.config = -1, g.M = 0;
  bad += kernels::gemm_launch(g, nullptr) != cudaSuccess;  // empty: no-op
  kernels::AttentionArgs a;
  a.B = 1, a.Hq = 3, a.Hkv = 2, a.Sq = a.Skv = 4, a.D = 128;
  for (auto* s : {a.q_strides, a.k_strides, a.v_strides, a.o_strides}) s[3] = 1;
  bad += kernels::attention_launch(a, nullptr) != cudaErrorInvalidValue;  // Hq % Hkv
  a.Hq = 2, a.D = 96;
  bad += kernels::attention_launch(a, nullptr) != cudaErrorInvalidValue;  // D
  a.D = 128;
  bad += kernels::attention_launch(a, nullptr) != cudaErrorInvalidValue;  // null pointers
  a.scale = -1;
  bad += kernels::attention_launch(a, nullptr) != cudaErrorInvalidValue;
  a.scale = 0, a.Sq = 0;
  bad += kernels::attention_launch(a, nullptr) != cudaSuccess;
  ++g_cases;
  if (bad) ++g_failures;
  std::printf("%s invalid gemm/attention arguments are rejected without a launch (%d wrong)\n",
              bad ? "FAIL" : "PASS", bad);
}

}  // namespace
}  // namespace ts::gpu_test

int main(int argc, char** argv) {
  using namespace ts::gpu_test;
  const bool only_gemm = argc > 1 && std::strcmp(argv[1], "--gemm") == 0;
  const bool only_attention = argc > 1 && std::strcmp(argv[1], "--attention") == 0;
  cudaDeviceProp prop{};
  TS_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s, %d SMs\n", prop.name, prop.multiProcessorCount);
  std::uint64_t seed = 20261203;
  invalid_args();
  if (!only_attention) gemm_sweep(seed);
  if (!only_gemm) attention_sweep(seed);
  std::printf("SUMMARY: %d cases, %d failed -> %s\n", g_cases, g_failures,
              g_failures ? "FAIL" : "PASS");
  return g_failures ? 1 : 0;
}
