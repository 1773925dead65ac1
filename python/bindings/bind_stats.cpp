// tilesmith._core.judge / check_wall_clock / compare_wall_clock (ts::perf statistics); the
// PairedStats they read comes from bind_paired_stats.cpp, bound before this.
//   s = tilesmith._core.paired_stats(base_ms, cand_ms)        # ValueError on bad samples
//   v = tilesmith._core.judge(s, min_improvement=0.02)        # v.accept, v.reason, v.detail
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include "bindings.hpp"
#include "raise_error.hpp"
#include "ts/perf/stats.hpp"

namespace nb = nanobind;

namespace ts::python {

void bind_stats(nb::module_& m) {
  nb::class_<perf::Verdict>(m, "Verdict")
      .def_ro("accept", &perf::Verdict::accept)
      .def_prop_ro("reason",
                   [](const perf::Verdict& v) { return perf::verdict_reason_name(v.reason); })
      .def_ro("detail", &perf::Verdict::detail);

  nb::class_<perf::WallClockCheck>(m, "WallClockCheck")
      .def_ro("event_fraction", &perf::WallClockCheck::event_fraction)
      .def_ro("suspicious", &perf::WallClockCheck::suspicious)
      .def_ro("detail", &perf::WallClockCheck::detail);

  m.def(
      "judge",
      [](const perf::PairedStats& s, double min_improvement, double max_ci_half_width,
         std::size_t min_samples) {
        return perf::judge(s, {.min_improvement = min_improvement,
                               .max_ci_half_width = max_ci_half_width,
                               .min_samples = min_samples});
      },
      nb::arg("stats"), nb::kw_only(), nb::arg("min_improvement") = 0.02,
      nb::arg("max_ci_half_width") = 0.10, nb::arg("min_samples") = 20);

  m.def(
      "check_wall_clock",
      [](double event_ms_total, double wall_ms, double min_event_fraction) {
        return value_or_raise(perf::check_wall_clock(event_ms_total, wall_ms, min_event_fraction),
                              PyExc_ValueError);
      },
      nb::arg("event_ms_total"), nb::arg("wall_ms"), nb::arg("min_event_fraction") = 0.5);

  m.def(
      "compare_wall_clock",
      [](double be, double bw, double ce, double cw, double max_drop) {
        return value_or_raise(perf::compare_wall_clock(be, bw, ce, cw, max_drop), PyExc_ValueError);
      },
      nb::arg("baseline_event_ms"), nb::arg("baseline_wall_ms"), nb::arg("candidate_event_ms"),
      nb::arg("candidate_wall_ms"), nb::arg("max_drop") = 0.5);
}

}  // namespace ts::python
