// tilesmith._core.agent: the C++ agent runtime driven from Python over a Python
// workspace (ts/agent/workspace.hpp's Workspace).
//
//   from tilesmith._core import agent
//   ok, text = agent.resolve("gpt-5", env=None)       # (True, describe()) or (False, reason)
//   budget = agent.Budget(70)                         # shared by every graph of one compile
//   res = agent.run(workspace, budget, model=None, loops=1, agency="medium", task="",
//                   shell_readable=[sys.prefix], shell_hidden=[cache_root])
//   agent.redact(text)                                # every secret this process knows removed
//
// `workspace` is any Python object with original(), write_candidate(text), evaluate(text) -> dict,
// profile(text) -> list[dict], list_specs(), read_spec(name), track_dir(). A C++ Workspace
// forwards to it, taking the GIL for each call; the GIL is released for the rest of the run (model
// calls, backoff sleeps). A Python exception in a workspace method becomes an error the model sees
// as a tool result; it never unwinds through the agent.
#include <nanobind/nanobind.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "bindings.hpp"
#include "ts/agent/agent.hpp"
#include "ts/agent/provider.hpp"
#include "ts/agent/search.hpp"
#include "ts/agent/secrets.hpp"

namespace nb = nanobind;

namespace ts::python {
namespace {

using agent::EvalReport;
using agent::KernelTime;

/// "ValueError: bad shape" for the exception being handled (GIL held).
std::string describe_python_error(const nb::python_error& e) {
  std::string type = "Exception";
  try {
    type = nb::cast<std::string>(e.type().attr("__name__"));
  } catch (...) {
  }
  std::string text;
  try {
    text = nb::cast<std::string>(nb::str(e.value()));
  } catch (...) {
  }
  return text.empty() ? type : type + ": " + text;
}

/// Why a run must stop: SIGINT seen through Python's signal handlers (the main thread only), or
/// the time budget. A KeyboardInterrupt is kept and raised again once the run has ended.
struct StopState {
  std::optional<std::chrono::steady_clock::time_point> deadline;
  std::optional<nb::python_error> interrupt;  // touched only with the GIL held

