#include "ts/agent/provider.hpp"

#include <signal.h>

#include <algorithm>
#include <fstream>
#include <iterator>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "test_util.hpp"
#include "ts/agent/chat.hpp"

namespace {

using namespace ts::agent;
using namespace ts::agent::testing;

TEST(ResolveProvider, ModelFromArgumentThenEnvironment) {
  EnvMap env{{"OPENAI_API_KEY", kFakeKey}, {"TILESMITH_MODEL", "env-model"}};
  EXPECT_EQ(resolve_provider("arg-model", env)->model, "arg-model");
  EXPECT_EQ(resolve_provider(std::nullopt, env)->model, "env-model");
  EXPECT_EQ(resolve_provider(std::string(), env)->model, "env-model");
  env.erase("TILESMITH_MODEL");
  auto none = resolve_provider(std::nullopt, env);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code, ts::Errc::unavailable);
  EXPECT_NE(none.error().message.find("TILESMITH_MODEL"), std::string::npos);
}

TEST(ResolveProvider, RouteMatrix) {
  TempDir home;
  EnvMap base{{"TILESMITH_MODEL", "m"}, {"HOME", home.path().string()}, {"PATH", ""}};

  EnvMap openai = base;
  openai["OPENAI_API_KEY"] = kFakeKey;
  openai["OPENROUTER_API_KEY"] = "sk-or-other";
  auto p = resolve_provider(std::nullopt, openai);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->route, RouteKind::openai);
  EXPECT_EQ(p->base_url, "https://api.openai.com/v1");
  EXPECT_EQ(p->api_key, kFakeKey);
  EXPECT_EQ(p->describe().find(kFakeKey), std::string::npos);

  openai["OPENAI_BASE_URL"] = "http://127.0.0.1:9/v1/";
  EXPECT_EQ(resolve_provider(std::nullopt, openai)->base_url, "http://127.0.0.1:9/v1");

  EnvMap router = base;
  router["OPENROUTER_API_KEY"] = kFakeKey;
  p = resolve_provider(std::nullopt, router);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->route, RouteKind::openrouter);
  EXPECT_EQ(p->base_url, "https://openrouter.ai/api/v1");

  auto nothing = resolve_provider(std::nullopt, base);
  ASSERT_FALSE(nothing);
  EXPECT_EQ(nothing.error().code, ts::Errc::unavailable);
  EXPECT_NE(nothing.error().message.find("no model route"), std::string::npos);

  // Both missing: both reasons.
  EnvMap empty{{"HOME", home.path().string()}};
  auto both = resolve_provider(std::nullopt, empty);
  ASSERT_FALSE(both);
  EXPECT_NE(both.error().message.find("no model"), std::string::npos);
  EXPECT_NE(both.error().message.find("no model route"), std::string::npos);
}

TEST(ResolveProvider, DetectsCodexLoginAndExecutable) {
  TempDir home;
  auto auth = home.path() / ".cli-proxy-api";
  EnvMap env{{"TILESMITH_MODEL", "gpt-5-codex"}, {"HOME", home.path().string()}, {"PATH", ""}};

  write_text(auth / "gemini-user.json", R"({"type":"gemini"})");
  EXPECT_FALSE(resolve_provider(std::nullopt, env));  // a login, but not a Codex one

  write_text(auth / "user-at-example.json", R"({"type":"codex","access_token":"tok"})");
  auto no_exe = resolve_provider(std::nullopt, env);
  ASSERT_FALSE(no_exe);
  EXPECT_NE(no_exe.error().message.find("no cliproxyapi executable"), std::string::npos);

  env["TILESMITH_CLIPROXYAPI_EXECUTABLE"] = TS_FAKE_CLIPROXYAPI;
  auto p = resolve_provider(std::nullopt, env);
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->route, RouteKind::cliproxyapi);
  EXPECT_EQ(p->cliproxy_auth_dir, auth);
  EXPECT_TRUE(p->base_url.empty());

  // The override directory wins over ~/.cli-proxy-api; PATH lookup finds the executable.
  TempDir other;
  write_text(other.path() / "codex-me.json", "{}");
  EnvMap env2{{"TILESMITH_MODEL", "m"},
              {"TILESMITH_CLIPROXYAPI_AUTH_DIR", other.path().string()},
              {"PATH", std::filesystem::path(TS_FAKE_CLIPROXYAPI).parent_path().string()}};
  std::filesystem::create_symlink(TS_FAKE_CLIPROXYAPI, other.path() / "cliproxyapi");
  env2["PATH"] = other.path().string();
  auto q = resolve_provider(std::nullopt, env2);
  ASSERT_TRUE(q) << q.error().message;
  EXPECT_EQ(q->cliproxy_auth_dir, other.path());
  EXPECT_EQ(q->cliproxy_executable, other.path() / "cliproxyapi");
}

