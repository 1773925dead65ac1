// The search agent's rewrites: text transformations of an Inductor CUDA wrapper (torch 2.11).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "search_internal.hpp"
#include "ts/agent/search.hpp"

namespace ts::agent {

namespace detail {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) nl = text.size();
    out.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  return out;
}

size_t indent_of(std::string_view line) {
  size_t n = 0;
  while (n < line.size() && (line[n] == ' ' || line[n] == '\t')) ++n;
  return n;
}

namespace {

// Walks `s` from `from` outside string literals and calls visit(i, c, depth) for each character
// there, `depth` being the bracket depth after it; visit returns false to stop the walk.
template <class Visit>
void walk_code(std::string_view s, size_t from, Visit visit) {
  int depth = 0;
  char quote = 0;
  for (size_t i = from; i < s.size(); ++i) {
    char c = s[i];
    if (quote) {
      if (c == '\\')
        ++i;
      else if (c == quote)
        quote = 0;
      continue;
    }
    if (c == '\'' || c == '"') {
      quote = c;
      continue;
    }
    if (c == '(' || c == '[' || c == '{')
      ++depth;
    else if (c == ')' || c == ']' || c == '}')
      --depth;
    if (!visit(i, c, depth)) return;
  }
}

}  // namespace

std::string_view code_part(std::string_view line) {
  size_t end = line.size();
  walk_code(line, 0, [&](size_t i, char c, int) {
    if (c != '#') return true;
    end = i;
    return false;
  });
  return line.substr(0, end);
}

std::vector<std::string_view> split_top_level(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  walk_code(s, 0, [&](size_t i, char c, int depth) {
    if (c == sep && depth == 0) {
      out.push_back(trim(s.substr(start, i - start)));
      start = i + 1;
    }
    return true;
  });
  if (auto last = trim(s.substr(start)); !last.empty() || !out.empty()) out.push_back(last);
  while (!out.empty() && out.back().empty()) out.pop_back();
  return out;
}

std::optional<size_t> matching_paren(std::string_view s, size_t open) {
  std::optional<size_t> close;
  walk_code(s, open, [&](size_t i, char c, int depth) {
    if (depth != 0 || !(c == ')' || c == ']' || c == '}')) return true;
    close = i;
    return false;
  });
  return close;
}

