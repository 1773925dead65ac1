// Child processes: fork/exec with a status pipe, a poll() loop over every pipe, process-group
// kill. See ts/proc/proc.hpp for the contract.
//
// Between fork() and exec() the child calls only async-signal-safe functions (setpgid, unshare,
// dup2, chdir, sigaction, sigprocmask, execve, write, _exit): the parent may be multithreaded
// (Python, the agent's HTTP client), and anything else could deadlock on a lock that another
// thread held at fork time. Everything the child needs (argv, envp, the resolved executable) is
// built before fork.
//
// The leader is never reaped before its group is killed: waitid(WNOWAIT) sees the exit while the
// zombie still pins the pid, so killpg(pid) cannot hit an unrelated group that reused the number.
#include "ts/proc/proc.hpp"

#include "sandbox.hpp"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include <fmt/format.h>

extern char** environ;

namespace ts::proc {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

Clock::time_point after(double seconds) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(
                            std::chrono::duration<double>(std::max(0.0, seconds)));
}

int ms_until(Clock::time_point t) {
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(t - Clock::now()).count();
  return static_cast<int>(std::clamp<long long>(ms + 1, 0, 1000));  // +1: never wake early
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

void set_nonblocking(int fd) {
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
}

// write() that cannot raise SIGPIPE in this process when the child closed its stdin: SIGPIPE is
// blocked for this thread around the call and a SIGPIPE it caused is consumed.
ssize_t write_no_sigpipe(int fd, const char* data, std::size_t size) {
  sigset_t pipe_set, old_set, pending;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old_set);
  sigpending(&pending);
  const bool was_pending = sigismember(&pending, SIGPIPE);
  ssize_t written = ::write(fd, data, size);
  int saved_errno = errno;
  if (written < 0 && saved_errno == EPIPE && !was_pending) {
    timespec zero{0, 0};
    sigtimedwait(&pipe_set, nullptr, &zero);
  }
  pthread_sigmask(SIG_SETMASK, &old_set, nullptr);
  errno = saved_errno;
  return written;
}

int open_pidfd(pid_t pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#else
  (void)pid;
  return -1;
#endif
}

bool is_executable_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

// Like execvp's search, but over the child's PATH (falling back to ours), done before fork.
Expected<std::string> resolve_executable(const std::string& name,
                                         const std::map<std::string, std::string>& env) {
  if (name.empty()) return fail(Errc::invalid_argument, "proc: argv[0] is empty");
  if (name.find('/') != std::string::npos) {
    if (!is_executable_file(name))
      return fail(Errc::not_found, fmt::format("proc: '{}' is not an executable file", name));
    return name;
  }
  std::string path_list;
  if (auto it = env.find("PATH"); it != env.end()) {
    path_list = it->second;
  } else if (const char* p = ::getenv("PATH")) {
    path_list = p;
  } else {
    path_list = "/usr/local/bin:/usr/bin:/bin";
  }
  if (std::string found = find_on_path(name, path_list); !found.empty()) return found;
  return fail(Errc::not_found, fmt::format("proc: '{}' not found in PATH '{}'", name, path_list));
}

// Messages on the status pipe (child -> parent, before exec):
//   'N' <0|1>                 network namespace refused / created (only with no_network)
//   'E' <stage> <int errno>   a setup step failed; the child then _exits
enum ChildStage : char {
  stage_dup2 = 'd',
  stage_chdir = 'c',
  stage_exec = 'x',
  stage_limits = 'l',
  stage_cgroup = 'g'
};

[[noreturn]] void child_fail(int status_fd, ChildStage stage) {
  char msg[1 + 1 + sizeof(int)];
  int err = errno;
  msg[0] = 'E';
  msg[1] = stage;
  std::memcpy(msg + 2, &err, sizeof(int));
  (void)!::write(status_fd, msg, sizeof(msg));
  ::_exit(127);
}

