// `tileops validate` and `tileops show`: the checks that keep specs and implementations in step,
// and the human-readable report of one op.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "ts/perf/hardware.hpp"
#include "ts/spec/manifest.hpp"

namespace ts::spec {

/// The kernels registered for one op (TS_REGISTER_KERNEL), to be compared with its entry's
/// `kernels:` list. The op classes themselves are generated from the entries.
struct RegisteredOp {
  std::string name;
  std::vector<std::string> kernels;
};

struct ValidationReport {
  std::vector<Diagnostic> problems;  // empty means valid
  int ops = 0;
  int workload_cases = 0;
  bool ok() const { return problems.empty(); }
};

/// Every entry parses, its types close, every workload and contract case binds, every roofline
/// evaluates on `hw`, and the kernel registry agrees with the entries: an implemented op needs
/// its kernels registered; a registered kernel needs an implemented entry that lists it.
ValidationReport validate_manifest(const std::filesystem::path& specs,
                                   const std::vector<RegisteredOp>& registry,
                                   const perf::HardwareProfile& hw);

/// Signature, params, constraints, and a table of every workload case with flops, bytes,
/// intensity, bound type and speed-of-light time on `hw`.
std::string format_op_report(const OpSpec& op, const perf::HardwareProfile& hw);

/// One line per op: name, family, status, number of workload cases.
std::string format_op_list(const Manifest& manifest);

}  // namespace ts::spec
