// A real HTTP server on 127.0.0.1 that speaks the OpenAI chat-completions wire format, with
// scripted replies and fault injection. Used by the C++ tests, by fake_cliproxyapi, and (as the
// `mock_openai_server` executable, driven by a JSON script) by Python and integration tests.
//
//   MockOpenAiServer server;                       // port 0: the kernel picks a free port
//   server.push(completion_reply("", {{"c1", "read_attempt", "{}"}}));
//   server.push(error_reply(429, "slow down", /*retry_after_s=*/0));
//   ChatClient client(Provider{.base_url = server.base_url(), ...});
//
// Each POST /v1/chat/completions takes the next reply. A completion is served as SSE when the
// request says "stream": true and as one JSON body otherwise. GET /v1/models lists one model.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ts/agent/chat.hpp"
#include "ts/error.hpp"

namespace ts::agent::testing {

struct MockReply {
  enum class Kind {
    completion,       // a normal answer (content and/or tool calls)
    error,            // HTTP `status` with an OpenAI-style error body (and Retry-After)
    cut_stream,       // a streamed answer whose connection closes after the first events
    malformed_chunk,  // a streamed answer with one chunk that is not JSON
    hang,             // nothing at all for `delay_ms`, then the connection closes
    stall_stream,     // first events, then silence for `delay_ms`, then close
    plain_json,       // a completion as one JSON body even when the request asked for a stream
  };
  Kind kind = Kind::completion;
  std::string content;
  std::vector<ToolCall> tool_calls;
  int status = 200;
  std::string error_message;
  std::optional<int> retry_after_s;
  int delay_ms = 0;
  int prompt_tokens = 11, completion_tokens = 7;
};

MockReply completion_reply(std::string content, std::vector<ToolCall> tool_calls = {});
MockReply error_reply(int status, std::string message, std::optional<int> retry_after_s = {});
MockReply fault_reply(MockReply::Kind kind, int delay_ms = 0);

/// A JSON array of replies, e.g.
///   [{"kind":"completion","tool_calls":[{"id":"c1","name":"read_attempt","arguments":"{}"}]},
///    {"kind":"error","status":429,"message":"slow down","retry_after_s":0},
///    {"kind":"completion","content":"done"}]
Expected<std::vector<MockReply>> parse_script(std::string_view json_text);

struct RecordedRequest {
  std::string method, path, authorization, body;
};

class MockOpenAiServer {
 public:
  /// port 0 picks a free port. A non-empty `required_key` answers 401 to any other bearer.
  explicit MockOpenAiServer(int port = 0, std::string required_key = {});
  ~MockOpenAiServer();
  MockOpenAiServer(const MockOpenAiServer&) = delete;
  MockOpenAiServer& operator=(const MockOpenAiServer&) = delete;

  int port() const;
  std::string base_url() const;  // "http://127.0.0.1:<port>/v1"
  bool ok() const;               // false when the port could not be bound

  void push(MockReply reply);
  void push(const std::vector<MockReply>& replies);
  /// Served when the script is empty (else: HTTP 400 "mock script exhausted").
  void set_default_reply(MockReply reply);
  std::size_t remaining() const;
  std::vector<RecordedRequest> requests() const;  // chat-completion requests, in order
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ts::agent::testing