struct Spawned {
  std::shared_ptr<detail::PidsCgroup> cgroup;  // a sandboxed child's; kills what is left in it
  bool contain = false;                        // kill every descendant at the end
  pid_t pid = -1;
  int pidfd = -1;
  int stdin_fd = -1;
  int stdout_fd = -1;
  int stderr_fd = -1;
  NetworkIsolation network = NetworkIsolation::not_requested;
};

Expected<Spawned> spawn(const RunOptions& options) {
  if (options.argv.empty()) return fail(Errc::invalid_argument, "proc: argv is empty");
  if (options.sandbox && options.inherit_env)
    return fail(Errc::invalid_argument,
                "proc: a sandboxed child gets only the environment it is given (inherit_env)");

  std::map<std::string, std::string> env;
  if (options.inherit_env) {
    for (char** e = environ; e && *e; ++e) {
      std::string_view kv(*e);
      auto eq = kv.find('=');
      if (eq != std::string_view::npos)
        env.emplace(std::string(kv.substr(0, eq)), std::string(kv.substr(eq + 1)));
    }
  }
  for (const auto& [k, v] : options.env) env[k] = v;
  if (options.no_network)
    for (const auto& name : proxy_env_names()) env.erase(name);

  std::vector<std::string> argv_strings = options.argv;
  std::shared_ptr<detail::PidsCgroup> cgroup;
  detail::Limits limits;
  if (options.contain && !options.sandbox) cgroup = detail::PidsCgroup::create(1 << 22);
  if (options.sandbox) {
    auto wrapped = detail::sandbox_argv(*options.sandbox, options.cwd, options.argv);
    if (!wrapped) return tl::unexpected(wrapped.error());
    argv_strings = std::move(*wrapped);
    limits = detail::Limits::of(*options.sandbox);
    if (options.sandbox->processes > 0) {
      cgroup = detail::PidsCgroup::create(options.sandbox->processes);
      // Root is exempt from RLIMIT_NPROC: without a cgroup its count stays unbounded (see
      // processes_bounded); the PID namespace still ends them all with the call.
      if (!cgroup && ::geteuid() != 0)
        limits.add(RLIMIT_NPROC, detail::nproc_limit(*options.sandbox));
    }
  }
  const bool sandboxed = options.sandbox.has_value();
  const int cgroup_fd = cgroup ? cgroup->procs_fd() : -1;

  auto exe = resolve_executable(argv_strings[0], env);
  if (!exe) return tl::unexpected(exe.error());
  if (!options.cwd.empty()) {
    struct stat st {};
    if (::stat(options.cwd.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
      return fail(Errc::not_found, fmt::format("proc: cwd '{}' is not a directory", options.cwd));
  }

  // Everything the child touches is built now, before fork.
  std::vector<std::string> env_strings;
  for (const auto& [k, v] : env) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp, argv;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  for (auto& s : argv_strings) argv.push_back(s.data());
  argv.push_back(nullptr);
  const char* cwd = options.cwd.empty() ? nullptr : options.cwd.c_str();
  const bool no_network = options.no_network && !sandboxed;  // bwrap makes its own namespace

  int in_pipe[2], out_pipe[2], err_pipe[2], status_pipe[2];
  int* pipes[] = {in_pipe, out_pipe, err_pipe, status_pipe};
  for (int i = 0; i < 4; ++i) {
    if (::pipe2(pipes[i], O_CLOEXEC) != 0) {
      int err = errno;
      for (int j = 0; j < i; ++j) ::close(pipes[j][0]), ::close(pipes[j][1]);
      return fail(Errc::io, fmt::format("proc: pipe2 failed: {}", std::strerror(err)));
    }
  }
  auto close_all = [&] {
    for (auto* p : pipes) ::close(p[0]), ::close(p[1]);
  };

  pid_t pid = ::fork();
  if (pid < 0) {
    int err = errno;
    close_all();
    return fail(Errc::io, fmt::format("proc: fork failed: {}", std::strerror(err)));
  }
  if (pid == 0) {
    // Child: async-signal-safe calls only.
    ::setpgid(0, 0);
    if (cgroup_fd >= 0 && ::write(cgroup_fd, "0", 1) != 1) child_fail(status_pipe[1], stage_cgroup);
    if (!limits.apply()) child_fail(status_pipe[1], stage_limits);
    if (no_network) {
      char msg[2] = {'N', static_cast<char>(::unshare(CLONE_NEWNET) == 0 ? 1 : 0)};
      (void)!::write(status_pipe[1], msg, 2);
    }
    if (::dup2(in_pipe[0], 0) < 0 || ::dup2(out_pipe[1], 1) < 0 || ::dup2(err_pipe[1], 2) < 0)
      child_fail(status_pipe[1], stage_dup2);
    if (cwd && ::chdir(cwd) != 0) child_fail(status_pipe[1], stage_chdir);
    // Dispositions set to SIG_IGN survive exec (Python ignores SIGPIPE); give the child defaults.
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    for (int sig : {SIGPIPE, SIGTERM, SIGINT, SIGQUIT, SIGHUP, SIGCHLD})
      ::sigaction(sig, &dfl, nullptr);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::execve(exe->c_str(), argv.data(), envp.data());
    child_fail(status_pipe[1], stage_exec);
  }

  // Parent. setpgid on both sides: whichever runs first wins the race against killpg.
  ::setpgid(pid, pid);
  ::close(in_pipe[0]);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  ::close(status_pipe[1]);

  Spawned s;
  s.cgroup = std::move(cgroup);
  s.contain = options.contain;
  s.pid = pid;
  s.stdin_fd = in_pipe[1];
  s.stdout_fd = out_pipe[0];
  s.stderr_fd = err_pipe[0];

  // The status pipe closes on a successful exec (O_CLOEXEC) or on _exit.
  std::string status;
  char buf[64];
  for (;;) {
    ssize_t n = ::read(status_pipe[0], buf, sizeof(buf));
    if (n > 0)
      status.append(buf, static_cast<std::size_t>(n));
    else if (n == 0 || errno != EINTR)
      break;
  }
  ::close(status_pipe[0]);

  std::size_t pos = 0;
  if (no_network) {
    bool ns = status.size() >= 2 && status[0] == 'N' && status[1] == 1;
    s.network = ns ? NetworkIsolation::network_namespace : NetworkIsolation::proxy_env_scrubbed;
    if (status.size() >= 2 && status[0] == 'N') pos = 2;
  }
  if (status.size() >= pos + 2 + sizeof(int) && status[pos] == 'E') {
    char stage = status[pos + 1];
    int err = 0;
    std::memcpy(&err, status.data() + pos + 2, sizeof(int));
    int wstatus = 0;
    ::waitpid(pid, &wstatus, 0);
    ::close(s.stdin_fd);
    ::close(s.stdout_fd);
    ::close(s.stderr_fd);
    const char* what = stage == stage_exec     ? "exec"
                       : stage == stage_chdir  ? "chdir"
                       : stage == stage_limits ? "setrlimit"
                       : stage == stage_cgroup ? "joining the pids cgroup"
                                               : "dup2";
    Errc code = (err == ENOENT || err == ENOTDIR) ? Errc::not_found : Errc::io;
    return fail(code, fmt::format("proc: {} of '{}' failed in the child: {}", what, options.argv[0],
                                  std::strerror(err)));
  }

  if (sandboxed) s.network = NetworkIsolation::network_namespace;
  set_nonblocking(s.stdin_fd);
  set_nonblocking(s.stdout_fd);
  set_nonblocking(s.stderr_fd);
  s.pidfd = open_pidfd(pid);
  return s;
}

// True once the leader has exited; does not reap it (WNOWAIT), so its pid keeps pinning the
// process group for killpg.
bool leader_exited(pid_t pid) {
  siginfo_t info{};
  info.si_pid = 0;
  int rc = ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT);
  if (rc != 0) return errno == ECHILD;  // reaped elsewhere: treat as gone
  return info.si_pid == pid;
}

// Kills what the leader left in its group (and in its cgroup, for a sandboxed child), then reaps
// the leader. Call after leader_exited().
void reap(Spawned& s, ProcResult& result) {
  const pid_t pid = s.pid;
  ::killpg(pid, SIGKILL);
  if (s.cgroup) s.cgroup->kill_all();
  int wstatus = 0;
  pid_t r;
  do r = ::waitpid(pid, &wstatus, 0);
  while (r < 0 && errno == EINTR);
  if (r == pid) {
    if (WIFEXITED(wstatus)) result.exit_code = WEXITSTATUS(wstatus);
    if (WIFSIGNALED(wstatus)) result.term_signal = WTERMSIG(wstatus);
  }
}

// Reads what is available from fd into out (up to cap bytes; the rest is drained and counted as
// truncation). Closes fd on EOF. Returns bytes read.
std::size_t drain(int& fd, std::string& out, std::size_t cap, bool& truncated) {
  char buf[65536];
  std::size_t total = 0;
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n > 0) {
      total += static_cast<std::size_t>(n);
      std::size_t room = cap > out.size() ? cap - out.size() : 0;
      std::size_t keep = std::min(room, static_cast<std::size_t>(n));
      out.append(buf, keep);
      if (keep < static_cast<std::size_t>(n)) truncated = true;
      continue;
    }
    if (n == 0)
      close_fd(fd);
    else if (errno == EINTR)
      continue;
    else if (errno != EAGAIN && errno != EWOULDBLOCK)
      close_fd(fd);
    return total;
  }
}

