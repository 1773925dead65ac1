// Per-turn JSONL traces (TILESMITH_DEBUG=1 only). Internal.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ts/agent/secrets.hpp"

namespace ts::agent::detail {

/// Appends one JSON object per line to `path`. Every secret is replaced by "[redacted]" in the
/// serialized line before it touches the disk. A disabled writer does nothing.
class TraceWriter {
 public:
  TraceWriter() = default;
  TraceWriter(std::filesystem::path path, Secrets secrets);
  bool enabled() const { return !path_.empty(); }
  void append(const nlohmann::json& record);

 private:
  std::filesystem::path path_;
  Secrets secrets_;
};

/// `text` cut to `cap` bytes with a note of how much was cut.
std::string cut(std::string_view text, std::size_t cap);

}  // namespace ts::agent::detail
