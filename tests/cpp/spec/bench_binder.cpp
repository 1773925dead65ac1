// The binder runs on every op call: binding one GEMMFwdOp call (parsing excluded) must cost
// well under 2 us. Run: build/cpp/tests/cpp/spec/bench_binder
#include <benchmark/benchmark.h>

#include "ts/spec/binder.hpp"

namespace {

using namespace ts::spec;

const Manifest& project() {
  static const Manifest m = *load_manifest(std::filesystem::path(TS_SOURCE_DIR) / "specs");
  return m;
}

void BM_BindGemm(benchmark::State& state) {
  const OpSpec& gemm = *project().find("GEMMFwdOp");
  const int64_t a_shape[] = {4096, 4096}, a_strides[] = {4096, 1};
  const int64_t b_shape[] = {4096, 4096}, b_strides[] = {4096, 1};
  const TensorArg args[] = {{DType::bfloat16, a_shape, a_strides},
                            {DType::bfloat16, b_shape, b_strides}};
  const ParamValue params[] = {false, true};
  for (auto _ : state) {
    auto r = bind_call(gemm, args, params);
    if (!r) state.SkipWithError(r.error().message.c_str());
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_BindGemm)->Repetitions(10)->ReportAggregatesOnly(true);

void BM_BindRMSNorm3D(benchmark::State& state) {
  const OpSpec& op = *project().find("RMSNormFwdOp");
  const int64_t x_shape[] = {4, 2048, 4096}, w_shape[] = {4096};
  const TensorArg args[] = {{DType::bfloat16, x_shape, {}}, {DType::bfloat16, w_shape, {}}};
  for (auto _ : state) {
    auto r = bind_call(op, args, {});
    if (!r) state.SkipWithError(r.error().message.c_str());
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_BindRMSNorm3D)->Repetitions(10)->ReportAggregatesOnly(true);

void BM_BindAttention(benchmark::State& state) {
  const OpSpec& op = *project().find("MultiHeadAttentionFwdOp");
  const int64_t q[] = {1, 32, 8192, 128}, kv[] = {1, 8, 8192, 128};
  const TensorArg args[] = {
      {DType::bfloat16, q, {}}, {DType::bfloat16, kv, {}}, {DType::bfloat16, kv, {}}};
  const ParamValue params[] = {true};
  for (auto _ : state) {
    auto r = bind_call(op, args, params);
    if (!r) state.SkipWithError(r.error().message.c_str());
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_BindAttention)->Repetitions(10)->ReportAggregatesOnly(true);

}  // namespace

BENCHMARK_MAIN();
