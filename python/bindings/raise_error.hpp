// Turns a ts::Error into a Python exception: the caller's exception type for failures of its
// component, a built-in where one says it better (ValueError for bad input, FileNotFoundError,
// TimeoutError). The message is the Error's message, unchanged.
#pragma once

#include <Python.h>
#include <nanobind/nanobind.h>

#include "ts/error.hpp"

namespace ts::python {

[[noreturn]] inline void raise_error(const ts::Error& error, PyObject* component_error) {
  PyObject* type = component_error;
  switch (error.code) {
    case Errc::invalid_argument:
    case Errc::parse:
      type = PyExc_ValueError;
      break;
    case Errc::not_found:
      type = PyExc_FileNotFoundError;
      break;
    case Errc::timeout:
      type = PyExc_TimeoutError;
      break;
    default:
      break;
  }
  PyErr_SetString(type, error.message.c_str());
  throw nanobind::python_error();
}

/// `value_or_raise(store::read_file(p), store_error)`.
template <class T>
T value_or_raise(ts::Expected<T>&& result, PyObject* component_error) {
  if (!result) raise_error(result.error(), component_error);
  if constexpr (!std::is_void_v<T>) return std::move(*result);
}

}  // namespace ts::python
