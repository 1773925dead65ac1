// Python face of the spec system: the manifest, the call binder, roofline and validation.
// There is no second parser in Python: tileops.manifest is a thin layer over these.
//
// Errors: a manifest that does not load raises tileops.SpecError (a ValueError) whose message
// lists every located diagnostic; a call that does not bind raises tileops.BindError (also a
// ValueError) with the binder's message.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <fmt/format.h>

#include "bindings.hpp"
#include "ts/perf/hardware.hpp"
#include "ts/perf/roofline.hpp"
#include "ts/spec/binder.hpp"
#include "ts/spec/validate.hpp"

namespace nb = nanobind;

namespace ts::python {
namespace {

using namespace ts::spec;

PyObject* spec_error = nullptr;
PyObject* bind_error_type = nullptr;

[[noreturn]] void raise(PyObject* type, const std::string& message) {
  PyErr_SetString(type, message.c_str());
  throw nb::python_error();
}

DType dtype_from(const std::string& name) {
  // torch spells them "torch.bfloat16"; accept both.
  const std::string_view bare =
      name.rfind("torch.", 0) == 0 ? std::string_view(name).substr(6) : std::string_view(name);
  if (auto t = parse_dtype(bare)) return *t;
  raise(PyExc_ValueError, "unknown dtype '" + name + "'");
}

const perf::HardwareProfile& profile_from(const std::string& key) {
  if (const auto* p = perf::find_profile(key)) return *p;
  std::string known;
  for (const auto& p : perf::hardware_profiles())
    known += (known.empty() ? "" : ", ") + std::string(p.key);
  raise(PyExc_ValueError, "unknown hardware profile '" + key + "' (known: " + known + ")");
}

ParamValue param_from(const OpSpec& op, size_t index, nb::handle v) {
  if (v.is_none()) return NoneValue{};
  if (PyBool_Check(v.ptr())) return static_cast<bool>(nb::cast<bool>(v));
  if (PyLong_Check(v.ptr())) return nb::cast<int64_t>(v);
  if (PyFloat_Check(v.ptr())) return nb::cast<double>(v);
  if (PyUnicode_Check(v.ptr())) return nb::cast<std::string>(v);
  if (PyList_Check(v.ptr()) || PyTuple_Check(v.ptr())) {
    std::vector<int64_t> out;
    for (nb::handle e : v) {
      if (!PyLong_Check(e.ptr()) || PyBool_Check(e.ptr()))
        raise(bind_error_type,
              op.name() + ": param '" + op.params()[index].name + "': list items must be integers");
      out.push_back(nb::cast<int64_t>(e));
    }
    return out;
  }
  raise(bind_error_type, op.name() + ": param '" + op.params()[index].name +
                             "': unsupported value " + nb::cast<std::string>(nb::str(v)));
}

nb::object param_to_py(const ParamValue& v) {
  return std::visit(
      [](const auto& x) -> nb::object {
        using X = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<X, std::monostate> || std::is_same_v<X, NoneValue>)
          return nb::none();
        else
          return nb::cast(x);
      },
      v);
}

nb::tuple shape_tuple(const std::vector<int64_t>& s) {
  nb::list l;
  for (int64_t d : s) l.append(d);
  return nb::tuple(l);
}

/// Tensors as the binder sees them: each None (absent) or (dtype, shape[, strides[, address]]);
/// `shapes` and `strides` own the sizes the TensorArgs point into.
std::vector<TensorArg> tensor_args(nb::handle tensors, std::vector<std::vector<int64_t>>& shapes,
                                   std::vector<std::vector<int64_t>>& strides) {
  std::vector<TensorArg> args;
  nb::list in = nb::list(tensors);
  shapes.resize(in.size());
  strides.resize(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    nb::handle t = in[i];
    TensorArg a;
    if (t.is_none()) {
      a.present = false;
    } else {
      nb::tuple tup = nb::tuple(t);
      if (tup.size() < 2 || tup.size() > 4)
        raise(PyExc_TypeError, "each tensor is None or (dtype, shape[, strides[, address]])");
      a.dtype = dtype_from(nb::cast<std::string>(nb::str(tup[0])));
      for (nb::handle d : tup[1]) shapes[i].push_back(nb::cast<int64_t>(d));
      if (tup.size() >= 3 && !tup[2].is_none())
        for (nb::handle d : tup[2]) strides[i].push_back(nb::cast<int64_t>(d));
      if (tup.size() == 4 && !tup[3].is_none()) a.address = nb::cast<std::uintptr_t>(tup[3]);
      a.shape = shapes[i];
      a.strides = strides[i];
    }
    args.push_back(a);
  }
  return args;
}

/// inputs: one entry per declared input (tensor_args' form).
/// params: a dict by name (unknown names are an error) or a sequence in declaration order.
/// outputs: None (the call allocates them), or the caller's buffers, one per declared output.
BoundCall bind_py(const OpSpec& op, nb::handle inputs, nb::handle params, nb::handle outputs) {
  std::vector<std::vector<int64_t>> shapes, strides, out_shapes, out_strides;
  std::vector<TensorArg> args = tensor_args(inputs, shapes, strides);
  std::vector<ParamValue> ps(op.params().size());
  if (!params.is_none()) {
    if (PyDict_Check(params.ptr())) {
      for (auto [k, v] : nb::cast<nb::dict>(params)) {
        const std::string name = nb::cast<std::string>(k);
        const int idx = op.param_index(name);
        if (idx < 0) {
          std::string known;
          for (const auto& p : op.params()) known += (known.empty() ? "" : ", ") + p.name;
          raise(bind_error_type, op.name() + ": unknown param '" + name +
                                     "' (params: " + (known.empty() ? "none" : known) + ")");
        }
        ps[static_cast<size_t>(idx)] = param_from(op, static_cast<size_t>(idx), v);
      }
    } else {
      size_t i = 0;
      for (nb::handle v : params) {
        if (i >= ps.size()) raise(bind_error_type, op.name() + ": too many params");
        ps[i] = param_from(op, i, v);
        ++i;
      }
    }
  }
  std::optional<std::vector<TensorArg>> outs;
  if (!outputs.is_none()) outs = tensor_args(outputs, out_shapes, out_strides);
  auto r =
      outs ? bind_call(op, args, ps, std::span<const TensorArg>(*outs)) : bind_call(op, args, ps);
  if (!r) raise(bind_error_type, r.error().message);
  return std::move(*r);
}

nb::dict tensor_info(const TensorInfo& t) {
  nb::dict d;
  d["name"] = t.name;
  d["dtype"] = t.dtype;
  d["shape"] = t.shape;
  d["optional"] = t.optional;
  d["mutated"] = t.mutated;
  d["layout"] = t.layout;
  d["has_range"] = t.has_range;
  return d;
}

nb::dict roofline_dict(const perf::Roofline& r) {
  nb::dict d;
  d["flops"] = r.flops;
  d["bytes"] = r.bytes;
  d["intensity"] = r.intensity;
  d["peak_flops"] = r.peak_flops;
  d["bandwidth"] = r.bandwidth;
  d["ridge"] = r.ridge;
  d["sol_seconds"] = r.sol_seconds;
  d["bound"] = perf::bound_name(r.bound);
  return d;
}

nb::list calls_list(const OpSpec& o, std::vector<WorkloadCall>& calls) {
  nb::list out;
  for (auto& c : calls) {
    nb::dict d;
    d["label"] = c.label;
    d["dtype_case"] = c.dtype_case;
    nb::list inputs;
    for (size_t i = 0; i < c.input_shapes.size(); ++i)
      inputs.append(c.input_present[i]
                        ? nb::object(nb::make_tuple(std::string(dtype_name(c.input_dtypes[i])),
                                                    shape_tuple(c.input_shapes[i])))
                        : nb::none());
    d["inputs"] = inputs;
    nb::dict params;
    for (size_t i = 0; i < c.bound.params.size(); ++i)
      params[o.params()[i].name.c_str()] = param_to_py(c.bound.params[i]);
    d["params"] = params;
    d["bound"] = nb::cast(std::move(c.bound));
    out.append(d);
  }
  return out;
}

// An entry's workload or case calls; SpecError with the first row that does not bind.
nb::list spec_calls(const OpSpec& o,
                    std::vector<WorkloadCall> (*calls_of)(const OpSpec&,
                                                          std::vector<WorkloadProblem>&)) {
  std::vector<WorkloadProblem> problems;
  auto calls = calls_of(o, problems);
  if (!problems.empty()) raise(spec_error, problems.front().message);
  return calls_list(o, calls);
}

Manifest load_or_raise(const std::string& path) {
  auto m = load_manifest(path);
  if (!m)
    raise(m.error().code == Errc::not_found ? PyExc_FileNotFoundError : spec_error,
          m.error().message);
  return std::move(*m);
}

}  // namespace