bool is_identifier(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

// The tensor an argument expression names: `buf3`, or the base of `reinterpret_tensor(buf3, ...)`.
std::string_view root_name(std::string_view expr) {
  expr = trim(expr);
  if (auto eq = expr.find('=');
      eq != std::string_view::npos && is_identifier(trim(expr.substr(0, eq))))
    expr = trim(expr.substr(eq + 1));  // keyword argument
  for (std::string_view wrap : {"reinterpret_tensor(", "torch.as_strided(", "as_strided("}) {
    if (starts_with(expr, wrap)) {
      auto inner = expr.substr(wrap.size());
      auto parts = split_top_level(inner.substr(0, inner.size() - 1), ',');
      return parts.empty() ? std::string_view() : root_name(parts[0]);
    }
  }
  if (auto dot = expr.find('.');
      dot != std::string_view::npos && is_identifier(expr.substr(0, dot)))
    return expr.substr(0, dot);  // buf3.view(...), buf3.as_strided(...)
  return is_identifier(expr) ? expr : std::string_view();
}

std::vector<KernelSource> find_kernels(std::string_view text) {
  std::vector<KernelSource> out;
  const std::string_view marker = "async_compile.triton('";
  size_t pos = 0;
  while ((pos = text.find(marker, pos)) != std::string_view::npos) {
    size_t name_begin = pos + marker.size();
    size_t name_end = text.find('\'', name_begin);
    if (name_end == std::string_view::npos) break;
    size_t open = text.find("'''", name_end);
    if (open == std::string_view::npos) break;
    size_t close = text.find("'''", open + 3);
    if (close == std::string_view::npos) break;
    KernelSource k;
    k.name = std::string(text.substr(name_begin, name_end - name_begin));
    k.body_begin = open + 3;
    k.body_end = close;
    std::string_view body = text.substr(k.body_begin, k.body_end - k.body_begin);
    std::string def = "def " + k.name + "(";
    if (auto d = body.find(def); d != std::string_view::npos) {
      size_t open_paren = d + def.size() - 1;
      if (auto end = matching_paren(body, open_paren)) {
        for (auto p : split_top_level(body.substr(open_paren + 1, *end - open_paren - 1), ',')) {
          auto colon = p.find(':');
          k.params.emplace_back(trim(colon == std::string_view::npos ? p : p.substr(0, colon)));
        }
      }
    }
    for (std::string_view h : {"pointwise", "reduction", "persistent_reduction"}) {
      if (body.find("@triton_heuristics." + std::string(h) + "(") != std::string_view::npos)
        k.heuristic = std::string(h);
    }
    out.push_back(std::move(k));
    pos = close + 3;
  }
  return out;
}

Expected<CallSite> find_call_site(std::string_view text) {
  auto lines = split_lines(text);
  CallSite site;
  std::optional<size_t> def;
  for (size_t i = 0; i < lines.size(); ++i) {
    auto t = trim(lines[i]);
    if (starts_with(t, "def call(")) {
      def = i;
      break;
    }
  }
  if (!def) return fail(Errc::parse, "the wrapper has no `def call(...)`");
  site.def_line = *def;
  site.def_indent = std::string(lines[*def].substr(0, indent_of(lines[*def])));
  auto def_text = trim(lines[*def]);
  if (def_text == "def call(self, args):")
    site.is_method = true;
  else if (def_text != "def call(args):")
    return fail(Errc::parse, fmt::format("unexpected entry point '{}'", def_text));
  size_t base = indent_of(lines[*def]);
  size_t j = *def + 1;
  for (; j < lines.size(); ++j) {
    auto tj = trim(lines[j]);
    if (tj.empty() || tj[0] == '#') continue;
    if (indent_of(lines[j]) <= base) break;
  }
  while (j > *def + 1 && trim(lines[j - 1]).empty()) --j;
  site.body_begin = *def + 1;
  site.body_end = j;
  if (site.body_begin >= site.body_end) return fail(Errc::parse, "call() has an empty body");
  site.body_indent =
      std::string(lines[site.body_begin].substr(0, indent_of(lines[site.body_begin])));
  const size_t body_indent = site.body_indent.size();
  bool seen_with = false;
  for (size_t i = site.body_begin; i < site.body_end; ++i) {
    auto code = trim(code_part(lines[i]));
    if (code.empty()) continue;
    size_t ind = indent_of(lines[i]);
    if (ind == body_indent) {
      if (!site.unpack_line && code.size() > 7 && code.substr(code.size() - 7) == " = args") {
        site.unpack_line = i;
        for (auto name : split_top_level(code.substr(0, code.size() - 7), ','))
          if (!name.empty()) site.inputs.emplace_back(name);
      } else if (code == "args.clear()") {
        site.clear_line = i;
      } else if (!seen_with && (starts_with(code, "assert_size_stride(") ||
                                starts_with(code, "assert_alignment("))) {
        site.assert_lines.push_back(i);
      } else if (starts_with(code, "with ")) {
        seen_with = true;
      } else if (starts_with(code, "return")) {
        site.return_line = i;
      }
    }
  }
  if (!site.return_line) return fail(Errc::parse, "call() has no top-level return");
  auto ret = trim(code_part(lines[*site.return_line])).substr(6);
  ret = trim(ret);
  if (!ret.empty() && ret.front() == '(' && ret.back() == ')') ret = ret.substr(1, ret.size() - 2);
  for (auto e : split_top_level(ret, ',')) site.returns.emplace_back(e);
  return site;
}

WorkFacts work_facts(std::string_view text) {
  WorkFacts f;
  if (auto site = find_call_site(text)) {
    auto lines = split_lines(text);
    for (size_t i = site->body_begin; i < site->body_end; ++i) {
      auto code = code_part(lines[i]);
      if (code.find("extern_kernels.") != std::string_view::npos ||
          code.find("aten.") != std::string_view::npos)
        f.library_calls = true;
    }
  }
  auto number_after = [](std::string_view body, std::string_view key) -> long long {
    size_t p = body.find(key);
    if (p == std::string_view::npos) return 1;
    long long v = 0;
    for (size_t i = p + key.size();
         i < body.size() && std::isdigit(static_cast<unsigned char>(body[i])); ++i)
      v = v * 10 + (body[i] - '0');
    return v > 0 ? v : 1;
  };
  for (const auto& k : find_kernels(text)) {
    auto body = text.substr(k.body_begin, k.body_end - k.body_begin);
    long long n = number_after(body, "    xnumel = ") * number_after(body, "    r0_numel = ");
    f.largest_kernel = std::max(f.largest_kernel, n);
  }
  return f;
}

namespace {

// Inputs the launch sequence may write: donated buffers reused as outputs (`buf1 = mm; del mm
// # reuse`), `out=` targets, kernel arguments bound to out_ptr/in_out_ptr parameters and
// in-place method or op calls, followed through aliases (`x = input`, reinterpret_tensor).
std::vector<int> written_inputs(const std::vector<std::string_view>& lines, const CallSite& site,
                                const std::vector<KernelSource>& kernels) {
  std::map<std::string, int, std::less<>> alias;
  for (size_t i = 0; i < site.inputs.size(); ++i) alias[site.inputs[i]] = int(i);
  std::map<std::string, const KernelSource*, std::less<>> by_name;
  for (const auto& k : kernels) by_name[k.name] = &k;
  std::set<int> written;
  auto mark = [&](std::string_view expr) {
    auto root = root_name(expr);
    if (auto it = alias.find(root); !root.empty() && it != alias.end()) written.insert(it->second);
  };
  for (size_t i = site.body_begin; i < site.body_end; ++i) {
    std::string_view full = lines[i];
    bool reuse = full.find("# reuse") != std::string_view::npos;
    for (auto stmt : split_top_level(code_part(full), ';')) {
      if (stmt.empty()) continue;
      // assignment: `x = <rhs>` with a plain name on the left
      if (auto eq = stmt.find(" = "); eq != std::string_view::npos) {
        auto lhs = trim(stmt.substr(0, eq));
        auto rhs = trim(stmt.substr(eq + 3));
        if (is_identifier(lhs)) {
          auto root = root_name(rhs);
          bool is_alias = !root.empty() && (rhs == root || starts_with(rhs, "reinterpret_tensor("));
          if (auto it = alias.find(root); is_alias && it != alias.end()) {
            alias[std::string(lhs)] = it->second;
            if (reuse) written.insert(it->second);
          }
        }
      }
      // out= targets
      for (size_t p = 0; (p = stmt.find("out=", p)) != std::string_view::npos; p += 4) {
        if (p > 0 && (std::isalnum(static_cast<unsigned char>(stmt[p - 1])) || stmt[p - 1] == '_'))
          continue;
        auto rest = stmt.substr(p + 4);
        auto parts = split_top_level(rest, ',');
        if (!parts.empty()) {
          auto target = parts[0];
          if (auto close = target.find(')');
              close != std::string_view::npos && target.find('(') == std::string_view::npos)
            target = target.substr(0, close);
          mark(target);
        }
      }
      // kernel launches: `name.run(args...)`
      if (auto run = stmt.find(".run("); run != std::string_view::npos) {
        auto kname = trim(stmt.substr(0, run));
        if (auto eq = kname.rfind(' '); eq != std::string_view::npos) kname = kname.substr(eq + 1);
        if (auto close = matching_paren(stmt, run + 4)) {
          auto args = split_top_level(stmt.substr(run + 5, *close - run - 5), ',');
          auto k = by_name.find(kname);
          for (size_t a = 0; a < args.size(); ++a) {
            bool out_param = false;
            if (k != by_name.end() && a < k->second->params.size()) {
              const auto& pname = k->second->params[a];
              out_param = starts_with(pname, "out_ptr") || starts_with(pname, "in_out_ptr");
            } else if (k == by_name.end()) {
              out_param = true;  // an unknown kernel: assume it writes what it is given
            }
            if (out_param && args[a].find('=') == std::string_view::npos) mark(args[a]);
          }
        }
      }
      // in-place calls: `x.copy_(...)`, `aten.index_put_(x, ...)`, `torch.ops.aten.add_.Tensor(x`
      for (size_t p = 0; (p = stmt.find("_(", p)) != std::string_view::npos; ++p) {
        size_t b = p;
        while (b > 0 && (std::isalnum(static_cast<unsigned char>(stmt[b - 1])) ||
                         stmt[b - 1] == '_' || stmt[b - 1] == '.'))
          --b;
        auto callee = stmt.substr(b, p + 1 - b);
        if (callee.find("assert") != std::string_view::npos || starts_with(callee, "empty_strided"))
          continue;
        if (auto dot = callee.find('.'); dot != std::string_view::npos &&
                                         is_identifier(callee.substr(0, dot)) &&
                                         alias.count(callee.substr(0, dot))) {
          mark(callee.substr(0, dot));  // method on an alias
          continue;
        }
        if (auto close = matching_paren(stmt, p + 1)) {
          auto args = split_top_level(stmt.substr(p + 2, *close - p - 2), ',');
          if (!args.empty()) mark(args[0]);
        }
      }
      // `torch.ops.aten.foo_.default(x, ...)`: in-place overloads
      for (size_t p = 0; (p = stmt.find("_.", p)) != std::string_view::npos; ++p) {
        auto open = stmt.find('(', p);
        if (open == std::string_view::npos) break;
        auto between = stmt.substr(p + 2, open - p - 2);
        if (!is_identifier(between)) continue;
        if (auto close = matching_paren(stmt, open)) {
          auto args = split_top_level(stmt.substr(open + 1, *close - open - 1), ',');
          if (!args.empty()) mark(args[0]);
        }
      }
    }
  }
  return {written.begin(), written.end()};
}

bool contains_word(std::string_view text, std::string_view word) {
  for (size_t p = 0; (p = text.find(word, p)) != std::string_view::npos; p += word.size()) {
    bool left =
        p == 0 || !(std::isalnum(static_cast<unsigned char>(text[p - 1])) || text[p - 1] == '_');
    size_t e = p + word.size();
    bool right =
        e >= text.size() || !(std::isalnum(static_cast<unsigned char>(text[e])) || text[e] == '_');
    if (left && right) return true;
  }
  return false;
}

// Why a CUDA graph capture of this call() would not be equivalent; empty when it is safe.
std::string cuda_graph_blocker(std::string_view text, const std::vector<std::string_view>& lines,
                               const CallSite& site, const std::vector<KernelSource>& kernels) {
  if (text.find("_TsGraphedCall") != std::string_view::npos)
    return "call() already replays a CUDA graph";
  if (site.is_method && text.find("Runner(partitions=[])") == std::string_view::npos)
    return "the wrapper has graph partitions (Inductor's own cudagraph wrapping)";
  if (!site.clear_line) return "call() does not clear its argument list";
  std::string code;
  for (size_t i = site.body_begin; i < site.body_end; ++i) {
    code += code_part(lines[i]);
    code += '\n';
  }
  struct Pattern {
    std::string_view needle;
    const char* why;
  };
  static const Pattern kPatterns[] = {
      {"randint", "it draws random seeds (aten.randint) whose draws a replay would repeat"},
      {"seed", "it draws random seeds whose draws a replay would repeat"},
      {"philox", "it uses philox RNG state"},
      {"rand(", "it draws random numbers"},
      {"randn(", "it draws random numbers"},
      {"rand_like", "it draws random numbers"},
      {"bernoulli", "it draws random numbers (bernoulli)"},
      {"dropout", "it draws random numbers (dropout)"},
      {"normal_", "it draws random numbers"},
      {"uniform_", "it draws random numbers"},
      {"exponential_", "it draws random numbers"},
      {"multinomial", "it draws random numbers"},
      {".item()", "it syncs with the host (.item())"},
      {".cpu()", "it copies to the host"},
      {".tolist()", "it syncs with the host (.tolist())"},
      {".numpy(", "it syncs with the host"},
      {"synchronize", "it synchronizes the device"},
      {"_local_scalar_dense", "it reads a device scalar on the host"},
      {"empty_strided_cpu", "it allocates CPU tensors"},
      {"device='cpu'", "it uses CPU tensors"},
      {"device(type='cpu'", "it uses CPU tensors"},
      {"pin_memory", "it uses pinned host memory"},
      {"nonzero", "its output shapes depend on data (nonzero)"},
      {"masked_select", "its output shapes depend on data"},
      {"unique", "its output shapes depend on data"},
      {"torch.cuda.Stream", "it uses its own streams"},
      {"torch.cuda.stream(", "it switches streams"},
      {"wait_stream", "it uses several streams"},
      {"record_stream", "it uses several streams"},
      {"Event(", "it records events"},
      {"_c10d", "it runs collectives"},
      {"all_reduce", "it runs collectives"},
      {"CUDAGraph", "it already uses CUDA graphs"},
  };
  for (const auto& p : kPatterns)
    if (code.find(p.needle) != std::string::npos) return fmt::format("call(): {}", p.why);
  for (const auto& k : kernels) {
    std::string_view body = text.substr(k.body_begin, k.body_end - k.body_begin);
    if (body.find("tl.rand") != std::string_view::npos || contains_word(body, "load_seed"))
      return fmt::format("kernel {} draws random numbers", k.name);
  }
  // One device only: every _DeviceGuard / get_raw_stream names the same index.
  std::set<std::string> devices;
  for (std::string_view call : {"_DeviceGuard(", "get_raw_stream("}) {
    for (size_t p = 0; (p = code.find(call, p)) != std::string::npos; p += call.size()) {
      size_t b = p + call.size();
      size_t e = code.find(')', b);
      if (e != std::string::npos) devices.insert(code.substr(b, e - b));
    }
  }
  if (devices.size() > 1) return "call() uses more than one device";
  return {};
}

// ---- epilogue: what an in-place elementwise kernel computes ------------------------------------
//
// Inductor writes an elementwise kernel as one load, a chain of `tmpN = <expr>` and one store.
// For a kernel that loads and stores only in_out_ptr0 at x0, the chain is evaluated here on
// sample points (the forms Inductor emits: tl.full constants, + - * /, .to() casts, libdevice
// erf/tanh, triton_helpers maximum/minimum); anything else is not a plain activation.
using Value = std::optional<double>;

struct ElementwiseChain {
  std::map<std::string, std::string, std::less<>> defs;  // tmpN -> expression
  std::string result;                                    // the stored tmp
};

std::optional<ElementwiseChain> inplace_chain(std::string_view text, const KernelSource& k) {
  if (k.heuristic != "pointwise" || k.params.size() != 3 || k.params[0] != "in_out_ptr0" ||
      k.params[1] != "xnumel" || k.params[2] != "XBLOCK")
    return std::nullopt;
  std::string_view body = text.substr(k.body_begin, k.body_end - k.body_begin);
  auto def = body.find("def " + k.name + "(");
  if (def == std::string_view::npos) return std::nullopt;
  ElementwiseChain chain;
  bool indexed = false;
  int loads = 0, stores = 0;
  auto lines = split_lines(body.substr(def));
  for (size_t i = 1; i < lines.size(); ++i) {
    auto code = trim(code_part(lines[i]));
    if (code.empty()) continue;
    if (starts_with(code, "xnumel = ") || starts_with(code, "xoffset = ") ||
        starts_with(code, "xindex = ") || starts_with(code, "xmask = "))
      continue;
    if (code == "x0 = xindex") {
      indexed = true;
      continue;
    }
    if (starts_with(code, "tl.store(in_out_ptr0 + (x0), ")) {
      auto args = split_top_level(code.substr(9, code.size() - 10), ',');
      if (args.size() < 2 || code.back() != ')') return std::nullopt;
      chain.result = std::string(args[1]);
      ++stores;
      continue;
    }
    auto eq = code.find(" = ");
    if (eq == std::string_view::npos || !starts_with(code, "tmp")) return std::nullopt;
    auto rhs = code.substr(eq + 3);
    if (rhs.find("tl.load(") != std::string_view::npos) {
      if (!starts_with(rhs, "tl.load(in_out_ptr0 + (x0), ")) return std::nullopt;
      ++loads;
    }
    chain.defs.emplace(std::string(code.substr(0, eq)), std::string(rhs));
  }
  if (!indexed || loads != 1 || stores != 1 || !chain.defs.count(chain.result)) return std::nullopt;
  return chain;
}

Value evaluate(const ElementwiseChain& chain, std::string_view expr, double x, int depth = 0) {
  if (depth > 64) return std::nullopt;
  expr = trim(expr);
  // Casts: `<e>.to(tl.float32)`; precision is not what tells the activations apart.
  while (expr.size() > 2 && expr.back() == ')') {
    auto to = expr.rfind(".to(");
    if (to == std::string_view::npos || matching_paren(expr, to + 3) != expr.size() - 1) break;
    expr = trim(expr.substr(0, to));
  }
  if (starts_with(expr, "tl.load(")) return x;
  if (auto d = chain.defs.find(expr); d != chain.defs.end())
    return evaluate(chain, d->second, x, depth + 1);
  auto call_args = [&](std::string_view name) -> std::optional<std::vector<std::string_view>> {
    if (!starts_with(expr, name) || expr.back() != ')') return std::nullopt;
    if (matching_paren(expr, name.size() - 1) != expr.size() - 1) return std::nullopt;
    return split_top_level(expr.substr(name.size(), expr.size() - name.size() - 1), ',');
  };
  if (auto a = call_args("tl.full("); a && a->size() == 3) {
    std::string c(trim((*a)[1]));
    char* end = nullptr;
    double v = std::strtod(c.c_str(), &end);
    if (end == c.c_str() || *end != '\0') return std::nullopt;
    return v;
  }
  for (auto [name, fn] : {std::pair{"libdevice.erf(", +[](double v) { return std::erf(v); }},
                          std::pair{"libdevice.tanh(", +[](double v) { return std::tanh(v); }}}) {
    if (auto a = call_args(name); a && a->size() == 1) {
      auto v = evaluate(chain, (*a)[0], x, depth + 1);
      return v ? Value(fn(*v)) : std::nullopt;
    }
  }
  for (auto [name, pick_max] :
       {std::pair{"triton_helpers.maximum(", true}, std::pair{"triton_helpers.minimum(", false}}) {
    if (auto a = call_args(name); a && a->size() == 2) {
      auto u = evaluate(chain, (*a)[0], x, depth + 1), v = evaluate(chain, (*a)[1], x, depth + 1);
      if (!u || !v) return std::nullopt;
      return pick_max ? std::max(*u, *v) : std::min(*u, *v);
    }
  }
  if (starts_with(expr, "-") && is_identifier(expr.substr(1))) {
    auto v = evaluate(chain, expr.substr(1), x, depth + 1);
    return v ? Value(-*v) : std::nullopt;
  }
  for (char op : {'+', '-', '*', '/'}) {  // `tmpA <op> tmpB`, as Inductor writes binary ops
    const std::string sep = fmt::format(" {} ", op);
    auto at = expr.find(sep);
    if (at == std::string_view::npos) continue;
    auto lhs = trim(expr.substr(0, at)), rhs = trim(expr.substr(at + 3));
    if (!is_identifier(lhs) || !is_identifier(rhs)) return std::nullopt;
    auto u = evaluate(chain, lhs, x, depth + 1), v = evaluate(chain, rhs, x, depth + 1);
    if (!u || !v) return std::nullopt;
    switch (op) {
      case '+':
        return *u + *v;
      case '-':
        return *u - *v;
      case '*':
        return *u * *v;
      default:
        return *v == 0 ? std::nullopt : Value(*u / *v);
    }
  }
  return std::nullopt;
}

enum class Activation { none, relu, gelu_tanh, gelu_erf };

// Which activation kernel `k` applies in place to its one buffer, if that is all it does.
Activation inplace_activation(std::string_view text, const KernelSource& k) {
  auto chain = inplace_chain(text, k);
  if (!chain) return Activation::none;
  const double kSqrt2OverPi = 0.7978845608028654;
  auto relu = [](double v) { return std::max(v, 0.0); };
  auto gelu_tanh = [&](double v) {
    return 0.5 * v * (1.0 + std::tanh(kSqrt2OverPi * (v + 0.044715 * v * v * v)));
  };
  auto gelu_erf = [](double v) { return 0.5 * v * (1.0 + std::erf(v * 0.7071067811865476)); };
  bool is_relu = true, is_tanh = true, is_erf = true;
  for (double x : {-4.0, -1.5, -0.3, 0.0, 0.2, 0.9, 3.1}) {
    auto y = evaluate(*chain, chain->result, x);
    if (!y) return Activation::none;
    auto near = [&](double want) { return std::abs(*y - want) <= 1e-6 * (1.0 + std::abs(want)); };
    is_relu = is_relu && near(relu(x));
    is_tanh = is_tanh && near(gelu_tanh(x));
    is_erf = is_erf && near(gelu_erf(x));
  }
  return is_relu   ? Activation::relu
         : is_tanh ? Activation::gelu_tanh
         : is_erf  ? Activation::gelu_erf
                   : Activation::none;
}

// Sizes and strides of `buf = empty_strided_cuda((..), (..), dtype)` in call()'s body, when
// the buffer is contiguous row-major: its element count, else nullopt.
// The arguments (sizes, strides, dtype) of `buf = empty_strided_cuda(...)` in call()'s body.
std::optional<std::vector<std::string_view>> allocation_args(
    const std::vector<std::string_view>& lines, const CallSite& site, std::string_view buf) {
  const std::string head = std::string(buf) + " = empty_strided_cuda(";
  for (size_t i = site.body_begin; i < site.body_end; ++i) {
    auto code = trim(code_part(lines[i]));
    if (!starts_with(code, head)) continue;
    auto args = split_top_level(code.substr(head.size(), code.size() - head.size() - 1), ',');
    if (args.size() != 3) return std::nullopt;
    return args;
  }
  return std::nullopt;
}

std::optional<long long> contiguous_numel(const std::vector<std::string_view>& lines,
                                          const CallSite& site, std::string_view buf) {
  if (auto args = allocation_args(lines, site, buf)) {
    auto ints = [](std::string_view tuple) -> std::optional<std::vector<long long>> {
      tuple = trim(tuple);
      if (tuple.size() < 2 || tuple.front() != '(' || tuple.back() != ')') return std::nullopt;
      std::vector<long long> out;
      for (auto e : split_top_level(tuple.substr(1, tuple.size() - 2), ',')) {
        std::string v(e);
        char* end = nullptr;
        long long n = std::strtoll(v.c_str(), &end, 10);
        if (v.empty() || *end != '\0') return std::nullopt;
        out.push_back(n);
      }
      return out;
    };
    auto sizes = ints((*args)[0]), strides = ints((*args)[1]);
    if (!sizes || !strides || sizes->size() != strides->size()) return std::nullopt;
    long long numel = 1;
    for (size_t d = sizes->size(); d-- > 0;) {
      if ((*strides)[d] != numel && (*sizes)[d] != 1) return std::nullopt;
      numel *= (*sizes)[d];
    }
    return numel;
  }
  return std::nullopt;
}

// The wrapper with call()'s definition replaced by `call`, and `helper` (module-level code the
// new call() uses) placed before the class holding call(), or before call() itself.
std::string splice_call(std::string_view wrapper, const std::vector<std::string_view>& lines,
                        const CallSite& site, std::string_view helper, std::string_view call) {
  size_t insert_at = site.def_line;
  if (site.is_method) {
    for (size_t i = site.def_line; i-- > 0;) {
      if (indent_of(lines[i]) == 0 && starts_with(lines[i], "class ")) {
        insert_at = i;
        break;
      }
    }
  }
  std::string out;
  out.reserve(wrapper.size() + helper.size() + call.size());
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i == insert_at) out += helper;
    if (i == site.def_line) {
      out += call;
      i = site.body_end - 1;
      continue;
    }
    out += lines[i];
    out += '\n';
  }
  if (!wrapper.empty() && wrapper.back() != '\n') out.pop_back();
  return out;
}

}  // namespace

}  // namespace detail

