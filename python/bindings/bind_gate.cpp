// tilesmith._core.gate_judge_phase / gate_decide (ts::gate verdicts from worker evidence).
//   m = tilesmith._core.gate_judge_phase("evaluate", completed=True, findings=[("incorrect",
//   "zeros",
//           "out[0] max abs err 3e-1 > 1e-2")], timed=False)
//   v = tilesmith._core.gate_decide(m, None)     # v.accept, v.reason, v.kind, v.speedup
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <tuple>

#include "bindings.hpp"
#include "raise_error.hpp"
#include "ts/gate/verdict.hpp"

namespace nb = nanobind;

namespace ts::python {

void bind_gate(nb::module_& m) {
  using gate::GateVerdict;
  using gate::PhaseVerdict;
  nb::class_<PhaseVerdict>(m, "GatePhaseVerdict")
      .def_ro("phase", &PhaseVerdict::phase)
      .def_ro("passed", &PhaseVerdict::passed)
      .def_prop_ro("kind", [](const PhaseVerdict& v) { return gate::failure_kind_name(v.kind); })
      .def_ro("detail", &PhaseVerdict::detail)
      .def_ro("stats", &PhaseVerdict::stats)
      .def_ro("wall_clock", &PhaseVerdict::wall_clock);

  nb::class_<GateVerdict>(m, "GateVerdict")
      .def_ro("accept", &GateVerdict::accept)
      .def_ro("confirmed", &GateVerdict::confirmed)
      .def_prop_ro("kind", [](const GateVerdict& v) { return gate::failure_kind_name(v.kind); })
      .def_ro("reason", &GateVerdict::reason)
      .def_ro("speedup", &GateVerdict::speedup)
      .def_ro("speedup_lower", &GateVerdict::speedup_lower)
      .def_ro("speedup_upper", &GateVerdict::speedup_upper);

  using FindingTuple = std::tuple<std::string, std::string, std::string>;
  using WallTuple = std::tuple<double, double, double, double>;
  m.def(
      "gate_judge_phase",
      [](std::string phase, bool completed, bool timed_out, int term_signal, int exit_code,
         std::string worker_detail, const std::vector<FindingTuple>& findings, bool timed,
         std::vector<double> baseline_ms, std::vector<double> candidate_ms,
         std::optional<WallTuple> wall_clock, double host_wall_s, double min_improvement,
         double max_ci_half_width, std::size_t min_samples, double wall_clock_max_drop) {
        gate::PhaseEvidence e;
        e.phase = std::move(phase);
        e.worker = {.completed = completed,
                    .timed_out = timed_out,
                    .term_signal = term_signal,
                    .exit_code = exit_code,
                    .detail = std::move(worker_detail)};
        for (const auto& [kind, where, detail] : findings) {
          auto k = gate::parse_failure_kind(kind);
          if (!k) raise_error(k.error(), PyExc_ValueError);
          e.findings.push_back({*k, where, detail});
        }
        e.timed = timed;
        e.baseline_ms = std::move(baseline_ms);
        e.candidate_ms = std::move(candidate_ms);
        if (wall_clock) {
          auto [be, bw, ce, cw] = *wall_clock;
          e.wall_clock = gate::WallClockSums{be, bw, ce, cw};
        }
        e.host_wall_s = host_wall_s;
        return gate::judge_phase(e, {.min_improvement = min_improvement,
                                     .max_ci_half_width = max_ci_half_width,
                                     .min_samples = min_samples,
                                     .wall_clock_max_drop = wall_clock_max_drop});
      },
      nb::arg("phase"), nb::kw_only(), nb::arg("completed"), nb::arg("timed_out") = false,
      nb::arg("term_signal") = 0, nb::arg("exit_code") = 0, nb::arg("worker_detail") = "",
      nb::arg("findings") = std::vector<FindingTuple>{}, nb::arg("timed") = false,
      nb::arg("baseline_ms") = std::vector<double>{},
      nb::arg("candidate_ms") = std::vector<double>{}, nb::arg("wall_clock") = nb::none(),
      nb::arg("host_wall_s") = 0.0, nb::arg("min_improvement") = 0.02,
      nb::arg("max_ci_half_width") = 0.10, nb::arg("min_samples") = 20,
      nb::arg("wall_clock_max_drop") = 0.5,
      "Judges one worker phase. findings: (kind, where, detail) with kind a gate failure name; "
      "wall_clock: (baseline_event_ms, baseline_wall_ms, candidate_event_ms, "
      "candidate_wall_ms). ValueError for an unknown kind.");

  m.def(
      "gate_decide",
      [](const PhaseVerdict& main, std::optional<PhaseVerdict> confirm, bool require_confirmation) {
        return gate::decide(main, confirm ? &*confirm : nullptr, require_confirmation);
      },
      nb::arg("main"), nb::arg("confirm").none(), nb::kw_only(),
      nb::arg("require_confirmation") = true);

  m.def("gate_failure_kinds", [] {
    std::vector<std::string> names;
    for (int k = 0; k <= static_cast<int>(gate::FailureKind::none); ++k)
      names.emplace_back(gate::failure_kind_name(static_cast<gate::FailureKind>(k)));
    return names;
  });
}

}  // namespace ts::python
