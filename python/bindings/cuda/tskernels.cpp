// `_tskernels`: launches the CUDA kernels of kernels/ from Python without linking libtorch.
//
// One entry point serves every kernel (kernels/common/kernel_call.hpp): the bound call's tensors
// as (address, element type code, sizes, strides in elements) tuples in the spec's order, None
// for an absent optional input; the spec's params as None, bool, int or float; a config index;
// the caller's stream handle (`torch.cuda.current_stream().cuda_stream`):
//
//   _tskernels.launch("rms_norm", [x, w], [y], [1e-6], -1, stream)
//   -> raises _tskernels.LaunchError("RMSNormFwdOp: rms_norm failed: invalid argument
//      (cudaErrorInvalidValue)") when the kernel refuses the call or the launch fails.
//
// Type codes: 0 float16, 1 bfloat16, 2 float32, 3 int64. The op layer (python/tileops) has
// checked every shape, dtype and stride against the spec (the binder in tileops._core) first.
// Nothing here allocates device memory or synchronizes, so a call can be captured in a CUDA graph.
// Linked against the static CUDA runtime: this module needs no libcudart.so of its own.
//
// Compiled a second time with TS_KERNELS_REFERENCE=1 as `_tskernels_ref`: the same entry point
// over the kernels' fp64 CPU references (host pointers, the stream ignored), so the op layer's
// whole launch path is tested on a CPU machine.
#include <cuda_runtime_api.h>
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/kernel_call.hpp"

#ifndef TS_KERNELS_REFERENCE
#define TS_KERNELS_REFERENCE 0
#endif
#if TS_KERNELS_REFERENCE
#define TS_KERNELS_MODULE _tskernels_ref
constexpr ts::kernels::Backend kBackend = ts::kernels::Backend::reference;
#else
#define TS_KERNELS_MODULE _tskernels
constexpr ts::kernels::Backend kBackend = ts::kernels::Backend::cuda;
#endif

namespace nb = nanobind;
namespace tk = ts::kernels;

namespace {

PyObject* launch_error = nullptr;

[[noreturn]] void raise(PyObject* type, const std::string& message) {
  PyErr_SetString(type, message.c_str());
  throw nb::python_error();
}

const tk::KernelEntry& kernel(const std::string& name) {
  const tk::KernelEntry* e = tk::find_kernel(kBackend, name);
  if (!e) raise(PyExc_KeyError, "no kernel named '" + name + "' in this module");
  return *e;
}

std::vector<std::int64_t> int_tuple(nb::handle h, const std::string& what) {
  std::vector<std::int64_t> out;
  for (nb::handle x : h) out.push_back(nb::cast<std::int64_t>(x));
  if (out.size() > static_cast<std::size_t>(tk::kMaxRank))
    raise(PyExc_ValueError, what + ": rank " + std::to_string(out.size()) + " is above " +
                                std::to_string(tk::kMaxRank));
  return out;
}

// (address, type code, sizes, strides), or None: an absent optional input.
tk::TensorArg tensor_arg(nb::handle h, const std::string& what) {
  tk::TensorArg t;
  if (h.is_none()) return t;
  const nb::tuple parts = nb::cast<nb::tuple>(h);
  if (parts.size() != 4)
    raise(PyExc_ValueError, what + ": expected (address, type, sizes, strides)");
  t.data = reinterpret_cast<void*>(nb::cast<std::uintptr_t>(parts[0]));
  const int code = nb::cast<int>(parts[1]);
  if (code < 0 || code > 3)
    raise(PyExc_ValueError, what + ": unknown type code " + std::to_string(code) +
                                " (0 float16, 1 bfloat16, 2 float32, 3 int64)");
  t.type = static_cast<tk::ElemType>(code);
  const auto sizes = int_tuple(parts[2], what), strides = int_tuple(parts[3], what);
  if (sizes.size() != strides.size())
    raise(PyExc_ValueError, what + ": " + std::to_string(sizes.size()) + " sizes but " +
                                std::to_string(strides.size()) + " strides");
  t.rank = static_cast<int>(sizes.size());
  for (int d = 0; d < t.rank; ++d) {
    t.sizes[d] = sizes[static_cast<std::size_t>(d)];
    t.strides[d] = strides[static_cast<std::size_t>(d)];
  }
  return t;
}

tk::ParamArg param_arg(nb::handle h) {
  tk::ParamArg p;
  if (h.is_none()) return p;
  if (PyBool_Check(h.ptr())) {
    p.kind = tk::ParamArg::Kind::boolean;
    p.i = h.ptr() == Py_True;
  } else if (PyLong_Check(h.ptr())) {
    p.kind = tk::ParamArg::Kind::integer;
    p.i = nb::cast<std::int64_t>(h);
  } else if (PyFloat_Check(h.ptr())) {
    p.kind = tk::ParamArg::Kind::real;
    p.f = nb::cast<double>(h);
  } else {
    raise(PyExc_TypeError, "a kernel param is None, bool, int or float, not " +
                               std::string(nb::type_name(h.type()).c_str()));
  }
  return p;
}

void launch(const std::string& name, nb::list inputs, nb::list outputs, nb::list params, int config,
            std::uintptr_t stream) {
  const tk::KernelEntry& k = kernel(name);
  std::vector<tk::TensorArg> ins, outs;
  std::vector<tk::ParamArg> ps;
  for (size_t i = 0; i < inputs.size(); ++i)
    ins.push_back(tensor_arg(inputs[i], name + ": input " + std::to_string(i)));
  for (size_t i = 0; i < outputs.size(); ++i)
    outs.push_back(tensor_arg(outputs[i], name + ": output " + std::to_string(i)));
  for (nb::handle p : params) ps.push_back(param_arg(p));
  const tk::KernelCall call{ins, outs, ps, config};
  const cudaError_t err = k.run(call, reinterpret_cast<cudaStream_t>(stream));
  if (err != cudaSuccess)
    raise(launch_error, std::string(k.op) + ": " + k.name + " failed: " + cudaGetErrorString(err) +
                            " (" + cudaGetErrorName(err) + ")");
}

}  // namespace

NB_MODULE(TS_KERNELS_MODULE, m) {
  m.doc() = "TileOPs kernels by name (pointers, sizes, strides, stream; no libtorch)";
  nb::set_leak_warnings(false);  // `launch` stays referenced by tileops op instances at exit
  launch_error = PyErr_NewException("tileops.LaunchError", PyExc_RuntimeError, nullptr);
  m.attr("LaunchError") = nb::handle(launch_error);
  m.attr("reference") = static_cast<bool>(TS_KERNELS_REFERENCE);

  m.def(
      "kernels",
      [] {
        nb::dict d;
        for (const auto& k : tk::kernel_registry())
          if (k.backend == kBackend) d[k.name] = k.op;
        return d;
      },
      "Kernel name -> the op it serves, for every kernel compiled into this module");
  m.def(
      "num_configs", [](const std::string& name) { return kernel(name).num_configs(); },
      nb::arg("kernel"), "Number of launch configurations of a kernel (valid `config` values)");
  m.def("launch", &launch, nb::arg("kernel"), nb::arg("inputs"), nb::arg("outputs"),
        nb::arg("params"), nb::arg("config"), nb::arg("stream"),
        "Runs a kernel on a bound call (see the module's header for the argument forms)");
#if !TS_KERNELS_REFERENCE
  m.def("cuda_runtime_version", [] {
    int v = 0;
    cudaRuntimeGetVersion(&v);
    return v;
  });
#endif
}
