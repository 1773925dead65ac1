// Loading the manifest: YAML -> OpModel. Every problem becomes a located Diagnostic and loading
// goes on, so one run reports all of them. yaml-cpp stays inside this file.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "model.hpp"

namespace ts::spec {

std::string Diagnostic::str() const {
  return fmt::format("{}:{}:{}: {}", file, line, column, message);
}

using namespace detail;

namespace {

// ---- small helpers ----------------------------------------------------------------------------

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == sep) {
      out.push_back(trim(s.substr(start, i - start)));
      start = i + 1;
    }
  }
  return out;
}

bool is_identifier(std::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

std::optional<int64_t> parse_int(std::string_view s) {
  s = trim(s);
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

std::optional<double> parse_float(std::string_view s) {
  s = trim(s);
  if (s.empty()) return std::nullopt;
  std::string str(s);
  char* end = nullptr;
  double v = std::strtod(str.c_str(), &end);
  if (end != str.c_str() + str.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

const char* node_kind(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Map:
      return "a map";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Scalar:
      return "a scalar";
    case YAML::NodeType::Null:
      return "nothing";
    default:
      return "an undefined node";
  }
}

bool is_null_scalar(const YAML::Node& n) {
  if (n.IsNull()) return true;
  if (!n.IsScalar() || n.Tag() == "!") return false;
  const std::string& s = n.Scalar();
  return s == "~" || s == "null" || s == "none" || s == "None";
}

/// A scope maps names to symbols while an op compiles.
struct TypeDef {
  std::string name;
  std::vector<std::string> params;
  int32_t body = -1;  // root in the op pool, free names are params
  SourceLoc loc;
};

constexpr std::string_view kOpKeys[] = {"ref_api",  "family",    "status",    "doc",
                                        "types",    "signature", "workloads", "cases",
                                        "roofline", "kernels",   "reference", "tolerance"};
constexpr std::string_view kSignatureKeys[] = {"forall", "params", "inputs", "outputs",
                                               "constraints"};
constexpr std::string_view kTensorKeys[] = {"dtype",  "shape", "optional", "mutated",
                                            "layout", "range", "doc"};
constexpr std::string_view kRooflineKeys[] = {"flops", "bytes", "compute", "compute_dtype"};

bool all_integer(DTypeSet set) {
  for (int t = 0; t < kNumDTypes; ++t)
    if (set.contains(static_cast<DType>(t)) && !is_integer(static_cast<DType>(t))) return false;
  return !set.empty();
}

template <size_t N>
std::string key_list(const std::string_view (&keys)[N]) {
  std::string s;
  for (size_t i = 0; i < N; ++i) s += (i ? ", " : "") + std::string(keys[i]);
  return s;
}

template <size_t N>
bool is_one_of(std::string_view k, const std::string_view (&keys)[N]) {
  return std::find(std::begin(keys), std::end(keys), k) != std::end(keys);
}

// ---- the compiler for one op ------------------------------------------------------------------

class OpCompiler {
 public:
  OpCompiler(std::string file, std::vector<Diagnostic>& diags)
      : file_(std::move(file)), diags_(diags) {}

  std::shared_ptr<OpModel> compile(const std::string& name, const YAML::Node& key,
                                   const YAML::Node& entry);

 private:
  // -- diagnostics
  SourceLoc loc_of(const YAML::Node& n) const {
    const YAML::Mark m = n.Mark();
    if (m.is_null()) return {1, 1};
    return {m.line + 1, m.column + 1};
  }
  void error_at(SourceLoc loc, const std::string& msg) {
    diags_.push_back({file_, loc.line, loc.column, fmt::format("{}: {}", op_->name, msg)});
    ++errors_;
  }
  void error(const YAML::Node& n, const std::string& msg) { error_at(loc_of(n), msg); }
  // An error inside the text of scalar `n`, at byte offset `pos`.
  void expr_error(const YAML::Node& n, int32_t pos, const std::string& msg) {
    SourceLoc loc = loc_of(n);
    loc.column += pos + (n.Tag() == "!" ? 1 : 0);
    error_at(loc, msg);
  }

  bool check_keys(const YAML::Node& map, const std::string& where, auto const& allowed,
                  const std::string& allowed_text) {
    bool ok = true;
    std::set<std::string> seen;
    for (auto it = map.begin(); it != map.end(); ++it) {
      const std::string k = it->first.Scalar();
      if (!seen.insert(k).second) {
        error(it->first, fmt::format("{}: duplicate key '{}'", where, k));
        ok = false;
      } else if (!is_one_of(k, allowed)) {
        error(it->first,
              fmt::format("{}: unknown key '{}' (expected one of: {})", where, k, allowed_text));
        ok = false;
      }
    }
    return ok;
  }

  bool expect_map(const YAML::Node& n, const std::string& where) {
    if (n.IsMap()) return true;
    error(n, fmt::format("{}: expected a map, found {}", where, node_kind(n)));
    return false;
  }

  std::optional<std::string> scalar(const YAML::Node& n, const std::string& where) {
    if (n.IsScalar()) return n.Scalar();
    error(n, fmt::format("{}: expected a string, found {}", where, node_kind(n)));
    return std::nullopt;
  }

  std::optional<bool> boolean(const YAML::Node& n, const std::string& where) {
    if (n.IsScalar()) {
      const std::string& s = n.Scalar();
      if (s == "true" || s == "True") return true;
      if (s == "false" || s == "False") return false;
    }
    error(n, fmt::format("{}: expected true or false, found {}", where,
                         n.IsScalar() ? "'" + n.Scalar() + "'" : node_kind(n)));
    return std::nullopt;
  }

  // -- parts of an entry
  void compile_types(const YAML::Node& types);
  void compile_forall(const YAML::Node& forall);
  void compile_params(const YAML::Node& params);
  void compile_tensors(const YAML::Node& tensors, bool inputs);
  void compile_constraints(const YAML::Node& constraints);
  void compile_roofline(const YAML::Node& roofline);
  // `workloads` (benchmarked, at least one) and `cases` (contract tests only) share one row form.
  void compile_rows(const YAML::Node& rows, std::string_view key, std::vector<WorkloadRow>& out);
  void compile_reference(const YAML::Node& reference);
  void compile_tolerance(const YAML::Node& tolerance);
  void check_closure(const YAML::Node& signature);

  std::optional<ParamValue> param_value(const ParamDecl& p, const YAML::Node& v,
                                        const std::string& where);

  // -- expressions: parse text of scalar `n`, resolve and type-check it as `want`.
  int32_t compile_expr(const YAML::Node& n, Type want, const std::string& where);
  int32_t resolve(int32_t i, const YAML::Node& src, const std::string& where, int depth);
  Type check(int32_t i, const YAML::Node& src, const std::string& where);
  bool has_free_names(int32_t i, const std::vector<std::string>& allowed, std::string& bad) const;
  int32_t clone_with(int32_t i, const std::vector<std::string>& names,
                     const std::vector<int32_t>& args, int32_t pos);

  Symbol lookup(std::string_view name) const {
    auto it = scope_.find(std::string(name));
    return it == scope_.end() ? Symbol{} : it->second;
  }
  bool declare(const YAML::Node& at, const std::string& name, Symbol sym, const std::string& what) {
    if (!is_identifier(name)) {
      error(at, fmt::format("{} '{}' is not a valid name", what, name));
      return false;
    }
    if (parse_dtype(name) || name == "true" || name == "false") {
      error(at, fmt::format("{} '{}' shadows a built-in name", what, name));
      return false;
    }
    if (!scope_.emplace(name, sym).second) {
      error(at, fmt::format("{} '{}' is already declared", what, name));
      return false;
    }
    return true;
  }

  std::string file_;
  std::vector<Diagnostic>& diags_;
  std::shared_ptr<OpModel> op_;
  std::map<std::string, Symbol> scope_;
  std::map<std::string, TypeDef> types_;
  int errors_ = 0;
};

// ---- expressions ----------------------------------------------------------------------------

int32_t OpCompiler::clone_with(int32_t i, const std::vector<std::string>& names,
                               const std::vector<int32_t>& args, int32_t pos) {
  const Node& n = op_->pool[i];
  if (n.op == Op::name) {
    auto it = std::find(names.begin(), names.end(), n.text);
    if (it != names.end()) return args[static_cast<size_t>(it - names.begin())];
  }
  Node copy = n;
  copy.pos = pos;
  for (auto& a : copy.args) a = clone_with(a, names, args, pos);
  return op_->pool.add(std::move(copy));
}

bool OpCompiler::has_free_names(int32_t i, const std::vector<std::string>& allowed,
                                std::string& bad) const {
  const Node& n = op_->pool[i];
  if (n.op == Op::name && !parse_dtype(n.text) &&
      std::find(allowed.begin(), allowed.end(), n.text) == allowed.end()) {
    bad = n.text;
    return true;
  }
  for (int32_t a : n.args)
    if (has_free_names(a, allowed, bad)) return true;
  return false;
}

// Resolves names to symbols and expands shape-type applications. Returns the (possibly new)
// root, or -1 after reporting an error.
int32_t OpCompiler::resolve(int32_t i, const YAML::Node& src, const std::string& where, int depth) {
  if (depth > 16) {
    expr_error(src, op_->pool[i].pos, fmt::format("{}: shape types expand too deeply", where));
    return -1;
  }
  Node& n = op_->pool[i];
  if (n.op == Op::name) {
    if (auto dt = parse_dtype(n.text)) {
      n.op = Op::int_lit;
      n.ival = static_cast<int64_t>(*dt);
      n.type = Type::dtype;
      return i;
    }
    const Symbol s = lookup(n.text);
    if (s.kind == SymKind::none) {
      std::string names;
      for (const auto& [k, v] : scope_) names += (names.empty() ? "" : ", ") + k;
      expr_error(src, n.pos,
                 fmt::format("{}: unknown name '{}' (declared: {})", where, n.text,
                             names.empty() ? "nothing" : names));
      return -1;
    }
    n.op = Op::var;
    n.sym = s;
    return i;
  }
  if (n.op == Op::type_app) {
    auto it = types_.find(n.text);
    if (it == types_.end()) {
      std::string names;
      for (const auto& [k, v] : types_) names += (names.empty() ? "" : ", ") + k;
      expr_error(src, n.pos,
                 fmt::format("{}: unknown shape type '{}' (declared: {})", where, n.text,
                             names.empty() ? "none" : names));
      return -1;
    }
    const TypeDef& def = it->second;
    if (def.params.size() != n.args.size()) {
      expr_error(src, n.pos,
                 fmt::format("{}: {} takes {} arguments ({}), found {}", where, def.name,
                             def.params.size(), fmt::join(def.params, ", "), n.args.size()));
      return -1;
    }
    std::vector<int32_t> args = n.args;
    const int32_t pos = n.pos;
    for (auto& a : args)
      if ((a = resolve(a, src, where, depth + 1)) < 0) return -1;
    const int32_t expanded = clone_with(def.body, def.params, args, pos);
    return resolve(expanded, src, where, depth + 1);
  }
  if (n.op == Op::call) {
    static const std::pair<std::string_view, Builtin> kBuiltins[] = {
        {"prod", Builtin::prod},   {"len", Builtin::len},        {"min", Builtin::min},
        {"max", Builtin::max},     {"cdiv", Builtin::cdiv},      {"sizeof", Builtin::sizeof_},
        {"numel", Builtin::numel}, {"present", Builtin::present}};
    for (const auto& [fname, fn] : kBuiltins)
      if (fname == n.text) n.fn = fn;
    if (n.fn == Builtin::none) {
      expr_error(src, n.pos,
                 fmt::format("{}: unknown function '{}' (expected one of: prod, len, min, max, "
                             "cdiv, sizeof, numel, present)",
                             where, n.text));
      return -1;
    }
  }
  // Children may move (type expansion), so index through the pool each time.
  for (size_t k = 0; k < op_->pool[i].args.size(); ++k) {
    const int32_t r = resolve(op_->pool[i].args[k], src, where, depth);
    if (r < 0) return -1;
    op_->pool[i].args[k] = r;
  }
  return i;
}

Type OpCompiler::check(int32_t i, const YAML::Node& src, const std::string& where) {
  Node& n = op_->pool[i];
  auto bad = [&](int32_t at, const std::string& msg) {
    expr_error(src, op_->pool[at].pos, fmt::format("{}: {}", where, msg));
    return Type::unknown;
  };
  auto numeric = [](Type t) { return t == Type::int_ || t == Type::float_; };
  std::vector<Type> a;
  for (int32_t c : n.args) {
    // Tensor and dim-list names are only meaningful as arguments of builtins, checked below.
    Type t = check(c, src, where);
    if (t == Type::unknown) return Type::unknown;
    a.push_back(t);
  }
  Type t = Type::unknown;
  switch (n.op) {
    case Op::int_lit:
      t = n.type == Type::dtype ? Type::dtype : Type::int_;
      break;
    case Op::float_lit:
      t = Type::float_;
      break;
    case Op::str_lit:
      t = Type::str;
      break;
    case Op::bool_lit:
      t = Type::bool_;
      break;
    case Op::var:
      switch (n.sym.kind) {
        case SymKind::dim:
          t = Type::int_;
          break;
        case SymKind::dims:
          t = Type::dims;
          break;
        case SymKind::dtype_var:
          t = Type::dtype;
          break;
        case SymKind::input:
        case SymKind::output:
          t = Type::tensor;
          break;
        case SymKind::param: {
          const ParamDecl& p = op_->params[static_cast<size_t>(n.sym.index)];
          switch (p.kind) {
            case ParamKind::bool_:
              t = Type::bool_;
              break;
            case ParamKind::int_:
              t = Type::int_;
              break;
            case ParamKind::float_:
              t = Type::float_;
              break;
            case ParamKind::enum_:
              t = Type::str;
              break;
            case ParamKind::int_list:
              return bad(i, fmt::format("list param '{}' cannot be used in an expression", n.text));
          }
          break;
        }
        default:
          return bad(i, fmt::format("'{}' cannot be used here", n.text));
      }
      break;
    case Op::neg:
      if (!numeric(a[0]))
        return bad(i, fmt::format("'-' needs a number, found {}", type_name(a[0])));
      t = a[0];
      break;
    case Op::logical_not:
      if (a[0] != Type::bool_)
        return bad(i, fmt::format("'not' needs a bool, found {}", type_name(a[0])));
      t = Type::bool_;
      break;
    case Op::logical_and:
    case Op::logical_or:
      if (a[0] != Type::bool_ || a[1] != Type::bool_)
        return bad(i, fmt::format("'{}' needs bools, found {} and {}",
                                  n.op == Op::logical_and ? "and" : "or", type_name(a[0]),
                                  type_name(a[1])));
      t = Type::bool_;
      break;
    case Op::add:
    case Op::sub:
    case Op::mul:
    case Op::div:
    case Op::mod:
      if (!numeric(a[0]) || !numeric(a[1]))
        return bad(i, fmt::format("arithmetic needs numbers, found {} and {}", type_name(a[0]),
                                  type_name(a[1])));
      if (n.op == Op::mod && (a[0] != Type::int_ || a[1] != Type::int_))
        return bad(i, "'%' needs integers");
      t = a[0] == Type::int_ && a[1] == Type::int_ ? Type::int_ : Type::float_;
      break;
    case Op::eq:
    case Op::ne: {
      const bool ok =
          (numeric(a[0]) && numeric(a[1])) ||
          (a[0] == a[1] && a[0] != Type::tensor && a[0] != Type::dims && a[0] != Type::shape);
      if (!ok)
        return bad(i, fmt::format("cannot compare {} with {}", type_name(a[0]), type_name(a[1])));
      // "tanh" == approximate: the literal must be one of the enum's choices.
      for (int side = 0; side < 2; ++side) {
        const Node& lit = op_->pool[n.args[static_cast<size_t>(side)]];
        const Node& other = op_->pool[n.args[static_cast<size_t>(1 - side)]];
        if (lit.op == Op::str_lit && other.op == Op::var && other.sym.kind == SymKind::param) {
          const auto& choices = op_->params[static_cast<size_t>(other.sym.index)].choices;
          if (std::find(choices.begin(), choices.end(), lit.text) == choices.end())
            return bad(n.args[static_cast<size_t>(side)],
                       fmt::format("\"{}\" is not a choice of '{}' (choices: {})", lit.text,
                                   other.text, fmt::join(choices, ", ")));
        }
      }
      t = Type::bool_;
      break;
    }
    case Op::lt:
    case Op::le:
    case Op::gt:
    case Op::ge:
      if (!numeric(a[0]) || !numeric(a[1]))
        return bad(i, fmt::format("ordering needs numbers, found {} and {}", type_name(a[0]),
                                  type_name(a[1])));
      t = Type::bool_;
      break;
    case Op::cond:
      if (a[0] != Type::bool_)
        return bad(n.args[0], fmt::format("a condition must be a bool, found {}", type_name(a[0])));
      if (a[1] == a[2])
        t = a[1];
      else if (numeric(a[1]) && numeric(a[2]))
        t = Type::float_;
      else
        return bad(i,
                   fmt::format("the branches differ: {} and {}", type_name(a[1]), type_name(a[2])));
      break;
    case Op::shape: {
      int splats = 0;
      for (size_t k = 0; k < a.size(); ++k) {
        if (op_->pool[n.args[k]].op == Op::splat) {
          if (++splats > 1) return bad(n.args[k], "a shape may hold at most one '*Dims' item");
        } else if (a[k] != Type::int_) {
          return bad(n.args[k],
                     fmt::format("a shape item must be an integer, found {}", type_name(a[k])));
        }
      }
      t = Type::shape;
      break;
    }
    case Op::splat:
      if (a[0] != Type::dims)
        return bad(i, fmt::format("'*' needs a Dims variable, found {}", type_name(a[0])));
      t = Type::dims;
      break;
    case Op::call: {
      auto arity = [&](size_t lo, size_t hi) { return a.size() >= lo && a.size() <= hi; };
      switch (n.fn) {
        case Builtin::prod:
        case Builtin::len:
          if (!arity(1, 1) || a[0] != Type::dims)
            return bad(i, fmt::format("{}() takes one Dims variable", n.text));
          t = Type::int_;
          break;
        case Builtin::min:
        case Builtin::max:
          if (a.empty() || std::any_of(a.begin(), a.end(), [](Type x) { return x != Type::int_; }))
            return bad(i, fmt::format("{}() takes one or more integers", n.text));
          t = Type::int_;
          break;
        case Builtin::cdiv:
          if (!arity(2, 2) || a[0] != Type::int_ || a[1] != Type::int_)
            return bad(i, "cdiv() takes two integers");
          t = Type::int_;
          break;
        case Builtin::sizeof_:
          if (!arity(1, 1) || (a[0] != Type::dtype && a[0] != Type::tensor))
            return bad(i, "sizeof() takes a dtype or a tensor");
          t = Type::int_;
          break;
        case Builtin::numel:
          if (!arity(1, 1) || a[0] != Type::tensor) return bad(i, "numel() takes a tensor");
          t = Type::int_;
          break;
        case Builtin::present: {
          const Node& arg = op_->pool[n.args.empty() ? i : n.args[0]];
          const bool optional_param = arg.op == Op::var && arg.sym.kind == SymKind::param &&
                                      op_->params[static_cast<size_t>(arg.sym.index)].optional;
          if (!arity(1, 1) || !(a[0] == Type::tensor || optional_param))
            return bad(i, "present() takes an optional input or an optional param");
          t = Type::bool_;
          break;
        }
        case Builtin::none:
          return bad(i, "unknown function");
      }
      break;
    }
    default:
      return bad(i, "unexpected expression");
  }
  // Tensors and dim lists are values only inside builtins; a bare one elsewhere is an error,
  // caught by the caller's expected type.
  n.type = t;
  return t;
}

int32_t OpCompiler::compile_expr(const YAML::Node& n, Type want, const std::string& where) {
  if (!n.IsScalar()) {
    error(n, fmt::format("{}: expected an expression, found {}", where, node_kind(n)));
    return -1;
  }
  ExprError perr;
  int32_t root = parse_expr(op_->pool, n.Scalar(), perr);
  if (root < 0) {
    expr_error(n, perr.pos, fmt::format("{}: {} in '{}'", where, perr.message, n.Scalar()));
    return -1;
  }
  root = resolve(root, n, where, 0);
  if (root < 0) return -1;
  Type t = check(root, n, where);
  if (t == Type::unknown) return -1;
  const bool ok = t == want || (want == Type::float_ && t == Type::int_);
  if (!ok) {
    expr_error(n, 0,
               fmt::format("{}: expected {} expression, found {} in '{}'", where,
                           want == Type::int_    ? "an integer"
                           : want == Type::bool_ ? "a boolean"
                           : want == Type::shape ? "a shape"
                                                 : type_name(want),
                           type_name(t), n.Scalar()));
    return -1;
  }
  return root;
}

// ---- entry parts ----------------------------------------------------------------------------

void OpCompiler::compile_types(const YAML::Node& types) {
  if (!expect_map(types, "types")) return;
  for (auto it = types.begin(); it != types.end(); ++it) {
    const std::string head = it->first.Scalar();
    const auto open = head.find('[');
    TypeDef def;
    def.loc = loc_of(it->first);
    if (open == std::string::npos || head.back() != ']') {
      error(it->first, fmt::format("types: '{}' should be written Name[param, ...]", head));
      continue;
    }
    def.name = std::string(trim(std::string_view(head).substr(0, open)));
    for (auto p : split(std::string_view(head).substr(open + 1, head.size() - open - 2), ','))
      def.params.emplace_back(p);
    bool ok = is_identifier(def.name);
    for (const auto& p : def.params) ok = ok && is_identifier(p);
    if (!ok) {
      error(it->first,
            fmt::format("types: '{}': the name and each param must be identifiers", head));
      continue;
    }
    if (types_.count(def.name)) {
      error(it->first, fmt::format("types: '{}' is declared twice", def.name));
      continue;
    }
    if (!it->second.IsScalar()) {
      error(it->second, fmt::format("types.{}: expected a shape expression, found {}", def.name,
                                    node_kind(it->second)));
      continue;
    }
    ExprError perr;
    def.body = parse_expr(op_->pool, it->second.Scalar(), perr);
    if (def.body < 0) {
      expr_error(it->second, perr.pos, fmt::format("types.{}: {}", def.name, perr.message));
      continue;
    }
    std::string free_name;
    if (has_free_names(def.body, def.params, free_name)) {
      error(it->second, fmt::format("types.{}: '{}' is not one of its params ({})", def.name,
                                    free_name, fmt::join(def.params, ", ")));
      continue;
    }
    types_.emplace(def.name, std::move(def));
  }
}

void OpCompiler::compile_forall(const YAML::Node& forall) {
  if (!expect_map(forall, "signature.forall")) return;
  for (auto it = forall.begin(); it != forall.end(); ++it) {
    const std::string name = it->first.Scalar();
    auto kind_text = scalar(it->second, "signature.forall." + name);
    if (!kind_text) continue;
    std::string_view kind = trim(*kind_text);
    if (kind == "Dim") {
      if (declare(it->first, name, {SymKind::dim, static_cast<int16_t>(op_->dim_names.size())},
                  "variable"))
        op_->dim_names.push_back(name);
    } else if (kind == "Dims") {
      if (declare(it->first, name,
                  {SymKind::dims, static_cast<int16_t>(op_->dim_list_names.size())}, "variable"))
        op_->dim_list_names.push_back(name);
    } else if (kind == "DType" || (kind.starts_with("DType[") && kind.ends_with("]"))) {
      DTypeVarDecl var{name, DTypeSet::all()};
      if (kind != "DType") {
        var.allowed = DTypeSet();
        for (auto d : split(kind.substr(6, kind.size() - 7), '|')) {
          if (auto t = parse_dtype(d))
            var.allowed.insert(*t);
          else
            error(it->second, fmt::format("signature.forall.{}: unknown dtype '{}' (expected e.g. "
                                          "float16, bfloat16, float32, int64)",
                                          name, d));
        }
      }
      if (declare(it->first, name,
                  {SymKind::dtype_var, static_cast<int16_t>(op_->dtype_vars.size())}, "variable"))
        op_->dtype_vars.push_back(std::move(var));
    } else {
      error(it->second, fmt::format("signature.forall.{}: expected Dim, Dims, DType or "
                                    "DType[a | b], found '{}'",
                                    name, kind));
      continue;
    }
    op_->var_infos.push_back({name, std::string(kind)});
  }
}

std::optional<ParamValue> OpCompiler::param_value(const ParamDecl& p, const YAML::Node& v,
                                                  const std::string& where) {
  if (is_null_scalar(v)) {
    if (p.optional) return ParamValue(NoneValue{});
    error(v, fmt::format("{}: '{}' is not optional, so it cannot be none", where, p.name));
    return std::nullopt;
  }
  const std::string text = v.IsScalar() ? v.Scalar() : std::string();
  switch (p.kind) {
    case ParamKind::bool_:
      if (auto b = boolean(v, where)) return ParamValue(*b);
      return std::nullopt;
    case ParamKind::int_:
      if (v.IsScalar())
        if (auto i = parse_int(text)) return ParamValue(*i);
      error(v, fmt::format("{}: expected an integer, found {}", where,
                           v.IsScalar() ? "'" + text + "'" : node_kind(v)));
      return std::nullopt;
    case ParamKind::float_:
      if (v.IsScalar())
        if (auto f = parse_float(text)) return ParamValue(*f);
      error(v, fmt::format("{}: expected a number, found {}", where,
                           v.IsScalar() ? "'" + text + "'" : node_kind(v)));
      return std::nullopt;
    case ParamKind::enum_:
      if (v.IsScalar() && std::find(p.choices.begin(), p.choices.end(), text) != p.choices.end())
        return ParamValue(text);
      error(v, fmt::format("{}: expected one of {}, found {}", where, fmt::join(p.choices, ", "),
                           v.IsScalar() ? "'" + text + "'" : node_kind(v)));
      return std::nullopt;
    case ParamKind::int_list: {
      if (!v.IsSequence()) {
        error(v, fmt::format("{}: expected a list of integers, found {}", where, node_kind(v)));
        return std::nullopt;
      }
      std::vector<int64_t> out;
      for (const auto& e : v) {
        auto i = e.IsScalar() ? parse_int(e.Scalar()) : std::nullopt;
        if (!i) {
          error(e, fmt::format("{}: expected an integer in the list", where));
          return std::nullopt;
        }
        out.push_back(*i);
      }
      return ParamValue(std::move(out));
    }
  }
  return std::nullopt;
}

void OpCompiler::compile_params(const YAML::Node& params) {
  if (!expect_map(params, "signature.params")) return;
  for (auto it = params.begin(); it != params.end(); ++it) {
    const std::string name = it->first.Scalar();
    const std::string where = "signature.params." + name;
    YAML::Node type_node, default_node;
    bool has_type = false, has_default = false;
    if (it->second.IsScalar()) {
      has_type = true;
      type_node.reset(it->second);
    } else if (it->second.IsMap()) {
      std::set<std::string> seen;
      for (auto f = it->second.begin(); f != it->second.end(); ++f) {
        const std::string k = f->first.Scalar();
        if (k == "type") {
          type_node.reset(f->second);
          has_type = true;
        } else if (k == "default") {
          default_node.reset(f->second);
          has_default = true;
        } else if (k != "doc")
          error(f->first,
                fmt::format("{}: unknown key '{}' (expected type, default, doc)", where, k));
      }
      if (!has_type) {
        error(it->second, fmt::format("{}: missing 'type'", where));
        continue;
      }
    } else {
      error(it->second, fmt::format("{}: expected a type or a map with type and default", where));
      continue;
    }
    auto type_text = scalar(type_node, where + ".type");
    if (!type_text) continue;
    ParamDecl p;
    p.name = name;
    std::string_view t = trim(*type_text);
    if (t.starts_with("optional[") && t.ends_with("]")) {
      p.optional = true;
      t = trim(t.substr(9, t.size() - 10));
    }
    std::string canonical;
    if (t == "bool") {
      p.kind = ParamKind::bool_;
    } else if (t == "int") {
      p.kind = ParamKind::int_;
    } else if (t == "float") {
      p.kind = ParamKind::float_;
    } else if (t == "list[int]" || t == "int[]") {
      p.kind = ParamKind::int_list;
      t = "list[int]";
    } else if (t.starts_with("enum[") && t.ends_with("]")) {
      p.kind = ParamKind::enum_;
      for (auto c :
           split(t.substr(5, t.size() - 6), t.find('|') != std::string_view::npos ? '|' : ','))
        p.choices.emplace_back(c);
      if (p.choices.empty() ||
          std::any_of(p.choices.begin(), p.choices.end(),
                      [](const std::string& c) { return !is_identifier(c); })) {
        error(type_node, fmt::format("{}: enum choices must be identifiers, found '{}'", where, t));
        continue;
      }
      canonical = fmt::format("enum[{}]", fmt::join(p.choices, ", "));
    } else {
      error(type_node, fmt::format("{}: unknown type '{}' (expected bool, int, float, list[int], "
                                   "enum[a, b], or optional[...] of one)",
                                   where, t));
      continue;
    }
    if (canonical.empty()) canonical = std::string(t);
    if (p.optional) canonical = "optional[" + canonical + "]";
    ParamInfo info{name, canonical, std::nullopt};
    if (has_default) {
      auto v = param_value(p, default_node, where + ".default");
      if (!v) continue;
      p.has_default = true;
      p.default_value = *v;
      info.default_value = param_value_text(*v);
    }
    if (declare(it->first, name, {SymKind::param, static_cast<int16_t>(op_->params.size())},
                "param")) {
      op_->params.push_back(std::move(p));
      op_->param_infos.push_back(std::move(info));
    }
  }
}

void OpCompiler::compile_tensors(const YAML::Node& tensors, bool inputs) {
  const std::string section = inputs ? "signature.inputs" : "signature.outputs";
  if (!expect_map(tensors, section)) return;
  auto& decls = inputs ? op_->inputs : op_->outputs;
  auto& infos = inputs ? op_->input_infos : op_->output_infos;
  // Names first, so a shape may mention any tensor (numel(a)) regardless of order.
  std::vector<std::pair<YAML::Node, YAML::Node>> entries;
  for (auto it = tensors.begin(); it != tensors.end(); ++it) {
    const std::string name = it->first.Scalar();
    if (!declare(it->first, name,
                 {inputs ? SymKind::input : SymKind::output, static_cast<int16_t>(decls.size())},
                 inputs ? "input" : "output"))
      continue;
    TensorDecl d;
    d.name = name;
    d.loc = loc_of(it->first);
    decls.push_back(std::move(d));
    entries.emplace_back(it->first, it->second);
  }
  for (size_t k = 0; k < entries.size(); ++k) {
    TensorDecl& d = decls[k];
    const YAML::Node& body = entries[k].second;
    const std::string where = section + "." + d.name;
    // Inputs admit any strides unless they say otherwise; outputs the op allocates are
    // contiguous, so a caller's output buffer must be too unless the kernel takes strides.
    d.layout = inputs ? Layout::any : Layout::contiguous;
    TensorInfo info{d.name, "", "", false, false, inputs ? "any" : "contiguous", false};
    if (!expect_map(body, where)) {
      infos.push_back(info);
      continue;
    }
    check_keys(body, where, kTensorKeys, key_list(kTensorKeys));
    if (auto n = body["dtype"]) {
      if (auto s = scalar(n, where + ".dtype")) {
        info.dtype = std::string(trim(*s));
        const Symbol sym = lookup(info.dtype);
        if (sym.kind == SymKind::dtype_var)
          d.dtype_var = sym.index;
        else if (auto t = parse_dtype(info.dtype))
          d.fixed_dtype = *t;
        else
          error(n, fmt::format("{}.dtype: '{}' is neither a DType variable nor a dtype", where,
                               info.dtype));
      }
    } else {
      error(body, fmt::format("{}: missing 'dtype'", where));
    }
    if (auto n = body["shape"]) {
      d.shape = compile_expr(n, Type::shape, where + ".shape");
      if (d.shape >= 0) info.shape = n.Scalar();
    } else {
      error(body, fmt::format("{}: missing 'shape' (use \"[*B]\" for any rank)", where));
    }
    if (auto n = body["optional"]) {
      if (!inputs)
        error(n, fmt::format("{}: outputs cannot be optional", where));
      else if (auto b = boolean(n, where + ".optional"))
        d.optional = *b;
    }
    if (auto n = body["mutated"]) {
      if (!inputs)
        error(n, fmt::format("{}: only inputs can be mutated", where));
      else if (auto b = boolean(n, where + ".mutated"))
        d.mutated = *b;
    }
    if (auto n = body["layout"]) {
      if (auto s = scalar(n, where + ".layout")) {
        if (*s == "any" && inputs)
          d.layout = Layout::any;
        else if (*s == "contiguous")
          d.layout = Layout::contiguous;
        else if (*s == "rows")
          d.layout = Layout::rows;
        else if (*s == "strided")
          d.layout = Layout::strided;
        else
          error(n, fmt::format("{}.layout: expected {}contiguous, rows or strided, found '{}'",
                               where, inputs ? "any, " : "", *s));
        info.layout = *s;
      }
    }
    if (auto n = body["range"]) {
      // Integer inputs whose values index something (positions, token ids): low <= v < high.
      if (!inputs || !n.IsMap() || !n["low"] || !n["high"] || n.size() != 2) {
        error(n, fmt::format("{}.range: expected {{low: <int expr>, high: <int expr>}} on an input "
                             "(its values lie in [low, high))",
                             where));
      } else if (d.dtype_var >= 0
                     ? !all_integer(op_->dtype_vars[static_cast<size_t>(d.dtype_var)].allowed)
                     : !is_integer(d.fixed_dtype)) {
        error(n, fmt::format("{}.range: only integer inputs have a range (their dtype must be one "
                             "of int8, int16, int32, int64, uint8)",
                             where));
      } else {
        d.range_low = compile_expr(n["low"], Type::int_, where + ".range.low");
        d.range_high = compile_expr(n["high"], Type::int_, where + ".range.high");
        info.has_range = d.range_low >= 0 && d.range_high >= 0;
      }
    }
    info.optional = d.optional;
    info.mutated = d.mutated;
    infos.push_back(std::move(info));
  }
}

void OpCompiler::compile_constraints(const YAML::Node& constraints) {
  if (!constraints.IsSequence()) {
    error(constraints,
          fmt::format("signature.constraints: expected a list, found {}", node_kind(constraints)));
    return;
  }
  size_t k = 0;
  for (const auto& c : constraints) {
    const std::string where = fmt::format("signature.constraints[{}]", k++);
    YAML::Node expr = c;
    std::string message;
    if (c.IsMap()) {
      expr.reset(c["expr"]);
      if (!expr) {
        error(c, fmt::format("{}: missing 'expr'", where));
        continue;
      }
      if (auto m = c["message"]) message = m.IsScalar() ? m.Scalar() : "";
    }
    const int32_t root = compile_expr(expr, Type::bool_, where);
    if (root < 0) continue;
    op_->constraints.push_back({root, message});
    op_->constraint_infos.push_back({print_expr(op_->pool, root), message});
  }
}

void OpCompiler::compile_roofline(const YAML::Node& roofline) {
  if (!expect_map(roofline, "roofline")) return;
  check_keys(roofline, "roofline", kRooflineKeys, key_list(kRooflineKeys));
  if (auto n = roofline["flops"]) {
    op_->flops = compile_expr(n, Type::int_, "roofline.flops");
    if (op_->flops >= 0) op_->roofline_info.flops = print_expr(op_->pool, op_->flops);
  } else {
    error(roofline, "roofline: missing 'flops'");
  }
  if (auto n = roofline["bytes"]) {
    op_->bytes = compile_expr(n, Type::int_, "roofline.bytes");
    if (op_->bytes >= 0) op_->roofline_info.bytes = print_expr(op_->pool, op_->bytes);
  }
  op_->roofline_info.compute = "simt";
  if (auto n = roofline["compute"]) {
    if (auto s = scalar(n, "roofline.compute")) {
      if (*s == "tensor" || *s == "simt") {
        op_->tensor_cores = *s == "tensor";
        op_->roofline_info.compute = *s;
      } else {
        error(n, fmt::format("roofline.compute: expected tensor or simt, found '{}'", *s));
      }
    }
  }
  if (auto n = roofline["compute_dtype"]) {
    if (auto s = scalar(n, "roofline.compute_dtype")) {
      const Symbol sym = lookup(*s);
      if (sym.kind == SymKind::dtype_var)
        op_->compute_dtype_var = sym.index;
      else
        error(n, fmt::format("roofline.compute_dtype: '{}' is not a DType variable", *s));
    }
  }
}

void OpCompiler::compile_rows(const YAML::Node& rows, std::string_view key,
                              std::vector<WorkloadRow>& out) {
  if (!rows.IsSequence() || rows.size() == 0) {
    error(rows, fmt::format("{}: expected a non-empty list of rows", key));
    return;
  }
  std::set<std::string> labels;
  for (const auto& w : op_->workloads) labels.insert(w.label);  // cases' labels are their own
  size_t row_index = 0;
  for (const auto& row_node : rows) {
    std::string where = fmt::format("{}[{}]", key, row_index++);
    if (!expect_map(row_node, where)) continue;
    WorkloadRow row;
    row.loc = loc_of(row_node);
    row.dims.assign(op_->dim_names.size(), 0);
    row.dims_given.assign(op_->dim_names.size(), 0);
    row.dim_lists.assign(op_->dim_list_names.size(), {});
    row.dim_lists_given.assign(op_->dim_list_names.size(), 0);
    row.params.assign(op_->params.size(), std::monostate{});
    row.present.assign(op_->inputs.size(), 0);
    for (size_t i = 0; i < op_->inputs.size(); ++i) row.present[i] = !op_->inputs[i].optional;
    if (auto l = row_node["label"]; l && l.IsScalar()) {
      row.label = l.Scalar();
      where += " (" + row.label + ")";
      if (!labels.insert(row.label).second)
        error(l, fmt::format("{}: duplicate label '{}'", where, row.label));
    } else {
      error(row_node,
            fmt::format("{}: missing 'label' (a scenario name such as llama-8b-decode)", where));
    }
    bool row_ok = true;
    YAML::Node cases;
    bool has_cases = false;
    for (auto it = row_node.begin(); it != row_node.end(); ++it) {
      const std::string key = it->first.Scalar();
      const YAML::Node& v = it->second;
      if (key == "label") continue;
      if (key == "dtype_cases" || key == "dtypes") {
        cases.reset(v);
        has_cases = true;
        continue;
      }
      if (key == "present") {
        if (!v.IsSequence()) {
          error(v, fmt::format("{}.present: expected a list of optional input names", where));
          row_ok = false;
          continue;
        }
        for (const auto& e : v) {
          const int idx = e.IsScalar() ? OpSpec(op_).input_index(e.Scalar()) : -1;
          if (idx < 0 || !op_->inputs[static_cast<size_t>(idx)].optional) {
            error(e, fmt::format("{}.present: '{}' is not an optional input", where,
                                 e.IsScalar() ? e.Scalar() : "?"));
            row_ok = false;
          } else {
            row.present[static_cast<size_t>(idx)] = 1;
          }
        }
        continue;
      }
      const Symbol sym = lookup(key);
      const auto idx = static_cast<size_t>(sym.index);
      if (sym.kind == SymKind::dim) {
        auto i = v.IsScalar() ? parse_int(v.Scalar()) : std::nullopt;
        if (!i || *i < 0) {
          error(v, fmt::format("{}.{}: expected a non-negative integer", where, key));
          row_ok = false;
        } else {
          row.dims[idx] = *i;
          row.dims_given[idx] = 1;
        }
      } else if (sym.kind == SymKind::dims) {
        bool ok = v.IsSequence();
        std::vector<int64_t> list;
        if (ok)
          for (const auto& e : v) {
            auto i = e.IsScalar() ? parse_int(e.Scalar()) : std::nullopt;
            ok = ok && i && *i >= 0;
            if (i) list.push_back(*i);
          }
        if (!ok) {
          error(v, fmt::format("{}.{}: expected a list of non-negative integers", where, key));
          row_ok = false;
        } else {
          row.dim_lists[idx] = std::move(list);
          row.dim_lists_given[idx] = 1;
        }
      } else if (sym.kind == SymKind::param) {
        auto pv = param_value(op_->params[idx], v, where + "." + key);
        if (pv)
          row.params[idx] = *pv;
        else
          row_ok = false;
      } else {
        error(it->first, fmt::format("{}: unknown key '{}' (expected a Dim or Dims variable, a "
                                     "param, label, dtype_cases or present)",
                                     where, key));
        row_ok = false;
      }
    }
    // dtype cases: [{T: float16}, {T: bfloat16}], or dtypes: [float16, bfloat16] with one variable.
    const size_t nvars = op_->dtype_vars.size();
    if (!has_cases && key == "cases") {
      // A contract case without dtype cases runs with every dtype the signature declares.
    } else if (!has_cases) {
      std::vector<DType> only;
      for (const auto& var : op_->dtype_vars) {
        int count = 0;
        for (int t = 0; t < kNumDTypes; ++t)
          if (var.allowed.contains(static_cast<DType>(t))) {
            ++count;
            only.push_back(static_cast<DType>(t));
          }
        if (count != 1) {
          error(row_node,
                fmt::format("{}: missing dtype_cases (e.g. [{{{}: bfloat16}}])", where, var.name));
          row_ok = false;
          break;
        }
      }
      if (row_ok) row.dtype_cases.push_back(only);
    } else if (!cases.IsSequence() || cases.size() == 0) {
      error(cases, fmt::format("{}: dtype cases must be a non-empty list", where));
      row_ok = false;
    } else {
      for (const auto& c : cases) {
        std::vector<DType> assign(nvars, DType::float32);
        std::vector<uint8_t> given(nvars, 0);
        auto set = [&](const YAML::Node& at, size_t var, const std::string& dname) {
          auto t = parse_dtype(dname);
          if (!t || !op_->dtype_vars[var].allowed.contains(*t)) {
            error(at, fmt::format("{}: '{}' is not a dtype allowed for {}", where, dname,
                                  op_->dtype_vars[var].name));
            return false;
          }
          assign[var] = *t;
          given[var] = 1;
          return true;
        };
        bool ok = true;
        if (c.IsScalar() && nvars == 1) {
          ok = set(c, 0, c.Scalar());
        } else if (c.IsMap()) {
          for (auto it = c.begin(); it != c.end(); ++it) {
            const Symbol s = lookup(it->first.Scalar());
            if (s.kind != SymKind::dtype_var || !it->second.IsScalar()) {
              error(it->first,
                    fmt::format("{}: '{}' is not a DType variable", where, it->first.Scalar()));
              ok = false;
            } else {
              ok = set(it->second, static_cast<size_t>(s.index), it->second.Scalar()) && ok;
            }
          }
        } else {
          error(c, fmt::format("{}: a dtype case is a map like {{T: bfloat16}}", where));
          ok = false;
        }
        for (size_t v = 0; ok && v < nvars; ++v)
          if (!given[v]) {
            error(c, fmt::format("{}: the dtype case does not give {}", where,
                                 op_->dtype_vars[v].name));
            ok = false;
          }
        if (ok)
          row.dtype_cases.push_back(std::move(assign));
        else
          row_ok = false;
      }
    }
    if (row_ok) out.push_back(std::move(row));
  }
}

void OpCompiler::compile_reference(const YAML::Node& reference) {
  auto s = scalar(reference, "reference");
  if (!s) return;
  if (trim(*s).empty())
    error(reference,
          "reference: expected a Python expression over the inputs and params "
          "(torch, F and math in scope) or a module:function path");
  else
    op_->reference = std::string(trim(*s));
}

void OpCompiler::compile_tolerance(const YAML::Node& tolerance) {
  if (!expect_map(tolerance, "tolerance")) return;
  for (auto it = tolerance.begin(); it != tolerance.end(); ++it) {
    const std::string key = it->first.Scalar();
    const auto dt = parse_dtype(key);
    double v = 0;
    bool ok = it->second.IsScalar();
    if (ok) {
      try {
        v = it->second.as<double>();
      } catch (const YAML::Exception&) {
        ok = false;
      }
    }
    if (!dt)
      error(it->first, fmt::format("tolerance: '{}' is not a dtype", key));
    else if (!ok || !(v > 0.0) || v >= 1.0)
      error(it->second, fmt::format("tolerance.{}: expected a number in (0, 1) (the rtol and atol "
                                    "of an output of that dtype against the fp64 reference)",
                                    key));
    else
      op_->tolerance.emplace_back(*dt, v);
  }
}

// "Types close": every variable can be learnt from the inputs, every output is computable.
void OpCompiler::check_closure(const YAML::Node& signature) {
  std::vector<uint8_t> dim_seen(op_->dim_names.size()), list_seen(op_->dim_list_names.size()),
      dtype_seen(op_->dtype_vars.size());
  std::function<void(int32_t)> mark = [&](int32_t i) {
    const Node& n = op_->pool[i];
    if (n.op == Op::var && n.sym.kind == SymKind::dim)
      dim_seen[static_cast<size_t>(n.sym.index)] = 1;
    if (n.op == Op::var && n.sym.kind == SymKind::dims)
      list_seen[static_cast<size_t>(n.sym.index)] = 1;
    for (int32_t a : n.args) mark(a);
  };
  for (const auto& in : op_->inputs) {
    if (in.shape >= 0) mark(in.shape);
    if (in.dtype_var >= 0) dtype_seen[static_cast<size_t>(in.dtype_var)] = 1;
  }
  for (size_t v = 0; v < dim_seen.size(); ++v)
    if (!dim_seen[v])
      error(signature, fmt::format("signature: Dim {} appears in no input shape, so a call cannot "
                                   "determine it",
                                   op_->dim_names[v]));
  for (size_t v = 0; v < list_seen.size(); ++v)
    if (!list_seen[v])
      error(signature,
            fmt::format("signature: Dims {} appears in no input shape", op_->dim_list_names[v]));
  for (size_t v = 0; v < dtype_seen.size(); ++v)
    if (!dtype_seen[v])
      error(signature,
            fmt::format("signature: DType {} is the dtype of no input", op_->dtype_vars[v].name));
  if (op_->inputs.empty()) error(signature, "signature: an op needs at least one input");
  if (op_->outputs.empty() && std::none_of(op_->inputs.begin(), op_->inputs.end(),
                                           [](const TensorDecl& t) { return t.mutated; }))
    error(signature, "signature: an op needs an output or a mutated input");
  for (size_t k = 0; k < op_->inputs.size(); ++k) {
    const auto& in = op_->inputs[k];
    if (in.optional && in.mutated)
      error_at(in.loc,
               fmt::format("signature.inputs.{}: an optional input cannot be mutated", in.name));
  }
}

std::shared_ptr<OpModel> OpCompiler::compile(const std::string& name, const YAML::Node& key,
                                             const YAML::Node& entry) {
  op_ = std::make_shared<OpModel>();
  op_->name = name;
  op_->file = file_;
  op_->loc = loc_of(key);
  if (!is_identifier(name)) error(key, fmt::format("'{}' is not a valid op name", name));
  if (!entry.IsMap()) {
    error(entry, fmt::format("expected a map with ref_api, family, status, signature, workloads "
                             "and roofline, found {}",
                             node_kind(entry)));
    return nullptr;
  }
  check_keys(entry, "entry", kOpKeys, key_list(kOpKeys));
  for (const char* required : {"ref_api", "family", "status", "signature", "workloads", "roofline"})
    if (!entry[required]) error(key, fmt::format("missing required key '{}'", required));

  if (auto n = entry["ref_api"]) {
    if (auto s = scalar(n, "ref_api")) op_->ref_api = *s;
  }
  if (auto n = entry["doc"]) {
    if (auto s = scalar(n, "doc")) op_->doc = std::string(trim(*s));
  }
  if (auto n = entry["family"]) {
    if (auto s = scalar(n, "family")) {
      op_->family = *s;
      const std::string stem = std::filesystem::path(file_).stem().string();
      if (std::filesystem::path(file_).extension() == ".yaml" && stem != *s)
        error(n, fmt::format("family '{}' does not match its file ({}.yaml): an op lives in the "
                             "file of its family",
                             *s, stem));
    }
  }
  if (auto n = entry["status"]) {
    if (auto s = scalar(n, "status")) {
      if (*s == "implemented")
        op_->status = OpStatus::implemented;
      else if (*s == "spec-only")
        op_->status = OpStatus::spec_only;
      else
        error(n, fmt::format("status: expected implemented or spec-only, found '{}'", *s));
    }
  }
  if (auto n = entry["kernels"]) {
    if (!n.IsSequence())
      error(n, "kernels: expected a list of kernel names");
    else
      for (const auto& k : n)
        if (auto s = scalar(k, "kernels")) op_->kernels.push_back(*s);
  }
  if (auto n = entry["types"]) compile_types(n);
  const YAML::Node sig = entry["signature"];
  if (sig && expect_map(sig, "signature")) {
    check_keys(sig, "signature", kSignatureKeys, key_list(kSignatureKeys));
    if (auto n = sig["forall"]) compile_forall(n);
    if (auto n = sig["params"]) compile_params(n);
    // Declare both tensor groups before compiling shapes so they can refer to each other.
    if (auto n = sig["inputs"])
      compile_tensors(n, true);
    else
      error(sig, "signature: missing 'inputs'");
    if (auto n = sig["outputs"]) compile_tensors(n, false);
    if (auto n = sig["constraints"]) compile_constraints(n);
    check_closure(sig);
    if (op_->dim_names.size() > kMaxVars || op_->dim_list_names.size() > kMaxVars ||
        op_->dtype_vars.size() > kMaxVars || op_->params.size() > kMaxParams ||
        op_->inputs.size() + op_->outputs.size() > kMaxTensors)
      error(sig, fmt::format("signature: too many declarations (at most {} variables of each kind, "
                             "{} params, {} tensors)",
                             kMaxVars, kMaxParams, kMaxTensors));
  }
  if (auto n = entry["roofline"]) compile_roofline(n);
  if (auto n = entry["workloads"]) compile_rows(n, "workloads", op_->workloads);
  if (auto n = entry["cases"]) compile_rows(n, "cases", op_->cases);
  if (auto n = entry["reference"]) compile_reference(n);
  if (auto n = entry["tolerance"]) compile_tolerance(n);
  return errors_ ? nullptr : op_;
}

// ---- documents ------------------------------------------------------------------------------

namespace {

// (line, column) of the first byte that does not belong to well-formed UTF-8, if any.
std::optional<std::pair<int, int>> first_invalid_utf8(std::string_view text) {
  int line = 1, col = 1;
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    size_t len = c < 0x80           ? 1
                 : (c >> 5) == 0x6  ? 2
                 : (c >> 4) == 0xE  ? 3
                 : (c >> 3) == 0x1E ? 4
                                    : 0;
    bool ok = len != 0 && i + len <= text.size() && !(len == 2 && c < 0xC2);
    for (size_t k = 1; ok && k < len; ++k) ok = (static_cast<unsigned char>(text[i + k]) >> 6) == 2;
    if (!ok) return std::make_pair(line, col);
    if (c == '\n') line += 1, col = 0;
    i += len;
    col += 1;
  }
  return std::nullopt;
}

}  // namespace

void load_document(std::string_view text, const std::string& file, Manifest& out,
                   std::vector<Diagnostic>& diags, std::map<std::string, std::string>& seen) {
  if (auto bad = first_invalid_utf8(text)) {
    diags.push_back({file, bad->first, bad->second,
                     "not valid UTF-8 (spec files are UTF-8 text); the file was not read"});
    return;
  }
  YAML::Node root;
  try {
    root.reset(YAML::Load(std::string(text)));
  } catch (const YAML::Exception& e) {
    diags.push_back({file, e.mark.is_null() ? 1 : e.mark.line + 1,
                     e.mark.is_null() ? 1 : e.mark.column + 1, "invalid YAML: " + e.msg});
    return;
  }
  if (root.IsNull()) return;  // an empty family file holds no ops
  if (!root.IsMap()) {
    const YAML::Mark m = root.Mark();
    diags.push_back(
        {file, m.is_null() ? 1 : m.line + 1, m.is_null() ? 1 : m.column + 1,
         fmt::format("expected a map from op names to entries, found {}", node_kind(root))});
    return;
  }
  try {
    for (auto it = root.begin(); it != root.end(); ++it) {
      if (!it->first.IsScalar()) {
        const YAML::Mark m = it->first.Mark();
        diags.push_back({file, m.line + 1, m.column + 1, "an op name must be a plain string"});
        continue;
      }
      const std::string name = it->first.Scalar();
      const YAML::Mark m = it->first.Mark();
      const std::string where = fmt::format("{}:{}:{}", file, m.line + 1, m.column + 1);
      if (auto [pos, fresh] = seen.emplace(name, where); !fresh) {
        diags.push_back({file, m.line + 1, m.column + 1,
                         fmt::format("{}: declared again (first at {})", name, pos->second)});
        continue;
      }
      OpCompiler compiler(file, diags);
      if (auto model = compiler.compile(name, it->first, it->second))
        out.add(OpSpec(std::move(model)));
    }
  } catch (const YAML::Exception& e) {
    diags.push_back({file, e.mark.is_null() ? 1 : e.mark.line + 1,
                     e.mark.is_null() ? 1 : e.mark.column + 1, "malformed YAML: " + e.msg});
  }
}

Expected<Manifest> finish(Manifest manifest, std::vector<Diagnostic>& diags,
                          std::vector<Diagnostic>* out) {
  if (out) *out = diags;
  if (diags.empty()) return manifest;
  std::string msg;
  for (const auto& d : diags) msg += d.str() + "\n";
  msg.pop_back();
  return fail(Errc::parse, std::move(msg));
}

}  // namespace

// ---- OpSpec accessors -----------------------------------------------------------------------

const std::string& OpSpec::name() const {
  return model_->name;
}
const std::string& OpSpec::family() const {
  return model_->family;
}
const std::string& OpSpec::ref_api() const {
  return model_->ref_api;
}
OpStatus OpSpec::status() const {
  return model_->status;
}
const std::string& OpSpec::file() const {
  return model_->file;
}
int OpSpec::line() const {
  return model_->loc.line;
}
const std::vector<VarInfo>& OpSpec::vars() const {
  return model_->var_infos;
}
const std::vector<ParamInfo>& OpSpec::params() const {
  return model_->param_infos;
}
const std::vector<TensorInfo>& OpSpec::inputs() const {
  return model_->input_infos;
}
const std::vector<TensorInfo>& OpSpec::outputs() const {
  return model_->output_infos;
}
const std::vector<ConstraintInfo>& OpSpec::constraints() const {
  return model_->constraint_infos;
}
const RooflineInfo& OpSpec::roofline() const {
  return model_->roofline_info;
}
const std::vector<std::string>& OpSpec::kernels() const {
  return model_->kernels;
}
const std::string& OpSpec::doc() const {
  return model_->doc;
}
const std::string& OpSpec::reference() const {
  return model_->reference;
}
const std::vector<std::pair<DType, double>>& OpSpec::tolerance() const {
  return model_->tolerance;
}

int OpSpec::param_index(std::string_view name) const {
  for (size_t i = 0; i < model_->params.size(); ++i)
    if (model_->params[i].name == name) return static_cast<int>(i);
  return -1;
}

int OpSpec::input_index(std::string_view name) const {
  for (size_t i = 0; i < model_->inputs.size(); ++i)
    if (model_->inputs[i].name == name) return static_cast<int>(i);
  return -1;
}

std::string OpSpec::signature_text() const {
  std::string s = name();
  if (!vars().empty()) {
    s += '[';
    for (size_t i = 0; i < vars().size(); ++i)
      s += fmt::format("{}{}: {}", i ? ", " : "", vars()[i].name, vars()[i].kind);
    s += ']';
  }
  auto tensor = [](const TensorInfo& t) {
    return fmt::format("{}: {} {}{}{}", t.name, t.dtype, t.shape, t.optional ? "?" : "",
                       t.mutated ? " (mutated)" : "");
  };
  s += '(';
  bool first = true;
  for (const auto& t : inputs()) {
    s += (first ? "" : ", ") + tensor(t);
    first = false;
  }
  for (const auto& p : params()) {
    s += fmt::format("{}{}: {}{}", first ? "" : ", ", p.name, p.type,
                     p.default_value ? " = " + *p.default_value : "");
    first = false;
  }
  s += ") -> (";
  for (size_t i = 0; i < outputs().size(); ++i) s += (i ? ", " : "") + tensor(outputs()[i]);
  s += ')';
  return s;
}

const OpSpec* Manifest::find(std::string_view name) const {
  for (const auto& op : ops_)
    if (op.name() == name) return &op;
  return nullptr;
}

Expected<Manifest> load_manifest_text(std::string_view text, std::string_view file_name,
                                      std::vector<Diagnostic>* diagnostics) {
  Manifest manifest;
  std::vector<Diagnostic> diags;
  std::map<std::string, std::string> seen;
  load_document(text, std::string(file_name), manifest, diags, seen);
  return finish(std::move(manifest), diags, diagnostics);
}

Manifest load_manifest_partial(const std::filesystem::path& path, std::vector<Diagnostic>& diags) {
  Manifest manifest;
  std::error_code ec;
  std::vector<std::filesystem::path> files;
  if (std::filesystem::is_directory(path, ec)) {
    for (const auto& e : std::filesystem::directory_iterator(path, ec))
      if (e.is_regular_file() && e.path().extension() == ".yaml") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    if (files.empty()) diags.push_back({path.string(), 1, 1, "no .yaml spec files in this folder"});
  } else if (std::filesystem::is_regular_file(path, ec)) {
    files.push_back(path);
  } else {
    diags.push_back({path.string(), 1, 1, "no such spec file or folder"});
  }
  std::map<std::string, std::string> seen;
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    if (!in) {
      diags.push_back({f.string(), 1, 1, "cannot read the file"});
      continue;
    }
    std::stringstream buf;
    buf << in.rdbuf();
    load_document(buf.str(), f.string(), manifest, diags, seen);
  }
  return manifest;
}

Expected<Manifest> load_manifest(const std::filesystem::path& path,
                                 std::vector<Diagnostic>* diagnostics) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    return fail(Errc::not_found, fmt::format("{}: no such spec file or folder", path.string()));
  std::vector<Diagnostic> diags;
  Manifest manifest = load_manifest_partial(path, diags);
  return finish(std::move(manifest), diags, diagnostics);
}

std::filesystem::path default_manifest_dir() {
  if (const char* env = std::getenv("TILEOPS_SPECS")) return env;
#ifdef TS_SOURCE_DIR
  return std::filesystem::path(TS_SOURCE_DIR) / "specs";
#else
  return "specs";
#endif
}

}  // namespace ts::spec
