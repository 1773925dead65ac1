// Paired timing statistics for the gate's A/B decision (baseline = the Inductor wrapper,
// candidate = the agent's rewrite).
//
// The worker times pairs in alternating ABBA order, so slow drift (clocks, thermals) hits both
// sides of a pair alike; the host then looks only at per-pair ratios r_i = candidate_i /
// baseline_i. Everything is computed on log(r_i), where a 2x slowdown and a 2x speedup are
// symmetric, and mapped back with exp():
//
//   ratio        = exp(median(log r))                     the typical speedup factor (< 1: faster)
//   [lo, hi]     = binomial order-statistic CI of that median: [x_(k), x_(n+1-k)] of the sorted
//                  log ratios, k the largest index with P(Binomial(n, 1/2) < k) <= alpha/2.
//                  Distribution-free (any noise shape, heavy tails included) and deterministic.
//   improvement  = 1 - ratio, improvement_lower = 1 - hi
//
// Samples come from the worker process and are never trusted to be sane: non-finite or
// non-positive times are Errors, not NaNs that silently compare false.
//
//   auto s = ts::perf::paired_stats(base_ms, cand_ms);          // Expected<PairedStats>
//   auto v = ts::perf::judge(*s, {.min_improvement = 0.02});  // v.accept, v.reason, v.detail
#pragma once

#include <cstddef>
#include <span>
#include <string>

#include "ts/error.hpp"

namespace ts::perf {

struct PairedStatsOptions {
  double confidence = 0.95;    // two-sided level of the median CI
  double outlier_mad_k = 5.0;  // |log r - median| > k * 1.4826 * MAD counts as an outlier
};

struct PairedStats {
  std::size_t n = 0;
  double ratio = 1;        // median candidate/baseline ratio
  double ratio_lower = 0;  // CI bounds of the median ratio
  double ratio_upper = 0;
  double confidence = 0;         // coverage the CI actually has (>= requested when achievable)
  bool ci_achieved = false;      // false when n is too small for the requested level; then the
                                 // CI is [min, max] and `confidence` is its (lower) coverage
  double improvement = 0;        // 1 - ratio
  double improvement_lower = 0;  // 1 - ratio_upper: the improvement at the CI's pessimistic end
  double ci_half_width_log = 0;  // (log upper - log lower) / 2, ~ relative half-width
  double ratio_p10 = 0;          // spread of the per-pair ratios
  double ratio_p90 = 0;
  double log_ratio_mad = 0;  // median absolute deviation of log ratios (unscaled)
  std::size_t outliers = 0;
  double baseline_median_ms = 0;
  double candidate_median_ms = 0;
};

/// Errors: invalid_argument for unequal lengths, an empty input, or a time that is not a
/// finite positive number; invalid confidence (not in (0, 1)).
Expected<PairedStats> paired_stats(std::span<const double> baseline_ms,
                                   std::span<const double> candidate_ms,
                                   const PairedStatsOptions& options = {});

/// Smallest n whose order-statistic CI can reach `confidence` (6 for 95%).
std::size_t min_pairs_for_confidence(double confidence);

enum class VerdictReason { faster, not_faster, too_noisy, too_few_samples };
const char* verdict_reason_name(VerdictReason r) noexcept;

struct VerdictPolicy {
  double min_improvement = 0.02;    // TILESMITH_MIN_IMPROVEMENT, read by the caller
  double max_ci_half_width = 0.10;  // log-space half-width above which the timing is not trusted
  std::size_t min_samples = 20;
};

struct Verdict {
  bool accept = false;
  VerdictReason reason = VerdictReason::not_faster;
  std::string detail;  // one line with the numbers behind the reason
};

/// Checks in order (fail closed): too_few_samples (n < min_samples or CI level not reached),
/// too_noisy (half-width above the cap, even when the bound would clear: a wide interval means
/// the measurement itself is suspect), then faster iff ratio_upper < 1 - min_improvement.
Verdict judge(const PairedStats& stats, const VerdictPolicy& policy = {});

/// Wall-clock cross-check against events that do not see all the work (side streams, deferred
/// work: reward hack T1). `event_ms_total` is the sum of the per-call event times of one side,
/// `wall_ms` the host wall time around the same calls (after a device-wide sync).
struct WallClockCheck {
  double event_fraction = 0;  // event_ms_total / wall_ms
  bool suspicious = false;    // event_fraction < min_event_fraction
  std::string detail;
};

/// Errors: invalid_argument for non-finite or negative inputs or wall_ms == 0.
Expected<WallClockCheck> check_wall_clock(double event_ms_total, double wall_ms,
                                          double min_event_fraction = 0.5);

/// Relative form: flags a candidate whose events explain much less of its wall time than the
/// baseline's do (`max_drop` = 0.5: the candidate's fraction may fall to half the baseline's).
Expected<WallClockCheck> compare_wall_clock(double baseline_event_ms, double baseline_wall_ms,
                                            double candidate_event_ms, double candidate_wall_ms,
                                            double max_drop = 0.5);

}  // namespace ts::perf
