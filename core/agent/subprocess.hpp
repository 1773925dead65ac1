// Child processes for the agent: the shell tool and the private cliproxyapi. Small on purpose;
// the lead folds this onto core/proc later. Internal header (namespace ts::agent::detail).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "ts/error.hpp"

namespace ts::agent::detail {

struct SpawnSpec {
  std::filesystem::path executable;  // absolute or relative path, not searched on PATH
  std::vector<std::string> args;     // argv[1..]
  std::filesystem::path cwd;         // empty: inherit
  bool isolate_network = false;      // new network namespace: only a downed loopback
  bool capture_output = false;       // stdout+stderr into a pipe, else /dev/null
};

struct Spawned {
  pid_t pid = -1;      // also the process group id
  int output_fd = -1;  // read end when capture_output
};

/// fork + exec in a new process group. Errc::io when fork/exec plumbing fails.
Expected<Spawned> spawn(const SpawnSpec& spec);

/// SIGTERM to the whole group, SIGKILL after `grace`, then reaps the leader.
void stop_process_group(pid_t pid, std::chrono::milliseconds grace);

struct CapturedRun {
  int exit_code = -1;  // -signal when killed by a signal
  bool timed_out = false;
  std::string output;       // first `cap` bytes of stdout+stderr
  std::size_t dropped = 0;  // bytes beyond the cap
};

/// Runs to completion or deadline (then kills the group). Errc::io if it cannot start.
Expected<CapturedRun> run_captured(SpawnSpec spec, std::chrono::milliseconds timeout,
                                   std::size_t cap);

/// First executable file named `name` on a PATH string, or empty.
std::filesystem::path find_on_path(const std::string& name, const std::string& path_var);

}  // namespace ts::agent::detail
