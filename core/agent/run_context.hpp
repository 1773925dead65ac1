// State shared by the agent graph (agent.cpp) and the tools (tools.cpp). Internal.
#pragma once

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "trace.hpp"
#include "ts/agent/agent.hpp"
#include "ts/proc/proc.hpp"

namespace ts::agent::detail {

/// How one agent turn (a run of model calls until a final answer) ended.
struct TurnEnd {
  enum class Kind { final_answer, accepted, budget_spent, failed, stopped } kind;
  std::string text;  // the final answer, or why it failed
};

struct RunContext {
  RunContext(Model& m, Workspace& w, CallBudget& b, const AgentOptions& o)
      : model(m), workspace(w), budget(b), options(o) {}

  Model& model;
  Workspace& workspace;
  CallBudget& budget;
  const AgentOptions& options;

  std::string original;                  // the run's starting attempt
  std::string base;                      // what this loop improves: original or last accepted
  std::optional<std::string> candidate;  // the current candidate of this loop
  std::unordered_map<std::string, EvalReport> reports;  // by candidate text
  std::vector<std::string> accepted_texts;
  std::optional<EvalReport> pending_accept;  // set when an evaluation accepts `candidate`
  int loop = 1;
  int model_calls = 0;
  int rejected = 0;
  int subagents = 0;
  TraceWriter trace;
  Secrets secrets;                         // every tool result is redacted with these
  std::optional<proc::Sandbox> shell_box;  // the shell tool's sandbox; none: not offered

  /// Tools offered at a subagent depth (no start_subagent once the depth limit is reached).
  std::vector<ToolSpec> tool_specs(int depth) const;
  /// Runs one tool call; the text is what the model sees (errors included, never thrown).
  std::string run_tool(const ToolCall& call, int depth);
  /// The host evaluation of the current candidate (duplicate and structure checks first).
  EvalReport evaluate_candidate();
  /// One agent turn on `messages` (agent.cpp).
  TurnEnd run_turn(std::vector<Message>& messages, int depth, const std::string& label);
};

nlohmann::json report_json(const EvalReport& report);

/// The sandbox the `shell` tool runs in for `track`, or why none works on this machine.
Expected<proc::Sandbox> shell_sandbox(const ShellOptions& options,
                                      const std::filesystem::path& track);

/// Lines [first, first + count) of `text` (1-based), numbered, at most `max_bytes` long, with a
/// header that says which lines these are of how many and where the next page starts.
std::string numbered_page(std::string_view text, std::size_t first, std::size_t count,
                          std::size_t max_bytes);

/// Lines of `text` containing `needle`, numbered, with `context` lines around each, at most
/// `max_matches` matches.
nlohmann::json search_lines(std::string_view text, std::string_view needle, std::size_t context,
                            std::size_t max_matches);

}  // namespace ts::agent::detail
