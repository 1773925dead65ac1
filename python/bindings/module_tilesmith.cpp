// `tilesmith._core`: Tilesmith's runtime (processes and sandbox, statistics, run store, gate
// verdicts, agent runtime). Each component binds itself in its own bind_<component>.cpp; this
// file only calls them in order.
#include <nanobind/nanobind.h>

#include "bindings.hpp"

NB_MODULE(_core, m) {
  m.doc() = "Tilesmith's C++ core: agent runtime, gate, sandbox, run store (no libtorch)";
  m.attr("__version__") = TS_VERSION;
  ts::python::bind_error(m);
  ts::python::bind_proc(m);
  ts::python::bind_paired_stats(m);
  ts::python::bind_stats(m);
  ts::python::bind_store(m);
  ts::python::bind_gate(m);
  ts::python::bind_agent(m);
}