// Writes as much of `pending` as the pipe takes. Closes fd when done or when the reader is gone.
void feed(int& fd, std::string_view& pending) {
  while (fd >= 0 && !pending.empty()) {
    ssize_t n = write_no_sigpipe(fd, pending.data(), std::min<std::size_t>(pending.size(), 65536));
    if (n > 0) {
      pending.remove_prefix(static_cast<std::size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      return;
    } else {
      close_fd(fd);  // EPIPE: the child does not read its stdin; that is its business
      return;
    }
  }
}

// Waits for leader exit with pidfd when we have one, else a short sleep.
void wait_for_exit_or(int pidfd, Clock::time_point until) {
  if (pidfd >= 0) {
    pollfd p{pidfd, POLLIN, 0};
    ::poll(&p, 1, ms_until(until));
  } else {
    ::poll(nullptr, 0, std::min(10, ms_until(until)));
  }
}

}  // namespace

const char* network_isolation_name(NetworkIsolation n) noexcept {
  switch (n) {
    case NetworkIsolation::not_requested:
      return "not_requested";
    case NetworkIsolation::network_namespace:
      return "network_namespace";
    case NetworkIsolation::proxy_env_scrubbed:
      return "proxy_env_scrubbed";
  }
  return "?";
}

std::string find_on_path(const std::string& name, const std::string& path_list) {
  std::size_t begin = 0;
  while (begin <= path_list.size()) {
    std::size_t end = path_list.find(':', begin);
    if (end == std::string::npos) end = path_list.size();
    std::string dir = path_list.substr(begin, end - begin);
    if (!dir.empty() && is_executable_file(dir + "/" + name)) return dir + "/" + name;
    begin = end + 1;
  }
  return {};
}

