// Binding concrete calls to compiled signatures. The success path formats no text; every
// failure path builds a message that names the op, the tensor, what was expected (symbolically
// and with the values known so far, and where they came from) and what was found.
#include "ts/spec/binder.hpp"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "model.hpp"

namespace ts::spec {

using namespace detail;

namespace detail {

Value param_to_value(const ParamValue& v) {
  Value out;
  std::visit(
      [&](const auto& x) {
        using X = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<X, NoneValue>) {
          out.is_none = true;
        } else if constexpr (std::is_same_v<X, bool>) {
          out.type = Type::bool_;
          out.i = x;
        } else if constexpr (std::is_same_v<X, int64_t>) {
          out.type = Type::int_;
          out.i = x;
        } else if constexpr (std::is_same_v<X, double>) {
          out.type = Type::float_;
          out.f = x;
        } else if constexpr (std::is_same_v<X, std::string>) {
          out.type = Type::str;
          out.s = x;
        }
      },
      v);
  return out;
}

}  // namespace detail

std::string param_value_text(const ParamValue& v) {
  return std::visit(
      [](const auto& x) -> std::string {
        using X = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<X, std::monostate>) return "(default)";
        if constexpr (std::is_same_v<X, NoneValue>) return "none";
        if constexpr (std::is_same_v<X, bool>) return x ? "true" : "false";
        if constexpr (std::is_same_v<X, int64_t>) return std::to_string(x);
        if constexpr (std::is_same_v<X, double>) return fmt::format("{}", x);
        if constexpr (std::is_same_v<X, std::string>) return "\"" + x + "\"";
        if constexpr (std::is_same_v<X, std::vector<int64_t>>)
          return fmt::format("[{}]", fmt::join(x, ", "));
      },
      v);
}

namespace {

std::string shape_text(std::span<const int64_t> s) {
  return fmt::format("[{}]", fmt::join(s, ", "));
}

const char* kind_name(const ParamDecl& p) {
  switch (p.kind) {
    case ParamKind::bool_:
      return "a bool";
    case ParamKind::int_:
      return "an integer";
    case ParamKind::float_:
      return "a number";
    case ParamKind::enum_:
      return "a string";
    case ParamKind::int_list:
      return "a list of integers";
  }
  return "?";
}

enum class Solve { solved, mismatch, cannot };

/// Mutable binding state; spans into it form the EvalEnv.
struct BindState {
  const OpModel& m;
  BoundCall& call;
  FixedVec<uint8_t, kMaxVars> dims_bound, lists_bound, dtypes_bound;
  FixedVec<int16_t, kMaxVars> dim_source, list_source, dtype_source;  // input that bound it
  FixedVec<Value, kMaxParams> param_values;
  FixedVec<uint8_t, kMaxTensors> tensor_present;

  EvalEnv env() const {
    EvalEnv e;
    e.dims = call.dims;
    e.dims_bound = dims_bound;
    e.dim_lists = call.dim_lists;
    e.dim_lists_bound = lists_bound;
    e.dtypes = call.dtypes;
    e.dtypes_bound = dtypes_bound;
    e.params = param_values;
    e.tensor_present = tensor_present;
    e.tensor_dtype = call.tensor_dtypes;
    e.tensor_numel = call.tensor_numel;
    e.num_inputs = static_cast<int>(m.inputs.size());
    return e;
  }

  // Inverts `expr == target` for a single unbound Dim under + - *: x [M, 2 * N] binds N.
  Solve solve(int32_t i, int64_t target, int16_t source) {
    const Node& n = m.pool[i];
    if (n.op == Op::var && n.sym.kind == SymKind::dim) {
      const auto k = static_cast<size_t>(n.sym.index);
      if (dims_bound[k]) return call.dims[k] == target ? Solve::solved : Solve::mismatch;
      if (target < 0) return Solve::mismatch;
      call.dims[k] = target;
      dims_bound[k] = 1;
      dim_source[k] = source;
      return Solve::solved;
    }
    if (n.op != Op::add && n.op != Op::sub && n.op != Op::mul) return Solve::cannot;
    const EvalEnv e = env();
    const EvalResult l = eval_expr(m.pool, n.args[0], e);
    const EvalResult r = eval_expr(m.pool, n.args[1], e);
    const bool l_known = l.status == EvalStatus::ok, r_known = r.status == EvalStatus::ok;
    if (l_known == r_known) return Solve::cannot;  // both known is handled by the caller
    const int64_t known = l_known ? l.value.i : r.value.i;
    const int32_t other = l_known ? n.args[1] : n.args[0];
    int64_t want = 0;
    switch (n.op) {
      case Op::add:
        if (!checked_sub(target, known, want)) return Solve::mismatch;
        break;
      case Op::sub:  // other - known = target, or known - other = target
        if (!(l_known ? checked_sub(known, target, want) : checked_add(target, known, want)))
          return Solve::mismatch;
        break;
      default:  // mul
        if (known == 0) return target == 0 ? Solve::cannot : Solve::mismatch;
        if (target % known != 0) return Solve::mismatch;
        want = target / known;
    }
    return solve(other, want, source);
  }
};

struct Deferred {
  int32_t expr;
  int64_t actual;
  int16_t input;
  int16_t axis;
};

}  // namespace

