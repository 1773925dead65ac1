#include "ts/agent/structure.hpp"

#include "search_internal.hpp"

#include <algorithm>
#include <cctype>
#include <optional>
#include <vector>

#include <fmt/format.h>

namespace ts::agent {

const char* agency_name(Agency a) noexcept {
  switch (a) {
    case Agency::low:
      return "low";
    case Agency::medium:
      return "medium";
    case Agency::high:
      return "high";
  }
  return "medium";
}

Expected<Agency> parse_agency(std::string_view s) {
  if (s == "low") return Agency::low;
  if (s == "medium") return Agency::medium;
  if (s == "high") return Agency::high;
  return fail(Errc::invalid_argument,
              fmt::format("agency must be low, medium or high, not '{}'", s));
}

namespace {

using detail::code_part;
using detail::indent_of;
using detail::trim;

// Empties every triple-quoted string ('''...''' or """..."""): kernel sources live there.
std::string mask_triple_quoted(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    if (i + 2 < text.size() && (text[i] == '\'' || text[i] == '"') && text[i + 1] == text[i] &&
        text[i + 2] == text[i]) {
      std::string_view quote = text.substr(i, 3);
      size_t end = text.find(quote, i + 3);
      if (end == std::string_view::npos) end = text.size() - 3;  // unterminated: mask the rest
      out += quote;
      out += "...";
      out += quote;
      // Keep line count stable so line numbers in messages stay those of the real file.
      for (size_t k = i + 3; k < end; ++k)
        if (text[k] == '\n') out += '\n';
      i = end + 3;
      continue;
    }
    out += text[i++];
  }
  return out;
}

struct Line {
  size_t number;  // 1-based, in the file
  std::string_view text;
};

std::vector<Line> split(std::string_view text) {
  std::vector<Line> out;
  size_t start = 0, n = 1;
  while (start <= text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) nl = text.size();
    out.push_back({n++, text.substr(start, nl - start)});
    start = nl + 1;
  }
  return out;
}

// Index range [begin, end) of the lines of `def call(...)`'s body; nullopt without one.
struct CallBody {
  size_t def_line, begin, end;
};
std::optional<CallBody> find_call(const std::vector<Line>& lines) {
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string_view t = trim(lines[i].text);
    if (t.substr(0, 9) != "def call(") continue;
    size_t base = indent_of(lines[i].text);
    size_t j = i + 1;
    for (; j < lines.size(); ++j) {
      std::string_view tj = trim(lines[j].text);
      if (tj.empty() || tj[0] == '#') continue;
      if (indent_of(lines[j].text) <= base) break;
    }
    while (j > i + 1 && trim(lines[j - 1].text).empty()) --j;
    return CallBody{i, i + 1, j};
  }
  return std::nullopt;
}

// `<ident>.run(` ... matching `)` inside the call body become `<ident>.run(...)`.
std::string mask_launch_args(std::string_view body) {
  std::string out;
  size_t i = 0;
  while (i < body.size()) {
    size_t hit = body.find(".run(", i);
    if (hit == std::string_view::npos || hit == 0 ||
        !(std::isalnum(static_cast<unsigned char>(body[hit - 1])) || body[hit - 1] == '_')) {
      size_t stop = hit == std::string_view::npos ? body.size() : hit + 5;
      out.append(body.substr(i, stop - i));
      i = stop;
      continue;
    }
    out.append(body.substr(i, hit + 5 - i));
    size_t depth = 1, k = hit + 5;
    char quote = 0;
    for (; k < body.size() && depth; ++k) {
      char c = body[k];
      if (quote) {
        if (c == '\\')
          ++k;
        else if (c == quote)
          quote = 0;
      } else if (c == '\'' || c == '"')
        quote = c;
      else if (c == '(')
        ++depth;
      else if (c == ')')
        --depth;
    }
    out += "...)";
    // Keep newlines so line numbers survive a multi-line launch.
    for (size_t m = hit + 5; m < k; ++m)
      if (body[m] == '\n') out += '\n';
    i = k;
  }
  return out;
}

// Non-blank, non-comment lines, comments and trailing spaces removed.
std::vector<Line> skeleton(std::string_view text) {
  std::vector<Line> out;
  for (const Line& l : split(text)) {
    std::string_view t = code_part(l.text);
    while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back()))) t.remove_suffix(1);
    if (!trim(t).empty()) out.push_back({l.number, t});
  }
  return out;
}

// The wrapper with kernel bodies and launch arguments masked, as skeleton lines. The backing
// string is returned so the views stay valid.
struct Masked {
  std::string text;
  std::vector<Line> lines;
};
Masked masked_skeleton(std::string_view source) {
  Masked m;
  std::string no_kernels = mask_triple_quoted(source);
  auto lines = split(no_kernels);
  auto call = find_call(lines);
  if (call && call->begin < call->end) {
    size_t from = size_t(lines[call->begin].text.data() - no_kernels.data());
    const Line& last = lines[call->end - 1];
    size_t to = size_t(last.text.data() - no_kernels.data()) + last.text.size();
    m.text = no_kernels.substr(0, from) +
             mask_launch_args(std::string_view(no_kernels).substr(from, to - from)) +
             no_kernels.substr(to);
  } else {
    m.text = std::move(no_kernels);
  }
  m.lines = skeleton(m.text);
  return m;
}

