// The tools offered to the model: their JSON schemas and what each does on the host.
#include <algorithm>

#include <fmt/format.h>

#include "prompts.hpp"
#include "run_context.hpp"
#include "search_internal.hpp"
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
    "Show a page of the current attempt with line numbers: the base this loop improves "
    "(which=base, the default when there is no candidate yet) or your current candidate "
    "(which=candidate). Pages start at line `offset` (1-based, default 1) and hold up to "
    "`lines` lines (default 400) within the tool-result limit; the header says where the next "
    "page starts.",
    R"js({"type":"object","properties":{"which":{"type":"string","enum":["base","candidate"]},"offset":{"type":"integer","minimum":1},"lines":{"type":"integer","minimum":1}},"additionalProperties":false})js"};
const ToolSpec kSearchAttempt{
    "search_attempt",
    "Find the lines containing `text` (plain text, case-sensitive) in the base, the candidate or "
    "both; each match with its line number and `context` lines around it (default 2).",
    R"js({"type":"object","properties":{"text":{"type":"string"},"which":{"type":"string","enum":["base","candidate","both"]},"context":{"type":"integer","minimum":0,"maximum":20}},"required":["text"],"additionalProperties":false})js"};
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
    "Run a shell command (/bin/sh -c) in the track's directory inside a sandbox: the track and "
    "the system are read-only, /tmp is private and writable, no network, no GPU, a deadline; "
    "returns the exit code and the start of stdout and stderr.",
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

std::size_t count_arg(const json& args, const char* key, std::size_t fallback) {
  auto it = args.find(key);
  if (it == args.end() || !it->is_number()) return fallback;
  double v = it->get<double>();
  return v < 0 ? 0 : static_cast<std::size_t>(std::min(v, 1e9));
}

}  // namespace

std::string numbered_page(std::string_view text, std::size_t first, std::size_t count,
                          std::size_t max_bytes) {
  auto lines = split_lines(text);
  const std::size_t total = lines.size();
  first = std::max<std::size_t>(first, 1);
  if (first > total)
    return fmt::format("[the attempt has {} lines; offset {} is past its end]", total, first);
  std::string body;
  std::size_t line = first;
  const std::size_t width = std::to_string(total).size();
  for (; line <= total && line < first + count; ++line) {
    std::string row = fmt::format("{:>{}}| {}\n", line, width, lines[line - 1]);
    if (!body.empty() && body.size() + row.size() + 120 > max_bytes) break;
    body += row;
  }
  std::string header = fmt::format("[lines {}-{} of {}", first, line - 1, total);
  header += line <= total ? fmt::format("; the next page starts at offset {}]\n", line) : "]\n";
  return header + body;
}

json search_lines(std::string_view text, std::string_view needle, std::size_t context,
                  std::size_t max_matches) {
  auto lines = split_lines(text);
  json matches = json::array();
  std::size_t found = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].find(needle) == std::string_view::npos) continue;
    if (++found > max_matches) continue;
    std::size_t lo = i >= context ? i - context : 0, hi = std::min(lines.size(), i + context + 1);
    std::string excerpt;
    for (std::size_t j = lo; j < hi; ++j)
      excerpt += fmt::format("{}{}| {}\n", j == i ? ">" : " ", j + 1, lines[j]);
    matches.push_back({{"line", i + 1}, {"excerpt", excerpt}});
  }
  return {{"matches", matches}, {"total", found}, {"shown", std::min(found, max_matches)}};
}