namespace {

// A tensor's memory as blocks: `count` blocks of `width` bytes, `step` bytes apart from `start`
// (the outermost dimension's slices; one block for rank 0 or 1 slice). Strides are >= 0 here.
struct Footprint {
  std::uintptr_t start = 0;
  std::uint64_t width = 0, step = 0, count = 0;
  std::uintptr_t end() const { return start + (count - 1) * step + width; }
};

Footprint footprint(const TensorArg& t) {
  const auto esize = static_cast<std::uint64_t>(dtype_size(t.dtype));
  std::vector<int64_t> strides(t.strides.begin(), t.strides.end());
  if (strides.empty()) {  // contiguous
    strides.assign(t.shape.size(), 1);
    for (size_t d = t.shape.size(); d-- > 1;) strides[d - 1] = strides[d] * t.shape[d];
  }
  Footprint f;
  f.start = t.address;
  std::uint64_t inner = 1;  // elements spanned by one outermost slice
  for (size_t d = 1; d < t.shape.size(); ++d)
    inner += static_cast<std::uint64_t>(t.shape[d] - 1) * static_cast<std::uint64_t>(strides[d]);
  f.width = inner * esize;
  f.count = t.shape.empty() ? 1 : static_cast<std::uint64_t>(t.shape[0]);
  f.step = t.shape.empty() ? 0 : static_cast<std::uint64_t>(strides[0]) * esize;
  if (f.count > 1 && f.step < f.width) {  // slices interleave: one block over all of it
    f.width = f.end() - f.start;
    f.count = 1;
  }
  return f;
}

// Whether two footprints may share a byte. Exact for equal steps (views into one fused buffer,
// as q and k slices of a qkv projection are); otherwise whether their spans intersect.
bool may_overlap(const Footprint& a, const Footprint& b) {
  if (a.end() <= b.start || b.end() <= a.start) return false;
  if (a.count > 1 && b.count > 1 && a.step == b.step) {
    const std::uint64_t s = a.step;
    const std::uint64_t d =
        (b.start >= a.start ? b.start - a.start : s - (a.start - b.start) % s) % s;
    // On a circle of length s: [0, a.width) against [d, d + b.width).
    return d < a.width || d + b.width > s;
  }
  return true;
}

bool has_negative_stride(const TensorArg& t) {
  return std::any_of(t.strides.begin(), t.strides.end(), [](int64_t s) { return s < 0; });
}

int64_t numel_of(const TensorArg& t) {
  int64_t n = 1;
  for (int64_t d : t.shape) n *= d;
  return n;
}

// The input (other than `skip`) a written tensor shares memory with, if any.
std::optional<size_t> shared_input(const OpModel& m, std::span<const TensorArg> inputs,
                                   const TensorArg& w, std::optional<size_t> skip) {
  if (w.address == 0) return std::nullopt;
  for (size_t j = 0; j < m.inputs.size(); ++j) {
    const TensorArg& o = inputs[j];
    if (j == skip || !o.present || o.address == 0 || numel_of(o) == 0) continue;
    if (has_negative_stride(w) || has_negative_stride(o) || may_overlap(footprint(w), footprint(o)))
      return j;
  }
  return std::nullopt;
}

// Mutated inputs: no broadcast dimension, no memory shared with any other input.
Expected<void> check_writes(const OpModel& m, std::span<const TensorArg> inputs) {
  for (size_t k = 0; k < m.inputs.size(); ++k) {
    const TensorArg& w = inputs[k];
    if (!m.inputs[k].mutated || !w.present || numel_of(w) == 0) continue;
    for (size_t d = 0; d < w.strides.size() && d < w.shape.size(); ++d)
      if (w.strides[d] == 0 && w.shape[d] > 1)
        return fail(Errc::bind,
                    fmt::format("{}: {} is written in place but dimension {} (size {}) is "
                                "broadcast (stride 0); pass a tensor with its own memory "
                                "(.contiguous())",
                                m.name, m.inputs[k].name, d, w.shape[d]));
    if (auto j = shared_input(m, inputs, w, k))
      return fail(Errc::bind,
                  fmt::format("{}: {} is written in place and shares memory with {}; pass "
                              "tensors that do not overlap",
                              m.name, m.inputs[k].name, m.inputs[*j].name));
  }
  return {};
}

// Whether two indices of t address one element (a broadcast or self-overlapping view): with the
// dims sorted by stride, each stride must step past everything the smaller ones span.
bool has_internal_overlap(const TensorArg& t) {
  if (t.strides.empty()) return false;            // contiguous
  std::vector<std::pair<int64_t, int64_t>> dims;  // (|stride|, size)
  for (size_t d = 0; d < t.shape.size() && d < t.strides.size(); ++d)
    if (t.shape[d] > 1)
      dims.emplace_back(t.strides[d] < 0 ? -t.strides[d] : t.strides[d], t.shape[d]);
  std::sort(dims.begin(), dims.end());
  int64_t reach = 1;  // elements spanned by the dims so far
  for (auto [stride, size] : dims) {
    if (stride < reach) return true;
    reach += stride * (size - 1);
  }
  return false;
}

// The strides a declared layout admits (size-1 dims place no constraint): contiguous, or the
// last dim contiguous (rows, strided).
Expected<void> check_layout(const OpModel& m, const TensorDecl& decl, const TensorArg& arg,
                            std::string_view label) {
  if (decl.layout == Layout::any || arg.strides.size() != arg.shape.size()) return {};
  // An empty tensor has no element to lay out (torch calls any strides of one contiguous).
  if (std::find(arg.shape.begin(), arg.shape.end(), 0) != arg.shape.end()) return {};
  const size_t rank = arg.shape.size();
  int64_t expect = 1;
  for (size_t d = rank; d-- > 0;) {
    const bool checked = decl.layout == Layout::contiguous || d + 1 == rank;
    if (checked && arg.shape[d] != 1 && arg.strides[d] != expect)
      return fail(Errc::bind,
                  fmt::format("{}: {}: must be {} (strides {} for shape {})", m.name, label,
                              decl.layout == Layout::contiguous ? "contiguous"
                                                                : "contiguous in its last dim",
                              shape_text(arg.strides), shape_text(arg.shape)));
    checked_mul(expect, arg.shape[d], expect);
  }
  return {};
}

// Caller-given outputs: the bound dtype and shape, writable element by element, laid out as
// declared, apart from every input.
Expected<void> check_outputs(const OpModel& m, const BoundCall& call,
                             std::span<const TensorArg> inputs,
                             std::span<const TensorArg> outputs) {
  if (outputs.size() != m.outputs.size()) {
    std::vector<std::string> names;
    for (const auto& o : m.outputs) names.push_back(o.name);
    return fail(Errc::bind,
                fmt::format("{}: {} output tensors given, the spec declares {} ({})", m.name,
                            outputs.size(), m.outputs.size(), fmt::join(names, ", ")));
  }
  for (size_t k = 0; k < outputs.size(); ++k) {
    const TensorArg& o = outputs[k];
    const OutputDesc& want = call.outputs[k];
    const std::string& name = m.outputs[k].name;
    if (!o.present || o.dtype != want.dtype ||
        !std::equal(o.shape.begin(), o.shape.end(), want.shape.begin(), want.shape.end()))
      return fail(Errc::bind,
                  fmt::format("{}: output {} is {}[{}]; the call needs {}[{}]", m.name, name,
                              o.present ? dtype_name(o.dtype) : "None", fmt::join(o.shape, ", "),
                              dtype_name(want.dtype), fmt::join(want.shape, ", ")));
    if (has_internal_overlap(o))
      return fail(Errc::bind,
                  fmt::format("{}: output {} has overlapping elements (a broadcast or "
                              "self-overlapping view); pass a tensor with its own memory",
                              m.name, name));
    if (auto laid = check_layout(m, m.outputs[k], o, "output " + name); !laid)
      return tl::unexpected(laid.error());
    if (numel_of(o) == 0) continue;
    if (auto j = shared_input(m, inputs, o, std::nullopt))
      return fail(Errc::bind,
                  fmt::format("{}: output {} overlaps input {}", m.name, name, m.inputs[*j].name));
  }
  return {};
}

}  // namespace

