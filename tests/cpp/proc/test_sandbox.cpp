// The sandbox (bwrap): read-only view but for its writable paths, hidden homes, no network, no
// host processes, resource limits, and nothing left running after the call. Every test needs
// bwrap; CI installs it (scripts/install-deps.sh), so a missing sandbox fails here, not skips.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "ts/proc/proc.hpp"

namespace fs = std::filesystem;

namespace {

using ts::proc::RunOptions;
using ts::proc::Sandbox;

struct TempDir {
  fs::path path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "ts-sandbox-XXXXXX").string();
    path = ::mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

RunOptions confined(const std::string& script, Sandbox box = Sandbox::untrusted()) {
  RunOptions o;
  o.argv = {"/bin/sh", "-c", script};
  o.env = {{"PATH", "/usr/bin:/bin"}};
  o.timeout_s = 20;
  box.processes = 64;
  o.sandbox = std::move(box);
  return o;
}

ts::proc::ProcResult run_ok(const RunOptions& o) {
  auto r = ts::proc::run(o);
  EXPECT_TRUE(r) << r.error().message;
  return r ? *r : ts::proc::ProcResult{};
}

class SandboxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto ok = ts::proc::sandbox_available();
    ASSERT_TRUE(ok) << "the sandbox is unavailable: " << ok.error().message;
  }
};

TEST_F(SandboxTest, OnlyWritablePathsCanBeWritten) {
  TempDir work;
  Sandbox box = Sandbox::untrusted();
  box.writable = {work.path.string()};
  auto r = run_ok(confined(
      "echo ok > " + (work.path / "f").string() + " && echo tmp > /tmp/t && cat /tmp/t; " +
          "touch /usr/evil 2>/dev/null && echo WROTE_USR; touch /etc/evil 2>/dev/null && echo "
          "WROTE_ETC; exit 0",
      box));
  EXPECT_TRUE(r.succeeded()) << r.stderr_bytes;
  EXPECT_EQ(r.stdout_bytes, "tmp\n");
  EXPECT_TRUE(fs::exists(work.path / "f"));
  EXPECT_FALSE(fs::exists("/usr/evil"));
}

TEST_F(SandboxTest, AReadablePathAboveAHiddenOneKeepsItHidden) {
  // A program run from /tmp has /tmp on its Python path (readable) and may have HOME below it.
  TempDir top;
  fs::create_directories(top.path / "home");
  std::ofstream(top.path / "home" / "token") << "sk-secret-value";
  std::ofstream(top.path / "module.py") << "x = 1\n";
  Sandbox box = Sandbox::untrusted();
  box.hidden.push_back((top.path / "home").string());
  box.readable = {top.path.string()};
  auto r = run_ok(confined(
      "cat " + (top.path / "module.py").string() + "; ls -A " + (top.path / "home").string() +
          "; touch " + (top.path / "home" / "w").string() + " 2>/dev/null && echo WROTE; exit 0",
      box));
  EXPECT_TRUE(r.succeeded()) << r.stderr_bytes;
  EXPECT_EQ(r.stdout_bytes, "x = 1\n");
}

TEST_F(SandboxTest, HiddenPathsLookEmpty) {
  TempDir secret;
  std::ofstream(secret.path / "token") << "sk-secret-value";
  Sandbox box = Sandbox::untrusted();
  box.hidden.push_back(secret.path.string());
  auto r = run_ok(confined("cat " + (secret.path / "token").string() + " 2>&1; ls -A " +
                               secret.path.string() + " | wc -l",
                           box));
  EXPECT_EQ(r.stdout_bytes.find("sk-secret-value"), std::string::npos) << r.stdout_bytes;
}

TEST_F(SandboxTest, ReadableBindsBackInsideHidden) {
  TempDir outer;
  fs::create_directories(outer.path / "tool");
  std::ofstream(outer.path / "tool" / "x") << "visible";
  std::ofstream(outer.path / "secret") << "hidden";
  Sandbox box = Sandbox::untrusted();
  box.hidden = {outer.path.string()};
  box.readable = {(outer.path / "tool").string()};
  auto r = run_ok(confined("cat " + (outer.path / "tool/x").string() + "; cat " +
                               (outer.path / "secret").string() + " 2>/dev/null; echo; touch " +
                               (outer.path / "tool/y").string() + " 2>/dev/null || echo ro",
                           box));
  EXPECT_EQ(r.stdout_bytes, "visible\nro\n");
}

TEST_F(SandboxTest, EnvironmentIsOnlyWhatWasGiven) {
  ::setenv("TS_SANDBOX_TEST_API_KEY", "sk-should-not-leak", 1);
  auto r = run_ok(confined("env"));
  ::unsetenv("TS_SANDBOX_TEST_API_KEY");
  EXPECT_EQ(r.stdout_bytes.find("sk-should-not-leak"), std::string::npos) << r.stdout_bytes;
  EXPECT_NE(r.stdout_bytes.find("PATH=/usr/bin:/bin"), std::string::npos);
}

TEST_F(SandboxTest, InheritEnvIsRefused) {
  auto o = confined("true");
  o.inherit_env = true;
  auto r = ts::proc::run(o);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ts::Errc::invalid_argument);
}