Expected<CallFacts> analyze_wrapper(std::string_view wrapper) {
  auto site = detail::find_call_site(wrapper);
  if (!site) return tl::unexpected(site.error());
  auto lines = detail::split_lines(wrapper);
  auto kernels = detail::find_kernels(wrapper);
  CallFacts facts;
  facts.is_method = site->is_method;
  facts.inputs = site->inputs;
  facts.written_inputs = detail::written_inputs(lines, *site, kernels);
  facts.outputs = site->returns.size();
  for (const auto& k : kernels) facts.kernels.push_back(k.name);
  facts.cuda_graph_blocker = detail::cuda_graph_blocker(wrapper, lines, *site, kernels);
  return facts;
}

Expected<std::string> rewrite_cuda_graph(std::string_view wrapper) {
  auto site = detail::find_call_site(wrapper);
  if (!site) return tl::unexpected(site.error());
  auto lines = detail::split_lines(wrapper);
  auto kernels = detail::find_kernels(wrapper);
  if (auto why = detail::cuda_graph_blocker(wrapper, lines, *site, kernels); !why.empty())
    return fail(Errc::rejected, "cuda_graph: not safe: " + why);
  auto written = detail::written_inputs(lines, *site, kernels);

  const std::string& I = site->def_indent;
  const std::string& J = site->body_indent;
  std::string self_prefix = site->is_method ? "self." : "";
  std::string inputs_list;
  for (size_t i = 0; i < site->inputs.size(); ++i) inputs_list += (i ? ", " : "") + site->inputs[i];

  // The new entry point: same def, unpack, clear and input checks; then the graph dispatch.
  std::string call;
  call += std::string(lines[site->def_line]) + "\n";
  if (site->unpack_line) call += std::string(lines[*site->unpack_line]) + "\n";
  call += J + "args.clear()\n";
  for (size_t a : site->assert_lines) call += std::string(lines[a]) + "\n";
  call += J + "_ts_args = [" + inputs_list + "]\n";
  if (!site->inputs.empty()) call += J + "del " + inputs_list + "\n";
  call += J + "_ts_out = _ts_graphed_call(" + self_prefix + "_ts_call_eager, _ts_args)\n";
  call += J + "return (";
  for (size_t i = 0; i < site->returns.size(); ++i) call += fmt::format("_ts_out[{}], ", i);
  call += ")\n\n";
  // The original launch sequence, verbatim, as the eager path.
  call +=
      I + (site->is_method ? "def _ts_call_eager(self, args):\n" : "def _ts_call_eager(args):\n");
  for (size_t i = site->body_begin; i < site->body_end; ++i) call += std::string(lines[i]) + "\n";

  std::string written_tuple = "(";
  for (int w : written) written_tuple += fmt::format("{}, ", w);
  written_tuple += ")";
  std::string runtime =
      std::string(detail::embedded_cuda_graph_runtime()) +
      fmt::format("\n_ts_graphed_call = _TsGraphedCall(written_inputs={})\n\n", written_tuple);

  return detail::splice_call(wrapper, lines, *site, runtime, call);
}

