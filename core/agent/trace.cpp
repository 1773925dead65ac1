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

TraceWriter::TraceWriter(std::filesystem::path path, Secrets secrets)
    : path_(std::move(path)), secrets_(std::move(secrets)) {
  std::error_code ec;
  std::filesystem::create_directories(path_.parent_path(), ec);
}

void TraceWriter::append(const nlohmann::json& record) {
  if (!enabled()) return;
  std::string line =
      secrets_.redact(record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  std::ofstream out(path_, std::ios::app);
  out << line << '\n';  // a failed trace write never fails the run
}

}  // namespace ts::agent::detail
