#include "ts/agent/provider.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <random>
#include <thread>

#include <curl/curl.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ts/agent/search.hpp"
#include "ts/proc/proc.hpp"

extern char** environ;

namespace ts::agent {

namespace fs = std::filesystem;

EnvMap process_env() {
  EnvMap env;
  for (char** e = environ; e && *e; ++e) {
    std::string_view kv(*e);
    auto eq = kv.find('=');
    if (eq != std::string_view::npos) env.emplace(kv.substr(0, eq), kv.substr(eq + 1));
  }
  return env;
}

const char* route_kind_name(RouteKind kind) noexcept {
  switch (kind) {
    case RouteKind::openai:
      return "openai";
    case RouteKind::openrouter:
      return "openrouter";
    case RouteKind::cliproxyapi:
      return "cliproxyapi";
    case RouteKind::search:
      return "search";
  }
  return "unknown";
}

std::string Provider::describe() const {
  if (route == RouteKind::search)
    return fmt::format("search model={} (built in, no network)", model);
  std::string s = fmt::format("{} model={} base_url={}", route_kind_name(route), model,
                              base_url.empty() ? "(not started)" : base_url);
  if (route == RouteKind::cliproxyapi) s += fmt::format(" auth_dir={}", cliproxy_auth_dir.string());
  return s;
}

namespace {

std::string env_value(const EnvMap& env, std::string_view name) {
  auto it = env.find(name);
  return it == env.end() ? std::string() : it->second;
}

std::string strip_trailing_slash(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url;
}

// A Codex login: a JSON credential file in the auth directory with "codex" in its name or a
// top-level "type": "codex". Only the name and the "type" field are read, never the tokens.
bool has_codex_login(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return false;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (!entry.is_regular_file(ec) || entry.path().extension() != ".json") continue;
    std::string name = entry.path().filename().string();
    if (name.find("codex") != std::string::npos) return true;
    std::ifstream in(entry.path());
    auto doc = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (doc.is_object() && doc.value("type", std::string()) == "codex") return true;
  }
  return false;
}

}  // namespace

Expected<Provider> resolve_provider(const std::optional<std::string>& agent_model,
                                    const EnvMap& env) {
  Provider p;
  p.model = agent_model.value_or("");
  if (p.model.empty()) p.model = env_value(env, "TILESMITH_MODEL");
  if (p.model == kSearchModel) {  // the built-in search agent needs no route at all
    p.route = RouteKind::search;
    return p;
  }

  std::string route_reason;
  if (auto key = env_value(env, "OPENAI_API_KEY"); !key.empty()) {
    p.route = RouteKind::openai;
    p.api_key = key;
    p.base_url = env_value(env, "OPENAI_BASE_URL");
    if (p.base_url.empty()) p.base_url = "https://api.openai.com/v1";
    p.base_url = strip_trailing_slash(p.base_url);
  } else if (auto key = env_value(env, "OPENROUTER_API_KEY"); !key.empty()) {
    p.route = RouteKind::openrouter;
    p.api_key = key;
    p.base_url = "https://openrouter.ai/api/v1";
  } else {
    fs::path dir = env_value(env, "TILESMITH_CLIPROXYAPI_AUTH_DIR");
    if (dir.empty()) {
      std::string home = env_value(env, "HOME");
      if (!home.empty()) dir = fs::path(home) / ".cli-proxy-api";
    }
    if (dir.empty() || !has_codex_login(dir)) {
      route_reason = fmt::format(
          "no model route: set OPENAI_API_KEY or OPENROUTER_API_KEY, or log in with "
          "`cliproxyapi -codex-login` (no Codex login found in {})",
          dir.empty() ? "~/.cli-proxy-api (HOME is not set)" : dir.string());
    } else {
      fs::path exe = env_value(env, "TILESMITH_CLIPROXYAPI_EXECUTABLE");
      if (exe.empty()) exe = proc::find_on_path("cliproxyapi", env_value(env, "PATH"));
      if (exe.empty()) {
        route_reason = fmt::format(
            "a Codex login is in {} but no cliproxyapi executable was found (set "
            "TILESMITH_CLIPROXYAPI_EXECUTABLE or put cliproxyapi on PATH)",
            dir.string());
      } else if (access(exe.c_str(), X_OK) != 0) {
        route_reason = fmt::format("cliproxyapi executable {} is not executable", exe.string());
      } else {
        p.route = RouteKind::cliproxyapi;
        p.cliproxy_auth_dir = dir;
        p.cliproxy_executable = exe;
      }
    }
  }
  if (p.model.empty() || !route_reason.empty()) {
    std::string why;
    if (p.model.empty()) why = "no model: pass agent_model or set TILESMITH_MODEL";
    if (!route_reason.empty()) why += (why.empty() ? "" : "; ") + route_reason;
    return fail(Errc::unavailable, why);
  }
  return p;
}