TEST(OpenRoute, StartsPrivateCliproxyapiRoutesThroughItAndStopsIt) {
  TempDir home;
  write_text(home.path() / ".cli-proxy-api" / "codex-user.json", R"({"type":"codex"})");
  EnvMap env{{"TILESMITH_MODEL", "gpt-5-codex"},
             {"HOME", home.path().string()},
             {"TILESMITH_CLIPROXYAPI_EXECUTABLE", TS_FAKE_CLIPROXYAPI}};
  auto provider = resolve_provider(std::nullopt, env);
  ASSERT_TRUE(provider) << provider.error().message;
  int pid = -1;
  {
    auto route = open_route(*provider, {.startup_timeout = std::chrono::milliseconds(10'000)});
    ASSERT_TRUE(route) << route.error().message;
    const Provider& live = (*route)->provider();
    EXPECT_EQ(live.base_url.rfind("http://127.0.0.1:", 0), 0u) << live.base_url;
    EXPECT_FALSE(live.api_key.empty());
    ASSERT_TRUE((*route)->child_pid());
    pid = *(*route)->child_pid();
    EXPECT_EQ(kill(pid, 0), 0);

    ChatClient client(live);
    auto reply = client.complete({{user_message("hi")}, {}});
    ASSERT_TRUE(reply) << reply.error().message;
    EXPECT_EQ(reply->message.content, "hello from the fake cliproxyapi");
  }
  EXPECT_NE(kill(pid, 0), 0);  // stopped and reaped with the route
}

TEST(OpenRoute, ReportsAProxyThatDiesOrNeverAnswers) {
  TempDir home;  // a login the fake refuses (no "codex" in the file name, only the type)
  write_text(home.path() / "login.json", R"({"type":"codex"})");
  Provider p;
  p.route = RouteKind::cliproxyapi;
  p.model = "m";
  p.cliproxy_auth_dir = home.path();
  p.cliproxy_executable = TS_FAKE_CLIPROXYAPI;
  auto died = open_route(p, {.startup_timeout = std::chrono::milliseconds(5'000)});
  ASSERT_FALSE(died);
  EXPECT_EQ(died.error().code, ts::Errc::unavailable);
  EXPECT_NE(died.error().message.find("exited"), std::string::npos) << died.error().message;

  auto hung = home.path() / "hung-proxy.sh";  // starts, never listens
  write_text(hung, "#!/bin/sh\nexec sleep 30\n");
  std::filesystem::permissions(hung, std::filesystem::perms::owner_all);
  p.cliproxy_executable = hung;
  auto started = std::chrono::steady_clock::now();
  auto quiet = open_route(p, {.startup_timeout = std::chrono::milliseconds(300)});
  ASSERT_FALSE(quiet);
  EXPECT_NE(quiet.error().message.find("did not answer"), std::string::npos)
      << quiet.error().message;
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(5));

  // A server that answers every key is not the proxy we started, even on the port we chose:
  // each of the three attempts (fresh port each time) is refused, and the error says why.
  auto impostor = home.path() / "impostor.sh";
  auto starts = home.path() / "starts";
  write_text(home.path() / "codex-login.json", "{}");
  write_text(impostor, fmt::format("#!/bin/sh\necho start >> '{}'\nexec '{}' \"$@\" -any-key\n",
                                   starts.string(), TS_FAKE_CLIPROXYAPI));
  std::filesystem::permissions(impostor, std::filesystem::perms::owner_all);
  p.cliproxy_executable = impostor;
  auto foreign = open_route(p, {.startup_timeout = std::chrono::milliseconds(10'000)});
  ASSERT_FALSE(foreign);
  EXPECT_NE(foreign.error().message.find("another server took"), std::string::npos)
      << foreign.error().message;
  std::ifstream lines(starts);
  EXPECT_EQ(std::count(std::istreambuf_iterator<char>(lines), {}, '\n'), 3);

  p.cliproxy_executable = home.path() / "missing";
  auto missing = open_route(p);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ts::Errc::unavailable);
}

}  // namespace
