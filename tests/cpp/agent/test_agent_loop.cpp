// The agent graph end to end: a real local HTTP server plays the model from a script, a
// scripted workspace plays the gate.
#include "ts/agent/agent.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "scripted_agent.hpp"

namespace {

using namespace ts::agent;
using namespace ts::agent::testing;
using namespace std::chrono_literals;
using json = nlohmann::json;

// A one-hunk unified diff that turns the SLOW line of kSlow into the FAST line.
std::string slow_to_fast_diff() {
  size_t line = 1;
  size_t pos = kSlow.find("# SLOW");
  for (size_t i = 0; i < pos; ++i) line += kSlow[i] == '\n';
  std::string slow_line = "    tl.store(out_ptr0 + xindex, tl.maximum(tmp0 + 1.0, 0.0))  # SLOW";
  std::string fast_line = "    tl.store(out_ptr0 + xindex, tl.maximum(tmp0 + 1.0, 0.0))  # FAST";
  return "--- a/attempt.py\n+++ b/attempt.py\n@@ -" + std::to_string(line) + " +" +
         std::to_string(line) + " @@\n-" + slow_line + "\n+" + fast_line + "\n";
}

TEST(AgentLoop, RejectedThenAcceptedEndsTheLoop) {
  TempDir dir;
  MockOpenAiServer server;
  server.push({tool("c1", "read_attempt"), tool("c2", "write_candidate", {{"content", kSlow}}),
               tool("c3", "evaluate"),
               tool("c4", "write_candidate", {{"diff", slow_to_fast_diff()}}),
               tool("c5", "evaluate"), completion_reply("never reached")});
  ChatClient client(local_provider(server), fast_client());
  ScriptedWorkspace ws(dir.path());
  CallBudget budget(std::nullopt);
  AgentResult result = run_agent(client, ws, budget, {});

  EXPECT_EQ(result.outcome, Outcome::accepted) << result.reason;
  ASSERT_EQ(result.accepted.size(), 1u);
  EXPECT_EQ(result.accepted[0].text, kFast);
  EXPECT_EQ(result.accepted[0].report.verdict, Verdict::accepted);
  EXPECT_EQ(result.model_calls, 5);
  EXPECT_EQ(result.rejected_candidates, 1);
  EXPECT_EQ(server.remaining(), 1u);  // the loop ended on acceptance, not on a final answer
  auto requests = server.requests();
  ASSERT_EQ(requests.size(), 5u);
  // read_attempt showed the attempt, numbered, in one page.
  EXPECT_NE(tool_result(requests[1]).find("30|         triton_poi_fused_add_relu_0.run("),
            std::string::npos)
      << tool_result(requests[1]);
  EXPECT_NE(tool_result(requests[3]).find("\"verdict\":\"rejected\""), std::string::npos);
  EXPECT_NE(tool_result(requests[3]).find("slower"), std::string::npos);
  EXPECT_EQ(ws.written, (std::vector<std::string>{kSlow, kFast}));
  EXPECT_EQ(ws.evaluations, 2);
  // No traces without TILESMITH_DEBUG.
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "traces"));
}

TEST(AgentLoop, TwoLoopsNeedTwoAcceptancesAndRejectDuplicates) {
  TempDir dir;
  MockOpenAiServer server;
  server.push({tool("c1", "write_candidate", {{"content", kFast}}), tool("c2", "evaluate"),
               // loop 2: resubmitting the accepted candidate is a duplicate
               tool("c3", "write_candidate", {{"content", kFast}}), tool("c4", "evaluate"),
               tool("c5", "write_candidate", {{"content", kFaster}}), tool("c6", "evaluate")});
  ChatClient client(local_provider(server), fast_client());
  ScriptedWorkspace ws(dir.path());
  CallBudget budget(std::nullopt);
  AgentResult result = run_agent(client, ws, budget, {.loops = 2});
  EXPECT_EQ(result.outcome, Outcome::accepted) << result.reason;
  ASSERT_EQ(result.accepted.size(), 2u);
  EXPECT_EQ(result.accepted[0].loop, 1);
  EXPECT_EQ(result.accepted[1].loop, 2);
  EXPECT_EQ(result.accepted[1].text, kFaster);
  EXPECT_EQ(ws.evaluations, 2);  // the duplicate never reached the gate
  auto requests = server.requests();
  ASSERT_EQ(requests.size(), 6u);
  EXPECT_NE(tool_result(requests[2]).find("Loop 2 of 2"), std::string::npos);
  EXPECT_NE(tool_result(requests[4]).find("duplicate"), std::string::npos);
}