Expected<BoundCall> bind_call(const OpSpec& op, std::span<const TensorArg> inputs,
                              std::span<const ParamValue> params,
                              std::optional<std::span<const TensorArg>> outputs) {
  const OpModel& m = op.model();
  if (inputs.size() != m.inputs.size()) {
    std::vector<std::string> names;
    for (const auto& in : m.inputs) names.push_back(in.name);
    return fail(Errc::bind, fmt::format("{}: expected {} inputs ({}), got {}", m.name,
                                        m.inputs.size(), fmt::join(names, ", "), inputs.size()));
  }
  if (params.size() > m.params.size())
    return fail(Errc::bind, fmt::format("{}: expected at most {} params, got {}", m.name,
                                        m.params.size(), params.size()));
  BoundCall call;
  call.dims.assign(m.dim_names.size(), 0);
  call.dim_lists.resize(m.dim_list_names.size());
  call.dtypes.assign(m.dtype_vars.size(), DType::float32);
  call.present.assign(m.inputs.size(), 0);
  call.tensor_dtypes.assign(m.inputs.size() + m.outputs.size(), DType::float32);
  call.tensor_numel.assign(m.inputs.size() + m.outputs.size(), -1);
  call.params.resize(m.params.size());

  BindState st{m, call, {}, {}, {}, {}, {}, {}, {}, {}};
  st.dims_bound.assign(m.dim_names.size(), 0);
  st.lists_bound.assign(m.dim_list_names.size(), 0);
  st.dtypes_bound.assign(m.dtype_vars.size(), 0);
  st.dim_source.assign(m.dim_names.size(), -1);
  st.list_source.assign(m.dim_list_names.size(), -1);
  st.dtype_source.assign(m.dtype_vars.size(), -1);
  st.tensor_present.assign(m.inputs.size() + m.outputs.size(), 0);

  // ---- params: defaults, kinds, choices
  for (size_t p = 0; p < m.params.size(); ++p) {
    const ParamDecl& decl = m.params[p];
    const ParamValue& given = p < params.size() ? params[p] : ParamValue{};
    ParamValue v = given;
    if (std::holds_alternative<std::monostate>(given)) {
      if (!decl.has_default)
        return fail(Errc::bind, fmt::format("{}: param '{}' is required", m.name, decl.name));
      v = decl.default_value;
    }
    bool ok = false;
    if (std::holds_alternative<NoneValue>(v)) {
      ok = decl.optional;
    } else {
      switch (decl.kind) {
        case ParamKind::bool_:
          ok = std::holds_alternative<bool>(v);
          break;
        case ParamKind::int_:
          ok = std::holds_alternative<int64_t>(v);
          break;
        case ParamKind::float_:
          if (const auto* i = std::get_if<int64_t>(&v)) v = static_cast<double>(*i);
          ok = std::holds_alternative<double>(v);
          break;
        case ParamKind::enum_:
          if (const auto* s = std::get_if<std::string>(&v))
            ok = std::find(decl.choices.begin(), decl.choices.end(), *s) != decl.choices.end();
          break;
        case ParamKind::int_list:
          ok = std::holds_alternative<std::vector<int64_t>>(v);
          break;
      }
    }
    if (!ok) {
      std::string expected = kind_name(decl);
      if (decl.kind == ParamKind::enum_)
        expected = fmt::format("one of {}", fmt::join(decl.choices, ", "));
      if (decl.optional) expected += " or none";
      return fail(Errc::bind, fmt::format("{}: param '{}': expected {}, got {}", m.name, decl.name,
                                          expected, param_value_text(v)));
    }
    call.params[p] = std::move(v);
  }
  st.param_values.resize(m.params.size());
  for (size_t p = 0; p < m.params.size(); ++p) st.param_values[p] = param_to_value(call.params[p]);

  // ---- inputs: presence, dtype, shape, layout
  std::vector<Deferred> deferred;
  for (size_t k = 0; k < m.inputs.size(); ++k) {
    const TensorDecl& decl = m.inputs[k];
    const TensorArg& arg = inputs[k];
    const auto input = static_cast<int16_t>(k);
    if (!arg.present) {
      if (!decl.optional)
        return fail(Errc::bind, fmt::format("{}: {}: this input is required", m.name, decl.name));
      continue;
    }
    call.present[k] = 1;
    st.tensor_present[k] = 1;
    call.tensor_dtypes[k] = arg.dtype;

    if (decl.dtype_var >= 0) {
      const auto v = static_cast<size_t>(decl.dtype_var);
      const DTypeVarDecl& var = m.dtype_vars[v];
      if (st.dtypes_bound[v]) {
        if (call.dtypes[v] != arg.dtype)
          return fail(Errc::bind,
                      fmt::format("{}: {}: expected dtype {} = {} ({} bound by {}), got {}", m.name,
                                  decl.name, var.name, dtype_name(call.dtypes[v]), var.name,
                                  m.inputs[static_cast<size_t>(st.dtype_source[v])].name,
                                  dtype_name(arg.dtype)));
      } else {
        if (!var.allowed.contains(arg.dtype)) {
          std::vector<std::string_view> allowed;
          for (int t = 0; t < kNumDTypes; ++t)
            if (var.allowed.contains(static_cast<DType>(t)))
              allowed.push_back(dtype_name(static_cast<DType>(t)));
          return fail(
              Errc::bind,
              fmt::format("{}: {}: dtype {} is not allowed for {} (allowed: {})", m.name, decl.name,
                          dtype_name(arg.dtype), var.name, fmt::join(allowed, ", ")));
        }
        call.dtypes[v] = arg.dtype;
        st.dtypes_bound[v] = 1;
        st.dtype_source[v] = input;
      }
    } else if (decl.fixed_dtype != arg.dtype) {
      return fail(Errc::bind, fmt::format("{}: {}: expected dtype {}, got {}", m.name, decl.name,
                                          dtype_name(decl.fixed_dtype), dtype_name(arg.dtype)));
    }

    // Choose the branch of a conditional shape (conditions read params: Mat[trans_a, M, K]).
    int32_t shape = decl.shape;
    while (m.pool[shape].op == Op::cond) {
      const EvalResult c = eval_expr(m.pool, m.pool[shape].args[0], st.env());
      if (c.status != EvalStatus::ok)
        return fail(Errc::bind,
                    fmt::format("{}: {}: cannot decide its shape: '{}' depends on a "
                                "value not known yet",
                                m.name, decl.name, print_expr(m.pool, m.pool[shape].args[0])));
      shape = m.pool[shape].args[c.value.i ? 1 : 2];
    }
    const auto& items = m.pool[shape].args;
    int splat = -1;
    for (size_t j = 0; j < items.size(); ++j)
      if (m.pool[items[j]].op == Op::splat) splat = static_cast<int>(j);
    const size_t fixed = items.size() - (splat >= 0 ? 1 : 0);
    const size_t rank = arg.shape.size();

    // Renders "expected shape [N, K] = [?, 512] (K bound by a)" from the state before this input.
    auto mismatch = [&](const std::string& detail) {
      std::vector<std::string> sym, val, sources;
      EvalEnv e = st.env();
      std::vector<uint8_t> before(st.dims_bound.begin(), st.dims_bound.end());
      for (size_t d = 0; d < before.size(); ++d)
        if (st.dim_source[d] == input) before[d] = 0;
      std::vector<uint8_t> lists_before(st.lists_bound.begin(), st.lists_bound.end());
      for (size_t d = 0; d < lists_before.size(); ++d)
        if (st.list_source[d] == input) lists_before[d] = 0;
      e.dims_bound = before;
      e.dim_lists_bound = lists_before;
      for (int32_t it : items) {
        sym.push_back(print_expr(m.pool, it));
        if (m.pool[it].op == Op::splat) {
          const auto l = static_cast<size_t>(m.pool[m.pool[it].args[0]].sym.index);
          val.push_back(lists_before[l] ? "*" + shape_text(call.dim_lists[l]) : "*?");
          continue;
        }
        const EvalResult r = eval_expr(m.pool, it, e);
        val.push_back(r.status == EvalStatus::ok ? std::to_string(r.value.i) : "?");
      }
      for (size_t d = 0; d < before.size(); ++d)
        if (before[d] && st.dim_source[d] >= 0) {
          // Only name variables that occur in this shape.
          const std::string& dn = m.dim_names[d];
          bool used = false;
          for (const auto& s : sym) used = used || s.find(dn) != std::string::npos;
          if (used)
            sources.push_back(fmt::format("{} bound by {}", dn,
                                          m.inputs[static_cast<size_t>(st.dim_source[d])].name));
        }
      std::string text =
          fmt::format("{}: {}: expected shape [{}]", m.name, decl.name, fmt::join(sym, ", "));
      const std::string values = fmt::format("[{}]", fmt::join(val, ", "));
      const bool any_known = std::any_of(
          val.begin(), val.end(), [](const std::string& v) { return v != "?" && v != "*?"; });
      if (any_known && values != fmt::format("[{}]", fmt::join(sym, ", "))) text += " = " + values;
      if (!sources.empty()) text += fmt::format(" ({})", fmt::join(sources, ", "));
      text += fmt::format(", got {}", shape_text(arg.shape));
      if (!detail.empty()) text += ": " + detail;
      return fail(Errc::bind, std::move(text));
    };

    if (splat < 0 ? rank != fixed : rank < fixed)
      return mismatch(
          fmt::format("rank {} where {}{} expected", rank, splat < 0 ? "" : "at least ", fixed));
    int64_t numel = 1;
    for (int64_t d : arg.shape)
      if (d < 0 || !checked_mul(numel, d, numel))
        return fail(Errc::bind, fmt::format("{}: {}: invalid shape {}", m.name, decl.name,
                                            shape_text(arg.shape)));
    call.tensor_numel[k] = numel;

    for (size_t j = 0; j < items.size(); ++j) {
      const int32_t it = items[j];
      if (static_cast<int>(j) == splat) {
        const auto l = static_cast<size_t>(m.pool[m.pool[it].args[0]].sym.index);
        const auto part = arg.shape.subspan(j, rank - fixed);
        if (st.lists_bound[l]) {
          if (!std::equal(part.begin(), part.end(), call.dim_lists[l].begin(),
                          call.dim_lists[l].end()))
            return mismatch("");
        } else {
          call.dim_lists[l].assign(part.begin(), part.end());
          st.lists_bound[l] = 1;
          st.list_source[l] = input;
        }
        continue;
      }
      const size_t axis = splat >= 0 && static_cast<int>(j) > splat ? rank - (items.size() - j) : j;
      const int64_t actual = arg.shape[axis];
      const EvalResult r = eval_expr(m.pool, it, st.env());
      if (r.status == EvalStatus::ok) {
        if (r.value.i != actual) return mismatch("");
        continue;
      }
      if (r.status != EvalStatus::unbound)
        return fail(Errc::bind, fmt::format("{}: {}: cannot evaluate '{}' (overflow or division "
                                            "by zero)",
                                            m.name, decl.name, print_expr(m.pool, it)));
      switch (st.solve(it, actual, input)) {
        case Solve::solved:
          break;
        case Solve::mismatch:
          return mismatch("");
        case Solve::cannot:
          deferred.push_back({it, actual, input, static_cast<int16_t>(axis)});
      }
    }

    // Layout: strides in elements, one per dim; size-1 dims place no constraint.
    if (!arg.strides.empty()) {
      if (arg.strides.size() != rank)
        return fail(Errc::bind, fmt::format("{}: {}: {} strides for a rank-{} tensor", m.name,
                                            decl.name, arg.strides.size(), rank));
      if (auto laid = check_layout(m, decl, arg, decl.name); !laid)
        return tl::unexpected(laid.error());
    }
  }

  // ---- dims that needed a later input (x [M, N * G] before G is known)
  for (const Deferred& d : deferred) {
    const EvalResult r = eval_expr(m.pool, d.expr, st.env());
    const auto& name = m.inputs[static_cast<size_t>(d.input)].name;
    if (r.status != EvalStatus::ok)
      return fail(Errc::bind, fmt::format("{}: {}: dim {} ('{}') cannot be determined from the "
                                          "inputs",
                                          m.name, name, d.axis, print_expr(m.pool, d.expr)));
    if (r.value.i != d.actual)
      return fail(Errc::bind, fmt::format("{}: {}: dim {} must be {} = {}, got {}", m.name, name,
                                          d.axis, print_expr(m.pool, d.expr), r.value.i, d.actual));
  }

  // ---- constraints (skipped only when they read an absent optional input's variables)
  for (const ConstraintDecl& c : m.constraints) {
    const EvalResult r = eval_expr(m.pool, c.expr, st.env());
    if (r.status == EvalStatus::unbound) continue;
    if (r.status != EvalStatus::ok || !r.value.i) {
      std::vector<std::string> values;
      std::vector<int32_t> stack{c.expr};
      std::vector<std::string> seen;
      while (!stack.empty()) {
        const Node& n = m.pool[stack.back()];
        stack.pop_back();
        if (n.op == Op::var && std::find(seen.begin(), seen.end(), n.text) == seen.end()) {
          seen.push_back(n.text);
          const auto k = static_cast<size_t>(n.sym.index);
          if (n.sym.kind == SymKind::dim && st.dims_bound[k])
            values.push_back(fmt::format("{} = {}", n.text, call.dims[k]));
          else if (n.sym.kind == SymKind::param)
            values.push_back(fmt::format("{} = {}", n.text, param_value_text(call.params[k])));
          else if (n.sym.kind == SymKind::dtype_var && st.dtypes_bound[k])
            values.push_back(fmt::format("{} = {}", n.text, dtype_name(call.dtypes[k])));
        }
        for (auto a = n.args.rbegin(); a != n.args.rend(); ++a) stack.push_back(*a);
      }
      std::string text =
          fmt::format("{}: constraint '{}' does not hold", m.name, print_expr(m.pool, c.expr));
      if (!values.empty()) text += fmt::format(" ({})", fmt::join(values, ", "));
      if (!c.message.empty()) text += ": " + c.message;
      return fail(Errc::bind, std::move(text));
    }
  }

  call.dims_bound.assign(st.dims_bound.begin(), st.dims_bound.end());

  // ---- outputs
  const size_t ni = m.inputs.size();
  call.outputs.resize(m.outputs.size());
  for (size_t k = 0; k < m.outputs.size(); ++k) {
    const TensorDecl& decl = m.outputs[k];
    OutputDesc& out = call.outputs[k];
    out.dtype =
        decl.dtype_var >= 0 ? call.dtypes[static_cast<size_t>(decl.dtype_var)] : decl.fixed_dtype;
    int32_t shape = decl.shape;
    while (m.pool[shape].op == Op::cond) {
      const EvalResult c = eval_expr(m.pool, m.pool[shape].args[0], st.env());
      if (c.status != EvalStatus::ok)
        return fail(Errc::bind,
                    fmt::format("{}: output {}: cannot decide its shape", m.name, decl.name));
      shape = m.pool[shape].args[c.value.i ? 1 : 2];
    }
    int64_t numel = 1;
    for (int32_t it : m.pool[shape].args) {
      if (m.pool[it].op == Op::splat) {
        const auto& list =
            call.dim_lists[static_cast<size_t>(m.pool[m.pool[it].args[0]].sym.index)];
        out.shape.insert(out.shape.end(), list.begin(), list.end());
        continue;
      }
      const EvalResult r = eval_expr(m.pool, it, st.env());
      if (r.status != EvalStatus::ok || r.value.i < 0)
        return fail(Errc::bind, fmt::format("{}: output {}: cannot compute '{}'{}", m.name,
                                            decl.name, print_expr(m.pool, it),
                                            r.status == EvalStatus::ok ? " (negative)" : ""));
      out.shape.push_back(r.value.i);
    }
    for (int64_t d : out.shape)
      if (!checked_mul(numel, d, numel))
        return fail(Errc::overflow,
                    fmt::format("{}: output {}: size overflows int64", m.name, decl.name));
    call.tensor_dtypes[ni + k] = out.dtype;
    call.tensor_numel[ni + k] = numel;
  }
  if (auto writes = check_writes(m, inputs); !writes) return tl::unexpected(writes.error());
  if (outputs)
    if (auto given = check_outputs(m, call, inputs, *outputs); !given)
      return tl::unexpected(given.error());
  return call;
}

