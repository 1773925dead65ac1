// The process runner: exit codes, signals, deadlines that kill whole groups, output caps,
// stdin, environment isolation, spawn failures, and the long-lived ChildProcess.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "ts/proc/proc.hpp"

namespace {

using ts::proc::ChildProcess;
using ts::proc::RunOptions;

RunOptions sh(const std::string& script) {
  RunOptions o;
  o.argv = {"/bin/sh", "-c", script};
  o.env = {{"PATH", "/usr/bin:/bin"}};
  o.timeout_s = 20;
  return o;
}

bool pid_alive(pid_t pid) {
  return ::kill(pid, 0) == 0;
}

TEST(Proc, ExitCodeAndOutput) {
  auto r = ts::proc::run(sh("echo out; echo err >&2; exit 7"));
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->exit_code, 7);
  EXPECT_EQ(r->term_signal, 0);
  EXPECT_FALSE(r->timed_out);
  EXPECT_FALSE(r->succeeded());
  EXPECT_EQ(r->stdout_bytes, "out\n");
  EXPECT_EQ(r->stderr_bytes, "err\n");
  EXPECT_GT(r->wall_s, 0.0);
}

TEST(Proc, SuccessLooksUpPath) {
  RunOptions o;
  o.argv = {"true"};
  o.env = {{"PATH", "/usr/bin:/bin"}};
  auto r = ts::proc::run(o);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->succeeded());
}

TEST(Proc, SignalIsReported) {
  auto r = ts::proc::run(sh("kill -SEGV $$"));
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->term_signal, SIGSEGV);
  EXPECT_FALSE(r->succeeded());
}

TEST(Proc, DeadlineKillsChildAndGrandchild) {
  // The grandchild writes its pid, then both sleep; the deadline must take down the whole group.
  auto o = sh("sleep 100 & echo $!; sleep 100");
  o.timeout_s = 0.5;
  o.kill_grace_s = 0.5;
  auto t0 = std::chrono::steady_clock::now();
  auto r = ts::proc::run(o);
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->timed_out);
  EXPECT_EQ(r->term_signal, SIGTERM);
  EXPECT_LT(took, 5.0);
  pid_t grandchild = std::stoi(r->stdout_bytes);
  ASSERT_GT(grandchild, 1);
  // The grandchild was reparented to init (or a subreaper); give it a moment to be reaped.
  for (int i = 0; i < 500 && pid_alive(grandchild); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_FALSE(pid_alive(grandchild)) << "grandchild " << grandchild << " survived";
}

TEST(Proc, TermIgnoredThenKilled) {
  auto o = sh("trap '' TERM; sleep 100");
  o.timeout_s = 0.3;
  o.kill_grace_s = 0.3;
  auto r = ts::proc::run(o);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->timed_out);
  EXPECT_EQ(r->term_signal, SIGKILL);
  EXPECT_LT(r->wall_s, 5.0);
}

TEST(Proc, LeftoverBackgroundProcessIsKilledWhenLeaderExits) {
  auto r = ts::proc::run(sh("sleep 100 >/dev/null 2>&1 & echo $!"));
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->succeeded());
  pid_t bg = std::stoi(r->stdout_bytes);
  for (int i = 0; i < 500 && pid_alive(bg); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_FALSE(pid_alive(bg));
}

TEST(Proc, HugeOutputOnBothPipesIsCappedWithoutDeadlock) {
  // 32 MiB to stdout and 32 MiB to stderr, interleaved: a reader that drained one pipe at a time
  // would block forever once the other pipe's 64 KiB buffer fills.
  auto o = sh("head -c 33554432 /dev/zero & head -c 33554432 /dev/zero >&2; wait");
  o.stdout_cap = 1000;
  o.stderr_cap = 2000;
  auto r = ts::proc::run(o);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->succeeded());
  EXPECT_FALSE(r->timed_out);
  EXPECT_EQ(r->stdout_bytes.size(), 1000u);
  EXPECT_EQ(r->stderr_bytes.size(), 2000u);
  EXPECT_TRUE(r->stdout_truncated);
  EXPECT_TRUE(r->stderr_truncated);
}

