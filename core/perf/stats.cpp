// Paired timing statistics: see ts/perf/stats.hpp for the method.
#include "ts/perf/stats.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

namespace ts::perf {
namespace {

// P(B <= j) for B ~ Binomial(n, 1/2), for every j in [0, n). The pmf is built in log space
// (log C(n, i) - n log 2) because 2^-n underflows a double for n > 1074; terms that underflow
// are below 1e-300 and cannot move a CI decision.
std::vector<double> binomial_half_cdf(std::size_t n) {
  std::vector<double> cdf(n + 1);
  double log_pmf = -static_cast<double>(n) * std::log(2.0);
  double sum = 0;
  for (std::size_t i = 0; i <= n; ++i) {
    sum += std::exp(log_pmf);
    cdf[i] = std::min(sum, 1.0);
    log_pmf += std::log(static_cast<double>(n - i)) - std::log(static_cast<double>(i + 1));
  }
  return cdf;
}

// Linear interpolation between order statistics (the "type 7" quantile) of sorted data.
double quantile_sorted(const std::vector<double>& sorted, double q) {
  double pos = q * static_cast<double>(sorted.size() - 1);
  auto lo = static_cast<std::size_t>(std::floor(pos));
  auto hi = std::min(lo + 1, sorted.size() - 1);
  double frac = pos - static_cast<double>(lo);
  return sorted[lo] + frac * (sorted[hi] - sorted[lo]);
}

double median_sorted(const std::vector<double>& sorted) {
  return quantile_sorted(sorted, 0.5);
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return median_sorted(v);
}

bool is_valid_time(double t) {
  return std::isfinite(t) && t > 0;
}

}  // namespace

std::size_t min_pairs_for_confidence(double confidence) {
  // The widest CI, [min, max], covers the median with probability 1 - 2 * 2^-n.
  std::size_t n = 1;
  while (n < 1100 && 1.0 - 2.0 * std::ldexp(1.0, -static_cast<int>(n)) < confidence) ++n;
  return n;
}

Expected<PairedStats> paired_stats(std::span<const double> baseline_ms,
                                   std::span<const double> candidate_ms,
                                   const PairedStatsOptions& options) {
  if (baseline_ms.size() != candidate_ms.size())
    return fail(Errc::invalid_argument,
                fmt::format("paired_stats: {} baseline vs {} candidate samples: pairs must match",
                            baseline_ms.size(), candidate_ms.size()));
  if (baseline_ms.empty()) return fail(Errc::invalid_argument, "paired_stats: no samples");
  if (!(options.confidence > 0 && options.confidence < 1))
    return fail(Errc::invalid_argument,
                fmt::format("paired_stats: confidence {} is not in (0, 1)", options.confidence));

  const std::size_t n = baseline_ms.size();
  std::vector<double> log_ratio(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (!is_valid_time(baseline_ms[i]) || !is_valid_time(candidate_ms[i]))
      return fail(Errc::invalid_argument,
                  fmt::format("paired_stats: pair {} has a time that is not a finite positive "
                              "number (baseline {}, candidate {})",
                              i, baseline_ms[i], candidate_ms[i]));
    log_ratio[i] = std::log(candidate_ms[i]) - std::log(baseline_ms[i]);
  }
  std::sort(log_ratio.begin(), log_ratio.end());

  PairedStats s;
  s.n = n;
  const double med = median_sorted(log_ratio);
  s.ratio = std::exp(med);

  // Largest k (1-based) with coverage 1 - 2 P(B <= k-1) >= confidence, k <= (n+1)/2.
  const auto cdf = binomial_half_cdf(n);
  const double alpha = 1.0 - options.confidence;
  std::size_t k = 0;
  for (std::size_t cand = 1; cand <= (n + 1) / 2; ++cand) {
    if (2.0 * cdf[cand - 1] <= alpha + 1e-12)
      k = cand;
    else
      break;
  }
  if (k == 0) {
    s.ci_achieved = false;
    s.ratio_lower = std::exp(log_ratio.front());
    s.ratio_upper = std::exp(log_ratio.back());
    s.confidence = 1.0 - 2.0 * cdf[0];
  } else {
    s.ci_achieved = true;
    s.ratio_lower = std::exp(log_ratio[k - 1]);
    s.ratio_upper = std::exp(log_ratio[n - k]);
    s.confidence = 1.0 - 2.0 * cdf[k - 1];
  }
  s.improvement = 1.0 - s.ratio;
  s.improvement_lower = 1.0 - s.ratio_upper;
  s.ci_half_width_log = (std::log(s.ratio_upper) - std::log(s.ratio_lower)) / 2.0;
  s.ratio_p10 = std::exp(quantile_sorted(log_ratio, 0.10));
  s.ratio_p90 = std::exp(quantile_sorted(log_ratio, 0.90));

  std::vector<double> dev(n);
  for (std::size_t i = 0; i < n; ++i) dev[i] = std::abs(log_ratio[i] - med);
  s.log_ratio_mad = median_of(dev);
  // 1.4826 * MAD estimates sigma for normal data. With more than half the pairs tied, MAD is 0
  // and would flag every other pair; fall back to the mean absolute deviation (x 1.2533, the
  // same normal-consistency idea), and to "no outliers" when all pairs are identical.
  double scale = 1.4826 * s.log_ratio_mad;
  if (scale == 0) {
    double mean_dev = 0;
    for (double d : dev) mean_dev += d;
    scale = 1.2533 * mean_dev / static_cast<double>(n);
  }
  if (scale > 0)
    s.outliers = static_cast<std::size_t>(std::count_if(
        dev.begin(), dev.end(), [&](double d) { return d > options.outlier_mad_k * scale; }));

  s.baseline_median_ms = median_of({baseline_ms.begin(), baseline_ms.end()});
  s.candidate_median_ms = median_of({candidate_ms.begin(), candidate_ms.end()});
  return s;
}

const char* verdict_reason_name(VerdictReason r) noexcept {
  switch (r) {
    case VerdictReason::faster:
      return "faster";
    case VerdictReason::not_faster:
      return "not_faster";
    case VerdictReason::too_noisy:
      return "too_noisy";
    case VerdictReason::too_few_samples:
      return "too_few_samples";
  }
  return "?";
}

Verdict judge(const PairedStats& s, const VerdictPolicy& policy) {
  Verdict v;
  const double threshold = 1.0 - policy.min_improvement;
  if (s.n < policy.min_samples || !s.ci_achieved) {
    v.reason = VerdictReason::too_few_samples;
    v.detail = fmt::format("{} pairs (need {}{})", s.n, policy.min_samples,
                           s.ci_achieved ? "" : "; CI level not reachable");
    return v;
  }
  if (!(s.ci_half_width_log <= policy.max_ci_half_width)) {
    v.reason = VerdictReason::too_noisy;
    v.detail = fmt::format(
        "CI half-width {:.4f} (log) above cap {:.4f}; ratio {:.4f} [{:.4f}, "
        "{:.4f}], {} outliers of {}",
        s.ci_half_width_log, policy.max_ci_half_width, s.ratio, s.ratio_lower, s.ratio_upper,
        s.outliers, s.n);
    return v;
  }
  v.accept = s.ratio_upper < threshold;
  v.reason = v.accept ? VerdictReason::faster : VerdictReason::not_faster;
  v.detail = fmt::format(
      "ratio {:.4f} [{:.4f}, {:.4f}] at {:.1f}%, n={}; upper bound {} {:.4f} "
      "(min improvement {:.1f}%)",
      s.ratio, s.ratio_lower, s.ratio_upper, 100 * s.confidence, s.n,
      v.accept ? "<" : ">=", threshold, 100 * policy.min_improvement);
  return v;
}

Expected<WallClockCheck> check_wall_clock(double event_ms_total, double wall_ms,
                                          double min_event_fraction) {
  if (!std::isfinite(event_ms_total) || event_ms_total < 0 || !std::isfinite(wall_ms) ||
      wall_ms <= 0 || !std::isfinite(min_event_fraction))
    return fail(Errc::invalid_argument,
                fmt::format("check_wall_clock: bad input (events {} ms, wall {} ms)",
                            event_ms_total, wall_ms));
  WallClockCheck c;
  c.event_fraction = event_ms_total / wall_ms;
  c.suspicious = c.event_fraction < min_event_fraction;
  c.detail = fmt::format("events {:.4f} ms of wall {:.4f} ms ({:.1f}%, floor {:.1f}%)",
                         event_ms_total, wall_ms, 100 * c.event_fraction, 100 * min_event_fraction);
  return c;
}

Expected<WallClockCheck> compare_wall_clock(double baseline_event_ms, double baseline_wall_ms,
                                            double candidate_event_ms, double candidate_wall_ms,
                                            double max_drop) {
  auto base = check_wall_clock(baseline_event_ms, baseline_wall_ms, 0);
  if (!base) return base;
  auto cand = check_wall_clock(candidate_event_ms, candidate_wall_ms, 0);
  if (!cand) return cand;
  if (!(max_drop >= 0 && max_drop < 1))
    return fail(Errc::invalid_argument,
                fmt::format("compare_wall_clock: max_drop {} is not in [0, 1)", max_drop));
  WallClockCheck c;
  c.event_fraction = cand->event_fraction;
  const double floor = base->event_fraction * (1.0 - max_drop);
  c.suspicious = cand->event_fraction < floor;
  c.detail = fmt::format(
      "candidate events cover {:.1f}% of its wall time, baseline {:.1f}% "
      "(floor {:.1f}%)",
      100 * cand->event_fraction, 100 * base->event_fraction, 100 * floor);
  return c;
}

}  // namespace ts::perf
