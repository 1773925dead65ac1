// Paired timing statistics on synthetic data with known truth: A-vs-A must never pass, a real
// speedup must, and the CI must have the coverage it claims.
#include <cmath>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "ts/perf/stats.hpp"

namespace {

using ts::perf::VerdictReason;

struct Pairs {
  std::vector<double> baseline, candidate;
};

// n ABBA-ordered pairs: each side's time is true_ms * drift(t) * noise. The drift (a slow
// 10% warm-up ramp) is shared by the two calls of a pair, as in the real worker.
template <class Noise>
Pairs simulate(std::size_t n, double baseline_ms, double candidate_ms, std::uint64_t seed,
               Noise noise) {
  std::mt19937_64 rng(seed);
  Pairs p;
  for (std::size_t i = 0; i < n; ++i) {
    double drift = 1.0 + 0.1 * std::exp(-static_cast<double>(i) / 20.0);
    p.baseline.push_back(baseline_ms * drift * noise(rng));
    p.candidate.push_back(candidate_ms * drift * noise(rng));
  }
  return p;
}

auto lognormal(double sigma) {
  return [sigma](std::mt19937_64& rng) {
    return std::exp(std::normal_distribution<double>(0.0, sigma)(rng));
  };
}

// Cauchy noise in log space (no mean, no variance) plus 5% of calls hit by a 3x stall.
auto heavy_tailed(double scale) {
  return [scale](std::mt19937_64& rng) {
    double x = std::cauchy_distribution<double>(0.0, scale)(rng);
    x = std::clamp(x, -3.0, 3.0);
    double stall = std::uniform_real_distribution<double>(0, 1)(rng) < 0.05 ? 3.0 : 1.0;
    return std::exp(x) * stall;
  };
}

ts::perf::PairedStats stats_of(const Pairs& p) {
  auto s = ts::perf::paired_stats(p.baseline, p.candidate);
  EXPECT_TRUE(s) << s.error().message;
  return *s;
}

TEST(PairedStats, ExactOrderStatisticCi) {
  // n = 10 at 95%: P(B<=1) = 11/1024 <= 0.025 < P(B<=2) = 56/1024, so the CI is [x_(2), x_(9)].
  std::vector<double> base(10, 1.0), cand;
  for (int i = 1; i <= 10; ++i) cand.push_back(std::exp(0.01 * i));  // sorted log ratios .01..0.1
  auto s = ts::perf::paired_stats(base, cand);
  ASSERT_TRUE(s);
  EXPECT_TRUE(s->ci_achieved);
  EXPECT_NEAR(std::log(s->ratio_lower), 0.02, 1e-12);
  EXPECT_NEAR(std::log(s->ratio_upper), 0.09, 1e-12);
  EXPECT_NEAR(s->confidence, 1.0 - 22.0 / 1024.0, 1e-12);
  EXPECT_NEAR(std::log(s->ratio), 0.055, 1e-12);  // mean of the two middle log ratios
  EXPECT_NEAR(s->improvement, 1 - s->ratio, 1e-15);
  EXPECT_NEAR(s->improvement_lower, 1 - s->ratio_upper, 1e-15);
  EXPECT_EQ(ts::perf::min_pairs_for_confidence(0.95), 6u);
  EXPECT_EQ(ts::perf::min_pairs_for_confidence(0.99), 8u);
}

TEST(PairedStats, RatioIsCandidateOverBaseline) {
  std::vector<double> base = {2.0, 4.0, 8.0}, cand = {1.0, 2.0, 4.0};
  auto s = ts::perf::paired_stats(base, cand);
  ASSERT_TRUE(s);
  EXPECT_DOUBLE_EQ(s->ratio, 0.5);
  EXPECT_DOUBLE_EQ(s->improvement, 0.5);
  EXPECT_DOUBLE_EQ(s->baseline_median_ms, 4.0);
  EXPECT_DOUBLE_EQ(s->candidate_median_ms, 2.0);
}

TEST(PairedStats, BadInputIsAnError) {
  std::vector<double> a = {1, 2, 3}, b = {1, 2};
  EXPECT_FALSE(ts::perf::paired_stats(a, b));
  EXPECT_FALSE(ts::perf::paired_stats(std::vector<double>{}, std::vector<double>{}));
  std::vector<double> nan = {1, NAN, 3}, zero = {1, 0, 3}, neg = {1, -1, 3}, inf = {1, INFINITY, 3};
  for (const auto* bad : {&nan, &zero, &neg, &inf}) {
    auto s = ts::perf::paired_stats(a, *bad);
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().code, ts::Errc::invalid_argument);
  }
  EXPECT_FALSE(ts::perf::paired_stats(a, a, {.confidence = 1.0}));
}