std::optional<int64_t> dim_value(const OpSpec& op, const BoundCall& call, std::string_view name) {
  const auto& names = op.model().dim_names;
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return call.dims[i];
  return std::nullopt;
}

namespace {

EvalEnv full_env(const OpModel& m, const BoundCall& call, std::vector<uint8_t>& ones_dims,
                 std::vector<uint8_t>& ones_lists, std::vector<uint8_t>& ones_dtypes,
                 std::vector<Value>& params, std::vector<uint8_t>& present) {
  ones_dims.assign(call.dims.size(), 1);
  ones_lists.assign(call.dim_lists.size(), 1);
  ones_dtypes.assign(call.dtypes.size(), 1);
  params.clear();
  for (const auto& p : call.params) params.push_back(param_to_value(p));
  present.assign(call.tensor_numel.size(), 1);
  for (size_t i = 0; i < call.present.size(); ++i) present[i] = call.present[i];
  EvalEnv e;
  e.dims = call.dims;
  e.dims_bound = ones_dims;
  e.dim_lists = call.dim_lists;
  e.dim_lists_bound = ones_lists;
  e.dtypes = call.dtypes;
  e.dtypes_bound = ones_dtypes;
  e.params = params;
  e.tensor_present = present;
  e.tensor_dtype = call.tensor_dtypes;
  e.tensor_numel = call.tensor_numel;
  e.num_inputs = static_cast<int>(m.inputs.size());
  return e;
}

std::string eval_failure(const OpModel& m, const EvalResult& r) {
  const std::string at = print_expr(m.pool, r.node);
  switch (r.status) {
    case EvalStatus::overflow:
      return fmt::format("int64 overflow at '{}'", at);
    case EvalStatus::div_by_zero:
      return fmt::format("division by zero at '{}'", at);
    case EvalStatus::unbound:
      return fmt::format("'{}' has no value", at);
    case EvalStatus::none_value:
      return fmt::format("'{}' is none", at);
    default:
      return fmt::format("cannot evaluate '{}'", at);
  }
}

}  // namespace