const std::vector<std::string>& proxy_env_names() {
  static const std::vector<std::string> names = {
      "http_proxy", "https_proxy", "ftp_proxy", "all_proxy", "no_proxy",
      "HTTP_PROXY", "HTTPS_PROXY", "FTP_PROXY", "ALL_PROXY", "NO_PROXY"};
  return names;
}

Expected<ProcResult> run(const RunOptions& options) {
  const auto t0 = Clock::now();
  auto spawned = spawn(options);
  if (!spawned) return tl::unexpected(spawned.error());
  Spawned s = *spawned;

  ProcResult result;
  result.network = s.network;
  std::string_view pending_in = options.stdin_bytes;
  if (pending_in.empty()) close_fd(s.stdin_fd);

  const bool has_deadline = options.timeout_s > 0;
  const auto deadline = after(options.timeout_s);
  // Clock::time_point::max() means "not armed" (std::optional trips -Wmaybe-uninitialized).
  const auto never = Clock::time_point::max();
  auto kill_at = never;      // SIGKILL time after a deadline SIGTERM
  auto drain_until = never;  // set once the leader is gone
  bool leader_done = false;

  for (;;) {
    if (!leader_done && leader_exited(s.pid)) {
      leader_done = true;
      ::killpg(s.pid, SIGKILL);  // leftovers in the group die now; the pipes then close
      if (s.cgroup) s.cgroup->kill_all();
      // A descendant that escaped the group (setsid) may hold a pipe open: bound the drain.
      drain_until = after(0.25);
    }
    if (leader_done && s.stdout_fd < 0 && s.stderr_fd < 0) break;
    if (Clock::now() >= drain_until) break;

    if (has_deadline && !result.timed_out && !leader_done && Clock::now() >= deadline) {
      result.timed_out = true;
      // Descendants that left the group are found while the leader still roots their tree.
      if (s.contain && !s.cgroup) detail::kill_descendants(s.pid, SIGKILL);
      ::killpg(s.pid, SIGTERM);
      kill_at = after(options.kill_grace_s);
    }
    if (!leader_done && Clock::now() >= kill_at) {
      ::killpg(s.pid, SIGKILL);
      kill_at = never;
    }

    pollfd fds[4];
    int nfds = 0;
    auto add = [&](int fd, short events) {
      if (fd >= 0) fds[nfds++] = pollfd{fd, events, 0};
    };
    add(s.stdout_fd, POLLIN);
    add(s.stderr_fd, POLLIN);
    if (!pending_in.empty()) add(s.stdin_fd, POLLOUT);
    if (!leader_done) add(s.pidfd, POLLIN);

    Clock::time_point wake = Clock::now() + std::chrono::milliseconds(s.pidfd >= 0 ? 1000 : 10);
    if (has_deadline && !result.timed_out) wake = std::min(wake, deadline);
    wake = std::min({wake, kill_at, drain_until});
    int rc = ::poll(fds, static_cast<nfds_t>(nfds), ms_until(wake));
    if (rc < 0 && errno != EINTR) break;

    drain(s.stdout_fd, result.stdout_bytes, options.stdout_cap, result.stdout_truncated);
    drain(s.stderr_fd, result.stderr_bytes, options.stderr_cap, result.stderr_truncated);
    if (!pending_in.empty()) {
      feed(s.stdin_fd, pending_in);
      if (pending_in.empty()) close_fd(s.stdin_fd);
    }
  }

  reap(s, result);
  s.cgroup.reset();
  close_fd(s.stdin_fd);
  close_fd(s.stdout_fd);
  close_fd(s.stderr_fd);
  close_fd(s.pidfd);
  result.wall_s = seconds_since(t0);
  return result;
}