TEST(Verdict, AVersusANeverAccepted) {
  // 1000 seeded A-vs-A runs, 2% noise per call, 50 pairs each. Passing needs the CI's upper end
  // below 0.98, about 6 standard errors below the true median: expected count ~1e-6. Bound: 0.
  int accepted = 0;
  for (std::uint64_t seed = 0; seed < 1000; ++seed) {
    auto s = stats_of(simulate(50, 1.0, 1.0, seed, lognormal(0.02)));
    accepted += ts::perf::judge(s).accept;
  }
  EXPECT_EQ(accepted, 0);
}

TEST(Verdict, CiCoverageIsHonestAtZeroThreshold) {
  // With min_improvement = 0, A-vs-A passes exactly when the CI misses the true median on the
  // low side: at most alpha/2 = 2.5% (less, since the order-statistic CI is conservative).
  // Bound: 40 of 1000, three binomial standard deviations above 25.
  int accepted = 0;
  for (std::uint64_t seed = 0; seed < 1000; ++seed) {
    auto s = stats_of(simulate(50, 1.0, 1.0, 10'000 + seed, lognormal(0.02)));
    accepted += ts::perf::judge(s, {.min_improvement = 0.0}).accept;
  }
  EXPECT_LE(accepted, 40);
  EXPECT_GT(accepted, 0);  // the simulation is not degenerate: misses do happen
}

TEST(Verdict, HeavyTailedAVersusANeverAccepted) {
  int accepted = 0;
  for (std::uint64_t seed = 0; seed < 1000; ++seed) {
    auto s = stats_of(simulate(100, 1.0, 1.0, 20'000 + seed, heavy_tailed(0.02)));
    accepted += ts::perf::judge(s).accept;
  }
  EXPECT_EQ(accepted, 0);
}

TEST(Verdict, TrueTenPercentSpeedupAccepted) {
  int accepted = 0;
  for (std::uint64_t seed = 0; seed < 100; ++seed) {
    auto s = stats_of(simulate(50, 1.0, 0.9, 30'000 + seed, lognormal(0.02)));
    auto v = ts::perf::judge(s);
    accepted += v.accept;
    if (seed == 0) {
      EXPECT_EQ(v.reason, VerdictReason::faster) << v.detail;
      EXPECT_NEAR(s.ratio, 0.9, 0.02);
      EXPECT_GT(s.improvement_lower, 0.02);
    }
  }
  EXPECT_EQ(accepted, 100);
}

TEST(Verdict, HeavyTailedSpeedupAcceptedMedianIgnoresStalls) {
  auto p = simulate(100, 1.0, 0.9, 40'000, heavy_tailed(0.02));
  auto s = stats_of(p);
  auto v = ts::perf::judge(s);
  EXPECT_TRUE(v.accept) << v.detail;
  EXPECT_NEAR(s.ratio, 0.9, 0.03);
  EXPECT_GT(s.outliers, 0u);  // the 3x stalls are seen and counted
}

TEST(Verdict, SpeedupBelowThresholdRejected) {
  // A true 1% win is real but below the 2% bar.
  auto s = stats_of(simulate(200, 1.0, 0.99, 50'000, lognormal(0.005)));
  auto v = ts::perf::judge(s);
  EXPECT_FALSE(v.accept);
  EXPECT_EQ(v.reason, VerdictReason::not_faster) << v.detail;
}

TEST(Verdict, TooNoisy) {
  auto s = stats_of(simulate(30, 1.0, 0.5, 60'000, lognormal(0.5)));
  auto v = ts::perf::judge(s);
  EXPECT_FALSE(v.accept);
  EXPECT_EQ(v.reason, VerdictReason::too_noisy) << v.detail;
}

TEST(Verdict, TiesAreExact) {
  std::vector<double> base(30, 2.0), same(30, 2.0), faster(30, 1.6);
  auto s_same = ts::perf::paired_stats(base, same);
  ASSERT_TRUE(s_same);
  EXPECT_EQ(s_same->ratio, 1.0);
  EXPECT_EQ(s_same->ci_half_width_log, 0.0);
  EXPECT_EQ(s_same->outliers, 0u);
  EXPECT_EQ(ts::perf::judge(*s_same).reason, VerdictReason::not_faster);

  auto s_fast = ts::perf::paired_stats(base, faster);
  ASSERT_TRUE(s_fast);
  EXPECT_NEAR(s_fast->ratio, 0.8, 1e-12);
  EXPECT_TRUE(ts::perf::judge(*s_fast).accept);

  // Mostly tied with two wild pairs: MAD is 0, yet only the wild pairs are outliers.
  std::vector<double> cand(30, 2.0);
  cand[3] = 20.0;
  cand[7] = 0.2;
  auto s_mixed = ts::perf::paired_stats(base, cand);
  ASSERT_TRUE(s_mixed);
  EXPECT_EQ(s_mixed->outliers, 2u);
}

TEST(Verdict, TooFewSamples) {
  std::vector<double> base(5, 1.0), cand(5, 0.5);
  auto s = ts::perf::paired_stats(base, cand);
  ASSERT_TRUE(s);
  EXPECT_FALSE(s->ci_achieved);
  EXPECT_NEAR(s->confidence, 1 - 2.0 / 32, 1e-12);
  auto v = ts::perf::judge(*s, {.min_samples = 1});
  EXPECT_EQ(v.reason, VerdictReason::too_few_samples);
  EXPECT_FALSE(v.accept);

  std::vector<double> base19(19, 1.0), cand19(19, 0.5);
  auto s19 = ts::perf::paired_stats(base19, cand19);
  ASSERT_TRUE(s19);
  EXPECT_EQ(ts::perf::judge(*s19).reason, VerdictReason::too_few_samples);  // default min 20
}

TEST(WallClock, FlagsEventsThatMissWork) {
  auto ok = ts::perf::check_wall_clock(9.0, 10.0);
  ASSERT_TRUE(ok);
  EXPECT_FALSE(ok->suspicious);
  EXPECT_NEAR(ok->event_fraction, 0.9, 1e-12);

  auto side_stream = ts::perf::check_wall_clock(0.5, 10.0);  // events saw 5% of the wall time
  ASSERT_TRUE(side_stream);
  EXPECT_TRUE(side_stream->suspicious);

  EXPECT_FALSE(ts::perf::check_wall_clock(1.0, 0.0));
  EXPECT_FALSE(ts::perf::check_wall_clock(NAN, 1.0));
  EXPECT_FALSE(ts::perf::check_wall_clock(-1.0, 1.0));

  // Relative: baseline events cover 80% of wall, candidate 20% -> flagged; 70% -> fine.
  auto hack = ts::perf::compare_wall_clock(8, 10, 1, 5);
  ASSERT_TRUE(hack);
  EXPECT_TRUE(hack->suspicious) << hack->detail;
  auto fine = ts::perf::compare_wall_clock(8, 10, 3.5, 5);
  ASSERT_TRUE(fine);
  EXPECT_FALSE(fine->suspicious) << fine->detail;
  EXPECT_FALSE(ts::perf::compare_wall_clock(8, 10, 1, 5, 1.5));
}

}  // namespace
