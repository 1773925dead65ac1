#include "trace.hpp"

#include <fstream>

#include <fmt/format.h>

#include "prompts.hpp"
#include "ts/error.hpp"

namespace ts::agent::detail {

std::string_view prompt(std::string_view name) {
  for (const auto& [n, text] : embedded_prompts())
    if (n == name) return text;
  TS_CHECK(false, fmt::format("prompt '{}' is not in prompts/", name));
  return {};
}

std::string cut(std::string_view text, std::size_t cap) {
  if (text.size() <= cap) return std::string(text);
  return fmt::format("{}\n[... {} more bytes cut]", text.substr(0, cap), text.size() - cap);
}

std::string redact(std::string text, const std::vector<std::string>& secrets) {
  for (const auto& s : secrets) {
    if (s.empty()) continue;
    for (size_t pos = 0; (pos = text.find(s, pos)) != std::string::npos;)
      text.replace(pos, s.size(), "[redacted]");
  }
  return text;
}

TraceWriter::TraceWriter(std::filesystem::path path, std::vector<std::string> secrets)
    : path_(std::move(path)), secrets_(std::move(secrets)) {
  std::error_code ec;
  std::filesystem::create_directories(path_.parent_path(), ec);
}

void TraceWriter::append(const nlohmann::json& record) {
  if (!enabled()) return;
  std::string line =
      redact(record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), secrets_);
  std::ofstream out(path_, std::ios::app);
  out << line << '\n';  // a failed trace write never fails the run
}

}  // namespace ts::agent::detail