TEST(AgentLoop, FinalAnswerEndsOnlyTheTurnTheHostEvaluates) {
  TempDir dir;
  MockOpenAiServer server;
  server.push({tool("c1", "write_candidate", {{"content", kSlow}}), completion_reply("I am done."),
               completion_reply("Nothing more to do."),  // no new candidate: rejected again
               tool("c2", "write_candidate", {{"content", kFast}}), completion_reply("Done now.")});
  ChatClient client(local_provider(server), fast_client());
  ScriptedWorkspace ws(dir.path());
  CallBudget budget(std::nullopt);
  AgentResult result = run_agent(client, ws, budget, {});
  EXPECT_EQ(result.outcome, Outcome::accepted) << result.reason;
  EXPECT_EQ(result.model_calls, 5);
  auto requests = server.requests();
  ASSERT_EQ(requests.size(), 5u);
  EXPECT_NE(tool_result(requests[2]).find("The host rejected"), std::string::npos);
  EXPECT_NE(tool_result(requests[3]).find("evaluated before"), std::string::npos);
}

TEST(AgentBudget, ExactAcrossSubagentsAndRetriesAreFree) {
  TempDir dir;
  MockOpenAiServer server;
  server.push({tool("m1", "start_subagent", {{"brief", "profile the kernels"}}),
               error_reply(500, "flaky"),  // retry: free
               tool("s1", "read_attempt"), tool("s2", "profile"),
               fault_reply(MockReply::Kind::cut_stream),  // retry: free
               completion_reply("the relu kernel is 0.4 ms"),
               tool("m2", "write_candidate", {{"content", kSlow}}), tool("m3", "evaluate"),
               completion_reply("never served")});
  ChatClient client(local_provider(server), fast_client());
  ScriptedWorkspace ws(dir.path());
  CallBudget budget(5);
  AgentResult result = run_agent(client, ws, budget, {});
  EXPECT_EQ(result.outcome, Outcome::budget_spent) << result.reason;
  EXPECT_EQ(result.model_calls, 5);
  EXPECT_EQ(budget.used(), 5);
  auto requests = server.requests();
  ASSERT_EQ(requests.size(), 7u);  // 5 invocations + 2 retries; the 6th invocation was blocked
  // The subagent: its own brief, the subagent prompt, no start_subagent tool (depth limit).
  auto sub = json::parse(requests[1].body);
  EXPECT_NE(sub["messages"][0]["content"].get<std::string>().find("helper"), std::string::npos);
  EXPECT_NE(sub["messages"][1]["content"].get<std::string>().find("profile the kernels"),
            std::string::npos);
  for (const auto& t : sub["tools"]) EXPECT_NE(t["function"]["name"], "start_subagent");
  EXPECT_NE(tool_result(requests[4]).find("triton_poi_fused_add_relu_0"), std::string::npos);
  EXPECT_NE(tool_result(requests[6]).find("the relu kernel is 0.4 ms"), std::string::npos);
}

TEST(AgentBudget, ZeroBudgetNeverCallsTheModel) {
  TempDir dir;
  MockOpenAiServer server;
  ChatClient client(local_provider(server), fast_client());
  ScriptedWorkspace ws(dir.path());
  CallBudget budget(0);
  AgentResult result = run_agent(client, ws, budget, {});
  EXPECT_EQ(result.outcome, Outcome::budget_spent);
  EXPECT_EQ(result.model_calls, 0);
  EXPECT_TRUE(server.requests().empty());
}

