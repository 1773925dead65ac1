#include "ts/agent/secrets.hpp"

#include <algorithm>
#include <fstream>
#include <regex>
#include <sstream>

#include <nlohmann/json.hpp>

namespace ts::agent {

namespace {

bool names_a_secret(std::string_view name) {
  static const std::regex pattern(R"((KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?|AUTH)$)",
                                  std::regex::icase);
  return std::regex_search(std::string(name), pattern);
}

void collect_strings(const nlohmann::json& j, std::vector<std::string>& out) {
  if (j.is_string()) {
    out.push_back(j.get<std::string>());
  } else if (j.is_structured()) {
    for (const auto& v : j) collect_strings(v, out);
  }
}

}  // namespace

Secrets Secrets::from(const EnvMap& env) {
  Secrets s;
  for (const auto& [name, value] : env)
    if (names_a_secret(name)) s.add(value);
  std::filesystem::path dir;
  if (auto it = env.find("TILESMITH_CLIPROXYAPI_AUTH_DIR"); it != env.end() && !it->second.empty())
    dir = it->second;
  else if (auto home = env.find("HOME"); home != env.end() && !home->second.empty())
    dir = std::filesystem::path(home->second) / ".cli-proxy-api";
  if (!dir.empty()) s.add_login_dir(dir);
  return s;
}

void Secrets::add_login_dir(const std::filesystem::path& dir) {
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator(dir, ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    if (!it->is_regular_file(ec) || it->file_size(ec) > (1u << 20)) continue;
    std::ifstream in(it->path());
    std::stringstream text;
    text << in.rdbuf();
    std::vector<std::string> strings;
    auto doc = nlohmann::json::parse(text.str(), nullptr, false);
    if (doc.is_discarded()) {
      add(text.str());  // not JSON: the whole file is the secret
      continue;
    }
    collect_strings(doc, strings);
    for (auto& v : strings) add(std::move(v));
  }
}

void Secrets::add(std::string value) {
  while (!value.empty() && (value.back() == '\n' || value.back() == '\r')) value.pop_back();
  if (value.size() < kMinLength) return;
  if (std::find(values_.begin(), values_.end(), value) != values_.end()) return;
  auto at = std::find_if(values_.begin(), values_.end(),
                         [&](const std::string& v) { return v.size() < value.size(); });
  values_.insert(at, std::move(value));
}

std::string Secrets::redact(std::string text) const {
  for (const auto& s : values_)
    for (size_t pos = 0; (pos = text.find(s, pos)) != std::string::npos;)
      text.replace(pos, s.size(), "[redacted]");
  return text;
}

}  // namespace ts::agent
