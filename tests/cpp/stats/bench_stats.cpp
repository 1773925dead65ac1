// Cost of the gate's statistics on a typical run (200 ABBA pairs): paired_stats + judge.
#include <cmath>
#include <random>
#include <vector>

#include <benchmark/benchmark.h>

#include "ts/perf/stats.hpp"

static void bm_paired_stats_and_judge(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  std::mt19937_64 rng(7);
  std::normal_distribution<double> noise(0.0, 0.02);
  std::vector<double> base(n), cand(n);
  for (std::size_t i = 0; i < n; ++i) {
    base[i] = 1.0 * std::exp(noise(rng));
    cand[i] = 0.9 * std::exp(noise(rng));
  }
  for (auto _ : state) {
    auto s = ts::perf::paired_stats(base, cand);
    auto v = ts::perf::judge(*s);
    benchmark::DoNotOptimize(v.accept);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * n));
}
BENCHMARK(bm_paired_stats_and_judge)->Arg(200)->Arg(2000);

BENCHMARK_MAIN();