  /// GIL released by the caller.
  std::string reason() {
    {
      nb::gil_scoped_acquire gil;
      if (!interrupt && PyErr_CheckSignals() != 0) {
        nb::python_error e;  // takes the pending exception
        if (e.matches(PyExc_KeyboardInterrupt))
          interrupt.emplace(std::move(e));
        else
          e.discard_as_unraisable("tilesmith: a signal handler during optimization");
      }
      if (interrupt) return "interrupted (SIGINT)";
    }
    if (deadline && std::chrono::steady_clock::now() >= *deadline)
      return "the time budget is spent";
    return {};
  }
};

/// Runs `fn` (GIL held by the caller); any exception becomes an Errc::io error naming `method`.
/// A KeyboardInterrupt also stops the run: it is kept in `stop` (see StopState).
template <class F>
auto guarded(const char* method, StopState& stop, F&& fn) -> Expected<decltype(fn())> {
  try {
    if constexpr (std::is_void_v<decltype(fn())>) {
      fn();
      return {};
    } else {
      return fn();
    }
  } catch (nb::python_error& e) {
    if (e.matches(PyExc_KeyboardInterrupt) && !stop.interrupt) {
      stop.interrupt.emplace(std::move(e));
      return fail(Errc::cancelled, fmt::format("workspace.{}() was interrupted", method));
    }
    return fail(Errc::io,
                fmt::format("workspace.{}() raised {}", method, describe_python_error(e)));
  } catch (const std::exception& e) {
    return fail(Errc::io, fmt::format("workspace.{}() failed: {}", method, e.what()));
  }
}

double number_or(nb::handle d, const char* key, double fallback) {
  if (!nb::isinstance<nb::dict>(d)) return fallback;
  nb::dict dict = nb::borrow<nb::dict>(d);
  if (!dict.contains(key)) return fallback;
  nb::object v = dict[key];
  if (v.is_none()) return fallback;
  return nb::cast<double>(v);
}

/// A GateReport.to_dict()-shaped dict (or an object with to_dict()) -> EvalReport.
EvalReport report_from_python(nb::handle obj) {
  nb::object d = nb::borrow(obj);
  if (!nb::isinstance<nb::dict>(d) && nb::hasattr(d, "to_dict")) d = d.attr("to_dict")();
  if (!nb::isinstance<nb::dict>(d))
    throw std::runtime_error("evaluate() must return a dict (GateReport.to_dict()), not " +
                             nb::cast<std::string>(nb::str(d.type())));
  nb::dict dict = nb::borrow<nb::dict>(d);
  EvalReport r;
  std::string verdict = dict.contains("verdict") ? nb::cast<std::string>(dict["verdict"]) : "";
  if (verdict != "accepted" && verdict != "rejected")
    throw std::runtime_error("evaluate() returned verdict '" + verdict +
                             "' (expected 'accepted' or 'rejected')");
  r.verdict = verdict == "accepted" ? agent::Verdict::accepted : agent::Verdict::rejected;
  if (dict.contains("reason")) r.reason = nb::cast<std::string>(nb::str(dict["reason"]));
  r.speedup = number_or(dict, "speedup", 0.0);
  if (dict.contains("correctness") && !dict["correctness"].is_none()) {
    for (nb::handle c : dict["correctness"]) {
      agent::CorrectnessResult cr;
      nb::dict cd = nb::cast<nb::dict>(c);
      if (cd.contains("input_class")) cr.input_class = nb::cast<std::string>(cd["input_class"]);
      if (cd.contains("passed")) cr.passed = nb::cast<bool>(cd["passed"]);
      if (cd.contains("detail")) cr.detail = nb::cast<std::string>(nb::str(cd["detail"]));
      r.correctness.push_back(std::move(cr));
    }
  }
  if (dict.contains("timing") && nb::isinstance<nb::dict>(dict["timing"])) {
    nb::object t = dict["timing"];
    r.timing.original_ms = number_or(t, "original_ms", 0.0);
    r.timing.candidate_ms = number_or(t, "candidate_ms", 0.0);
    r.timing.spread_pct = number_or(t, "spread_pct", 0.0);
    r.timing.pairs = static_cast<int>(number_or(t, "pairs", 0.0));
  }
  return r;
}

nb::dict report_to_python(const EvalReport& r) {
  nb::dict d;
  d["verdict"] = r.verdict == agent::Verdict::accepted ? "accepted" : "rejected";
  d["reason"] = r.reason;
  d["speedup"] = r.speedup;
  nb::list correctness;
  for (const auto& c : r.correctness) {
    nb::dict cd;
    cd["input_class"] = c.input_class;
    cd["passed"] = c.passed;
    cd["detail"] = c.detail;
    correctness.append(cd);
  }
  d["correctness"] = correctness;
  nb::dict t;
  t["original_ms"] = r.timing.original_ms;
  t["candidate_ms"] = r.timing.candidate_ms;
  t["spread_pct"] = r.timing.spread_pct;
  t["pairs"] = r.timing.pairs;
  d["timing"] = t;
  return d;
}

/// The C++ Workspace over a Python object. original() and track_dir() are read once, before the
/// GIL is released; every other method takes the GIL for the duration of the Python call.
class PyWorkspace final : public agent::Workspace {
 public:
  PyWorkspace(nb::object obj, std::string original, std::filesystem::path track_dir,
              StopState& stop)
      : obj_(std::move(obj)),
        original_(std::move(original)),
        track_dir_(std::move(track_dir)),
        stop_(stop) {}

  std::string original() override { return original_; }
  std::filesystem::path track_dir() override { return track_dir_; }

