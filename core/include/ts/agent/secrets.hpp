// The secrets this process knows, so that no text it hands out (to a model, a profile, a trace, a
// log) carries one. A candidate's exception message or a tool's output can quote anything the
// code behind it could read; every such text passes through redact() on its way out.
//
//   auto secrets = ts::agent::Secrets::from(ts::agent::process_env());
//   secrets.add(provider.api_key);
//   send(secrets.redact(tool_output));
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "ts/agent/provider.hpp"

namespace ts::agent {

class Secrets {
 public:
  /// Values of environment variables whose names say they hold a secret (…KEY, …TOKEN,
  /// …SECRET, …PASSWORD, …CREDENTIAL(S), …AUTH), and every string value in the model-login
  /// files (the cliproxyapi auth directory: TILESMITH_CLIPROXYAPI_AUTH_DIR, else
  /// $HOME/.cli-proxy-api). Values shorter than kMinLength are ignored: they would redact
  /// ordinary words and cannot be credentials.
  static Secrets from(const EnvMap& env);

  static constexpr std::size_t kMinLength = 8;

  void add(std::string value);
  /// Every occurrence of every secret replaced by "[redacted]".
  std::string redact(std::string text) const;
  const std::vector<std::string>& values() const { return values_; }

 private:
  void add_login_dir(const std::filesystem::path& dir);
  std::vector<std::string> values_;  // longest first, so a secret inside another is not split
};

}  // namespace ts::agent
