// The agent graph: an explicit state machine for the outer optimization loop.
//
//   prepare -> agent_turn -> host_evaluation -> verdict -> next_loop -> agent_turn ... -> done
//
// An agent's final answer ends only its turn: the host then evaluates the current candidate.
// A loop ends only when the host accepts a candidate; a slower, incorrect, duplicate or marginal
// candidate is rejected, its report is fed back, and the same loop goes on. `loops` counts
// accepted cycles. Every model invocation (main agent and subagents) takes one unit of the
// shared CallBudget; when it is spent the run ends and the caller keeps what it had.
//
//   ts::agent::CallBudget budget(70);
//   auto result = ts::agent::run_agent(model, workspace, budget, {.loops = 1});
//   if (result.outcome == Outcome::accepted) install(result.accepted.back().text);
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "ts/agent/budget.hpp"
#include "ts/agent/chat.hpp"
#include "ts/agent/structure.hpp"
#include "ts/agent/workspace.hpp"

namespace ts::agent {

/// The `shell` tool runs every command in ts::proc's sandbox: a read-only view of the host with
/// homes hidden, the track readable, a private /tmp (its only writable place), no network, an
/// environment of PATH, HOME (the track), LANG and TMPDIR only, limits, and nothing left running
/// when the call returns. Where the sandbox does not work, the tool is not offered and
/// AgentResult::notes says why.
struct ShellOptions {
  std::chrono::milliseconds timeout{60'000};
  std::size_t output_cap = 16 * 1024;   // bytes of stdout and of stderr returned
  std::vector<std::string> readable{};  // bound back read-only (a Python installed under $HOME)
  std::vector<std::string> hidden{};    // hidden beyond homes: the run cache (other tracks)
  std::string path = "/usr/local/bin:/usr/bin:/bin";  // PATH inside
  std::size_t address_space_bytes = std::size_t{8} << 30;
  std::size_t file_bytes = std::size_t{64} << 20;
  std::size_t tmp_bytes = std::size_t{256} << 20;
  int processes = 64;
  int open_files = 256;
};

/// A tool beyond the built-in ones (TileOPs adds its own); `run` gets the model's JSON arguments
/// and returns the text shown to the model, or an error shown to it as such.
struct CustomTool {
  ToolSpec spec;
  std::function<Expected<std::string>(std::string_view arguments)> run;
};

struct AgentOptions {
  int loops = 1;  // accepted cycles wanted
  Agency agency = Agency::medium;
  std::string task{};   // what this run is about (graph summary, op spec), for the first message
  bool traces = false;  // TILESMITH_DEBUG=1: JSONL per turn under <track>/traces/
  int max_subagent_depth = 1;
  int max_tool_calls_per_reply = 16;        // further calls in one reply are answered "not run"
  std::size_t tool_result_cap = 32 * 1024;  // bytes of a tool result shown to the model
  std::size_t trace_result_cap = 4 * 1024;  // bytes of a tool result kept in a trace
  ShellOptions shell{};
  std::vector<CustomTool> extra_tools{};
  /// Why the run must end now (an interrupt, a spent time budget), or empty; asked before every
  /// model call and tool call. Give the ChatClient the same check (ClientOptions::stop) so that
  /// a call in flight ends too. The run then ends `stopped`, keeping what was accepted.
  std::function<std::string()> stop{};
};

/// TILESMITH_DEBUG=1 in `env`.
bool traces_enabled(const EnvMap& env);

enum class Outcome { accepted, budget_spent, failed, stopped };
const char* outcome_name(Outcome o) noexcept;

struct AcceptedCandidate {
  int loop = 0;
  std::string text;
  EvalReport report;
};

struct AgentResult {
  Outcome outcome = Outcome::failed;
  std::vector<AcceptedCandidate> accepted;  // one per accepted loop, in order
  int model_calls = 0;                      // invocations this run took from the budget
  int rejected_candidates = 0;
  std::string reason;              // why the run ended
  std::vector<std::string> notes;  // what the run could not offer and why ("shell: ...")
};

/// Runs the loop until `options.loops` candidates are accepted, the budget is spent, or the
/// model route fails for good. Never throws for model, network or workspace failures.
AgentResult run_agent(Model& model, Workspace& workspace, CallBudget& budget,
                      const AgentOptions& options);

}  // namespace ts::agent