// ---- open_route ---------------------------------------------------------------------------------

namespace {

class DirectRoute final : public Route {
 public:
  explicit DirectRoute(Provider p) : provider_(std::move(p)) {}
  const Provider& provider() const override { return provider_; }
  std::optional<int> child_pid() const override { return std::nullopt; }

 private:
  Provider provider_;
};

class CliproxyRoute final : public Route {
 public:
  CliproxyRoute(Provider p, proc::ChildProcess child, fs::path scratch,
                std::chrono::milliseconds grace)
      : provider_(std::move(p)),
        child_(std::move(child)),
        scratch_(std::move(scratch)),
        grace_(grace) {}
  ~CliproxyRoute() override {
    child_.stop(std::chrono::duration<double>(grace_).count());
    std::error_code ec;
    fs::remove_all(scratch_, ec);
  }
  const Provider& provider() const override { return provider_; }
  std::optional<int> child_pid() const override { return child_.pid(); }
  proc::ChildProcess& child() { return child_; }

 private:
  Provider provider_;
  proc::ChildProcess child_;
  fs::path scratch_;
  std::chrono::milliseconds grace_;
};

Expected<int> free_loopback_port() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return fail(Errc::io, "socket() failed");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  int port = -1;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
    port = ntohs(addr.sin_port);
  close(fd);
  if (port <= 0) return fail(Errc::io, "no free port on 127.0.0.1");
  return port;
}

std::string random_hex(size_t bytes) {
  std::random_device rd;
  std::string s;
  for (size_t i = 0; i < bytes; ++i) s += fmt::format("{:02x}", rd() & 0xff);
  return s;
}

// GET {base}/models with `key`; the HTTP status, or 0 when nothing answered.
long models_status(const std::string& base_url, const std::string& key) {
  CURL* h = curl_easy_init();
  if (!h) return 0;
  std::string auth = "Authorization: Bearer " + key;
  curl_slist* headers = curl_slist_append(nullptr, auth.c_str());
  std::string url = base_url + "/models";
  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 1000L);
  curl_easy_setopt(
      h, CURLOPT_WRITEFUNCTION,
      +[](char*, size_t size, size_t n, void*) -> size_t { return size * n; });
  long status = 0;
  if (curl_easy_perform(h) == CURLE_OK) curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
  curl_slist_free_all(headers);
  curl_easy_cleanup(h);
  return status;
}

enum class ProxyProbe { not_yet, ours, foreign };

// The port was free when free_loopback_port() closed it, but any process may bind it before our
// child does. The proxy we started knows the random key: it answers 200 with it and refuses
// another. A server that answers both does not know the key, so it is not ours.
ProxyProbe probe_proxy(const std::string& base_url, const std::string& key) {
  if (models_status(base_url, key) != 200) return ProxyProbe::not_yet;
  long wrong_key = models_status(base_url, key + "0");
  return wrong_key == 401 || wrong_key == 403 ? ProxyProbe::ours : ProxyProbe::foreign;
}