TEST(AgentTools, LowAgencyAndBadArgumentsAreRefusedNotFatal) {
  TempDir dir;
  MockOpenAiServer server;
  std::string restructured = replaced(kFast, "        del buf0\n", "");
  server.push({tool("c1", "write_candidate", {{"content", restructured}}),
               completion_reply("", {{"c2", "write_candidate", "{not json"}}),
               tool("c3", "write_candidate", {{"diff", "@@ -1 +1 @@\n-no such line\n+x\n"}}),
               tool("c4", "read_spec", {{"name", "gemm"}}), tool("c5", "no_such_tool"),
               tool("c6", "write_candidate", {{"content", kFast}}), tool("c7", "evaluate")});
  ChatClient client(local_provider(server), fast_client());
  ScriptedWorkspace ws(dir.path());
  CallBudget budget(20);
  AgentResult result = run_agent(client, ws, budget, {.agency = Agency::low});
  EXPECT_EQ(result.outcome, Outcome::accepted) << result.reason;
  auto requests = server.requests();
  ASSERT_EQ(requests.size(), 7u);
  EXPECT_NE(tool_result(requests[1]).find("agency=low"), std::string::npos)
      << tool_result(requests[1]);
  EXPECT_NE(tool_result(requests[2]).find("not a JSON object"), std::string::npos);
  EXPECT_NE(tool_result(requests[3]).find("hunk 1"), std::string::npos);
  EXPECT_NE(tool_result(requests[4]).find("no spec named"), std::string::npos);
  EXPECT_NE(tool_result(requests[5]).find("no tool named"), std::string::npos);
  EXPECT_EQ(ws.written, std::vector<std::string>{kFast});
  EXPECT_NE(json::parse(requests[0].body)["messages"][0]["content"].get<std::string>().find(
                "Agency: low"),
            std::string::npos);
}

TEST(AgentTools, ShellRunsInTheTrackWithDeadlineCapAndNoNetwork) {
  TempDir dir;
  MockOpenAiServer server;
  std::string connect = "python3 -c \"import socket; socket.create_connection(('127.0.0.1', " +
                        std::to_string(server.port()) + "), timeout=1); print('CONNECTED')\"";
  server.push({tool("c1", "shell", {{"command", "pwd; echo hello"}}),
               tool("c2", "shell", {{"command", "sleep 5"}, {"timeout_s", 0.2}}),
               tool("c3", "shell", {{"command", "head -c 100000 /dev/zero | tr '\\0' y"}}),
               tool("c4", "shell", {{"command", connect + "; python3 -c 'print(7*6)'"}}),
               tool("c5", "write_candidate", {{"content", kFast}}), tool("c6", "evaluate")});
  ChatClient client(local_provider(server), fast_client());
  ScriptedWorkspace ws(dir.path());
  CallBudget budget(20);
  AgentOptions options = sandboxed_shell();
  options.shell.output_cap = 1000;
  auto start = std::chrono::steady_clock::now();
  AgentResult result = run_agent(client, ws, budget, options);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 6s);
  EXPECT_EQ(result.outcome, Outcome::accepted) << result.reason;
  EXPECT_TRUE(result.notes.empty()) << result.notes[0];
  auto requests = server.requests();
  ASSERT_EQ(requests.size(), 6u);
  auto r1 = json::parse(tool_result(requests[1]));
  EXPECT_EQ(r1["exit_code"], 0);
  EXPECT_EQ(r1["stdout"], dir.path().string() + "\nhello\n");
  auto r2 = json::parse(tool_result(requests[2]));
  EXPECT_TRUE(r2["timed_out"].get<bool>());
  auto r3 = json::parse(tool_result(requests[3]));
  EXPECT_EQ(r3["stdout"].get<std::string>().size(), 1000u);
  EXPECT_TRUE(r3["stdout_cut"].get<bool>());
  auto r4 = json::parse(tool_result(requests[4]));
  EXPECT_EQ(r4["stdout"], "42\n") << r4.dump();  // Python runs; the socket does not connect
}