Expected<RooflineCounts> roofline_counts(const OpSpec& op, const BoundCall& call) {
  const OpModel& m = op.model();
  std::vector<uint8_t> a, b, c, present;
  std::vector<Value> params;
  const EvalEnv env = full_env(m, call, a, b, c, params, present);
  RooflineCounts out;
  out.tensor_cores = m.tensor_cores;
  out.compute_dtype = m.compute_dtype_var >= 0
                          ? call.dtypes[static_cast<size_t>(m.compute_dtype_var)]
                          : call.tensor_dtypes[0];
  const EvalResult f = eval_expr(m.pool, m.flops, env);
  if (f.status != EvalStatus::ok)
    return fail(f.status == EvalStatus::overflow ? Errc::overflow : Errc::invalid_argument,
                fmt::format("{}: roofline.flops: {}", m.name, eval_failure(m, f)));
  out.flops = f.value.i;
  if (m.bytes >= 0) {
    const EvalResult r = eval_expr(m.pool, m.bytes, env);
    if (r.status != EvalStatus::ok)
      return fail(r.status == EvalStatus::overflow ? Errc::overflow : Errc::invalid_argument,
                  fmt::format("{}: roofline.bytes: {}", m.name, eval_failure(m, r)));
    out.bytes = r.value.i;
  } else {
    // Compulsory traffic: every present input read once, every output (and every mutated
    // input) written once.
    const size_t ni = m.inputs.size();
    auto add = [&](size_t slot) {
      int64_t t;
      if (!checked_mul(call.tensor_numel[slot], dtype_size(call.tensor_dtypes[slot]), t) ||
          !checked_add(out.bytes, t, out.bytes))
        return false;
      return true;
    };
    for (size_t k = 0; k < call.tensor_numel.size(); ++k) {
      if (k < ni && !call.present[k]) continue;
      if (!add(k) || (k < ni && m.inputs[k].mutated && !add(k)))
        return fail(Errc::overflow, fmt::format("{}: roofline.bytes: int64 overflow", m.name));
    }
  }
  if (out.flops < 0 || out.bytes < 0)
    return fail(Errc::invalid_argument,
                fmt::format("{}: roofline: negative count (flops {}, bytes {})", m.name, out.flops,
                            out.bytes));
  return out;
}

