// What the agent acts on. Tilesmith implements it on top of the run store (rolling attempt files)
// and the gate (isolated worker evaluation); TileOPs on top of its spec tests and benchmarks;
// tests with a scripted evaluator. The runtime never runs candidate code itself.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ts/error.hpp"

namespace ts::agent {

enum class Verdict { accepted, rejected };

struct CorrectnessResult {
  std::string input_class;  // "normal", "zeros", "high_magnitude", "strided", ...
  bool passed = false;
  std::string detail;  // e.g. "max abs err 3.1e-2 > atol 1e-3 at out[0][17]"
};

/// Paired, alternating timing of original and candidate.
struct PairedTiming {
  double original_ms = 0;   // median
  double candidate_ms = 0;  // median
  double spread_pct = 0;    // relative spread of the paired ratios
  int pairs = 0;
};

/// The host's structured report on one candidate.
struct EvalReport {
  std::vector<CorrectnessResult> correctness;
  PairedTiming timing;
  double speedup = 0;  // original_ms / candidate_ms
  Verdict verdict = Verdict::rejected;
  std::string reason;  // "accepted: 1.18x, confirmed" / "rejected: marginal (1.01x < 1.02x)"
};

struct KernelTime {
  std::string kernel;
  std::optional<double> original_ms;   // absent: the kernel is not in the original
  std::optional<double> candidate_ms;  // absent: the kernel is not in the candidate
};

class Workspace {
 public:
  virtual ~Workspace() = default;
  /// The attempt the whole run starts from (Inductor's wrapper, or a TileOPs kernel file).
  virtual std::string original() = 0;
  /// Persists a candidate (the current attempt) before it is evaluated.
  virtual Expected<void> write_candidate(std::string_view text) = 0;
  /// Host evaluation of a candidate: correctness per input class, paired timing, verdict.
  virtual Expected<EvalReport> evaluate(std::string_view candidate) = 0;
  /// Per-kernel times of original and candidate.
  virtual Expected<std::vector<KernelTime>> profile(std::string_view candidate) = 0;
  virtual std::vector<std::string> list_specs() { return {}; }
  virtual Expected<std::string> read_spec(std::string_view name) {
    return fail(Errc::not_found, "no spec named '" + std::string(name) + "'");
  }
  /// The track's directory: the shell tool runs here; traces go to traces/ under it.
  virtual std::filesystem::path track_dir() = 0;
};

}  // namespace ts::agent
