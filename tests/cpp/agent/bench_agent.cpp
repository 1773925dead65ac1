// The runtime's own cost per model call, server time excluded: a 50-turn conversation with 20
// tools where the "server" is an in-memory transport that hands back pre-built SSE bytes at
// once. What is timed is everything the runtime does per call: encoding the growing request
// (history + 20 schemas), SSE decoding, tool dispatch, the state machine and the budget.
//
//   build/cpp/tests/cpp/agent/bench_agent --benchmark_repetitions=10
#include <benchmark/benchmark.h>

#include <nlohmann/json.hpp>

#include "ts/agent/agent.hpp"
#include "wrapper_fixture.hpp"

namespace {

using namespace ts::agent;
using json = nlohmann::json;

constexpr int kTurns = 50;
constexpr int kExtraTools = 12;  // + 8 built-in = 20 tools

std::string sse_for(const std::string& id, const std::string& name, const std::string& args) {
  auto frame = [](const json& delta, const json& finish) {
    return "data: " +
           json{{"choices",
                 json::array({{{"index", 0}, {"delta", delta}, {"finish_reason", finish}}})}}
               .dump() +
           "\n\n";
  };
  std::string s = frame({{"role", "assistant"}, {"content", ""}}, nullptr);
  s += frame({{"tool_calls", json::array({{{"index", 0},
                                           {"id", id},
                                           {"type", "function"},
                                           {"function", {{"name", name}, {"arguments", args}}}}})}},
             nullptr);
  s += frame(json::object(), "tool_calls");
  s += "data: " +
       json{{"choices", json::array()},
            {"usage", {{"prompt_tokens", 900}, {"completion_tokens", 40}}}}
           .dump() +
       "\n\ndata: [DONE]\n\n";
  return s;
}

// Replies turn by turn: 48 tool lookups, a candidate, its evaluation (accepted).
class ScriptTransport : public Transport {
 public:
  ScriptTransport() {
    for (int i = 0; i < kTurns - 2; ++i)
      replies_.push_back(sse_for("c" + std::to_string(i),
                                 "lookup_" + std::to_string(i % kExtraTools),
                                 R"({"query":"tile sizes for sm_90a"})"));
    std::string fast =
        ts::agent::testing::replaced(ts::agent::testing::kWrapper, "0.0))", "0.0))  # FAST");
    replies_.push_back(sse_for("w", "write_candidate", json{{"content", fast}}.dump()));
    replies_.push_back(sse_for("e", "evaluate", "{}"));
  }
  HttpResult post(const HttpRequest& request, const HttpDeadlines&, const BodySink& sink) override {
    benchmark::DoNotOptimize(request.body.data());
    sink(replies_[next_++ % replies_.size()]);
    return {200, TransportFailure::none, {}, {}, std::nullopt};
  }
  void rewind() { next_ = 0; }

 private:
  std::vector<std::string> replies_;
  size_t next_ = 0;
};

class InstantWorkspace : public Workspace {
 public:
  std::string original() override { return ts::agent::testing::kWrapper; }
  ts::Expected<void> write_candidate(std::string_view) override { return {}; }
  ts::Expected<EvalReport> evaluate(std::string_view) override {
    EvalReport r;
    r.verdict = Verdict::accepted;
    r.speedup = 1.2;
    r.reason = "accepted";
    return r;
  }
  ts::Expected<std::vector<KernelTime>> profile(std::string_view) override {
    return std::vector<KernelTime>{};
  }
  std::filesystem::path track_dir() override { return std::filesystem::temp_directory_path(); }
};

void BM_RuntimeCostPerModelCall(benchmark::State& state) {
  auto transport = std::make_unique<ScriptTransport>();
  ScriptTransport* script = transport.get();
  Provider p;
  p.model = "bench";
  p.base_url = "http://127.0.0.1:1/v1";
  ChatClient client(p, {}, std::move(transport));
  InstantWorkspace ws;
  AgentOptions options;
  for (int i = 0; i < kExtraTools; ++i)
    options.extra_tools.push_back(
        {{"lookup_" + std::to_string(i),
          "Look up a tuning note in the knowledge base number " + std::to_string(i),
          R"({"type":"object","properties":{"query":{"type":"string","description":"what to look up"}},"required":["query"]})"},
         [](std::string_view args) -> ts::Expected<std::string> {
           return std::string("note for ") + std::string(args);
         }});
  int calls = 0;
  for (auto _ : state) {
    script->rewind();
    CallBudget budget(std::nullopt);
    AgentResult r = run_agent(client, ws, budget, options);
    if (r.outcome != Outcome::accepted || r.model_calls != kTurns)
      state.SkipWithError("conversation did not finish");
    calls += r.model_calls;
  }
  // Seconds per model call: wall time of one 50-call conversation divided by 50.
  state.counters["per_model_call"] = benchmark::Counter(
      kTurns, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  benchmark::DoNotOptimize(calls);
}
BENCHMARK(BM_RuntimeCostPerModelCall)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