Expected<std::string> rewrite_autotune(std::string_view wrapper, std::uint64_t seed) {
  auto kernels = detail::find_kernels(wrapper);
  std::string out;
  size_t copied = 0;
  int widened = 0;
  for (const auto& k : kernels) {
    if (k.heuristic.empty()) continue;
    std::string_view body = wrapper.substr(k.body_begin, k.body_end - k.body_begin);
    if (body.find("_ts_widened") != std::string_view::npos) continue;
    std::string decorator = "@triton_heuristics." + k.heuristic + "(";
    size_t at = body.find(decorator);
    if (at == std::string_view::npos) continue;
    // Where the helper goes: after the kernel module's imports (set_driver_to_gpu()).
    size_t helper_at = body.find("triton_helpers.set_driver_to_gpu()\n");
    if (helper_at == std::string_view::npos || helper_at > at) continue;
    helper_at += std::string_view("triton_helpers.set_driver_to_gpu()\n").size();

    auto numel_of = [&](std::string_view var) -> std::string {
      std::string key = "    " + std::string(var) + " = ";
      size_t p = body.find(key);
      if (p == std::string_view::npos) return "None";
      size_t b = p + key.size(), e = body.find('\n', b);
      auto value = detail::trim(body.substr(b, e - b));
      bool digits = !value.empty() && std::all_of(value.begin(), value.end(), [](char c) {
        return std::isdigit(static_cast<unsigned char>(c));
      });
      return digits ? std::string(value) : "None";
    };
    bool x_masked = body.find("xmask = xindex < xnumel") != std::string_view::npos ||
                    body.find("xmask = (xindex < xnumel)") != std::string_view::npos;
    bool has_x = body.find("xnumel") != std::string_view::npos;
    bool r_looped = body.find("for r0_offset in") != std::string_view::npos;
    const char* type = k.heuristic == "pointwise"   ? "POINTWISE"
                       : k.heuristic == "reduction" ? "REDUCTION"
                                                    : "PERSISTENT_REDUCTION";
    std::string facts = fmt::format(
        "@_ts_widened(triton_heuristics.{}, '{}', x_numel={}, x_masked={}, r_numel={}, "
        "r_looped={}, seed={})(",
        k.heuristic, type, has_x ? numel_of("xnumel") : "None", x_masked ? "True" : "False",
        numel_of("r0_numel"), r_looped ? "True" : "False", seed % 9973);

    out += wrapper.substr(copied, k.body_begin + helper_at - copied);
    out += "\n";
    out += detail::embedded_autotune_helper();
    out += "\n";
    out += body.substr(helper_at, at - helper_at);
    out += facts;
    copied = k.body_begin + at + decorator.size();
    ++widened;
  }
  if (widened == 0)
    return fail(Errc::rejected, "autotune: no Triton kernel with pointwise/reduction heuristics");
  out += wrapper.substr(copied);
  return out;
}