// ---------------------------------------------------------------------------------------------
// ChildProcess

struct ChildProcess::State {
  Spawned s;
  Clock::time_point t0;
  std::size_t line_cap = 0;
  std::size_t stderr_cap = 0;
  std::string stdout_buffer;  // bytes read but not yet returned as lines
  std::string stderr_text;
  bool stderr_truncated = false;
  bool reaped = false;
  ProcResult result;

  ~State() {
    if (!reaped) stop(0.5);
  }

  // One poll round: moves bytes between the pipes and our buffers for at most `wait_ms`.
  void pump(int wait_ms, std::string_view* to_write) {
    pollfd fds[4];
    int nfds = 0;
    auto add = [&](int fd, short events) {
      if (fd >= 0) fds[nfds++] = pollfd{fd, events, 0};
    };
    const bool room_for_stdout = stdout_buffer.size() <= line_cap;
    if (room_for_stdout) add(s.stdout_fd, POLLIN);
    add(s.stderr_fd, POLLIN);
    if (to_write && !to_write->empty()) add(s.stdin_fd, POLLOUT);
    if (nfds == 0) {
      ::poll(nullptr, 0, wait_ms);
      return;
    }
    if (::poll(fds, static_cast<nfds_t>(nfds), wait_ms) <= 0) return;
    bool unused = false;
    if (room_for_stdout && s.stdout_fd >= 0)
      drain(s.stdout_fd, stdout_buffer, line_cap + 1, unused);
    if (s.stderr_fd >= 0) drain(s.stderr_fd, stderr_text, stderr_cap, stderr_truncated);
    if (to_write && !to_write->empty()) feed(s.stdin_fd, *to_write);
  }