  Expected<void> write_candidate(std::string_view text) override {
    nb::gil_scoped_acquire gil;
    return guarded("write_candidate", stop_,
                   [&] { obj_.attr("write_candidate")(nb::str(text.data(), text.size())); });
  }

  Expected<EvalReport> evaluate(std::string_view candidate) override {
    nb::gil_scoped_acquire gil;
    return guarded("evaluate", stop_, [&] {
      nb::object d = obj_.attr("evaluate")(nb::str(candidate.data(), candidate.size()));
      EvalReport r = report_from_python(d);
      if (!nb::isinstance<nb::dict>(d) && nb::hasattr(d, "to_dict")) d = d.attr("to_dict")();
      full_reports_[std::string(candidate)] = d;  // the complete report, for the result
      return r;
    });
  }

  Expected<std::vector<KernelTime>> profile(std::string_view candidate) override {
    nb::gil_scoped_acquire gil;
    return guarded("profile", stop_, [&] {
      std::vector<KernelTime> out;
      nb::object rows = obj_.attr("profile")(nb::str(candidate.data(), candidate.size()));
      for (nb::handle row : rows) {
        nb::dict d = nb::cast<nb::dict>(row);
        KernelTime k;
        k.kernel = d.contains("kernel") ? nb::cast<std::string>(nb::str(d["kernel"])) : "?";
        if (d.contains("original_ms") && !d["original_ms"].is_none())
          k.original_ms = nb::cast<double>(d["original_ms"]);
        if (d.contains("candidate_ms") && !d["candidate_ms"].is_none())
          k.candidate_ms = nb::cast<double>(d["candidate_ms"]);
        out.push_back(std::move(k));
      }
      return out;
    });
  }

  std::vector<std::string> list_specs() override {
    nb::gil_scoped_acquire gil;
    if (!nb::hasattr(obj_, "list_specs")) return {};
    auto r = guarded("list_specs", stop_,
                     [&] { return nb::cast<std::vector<std::string>>(obj_.attr("list_specs")()); });
    return r ? *r : std::vector<std::string>{};
  }

  Expected<std::string> read_spec(std::string_view name) override {
    nb::gil_scoped_acquire gil;
    if (!nb::hasattr(obj_, "read_spec"))
      return fail(Errc::not_found, "no spec named '" + std::string(name) + "'");
    return guarded("read_spec", stop_, [&] {
      return nb::cast<std::string>(obj_.attr("read_spec")(nb::str(name.data(), name.size())));
    });
  }

  /// The Python report the workspace returned for `text`, else one rebuilt from the C++ report.
  nb::object full_report(const std::string& text, const EvalReport& fallback) const {
    auto it = full_reports_.find(text);
    return it != full_reports_.end() ? it->second : nb::object(report_to_python(fallback));
  }

 private:
  nb::object obj_;
  std::string original_;
  std::filesystem::path track_dir_;
  std::map<std::string, nb::object> full_reports_;  // touched only with the GIL held
  StopState& stop_;
};

agent::EnvMap env_from(const std::optional<std::map<std::string, std::string>>& env) {
  if (!env) return agent::process_env();
  return agent::EnvMap(env->begin(), env->end());
}

nb::dict failed_result(const std::string& reason) {
  nb::dict d;
  d["outcome"] = "failed";
  d["accepted"] = nb::list();
  d["model_calls"] = 0;
  d["rejected_candidates"] = 0;
  d["reason"] = reason;
  d["notes"] = nb::list();
  return d;
}

nb::dict run(nb::object workspace, agent::CallBudget& budget, std::optional<std::string> model,
             int loops, const std::string& agency_text, const std::string& task, bool traces,
             std::optional<std::map<std::string, std::string>> env, std::uint64_t seed,
             std::vector<std::string> shell_readable, std::vector<std::string> shell_hidden,
             std::optional<double> time_budget_s, std::optional<double> model_timeout_s,
             std::optional<int> model_attempts) {
  auto agency = agent::parse_agency(agency_text);
  if (!agency) throw nb::value_error(agency.error().message.c_str());
  if (loops < 1) throw nb::value_error(fmt::format("loops must be >= 1, not {}", loops).c_str());
  if (time_budget_s && !(*time_budget_s > 0))
    throw nb::value_error(fmt::format("time_budget_s must be > 0, not {}", *time_budget_s).c_str());
  if (model_timeout_s && !(*model_timeout_s > 0))
    throw nb::value_error(
        fmt::format("model_timeout_s must be > 0, not {}", *model_timeout_s).c_str());
  if (model_attempts && *model_attempts < 1)
    throw nb::value_error(
        fmt::format("model_attempts must be >= 1, not {}", *model_attempts).c_str());
  StopState stop;
  if (time_budget_s) {
    stop.deadline = std::chrono::steady_clock::now() +
                    std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                        std::chrono::duration<double>(*time_budget_s));
  }

