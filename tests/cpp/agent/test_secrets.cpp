// Secrets: which environment values and login-file strings count, and redaction of all of them.
#include "ts/agent/secrets.hpp"

#include <gtest/gtest.h>

#include "test_util.hpp"

namespace {

using ts::agent::EnvMap;
using ts::agent::Secrets;
using namespace ts::agent::testing;

TEST(Secrets, EnvironmentNamesThatSayTheyHoldASecret) {
  EnvMap env = {{"OPENAI_API_KEY", "sk-aaaaaaaaaaaa"}, {"GITHUB_TOKEN", "ghp_bbbbbbbbbbbb"},
                {"AWS_SECRET", "cccccccccccccc"},      {"DB_PASSWORD", "dddddddddddd"},
                {"HF_AUTH", "eeeeeeeeeeee"},           {"PATH", "/usr/bin:/bin:/sbin"},
                {"KEYBOARD_LAYOUT", "ffffffffffffff"}, {"SHORT_KEY", "1234"},
                {"HOME", "/nonexistent-home-for-test"}};
  Secrets s = Secrets::from(env);
  std::string text =
      "sk-aaaaaaaaaaaa ghp_bbbbbbbbbbbb cccccccccccccc dddddddddddd eeeeeeeeeeee "
      "/usr/bin:/bin:/sbin ffffffffffffff 1234";
  EXPECT_EQ(s.redact(text),
            "[redacted] [redacted] [redacted] [redacted] [redacted] /usr/bin:/bin:/sbin "
            "ffffffffffffff 1234");
}

TEST(Secrets, LoginFilesEveryStringValueAndOverlapsRedactedWhole) {
  TempDir dir;
  write_text(
      dir.path() / ".cli-proxy-api" / "codex.json",
      R"({"type":"codex","tokens":{"access_token":"at-123456789","refresh_token":"rt-abcdefghijk"}})");
  write_text(dir.path() / ".cli-proxy-api" / "raw.txt", "a-raw-secret-line\n");
  Secrets s = Secrets::from({{"HOME", dir.path().string()}});
  s.add("at-123456789-and-more");  // contains another secret: the longer one goes first
  EXPECT_EQ(s.redact("x at-123456789-and-more y rt-abcdefghijk z a-raw-secret-line codex"),
            "x [redacted] y [redacted] z [redacted] codex");
}

TEST(Secrets, ExplicitAuthDirWins) {
  TempDir dir;
  write_text(dir.path() / "auth" / "c.json", R"({"token":"tok-0123456789"})");
  Secrets s = Secrets::from({{"TILESMITH_CLIPROXYAPI_AUTH_DIR", (dir.path() / "auth").string()},
                             {"HOME", "/nonexistent-home-for-test"}});
  EXPECT_EQ(s.redact("tok-0123456789"), "[redacted]");
}

}  // namespace