Expected<std::string> rewrite_epilogue(std::string_view wrapper) {
  using detail::Activation;
  auto site = detail::find_call_site(wrapper);
  if (!site) return tl::unexpected(site.error());
  auto lines = detail::split_lines(wrapper);
  std::map<std::string, Activation, std::less<>> activation;
  for (const auto& k : detail::find_kernels(wrapper))
    if (auto a = detail::inplace_activation(wrapper, k); a != Activation::none)
      activation[k.name] = a;

  std::map<size_t, std::string> replaced;  // line -> new text
  bool erf_seen = false;
  for (size_t i = site->body_begin; i < site->body_end; ++i) {
    auto code = detail::trim(detail::code_part(lines[i]));
    const std::string_view head = "extern_kernels.addmm(";
    if (!detail::starts_with(code, head) || code.back() != ')' ||
        detail::matching_paren(code, head.size() - 1) != code.size() - 1)
      continue;
    auto args =
        detail::split_top_level(code.substr(head.size(), code.size() - head.size() - 1), ',');
    if (args.size() != 6 || !detail::starts_with(args[3], "alpha=") ||
        !detail::starts_with(args[4], "beta=") || !detail::starts_with(args[5], "out="))
      continue;
    std::string_view out = args[5].substr(4);
    if (!detail::is_identifier(out)) continue;
    // Follow the buffer to the next thing done with it: only renames (`buf1 = buf0; del buf0
    // # reuse`), other buffers' dels and stream lookups may stand between.
    std::string current(out);
    for (size_t j = i + 1; j < site->body_end; ++j) {
      auto next = detail::trim(detail::code_part(lines[j]));
      if (next.empty() || (detail::starts_with(next, "stream") &&
                           next.find(" = get_raw_stream(") != std::string_view::npos))
        continue;
      if (detail::starts_with(next, "del ")) {
        if (detail::trim(next.substr(4)) == current) break;
        continue;
      }
      auto stmts = detail::split_top_level(next, ';');
      if (stmts.size() == 2 && stmts[1] == "del " + current) {
        auto eq = stmts[0].find(" = ");
        if (eq != std::string_view::npos && detail::trim(stmts[0].substr(eq + 3)) == current) {
          current = std::string(detail::trim(stmts[0].substr(0, eq)));
          continue;
        }
      }
      auto run = next.find(".run(");
      if (run == std::string_view::npos) break;
      auto kernel = activation.find(next.substr(0, run));
      auto run_args = detail::split_top_level(next.substr(run + 5, next.size() - run - 6), ',');
      if (kernel == activation.end() || run_args.size() != 3 || run_args[0] != current ||
          !detail::starts_with(run_args[2], "stream="))
        break;
      auto numel = detail::contiguous_numel(lines, *site, out);
      if (!numel || std::to_string(*numel) != run_args[1]) break;
      if (kernel->second == Activation::gelu_erf) {
        erf_seen = true;  // cuBLASLt's GELU epilogue is the tanh approximation: not this one
        break;
      }
      const std::string indent(lines[i].substr(0, detail::indent_of(lines[i])));
      const bool gelu = kernel->second == Activation::gelu_tanh;
      replaced[i] = fmt::format(
          "{0}# ---- tilesmith-search: epilogue fusion (matmul + bias + {1} in one cuBLASLt "
          "call)\n{0}torch.ops.aten._addmm_activation.out({2}, {3}, {4}, {5}, {6}, "
          "use_gelu={7}, out={8})",
          indent, gelu ? "tanh-GELU" : "ReLU", args[0], args[1], args[2], args[4], args[3],
          gelu ? "True" : "False", out);
      replaced[j] = fmt::format("{}# {} fused into the addmm above", indent, kernel->first);
      break;
    }
  }
  if (replaced.empty())
    return fail(Errc::rejected,
                erf_seen ? "epilogue: the activation after the matmul is exact (erf) GELU; "
                           "cuBLASLt's GELU epilogue is the tanh approximation"
                         : "epilogue: no addmm whose output an in-place ReLU or tanh-GELU "
                           "kernel transforms next");
  std::string text;
  text.reserve(wrapper.size() + 256 * replaced.size());
  for (size_t i = 0; i < lines.size(); ++i) {
    auto r = replaced.find(i);
    text += r != replaced.end() ? std::string_view(r->second) : lines[i];
    text += '\n';
  }
  if (!wrapper.empty() && wrapper.back() != '\n') text.pop_back();
  return text;
}

