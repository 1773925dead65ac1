// Child processes with deadlines, output caps and process-group kill.
//
// The gate never runs candidate code in its own process: a worker child does, and this file is
// how the host starts it, feeds it, bounds it in time and output, and makes sure nothing it
// spawned survives it (a candidate could otherwise push its work to a background process that
// keeps running after the timed region).
//
//   ts::proc::RunOptions opt;
//   opt.argv = {"python3", "-c", "print(1)"};
//   opt.timeout_s = 10;
//   auto r = ts::proc::run(opt);          // Expected<ProcResult>
//   if (r && r->succeeded()) use(r->stdout_bytes);
//
// Every child is the leader of a new process group; on a deadline the whole group gets SIGTERM,
// then SIGKILL after `kill_grace_s`. When the leader exits on its own, whatever it left running
// in its group is SIGKILLed before run() returns. A descendant that calls setsid() leaves the
// group; for code the host does not trust, `RunOptions::sandbox` runs the child in its own PID
// namespace, which the kernel empties when the child's init ends, whatever it did.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ts/error.hpp"

namespace ts::proc {

/// What `no_network` actually achieved; reported honestly in every result.
enum class NetworkIsolation {
  not_requested,       // no_network was false
  network_namespace,   // unshare(CLONE_NEWNET) succeeded: the child sees only a down loopback
  proxy_env_scrubbed,  // unshare was refused: only the proxy variables (http_proxy, ...) were
                       // removed from the child's environment; the network is still reachable
};
const char* network_isolation_name(NetworkIsolation n) noexcept;

/// Confinement for code the host does not trust: the model's shell commands and candidate code in
/// the gate worker. bubblewrap (`bwrap`, from Debian's bubblewrap) builds it: new user, PID,
/// network, IPC and UTS namespaces, every capability dropped, the whole filesystem read-only,
/// `hidden` paths covered (directories by an empty read-only tmpfs, files by /dev/null), a private
/// size-limited /tmp and /dev/shm. Every process the child starts lives in its PID namespace and
/// dies with it. Resource limits are setrlimit values inherited by every descendant; the process
/// count is also held by a pids cgroup where one can be made (root is exempt from RLIMIT_NPROC).
///
///   Sandbox box = Sandbox::untrusted();       // homes, /root, shadow files hidden
///   box.writable = {track + "/scratch"};
///   opt.sandbox = box;                        // the child's env is opt.env and nothing else
struct Sandbox {
  std::vector<std::string> writable;  // bound read-write at the same path
  std::vector<std::string> hidden;    // covered; missing paths are skipped
  std::vector<std::string> readable;  // bound read-only again after hiding (a Python under $HOME)
  std::vector<std::string> devices;   // device nodes passed through (/dev/nvidia0, ...)
  std::size_t tmp_bytes = std::size_t{256} << 20;  // size of the private /tmp and /dev/shm
  // Limits; 0 leaves one unset.
  double cpu_s = 0;                     // RLIMIT_CPU (whole seconds, rounded up)
  std::size_t address_space_bytes = 0;  // RLIMIT_AS
  std::size_t file_bytes = 0;           // RLIMIT_FSIZE: the largest file it may write
  int open_files = 0;                   // RLIMIT_NOFILE
  int processes = 0;                    // RLIMIT_NPROC and the pids cgroup's pids.max