  bool check_exited() {
    if (reaped) return true;
    if (!leader_exited(s.pid)) return false;
    finish();
    return true;
  }

  void finish() {
    // Pick up what the leader wrote before it exited, then kill leftovers and reap.
    bool unused = false;
    if (s.stdout_fd >= 0) drain(s.stdout_fd, stdout_buffer, line_cap + 1, unused);
    if (s.stderr_fd >= 0) drain(s.stderr_fd, stderr_text, stderr_cap, stderr_truncated);
    reap(s, result);
    s.cgroup.reset();
    reaped = true;
    close_fd(s.stdin_fd);
    close_fd(s.pidfd);
    result.wall_s = seconds_since(t0);
    result.network = s.network;
    result.stderr_bytes = stderr_text;
    result.stderr_truncated = stderr_truncated;
  }

  ProcResult stop(double grace_s) {
    if (reaped) return result;
    if (!leader_exited(s.pid)) {
      ::killpg(s.pid, SIGTERM);
      auto kill_at = after(grace_s);
      while (!leader_exited(s.pid) && Clock::now() < kill_at) wait_for_exit_or(s.pidfd, kill_at);
      if (!leader_exited(s.pid)) {
        ::killpg(s.pid, SIGKILL);
        siginfo_t info{};
        ::waitid(P_PID, static_cast<id_t>(s.pid), &info, WEXITED | WNOWAIT);
      }
    }
    finish();
    close_fd(s.stdout_fd);
    close_fd(s.stderr_fd);
    return result;
  }
};

ChildProcess::ChildProcess(std::unique_ptr<State> state) : state_(std::move(state)) {}
ChildProcess::ChildProcess(ChildProcess&&) noexcept = default;
ChildProcess& ChildProcess::operator=(ChildProcess&&) noexcept = default;
ChildProcess::~ChildProcess() = default;

Expected<ChildProcess> ChildProcess::start(const RunOptions& options) {
  auto spawned = spawn(options);
  if (!spawned) return tl::unexpected(spawned.error());
  auto state = std::make_unique<State>();
  state->s = *spawned;
  state->t0 = Clock::now();
  state->line_cap = std::max<std::size_t>(options.stdout_cap, 1);
  state->stderr_cap = options.stderr_cap;
  if (!options.stdin_bytes.empty()) {
    std::string_view pending = options.stdin_bytes;
    auto deadline = after(5.0);
    while (!pending.empty() && state->s.stdin_fd >= 0 && Clock::now() < deadline)
      state->pump(ms_until(deadline), &pending);
  }
  return ChildProcess(std::move(state));
}

pid_t ChildProcess::pid() const {
  return state_ ? state_->s.pid : -1;
}
NetworkIsolation ChildProcess::network() const {
  return state_ ? state_->s.network : NetworkIsolation::not_requested;
}

bool ChildProcess::is_running() {
  return state_ && !state_->check_exited();
}

