// The agent graph: the outer loop as an explicit state machine, and one agent turn.
#include "ts/agent/agent.hpp"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "prompts.hpp"
#include "run_context.hpp"

namespace ts::agent {

using json = nlohmann::json;
using detail::RunContext;
using detail::TurnEnd;

bool traces_enabled(const EnvMap& env) {
  auto it = env.find("TILESMITH_DEBUG");
  return it != env.end() && it->second == "1";
}

const char* outcome_name(Outcome o) noexcept {
  switch (o) {
    case Outcome::accepted:
      return "accepted";
    case Outcome::budget_spent:
      return "budget_spent";
    case Outcome::failed:
      return "failed";
    case Outcome::stopped:
      return "stopped";
  }
  return "failed";
}

namespace detail {

namespace {

json message_json(const Message& m, std::size_t cap) {
  json j{{"role", role_name(m.role)}, {"content", cut(m.content, cap)}};
  if (!m.tool_calls.empty()) {
    json calls = json::array();
    for (const auto& c : m.tool_calls)
      calls.push_back({{"id", c.id}, {"name", c.name}, {"arguments", cut(c.arguments, cap)}});
    j["tool_calls"] = calls;
  }
  if (m.role == Role::tool) j["tool_call_id"] = m.tool_call_id;
  return j;
}

}  // namespace

TurnEnd RunContext::run_turn(std::vector<Message>& messages, int depth, const std::string& label) {
  const auto tools = tool_specs(depth);
  // The built-in search rewrites the attempt as text, so it must see all of it; the cap exists
  // for a language model's context window, which the search does not have.
  const std::size_t result_cap = model.provider().route == RouteKind::search
                                     ? std::max<std::size_t>(options.tool_result_cap, 64u << 20)
                                     : options.tool_result_cap;
  std::size_t traced = 0;  // messages already in a trace record
  while (true) {
    if (std::string why = options.stop ? options.stop() : ""; !why.empty())
      return {TurnEnd::Kind::stopped, why};
    if (!budget.try_acquire())
      return {TurnEnd::Kind::budget_spent,
              fmt::format("the budget of {} model calls is spent", budget.limit().value_or(-1))};
    ++model_calls;
    auto reply = model.complete({messages, tools});
    if (!reply) {
      if (reply.error().code != Errc::cancelled)
        return {TurnEnd::Kind::failed, reply.error().message};
      std::string why = options.stop ? options.stop() : "";
      return {TurnEnd::Kind::stopped, why.empty() ? reply.error().message : why};
    }

    json record;
    if (trace.enabled()) {
      json sent = json::array();
      for (std::size_t i = traced; i < messages.size(); ++i)
        sent.push_back(message_json(messages[i], options.trace_result_cap));
      record = {{"agent", label},
                {"loop", loop},
                {"model_call", model_calls},
                {"prompt", "system.v1"},
                {"messages", sent},
                {"reply", message_json(reply->message, options.trace_result_cap)},
                {"finish_reason", reply->finish_reason},
                {"usage",
                 {{"prompt_tokens", reply->usage.prompt_tokens},
                  {"completion_tokens", reply->usage.completion_tokens}}},
                {"latency_ms", double(reply->latency.count()) / 1000.0},
                {"http_attempts", reply->http_attempts}};
    }
    messages.push_back(reply->message);
    traced = messages.size();

    if (reply->message.tool_calls.empty()) {  // a final answer ends the turn, not the loop
      trace.append(record);
      return {TurnEnd::Kind::final_answer, reply->message.content};
    }
    json results = json::array();
    int run = 0;
    for (const auto& call : reply->message.tool_calls) {
      auto started = std::chrono::steady_clock::now();
      std::string result;
      std::string why = options.stop ? options.stop() : "";
      if (!why.empty())
        result = json{{"error", "not run: the run was stopped (" + why + ")"}}.dump();
      else if (pending_accept)
        result = R"({"error":"not run: the host already accepted a candidate in this loop"})";
      else if (++run > options.max_tool_calls_per_reply)
        result = fmt::format(R"({{"error":"not run: at most {} tool calls per reply"}})",
                             options.max_tool_calls_per_reply);
      else
        result = run_tool(call, depth);
      if (trace.enabled()) {
        auto ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started);
        results.push_back({{"id", call.id},
                           {"name", call.name},
                           {"result", cut(result, options.trace_result_cap)},
                           {"ms", ms.count()}});
      }
      messages.push_back(tool_message(call.id, cut(secrets.redact(std::move(result)), result_cap)));
    }
    traced = messages.size();  // tool results are in this record already
    if (trace.enabled()) {
      record["tool_results"] = results;
      trace.append(record);
    }
    if (pending_accept) return {TurnEnd::Kind::accepted, {}};
  }
}

}  // namespace detail