// One start of the proxy on a fresh port. On failure, `port_lost` says whether the port went to
// another process (the child exited or a foreign server answered), which a new port may fix.
Expected<std::unique_ptr<Route>> start_proxy(Provider provider, const RouteOptions& options,
                                             bool& port_lost) {
  port_lost = false;
  auto port = free_loopback_port();
  if (!port) return tl::unexpected(port.error());
  // A private directory (0700) holds the config (0600) with the proxy's random local key.
  std::string tmpl = (fs::temp_directory_path() / "tilesmith-cliproxy-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) return fail(Errc::io, "cannot create a private temp directory");
  fs::path scratch = tmpl;
  std::string key = random_hex(24);
  fs::path config = scratch / "config.yaml";
  {
    std::ofstream out(config);
    out << "host: 127.0.0.1\n"
        << "port: " << *port << "\n"
        << "auth-dir: " << nlohmann::json(provider.cliproxy_auth_dir.string()).dump() << "\n"
        << "api-keys:\n  - " << nlohmann::json(key).dump() << "\n";
    if (!out) {
      std::error_code ec;
      fs::remove_all(scratch, ec);
      return fail(Errc::io, "cannot write the cliproxyapi config");
    }
  }
  fs::permissions(config, fs::perms::owner_read | fs::perms::owner_write);

  proc::RunOptions spec;
  spec.argv = {provider.cliproxy_executable.string(), "-config", config.string()};
  spec.cwd = scratch.string();
  spec.inherit_env = true;
  auto child = proc::ChildProcess::start(spec);
  if (!child) {
    std::error_code ec;
    fs::remove_all(scratch, ec);
    return fail(Errc::unavailable, "cannot start cliproxyapi: " + child.error().message);
  }
  provider.base_url = fmt::format("http://127.0.0.1:{}/v1", *port);
  provider.api_key = key;
  // The route owns the child from here: any early return stops it.
  auto route =
      std::make_unique<CliproxyRoute>(provider, std::move(*child), scratch, options.stop_grace);

  auto deadline = std::chrono::steady_clock::now() + options.startup_timeout;
  while (true) {
    ProxyProbe probe = probe_proxy(provider.base_url, key);
    if (probe == ProxyProbe::ours) return std::unique_ptr<Route>(std::move(route));
    bool exited = !route->child().is_running();
    if (probe == ProxyProbe::foreign || exited) port_lost = true;
    if (probe == ProxyProbe::foreign)
      return fail(
          Errc::unavailable,
          fmt::format("another server took 127.0.0.1:{} before cliproxyapi bound it", *port));
    if (exited) {
      auto how = route->child().stop();
      return fail(Errc::unavailable,
                  fmt::format("cliproxyapi ({}) exited with status {} before it answered",
                              provider.cliproxy_executable.string(),
                              how.term_signal ? -how.term_signal : how.exit_code));
    }
    if (std::chrono::steady_clock::now() >= deadline)
      return fail(Errc::unavailable,
                  fmt::format("cliproxyapi did not answer on 127.0.0.1:{} within {} ms", *port,
                              options.startup_timeout.count()));
    std::this_thread::sleep_for(options.poll_interval);
  }
}

}  // namespace

Expected<std::unique_ptr<Route>> open_route(Provider provider, const RouteOptions& options) {
  if (provider.route != RouteKind::cliproxyapi)
    return std::unique_ptr<Route>(std::make_unique<DirectRoute>(std::move(provider)));
  // Losing the port to another process between picking and binding it is rare but real (tests
  // run many servers in parallel); a new port fixes it. A proxy that fails for another reason
  // fails the same way each time, so the last error is the one reported.
  constexpr int kAttempts = 3;
  for (int attempt = 1;; ++attempt) {
    bool port_lost = false;
    auto route = start_proxy(provider, options, port_lost);
    if (route || !port_lost || attempt == kAttempts) return route;
  }
}

}  // namespace ts::agent
