// paired_stats (ts::perf): the one paired-ratio estimator, bound in both modules.
//   s = tileops._core.paired_stats(base_ms, cand_ms)     # tileops.timing.paired_ratio's numbers
//   s = tilesmith._core.paired_stats(base_ms, cand_ms)   # the gate and the in-place check
// ValueError on bad samples. Each module has its own nanobind domain, so each registers the class.
#include <nanobind/nanobind.h>
#include <nanobind/stl/vector.h>

#include "bindings.hpp"
#include "raise_error.hpp"
#include "ts/perf/stats.hpp"

namespace nb = nanobind;

namespace ts::python {

void bind_paired_stats(nb::module_& m) {
  using perf::PairedStats;
  nb::class_<PairedStats>(m, "PairedStats")
      .def_ro("n", &PairedStats::n)
      .def_ro("ratio", &PairedStats::ratio)
      .def_ro("ratio_lower", &PairedStats::ratio_lower)
      .def_ro("ratio_upper", &PairedStats::ratio_upper)
      .def_ro("confidence", &PairedStats::confidence)
      .def_ro("ci_achieved", &PairedStats::ci_achieved)
      .def_ro("improvement", &PairedStats::improvement)
      .def_ro("improvement_lower", &PairedStats::improvement_lower)
      .def_ro("ci_half_width_log", &PairedStats::ci_half_width_log)
      .def_ro("ratio_p10", &PairedStats::ratio_p10)
      .def_ro("ratio_p90", &PairedStats::ratio_p90)
      .def_ro("log_ratio_mad", &PairedStats::log_ratio_mad)
      .def_ro("outliers", &PairedStats::outliers)
      .def_ro("baseline_median_ms", &PairedStats::baseline_median_ms)
      .def_ro("candidate_median_ms", &PairedStats::candidate_median_ms);

  m.def(
      "paired_stats",
      [](const std::vector<double>& baseline_ms, const std::vector<double>& candidate_ms,
         double confidence, double outlier_mad_k) {
        return value_or_raise(
            perf::paired_stats(baseline_ms, candidate_ms,
                               {.confidence = confidence, .outlier_mad_k = outlier_mad_k}),
            PyExc_ValueError);
      },
      nb::arg("baseline_ms"), nb::arg("candidate_ms"), nb::kw_only(), nb::arg("confidence") = 0.95,
      nb::arg("outlier_mad_k") = 5.0);
}

}  // namespace ts::python
