#include <nanobind/nanobind.h>

#include "bindings.hpp"
#include "ts/error.hpp"

namespace ts::python {

void bind_error(nanobind::module_& m) {
  // Expected failures reach Python as ts.SpecError / ts.BindError etc. through the helpers in
  // each component; InternalError (a broken invariant in the core) becomes RuntimeError.
  nanobind::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const ts::InternalError& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    }
  });
  (void)m;
}

}  // namespace ts::python
