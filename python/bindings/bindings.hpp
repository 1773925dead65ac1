// One function per component; each lives in bind_<component>.cpp.
#pragma once

#include <nanobind/nanobind.h>

namespace ts::python {
void bind_error(nanobind::module_& m);
}  // namespace ts::python