Expected<std::string> rewrite_direct_launch(std::string_view wrapper) {
  auto site = detail::find_call_site(wrapper);
  if (!site) return tl::unexpected(site.error());
  auto lines = detail::split_lines(wrapper);
  // The kernels call() launches itself, in order of first launch: `name.run(` at a word start.
  std::vector<std::string> launched;
  auto launch_at = [](std::string_view line, const std::string& name) {
    std::string needle = name + ".run(";
    for (size_t at = line.find(needle); at != std::string_view::npos;
         at = line.find(needle, at + 1)) {
      if (at == 0 ||
          !(std::isalnum(static_cast<unsigned char>(line[at - 1])) || line[at - 1] == '_'))
        return at;
    }
    return std::string_view::npos;
  };
  auto kernels = detail::find_kernels(wrapper);
  for (size_t i = site->body_begin; i < site->body_end; ++i) {
    std::string_view code = detail::code_part(lines[i]);
    for (const auto& k : kernels)
      if (launch_at(code, k.name) != std::string_view::npos &&
          std::find(launched.begin(), launched.end(), k.name) == launched.end())
        launched.push_back(k.name);
  }
  if (launched.empty())
    return fail(Errc::rejected, "direct_launch: call() launches no Triton kernel");

  const std::string& I = site->def_indent;
  const std::string& J = site->body_indent;
  std::string self_prefix = site->is_method ? "self." : "";
  std::string kernel_tuple, launch_names;
  for (size_t i = 0; i < launched.size(); ++i) {
    kernel_tuple += launched[i] + ", ";
    launch_names += fmt::format("_ts_launch_{}, ", i);
  }
  // The entry point: the original until every kernel has one settled launcher, then the same
  // lines with each `name.run(` calling that launcher.
  std::string call;
  call += std::string(lines[site->def_line]) + "\n";
  call += J + "global _ts_direct, _ts_direct_tries\n";
  call += J + "if _ts_direct is None or _ts_launch_observed():\n";
  call += J + "    _ts_out = " + self_prefix + "_ts_call_run(args)\n";
  call += J + "    if _ts_direct is None and _ts_direct_tries < 3:\n";
  call += J + "        _ts_direct_tries += 1\n";
  call += J + "        _ts_direct = _ts_direct_launchers((" + kernel_tuple + "))\n";
  call += J + "    return _ts_out\n";
  call += J + launch_names + "= _ts_direct\n";
  for (size_t i = site->body_begin; i < site->body_end; ++i) {
    std::string line(lines[i]);
    for (size_t k = 0; k < launched.size(); ++k) {
      std::string needle = launched[k] + ".run(";
      for (size_t at = launch_at(line, launched[k]); at != std::string::npos;
           at = launch_at(line, launched[k]))
        line.replace(at, needle.size(), fmt::format("_ts_launch_{}(", k));
    }
    call += line + "\n";
  }
  call += "\n";
  call += I + (site->is_method ? "def _ts_call_run(self, args):\n" : "def _ts_call_run(args):\n");
  for (size_t i = site->body_begin; i < site->body_end; ++i) call += std::string(lines[i]) + "\n";

  std::string helper = std::string(detail::embedded_direct_launch_helper()) +
                       "\n_ts_direct = None  # the launchers, once every kernel has one\n"
                       "_ts_direct_tries = 0\n\n\n";
  return detail::splice_call(wrapper, lines, *site, helper, call);
}

