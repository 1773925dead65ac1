// An OpenAI-compatible chat-completions client with function calling, streamed (SSE) or not.
//
// One `complete()` is one model invocation. Inside it, transport failures are retried with
// exponential backoff and full jitter, honouring Retry-After: HTTP 429 and 5xx, a refused or
// reset connection, a stream cut before its end, a malformed chunk, and a server that stops
// answering (deadlines on connect, first byte, silence mid-stream, the whole attempt and the
// whole invocation). Any other 4xx (400/401/403/404) fails at once with `Errc::rejected`.
//
//   ts::agent::ChatClient client(provider, {.first_byte_timeout = 30s});
//   auto reply = client.complete({.messages = {{.role = Role::user, .content = "hi"}}});
//   if (reply) use(reply->message.content, reply->message.tool_calls);
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ts/agent/provider.hpp"
#include "ts/error.hpp"

namespace ts::agent {

enum class Role { system, user, assistant, tool };
const char* role_name(Role role) noexcept;

struct ToolCall {
  std::string id;
  std::string name;
  std::string arguments;  // JSON text exactly as the model produced it
};

struct Message {
  Role role = Role::user;
  std::string content;
  std::vector<ToolCall> tool_calls;  // assistant messages
  std::string tool_call_id;          // tool messages
};

inline Message system_message(std::string text) {
  return {Role::system, std::move(text), {}, {}};
}
inline Message user_message(std::string text) {
  return {Role::user, std::move(text), {}, {}};
}
inline Message tool_message(std::string call_id, std::string text) {
  return {Role::tool, std::move(text), {}, std::move(call_id)};
}

/// A function offered to the model; `parameters` is a JSON Schema object, as JSON text.
struct ToolSpec {
  std::string name;
  std::string description;
  std::string parameters;
};

struct ChatRequest {
  std::vector<Message> messages;
  std::vector<ToolSpec> tools;
};

struct Usage {
  int prompt_tokens = 0;
  int completion_tokens = 0;
};

struct ChatResponse {
  Message message;            // role == assistant
  std::string finish_reason;  // "stop", "tool_calls", "length", ...
  Usage usage;
  int http_attempts = 0;  // 1 + retries
  std::chrono::microseconds latency{0};
};

struct ClientOptions {
  bool stream = true;
  std::chrono::milliseconds connect_timeout{10'000};
  std::chrono::milliseconds first_byte_timeout{180'000};    // request sent -> first response byte
  std::chrono::milliseconds idle_timeout{120'000};          // longest silence once bytes flow
  std::chrono::milliseconds attempt_timeout{900'000};       // one HTTP attempt, end to end
  std::chrono::milliseconds invocation_timeout{1'800'000};  // all attempts and waits
  int max_attempts = 6;
  std::chrono::milliseconds backoff_initial{1'000};
  std::chrono::milliseconds backoff_max{60'000};
  std::chrono::milliseconds retry_after_cap{120'000};  // longest Retry-After honoured as given
  /// Why the caller wants the call to end now (an interrupt, a time budget), or empty. Asked
  /// every few milliseconds while the call waits, on the network or between retries; an answer
  /// ends the call at once with Errc::cancelled.
  std::function<std::string()> stop{};
};

// ---- transport: one HTTP POST with deadlines; the real one is libcurl -------------------------

struct HttpRequest {
  std::string url;
  std::vector<std::string> headers;  // "Name: value"
  std::string body;
};

struct HttpDeadlines {
  std::chrono::milliseconds connect, first_byte, idle, total;
  std::function<bool()> stop{};  // true: abandon the transfer now (TransportFailure::stopped)
};

enum class TransportFailure {
  none,
  connect,
  first_byte_timeout,
  idle_timeout,
  total_timeout,
  reset,
  aborted,
  stopped
};
const char* transport_failure_name(TransportFailure f) noexcept;

struct HttpResult {
  long status = 0;
  TransportFailure failure = TransportFailure::none;
  std::string detail;                 // what failed, for messages
  std::string error_body;             // body of a non-2xx answer (capped)
  std::optional<double> retry_after;  // seconds, from a Retry-After header
};

/// Receives the body of a 2xx answer as it arrives; returning false aborts the transfer.
using BodySink = std::function<bool(std::string_view)>;

class Transport {
 public:
  virtual ~Transport() = default;
  virtual HttpResult post(const HttpRequest& request, const HttpDeadlines& deadlines,
                          const BodySink& sink) = 0;
};

/// libcurl (multi interface, so every deadline is checked every few milliseconds).
std::unique_ptr<Transport> make_curl_transport();

// ---- models ------------------------------------------------------------------------------------

/// What the agent talks to: a chat request (messages and tools) in, the assistant's message out.
/// ChatClient (an OpenAI-compatible server over HTTP) and the built-in search agent
/// (ts/agent/search.hpp) are the two; make_model() picks one for a provider.
class Model {
 public:
  virtual ~Model() = default;
  /// One model invocation. Errc::cancelled when ClientOptions::stop asked for it.
  virtual Expected<ChatResponse> complete(const ChatRequest& request) = 0;
  virtual const Provider& provider() const = 0;
};

// ---- the client --------------------------------------------------------------------------------

class ChatClient final : public Model {
 public:
  explicit ChatClient(Provider provider, ClientOptions options = {},
                      std::unique_ptr<Transport> transport = nullptr);
  ~ChatClient() override;
  ChatClient(const ChatClient&) = delete;
  ChatClient& operator=(const ChatClient&) = delete;

  /// One model invocation (retries inside). Not thread-safe: one client per thread.
  Expected<ChatResponse> complete(const ChatRequest& request) override;

  const Provider& provider() const override { return provider_; }
  const ClientOptions& options() const { return options_; }

 private:
  Provider provider_;
  ClientOptions options_;
  std::unique_ptr<Transport> transport_;
};

/// The request body `complete()` sends (exposed for tests and benchmarks).
std::string encode_chat_request(const std::string& model, const ChatRequest& request, bool stream);

}  // namespace ts::agent
