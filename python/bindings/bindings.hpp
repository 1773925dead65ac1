// One function per component; each lives in bind_<component>.cpp.
#pragma once

#include <nanobind/nanobind.h>

namespace ts::python {
void bind_error(nanobind::module_& m);
void bind_spec(nanobind::module_& m);
void bind_proc(nanobind::module_& m);
void bind_paired_stats(nanobind::module_& m);  // in both modules
void bind_stats(nanobind::module_& m);
void bind_store(nanobind::module_& m);
void bind_gate(nanobind::module_& m);
void bind_agent(nanobind::module_& m);
}  // namespace ts::python