// ---- tileops: library calls and Inductor kernels replaced by TileOPs ops ----------------------
//
// What a Triton kernel computes is read from the comment Inductor writes above its definition
// ("Original ATen: [aten.native_layer_norm]" and the FX graph fragment, where eps is a literal);
// its launch arguments' roles from its parameter names (in_ptr*, out_ptr*, xnumel, r0_numel).
// The runtime helper (search/tileops_calls.py) checks every call against the op's spec and runs
// the original launch when TileOPs does not cover it.
namespace {

struct TileOpsKernel {
  std::string op;   // the helper's method: rms_norm | layer_norm | softmax | silu_and_mul
  std::string eps;  // the literal, for the norms
};

// The comment block right above `name = async_compile.triton(`.
std::vector<std::string_view> kernel_header(std::string_view wrapper, const std::string& name) {
  std::vector<std::string_view> out;
  auto at = wrapper.find("\n" + name + " = async_compile.triton(");
  if (at == std::string_view::npos) return out;
  auto before = detail::split_lines(wrapper.substr(0, at + 1));
  for (size_t i = before.size(); i-- > 0 && detail::starts_with(before[i], "#");)
    out.insert(out.begin(), before[i]);
  return out;
}

// The literal added to the value rsqrt is taken of (a norm's eps), from the FX fragment:
//   %rsqrt : ... = call_function[target=torch.ops.aten.rsqrt.default](args = (%add,), ...)
//   %add : ... = call_function[target=torch.ops.aten.add.Scalar](args = (%mean, 1e-06), ...)
std::optional<std::string> norm_eps(const std::vector<std::string_view>& header) {
  std::string operand;
  const std::string_view rsqrt = "aten.rsqrt.default](args = (%";
  for (auto line : header)
    if (auto p = line.find(rsqrt); p != std::string_view::npos) {
      auto rest = line.substr(p + rsqrt.size());
      operand = std::string(rest.substr(0, rest.find_first_of(",)")));
    }
  if (operand.empty()) return std::nullopt;
  for (auto line : header) {
    if (!detail::starts_with(detail::trim(line.substr(1)), "%" + operand + " :")) continue;
    auto add = line.find("aten.add.");
    auto args = line.find("](args = (", add);
    if (add == std::string_view::npos || args == std::string_view::npos) return std::nullopt;
    auto open = args + 9;
    auto close = detail::matching_paren(line, open);
    if (!close) return std::nullopt;
    auto parts = detail::split_top_level(line.substr(open + 1, *close - open - 1), ',');
    if (parts.size() != 2) return std::nullopt;
    std::string literal(parts[1]);
    char* end = nullptr;
    double v = std::strtod(literal.c_str(), &end);
    if (literal.empty() || *end != '\0' || !(v > 0.0)) return std::nullopt;
    return literal;
  }
  return std::nullopt;
}

// Which TileOPs op a Triton kernel computes, when its origins are exactly that op's.
std::optional<TileOpsKernel> tileops_kernel(std::string_view wrapper,
                                            const detail::KernelSource& k) {
  auto header = kernel_header(wrapper, k.name);
  std::set<std::string, std::less<>> origins;
  const std::string_view tag = "Original ATen: [";
  for (auto line : header)
    if (auto p = line.find(tag); p != std::string_view::npos) {
      auto rest = line.substr(p + tag.size());
      for (auto o : detail::split_top_level(rest.substr(0, rest.find(']')), ','))
        origins.emplace(detail::starts_with(o, "aten.") ? o.substr(5) : o);
    }
  // Views and casts move no values of their own (every pointer has one dtype, checked below).
  static const std::set<std::string, std::less<>> kNeutral = {
      "view",  "_unsafe_view", "reshape",          "squeeze", "unsqueeze",
      "slice", "split",        "split_with_sizes", "_to_copy"};
  std::set<std::string, std::less<>> core;
  for (const auto& o : origins)
    if (!kNeutral.count(o)) core.insert(o);
  using Set = std::set<std::string, std::less<>>;
  std::string op;
  const bool reduction = k.heuristic == "reduction" || k.heuristic == "persistent_reduction";
  if (reduction &&
      (core == Set{"_fused_rms_norm"} || core == Set{"pow", "mean", "add", "rsqrt", "mul"}))
    op = "rms_norm";
  else if (reduction && core == Set{"native_layer_norm"})
    op = "layer_norm";
  else if (reduction &&
           (core == Set{"_softmax"} || core == Set{"amax", "sub", "exp", "sum", "div"}))
    op = "softmax";
  else if (k.heuristic == "pointwise" && core == Set{"silu", "mul"})
    op = "silu_and_mul";
  else
    return std::nullopt;

  // Parameters: pointers in and one out, all of one floating dtype; the sizes; constexprs.
  std::string_view body = wrapper.substr(k.body_begin, k.body_end - k.body_begin);
  std::set<std::string, std::less<>> pointer_types;
  int ins = 0, outs = 0;
  for (const auto& p : k.params) {
    if (detail::starts_with(p, "in_ptr"))
      ++ins;
    else if (detail::starts_with(p, "out_ptr"))
      ++outs;
    else if (p == "xnumel" || p == "r0_numel" || p.find("BLOCK") != std::string::npos)
      continue;
    else
      return std::nullopt;  // in_out_ptr, symbolic sizes (ks0), workspaces
    auto at = body.find("'" + p + "': '");
    if (at == std::string_view::npos) return std::nullopt;
    auto ty = body.substr(at + p.size() + 5);
    pointer_types.emplace(ty.substr(0, ty.find('\'')));
  }
  const Set floats = {"*bf16", "*fp16", "*fp32"};
  if (outs != 1 || ins < 1 || pointer_types.size() != 1 || !floats.count(*pointer_types.begin()))
    return std::nullopt;
  if (op == "silu_and_mul" && ins != 1) return std::nullopt;  // gate and up in one tensor
  TileOpsKernel match{op, {}};
  if (op == "rms_norm" || op == "layer_norm") {
    auto eps = norm_eps(header);
    if (!eps) return std::nullopt;
    match.eps = *eps;
  }
  return match;
}

// The dtype of `buf = empty_strided_cuda(..., torch.<dtype>)` in call(), or "".
std::string buffer_dtype(const std::vector<std::string_view>& lines, const detail::CallSite& site,
                         std::string_view buf) {
  auto args = detail::allocation_args(lines, site, buf);
  return args ? std::string((*args)[2]) : std::string();
}

// `kernel.run(args, stream=S)` as a helper call, or nullopt when the launch is not one it takes.
std::optional<std::string> tileops_launch(std::string_view code, const detail::KernelSource& k,
                                          const TileOpsKernel& m) {
  auto run = code.find(".run(");
  auto close = detail::matching_paren(code, run + 4);
  if (!close || *close != code.size() - 1) return std::nullopt;
  auto args = detail::split_top_level(code.substr(run + 5, *close - run - 5), ',');
  if (args.empty() || !detail::starts_with(args.back(), "stream=")) return std::nullopt;
  std::string stream(args.back().substr(7));
  args.pop_back();
  if (args.size() > k.params.size()) return std::nullopt;
  std::string listed, ins, rows, n;
  int out = -1;
  for (size_t a = 0; a < args.size(); ++a) {
    if (args[a].find('=') != std::string_view::npos) return std::nullopt;
    listed += (a ? ", " : "") + std::string(args[a]);
    const auto& p = k.params[a];
    if (detail::starts_with(p, "in_ptr")) ins += fmt::format("{}, ", a);
    if (detail::starts_with(p, "out_ptr")) {
      // Only a buffer call() allocated: an input it writes stays with the original kernel.
      if (!detail::starts_with(detail::root_name(args[a]), "buf")) return std::nullopt;
      out = int(a);
    }
    if (p == "xnumel") rows = std::string(args[a]);
    if (p == "r0_numel") n = std::string(args[a]);
  }
  if (out < 0) return std::nullopt;
  std::string call = fmt::format("_ts_tileops.{}({}, [{}], {}, ins=({}), out={}", m.op, k.name,
                                 listed, stream, ins, out);
  if (m.op != "silu_and_mul") {
    if (rows.empty() || n.empty()) return std::nullopt;
    call += fmt::format(", rows={}, n={}", rows, n);
  }
  if (!m.eps.empty()) call += ", eps=" + m.eps;
  return call + ")";
}

// `X = torch.ops.aten._scaled_dot_product_<backend>_attention.default(args)` whose X is only
// ever indexed [0] (the output; no logsumexp kept for a backward), with call()'s assert of that
// output's size and stride: as the helper call producing that layout.
std::optional<std::string> tileops_attention(const std::vector<std::string_view>& lines,
                                             const detail::CallSite& site, size_t i,
                                             std::string_view code) {
  const std::string_view prefix = "torch.ops.aten._scaled_dot_product_";
  auto eq = code.find(" = ");
  if (eq == std::string_view::npos) return std::nullopt;
  auto lhs = detail::trim(code.substr(0, eq));
  auto rhs = detail::trim(code.substr(eq + 3));
  auto open = rhs.find('(');
  if (!detail::is_identifier(lhs) || !detail::starts_with(rhs, prefix) ||
      open == std::string_view::npos || detail::matching_paren(rhs, open) != rhs.size() - 1)
    return std::nullopt;
  auto op = rhs.substr(0, open);
  if (op != "torch.ops.aten._scaled_dot_product_flash_attention.default" &&
      op != "torch.ops.aten._scaled_dot_product_cudnn_attention.default" &&
      op != "torch.ops.aten._scaled_dot_product_efficient_attention.default")
    return std::nullopt;
  std::string out;  // `Y = X[0]`
  const std::string indexed = std::string(lhs) + "[0]";
  for (size_t j = i + 1; j < site.body_end; ++j) {
    for (auto stmt : detail::split_top_level(detail::code_part(lines[j]), ';')) {
      if (!detail::contains_word(stmt, lhs)) continue;
      if (stmt == "del " + std::string(lhs)) continue;
      auto e = stmt.find(" = ");
      if (e == std::string_view::npos || detail::trim(stmt.substr(e + 3)) != indexed ||
          !out.empty())
        return std::nullopt;
      out = std::string(detail::trim(stmt.substr(0, e)));
    }
  }
  if (out.empty()) return std::nullopt;
  const std::string_view call_head = "assert_size_stride(";
  const std::string head = std::string(call_head) + out + ", ";
  for (size_t j = i + 1; j < site.body_end; ++j) {
    auto c = detail::trim(detail::code_part(lines[j]));
    if (!detail::starts_with(c, head)) continue;
    auto args =
        detail::split_top_level(c.substr(call_head.size(), c.size() - call_head.size() - 1), ',');
    if (args.size() < 3) return std::nullopt;
    return fmt::format("{} = _ts_tileops.attention({}, {}, {}, {})", lhs, args[1], args[2], op,
                       rhs.substr(open + 1, rhs.size() - open - 2));
  }
  return std::nullopt;
}

}  // namespace