TEST(AgentTools, ReadAttemptPagesAndSearchFindsLines) {
  TempDir dir;
  MockOpenAiServer server;
  server.push({tool("c1", "read_attempt", {{"lines", 3}}),
               tool("c2", "read_attempt", {{"offset", 4}, {"lines", 2}}),
               tool("c3", "read_attempt", {{"offset", 100000}}),
               tool("c4", "search_attempt", {{"text", "tl.store"}, {"context", 0}}),
               tool("c5", "write_candidate", {{"content", kFast}}), tool("c6", "evaluate")});
  ChatClient client(local_provider(server), fast_client());
  ScriptedWorkspace ws(dir.path());
  CallBudget budget(20);
  AgentResult result = run_agent(client, ws, budget, {});
  EXPECT_EQ(result.outcome, Outcome::accepted) << result.reason;
  auto requests = server.requests();
  ASSERT_EQ(requests.size(), 6u);
  const auto total = std::count(kWrapper.begin(), kWrapper.end(), '\n');  // ends with '\n'
  std::string p1 = tool_result(requests[1]), p2 = tool_result(requests[2]);
  EXPECT_EQ(p1.rfind(fmt::format("[lines 1-3 of {}; the next page starts at offset 4]", total), 0),
            0u)
      << p1;
  EXPECT_EQ(std::count(p1.begin(), p1.end(), '\n'), 4);
  EXPECT_EQ(p2.rfind(fmt::format("[lines 4-5 of {}", total), 0), 0u) << p2;
  EXPECT_NE(tool_result(requests[3]).find("past its end"), std::string::npos);
  auto found = json::parse(tool_result(requests[4]));
  ASSERT_GE(found["base"]["total"].get<int>(), 1) << found.dump();
  std::string excerpt = found["base"]["matches"][0]["excerpt"];
  EXPECT_NE(excerpt.find("tl.store"), std::string::npos);
  EXPECT_EQ(excerpt[0], '>');
}

// A real backward wrapper (the largest fixture) grown past 80 KB: read page by page, searched,
// patched by a one-line diff deep inside, evaluated; every tool result within the cap.
TEST(AgentTools, ALargeWrapperIsReadInPagesPatchedAndEvaluated) {
  std::string big = read_text(std::filesystem::path(TS_SOURCE_DIR) /
                              "tests/data/inductor_cuda/gated_mlp_train_bf16.1.backward.py");
  for (int i = 0; big.size() < 80 * 1024; ++i)
    big += fmt::format("# trailing notes of the generated module, line {:05d} ...........\n", i);
  const size_t lines = size_t(std::count(big.begin(), big.end(), '\n'));
  const std::string target = "    def call(self, args):";
  ASSERT_NE(big.find(target), std::string::npos);
  const size_t target_line =
      1 + size_t(std::count(big.begin(), big.begin() + big.find(target), '\n'));

  class BigWorkspace : public ScriptedWorkspace {
   public:
    BigWorkspace(std::filesystem::path dir, std::string text)
        : ScriptedWorkspace(std::move(dir)), text_(std::move(text)) {}
    std::string original() override { return text_; }

   private:
    std::string text_;
  };
  TempDir dir;
  BigWorkspace ws(dir.path(), big);
  MockOpenAiServer server;
  std::vector<MockReply> script;
  const size_t page = 150;
  for (size_t first = 1; first <= lines; first += page)
    script.push_back(
        tool(fmt::format("r{}", first), "read_attempt", {{"offset", first}, {"lines", page}}));
  script.push_back(tool("s", "search_attempt", {{"text", target}, {"context", 1}}));
  const std::string diff = fmt::format(
      "@@ -{0},1 +{0},2 @@\n {1}\n+        # FAST: a patched line\n", target_line, target);
  script.push_back(tool("w", "write_candidate", {{"diff", diff}}));
  script.push_back(tool("e", "evaluate"));
  server.push(script);
  ChatClient client(local_provider(server), fast_client());
  CallBudget budget(100);
  AgentOptions options;
  options.agency = Agency::high;
  AgentResult result = run_agent(client, ws, budget, options);
  ASSERT_EQ(result.outcome, Outcome::accepted) << result.reason;

  auto requests = server.requests();
  std::string reassembled;
  const size_t pages = (lines + page - 1) / page;
  for (size_t i = 1; i < requests.size(); ++i) {
    std::string r = tool_result(requests[i]);
    EXPECT_LE(r.size(), options.tool_result_cap);
    EXPECT_EQ(r.find("more bytes cut"), std::string::npos) << "result " << i << " was cut";
    if (i > pages) continue;
    std::istringstream in(r.substr(r.find('\n') + 1));  // past the header
    for (std::string row; std::getline(in, row);)
      reassembled += row.substr(row.find("| ") + 2) + "\n";
  }
  EXPECT_EQ(reassembled, big);  // every line, once, in order
  EXPECT_NE(tool_result(requests[pages + 1]).find(">" + std::to_string(target_line) + "| "),
            std::string::npos);
  ASSERT_EQ(ws.written.size(), 1u);
  EXPECT_NE(ws.written[0].find(target + "\n        # FAST: a patched line\n"), std::string::npos);
}