void bind_spec(nb::module_& m) {
  spec_error = PyErr_NewException("tileops.SpecError", PyExc_ValueError, nullptr);
  bind_error_type = PyErr_NewException("tileops.BindError", PyExc_ValueError, nullptr);
  m.attr("SpecError") = nb::handle(spec_error);
  m.attr("BindError") = nb::handle(bind_error_type);

  nb::class_<BoundCall>(m, "BoundCall", "A call bound to an op's signature")
      .def_prop_ro(
          "outputs",
          [](const BoundCall& c) {
            nb::list out;
            for (const auto& o : c.outputs)
              out.append(nb::make_tuple(std::string(dtype_name(o.dtype)), shape_tuple(o.shape)));
            return out;
          })
      .def_prop_ro("present", [](const BoundCall& c) {
        nb::list out;
        for (auto p : c.present) out.append(static_cast<bool>(p));
        return out;
      });

  nb::class_<OpSpec>(m, "OpSpec", "One compiled manifest entry")
      .def_prop_ro("name", &OpSpec::name)
      .def_prop_ro("family", &OpSpec::family)
      .def_prop_ro("ref_api", &OpSpec::ref_api)
      .def_prop_ro("doc", &OpSpec::doc)
      .def_prop_ro("status",
                   [](const OpSpec& o) {
                     return o.status() == OpStatus::implemented ? "implemented" : "spec-only";
                   })
      .def_prop_ro("file", &OpSpec::file)
      .def_prop_ro("line", &OpSpec::line)
      .def_prop_ro("signature", &OpSpec::signature_text)
      .def_prop_ro("kernels", &OpSpec::kernels)
      .def_prop_ro("vars",
                   [](const OpSpec& o) {
                     nb::list out;
                     for (const auto& v : o.vars()) out.append(nb::make_tuple(v.name, v.kind));
                     return out;
                   })
      .def_prop_ro("params",
                   [](const OpSpec& o) {
                     nb::list out;
                     for (const auto& p : o.params()) {
                       nb::dict d;
                       d["name"] = p.name;
                       d["type"] = p.type;
                       d["default"] = p.default_value ? nb::cast(*p.default_value) : nb::none();
                       d["required"] = !p.default_value.has_value();
                       const auto v = param_default(o, static_cast<size_t>(o.param_index(p.name)));
                       d["default_value"] = v ? param_to_py(*v) : nb::none();
                       out.append(d);
                     }
                     return out;
                   })
      .def_prop_ro("inputs",
                   [](const OpSpec& o) {
                     nb::list out;
                     for (const auto& t : o.inputs()) out.append(tensor_info(t));
                     return out;
                   })
      .def_prop_ro("outputs",
                   [](const OpSpec& o) {
                     nb::list out;
                     for (const auto& t : o.outputs()) out.append(tensor_info(t));
                     return out;
                   })
      .def_prop_ro("constraints",
                   [](const OpSpec& o) {
                     nb::list out;
                     for (const auto& c : o.constraints())
                       out.append(nb::make_tuple(c.expr, c.message));
                     return out;
                   })
      .def_prop_ro("roofline_formula",
                   [](const OpSpec& o) {
                     nb::dict d;
                     d["flops"] = o.roofline().flops;
                     d["bytes"] = o.roofline().bytes;
                     d["compute"] = o.roofline().compute;
                     return d;
                   })
      .def("bind", &bind_py, nb::arg("inputs"), nb::arg("params") = nb::none(),
           nb::arg("outputs") = nb::none(),
           "Bind a call: inputs are None or (dtype, shape[, strides[, address]]) in declaration "
           "order; params a dict by name; outputs, when the caller writes into its own buffers, "
           "one such tuple per declared output. Raises BindError with a precise message on "
           "mismatch.")
      .def(
          "dims",
          [](const OpSpec& o, const BoundCall& c) {
            nb::dict d;
            const auto& vars = o.vars();
            size_t dim = 0, list = 0, dt = 0;
            for (const auto& v : vars) {
              if (v.kind == "Dim") {
                if (c.dims_bound[dim]) d[v.name.c_str()] = c.dims[dim];
                ++dim;
              } else if (v.kind == "Dims") {
                d[v.name.c_str()] = shape_tuple(c.dim_lists[list++]);
              } else {
                d[v.name.c_str()] = std::string(dtype_name(c.dtypes[dt++]));
              }
            }
            for (size_t i = 0; i < c.params.size(); ++i)
              d[o.params()[i].name.c_str()] = param_to_py(c.params[i]);
            return d;
          },
          nb::arg("bound"), "Every bound variable and param of a bound call, by name")
      .def(
          "roofline",
          [](const OpSpec& o, const BoundCall& c, const std::string& profile) {
            auto counts = roofline_counts(o, c);
            if (!counts) raise(PyExc_ValueError, counts.error().message);
            const auto r =
                perf::evaluate_roofline(profile_from(profile), counts->flops, counts->bytes,
                                        counts->compute_dtype, counts->tensor_cores);
            nb::dict d = roofline_dict(r);
            d["compute_dtype"] = std::string(dtype_name(counts->compute_dtype));
            d["tensor_cores"] = counts->tensor_cores;
            return d;
          },
          nb::arg("bound"), nb::arg("profile") = "h200")
      .def(
          "instantiate",
          [](const OpSpec& o, nb::dict values, nb::handle params, nb::handle absent) {
            // values: Dim -> int, Dims -> sequence of ints, DType variable -> dtype name.
            CallValues cv;
            for (const auto& var : o.vars()) {
              if (!values.contains(var.name.c_str())) continue;
              nb::handle v = values[var.name.c_str()];
              if (var.kind == "Dim") {
                cv.dims.emplace_back(var.name, nb::cast<int64_t>(v));
              } else if (var.kind == "Dims") {
                std::vector<int64_t> l;
                for (nb::handle d : v) l.push_back(nb::cast<int64_t>(d));
                cv.dim_lists.emplace_back(var.name, std::move(l));
              } else {
                cv.dtypes.emplace_back(var.name, dtype_from(nb::cast<std::string>(nb::str(v))));
              }
            }
            for (auto [k, v] : values) {
              const std::string name = nb::cast<std::string>(k);
              bool known = false;
              for (const auto& var : o.vars()) known = known || var.name == name;
              if (!known) raise(PyExc_KeyError, o.name() + ": no variable '" + name + "'");
            }
            if (!params.is_none())
              for (auto [k, v] : nb::cast<nb::dict>(params)) {
                const std::string name = nb::cast<std::string>(k);
                const int idx = o.param_index(name);
                if (idx < 0) raise(bind_error_type, o.name() + ": unknown param '" + name + "'");
                cv.params.emplace_back(name, param_from(o, static_cast<size_t>(idx), v));
              }
            if (!absent.is_none())
              for (nb::handle a : absent) cv.absent.push_back(nb::cast<std::string>(a));
            auto wc = instantiate_call(o, cv);
            if (!wc)
              raise(wc.error().code == Errc::bind ? bind_error_type : PyExc_ValueError,
                    wc.error().message);
            nb::list inputs;
            for (size_t i = 0; i < wc->input_shapes.size(); ++i)
              inputs.append(wc->input_present[i] ? nb::object(nb::make_tuple(
                                                       std::string(dtype_name(wc->input_dtypes[i])),
                                                       shape_tuple(wc->input_shapes[i])))
                                                 : nb::none());
            return nb::make_tuple(inputs, nb::cast(std::move(wc->bound)));
          },
          nb::arg("values"), nb::arg("params") = nb::none(), nb::arg("absent") = nb::none(),
          "Inputs for variable values: (inputs as None or (dtype, shape), BoundCall). values maps "
          "Dim names to ints, Dims names to int lists, DType variables to dtype names; raises "
          "BindError with the binder's message when the values violate the signature.")
      .def(
          "workloads", [](const OpSpec& o) { return spec_calls(o, workload_calls); },
          "The workload rows' calls: dicts of label, dtype_case, inputs ((dtype, shape) or None), "
          "params and bound")
      .def(
          "cases", [](const OpSpec& o) { return spec_calls(o, case_calls); },
          "The contract `cases:` rows' calls, in the form of workloads()")
      .def(
          "input_ranges",
          [](const OpSpec& o, const BoundCall& c) {
            auto r = input_ranges(o, c);
            if (!r) raise(PyExc_ValueError, r.error().message);
            return *r;
          },
          nb::arg("bound"), "Per input, (low, high) of its values where the spec declares a range")
      .def_prop_ro("reference", &OpSpec::reference)
      .def_prop_ro("tolerance",
                   [](const OpSpec& o) {
                     nb::dict d;
                     for (const auto& [t, v] : o.tolerance())
                       d[std::string(dtype_name(t)).c_str()] = v;
                     return d;
                   })
      .def("__repr__", [](const OpSpec& o) { return "<OpSpec " + o.signature_text() + ">"; });

  nb::class_<Manifest>(m, "Manifest", "Every op of a spec folder")
      .def_prop_ro("ops", [](const Manifest& mf) { return mf.ops(); })
      .def(
          "find",
          [](const Manifest& mf, const std::string& name) -> std::optional<OpSpec> {
            if (const auto* o = mf.find(name)) return *o;
            return std::nullopt;
          },
          nb::arg("name"))
      .def("__len__", [](const Manifest& mf) { return mf.ops().size(); })
      .def("list_text", [](const Manifest& mf) { return format_op_list(mf); });

  m.def("load_manifest", &load_or_raise, nb::arg("path"),
        "Load every spec file under `path`; raises SpecError listing every located problem");
  m.def("default_manifest_dir", [] { return default_manifest_dir().string(); });

  m.def(
      "validate_manifest",
      [](const std::string& path, nb::handle registry, const std::string& profile) {
        std::vector<RegisteredOp> regs;
        for (nb::handle r : registry) {
          RegisteredOp reg;
          reg.name = nb::cast<std::string>(r["name"]);
          reg.kernels = nb::cast<std::vector<std::string>>(r["kernels"]);
          regs.push_back(std::move(reg));
        }
        const auto report = validate_manifest(path, regs, profile_from(profile));
        nb::dict d;
        nb::list problems;
        for (const auto& p : report.problems) problems.append(p.str());
        d["problems"] = problems;
        d["ops"] = report.ops;
        d["workload_cases"] = report.workload_cases;
        return d;
      },
      nb::arg("path"), nb::arg("registry"), nb::arg("profile") = "h200",
      "Run every check of `tileops validate`; returns {problems, ops, workload_cases}");

  m.def(
      "format_op_report",
      [](const OpSpec& op, const std::string& profile) {
        return format_op_report(op, profile_from(profile));
      },
      nb::arg("op"), nb::arg("profile") = "h200");
  m.def(
      "workload_problems",
      [](const OpSpec& op) {
        std::vector<WorkloadProblem> problems;
        workload_calls(op, problems);
        std::vector<std::string> out;
        for (const auto& p : problems)
          out.push_back(fmt::format("{}:{}:{}: {}", op.file(), p.line, p.column, p.message));
        return out;
      },
      nb::arg("op"), "Each workload row that does not bind, as 'file:line:col: message'.");

  m.def(
      "roofline",
      [](const std::string& profile, int64_t flops, int64_t bytes, const std::string& dtype,
         bool tensor_cores) {
        return roofline_dict(perf::evaluate_roofline(profile_from(profile), flops, bytes,
                                                     dtype_from(dtype), tensor_cores));
      },
      nb::arg("profile"), nb::arg("flops"), nb::arg("bytes"), nb::arg("dtype"),
      nb::arg("tensor_cores"));

  m.def("hardware_profiles", [] {
    nb::list out;
    for (const auto& p : perf::hardware_profiles()) {
      nb::dict d;
      d["key"] = std::string(p.key);
      d["name"] = std::string(p.name);
      d["sm_count"] = p.sm_count;
      d["l2_bytes"] = p.l2_bytes;
      d["hbm_bandwidth"] = p.hbm_bandwidth();
      d["hbm_theoretical"] = p.hbm_theoretical;
      d["tensor_bf16"] = p.peak_flops(DType::bfloat16, true);
      d["tensor_bf16_theoretical"] = p.tensor_fp16;
      d["calibration_source"] = std::string(p.calibration_source);
      out.append(d);
    }
    return out;
  });
}

}  // namespace ts::python