  // The two methods the runtime reads as plain values are read here, with the GIL held; a failure
  // is a failed run, not an exception.
  std::string original;
  std::filesystem::path track_dir;
  if (auto r = guarded("original", stop,
                       [&] { return nb::cast<std::string>(workspace.attr("original")()); }))
    original = std::move(*r);
  else
    return failed_result(r.error().message);
  if (auto r = guarded("track_dir", stop, [&] {
        return nb::cast<std::string>(nb::str(workspace.attr("track_dir")()));
      }))
    track_dir = *r;
  else
    return failed_result(r.error().message);

  agent::EnvMap env_map = env_from(env);
  auto provider = agent::resolve_provider(model, env_map);
  if (!provider) return failed_result(provider.error().message);

  PyWorkspace ws(workspace, std::move(original), std::move(track_dir), stop);
  agent::AgentOptions options;
  options.loops = loops;
  options.agency = *agency;
  options.task = task;
  options.traces = traces;
  options.shell.readable = std::move(shell_readable);
  options.shell.hidden = std::move(shell_hidden);
  options.stop = [&stop] { return stop.reason(); };
  agent::ClientOptions client_options;
  client_options.stop = options.stop;
  if (model_timeout_s) {
    auto t = std::chrono::milliseconds(static_cast<long long>(*model_timeout_s * 1000));
    client_options.first_byte_timeout = client_options.idle_timeout = t;
    client_options.retry_after_cap = std::min(client_options.retry_after_cap, t);
  }
  if (model_attempts) client_options.max_attempts = *model_attempts;
  if (auto it = env_map.find("PATH"); it != env_map.end()) options.shell.path = it->second;

  std::optional<agent::AgentResult> result;
  std::string route_error;
  {
    nb::gil_scoped_release release;  // model calls, proxy start-up, backoff sleeps
    auto route = agent::open_route(std::move(*provider));
    if (!route) {
      route_error = route.error().message;
    } else {
      auto model = agent::make_model((*route)->provider(), client_options, *agency, seed);
      result = agent::run_agent(*model, ws, budget, options);
    }
  }
  if (stop.interrupt) {  // the user's Ctrl-C: raised in their program once the run has ended
    nb::python_error e = std::move(*stop.interrupt);
    stop.interrupt.reset();
    e.restore();
    throw nb::python_error();
  }
  if (!result) return failed_result("the model route did not open: " + route_error);

  nb::dict d;
  d["outcome"] = agent::outcome_name(result->outcome);
  nb::list accepted;
  for (const auto& a : result->accepted) {
    nb::dict ad;
    ad["loop"] = a.loop;
    ad["text"] = a.text;
    ad["report"] = ws.full_report(a.text, a.report);
    accepted.append(ad);
  }
  d["accepted"] = accepted;
  d["model_calls"] = result->model_calls;
  d["rejected_candidates"] = result->rejected_candidates;
  d["reason"] = result->reason;
  nb::list notes;
  for (const auto& n : result->notes) notes.append(n);
  d["notes"] = notes;
  return d;
}

}  // namespace