  /// Hidden: the caller's $HOME, /home, /root, /run/user, /var/tmp, /etc/shadow, /etc/gshadow.
  static Sandbox untrusted();
};

/// Nothing when sandboxed runs work here (bwrap found and a trial run confined); else why not, in
/// words for a user. The trial runs once per process and bwrap.
Expected<void> sandbox_available();

/// Nothing when `box.processes` can be enforced here (not root, or a writable pids cgroup); else
/// why not. A sandbox that cannot bound its processes still runs, with every other limit: its
/// processes then end with its PID namespace at the call's end or deadline.
Expected<void> processes_bounded(const Sandbox& box);

struct RunOptions {
  std::vector<std::string> argv;  // argv[0] is looked up in the child's PATH unless it has a '/'
  std::map<std::string, std::string> env;  // the child's environment (on top of the parent's
  bool inherit_env = false;                // when inherit_env; an entry here wins)
  std::string cwd;                         // empty: the parent's working directory
  std::string stdin_bytes;                 // written to the child's stdin, which is then closed
  double timeout_s = 0;                    // wall-clock deadline; 0 means none
  double kill_grace_s = 1.0;               // SIGTERM -> SIGKILL delay on a deadline
  std::size_t stdout_cap = std::size_t{64} << 20;  // keep the first N bytes, drop (and drain)
  std::size_t stderr_cap = std::size_t{16} << 20;  // the rest
  bool no_network = false;         // new network namespace if permitted, else proxy env scrubbed
  std::optional<Sandbox> sandbox;  // requires inherit_env == false; implies no_network
  // Every process the child starts, in any session, is killed when run() returns: tracked by a
  // pids cgroup where one can be made, else found by parentage in /proc at the deadline (orphans
  // of a leader that exited by itself are then out of reach).
  bool contain = false;
};

struct ProcResult {
  int exit_code = -1;   // valid when term_signal == 0
  int term_signal = 0;  // the signal that ended the child, 0 if it exited
  bool timed_out = false;
  std::string stdout_bytes;
  std::string stderr_bytes;
  bool stdout_truncated = false;
  bool stderr_truncated = false;
  double wall_s = 0;
  NetworkIsolation network = NetworkIsolation::not_requested;

  bool succeeded() const { return !timed_out && term_signal == 0 && exit_code == 0; }
};

/// Runs a child to completion. Spawn failures (no such executable, bad cwd) are Errors;
/// a child that fails, crashes or times out is a ProcResult saying so.
Expected<ProcResult> run(const RunOptions& options);

/// The first executable regular file named `name` in a PATH-style list, or empty. Empty entries
/// are skipped (they would mean the working directory).
std::string find_on_path(const std::string& name, const std::string& path_list);

/// Names the proxy variables that `no_network` removes when the namespace is not available.
const std::vector<std::string>& proxy_env_names();

/// A long-lived child (a private proxy server, a gate worker speaking JSON lines). Its stdout is
/// read line by line; its stderr is drained in the background of every call into a capped
/// buffer so that it can never block on a full stderr pipe. The destructor stops the whole
/// process group. `timeout_s` in the options is ignored here; each call takes its own deadline.
class ChildProcess {
 public:
  static Expected<ChildProcess> start(const RunOptions& options);

  ChildProcess(ChildProcess&&) noexcept;
  ChildProcess& operator=(ChildProcess&&) noexcept;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess();

  pid_t pid() const;
  NetworkIsolation network() const;
  bool is_running();

  /// The next line of stdout without its '\n'. Errors: timeout (no full line before the
  /// deadline; what was read stays buffered), crashed (stdout closed: the child exited or
  /// closed it; a last unterminated line is still returned first).
  Expected<std::string> read_line(double timeout_s);

  /// Writes all bytes to the child's stdin within the deadline.
  Expected<void> write_stdin(std::string_view bytes, double timeout_s);
  void close_stdin();

  /// What the child wrote to stderr so far (first `stderr_cap` bytes).
  const std::string& stderr_bytes() const;

  /// SIGTERM to the group, SIGKILL after grace_s, reap. Returns how the leader ended.
  /// Idempotent: a second call returns the first result.
  ProcResult stop(double grace_s = 1.0);

  /// Waits up to timeout_s for the leader to exit by itself (then kills leftovers in its group).
  Expected<ProcResult> wait(double timeout_s);

 private:
  struct State;
  explicit ChildProcess(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace ts::proc