Expected<std::string> ChildProcess::read_line(double timeout_s) {
  TS_CHECK(state_ != nullptr, "read_line on a moved-from ChildProcess");
  State& st = *state_;
  const auto deadline = after(timeout_s);
  for (;;) {
    if (auto nl = st.stdout_buffer.find('\n'); nl != std::string::npos) {
      std::string line = st.stdout_buffer.substr(0, nl);
      st.stdout_buffer.erase(0, nl + 1);
      return line;
    }
    if (st.stdout_buffer.size() > st.line_cap)
      return fail(Errc::io,
                  fmt::format("proc: child stdout line longer than {} bytes", st.line_cap));
    if (st.s.stdout_fd < 0) {
      if (!st.stdout_buffer.empty()) {
        std::string line = std::move(st.stdout_buffer);
        st.stdout_buffer.clear();
        return line;
      }
      // stdout is closed: wait briefly for the exit so the message can say how it ended.
      auto grace = std::min(deadline, after(0.5));
      while (!st.check_exited() && Clock::now() < grace) wait_for_exit_or(st.s.pidfd, grace);
      std::string how = st.reaped ? (st.result.term_signal
                                         ? fmt::format("killed by signal {}", st.result.term_signal)
                                         : fmt::format("exit code {}", st.result.exit_code))
                                  : "still running";
      return fail(Errc::crashed, fmt::format("proc: child {} closed stdout ({}); stderr: {}",
                                             st.s.pid, how, st.stderr_text.substr(0, 2000)));
    }
    if (Clock::now() >= deadline)
      return fail(Errc::timeout,
                  fmt::format("proc: no line from child {} within {:.3f} s", st.s.pid, timeout_s));
    st.pump(ms_until(deadline), nullptr);
  }
}

Expected<void> ChildProcess::write_stdin(std::string_view bytes, double timeout_s) {
  TS_CHECK(state_ != nullptr, "write_stdin on a moved-from ChildProcess");
  State& st = *state_;
  const auto deadline = after(timeout_s);
  while (!bytes.empty()) {
    if (st.s.stdin_fd < 0)
      return fail(Errc::crashed, fmt::format("proc: child {} stdin is closed", st.s.pid));
    if (Clock::now() >= deadline)
      return fail(Errc::timeout, fmt::format("proc: child {} did not take {} bytes of stdin "
                                             "within {:.3f} s",
                                             st.s.pid, bytes.size(), timeout_s));
    // Pumping stdout/stderr while writing: a child blocked on a full stdout pipe never reads.
    st.pump(ms_until(deadline), &bytes);
  }
  return {};
}

void ChildProcess::close_stdin() {
  if (state_) close_fd(state_->s.stdin_fd);
}

const std::string& ChildProcess::stderr_bytes() const {
  TS_CHECK(state_ != nullptr, "stderr_bytes on a moved-from ChildProcess");
  return state_->stderr_text;
}

ProcResult ChildProcess::stop(double grace_s) {
  TS_CHECK(state_ != nullptr, "stop on a moved-from ChildProcess");
  return state_->stop(grace_s);
}

Expected<ProcResult> ChildProcess::wait(double timeout_s) {
  TS_CHECK(state_ != nullptr, "wait on a moved-from ChildProcess");
  State& st = *state_;
  const auto deadline = after(timeout_s);
  while (!st.check_exited()) {
    if (Clock::now() >= deadline)
      return fail(Errc::timeout,
                  fmt::format("proc: child {} still running after {:.3f} s", st.s.pid, timeout_s));
    // Keep the pipes moving so a chatty child can reach its exit; poll wakes on pidfd too.
    if (st.s.pidfd >= 0 && st.s.stdout_fd < 0 && st.s.stderr_fd < 0)
      wait_for_exit_or(st.s.pidfd, deadline);
    else
      st.pump(std::min(ms_until(deadline), 20), nullptr);
  }
  ProcResult r = st.result;
  r.stdout_bytes = st.stdout_buffer;
  return r;
}

}  // namespace ts::proc