namespace {

/// One concrete call from variable values (a workload row and one dtype case): evaluates each
/// present input's shape from the spec, binds the call, and checks the values against the
/// binding. `context` names the row in messages ("workload 'square-1k' (T=bfloat16)").
Expected<WorkloadCall> call_from_row(const OpSpec& op, const WorkloadRow& row,
                                     const std::vector<DType>& dtypes, const std::string& context) {
  const OpModel& m = op.model();
  WorkloadCall wc;
  wc.label = row.label;
  std::vector<std::string> parts;
  for (size_t v = 0; v < dtypes.size(); ++v)
    parts.push_back(fmt::format("{}={}", m.dtype_vars[v].name, dtype_name(dtypes[v])));
  wc.dtype_case = fmt::format("{}", fmt::join(parts, ","));
  wc.params = row.params;
  // Evaluate each present input's shape from the row's values.
  std::vector<uint8_t> dtypes_bound(dtypes.size(), 1);
  std::vector<Value> params;
  for (size_t p = 0; p < m.params.size(); ++p)
    params.push_back(param_to_value(std::holds_alternative<std::monostate>(row.params[p])
                                        ? m.params[p].default_value
                                        : row.params[p]));
  std::vector<uint8_t> present(m.inputs.size() + m.outputs.size(), 0);
  std::vector<DType> tdt(present.size(), DType::float32);
  std::vector<int64_t> numel(present.size(), -1);
  EvalEnv e;
  e.dims = row.dims;
  e.dims_bound = row.dims_given;
  e.dim_lists = row.dim_lists;
  e.dim_lists_bound = row.dim_lists_given;
  e.dtypes = dtypes;
  e.dtypes_bound = dtypes_bound;
  e.params = params;
  e.tensor_present = present;
  e.tensor_dtype = tdt;
  e.tensor_numel = numel;
  e.num_inputs = static_cast<int>(m.inputs.size());
  for (size_t k = 0; k < m.inputs.size(); ++k) {
    const TensorDecl& decl = m.inputs[k];
    wc.input_present.push_back(row.present[k]);
    wc.input_dtypes.push_back(decl.dtype_var >= 0 ? dtypes[static_cast<size_t>(decl.dtype_var)]
                                                  : decl.fixed_dtype);
    wc.input_shapes.emplace_back();
    if (!row.present[k]) continue;
    int32_t shape = decl.shape;
    std::string problem;
    while (problem.empty() && m.pool[shape].op == Op::cond) {
      const EvalResult c = eval_expr(m.pool, m.pool[shape].args[0], e);
      if (c.status != EvalStatus::ok)
        problem = eval_failure(m, c);
      else
        shape = m.pool[shape].args[c.value.i ? 1 : 2];
    }
    for (size_t j = 0; problem.empty() && j < m.pool[shape].args.size(); ++j) {
      const int32_t it = m.pool[shape].args[j];
      if (m.pool[it].op == Op::splat) {
        const auto l = static_cast<size_t>(m.pool[m.pool[it].args[0]].sym.index);
        if (!row.dim_lists_given[l])
          problem = fmt::format("{} is not given", m.dim_list_names[l]);
        else
          wc.input_shapes[k].insert(wc.input_shapes[k].end(), row.dim_lists[l].begin(),
                                    row.dim_lists[l].end());
        continue;
      }
      const EvalResult r = eval_expr(m.pool, it, e);
      if (r.status == EvalStatus::unbound && m.pool[r.node].op == Op::var)
        problem = fmt::format("{} is not given", m.pool[r.node].text);
      else if (r.status != EvalStatus::ok)
        problem = eval_failure(m, r);
      else
        wc.input_shapes[k].push_back(r.value.i);
    }
    if (!problem.empty())
      return fail(Errc::bind,
                  fmt::format("{}: {}: input {}: {}", m.name, context, decl.name, problem));
  }
  std::vector<TensorArg> args(m.inputs.size());
  for (size_t k = 0; k < m.inputs.size(); ++k)
    args[k] = TensorArg{wc.input_dtypes[k], wc.input_shapes[k], {}, wc.input_present[k] != 0};
  auto bound = bind_call(op, args, wc.params);
  if (!bound) {
    std::string why = bound.error().message;
    if (why.rfind(m.name + ": ", 0) == 0) why.erase(0, m.name.size() + 2);
    return fail(Errc::bind, fmt::format("{}: {}: {}", m.name, context, why));
  }
  // Every variable the row gives must agree with what binding derived from the shapes.
  for (size_t d = 0; d < row.dims.size(); ++d)
    if (row.dims_given[d] && bound->dims_bound[d] && bound->dims[d] != row.dims[d])
      return fail(Errc::bind, fmt::format("{}: {}: {} = {} but the shapes give {}", m.name, context,
                                          m.dim_names[d], row.dims[d], bound->dims[d]));
  wc.bound = std::move(*bound);
  return wc;
}

template <class Named>
std::string known_names(const std::vector<Named>& v) {
  std::string s;
  for (const auto& n : v) s += (s.empty() ? "" : ", ") + n;
  return s.empty() ? "none" : s;
}

}  // namespace