// Elements of the last top-level `return (...)` / `return a, b` in the call body.
std::optional<size_t> return_arity(const std::vector<Line>& lines, const CallBody& call) {
  for (size_t i = call.end; i-- > call.begin;) {
    std::string_view t = trim(code_part(lines[i].text));
    if (t.substr(0, 7) != "return " && t != "return") continue;
    std::string expr(trim(t.substr(6)));
    for (size_t j = i + 1; j < call.end && std::count(expr.begin(), expr.end(), '(') >
                                               std::count(expr.begin(), expr.end(), ')');
         ++j)
      expr += trim(code_part(lines[j].text));
    if (expr.empty()) return 0;
    std::string_view e = expr;
    bool parenthesized = e.front() == '(' && e.back() == ')';
    if (parenthesized) e = trim(e.substr(1, e.size() - 2));
    size_t elements = 0, depth = 0;
    bool in_element = false;
    for (char c : e) {
      if (c == '(' || c == '[' || c == '{') ++depth;
      if (c == ')' || c == ']' || c == '}') --depth;
      if (c == ',' && depth == 0) {
        if (in_element) ++elements;
        in_element = false;
      } else if (!std::isspace(static_cast<unsigned char>(c))) {
        in_element = true;
      }
    }
    if (in_element) ++elements;
    return elements;
  }
  return std::nullopt;
}

std::optional<std::string_view> unpack_line(const std::vector<Line>& lines, const CallBody& call) {
  for (size_t i = call.begin; i < call.end; ++i) {
    std::string_view t = trim(code_part(lines[i].text));
    if (t.size() > 7 && t.substr(t.size() - 7) == " = args") return t;
  }
  return std::nullopt;
}

bool has_args_clear(const std::vector<Line>& lines, const CallBody& call) {
  for (size_t i = call.begin; i < call.end; ++i)
    if (trim(code_part(lines[i].text)) == "args.clear()") return true;
  return false;
}

}  // namespace

Expected<void> check_wrapper_abi(std::string_view original, std::string_view candidate) {
  std::string orig_masked = mask_triple_quoted(original);
  std::string cand_masked = mask_triple_quoted(candidate);
  auto orig_lines = split(orig_masked);
  auto cand_lines = split(cand_masked);
  auto orig_call = find_call(orig_lines);
  if (!orig_call) return {};  // not an Inductor wrapper: no callable ABI to keep
  auto cand_call = find_call(cand_lines);
  auto rejected = [](std::string msg) { return fail(Errc::rejected, "ABI: " + msg); };
  if (!cand_call)
    return rejected("the candidate has no `def call(...)`; keep the original entry point");
  auto orig_def = trim(orig_lines[orig_call->def_line].text);
  auto cand_def = trim(cand_lines[cand_call->def_line].text);
  if (orig_def != cand_def)
    return rejected(fmt::format("the entry point changed: '{}' (line {}) must stay '{}'", cand_def,
                                cand_lines[cand_call->def_line].number, orig_def));
  if (auto unpack = unpack_line(orig_lines, *orig_call)) {
    auto cand_unpack = unpack_line(cand_lines, *cand_call);
    if (!cand_unpack || *cand_unpack != *unpack)
      return rejected(fmt::format("the inputs must be unpacked exactly as '{}' (found '{}')",
                                  *unpack, cand_unpack ? *cand_unpack : "nothing"));
  }
  if (has_args_clear(orig_lines, *orig_call) && !has_args_clear(cand_lines, *cand_call))
    return rejected("`args.clear()` was removed; call must consume its argument list");
  auto orig_arity = return_arity(orig_lines, *orig_call);
  auto cand_arity = return_arity(cand_lines, *cand_call);
  if (orig_arity && cand_arity != orig_arity)
    return rejected(fmt::format("call must return {} values in the original order (found {})",
                                *orig_arity, cand_arity ? fmt::to_string(*cand_arity) : "none"));
  return {};
}

Expected<void> check_wrapper_structure(std::string_view original, std::string_view candidate) {
  Masked a = masked_skeleton(original);
  Masked b = masked_skeleton(candidate);
  size_t n = std::min(a.lines.size(), b.lines.size());
  for (size_t i = 0; i < n; ++i) {
    if (a.lines[i].text == b.lines[i].text) continue;
    return fail(Errc::rejected,
                fmt::format("agency=low: the wrapper structure changed at candidate line {}: "
                            "'{:.100}' where the original (line {}) has '{:.100}'; only kernel "
                            "bodies and launch arguments may change",
                            b.lines[i].number, trim(b.lines[i].text), a.lines[i].number,
                            trim(a.lines[i].text)));
  }
  if (a.lines.size() != b.lines.size()) {
    bool extra = b.lines.size() > a.lines.size();
    const Line& l = extra ? b.lines[n] : a.lines[n];
    return fail(Errc::rejected,
                fmt::format("agency=low: the candidate {} line '{:.100}' ({} line {}); only "
                            "kernel bodies and launch arguments may change",
                            extra ? "adds the" : "drops the", trim(l.text),
                            extra ? "candidate" : "original", l.number));
  }
  return {};
}

Expected<void> check_candidate(Agency agency, std::string_view original,
                               std::string_view candidate) {
  if (auto abi = check_wrapper_abi(original, candidate); !abi) return abi;
  if (agency == Agency::low) return check_wrapper_structure(original, candidate);
  return {};
}

}  // namespace ts::agent