TEST(Proc, OutputExactlyAtCapIsNotTruncated) {
  auto o = sh("printf abcd");
  o.stdout_cap = 4;
  auto r = ts::proc::run(o);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->stdout_bytes, "abcd");
  EXPECT_FALSE(r->stdout_truncated);
}

TEST(Proc, StdinPassthroughLarge) {
  RunOptions o;
  o.argv = {"/bin/cat"};
  o.stdin_bytes.assign(5u << 20, 'x');  // larger than any pipe buffer: must be interleaved
  o.stdin_bytes += "end";
  auto r = ts::proc::run(o);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->succeeded());
  EXPECT_EQ(r->stdout_bytes, o.stdin_bytes);
}

TEST(Proc, ChildThatIgnoresStdinDoesNotHurtParent) {
  auto o = sh("exit 0");
  o.stdin_bytes.assign(1u << 20, 'y');  // EPIPE, not SIGPIPE in this process
  auto r = ts::proc::run(o);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->succeeded());
}

TEST(Proc, EnvIsExplicitUnlessInherited) {
  ::setenv("TS_PROC_TEST_SECRET", "parent-value", 1);
  auto o = sh("echo \"[$TS_PROC_TEST_SECRET][$MINE]\"");
  o.env["MINE"] = "given";
  auto isolated = ts::proc::run(o);
  ASSERT_TRUE(isolated);
  EXPECT_EQ(isolated->stdout_bytes, "[][given]\n");

  o.inherit_env = true;
  auto inherited = ts::proc::run(o);
  ASSERT_TRUE(inherited);
  EXPECT_EQ(inherited->stdout_bytes, "[parent-value][given]\n");
  ::unsetenv("TS_PROC_TEST_SECRET");
}

TEST(Proc, CwdIsApplied) {
  auto o = sh("pwd");
  o.cwd = "/tmp";
  auto r = ts::proc::run(o);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->stdout_bytes, "/tmp\n");

  o.cwd = "/nonexistent/dir";
  auto bad = ts::proc::run(o);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, ts::Errc::not_found);
}

TEST(Proc, NonexistentExecutableIsAnError) {
  RunOptions o;
  o.argv = {"/nonexistent/bin/tool"};
  auto r = ts::proc::run(o);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ts::Errc::not_found);
  EXPECT_NE(r.error().message.find("/nonexistent/bin/tool"), std::string::npos);

  o.argv = {"ts-no-such-command-anywhere"};
  o.env = {{"PATH", "/usr/bin:/bin"}};
  auto r2 = ts::proc::run(o);
  ASSERT_FALSE(r2);
  EXPECT_EQ(r2.error().code, ts::Errc::not_found);

  o.argv = {};
  auto r3 = ts::proc::run(o);
  ASSERT_FALSE(r3);
  EXPECT_EQ(r3.error().code, ts::Errc::invalid_argument);
}

TEST(Proc, NonExecutableFileIsAnError) {
  RunOptions o;
  o.argv = {"/etc/hostname"};
  auto r = ts::proc::run(o);
  ASSERT_FALSE(r);
}

TEST(Proc, NoNetworkReportsWhatHappened) {
  auto o = sh("cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d ' '; echo \"[$http_proxy]\"");
  o.env["http_proxy"] = "http://proxy.example:3128";
  o.no_network = true;
  auto r = ts::proc::run(o);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->succeeded()) << r->stderr_bytes;
  EXPECT_NE(r->network, ts::proc::NetworkIsolation::not_requested);
  // Proxy variables are always scrubbed under no_network.
  EXPECT_NE(r->stdout_bytes.find("[]"), std::string::npos);
  if (r->network == ts::proc::NetworkIsolation::network_namespace) {
    // A fresh namespace has only the loopback device.
    EXPECT_EQ(r->stdout_bytes, "lo\n[]\n");
  }
  std::printf("no_network -> %s\n", ts::proc::network_isolation_name(r->network));
}