namespace {

enum class Phase { prepare, agent_turn, host_evaluation, verdict, next_loop, done };

std::string system_prompt(Agency agency) {
  return std::string(detail::prompt("system.v1")) + "\n" +
         std::string(detail::prompt(fmt::format("agency_{}.v1", agency_name(agency))));
}

}  // namespace

AgentResult run_agent(Model& model, Workspace& workspace, CallBudget& budget,
                      const AgentOptions& options) {
  RunContext ctx(model, workspace, budget, options);
  ctx.secrets = Secrets::from(process_env());
  ctx.secrets.add(model.provider().api_key);
  AgentResult result;
  if (auto box = detail::shell_sandbox(options.shell, workspace.track_dir()); box)
    ctx.shell_box = std::move(*box);
  else
    result.notes.push_back("shell: not offered: " + box.error().message);
  if (options.traces) {
    auto stamp = std::chrono::duration_cast<std::chrono::milliseconds>(
                     std::chrono::system_clock::now().time_since_epoch())
                     .count();
    ctx.trace = detail::TraceWriter(
        workspace.track_dir() / "traces" / fmt::format("agent-{}.jsonl", stamp), ctx.secrets);
  }
  std::vector<Message> messages;
  EvalReport report;
  Phase phase = Phase::prepare;

  while (phase != Phase::done) {
    switch (phase) {
      case Phase::prepare: {
        ctx.original = workspace.original();
        ctx.base = ctx.original;
        messages = {system_message(system_prompt(options.agency)),
                    user_message(fmt::format(
                        "{}\n\nLoop 1 of {}. The current attempt has {} lines; read it "
                        "with read_attempt, write a faster candidate, evaluate it.",
                        options.task.empty() ? "Make this program faster." : options.task,
                        options.loops, std::count(ctx.base.begin(), ctx.base.end(), '\n')))};
        phase = Phase::agent_turn;
        break;
      }
      case Phase::agent_turn: {
        TurnEnd end = ctx.run_turn(messages, 0, "main");
        switch (end.kind) {
          case TurnEnd::Kind::budget_spent:
            result.outcome = Outcome::budget_spent;
            result.reason = end.text;
            phase = Phase::done;
            break;
          case TurnEnd::Kind::failed:
            result.outcome = Outcome::failed;
            result.reason = end.text;
            phase = Phase::done;
            break;
          case TurnEnd::Kind::stopped:
            result.outcome = Outcome::stopped;
            result.reason = "stopped: " + end.text;
            phase = Phase::done;
            break;
          case TurnEnd::Kind::accepted:  // accepted through the evaluate tool
            report = *ctx.pending_accept;
            phase = Phase::verdict;
            break;
          case TurnEnd::Kind::final_answer:
            phase = Phase::host_evaluation;
            break;
        }
        break;
      }
      case Phase::host_evaluation:
        report = ctx.evaluate_candidate();
        phase = Phase::verdict;
        break;
      case Phase::verdict:
        if (report.verdict == Verdict::accepted) {
          result.accepted.push_back({ctx.loop, *ctx.candidate, report});
          ctx.accepted_texts.push_back(*ctx.candidate);
          ctx.pending_accept.reset();
          if (int(result.accepted.size()) >= options.loops) {
            result.outcome = Outcome::accepted;
            result.reason =
                fmt::format("{} loop(s) accepted; last: {}", result.accepted.size(), report.reason);
            phase = Phase::done;
          } else {
            phase = Phase::next_loop;
          }
        } else {
          messages.push_back(
              user_message(fmt::format("The host rejected the current candidate; loop {} goes on. "
                                       "Report:\n{}",
                                       ctx.loop, detail::report_json(report).dump(2))));
          phase = Phase::agent_turn;
        }
        break;
      case Phase::next_loop:
        ctx.base = *ctx.candidate;
        ctx.candidate.reset();
        ++ctx.loop;
        messages.push_back(user_message(
            fmt::format("The host accepted your candidate ({}). It is now the base. Loop {} of "
                        "{}: make it faster still; a new candidate must beat the original by "
                        "the gate's margin and differ from every accepted one.",
                        report.reason, ctx.loop, options.loops)));
        phase = Phase::agent_turn;
        break;
      case Phase::done:
        break;
    }
  }
  result.model_calls = ctx.model_calls;
  result.rejected_candidates = ctx.rejected;
  return result;
}

}  // namespace ts::agent
