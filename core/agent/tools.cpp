// The tools offered to the model: their JSON schemas and what each does on the host.
#include <algorithm>

#include <fmt/format.h>

#include "prompts.hpp"
#include "run_context.hpp"
#include "subprocess.hpp"
#include "ts/agent/patch.hpp"

namespace ts::agent::detail {

using json = nlohmann::json;

json report_json(const EvalReport& r) {
  json correctness = json::array();
  for (const auto& c : r.correctness)
    correctness.push_back(
        {{"input_class", c.input_class}, {"passed", c.passed}, {"detail", c.detail}});
  return {{"verdict", r.verdict == Verdict::accepted ? "accepted" : "rejected"},
          {"reason", r.reason},
          {"speedup", r.speedup},
          {"correctness", correctness},
          {"timing",
           {{"original_ms", r.timing.original_ms},
            {"candidate_ms", r.timing.candidate_ms},
            {"spread_pct", r.timing.spread_pct},
            {"pairs", r.timing.pairs}}}};
}

namespace {

const ToolSpec kReadAttempt{
    "read_attempt",
    "Show the current attempt: the base this loop improves (which=base, the default when there "
    "is no candidate yet) or your current candidate (which=candidate).",
    R"js({"type":"object","properties":{"which":{"type":"string","enum":["base","candidate"]}},"additionalProperties":false})js"};
const ToolSpec kWriteCandidate{
    "write_candidate",
    "Replace the candidate. Give exactly one of: content (the whole file) or diff (a unified "
    "diff against the current candidate, or the base when there is none).",
    R"js({"type":"object","properties":{"content":{"type":"string","description":"the whole file"},"diff":{"type":"string","description":"a unified diff (@@ -a,b +c,d @@ hunks)"}},"additionalProperties":false})js"};
const ToolSpec kEvaluate{
    "evaluate",
    "Run the host evaluation of the current candidate: correctness per input class, paired "
    "timing against the original, speedup, verdict and reason. Acceptance ends the loop.",
    R"js({"type":"object","properties":{},"additionalProperties":false})js"};
const ToolSpec kProfile{"profile",
                        "Per-kernel times (ms) of the original and the current candidate.",
                        R"js({"type":"object","properties":{},"additionalProperties":false})js"};
const ToolSpec kShell{
    "shell",
    "Run a shell command (/bin/sh -c) in the track's directory, without network, with a "
    "deadline; returns exit code and the start of the combined output.",
    R"js({"type":"object","properties":{"command":{"type":"string"},"timeout_s":{"type":"number","description":"at most the host's limit"}},"required":["command"],"additionalProperties":false})js"};
const ToolSpec kListSpecs{"list_specs", "List the names of the TileOPs specs.",
                          R"js({"type":"object","properties":{},"additionalProperties":false})js"};
const ToolSpec kReadSpec{
    "read_spec", "Read one TileOPs spec (YAML) by name.",
    R"js({"type":"object","properties":{"name":{"type":"string"}},"required":["name"],"additionalProperties":false})js"};
const ToolSpec kStartSubagent{
    "start_subagent",
    "Give a focused brief to a helper agent with the same tools; it shares your budget of "
    "model calls and returns its final report.",
    R"js({"type":"object","properties":{"brief":{"type":"string"}},"required":["brief"],"additionalProperties":false})js"};

std::string error_text(std::string_view message) {
  return json{{"error", message}}.dump();
}

std::string string_arg(const json& args, const char* key) {
  auto it = args.find(key);
  return it != args.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

std::vector<ToolSpec> RunContext::tool_specs(int depth) const {
  std::vector<ToolSpec> tools = {kReadAttempt, kWriteCandidate, kEvaluate, kProfile,
                                 kShell,       kListSpecs,      kReadSpec};
  if (depth < options.max_subagent_depth) tools.push_back(kStartSubagent);
  for (const auto& t : options.extra_tools) tools.push_back(t.spec);
  return tools;
}

EvalReport RunContext::evaluate_candidate() {
  auto rejected_report = [&](std::string reason) {
    EvalReport r;
    r.verdict = Verdict::rejected;
    r.reason = std::move(reason);
    ++rejected;
    return r;
  };
  if (!candidate) return rejected_report("rejected: no candidate has been written in this loop");
  const std::string& text = *candidate;
  if (text == original) return rejected_report("rejected: duplicate of the original attempt");
  for (const auto& a : accepted_texts)
    if (text == a) return rejected_report("rejected: duplicate of an already accepted candidate");
  if (auto it = reports.find(text); it != reports.end()) {
    EvalReport r = it->second;
    r.reason += " (duplicate: this exact candidate was evaluated before)";
    if (r.verdict == Verdict::rejected) ++rejected;
    return r;
  }
  if (auto ok = check_candidate(options.agency, original, text); !ok)
    return rejected_report("rejected: " + ok.error().message);
  auto report = workspace.evaluate(text);
  if (!report) return rejected_report("rejected: the evaluation failed: " + report.error().message);
  reports.emplace(text, *report);
  if (report->verdict == Verdict::accepted)
    pending_accept = *report;
  else
    ++rejected;
  return *report;
}

std::string RunContext::run_tool(const ToolCall& call, int depth) {
  json args = call.arguments.empty() ? json::object() : json::parse(call.arguments, nullptr, false);
  if (!args.is_object())
    return error_text(fmt::format("the arguments of {} are not a JSON object: {:.200}", call.name,
                                  call.arguments));

  if (call.name == "read_attempt") {
    std::string which = string_arg(args, "which");
    if (which == "candidate") {
      if (!candidate) return error_text("there is no candidate yet in this loop; read the base");
      return *candidate;
    }
    return base;
  }
  if (call.name == "write_candidate") {
    bool has_content = args.contains("content"), has_diff = args.contains("diff");
    if (has_content == has_diff)
      return error_text("give exactly one of `content` (whole file) or `diff` (unified diff)");
    std::string text;
    if (has_content) {
      text = string_arg(args, "content");
    } else {
      auto patched = apply_unified_diff(candidate ? *candidate : base, string_arg(args, "diff"));
      if (!patched) return error_text("the diff was not applied: " + patched.error().message);
      text = std::move(*patched);
    }
    if (text.empty()) return error_text("the candidate is empty");
    if (auto ok = check_candidate(options.agency, original, text); !ok)
      return error_text("the candidate was not written: " + ok.error().message);
    if (auto written = workspace.write_candidate(text); !written)
      return error_text("the candidate was not written: " + written.error().message);
    candidate = std::move(text);
    size_t lines = size_t(std::count(candidate->begin(), candidate->end(), '\n'));
    return json{{"written", true}, {"lines", lines}, {"next", "call evaluate"}}.dump();
  }
  if (call.name == "evaluate") return report_json(evaluate_candidate()).dump();
  if (call.name == "profile") {
    auto times = workspace.profile(candidate ? *candidate : base);
    if (!times) return error_text("profile failed: " + times.error().message);
    json rows = json::array();
    for (const auto& k : *times)
      rows.push_back({{"kernel", k.kernel},
                      {"original_ms", k.original_ms ? json(*k.original_ms) : json(nullptr)},
                      {"candidate_ms", k.candidate_ms ? json(*k.candidate_ms) : json(nullptr)}});
    return rows.dump();
  }
  if (call.name == "shell") {
    std::string command = string_arg(args, "command");
    if (command.empty()) return error_text("shell needs a non-empty `command`");
    auto timeout = options.shell.timeout;
    if (auto t = args.find("timeout_s"); t != args.end() && t->is_number() && t->get<double>() > 0)
      timeout = std::min(
          timeout, std::chrono::milliseconds(static_cast<long long>(t->get<double>() * 1000)));
    SpawnSpec spec{"/bin/sh", {"-c", command}, workspace.track_dir(), /*isolate_network=*/true};
    auto run = run_captured(spec, timeout, options.shell.output_cap);
    if (!run) return error_text("the command could not run: " + run.error().message);
    return json{{"exit_code", run->exit_code},
                {"timed_out", run->timed_out},
                {"output", run->output},
                {"bytes_cut", run->dropped}}
        .dump(-1, ' ', false, json::error_handler_t::replace);
  }
  if (call.name == "list_specs") return json(workspace.list_specs()).dump();
  if (call.name == "read_spec") {
    auto spec = workspace.read_spec(string_arg(args, "name"));
    return spec ? *spec : error_text(spec.error().message);
  }
  if (call.name == "start_subagent" && depth < options.max_subagent_depth) {
    std::string brief = string_arg(args, "brief");
    if (brief.empty()) return error_text("start_subagent needs a non-empty `brief`");
    std::string label = fmt::format("sub{}", ++subagents);
    std::vector<Message> messages = {
        system_message(
            std::string(prompt("system.v1")) + "\n" +
            std::string(prompt(fmt::format("agency_{}.v1", agency_name(options.agency)))) + "\n" +
            std::string(prompt("subagent.v1"))),
        user_message("Brief from the agent:\n" + brief)};
    TurnEnd end = run_turn(messages, depth + 1, label);
    switch (end.kind) {
      case TurnEnd::Kind::final_answer:
        return json{{"subagent_report", end.text}}.dump();
      case TurnEnd::Kind::accepted:
        return json{{"subagent_report", "the host accepted the candidate the subagent evaluated"}}
            .dump();
      case TurnEnd::Kind::budget_spent:
        return error_text("the subagent stopped: the model-call budget is spent");
      case TurnEnd::Kind::failed:
        return error_text("the subagent failed: " + end.text);
    }
  }
  for (const auto& t : options.extra_tools) {
    if (t.spec.name != call.name) continue;
    auto out = t.run(call.arguments);
    return out ? *out : error_text(out.error().message);
  }
  return error_text(fmt::format("there is no tool named '{}'", call.name));
}

}  // namespace ts::agent::detail