TEST(ChildProcess, JsonLinesRoundTrip) {
  RunOptions o;
  o.argv = {"/bin/sh", "-c", "while read -r line; do echo \"got:$line\"; done; echo bye >&2"};
  auto child = ChildProcess::start(o);
  ASSERT_TRUE(child) << child.error().message;
  EXPECT_TRUE(child->is_running());
  for (int i = 0; i < 3; ++i) {
    std::string msg = "{\"i\":" + std::to_string(i) + "}";
    ASSERT_TRUE(child->write_stdin(msg + "\n", 5.0));
    auto line = child->read_line(5.0);
    ASSERT_TRUE(line) << line.error().message;
    EXPECT_EQ(*line, "got:" + msg);
  }
  child->close_stdin();
  auto done = child->wait(5.0);
  ASSERT_TRUE(done) << done.error().message;
  EXPECT_EQ(done->exit_code, 0);
  EXPECT_EQ(child->stderr_bytes(), "bye\n");
  EXPECT_FALSE(child->is_running());
}

TEST(ChildProcess, ReadLineTimesOutThenSucceeds) {
  RunOptions o;
  o.argv = {"/bin/sh", "-c", "printf part; sleep 0.4; echo ial; sleep 100"};
  auto child = ChildProcess::start(o);
  ASSERT_TRUE(child);
  auto early = child->read_line(0.05);
  ASSERT_FALSE(early);
  EXPECT_EQ(early.error().code, ts::Errc::timeout);
  auto line = child->read_line(5.0);
  ASSERT_TRUE(line) << line.error().message;
  EXPECT_EQ(*line, "partial");
  auto r = child->stop(0.2);
  EXPECT_EQ(r.term_signal, SIGTERM);
}

TEST(ChildProcess, ReadLineAfterExitIsCrashed) {
  RunOptions o;
  o.argv = {"/bin/sh", "-c", "printf last; echo oops >&2; exit 3"};
  auto child = ChildProcess::start(o);
  ASSERT_TRUE(child);
  auto last = child->read_line(5.0);
  ASSERT_TRUE(last) << last.error().message;
  EXPECT_EQ(*last, "last");
  auto gone = child->read_line(5.0);
  ASSERT_FALSE(gone);
  EXPECT_EQ(gone.error().code, ts::Errc::crashed);
  EXPECT_NE(gone.error().message.find("exit code 3"), std::string::npos) << gone.error().message;
  EXPECT_NE(gone.error().message.find("oops"), std::string::npos);
}

TEST(ChildProcess, DestructorKillsWholeGroup) {
  pid_t leader = -1, grandchild = -1;
  {
    RunOptions o;
    o.argv = {"/bin/sh", "-c", "sleep 100 & echo $!; trap '' TERM; sleep 100"};
    auto child = ChildProcess::start(o);
    ASSERT_TRUE(child);
    leader = child->pid();
    auto line = child->read_line(5.0);
    ASSERT_TRUE(line) << line.error().message;
    grandchild = std::stoi(*line);
    EXPECT_TRUE(pid_alive(grandchild));
  }
  EXPECT_FALSE(pid_alive(leader));  // reaped by the destructor
  for (int i = 0; i < 500 && pid_alive(grandchild); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_FALSE(pid_alive(grandchild));
}

TEST(ChildProcess, ChattyStderrNeverBlocksTheChild) {
  RunOptions o;
  o.argv = {"/bin/sh", "-c", "head -c 4000000 /dev/zero >&2; echo ready"};
  o.stderr_cap = 100;
  auto child = ChildProcess::start(o);
  ASSERT_TRUE(child);
  auto line = child->read_line(10.0);
  ASSERT_TRUE(line) << line.error().message;
  EXPECT_EQ(*line, "ready");
  EXPECT_EQ(child->stderr_bytes().size(), 100u);
}

TEST(ChildProcess, StartFailureIsAnError) {
  RunOptions o;
  o.argv = {"/nonexistent"};
  auto child = ChildProcess::start(o);
  ASSERT_FALSE(child);
  EXPECT_EQ(child.error().code, ts::Errc::not_found);
}

}  // namespace
