// The gate's final decision: worker evidence (how the worker ended, what its checks found, the
// raw paired timing samples) in, one verdict and one reason line out.
//
// The worker process measures and reports; it never decides. Everything it reports is treated
// as evidence from an untrusted process: the statistics are recomputed here from the raw
// samples (ts/perf/stats.hpp), the samples are checked against the wall time the host itself
// measured around the worker, and any finding at all rejects.
//
//   PhaseEvidence main{.phase = "evaluate", .worker = {.completed = true}, ...};
//   PhaseVerdict m = judge_phase(main, policy);
//   PhaseVerdict c = judge_phase(confirm_evidence, policy);   // fresh worker, new inputs
//   GateVerdict v = decide(m, &c, policy);
//   v.reason   // "accepted: 1.31x (CI 1.28-1.34x), confirmed"
//              // "rejected: incorrect (zeros: out[0] max abs err 3e-1 > 1e-2)"
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ts/error.hpp"
#include "ts/perf/stats.hpp"

namespace ts::gate {

/// Why a candidate is rejected. Order is priority: when a phase has several findings, the
/// reason names the first in this order (a crash explains everything after it; a tampered
/// timer makes every number after it meaningless; an aliasing error explains a value error).
enum class FailureKind {
  crashed,            // the worker died (signal, non-zero exit, no result)
  timeout,            // the worker passed its deadline and was killed
  protocol,           // the worker's result was malformed or incomplete
  exception,          // the candidate raised
  tamper,             // timer / comparison functions were replaced in the worker
  global_flag,        // torch backend flags or the environment changed
  background_thread,  // a thread or process outlived a call
  persisting_l2,      // the persisting-L2 limit or a stream access-policy window was set
  output_type,        // an output is not exactly torch.Tensor (subclass, lazy object, ...)
  output_count,       // a different number of outputs or a non-tensor where a tensor was
  layout,             // dtype, shape, strides, storage offset or device differ
  aliasing,           // outputs alias inputs / each other differently from the original
  mutation,           // inputs or buffers end in a different state than the original leaves
  stray_write,        // guard bands around inputs were written
  rng,                // the RNG state after the call differs (skipped or extra draws)
  incorrect,          // values differ beyond tolerance, or NaN/Inf positions differ
  nondeterministic,   // repeated runs differ where the original's are bitwise stable
  caching,            // outputs reuse storage across calls where the original's are fresh
  timing_suspicious,  // event time explains too little wall time (side stream, deferred work)
  too_few_samples,    // not enough pairs for the confidence interval
  too_noisy,          // CI too wide to trust
  not_faster,         // the CI lower bound of the improvement misses the threshold
  unconfirmed,        // the fresh confirmation did not run
  none,               // no failure: accepted
};

const char* failure_kind_name(FailureKind k) noexcept;
/// Errors: invalid_argument naming the unknown kind.
Expected<FailureKind> parse_failure_kind(std::string_view name);

/// One problem a worker check found: kind, where ("zeros", "timed call 17", "import"), detail.
struct Finding {
  FailureKind kind = FailureKind::incorrect;
  std::string where;
  std::string detail;
};

/// How the worker process ended, as the host saw it (never as the worker claims).
struct WorkerOutcome {
  bool completed = false;  // exited normally with a well-formed result
  bool timed_out = false;
  int term_signal = 0;
  int exit_code = 0;
  std::string detail;  // stderr tail or the protocol error
};

/// Per-side sums for the wall-clock cross-check (CUDA only): event time on the current stream
/// and host wall time around the same calls after a device-wide sync.
struct WallClockSums {
  double baseline_event_ms = 0;
  double baseline_wall_ms = 0;
  double candidate_event_ms = 0;
  double candidate_wall_ms = 0;
};

struct PhaseEvidence {
  std::string phase;  // "evaluate" or "confirm"
  WorkerOutcome worker;
  std::vector<Finding> findings;
  bool timed = false;  // false for correctness-only phases
  std::vector<double> baseline_ms;
  std::vector<double> candidate_ms;
  std::optional<WallClockSums> wall_clock;
  double host_wall_s = 0;  // the host's own wall time around the worker job (0: unknown)
};

struct GatePolicy {
  double min_improvement = 0.02;  // TILESMITH_MIN_IMPROVEMENT at the CI's lower bound
  double max_ci_half_width = 0.10;
  std::size_t min_samples = 20;
  double wall_clock_max_drop = 0.5;  // see perf::compare_wall_clock
  double confidence = 0.95;
};

struct PhaseVerdict {
  std::string phase;
  bool passed = false;
  FailureKind kind = FailureKind::none;
  std::string detail;  // the numbers or the finding behind `kind`
  std::optional<perf::PairedStats> stats;
  std::optional<perf::WallClockCheck> wall_clock;
};

/// Checks, in order (fail closed): the worker's end, findings by priority, then (when timed)
/// sample sanity and plausibility against host_wall_s, the wall-clock cross-check, and
/// perf::judge on the recomputed paired statistics.
PhaseVerdict judge_phase(const PhaseEvidence& evidence, const GatePolicy& policy = {});

struct GateVerdict {
  bool accept = false;
  bool confirmed = false;
  FailureKind kind = FailureKind::none;
  std::string reason;  // "accepted: ..." or "rejected: <kind> (<detail>)"
  double speedup = 0;  // 1 / ratio of the main phase, 0 when not timed
  double speedup_lower = 0;
  double speedup_upper = 0;
};

/// Combines the main phase with the confirmation. `confirm` null with `require_confirmation`
/// rejects as unconfirmed. A correctness-only check (main not timed) accepts on no findings.
GateVerdict decide(const PhaseVerdict& main, const PhaseVerdict* confirm,
                   bool require_confirmation = true);

}  // namespace ts::gate
