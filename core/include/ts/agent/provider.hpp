// Where the agent's model lives: resolving a route from the environment, and opening it.
//
// Resolution order:
//   model: `agent_model` if given, else TILESMITH_MODEL
//   "tilesmith-search" is the built-in search agent (ts/agent/search.hpp): RouteKind::search,
//          no key, no URL, no network; make_model() gives it as the Model
//   route: OPENAI_API_KEY (+ OPENAI_BASE_URL, default https://api.openai.com/v1)
//          else OPENROUTER_API_KEY (https://openrouter.ai/api/v1)
//          else a cliproxyapi Codex OAuth login in ~/.cli-proxy-api
//               (TILESMITH_CLIPROXYAPI_AUTH_DIR, TILESMITH_CLIPROXYAPI_EXECUTABLE override)
// No model or no route is an `Errc::unavailable` error whose message says why; the caller then
// keeps plain Inductor. The environment is passed as a map so tests never touch the process env.
//
//   auto provider = ts::agent::resolve_provider(std::nullopt, ts::agent::process_env());
//   if (!provider) return keep_inductor(provider.error().message);
//   auto route = ts::agent::open_route(*provider);  // starts cliproxyapi for the login route
//   auto model = ts::agent::make_model(route.value()->provider(), {}, Agency::medium);
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "ts/error.hpp"

namespace ts::agent {

using EnvMap = std::map<std::string, std::string, std::less<>>;

/// A snapshot of this process's environment.
EnvMap process_env();

enum class RouteKind { openai, openrouter, cliproxyapi, search };
const char* route_kind_name(RouteKind kind) noexcept;

/// A resolved model route. `api_key` lives in memory only: describe() never prints it, and
/// nothing in the agent component writes it to a file or a log.
struct Provider {
  RouteKind route = RouteKind::openai;
  std::string model;
  std::string base_url;  // ".../v1"; empty for cliproxyapi until open_route() starts the proxy
  std::string api_key;
  std::filesystem::path cliproxy_auth_dir;    // cliproxyapi route only
  std::filesystem::path cliproxy_executable;  // cliproxyapi route only

  /// "openai model=gpt-5 base_url=https://api.openai.com/v1" (never the key).
  std::string describe() const;
};

/// Resolves model and route; `Errc::unavailable` with the reason when either is missing.
Expected<Provider> resolve_provider(const std::optional<std::string>& agent_model,
                                    const EnvMap& env);

struct RouteOptions {
  std::chrono::milliseconds startup_timeout{20'000};  // until the private proxy answers
  std::chrono::milliseconds poll_interval{50};
  std::chrono::milliseconds stop_grace{2'000};  // SIGTERM to SIGKILL
};

/// An open route. For the login route it owns a private cliproxyapi process on a free
/// 127.0.0.1 port (own process group, random local key, 0600 config in a private temp dir),
/// stopped and cleaned up when the Route is destroyed.
class Route {
 public:
  virtual ~Route() = default;
  virtual const Provider& provider() const = 0;
  /// The private proxy's pid, for diagnostics; nullopt for direct routes.
  virtual std::optional<int> child_pid() const = 0;
};

Expected<std::unique_ptr<Route>> open_route(Provider provider, const RouteOptions& options = {});

}  // namespace ts::agent
