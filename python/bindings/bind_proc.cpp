// tilesmith._core.proc_run: one child process with a deadline, output caps and group kill.
//   c = tilesmith._core.ChildProcess.start([...]); c.write_stdin(b"...", 5); c.read_line(5);
//   c.stop() r = tilesmith._core.proc_run(["sh", "-c", "echo hi"], timeout_s=5) r.exit_code,
//   r.stdout (bytes), r.timed_out, r.network ("not_requested", ...) box =
//   tilesmith._core.Sandbox.untrusted(); box.writable = [d]; tilesmith._core.sandbox_available()
//   tilesmith._core.proc_run([...], env={...}, sandbox=box)        # confined: see ts/proc/proc.hpp
// Spawn failures raise FileNotFoundError (no such executable or cwd) or tilesmith._core.ProcError.
#include <nanobind/nanobind.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <chrono>

#include "bindings.hpp"
#include "raise_error.hpp"
#include "ts/proc/proc.hpp"

namespace nb = nanobind;

namespace ts::python {

void bind_proc(nb::module_& m) {
  static PyObject* proc_error =
      PyErr_NewException("tilesmith._core.ProcError", PyExc_OSError, nullptr);
  m.attr("ProcError") = nb::handle(proc_error);

  nb::class_<proc::Sandbox>(m, "Sandbox",
                            "Confinement for untrusted code (bubblewrap); see ts/proc/proc.hpp.")
      .def(nb::init<>())
      .def_static("untrusted", &proc::Sandbox::untrusted,
                  "Homes, /root, /run/user, /var/tmp and the shadow files hidden.")
      .def_rw("writable", &proc::Sandbox::writable)
      .def_rw("hidden", &proc::Sandbox::hidden)
      .def_rw("readable", &proc::Sandbox::readable)
      .def_rw("devices", &proc::Sandbox::devices)
      .def_rw("tmp_bytes", &proc::Sandbox::tmp_bytes)
      .def_rw("cpu_s", &proc::Sandbox::cpu_s)
      .def_rw("address_space_bytes", &proc::Sandbox::address_space_bytes)
      .def_rw("file_bytes", &proc::Sandbox::file_bytes)
      .def_rw("open_files", &proc::Sandbox::open_files)
      .def_rw("processes", &proc::Sandbox::processes);
  m.def(
      "sandbox_available",
      []() -> std::optional<std::string> {
        nb::gil_scoped_release unlocked;
        auto ok = proc::sandbox_available();
        if (ok) return std::nullopt;
        return ok.error().message;
      },
      "None when sandboxed runs work here, else why not.");
  m.def(
      "sandbox_processes_bounded",
      [](const proc::Sandbox& box) -> std::optional<std::string> {
        auto ok = proc::processes_bounded(box);
        if (ok) return std::nullopt;
        return ok.error().message;
      },
      nb::arg("box"),
      "None when box.processes can be enforced here, else why not (the sandbox still runs).");

  nb::class_<proc::ProcResult>(m, "ProcResult")
      .def_ro("exit_code", &proc::ProcResult::exit_code)
      .def_ro("term_signal", &proc::ProcResult::term_signal)
      .def_ro("timed_out", &proc::ProcResult::timed_out)
      .def_prop_ro("stdout",
                   [](const proc::ProcResult& r) {
                     return nb::bytes(r.stdout_bytes.data(), r.stdout_bytes.size());
                   })
      .def_prop_ro("stderr",
                   [](const proc::ProcResult& r) {
                     return nb::bytes(r.stderr_bytes.data(), r.stderr_bytes.size());
                   })
      .def_ro("stdout_truncated", &proc::ProcResult::stdout_truncated)
      .def_ro("stderr_truncated", &proc::ProcResult::stderr_truncated)
      .def_ro("wall_s", &proc::ProcResult::wall_s)
      .def_prop_ro(
          "network",
          [](const proc::ProcResult& r) { return proc::network_isolation_name(r.network); })
      .def_prop_ro("succeeded", &proc::ProcResult::succeeded);

  m.def(
      "proc_run",
      [](std::vector<std::string> argv, std::optional<std::map<std::string, std::string>> env,
         bool inherit_env, std::string cwd, nb::bytes stdin_bytes, double timeout_s,
         double kill_grace_s, std::size_t stdout_cap, std::size_t stderr_cap, bool no_network,
         std::optional<proc::Sandbox> sandbox, bool contain) {
        proc::RunOptions o;
        o.sandbox = std::move(sandbox);
        o.contain = contain;
        o.argv = std::move(argv);
        if (env) o.env = std::move(*env);
        o.inherit_env = inherit_env;
        o.cwd = std::move(cwd);
        o.stdin_bytes.assign(stdin_bytes.c_str(), stdin_bytes.size());
        o.timeout_s = timeout_s;
        o.kill_grace_s = kill_grace_s;
        o.stdout_cap = stdout_cap;
        o.stderr_cap = stderr_cap;
        o.no_network = no_network;
        Expected<proc::ProcResult> r = [&] {
          nb::gil_scoped_release unlocked;
          return proc::run(o);
        }();
        return value_or_raise(std::move(r), proc_error);
      },
      nb::arg("argv"), nb::kw_only(), nb::arg("env") = nb::none(), nb::arg("inherit_env") = false,
      nb::arg("cwd") = "", nb::arg("stdin") = nb::bytes("", 0), nb::arg("timeout_s") = 0.0,
      nb::arg("kill_grace_s") = 1.0, nb::arg("stdout_cap") = std::size_t{64} << 20,
      nb::arg("stderr_cap") = std::size_t{16} << 20, nb::arg("no_network") = false,
      nb::arg("sandbox") = nb::none(), nb::arg("contain") = false,
      "Runs argv to completion (the GIL is released meanwhile). env is the child's whole "
      "environment unless inherit_env; timeout_s=0 means no deadline; contain: every process it "
      "started, in any session, is killed when it returns.");
  // A long-lived child speaking lines on stdout (the gate's fork-server worker).
  nb::class_<proc::ChildProcess>(m, "ChildProcess")
      .def_static(
          "start",
          [](std::vector<std::string> argv, std::optional<std::map<std::string, std::string>> env,
             bool inherit_env, std::string cwd, std::size_t stderr_cap, bool no_network,
             std::optional<proc::Sandbox> sandbox) {
            proc::RunOptions o;
            o.sandbox = std::move(sandbox);
            o.argv = std::move(argv);
            if (env) o.env = std::move(*env);
            o.inherit_env = inherit_env;
            o.cwd = std::move(cwd);
            o.stderr_cap = stderr_cap;
            o.no_network = no_network;
            return value_or_raise(proc::ChildProcess::start(o), proc_error);
          },
          nb::arg("argv"), nb::kw_only(), nb::arg("env") = nb::none(),
          nb::arg("inherit_env") = false, nb::arg("cwd") = "",
          nb::arg("stderr_cap") = std::size_t{16} << 20, nb::arg("no_network") = false,
          nb::arg("sandbox") = nb::none())
      .def_prop_ro("pid", &proc::ChildProcess::pid)
      .def_prop_ro(
          "network",
          [](const proc::ChildProcess& c) { return proc::network_isolation_name(c.network()); })
      .def("is_running", &proc::ChildProcess::is_running)
      .def(
          "read_line",
          [](proc::ChildProcess& c, double timeout_s) {
            // In slices, so that a Ctrl-C reaches the program within 0.1 s of a long wait.
            const auto deadline = std::chrono::steady_clock::now() +
                                  std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                      std::chrono::duration<double>(std::max(0.0, timeout_s)));
            for (;;) {
              const double left =
                  std::chrono::duration<double>(deadline - std::chrono::steady_clock::now())
                      .count();
              Expected<std::string> r = [&] {
                nb::gil_scoped_release unlocked;
                return c.read_line(std::clamp(left, 0.0, 0.1));
              }();
              if (r || r.error().code != Errc::timeout || left <= 0.1)
                return value_or_raise(std::move(r), proc_error);
              if (PyErr_CheckSignals() != 0) throw nb::python_error();
            }
          },
          nb::arg("timeout_s"),
          "The next stdout line; TimeoutError past the deadline, ProcError when stdout closed. "
          "A signal handler's exception (KeyboardInterrupt) ends the wait.")
      .def(
          "write_stdin",
          [](proc::ChildProcess& c, nb::bytes data, double timeout_s) {
            std::string bytes(data.c_str(), data.size());
            Expected<void> r = [&] {
              nb::gil_scoped_release unlocked;
              return c.write_stdin(bytes, timeout_s);
            }();
            value_or_raise(std::move(r), proc_error);
          },
          nb::arg("data"), nb::arg("timeout_s"))
      .def("close_stdin", &proc::ChildProcess::close_stdin)
      .def_prop_ro("stderr",
                   [](const proc::ChildProcess& c) {
                     const std::string& s = c.stderr_bytes();
                     return nb::bytes(s.data(), s.size());
                   })
      .def(
          "stop",
          [](proc::ChildProcess& c, double grace_s) {
            nb::gil_scoped_release unlocked;
            return c.stop(grace_s);
          },
          nb::arg("grace_s") = 1.0, "SIGTERM to the group, SIGKILL after grace_s, reap.");
}

}  // namespace ts::python
