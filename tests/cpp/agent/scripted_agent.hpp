// A scripted gate and helpers for agent tests that drive a model from a script over the mock
// OpenAI server.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "mock_openai_server.hpp"
#include "test_util.hpp"
#include "ts/agent/agent.hpp"
#include "wrapper_fixture.hpp"

namespace ts::agent::testing {

using namespace std::chrono_literals;

// The gate stand-in: a candidate marked "FAST" is accepted, anything else is slower.
class ScriptedWorkspace : public Workspace {
 public:
  explicit ScriptedWorkspace(std::filesystem::path dir) : dir_(std::move(dir)) {}
  std::string original() override { return kWrapper; }
  ts::Expected<void> write_candidate(std::string_view text) override {
    written.emplace_back(text);
    write_text(dir_ / "attempts" / ("attempt_" + std::to_string(written.size()) + ".py"),
               std::string(text));
    return {};
  }
  ts::Expected<EvalReport> evaluate(std::string_view candidate) override {
    ++evaluations;
    EvalReport r;
    r.correctness = {{"normal", true, ""}, {"zeros", true, ""}};
    bool fast = candidate.find("FAST") != std::string_view::npos;
    r.timing = {1.0, fast ? 0.8 : 1.1, 0.5, 40};
    r.speedup = r.timing.original_ms / r.timing.candidate_ms;
    r.verdict = fast ? Verdict::accepted : Verdict::rejected;
    r.reason = fast ? "accepted: 1.25x, confirmed" : "rejected: slower (0.91x)";
    r.reason += candidate_says;
    return r;
  }
  ts::Expected<std::vector<KernelTime>> profile(std::string_view) override {
    return std::vector<KernelTime>{{"triton_poi_fused_add_relu_0", 0.4, 0.3},
                                   {"mm", 0.6, std::nullopt}};
  }
  std::vector<std::string> list_specs() override { return {"gemm", "rmsnorm"}; }
  std::filesystem::path track_dir() override { return dir_; }

  std::vector<std::string> written;
  int evaluations = 0;
  std::string candidate_says;  // appended to every reason: what a candidate's exception carried

 private:
  std::filesystem::path dir_;
};

inline Provider local_provider(const MockOpenAiServer& server) {
  Provider p;
  p.model = "mock-model";
  p.base_url = server.base_url();
  p.api_key = kFakeKey;
  return p;
}

inline ClientOptions fast_client() {
  ClientOptions o;
  o.first_byte_timeout = o.idle_timeout = 500ms;
  o.backoff_initial = 2ms;
  o.backoff_max = 10ms;
  return o;
}

inline ToolCall call(std::string id, std::string name,
                     nlohmann::json args = nlohmann::json::object()) {
  return {std::move(id), std::move(name), args.dump()};
}

inline MockReply tool(std::string id, std::string name,
                      nlohmann::json args = nlohmann::json::object()) {
  return completion_reply("", {call(std::move(id), std::move(name), std::move(args))});
}

inline const std::string kSlow = replaced(kWrapper, "0.0))\n", "0.0))  # SLOW\n");
inline const std::string kFast = replaced(kWrapper, "0.0))\n", "0.0))  # FAST\n");
inline const std::string kFaster =
    replaced(kWrapper, "grid=grid(1024)", "grid=grid(512)) # FAST2 (");

/// Agent options whose shell can run this build's Python inside the sandbox (it may live under a
/// home directory, which the sandbox hides).
inline AgentOptions sandboxed_shell() {
  AgentOptions o;
  o.shell.readable = {TS_PYTHON_PREFIX};
  o.shell.path = std::string(TS_PYTHON_PREFIX) + "/bin:/usr/local/bin:/usr/bin:/bin";
  return o;
}

inline std::string tool_result(const RecordedRequest& r, size_t from_end = 1) {
  auto messages = nlohmann::json::parse(r.body)["messages"];
  return messages[messages.size() - from_end].value("content", "");
}

}  // namespace ts::agent::testing
