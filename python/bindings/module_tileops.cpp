// `tileops._core`: the op manifest, binder and roofline for TileOPs, and the paired-ratio
// estimator its timing reports with. Each component binds itself in its own
// bind_<component>.cpp; this file only calls them in order.
#include <nanobind/nanobind.h>

#include "bindings.hpp"

NB_MODULE(_core, m) {
  m.doc() =
      "TileOPs' C++ core: spec manifest, call binder, roofline, paired statistics (no libtorch)";
  m.attr("__version__") = TS_VERSION;
  // Spec objects stay referenced from torch.library registrations (tileops' fake kernels) until
  // after this module is finalized at interpreter exit; that is not a leak worth a warning.
  nanobind::set_leak_warnings(false);
  ts::python::bind_error(m);
  ts::python::bind_spec(m);
  ts::python::bind_paired_stats(m);
}