TEST(AgentLoop, AStopEndsTheRunKeepingWhatWasAccepted) {
  TempDir dir;
  MockOpenAiServer server;
  server.push({tool("c1", "write_candidate", {{"content", kFast}}), tool("c2", "evaluate"),
               tool("c3", "read_attempt"), tool("c4", "read_attempt")});
  ChatClient client(local_provider(server), fast_client());
  ScriptedWorkspace ws(dir.path());
  CallBudget budget(20);
  AgentOptions options;
  options.loops = 2;
  // Loop 1 is accepted on the second model call; the check stops the run on the third.
  options.stop = [&]() -> std::string {
    return server.requests().size() >= 3 ? "interrupted" : "";
  };
  AgentResult result = run_agent(client, ws, budget, options);
  EXPECT_EQ(result.outcome, Outcome::stopped) << result.reason;
  EXPECT_EQ(result.reason, "stopped: interrupted");
  ASSERT_EQ(result.accepted.size(), 1u);
  EXPECT_EQ(result.accepted[0].text, kFast);
  EXPECT_EQ(result.model_calls, 3);
}

TEST(AgentRoute, ARejectedRouteFailsTheRunWithTheReason) {
  TempDir dir;
  MockOpenAiServer server(0, "the-right-key");
  ChatClient client(local_provider(server), fast_client());
  ScriptedWorkspace ws(dir.path());
  CallBudget budget(10);
  AgentResult result = run_agent(client, ws, budget, {});
  EXPECT_EQ(result.outcome, Outcome::failed);
  EXPECT_NE(result.reason.find("HTTP 401"), std::string::npos) << result.reason;
  EXPECT_EQ(result.reason.find(kFakeKey), std::string::npos);
  EXPECT_EQ(result.model_calls, 1);
}

TEST(AgentTraces, DebugWritesOneRecordPerTurnAndNoKeyAnywhere) {
  TempDir dir;
  MockOpenAiServer server;
  server.push({tool("m1", "start_subagent", {{"brief", "look"}}),
               completion_reply(std::string("my key is ") + kFakeKey),  // the subagent leaks it
               tool("m2", "write_candidate", {{"content", kFast}}), tool("m3", "evaluate")});
  ChatClient client(local_provider(server), fast_client());
  ScriptedWorkspace ws(dir.path());
  CallBudget budget(10);
  EXPECT_TRUE(traces_enabled({{"TILESMITH_DEBUG", "1"}}));
  EXPECT_FALSE(traces_enabled({{"TILESMITH_DEBUG", "0"}}));
  AgentOptions options;
  options.traces = traces_enabled({{"TILESMITH_DEBUG", "1"}});
  options.trace_result_cap = 200;
  AgentResult result = run_agent(client, ws, budget, options);
  ASSERT_EQ(result.outcome, Outcome::accepted) << result.reason;

  std::vector<std::filesystem::path> traces;
  for (const auto& e : std::filesystem::directory_iterator(dir.path() / "traces"))
    traces.push_back(e.path());
  ASSERT_EQ(traces.size(), 1u);
  EXPECT_EQ(traces[0].extension(), ".jsonl");
  std::vector<json> records;
  std::istringstream lines(read_text(traces[0]));
  for (std::string line; std::getline(lines, line);) records.push_back(json::parse(line));
  ASSERT_EQ(records.size(), 4u);
  // A record is written when its call's tool results are in: the subagent's call (model call 2)
  // lands before the main call that started it.
  std::sort(records.begin(), records.end(),
            [](const json& a, const json& b) { return a["model_call"] < b["model_call"]; });
  EXPECT_EQ(records[0]["agent"], "main");
  EXPECT_EQ(records[1]["agent"], "sub1");
  for (const auto& r : records) {
    EXPECT_GT(r["latency_ms"].get<double>(), 0);
    EXPECT_EQ(r["usage"]["prompt_tokens"], 11);
    EXPECT_EQ(r["http_attempts"], 1);
  }
  // The write_candidate result and call arguments are cut to the trace cap.
  std::string write_args = records[2]["reply"]["tool_calls"][0]["arguments"];
  EXPECT_NE(write_args.find("more bytes cut"), std::string::npos);
  EXPECT_EQ(records[3]["tool_results"][0]["name"], "evaluate");

  EXPECT_TRUE(files_containing(dir.path(), kFakeKey).empty());
  EXPECT_NE(read_text(traces[0]).find("[redacted]"), std::string::npos);
}

}  // namespace
