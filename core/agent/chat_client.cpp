#include <algorithm>
#include <optional>
#include <random>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ts/agent/chat.hpp"

namespace ts::agent {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

const char* role_name(Role role) noexcept {
  switch (role) {
    case Role::system:
      return "system";
    case Role::user:
      return "user";
    case Role::assistant:
      return "assistant";
    case Role::tool:
      return "tool";
  }
  return "user";
}

const char* transport_failure_name(TransportFailure f) noexcept {
  switch (f) {
    case TransportFailure::none:
      return "none";
    case TransportFailure::connect:
      return "connect";
    case TransportFailure::first_byte_timeout:
      return "first_byte_timeout";
    case TransportFailure::idle_timeout:
      return "idle_timeout";
    case TransportFailure::total_timeout:
      return "total_timeout";
    case TransportFailure::reset:
      return "reset";
    case TransportFailure::aborted:
      return "aborted";
    case TransportFailure::stopped:
      return "stopped";
  }
  return "unknown";
}

// ---- encoding -----------------------------------------------------------------------------------

std::string encode_chat_request(const std::string& model, const ChatRequest& request, bool stream) {
  // Built by hand around nlohmann's string escaping: tool schemas are inserted as the JSON text
  // they already are (validated when the tool table is built), so 20 schemas cost a memcpy.
  std::string out;
  out.reserve(4096);
  out += "{\"model\":";
  out += json(model).dump();
  out += ",\"messages\":[";
  for (size_t i = 0; i < request.messages.size(); ++i) {
    const Message& m = request.messages[i];
    if (i) out += ',';
    out += "{\"role\":\"";
    out += role_name(m.role);
    out += "\",\"content\":";
    if (m.role == Role::assistant && m.content.empty() && !m.tool_calls.empty())
      out += "null";
    else
      out += json(m.content).dump();
    if (!m.tool_calls.empty()) {
      out += ",\"tool_calls\":[";
      for (size_t k = 0; k < m.tool_calls.size(); ++k) {
        const ToolCall& c = m.tool_calls[k];
        if (k) out += ',';
        out += "{\"id\":" + json(c.id).dump() +
               ",\"type\":\"function\",\"function\":{\"name\":" + json(c.name).dump() +
               ",\"arguments\":" + json(c.arguments).dump() + "}}";
      }
      out += ']';
    }
    if (m.role == Role::tool) out += ",\"tool_call_id\":" + json(m.tool_call_id).dump();
    out += '}';
  }
  out += ']';
  if (!request.tools.empty()) {
    out += ",\"tools\":[";
    for (size_t i = 0; i < request.tools.size(); ++i) {
      const ToolSpec& t = request.tools[i];
      if (i) out += ',';
      out += "{\"type\":\"function\",\"function\":{\"name\":" + json(t.name).dump() +
             ",\"description\":" + json(t.description).dump() + ",\"parameters\":" + t.parameters +
             "}}";
    }
    out += "],\"tool_choice\":\"auto\"";
  }
  if (stream) out += ",\"stream\":true,\"stream_options\":{\"include_usage\":true}";
  out += '}';
  return out;
}

// ---- decoding -----------------------------------------------------------------------------------

namespace {

void read_usage(const json& doc, Usage& usage) {
  auto it = doc.find("usage");
  if (it == doc.end() || !it->is_object()) return;
  usage.prompt_tokens = it->value("prompt_tokens", 0);
  usage.completion_tokens = it->value("completion_tokens", 0);
}

std::string string_or_empty(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// A whole (non-streamed) chat.completion body.
Expected<ChatResponse> decode_completion(const std::string& body) {
  json doc = json::parse(body, nullptr, false);
  if (!doc.is_object()) return fail(Errc::parse, "the completion is not a JSON object");
  auto choices = doc.find("choices");
  if (choices == doc.end() || !choices->is_array() || choices->empty() ||
      !(*choices)[0].is_object())
    return fail(Errc::parse, "the completion has no choices");
  const json& choice = (*choices)[0];
  auto msg = choice.find("message");
  if (msg == choice.end() || !msg->is_object())
    return fail(Errc::parse, "the completion's choice has no message");
  ChatResponse r;
  r.message.role = Role::assistant;
  r.message.content = string_or_empty(*msg, "content");
  r.finish_reason = string_or_empty(choice, "finish_reason");
  if (auto calls = msg->find("tool_calls"); calls != msg->end() && calls->is_array()) {
    for (const auto& c : *calls) {
      if (!c.is_object() || !c.contains("function") || !c["function"].is_object())
        return fail(Errc::parse, "a tool call has no function");
      r.message.tool_calls.push_back({string_or_empty(c, "id"),
                                      string_or_empty(c["function"], "name"),
                                      string_or_empty(c["function"], "arguments")});
    }
  }
  read_usage(doc, r.usage);
  return r;
}

// Server-sent events of chat.completion.chunk objects, fed in arbitrary byte pieces.
class SseDecoder {
 public:
  // False on a malformed chunk (the attempt is abandoned and retried).
  bool feed(std::string_view bytes) {
    buffer_.append(bytes);
    size_t start = 0;
    while (true) {
      size_t nl = buffer_.find('\n', start);
      if (nl == std::string::npos) break;
      std::string_view line(buffer_.data() + start, nl - start);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      start = nl + 1;
      if (!on_line(line)) return false;
    }
    buffer_.erase(0, start);
    return true;
  }
  bool done() const { return done_; }
  bool saw_data() const { return saw_data_; }
  const std::string& error() const { return error_; }

  Expected<ChatResponse> finish() {
    if (!error_.empty()) return fail(Errc::parse, error_);
    if (!done_) return fail(Errc::transport, "the stream ended before [DONE]");
    ChatResponse r;
    r.message.role = Role::assistant;
    r.message.content = std::move(content_);
    r.finish_reason = finish_reason_;
    r.usage = usage_;
    for (auto& c : calls_) {
      if (c.name.empty()) return fail(Errc::parse, "a streamed tool call has no name");
      r.message.tool_calls.push_back(std::move(c));
    }
    return r;
  }

 private:
  bool on_line(std::string_view line) {
    if (done_ || line.empty() || line[0] == ':') return true;  // blank, comment, after DONE
    if (line.substr(0, 5) != "data:") return true;             // event:, id:, retry:
    saw_data_ = true;
    std::string_view data = line.substr(5);
    while (!data.empty() && data.front() == ' ') data.remove_prefix(1);
    if (data == "[DONE]") {
      done_ = true;
      return true;
    }
    json chunk = json::parse(data, nullptr, false);
    if (!chunk.is_object()) return bad(fmt::format("malformed chunk: {:.80}", data));
    if (chunk.contains("error"))
      return bad("the stream carried an error: " + chunk["error"].dump());
    read_usage(chunk, usage_);
    auto choices = chunk.find("choices");
    if (choices == chunk.end() || !choices->is_array()) return true;  // usage-only chunk
    for (const auto& choice : *choices) {
      if (!choice.is_object()) return bad("malformed chunk: a choice is not an object");
      if (auto fr = string_or_empty(choice, "finish_reason"); !fr.empty()) finish_reason_ = fr;
      auto delta = choice.find("delta");
      if (delta == choice.end() || !delta->is_object()) continue;
      content_ += string_or_empty(*delta, "content");
      auto calls = delta->find("tool_calls");
      if (calls == delta->end() || !calls->is_array()) continue;
      for (const auto& c : *calls) {
        if (!c.is_object()) return bad("malformed chunk: a tool call delta is not an object");
        size_t index = c.contains("index") && c["index"].is_number_unsigned()
                           ? c["index"].get<size_t>()
                           : calls_.size() - (calls_.empty() ? 0 : 1);
        if (index > 1024) return bad("malformed chunk: tool call index out of range");
        if (calls_.size() <= index) calls_.resize(index + 1);
        ToolCall& call = calls_[index];
        if (auto id = string_or_empty(c, "id"); !id.empty()) call.id = id;
        if (auto fn = c.find("function"); fn != c.end() && fn->is_object()) {
          call.name += string_or_empty(*fn, "name");
          call.arguments += string_or_empty(*fn, "arguments");
        }
      }
    }
    return true;
  }
  bool bad(std::string message) {
    error_ = std::move(message);
    return false;
  }

  std::string buffer_, content_, finish_reason_, error_;
  std::vector<ToolCall> calls_;
  Usage usage_;
  bool done_ = false;
  bool saw_data_ = false;
};

// "HTTP 401: Incorrect API key provided" from an OpenAI-style error body.
std::string describe_http_error(const HttpResult& r, const std::string& secret) {
  std::string msg;
  json doc = json::parse(r.error_body, nullptr, false);
  if (doc.is_object() && doc.contains("error")) {
    const json& e = doc["error"];
    msg =
        e.is_object() ? string_or_empty(e, "message") : (e.is_string() ? e.get<std::string>() : "");
  }
  if (msg.empty()) msg = r.error_body.substr(0, 300);
  // Servers sometimes echo a (partial) key back; never let it into a message.
  if (!secret.empty())
    for (size_t pos; (pos = msg.find(secret)) != std::string::npos;)
      msg.replace(pos, secret.size(), "[redacted]");
  return fmt::format("HTTP {}: {}", r.status, msg);
}

}  // namespace

// ---- the client ---------------------------------------------------------------------------------

ChatClient::ChatClient(Provider provider, ClientOptions options,
                       std::unique_ptr<Transport> transport)
    : provider_(std::move(provider)),
      options_(options),
      transport_(transport ? std::move(transport) : make_curl_transport()) {}

ChatClient::~ChatClient() = default;

Expected<ChatResponse> ChatClient::complete(const ChatRequest& request) {
  const auto start = Clock::now();
  const auto invocation_deadline = start + options_.invocation_timeout;
  HttpRequest http;
  http.url = provider_.base_url + "/chat/completions";
  http.headers = {"Content-Type: application/json",
                  options_.stream ? "Accept: text/event-stream" : "Accept: application/json"};
  if (!provider_.api_key.empty())
    http.headers.push_back("Authorization: Bearer " + provider_.api_key);
  http.body = encode_chat_request(provider_.model, request, options_.stream);

  thread_local std::mt19937_64 rng{std::random_device{}()};
  std::string last_problem;
  auto stopped = [&]() -> std::optional<Error> {
    if (!options_.stop) return std::nullopt;
    std::string why = options_.stop();
    if (why.empty()) return std::nullopt;
    return Error{Errc::cancelled, fmt::format("model call to {} stopped: {}", http.url, why)};
  };
  for (int attempt = 1; attempt <= std::max(1, options_.max_attempts); ++attempt) {
    if (auto stop = stopped()) return tl::unexpected(*stop);
    auto now = Clock::now();
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(invocation_deadline - now);
    if (left.count() <= 0) break;
    HttpDeadlines deadlines{options_.connect_timeout, options_.first_byte_timeout,
                            options_.idle_timeout, std::min(options_.attempt_timeout, left)};
    if (options_.stop) {
      // Asked at most every 50 ms: the answer may cost a lock (Python's signal check).
      auto next_check = Clock::now();
      deadlines.stop = [&, next_check]() mutable {
        if (Clock::now() < next_check) return false;
        next_check = Clock::now() + std::chrono::milliseconds(50);
        return !options_.stop().empty();
      };
    }

    // A streamed request is kept whole too: some OpenAI-compatible servers answer it with a
    // plain chat.completion body, which is then decoded as one.
    SseDecoder sse;
    std::string whole;
    BodySink sink = [&](std::string_view b) {
      whole.append(b);
      return !options_.stream || sse.feed(b);
    };
    HttpResult result = transport_->post(http, deadlines, sink);
    if (result.failure == TransportFailure::stopped)
      if (auto stop = stopped()) return tl::unexpected(*stop);

    std::optional<double> retry_after;
    if (result.failure == TransportFailure::none && result.status >= 200 && result.status < 300) {
      auto decoded = options_.stream && sse.saw_data() ? sse.finish() : decode_completion(whole);
      if (decoded) {
        decoded->http_attempts = attempt;
        decoded->latency =
            std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start);
        return decoded;
      }
      last_problem = decoded.error().message;  // cut stream or malformed body: retry
    } else if (result.failure == TransportFailure::aborted) {
      last_problem = sse.error().empty() ? result.detail : sse.error();
    } else if (result.failure != TransportFailure::none) {
      last_problem = fmt::format("{} ({})", transport_failure_name(result.failure), result.detail);
    } else if (result.status == 429 || result.status == 408 || result.status >= 500) {
      last_problem = describe_http_error(result, provider_.api_key);
      retry_after = result.retry_after;
    } else {
      // 400/401/403/404 and friends will not get better by asking again.
      return fail(Errc::rejected,
                  fmt::format("{} rejected the request to {}: {}", route_kind_name(provider_.route),
                              http.url, describe_http_error(result, provider_.api_key)));
    }
    if (attempt == options_.max_attempts) break;

    // Wait: Retry-After as given (capped), else exponential backoff with full jitter.
    std::chrono::milliseconds wait;
    if (retry_after) {
      wait = std::min(options_.retry_after_cap,
                      std::chrono::milliseconds(static_cast<long long>(*retry_after * 1000)));
    } else {
      double cap = std::min<double>(
          options_.backoff_max.count(),
          options_.backoff_initial.count() * double(1ull << std::min(attempt - 1, 20)));
      std::uniform_real_distribution<double> jitter(cap / 2, cap);
      wait = std::chrono::milliseconds(static_cast<long long>(jitter(rng)));
    }
    if (Clock::now() + wait >= invocation_deadline) {
      last_problem +=
          fmt::format("; the next wait ({} ms) would pass the invocation deadline", wait.count());
      break;
    }
    for (auto until = Clock::now() + wait; Clock::now() < until;) {  // a stop cuts the wait
      if (auto stop = stopped()) return tl::unexpected(*stop);
      std::this_thread::sleep_for(
          std::min<Clock::duration>(std::chrono::milliseconds(50), until - Clock::now()));
    }
  }
  auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
  return fail(Errc::transport, fmt::format("model call to {} failed after {} ms: {}", http.url,
                                           elapsed.count(), last_problem));
}

}  // namespace ts::agent