std::optional<ParamValue> param_default(const OpSpec& op, size_t index) {
  const ParamDecl& p = op.model().params.at(index);
  if (!p.has_default) return std::nullopt;
  return p.default_value;
}

Expected<std::vector<std::optional<std::pair<int64_t, int64_t>>>> input_ranges(
    const OpSpec& op, const BoundCall& call) {
  const OpModel& m = op.model();
  std::vector<uint8_t> a, b, c, present;
  std::vector<Value> params;
  const EvalEnv env = full_env(m, call, a, b, c, params, present);
  std::vector<std::optional<std::pair<int64_t, int64_t>>> out(m.inputs.size());
  for (size_t k = 0; k < m.inputs.size(); ++k) {
    const TensorDecl& in = m.inputs[k];
    if (in.range_low < 0) continue;
    const EvalResult lo = eval_expr(m.pool, in.range_low, env);
    const EvalResult hi = eval_expr(m.pool, in.range_high, env);
    if (lo.status != EvalStatus::ok || hi.status != EvalStatus::ok)
      return fail(Errc::invalid_argument,
                  fmt::format("{}: {}.range: {}", m.name, in.name,
                              eval_failure(m, lo.status != EvalStatus::ok ? lo : hi)));
    out[k] = std::make_pair(lo.value.i, hi.value.i);
  }
  return out;
}

