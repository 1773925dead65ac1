#include "spec_dump.hpp"

#include <fmt/format.h>

#include "ts/perf/hardware.hpp"
#include "ts/spec/binder.hpp"
#include "ts/spec/validate.hpp"

namespace ts::spec::testing {

std::string dump_spec_file(const std::filesystem::path& file) {
  const std::string shown = "golden/" + file.filename().string();
  auto relative = [&](std::string s) {
    for (size_t p; (p = s.find(file.string())) != std::string::npos;)
      s.replace(p, file.string().size(), shown);
    return s;
  };
  std::string out;
  const auto* hw = perf::find_profile("h200");
  const auto report = validate_manifest(file, {}, *hw);
  out += fmt::format("validate: {} ops, {} workload cases, {} problems\n", report.ops,
                     report.workload_cases, report.problems.size());
  for (const auto& p : report.problems) out += relative(p.str()) + "\n";

  std::vector<Diagnostic> diags;
  auto manifest = load_manifest(file, &diags);
  if (!manifest) return out;
  for (const auto& op : manifest->ops()) {
    out += fmt::format("\nop {}\n  {}\n", op.name(), op.signature_text());
    for (const auto& v : op.vars()) out += fmt::format("  var {}: {}\n", v.name, v.kind);
    for (const auto& p : op.params())
      out += fmt::format("  param {}: {} = {}\n", p.name, p.type,
                         p.default_value.value_or("<required>"));
    for (const auto& c : op.constraints())
      out +=
          fmt::format("  constraint {}{}\n", c.expr, c.message.empty() ? "" : " -- " + c.message);
    out += fmt::format("  roofline flops={} bytes={} compute={}\n", op.roofline().flops,
                       op.roofline().bytes.empty() ? "<compulsory>" : op.roofline().bytes,
                       op.roofline().compute);
    if (!op.kernels().empty()) out += fmt::format("  kernels {}\n", fmt::join(op.kernels(), ", "));
    if (!op.reference().empty()) out += fmt::format("  reference {}\n", op.reference());
    for (const auto& [t, v] : op.tolerance())
      out += fmt::format("  tolerance {} {}\n", dtype_name(t), v);
    for (const auto& t : op.inputs())
      out +=
          fmt::format("  input {} layout {}{}\n", t.name, t.layout, t.has_range ? " ranged" : "");
    for (const auto& t : op.outputs())
      out += fmt::format("  output {} layout {}\n", t.name, t.layout);
    std::vector<WorkloadProblem> case_problems;
    for (const auto& c : case_calls(op, case_problems)) {
      out += fmt::format("  case {} [{}]\n", c.label, c.dtype_case);
      for (size_t i = 0; i < c.input_shapes.size(); ++i)
        out += fmt::format("    in  {} {} [{}]\n", op.inputs()[i].name,
                           dtype_name(c.input_dtypes[i]), fmt::join(c.input_shapes[i], ", "));
      if (auto ranges = input_ranges(op, c.bound))
        for (size_t i = 0; i < ranges->size(); ++i)
          if ((*ranges)[i])
            out += fmt::format("    range {} [{}, {})\n", op.inputs()[i].name, (*ranges)[i]->first,
                               (*ranges)[i]->second);
    }
    auto calls = workload_calls(op);
    if (!calls) {
      out += "  workloads: " + calls.error().message + "\n";
      continue;
    }
    for (const auto& c : *calls) {
      out += fmt::format("  workload {} [{}]\n", c.label, c.dtype_case);
      for (size_t i = 0; i < c.input_shapes.size(); ++i)
        out += fmt::format("    in  {} {} [{}]{}\n", op.inputs()[i].name,
                           dtype_name(c.input_dtypes[i]), fmt::join(c.input_shapes[i], ", "),
                           c.input_present[i] ? "" : " (absent)");
      for (size_t i = 0; i < c.bound.outputs.size(); ++i)
        out += fmt::format("    out {} {} [{}]\n", op.outputs()[i].name,
                           dtype_name(c.bound.outputs[i].dtype),
                           fmt::join(c.bound.outputs[i].shape, ", "));
      std::vector<std::string> params;
      for (size_t i = 0; i < c.bound.params.size(); ++i)
        params.push_back(op.params()[i].name + "=" + param_value_text(c.bound.params[i]));
      if (!params.empty()) out += fmt::format("    params {}\n", fmt::join(params, " "));
      auto counts = roofline_counts(op, c.bound);
      if (counts)
        out += fmt::format("    flops {} bytes {} compute {} {}\n", counts->flops, counts->bytes,
                           counts->tensor_cores ? "tensor" : "simt",
                           dtype_name(counts->compute_dtype));
      else
        out += "    roofline error: " + counts.error().message + "\n";
    }
  }
  return out;
}

}  // namespace ts::spec::testing