Expected<std::string> rewrite_tileops(std::string_view wrapper) {
  auto site = detail::find_call_site(wrapper);
  if (!site) return tl::unexpected(site.error());
  auto lines = detail::split_lines(wrapper);
  auto kernels = detail::find_kernels(wrapper);
  std::map<std::string, std::pair<const detail::KernelSource*, TileOpsKernel>, std::less<>> covered;
  for (const auto& k : kernels)
    if (auto m = tileops_kernel(wrapper, k)) covered[k.name] = {&k, *m};

  std::map<size_t, std::string> replaced;  // line -> new code (indent added below)
  for (size_t i = site->body_begin; i < site->body_end; ++i) {
    auto code = detail::trim(detail::code_part(lines[i]));
    std::optional<std::string> call;
    if (const std::string_view mm = "extern_kernels.mm(";
        detail::starts_with(code, mm) &&
        detail::matching_paren(code, mm.size() - 1) == code.size() - 1) {
      auto args = detail::split_top_level(code.substr(mm.size(), code.size() - mm.size() - 1), ',');
      auto dtype = args.size() == 3 && detail::starts_with(args[2], "out=")
                       ? buffer_dtype(lines, *site, args[2].substr(4))
                       : std::string();
      if (dtype == "torch.bfloat16" || dtype == "torch.float16")  // the GEMM's dtypes
        call = fmt::format("_ts_tileops.mm({}, {}, {})", args[0], args[1], args[2]);
    } else if (auto run = code.find(".run("); run != std::string_view::npos) {
      if (auto k = covered.find(code.substr(0, run)); k != covered.end())
        call = tileops_launch(code, *k->second.first, k->second.second);
    } else {
      call = tileops_attention(lines, *site, i, code);
    }
    if (call) replaced[i] = *call;
  }
  if (replaced.empty())
    return fail(Errc::rejected,
                "tileops: no bf16/fp16 matrix product, forward SDPA attention, or Triton kernel "
                "that is exactly an RMSNorm, LayerNorm, softmax or SiLU-and-mul for TileOPs");

  std::string call;
  for (size_t i = site->def_line; i < site->body_end; ++i) {
    if (auto r = replaced.find(i); r != replaced.end()) {
      call += std::string(lines[i].substr(0, detail::indent_of(lines[i]))) + r->second + "\n";
    } else {
      call += std::string(lines[i]) + "\n";
    }
  }
  std::string helper = std::string(detail::embedded_tileops_calls()) + "\n\n";
  return detail::splice_call(wrapper, lines, *site, helper, call);
}

// ---- the rewrite table: adding a kind is one enum value and one row here ----------------------

const std::vector<RewriteInfo>& rewrite_table() {
  static const std::vector<RewriteInfo> table = {
      {RewriteKind::cuda_graph, "cuda_graph", "# ---- tilesmith-search: CUDA graph replay",
       "capture call()'s launch sequence in a CUDA graph and replay it (inputs checked by "
       "address or copied in, outputs fresh each call, the original kept as fallback)",
       false, false, [](std::string_view w, std::uint64_t) { return rewrite_cuda_graph(w); }},
      {RewriteKind::autotune, "autotune", "# ---- tilesmith-search: wider autotuning",
       "autotune every Triton kernel over Inductor's configs plus warp/block variants", true, false,
       [](std::string_view w, std::uint64_t seed) { return rewrite_autotune(w, seed); }},
      {RewriteKind::epilogue, "epilogue", "# ---- tilesmith-search: epilogue fusion",
       "fuse each matmul + bias + ReLU/tanh-GELU into one cuBLASLt call (its epilogue)", false,
       true, [](std::string_view w, std::uint64_t) { return rewrite_epilogue(w); }},
      {RewriteKind::direct_launch, "direct_launch",
       "# ---- tilesmith-search: direct Triton launches",
       "launch each Triton kernel through its one compiled launcher, skipping "
       "CachingAutotuner.run's per-launch checks (the original kept for the first call)",
       false, false, [](std::string_view w, std::uint64_t) { return rewrite_direct_launch(w); }},
      {RewriteKind::tileops, "tileops", "# ---- tilesmith-search: TileOPs calls",
       "compute matrix products, SDPA attention, RMSNorm, LayerNorm, softmax and SiLU-and-mul "
       "with this project's TileOPs ops, into Inductor's buffers (each call the op's spec does "
       "not cover runs the original)",
       false, true, [](std::string_view w, std::uint64_t) { return rewrite_tileops(w); }},
  };
  return table;
}

const RewriteInfo& rewrite_info(RewriteKind kind) {
  for (const auto& r : rewrite_table())
    if (r.kind == kind) return r;
  TS_CHECK(false, "a RewriteKind without a row in the rewrite table");
  return rewrite_table().front();
}

const char* rewrite_kind_name(RewriteKind kind) noexcept {
  for (const auto& r : rewrite_table())
    if (r.kind == kind) return r.name;
  return "unknown";
}

bool structure_preserving(RewriteKind kind) noexcept {
  for (const auto& r : rewrite_table())
    if (r.kind == kind) return r.structure_preserving;
  return false;
}

Expected<std::string> apply_rewrites(std::string_view wrapper,
                                     const std::vector<RewriteKind>& kinds, std::uint64_t seed) {
  std::string text(wrapper);
  for (RewriteKind kind : kinds) {
    auto next = rewrite_info(kind).apply(text, seed);
    if (!next) return next;
    text = std::move(*next);
  }
  return text;
}

}  // namespace ts::agent