namespace {

std::vector<WorkloadCall> row_calls(const OpSpec& op, const std::vector<WorkloadRow>& rows,
                                    std::string_view kind, std::vector<WorkloadProblem>& problems) {
  const OpModel& m = op.model();
  std::vector<WorkloadCall> out;
  for (const WorkloadRow& row : rows) {
    auto dtype_cases = row.dtype_cases;
    if (dtype_cases.empty() && !m.dtype_vars.empty()) {
      // A case row without dtype cases: every dtype of the first DType variable, the other
      // variables at their first dtype (as the contract tests cross every call).
      std::vector<DType> first;
      for (const auto& var : m.dtype_vars)
        for (int t = 0; t < kNumDTypes; ++t)
          if (var.allowed.contains(static_cast<DType>(t))) {
            first.push_back(static_cast<DType>(t));
            break;
          }
      for (int t = 0; t < kNumDTypes; ++t)
        if (m.dtype_vars[0].allowed.contains(static_cast<DType>(t))) {
          dtype_cases.push_back(first);
          dtype_cases.back()[0] = static_cast<DType>(t);
        }
    } else if (dtype_cases.empty()) {
      dtype_cases.emplace_back();
    }
    for (const auto& dtypes : dtype_cases) {
      std::vector<std::string> parts;
      for (size_t v = 0; v < dtypes.size(); ++v)
        parts.push_back(fmt::format("{}={}", m.dtype_vars[v].name, dtype_name(dtypes[v])));
      auto wc = call_from_row(op, row, dtypes,
                              fmt::format("{} '{}' ({})", kind, row.label, fmt::join(parts, ",")));
      if (wc)
        out.push_back(std::move(*wc));
      else
        problems.push_back({row.loc.line, row.loc.column, wc.error().message});
    }
  }
  return out;
}

}  // namespace

std::vector<WorkloadCall> workload_calls(const OpSpec& op, std::vector<WorkloadProblem>& problems) {
  return row_calls(op, op.model().workloads, "workload", problems);
}

std::vector<WorkloadCall> case_calls(const OpSpec& op, std::vector<WorkloadProblem>& problems) {
  return row_calls(op, op.model().cases, "case", problems);
}

Expected<std::vector<WorkloadCall>> workload_calls(const OpSpec& op) {
  std::vector<WorkloadProblem> problems;
  auto calls = workload_calls(op, problems);
  if (!problems.empty()) return fail(Errc::bind, problems.front().message);
  return calls;
}

Expected<WorkloadCall> instantiate_call(const OpSpec& op, const CallValues& values) {
  const OpModel& m = op.model();
  WorkloadRow row;
  row.label = "values";
  row.dims.assign(m.dim_names.size(), 0);
  row.dims_given.assign(m.dim_names.size(), 0);
  row.dim_lists.assign(m.dim_list_names.size(), {});
  row.dim_lists_given.assign(m.dim_list_names.size(), 0);
  row.params.assign(m.params.size(), std::monostate{});
  row.present.assign(m.inputs.size(), 1);
  auto index_of = [](const std::vector<std::string>& names, const std::string& n) {
    const auto it = std::find(names.begin(), names.end(), n);
    return it == names.end() ? -1 : static_cast<int>(it - names.begin());
  };
  for (const auto& [name, v] : values.dims) {
    const int i = index_of(m.dim_names, name);
    if (i < 0)
      return fail(Errc::invalid_argument, fmt::format("{}: no Dim variable '{}' (Dim: {})", m.name,
                                                      name, known_names(m.dim_names)));
    row.dims[static_cast<size_t>(i)] = v;
    row.dims_given[static_cast<size_t>(i)] = 1;
  }
  for (const auto& [name, v] : values.dim_lists) {
    const int i = index_of(m.dim_list_names, name);
    if (i < 0)
      return fail(Errc::invalid_argument, fmt::format("{}: no Dims variable '{}' (Dims: {})",
                                                      m.name, name, known_names(m.dim_list_names)));
    row.dim_lists[static_cast<size_t>(i)] = v;
    row.dim_lists_given[static_cast<size_t>(i)] = 1;
  }
  std::vector<DType> dtypes(m.dtype_vars.size(), DType::float32);
  std::vector<uint8_t> dtype_given(m.dtype_vars.size(), 0);
  for (const auto& [name, t] : values.dtypes) {
    size_t i = 0;
    while (i < m.dtype_vars.size() && m.dtype_vars[i].name != name) ++i;
    if (i == m.dtype_vars.size())
      return fail(Errc::invalid_argument, fmt::format("{}: no DType variable '{}'", m.name, name));
    dtypes[i] = t;
    dtype_given[i] = 1;
  }
  for (size_t i = 0; i < dtypes.size(); ++i)
    if (!dtype_given[i])
      return fail(Errc::invalid_argument, fmt::format("{}: DType variable '{}' is not given",
                                                      m.name, m.dtype_vars[i].name));
  for (const auto& [name, v] : values.params) {
    const int i = op.param_index(name);
    if (i < 0)
      return fail(Errc::invalid_argument, fmt::format("{}: unknown param '{}'", m.name, name));
    row.params[static_cast<size_t>(i)] = v;
  }
  for (const auto& name : values.absent) {
    const int i = op.input_index(name);
    if (i < 0 || !m.inputs[static_cast<size_t>(i)].optional)
      return fail(Errc::invalid_argument,
                  fmt::format("{}: '{}' is not an optional input", m.name, name));
    row.present[static_cast<size_t>(i)] = 0;
  }
  std::vector<std::string> parts;
  for (const auto& [name, v] : values.dims) parts.push_back(fmt::format("{}={}", name, v));
  for (const auto& [name, v] : values.dim_lists)
    parts.push_back(fmt::format("{}=[{}]", name, fmt::join(v, ", ")));
  return call_from_row(op, row, dtypes, fmt::format("values ({})", fmt::join(parts, ", ")));
}

}  // namespace ts::spec