void bind_agent(nb::module_& m) {
  // A Budget is held by a tilesmith.compile session, which torch.compile's global caches keep
  // alive until interpreter exit; nanobind's exit-time leak report would print into every user
  // program that used Tilesmith. (Reference counting is still checked by the tests' behaviour.)
  nb::set_leak_warnings(false);
  nb::module_ a = m.def_submodule("agent", "The agent runtime (model route, budget, agent loop)");

  a.def(
      "resolve",
      [](std::optional<std::string> model, std::optional<std::map<std::string, std::string>> env) {
        auto p = agent::resolve_provider(model, env_from(env));
        if (!p) return std::make_pair(false, p.error().message);
        return std::make_pair(true, p->describe());
      },
      nb::arg("model") = nb::none(), nb::arg("env") = nb::none(),
      "(True, route description) or (False, why no model or route is available). The API key "
      "is never part of the description.");

  a.def(
      "rewrite_banners",
      [] {
        std::map<std::string, std::string> out;
        for (const auto& r : agent::rewrite_table()) out[r.name] = r.banner;
        return out;
      },
      "The built-in search agent's rewrite kinds and the banner each pastes into a candidate.");
  a.def(
      "redact",
      [](std::string text, std::optional<std::map<std::string, std::string>> env) {
        return agent::Secrets::from(env_from(env)).redact(std::move(text));
      },
      nb::arg("text"), nb::arg("env") = nb::none(),
      "`text` with every secret of the environment (default: this process's) and of the model "
      "login files replaced by \"[redacted]\".");

  nb::class_<agent::CallBudget>(a, "Budget",
                                "The exact number of model invocations, shared by every graph of "
                                "one tilesmith.compile call (None: no cap).")
      .def(
          "__init__",
          [](agent::CallBudget* self, std::optional<int> max_calls) {
            if (max_calls && *max_calls < 0)
              throw nb::value_error(
                  fmt::format("max_calls must be >= 0 or None, not {}", *max_calls).c_str());
            new (self) agent::CallBudget(max_calls);
          },
          nb::arg("max_calls") = nb::none())
      .def_prop_ro("used", &agent::CallBudget::used)
      .def_prop_ro("limit", &agent::CallBudget::limit)
      .def_prop_ro("spent", &agent::CallBudget::spent)
      .def("__repr__", [](const agent::CallBudget& b) {
        return fmt::format("Budget(used={}, limit={})", b.used(),
                           b.limit() ? std::to_string(*b.limit()) : std::string("None"));
      });

  a.def("run", &run, nb::arg("workspace"), nb::arg("budget"), nb::arg("model") = nb::none(),
        nb::arg("loops") = 1, nb::arg("agency") = "medium", nb::arg("task") = "",
        nb::arg("traces") = false, nb::arg("env") = nb::none(), nb::arg("seed") = 0,
        nb::arg("shell_readable") = std::vector<std::string>{},
        nb::arg("shell_hidden") = std::vector<std::string>{}, nb::arg("time_budget_s") = nb::none(),
        nb::arg("model_timeout_s") = nb::none(), nb::arg("model_attempts") = nb::none(),
        "Runs the agent loop on `workspace` until `loops` candidates are accepted, the budget is "
        "spent or the route fails. Returns {outcome, accepted, model_calls, rejected_candidates, "
        "reason, notes}; never raises for model, network or workspace failures, but a Ctrl-C "
        "(SIGINT) stops the run at once and is raised as KeyboardInterrupt once it has ended. "
        "time_budget_s bounds the run's wall time (outcome 'stopped' keeps what was accepted); "
        "model_timeout_s (first byte, silence, longest Retry-After) and model_attempts set the "
        "model calls' patience. `seed` makes the built-in "
        "search agent (model \"tilesmith-search\") deterministic.");
}

}  // namespace ts::python
