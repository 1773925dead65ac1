// The sandbox: bwrap's command line, resource limits and a pids cgroup. See ts/proc/proc.hpp.
//
// What each bwrap argument is for:
//   --unshare-all            user, PID, network, IPC, UTS (and cgroup) namespaces: no network
//                            but a downed loopback, no view of the host's processes
//   --cap-drop ALL           no capability even when the caller is root (root keeps them all
//                            inside bwrap otherwise, and could remount the read-only view)
//   --die-with-parent        the namespace's init is killed when bwrap is, so a deadline kill of
//                            the process group ends everything inside
//   --new-session            no controlling terminal to push keystrokes into (TIOCSTI)
//   --ro-bind / /            the host's filesystem, read-only; then hidden paths covered, the
//                            readable ones bound back, the writable ones bound read-write
#include "sandbox.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <string_view>
#include <thread>

#include <fmt/format.h>

namespace ts::proc {
namespace detail {
namespace {

bool is_dir(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool exists(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0;
}

}  // namespace

std::string find_bwrap() {
  if (const char* p = std::getenv("TILESMITH_BWRAP"); p && *p) return p;
  const char* path = std::getenv("PATH");
  return find_on_path("bwrap", std::string(path ? path : "") + ":/usr/bin:/bin");
}

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool write_file(const std::string& path, const std::string& text) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  return ok;
}

// Directories where a child cgroup with pids.max could be made, from /proc/self/cgroup.
std::vector<std::string> pids_cgroup_parents() {
  std::vector<std::string> out;
  std::istringstream lines(read_file("/proc/self/cgroup"));
  for (std::string line; std::getline(lines, line);) {
    auto c1 = line.find(':'), c2 = line.find(':', c1 + 1);
    if (c1 == std::string::npos || c2 == std::string::npos) continue;
    std::string controllers = line.substr(c1 + 1, c2 - c1 - 1), path = line.substr(c2 + 1);
    if (path == "/") path.clear();
    if (controllers.empty()) {  // cgroup v2: pids must be enabled for children
      for (const char* root : {"/sys/fs/cgroup", "/sys/fs/cgroup/unified"}) {
        std::string dir = root + path;
        if (read_file(dir + "/cgroup.subtree_control").find("pids") != std::string::npos)
          out.push_back(dir);
      }
    } else if (("," + controllers + ",").find(",pids,") != std::string::npos) {
      out.push_back("/sys/fs/cgroup/pids" + path);
    }
  }
  return out;
}

// Processes this uid owns now: RLIMIT_NPROC counts all of them, not only the sandbox's.
int processes_of_uid(uid_t uid) {
  int n = 0;
  DIR* d = ::opendir("/proc");
  if (!d) return 0;
  while (dirent* e = ::readdir(d)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    struct stat st {};
    if (::stat(fmt::format("/proc/{}", e->d_name).c_str(), &st) == 0 && st.st_uid == uid) ++n;
  }
  ::closedir(d);
  return n;
}

}  // namespace

Expected<std::vector<std::string>> sandbox_argv(const Sandbox& box, const std::string& cwd,
                                                const std::vector<std::string>& argv) {
  std::string bwrap = find_bwrap();
  if (bwrap.empty())
    return fail(Errc::unavailable,
                "bubblewrap (bwrap) is not installed: install Debian's 'bubblewrap' package, or "
                "set TILESMITH_BWRAP to its path");
  std::vector<std::string> a = {
      bwrap,           "--unshare-all", "--cap-drop", "ALL", "--die-with-parent",
      "--new-session", "--ro-bind",     "/",          "/",   "--dev",
      "/dev",          "--proc",        "/proc"};
  const std::string tmp_size = std::to_string(box.tmp_bytes);
  for (const char* dir : {"/tmp", "/dev/shm"})
    a.insert(a.end(), {"--size", tmp_size, "--tmpfs", dir});
  for (const auto& h : box.hidden) {
    if (is_dir(h))
      a.insert(a.end(), {"--tmpfs", h});
    else if (exists(h))
      a.insert(a.end(), {"--ro-bind", "/dev/null", h});
  }
  for (const auto& r : box.readable)
    if (exists(r)) a.insert(a.end(), {"--ro-bind", r, r});
  // A readable path above a hidden one (a script run from /tmp puts /tmp on the Python path,
  // above a HOME there) would bring the hidden one back: hide it again on top.
  auto within = [](const std::string& path, const std::string& dir) {
    return path == dir || (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
                           (dir.back() == '/' || path[dir.size()] == '/'));
  };
  for (const auto& h : box.hidden) {
    if (!is_dir(h)) continue;
    for (const auto& r : box.readable)
      if (exists(r) && within(h, r)) {
        a.insert(a.end(), {"--tmpfs", h});
        break;
      }
  }
  for (const auto& w : box.writable) {
    if (!is_dir(w))
      return fail(Errc::not_found, fmt::format("sandbox: writable '{}' is not a directory", w));
    a.insert(a.end(), {"--bind", w, w});
  }
  for (const auto& d : box.devices)
    if (exists(d)) a.insert(a.end(), {"--dev-bind", d, d});
  // The empty directories over hidden paths take no writes (they would be unbounded memory).
  for (const auto& h : box.hidden)
    if (is_dir(h)) a.insert(a.end(), {"--remount-ro", h});
  if (!cwd.empty()) a.insert(a.end(), {"--chdir", cwd});
  a.push_back("--");
  a.insert(a.end(), argv.begin(), argv.end());
  return a;
}

Limits Limits::of(const Sandbox& box) {
  Limits l;
  // A limit above the hard one cannot be set without privilege: the hard one then stands.
  auto add = [&](int resource, double value) {
    if (!(value > 0)) return;
    auto v = static_cast<rlim_t>(value);
    rlimit now{};
    if (::getrlimit(resource, &now) == 0 && now.rlim_max != RLIM_INFINITY)
      v = std::min(v, now.rlim_max);
    l.add(resource, v);
  };
  add(RLIMIT_CPU, std::ceil(box.cpu_s));
  add(RLIMIT_AS, static_cast<double>(box.address_space_bytes));
  add(RLIMIT_FSIZE, static_cast<double>(box.file_bytes));
  add(RLIMIT_NOFILE, box.open_files);
  return l;
}

bool Limits::apply() const noexcept {
  for (int i = 0; i < count; ++i) {
    rlimit r{entries[i].value, entries[i].value};
    if (::setrlimit(entries[i].resource, &r) != 0) return false;
  }
  return true;
}

std::unique_ptr<PidsCgroup> PidsCgroup::create(int max_pids) {
  static std::atomic<unsigned> counter{0};
  for (const auto& parent : pids_cgroup_parents()) {
    std::string dir = fmt::format("{}/tilesmith-sandbox-{}-{}", parent, ::getpid(), counter++);
    if (::mkdir(dir.c_str(), 0700) != 0) continue;
    int fd = -1;
    if (write_file(dir + "/pids.max", std::to_string(max_pids)))
      fd = ::open((dir + "/cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC);
    if (fd >= 0) return std::unique_ptr<PidsCgroup>(new PidsCgroup(dir, fd));
    ::rmdir(dir.c_str());
  }
  return nullptr;
}

void PidsCgroup::kill_all() {
  for (int round = 0; round < 400; ++round) {  // 2 s at most
    std::istringstream pids(read_file(dir_ + "/cgroup.procs"));
    bool any = false;
    for (pid_t pid; pids >> pid;) {
      ::kill(pid, SIGKILL);
      any = true;
    }
    if (!any) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

PidsCgroup::~PidsCgroup() {
  if (procs_fd_ >= 0) ::close(procs_fd_);
  kill_all();
  for (int i = 0; i < 100 && ::rmdir(dir_.c_str()) != 0 && errno == EBUSY; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

void kill_descendants(pid_t root, int sig) {
  std::map<pid_t, pid_t> parent;
  if (DIR* d = ::opendir("/proc")) {
    while (dirent* e = ::readdir(d)) {
      if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
      std::string stat = read_file(fmt::format("/proc/{}/stat", e->d_name));
      auto close = stat.rfind(')');
      if (close == std::string::npos) continue;
      std::istringstream rest(stat.substr(close + 2));
      char state;
      pid_t ppid;
      if (rest >> state >> ppid) parent[std::atoi(e->d_name)] = ppid;
    }
    ::closedir(d);
  }
  std::vector<std::pair<int, pid_t>> doomed;  // (depth, pid)
  for (const auto& [pid, ppid] : parent) {
    int depth = 1;
    for (pid_t p = ppid; p > 1 && depth < 4096; ++depth) {
      if (p == root) {
        doomed.push_back({depth, pid});
        break;
      }
      auto it = parent.find(p);
      if (it == parent.end()) break;
      p = it->second;
    }
  }
  std::sort(doomed.rbegin(), doomed.rend());
  for (const auto& [depth, pid] : doomed) ::kill(pid, sig);
}

}  // namespace detail

Sandbox Sandbox::untrusted() {
  Sandbox box;
  // A HOME of "/" (some service accounts) would hide everything: the fixed list covers homes.
  if (const char* home = std::getenv("HOME"); home && *home && std::string_view(home) != "/")
    box.hidden.push_back(home);
  for (const char* p :
       {"/home", "/root", "/run/user", "/var/tmp", "/etc/shadow", "/etc/gshadow", "/etc/ssh"})
    box.hidden.push_back(p);
  return box;
}

namespace {

// A confined shell that must find / read-only.
Expected<void> trial_run() {
  RunOptions opt;
  opt.argv = {"/bin/sh", "-c", "test ! -w /"};
  opt.env = {{"PATH", "/usr/bin:/bin"}};
  opt.sandbox = Sandbox::untrusted();
  opt.timeout_s = 30;
  auto r = run(opt);
  if (!r) return tl::unexpected(r.error());
  if (!r->succeeded())
    return fail(Errc::unavailable,
                fmt::format("the sandbox does not start here (bwrap exit {}, signal {}): {}",
                            r->exit_code, r->term_signal, r->stderr_bytes.substr(0, 400)));
  return {};
}

}  // namespace

Expected<void> sandbox_available() {
  // One trial per bwrap per process.
  static std::mutex mutex;
  static std::map<std::string, Expected<void>> trials;
  const std::string bwrap = detail::find_bwrap();
  std::lock_guard lock(mutex);
  auto known = trials.find(bwrap);
  if (known == trials.end()) known = trials.emplace(bwrap, trial_run()).first;
  return known->second;
}

Expected<void> processes_bounded(const Sandbox& box) {
  if (box.processes > 0 && ::geteuid() == 0 && !detail::PidsCgroup::create(box.processes))
    return fail(Errc::unavailable,
                "running as root with no writable pids cgroup, the number of processes cannot be "
                "bounded (root is exempt from RLIMIT_NPROC)");
  return {};
}

namespace detail {
rlim_t nproc_limit(const Sandbox& box) {
  return static_cast<rlim_t>(processes_of_uid(::getuid()) + box.processes);
}
}  // namespace detail

}  // namespace ts::proc