Expected<proc::Sandbox> shell_sandbox(const ShellOptions& options,
                                      const std::filesystem::path& track) {
  proc::Sandbox box = proc::Sandbox::untrusted();
  box.hidden.insert(box.hidden.end(), options.hidden.begin(), options.hidden.end());
  box.readable = options.readable;
  box.readable.push_back(track.string());  // read-only: candidates go through write_candidate
  box.tmp_bytes = options.tmp_bytes;
  box.cpu_s = std::chrono::duration<double>(options.timeout).count() + 1;
  box.address_space_bytes = options.address_space_bytes;
  box.file_bytes = options.file_bytes;
  box.open_files = options.open_files;
  box.processes = options.processes;
  if (auto ok = proc::sandbox_available(); !ok) return tl::unexpected(ok.error());
  if (auto ok = proc::processes_bounded(box); !ok) return tl::unexpected(ok.error());
  return box;
}

std::vector<ToolSpec> RunContext::tool_specs(int depth) const {
  std::vector<ToolSpec> tools = {kReadAttempt, kSearchAttempt, kWriteCandidate, kEvaluate,
                                 kProfile,     kListSpecs,     kReadSpec};
  if (shell_box) tools.push_back(kShell);
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

  // Pages leave room in the tool-result limit for the header and the cut note.
  const std::size_t page_bytes = model.provider().route == RouteKind::search
                                     ? std::size_t{64} << 20
                                     : options.tool_result_cap - 256;
  if (call.name == "read_attempt") {
    std::string which = string_arg(args, "which");
    if (which == "candidate" && !candidate)
      return error_text("there is no candidate yet in this loop; read the base");
    const std::string& text = which == "candidate" ? *candidate : base;
    // The built-in search agent rewrites whole attempts as text and asks for them unpaged.
    if (model.provider().route == RouteKind::search && !args.contains("offset")) return text;
    return numbered_page(text, count_arg(args, "offset", 1), count_arg(args, "lines", 400),
                         page_bytes);
  }
  if (call.name == "search_attempt") {
    std::string needle = string_arg(args, "text"), which = string_arg(args, "which");
    if (needle.empty()) return error_text("search_attempt needs a non-empty `text`");
    std::size_t context = std::min<std::size_t>(count_arg(args, "context", 2), 20);
    json out = json::object();
    if (which != "candidate") out["base"] = search_lines(base, needle, context, 50);
    if (which != "base") {
      if (candidate)
        out["candidate"] = search_lines(*candidate, needle, context, 50);
      else if (which == "candidate")
        return error_text("there is no candidate yet in this loop; search the base");
    }
    std::string text = out.dump(-1, ' ', false, json::error_handler_t::replace);
    return text.size() <= page_bytes
               ? text
               : error_text("too many matches to show; search for something more specific");
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
  if (call.name == "shell" && shell_box) {
    std::string command = string_arg(args, "command");
    if (command.empty()) return error_text("shell needs a non-empty `command`");
    auto timeout = options.shell.timeout;
    if (auto t = args.find("timeout_s"); t != args.end() && t->is_number() && t->get<double>() > 0)
      timeout = std::min(
          timeout, std::chrono::milliseconds(static_cast<long long>(t->get<double>() * 1000)));
    const std::string track = workspace.track_dir().string();
    proc::RunOptions run_options;
    run_options.argv = {"/bin/sh", "-c", command};
    run_options.env = {
        {"PATH", options.shell.path}, {"HOME", track}, {"LANG", "C.UTF-8"}, {"TMPDIR", "/tmp"}};
    run_options.cwd = track;
    run_options.timeout_s = std::chrono::duration<double>(timeout).count();
    run_options.stdout_cap = run_options.stderr_cap = options.shell.output_cap;
    run_options.sandbox = *shell_box;
    auto run = proc::run(run_options);
    if (!run) return error_text("the command could not run: " + run.error().message);
    return json{{"exit_code", run->term_signal ? -run->term_signal : run->exit_code},
                {"timed_out", run->timed_out},
                {"stdout", run->stdout_bytes},
                {"stderr", run->stderr_bytes},
                {"stdout_cut", run->stdout_truncated},
                {"stderr_cut", run->stderr_truncated}}
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
      case TurnEnd::Kind::stopped:
        return error_text("the subagent was stopped: " + end.text);
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
