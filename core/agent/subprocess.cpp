#include "subprocess.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include <fmt/format.h>

namespace ts::agent::detail {

namespace {

using Clock = std::chrono::steady_clock;

// Only async-signal-safe calls between fork and exec: raw syscalls and _exit.
[[noreturn]] void child_exec(const SpawnSpec& spec, char* const* argv, int out_fd, int report_fd) {
  setpgid(0, 0);
  auto die = [&](const char* what) {
    int e = errno;
    [[maybe_unused]] auto n1 = write(report_fd, what, strlen(what));
    [[maybe_unused]] auto n2 = write(report_fd, ": ", 2);
    const char* msg = strerror(e);
    [[maybe_unused]] auto n3 = write(report_fd, msg, strlen(msg));
    _exit(127);
  };
  if (spec.isolate_network) {
    // Root can make a bare network namespace; others need a user namespace first.
    if (unshare(CLONE_NEWNET) != 0 && unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0)
      die("cannot isolate the network (unshare)");
  }
  int devnull = open("/dev/null", O_RDWR);
  if (devnull < 0) die("open /dev/null");
  dup2(devnull, 0);
  int out = out_fd >= 0 ? out_fd : devnull;
  dup2(out, 1);
  dup2(out, 2);
  if (!spec.cwd.empty() && chdir(spec.cwd.c_str()) != 0) die("chdir");
  execv(argv[0], argv);
  die("exec");
  _exit(127);  // not reached: die() exits
}

}  // namespace

Expected<Spawned> spawn(const SpawnSpec& spec) {
  // Everything the child needs is built before fork (no allocation after it).
  std::vector<std::string> args{spec.executable.string()};
  args.insert(args.end(), spec.args.begin(), spec.args.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  int out_pipe[2] = {-1, -1};
  if (spec.capture_output && pipe2(out_pipe, O_CLOEXEC) != 0)
    return fail(Errc::io, fmt::format("pipe: {}", strerror(errno)));
  int report_pipe[2];  // exec failure report; closes on successful exec (O_CLOEXEC)
  if (pipe2(report_pipe, O_CLOEXEC) != 0) {
    if (out_pipe[0] >= 0) close(out_pipe[0]), close(out_pipe[1]);
    return fail(Errc::io, fmt::format("pipe: {}", strerror(errno)));
  }
  pid_t pid = fork();
  if (pid < 0) {
    int e = errno;
    close(report_pipe[0]), close(report_pipe[1]);
    if (out_pipe[0] >= 0) close(out_pipe[0]), close(out_pipe[1]);
    return fail(Errc::io, fmt::format("fork: {}", strerror(e)));
  }
  if (pid == 0) child_exec(spec, argv.data(), out_pipe[1], report_pipe[1]);
  setpgid(pid, pid);  // also in the parent, so a kill right after spawn reaches the group
  close(report_pipe[1]);
  if (out_pipe[1] >= 0) close(out_pipe[1]);
  std::string report;
  char buf[256];
  ssize_t n;
  while ((n = read(report_pipe[0], buf, sizeof buf)) > 0) report.append(buf, size_t(n));
  close(report_pipe[0]);
  if (!report.empty()) {
    int status;
    waitpid(pid, &status, 0);
    if (out_pipe[0] >= 0) close(out_pipe[0]);
    return fail(Errc::io, fmt::format("{}: {}", spec.executable.string(), report));
  }
  return Spawned{pid, out_pipe[0]};
}

void stop_process_group(pid_t pid, std::chrono::milliseconds grace) {
  if (pid <= 0) return;
  kill(-pid, SIGTERM);
  auto deadline = Clock::now() + grace;
  int status;
  while (Clock::now() < deadline) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid || (r < 0 && errno == ECHILD)) {
      kill(-pid, SIGKILL);  // stragglers left in the group
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  kill(-pid, SIGKILL);
  waitpid(pid, &status, 0);
}

Expected<CapturedRun> run_captured(SpawnSpec spec, std::chrono::milliseconds timeout,
                                   std::size_t cap) {
  spec.capture_output = true;
  auto child = spawn(spec);
  if (!child) return tl::unexpected(child.error());
  CapturedRun run;
  auto deadline = Clock::now() + timeout;
  int fd = child->output_fd;
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  auto drain = [&] {
    char buf[4096];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0) {
      size_t take = std::min(size_t(n), cap - std::min(cap, run.output.size()));
      run.output.append(buf, take);
      run.dropped += size_t(n) - take;
    }
    return n == 0;  // EOF
  };
  int status = 0;
  bool exited = false;
  while (true) {
    pollfd p{fd, POLLIN, 0};
    poll(&p, 1, 10);
    bool eof = drain();
    if (waitpid(child->pid, &status, WNOHANG) == child->pid) {
      exited = true;
      drain();
      break;
    }
    if (Clock::now() >= deadline) break;
    // After EOF poll() returns at once (POLLHUP): wait for the exit without spinning.
    if (eof) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  if (!exited) {
    run.timed_out = true;
    kill(-child->pid, SIGKILL);
    waitpid(child->pid, &status, 0);
    drain();
  } else {
    kill(-child->pid, SIGKILL);  // background processes the command left behind
  }
  close(fd);
  if (WIFEXITED(status))
    run.exit_code = WEXITSTATUS(status);
  else if (WIFSIGNALED(status))
    run.exit_code = -WTERMSIG(status);
  return run;
}

std::filesystem::path find_on_path(const std::string& name, const std::string& path_var) {
  size_t start = 0;
  while (start <= path_var.size()) {
    size_t end = path_var.find(':', start);
    if (end == std::string::npos) end = path_var.size();
    std::string dir = path_var.substr(start, end - start);
    if (!dir.empty()) {
      std::filesystem::path p = std::filesystem::path(dir) / name;
      if (access(p.c_str(), X_OK) == 0 && std::filesystem::is_regular_file(p)) return p;
    }
    start = end + 1;
  }
  return {};
}

}  // namespace ts::agent::detail
