// `tileops validate` and `tileops show`: the checks that keep specs and implementations in step,
// and the human-readable report of one op.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "ts/perf/hardware.hpp"
#include "ts/spec/manifest.hpp"

namespace ts::spec {

/// What an implementation registers about itself, to be compared with its spec entry.
struct RegisteredOp {
  std::string name;
  std::vector<std::string> inputs;                          // in call order
  std::vector<std::string> outputs;                         // in return order
  std::vector<std::pair<std::string, std::string>> params;  // name, canonical default ("" = none)
  std::vector<std::string> kernels;
};

struct ValidationReport {
  std::vector<Diagnostic> problems;  // empty means valid
  int ops = 0;
  int workload_cases = 0;
  bool ok() const { return problems.empty(); }
};

/// Every entry parses, its types close, every workload binds, every roofline evaluates on
/// `hw`, and the registry agrees with the entries: an implemented op needs a registered
/// implementation that matches its signature; a registered op needs an implemented entry.
ValidationReport validate_manifest(const std::filesystem::path& specs,
                                   const std::vector<RegisteredOp>& registry,
                                   const perf::HardwareProfile& hw);

/// Signature, params, constraints, and a table of every workload case with flops, bytes,
/// intensity, bound type and speed-of-light time on `hw`.
std::string format_op_report(const OpSpec& op, const perf::HardwareProfile& hw);

/// One line per op: name, family, status, number of workload cases.
std::string format_op_list(const Manifest& manifest);

}  // namespace ts::spec
