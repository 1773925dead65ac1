// The gate's decision from worker evidence: see ts/gate/verdict.hpp.
#include "ts/gate/verdict.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <utility>

#include <fmt/format.h>

namespace ts::gate {
namespace {

constexpr std::array<std::pair<FailureKind, const char*>, 24> kind_names{{
    {FailureKind::crashed, "crashed"},
    {FailureKind::timeout, "timeout"},
    {FailureKind::protocol, "protocol"},
    {FailureKind::exception, "exception"},
    {FailureKind::tamper, "tamper"},
    {FailureKind::global_flag, "global_flag"},
    {FailureKind::background_thread, "background_thread"},
    {FailureKind::persisting_l2, "persisting_l2"},
    {FailureKind::output_type, "output_type"},
    {FailureKind::output_count, "output_count"},
    {FailureKind::layout, "layout"},
    {FailureKind::aliasing, "aliasing"},
    {FailureKind::mutation, "mutation"},
    {FailureKind::stray_write, "stray_write"},
    {FailureKind::rng, "rng"},
    {FailureKind::incorrect, "incorrect"},
    {FailureKind::nondeterministic, "nondeterministic"},
    {FailureKind::caching, "caching"},
    {FailureKind::timing_suspicious, "timing_suspicious"},
    {FailureKind::too_few_samples, "too_few_samples"},
    {FailureKind::too_noisy, "too_noisy"},
    {FailureKind::not_faster, "not_faster"},
    {FailureKind::unconfirmed, "unconfirmed"},
    {FailureKind::none, "none"},
}};

PhaseVerdict reject(PhaseVerdict v, FailureKind kind, std::string detail) {
  v.passed = false;
  v.kind = kind;
  v.detail = std::move(detail);
  return v;
}

// A worker that did not end cleanly explains everything else it reported.
std::optional<std::pair<FailureKind, std::string>> worker_failure(const WorkerOutcome& w) {
  if (w.timed_out) return std::pair{FailureKind::timeout, w.detail};
  if (w.term_signal != 0)
    return std::pair{FailureKind::crashed,
                     w.detail.empty() ? fmt::format("signal {}", w.term_signal)
                                      : fmt::format("signal {}: {}", w.term_signal, w.detail)};
  if (w.exit_code != 0)
    return std::pair{FailureKind::crashed,
                     w.detail.empty() ? fmt::format("exit code {}", w.exit_code)
                                      : fmt::format("exit code {}: {}", w.exit_code, w.detail)};
  if (!w.completed)
    return std::pair{FailureKind::protocol, w.detail.empty() ? "no result" : w.detail};
  return std::nullopt;
}

double sum_of(const std::vector<double>& v) {
  return std::accumulate(v.begin(), v.end(), 0.0);
}

std::string format_speedup(double x) {
  return x >= 10 ? fmt::format("{:.1f}x", x) : fmt::format("{:.2f}x", x);
}

}  // namespace

const char* failure_kind_name(FailureKind k) noexcept {
  for (const auto& [kind, name] : kind_names)
    if (kind == k) return name;
  return "unknown";
}

Expected<FailureKind> parse_failure_kind(std::string_view name) {
  for (const auto& [kind, n] : kind_names)
    if (name == n) return kind;
  return fail(Errc::invalid_argument, fmt::format("unknown gate failure kind '{}'", name));
}

PhaseVerdict judge_phase(const PhaseEvidence& e, const GatePolicy& policy) {
  PhaseVerdict v;
  v.phase = e.phase;
  if (auto wf = worker_failure(e.worker)) return reject(std::move(v), wf->first, wf->second);

  if (!e.findings.empty()) {
    // Stable: among findings of the same kind the worker's order (first found) wins.
    auto first = std::min_element(e.findings.begin(), e.findings.end(),
                                  [](const Finding& a, const Finding& b) {
                                    return static_cast<int>(a.kind) < static_cast<int>(b.kind);
                                  });
    std::string detail =
        first->where.empty() ? first->detail : fmt::format("{}: {}", first->where, first->detail);
    if (e.findings.size() > 1)
      detail += fmt::format("; {} more finding{}", e.findings.size() - 1,
                            e.findings.size() > 2 ? "s" : "");
    return reject(std::move(v), first->kind, std::move(detail));
  }

  if (!e.timed) {
    v.passed = true;
    return v;
  }

  auto stats = perf::paired_stats(e.baseline_ms, e.candidate_ms, {.confidence = policy.confidence});
  if (!stats) return reject(std::move(v), FailureKind::protocol, stats.error().message);
  v.stats = *stats;

  // The samples come from the process that ran the candidate. They cannot add up to more time
  // than the host saw that process take.
  double sampled_s = (sum_of(e.baseline_ms) + sum_of(e.candidate_ms)) / 1000.0;
  if (e.host_wall_s > 0 && sampled_s > e.host_wall_s * 1.05 + 0.01)
    return reject(std::move(v), FailureKind::timing_suspicious,
                  fmt::format("the worker reported {:.3f} s of timed calls but ran {:.3f} s "
                              "by the host's clock",
                              sampled_s, e.host_wall_s));

  if (e.wall_clock) {
    const WallClockSums& w = *e.wall_clock;
    auto check =
        perf::compare_wall_clock(w.baseline_event_ms, w.baseline_wall_ms, w.candidate_event_ms,
                                 w.candidate_wall_ms, policy.wall_clock_max_drop);
    if (!check) return reject(std::move(v), FailureKind::protocol, check.error().message);
    v.wall_clock = *check;
    if (check->suspicious)
      return reject(std::move(v), FailureKind::timing_suspicious,
                    fmt::format("events on the current stream miss work the wall clock sees "
                                "(side stream or deferred work): {}",
                                check->detail));
  }

  perf::Verdict j = perf::judge(*stats, {.min_improvement = policy.min_improvement,
                                         .max_ci_half_width = policy.max_ci_half_width,
                                         .min_samples = policy.min_samples});
  if (j.accept) {
    v.passed = true;
    v.detail = j.detail;
    return v;
  }
  FailureKind kind = FailureKind::not_faster;
  if (j.reason == perf::VerdictReason::too_noisy) kind = FailureKind::too_noisy;
  if (j.reason == perf::VerdictReason::too_few_samples) kind = FailureKind::too_few_samples;
  return reject(std::move(v), kind, j.detail);
}

GateVerdict decide(const PhaseVerdict& main, const PhaseVerdict* confirm,
                   bool require_confirmation) {
  GateVerdict g;
  if (main.stats) {
    g.speedup = 1.0 / main.stats->ratio;
    g.speedup_lower = 1.0 / main.stats->ratio_upper;
    g.speedup_upper = 1.0 / main.stats->ratio_lower;
  }
  auto rejected = [&](FailureKind kind, const std::string& phase, const std::string& detail) {
    g.accept = false;
    g.kind = kind;
    g.reason = fmt::format("rejected: {} ({}{})", failure_kind_name(kind),
                           phase.empty() ? "" : phase + ": ", detail);
    return g;
  };
  if (!main.passed) return rejected(main.kind, "", main.detail);
  if (confirm == nullptr) {
    if (require_confirmation)
      return rejected(FailureKind::unconfirmed, "", "no fresh confirmation ran");
  } else {
    if (!confirm->passed) return rejected(confirm->kind, "confirmation", confirm->detail);
    g.confirmed = true;
  }
  g.accept = true;
  g.kind = FailureKind::none;
  if (main.stats) {
    g.reason =
        fmt::format("accepted: {} (CI {:.2f}-{}){}", format_speedup(g.speedup), g.speedup_lower,
                    format_speedup(g.speedup_upper), g.confirmed ? ", confirmed" : "");
    if (confirm != nullptr && confirm->stats)
      g.reason += fmt::format(" at {}", format_speedup(1.0 / confirm->stats->ratio));
  } else {
    g.reason = g.confirmed ? "accepted: correct, confirmed" : "accepted: correct";
  }
  return g;
}

}  // namespace ts::gate
