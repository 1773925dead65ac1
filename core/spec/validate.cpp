#include "ts/spec/validate.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "model.hpp"
#include "ts/perf/roofline.hpp"
#include "ts/spec/binder.hpp"

namespace ts::spec {
namespace {

Diagnostic at_op(const OpSpec& op, std::string message) {
  return {op.file(), op.line(), 1, fmt::format("{}: {}", op.name(), std::move(message))};
}

std::string human_seconds(double s) {
  if (s >= 1.0) return fmt::format("{:.3f} s", s);
  if (s >= 1e-3) return fmt::format("{:.3f} ms", s * 1e3);
  return fmt::format("{:.2f} us", s * 1e6);
}

std::string human_count(double v, const char* unit) {
  if (v >= 1e12) return fmt::format("{:.2f} T{}", v / 1e12, unit);
  if (v >= 1e9) return fmt::format("{:.2f} G{}", v / 1e9, unit);
  if (v >= 1e6) return fmt::format("{:.2f} M{}", v / 1e6, unit);
  if (v >= 1e3) return fmt::format("{:.2f} K{}", v / 1e3, unit);
  return fmt::format("{:.0f} {}", v, unit);
}

void check_registration(const OpSpec& op, const RegisteredOp& reg, std::vector<Diagnostic>& out) {
  auto spec_kernels = op.kernels(), reg_kernels = reg.kernels;
  std::sort(spec_kernels.begin(), spec_kernels.end());
  std::sort(reg_kernels.begin(), reg_kernels.end());
  if (spec_kernels != reg_kernels)
    out.push_back(
        at_op(op, fmt::format("registered kernels ({}) differ from the spec's kernels "
                              "list ({})",
                              fmt::join(reg_kernels, ", "), fmt::join(spec_kernels, ", "))));
}

}  // namespace

ValidationReport validate_manifest(const std::filesystem::path& specs,
                                   const std::vector<RegisteredOp>& registry,
                                   const perf::HardwareProfile& hw) {
  ValidationReport report;
  std::vector<Diagnostic> diags;
  // Entries that compile are checked even when others in the manifest do not.
  const Manifest manifest = load_manifest_partial(specs, diags);
  report.problems = diags;
  for (const auto& op : manifest.ops()) {
    ++report.ops;
    std::vector<WorkloadProblem> rows;
    const auto calls = workload_calls(op, rows);
    case_calls(op, rows);       // contract cases must bind as workloads must
    for (const auto& p : rows)  // the message already names the op
      report.problems.push_back({op.file(), p.line, p.column, p.message});
    for (const auto& c : calls) {
      ++report.workload_cases;
      auto counts = roofline_counts(op, c.bound);
      if (!counts) {
        report.problems.push_back(at_op(op, fmt::format("workload '{}' ({}): {}", c.label,
                                                        c.dtype_case, counts.error().message)));
        continue;
      }
      const auto r = perf::evaluate_roofline(hw, counts->flops, counts->bytes,
                                             counts->compute_dtype, counts->tensor_cores);
      if (!(r.sol_seconds > 0.0))
        report.problems.push_back(
            at_op(op, fmt::format("workload '{}' ({}): the roofline is zero (flops {}, bytes {})",
                                  c.label, c.dtype_case, counts->flops, counts->bytes)));
    }
    const auto reg = std::find_if(registry.begin(), registry.end(),
                                  [&](const RegisteredOp& r) { return r.name == op.name(); });
    if (op.status() == OpStatus::implemented && reg == registry.end())
      report.problems.push_back(
          at_op(op,
                "status is implemented but no kernel is registered for it (TS_REGISTER_KERNEL "
                "in kernels/<family>/reference.cpp and the .cu)"));
    if (op.status() == OpStatus::spec_only && reg != registry.end())
      report.problems.push_back(at_op(op,
                                      "a kernel is registered but the status is spec-only (set "
                                      "status: implemented once its tests pass)"));
    if (reg != registry.end()) check_registration(op, *reg, report.problems);
  }
  for (const auto& reg : registry) {
    const bool known = manifest.find(reg.name) != nullptr;
    // An op whose entry failed to load already has a diagnostic; only name truly missing ones.
    const bool failed_entry = std::any_of(diags.begin(), diags.end(), [&](const Diagnostic& d) {
      return d.message.rfind(reg.name + ":", 0) == 0;
    });
    if (!known && !failed_entry)
      report.problems.push_back({specs.string(), 1, 1,
                                 fmt::format("{}: a kernel is registered for it but no spec entry "
                                             "declares it",
                                             reg.name)});
  }
  return report;
}

std::string format_op_report(const OpSpec& op, const perf::HardwareProfile& hw) {
  std::string s;
  s += fmt::format("{}  ({}, {}, {}:{})\n", op.name(), op.family(),
                   op.status() == OpStatus::implemented ? "implemented" : "spec-only", op.file(),
                   op.line());
  s += fmt::format("  ref_api:   {}\n", op.ref_api());
  if (!op.reference().empty()) s += fmt::format("  reference: {}\n", op.reference());
  if (!op.kernels().empty()) s += fmt::format("  kernels:   {}\n", fmt::join(op.kernels(), ", "));
  s += fmt::format("  signature: {}\n", op.signature_text());
  for (const auto& c : op.constraints())
    s += fmt::format("  requires:  {}{}\n", c.expr, c.message.empty() ? "" : "  # " + c.message);
  const auto& rl = op.roofline();
  s += fmt::format("  roofline:  flops = {}; bytes = {}; compute on {}\n", rl.flops,
                   rl.bytes.empty() ? "compulsory traffic" : rl.bytes,
                   rl.compute == "tensor" ? "tensor cores" : "CUDA cores");
  s += fmt::format("  on {} (HBM {:.2f} TB/s, {} peak as calibrated):\n", hw.name,
                   hw.hbm_bandwidth() / 1e12, rl.compute == "tensor" ? "tensor" : "fp32");
  std::vector<WorkloadProblem> rows;
  const auto calls = workload_calls(op, rows);
  for (const auto& p : rows)
    s += fmt::format("  does not bind ({}:{}): {}\n", op.file(), p.line, p.message);
  s += fmt::format("  {:<28} {:<12} {:>11} {:>11} {:>10} {:>8} {:>11}\n", "workload", "dtypes",
                   "flops", "bytes", "FLOP/B", "bound", "SOL time");
  for (const auto& c : calls) {
    auto counts = roofline_counts(op, c.bound);
    if (!counts) {
      s += fmt::format("  {:<28} {:<12} {}\n", c.label, c.dtype_case, counts.error().message);
      continue;
    }
    const auto r = perf::evaluate_roofline(hw, counts->flops, counts->bytes, counts->compute_dtype,
                                           counts->tensor_cores);
    s += fmt::format("  {:<28} {:<12} {:>11} {:>11} {:>10.2f} {:>8} {:>11}\n", c.label,
                     c.dtype_case, human_count(static_cast<double>(r.flops), "F"),
                     human_count(static_cast<double>(r.bytes), "B"), r.intensity,
                     perf::bound_name(r.bound), human_seconds(r.sol_seconds));
  }
  return s;
}

std::string format_op_list(const Manifest& manifest) {
  std::string s;
  for (const auto& op : manifest.ops()) {
    size_t cases = 0;
    for (const auto& row : op.model().workloads) cases += row.dtype_cases.size();
    s += fmt::format("{:<28} {:<12} {:<12} {:>3} workload cases  {}\n", op.name(), op.family(),
                     op.status() == OpStatus::implemented ? "implemented" : "spec-only", cases,
                     op.ref_api());
  }
  return s;
}

}  // namespace ts::spec
