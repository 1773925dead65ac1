#include "ts/agent/patch.hpp"

#include <charconv>
#include <optional>
#include <vector>

#include <fmt/format.h>

namespace ts::agent {

namespace {

struct Lines {
  std::vector<std::string_view> lines;
  bool final_newline = true;
};

Lines split_lines(std::string_view text) {
  Lines out;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) {
      out.lines.push_back(text.substr(start));
      out.final_newline = false;
      break;
    }
    out.lines.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  return out;
}

struct Hunk {
  size_t old_start = 0, old_count = 0, new_start = 0, new_count = 0;
  std::string header;
  std::vector<char> ops;  // ' ', '-', '+'
  std::vector<std::string_view> text;
  bool old_no_newline = false, new_no_newline = false;
};

// "@@ -l[,s] +l[,s] @@ optional section"
bool parse_range(std::string_view s, size_t& start, size_t& count) {
  auto comma = s.find(',');
  auto first = s.substr(0, comma);
  if (std::from_chars(first.data(), first.data() + first.size(), start).ec != std::errc())
    return false;
  count = 1;
  if (comma != std::string_view::npos) {
    auto second = s.substr(comma + 1);
    if (std::from_chars(second.data(), second.data() + second.size(), count).ec != std::errc())
      return false;
  }
  return true;
}

Expected<Hunk> parse_header(std::string_view line) {
  Hunk h;
  h.header = std::string(line);
  auto bad = [&] { return fail(Errc::parse, fmt::format("malformed hunk header '{}'", line)); };
  if (line.substr(0, 4) != "@@ -") return bad();
  auto space = line.find(' ', 4);
  if (space == std::string_view::npos || line.substr(space, 2) != " +") return bad();
  auto end = line.find(" @@", space + 2);
  if (end == std::string_view::npos) return bad();
  if (!parse_range(line.substr(4, space - 4), h.old_start, h.old_count) ||
      !parse_range(line.substr(space + 2, end - space - 2), h.new_start, h.new_count))
    return bad();
  return h;
}

bool matches_at(const std::vector<std::string_view>& lines, size_t at, const Hunk& h) {
  size_t i = at;
  for (size_t k = 0; k < h.ops.size(); ++k) {
    if (h.ops[k] == '+') continue;
    if (i >= lines.size() || lines[i] != h.text[k]) return false;
    ++i;
  }
  return true;
}

}  // namespace

Expected<std::string> apply_unified_diff(std::string_view original, std::string_view diff) {
  Lines src = split_lines(original);
  Lines patch = split_lines(diff);

  std::vector<Hunk> hunks;
  for (size_t i = 0; i < patch.lines.size(); ++i) {
    std::string_view line = patch.lines[i];
    if (line.substr(0, 2) == "@@") {
      auto h = parse_header(line);
      if (!h) return tl::unexpected(h.error());
      hunks.push_back(std::move(*h));
      continue;
    }
    if (hunks.empty()) continue;  // "diff --git", "---", "+++", "index" preamble
    Hunk& h = hunks.back();
    size_t old_seen = 0, new_seen = 0;
    for (char op : h.ops) old_seen += op != '+', new_seen += op != '-';
    bool complete = old_seen == h.old_count && new_seen == h.new_count;
    if (line.substr(0, 1) == "\\") {  // "\ No newline at end of file" marks the previous line
      if (!h.ops.empty() && h.ops.back() != '+') h.old_no_newline = true;
      if (!h.ops.empty() && h.ops.back() != '-') h.new_no_newline = true;
      continue;
    }
    if (complete) {
      if (line.substr(0, 4) == "--- " || line.substr(0, 4) == "+++ " ||
          line.substr(0, 4) == "diff" || line.substr(0, 5) == "index" || line.empty())
        continue;  // the next file's preamble or trailing blank line
      return fail(Errc::parse,
                  fmt::format("diff line {}: '{:.60}' follows hunk '{}', which already "
                              "has its {} old and {} new lines",
                              i + 1, line, h.header, h.old_count, h.new_count));
    }
    char op = line.empty() ? ' ' : line[0];  // some tools drop the space of an empty context line
    if (op != ' ' && op != '-' && op != '+')
      return fail(Errc::parse, fmt::format("diff line {}: '{:.60}' is not a context (' '), removed "
                                           "('-') or added ('+') line of hunk '{}'",
                                           i + 1, line, h.header));
    h.ops.push_back(op);
    h.text.push_back(line.empty() ? line : line.substr(1));
  }
  if (hunks.empty()) return fail(Errc::parse, "the diff has no hunks (no '@@ -a,b +c,d @@' line)");

  std::vector<std::string_view> out;
  size_t cursor = 0;  // next source line not yet copied
  bool final_newline = src.final_newline;
  for (size_t n = 0; n < hunks.size(); ++n) {
    const Hunk& h = hunks[n];
    size_t old_seen = 0, new_seen = 0;
    for (char op : h.ops) old_seen += op != '+', new_seen += op != '-';
    if (old_seen != h.old_count || new_seen != h.new_count)
      return fail(Errc::parse,
                  fmt::format("hunk {} '{}' is truncated: it has {} old and {} new "
                              "lines, its header says {} and {}",
                              n + 1, h.header, old_seen, new_seen, h.old_count, h.new_count));
    // Stated position (1-based; a zero count means "after line old_start").
    size_t stated = h.old_count == 0 ? h.old_start : (h.old_start ? h.old_start - 1 : 0);
    std::optional<size_t> at;
    for (size_t d = 0; !at; ++d) {  // nearest exact match, stated position first
      bool up_ok = stated + d <= src.lines.size();
      bool down_ok = d <= stated && stated - d >= cursor;
      if (!up_ok && !down_ok) break;
      if (up_ok && stated + d >= cursor && matches_at(src.lines, stated + d, h))
        at = stated + d;
      else if (d && down_ok && matches_at(src.lines, stated - d, h))
        at = stated - d;
    }
    if (!at) {
      // Name the first line that differs at the stated position.
      size_t i = stated;
      for (size_t k = 0; k < h.ops.size(); ++k) {
        if (h.ops[k] == '+') continue;
        if (i >= src.lines.size())
          return fail(Errc::invalid_argument,
                      fmt::format("hunk {} '{}' does not apply: it expects line {} to be '{:.80}' "
                                  "but the file has only {} lines",
                                  n + 1, h.header, i + 1, h.text[k], src.lines.size()));
        if (src.lines[i] != h.text[k])
          return fail(
              Errc::invalid_argument,
              fmt::format("hunk {} '{}' does not apply: line {} is '{:.80}' but the hunk "
                          "expects '{:.80}' (and the hunk matches nowhere else after line {})",
                          n + 1, h.header, i + 1, src.lines[i], h.text[k], cursor));
        ++i;
      }
      return fail(Errc::invalid_argument,
                  fmt::format("hunk {} '{}' overlaps an earlier hunk", n + 1, h.header));
    }
    out.insert(out.end(), src.lines.begin() + long(cursor), src.lines.begin() + long(*at));
    size_t i = *at;
    for (size_t k = 0; k < h.ops.size(); ++k) {
      if (h.ops[k] != '-') out.push_back(h.text[k]);
      if (h.ops[k] != '+') ++i;
    }
    cursor = i;
    if (cursor == src.lines.size()) final_newline = !h.new_no_newline;
  }
  out.insert(out.end(), src.lines.begin() + long(cursor), src.lines.end());

  std::string result;
  for (size_t i = 0; i < out.size(); ++i) {
    result += out[i];
    if (i + 1 < out.size() || final_newline) result += '\n';
  }
  return result;
}

}  // namespace ts::agent