TEST_F(SandboxTest, NoHostProcessesAndNoNetwork) {
  auto r = run_ok(confined(
      "ls /proc | grep -c '^[0-9]'; cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d ' '"));
  // Inside: bwrap's init, sh, ls, grep (and cat, tail, cut, tr for the second pipeline).
  int count = std::atoi(r.stdout_bytes.c_str());
  EXPECT_GT(count, 0);
  EXPECT_LT(count, 12) << r.stdout_bytes;
  EXPECT_NE(r.stdout_bytes.find("\nlo\n"), std::string::npos) << r.stdout_bytes;
  EXPECT_EQ(r.network, ts::proc::NetworkIsolation::network_namespace);
}

TEST_F(SandboxTest, NoCapabilitiesEvenAsRoot) {
  auto r =
      run_ok(confined("grep CapEff /proc/self/status; mount -t tmpfs none /usr 2>/dev/null "
                      "&& echo MOUNTED; exit 0"));
  EXPECT_NE(r.stdout_bytes.find("CapEff:\t0000000000000000"), std::string::npos) << r.stdout_bytes;
  EXPECT_EQ(r.stdout_bytes.find("MOUNTED"), std::string::npos);
}

TEST_F(SandboxTest, DaemonThatLeftTheSessionDiesWithTheCall) {
  TempDir work;
  Sandbox box = Sandbox::untrusted();
  box.writable = {work.path.string()};
  // Its pid inside means nothing outside: it is marked by a unique argument and looked for on the
  // host after the call.
  const std::string mark = "300." + std::to_string(::getpid());
  auto r =
      run_ok(confined("setsid sleep " + mark + " </dev/null >/dev/null 2>&1 & echo started", box));
  EXPECT_EQ(r.stdout_bytes, "started\n");
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  bool alive = false;
  for (const auto& e : fs::directory_iterator("/proc")) {
    std::ifstream cmd(e.path() / "cmdline");
    std::string text((std::istreambuf_iterator<char>(cmd)), {});
    if (text.find(mark) != std::string::npos) alive = true;
  }
  EXPECT_FALSE(alive) << "a daemon outlived the sandboxed call";
}

TEST_F(SandboxTest, ForkBombIsBounded) {
  Sandbox bounded;
  bounded.processes = 64;
  auto can = ts::proc::processes_bounded(bounded);
  ASSERT_TRUE(can) << can.error().message;
  auto o = confined(
      "i=0; while [ $i -lt 200 ]; do sleep 5 & i=$((i+1)); done 2>/dev/null; "
      "echo spawned; jobs -p | wc -l");
  o.timeout_s = 20;
  auto r = run_ok(o);
  // The shell is told no (EAGAIN) long before 200: at most `processes` run at once.
  EXPECT_LT(std::atoi(r.stdout_bytes.substr(r.stdout_bytes.find('\n') + 1).c_str()), 64)
      << r.stdout_bytes << r.stderr_bytes;
}

TEST_F(SandboxTest, FileSizeAndAddressSpaceLimits) {
  TempDir work;
  Sandbox box = Sandbox::untrusted();
  box.writable = {work.path.string()};
  box.file_bytes = 1 << 20;
  auto r = run_ok(confined(
      "head -c 4000000 /dev/zero > " + (work.path / "big").string() + "; echo rc=$?", box));
  EXPECT_LE(fs::file_size(work.path / "big"), std::uintmax_t{1} << 20);
  Sandbox small = Sandbox::untrusted();
  small.address_space_bytes = std::size_t{64} << 20;
  auto m = run_ok(confined("dd if=/dev/zero of=/dev/null bs=512M count=1 2>&1", small));
  EXPECT_NE(m.stdout_bytes.find("memory exhausted"), std::string::npos) << m.stdout_bytes;
}

TEST_F(SandboxTest, DeadlineEndsEverythingInside) {
  auto o = confined("sleep 100 & sleep 100");
  o.timeout_s = 0.5;
  auto t0 = std::chrono::steady_clock::now();
  auto r = run_ok(o);
  EXPECT_TRUE(r.timed_out);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 5.0);
}

TEST(Sandbox, MissingBwrapIsAClearError) {
  ::setenv("TILESMITH_BWRAP", "/nonexistent/bwrap", 1);
  RunOptions o;
  o.argv = {"/bin/true"};
  o.sandbox = Sandbox::untrusted();
  auto r = ts::proc::run(o);
  ::unsetenv("TILESMITH_BWRAP");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("bwrap"), std::string::npos) << r.error().message;
}

}  // namespace

namespace {

bool host_process_with(const std::string& mark) {
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    std::ifstream cmd(e.path() / "cmdline");
    std::string text((std::istreambuf_iterator<char>(cmd)), {});
    if (text.find(mark) != std::string::npos) return true;
  }
  return false;
}

TEST(Contain, ADeadlineKillsWhatLeftTheSessionAndNeverWaitsOnItsPipe) {
  const std::string mark = "301." + std::to_string(::getpid());
  RunOptions o;
  o.argv = {"/bin/sh", "-c", "setsid sleep " + mark + " & echo started; exec sleep 100"};
  o.env = {{"PATH", "/usr/bin:/bin"}};
  o.timeout_s = 0.5;
  o.contain = true;
  auto t0 = std::chrono::steady_clock::now();
  auto r = ts::proc::run(o);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->timed_out);
  EXPECT_EQ(r->stdout_bytes, "started\n");
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 5.0);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(host_process_with(mark));
}

}  // namespace
