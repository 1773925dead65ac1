// The `_tscore` extension module. Each component binds itself in its own bind_<component>.cpp;
// this file only calls them in order.
#include <nanobind/nanobind.h>

#include "bindings.hpp"

NB_MODULE(_tscore, m) {
  m.doc() = "C++ core of Tilesmith and TileOPs (no libtorch)";
  m.attr("__version__") = "0.1.0";
  // Spec objects stay referenced from torch.library registrations (tileops' fake kernels) until
  // after this module is finalized at interpreter exit; that is not a leak worth a warning.
  nanobind::set_leak_warnings(false);
  ts::python::bind_error(m);
  ts::python::bind_spec(m);
  ts::python::bind_proc(m);
  ts::python::bind_stats(m);
  ts::python::bind_store(m);
  ts::python::bind_gate(m);
  ts::python::bind_agent(m);
}
