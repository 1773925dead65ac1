// Internal to core/proc: the pieces of a sandboxed spawn that proc.cpp puts together.
#pragma once

#include <sys/resource.h>

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "ts/error.hpp"
#include "ts/proc/proc.hpp"

namespace ts::proc::detail {

/// bwrap's path: TILESMITH_BWRAP, else the first on PATH, /usr/bin or /bin; empty if none.
std::string find_bwrap();

/// bwrap's argv (bwrap's absolute path first) that runs `argv` confined by `box` in `cwd`.
Expected<std::vector<std::string>> sandbox_argv(const Sandbox& box, const std::string& cwd,
                                                const std::vector<std::string>& argv);

/// setrlimit values, computed before fork and applied in the child (a raw syscall each).
struct Limits {
  struct Entry {
    int resource;
    rlim_t value;
  };
  std::array<Entry, 5> entries{};
  int count = 0;
  static Limits of(const Sandbox& box);  // all but RLIMIT_NPROC
  void add(int resource, rlim_t value) { entries[count++] = {resource, value}; }
  /// In the child between fork and exec: async-signal-safe. False when one was refused.
  bool apply() const noexcept;
};

/// RLIMIT_NPROC for a sandbox without a cgroup: the processes this uid runs now plus
/// `box.processes` (the limit counts every process of the uid, not only the sandbox's).
rlim_t nproc_limit(const Sandbox& box);

/// Sends `sig` to every process whose chain of parents reaches `root` (not `root` itself), deepest
/// first. Orphans already reparented elsewhere are out of reach: a cgroup is the sure way.
void kill_descendants(pid_t root, int sig);

/// A pids cgroup holding one sandboxed child and everything it starts. The child joins it by
/// writing "0" to `procs_fd` before exec; the destructor kills what is left and removes it.
class PidsCgroup {
 public:
  /// A new cgroup under this process's own (cgroup v2 with pids delegated, else the v1 pids
  /// hierarchy), or null when neither is writable here.
  static std::unique_ptr<PidsCgroup> create(int max_pids);
  ~PidsCgroup();
  PidsCgroup(const PidsCgroup&) = delete;
  PidsCgroup& operator=(const PidsCgroup&) = delete;

  int procs_fd() const { return procs_fd_; }
  /// SIGKILLs every process in the cgroup until it is empty (bounded wait).
  void kill_all();

 private:
  explicit PidsCgroup(std::string dir, int procs_fd) : dir_(std::move(dir)), procs_fd_(procs_fd) {}
  std::string dir_;
  int procs_fd_ = -1;
};

}  // namespace ts::proc::detail
