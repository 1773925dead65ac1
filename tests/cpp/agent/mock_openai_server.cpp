#include "mock_openai_server.hpp"

#include <atomic>
#include <chrono>
#include <deque>
#include <mutex>
#include <thread>

#include <fmt/format.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

namespace ts::agent::testing {

using json = nlohmann::json;

MockReply completion_reply(std::string content, std::vector<ToolCall> tool_calls) {
  MockReply r;
  r.content = std::move(content);
  r.tool_calls = std::move(tool_calls);
  return r;
}

MockReply error_reply(int status, std::string message, std::optional<int> retry_after_s) {
  MockReply r;
  r.kind = MockReply::Kind::error;
  r.status = status;
  r.error_message = std::move(message);
  r.retry_after_s = retry_after_s;
  return r;
}

MockReply fault_reply(MockReply::Kind kind, int delay_ms) {
  MockReply r = completion_reply("this answer never arrives whole");
  r.kind = kind;
  r.delay_ms = delay_ms;
  return r;
}

Expected<std::vector<MockReply>> parse_script(std::string_view json_text) {
  json doc = json::parse(json_text, nullptr, false);
  if (!doc.is_array()) return fail(Errc::parse, "a mock script is a JSON array of replies");
  std::vector<MockReply> out;
  for (const auto& r : doc) {
    if (!r.is_object()) return fail(Errc::parse, "a mock reply is a JSON object");
    MockReply m;
    std::string kind = r.value("kind", "completion");
    static const std::pair<const char*, MockReply::Kind> kinds[] = {
        {"completion", MockReply::Kind::completion},
        {"error", MockReply::Kind::error},
        {"cut_stream", MockReply::Kind::cut_stream},
        {"malformed_chunk", MockReply::Kind::malformed_chunk},
        {"hang", MockReply::Kind::hang},
        {"stall_stream", MockReply::Kind::stall_stream},
        {"plain_json", MockReply::Kind::plain_json}};
    bool known = false;
    for (auto& [name, k] : kinds)
      if (kind == name) m.kind = k, known = true;
    if (!known) return fail(Errc::parse, "unknown mock reply kind '" + kind + "'");
    m.content = r.value("content", "");
    m.status = r.value("status", 200);
    m.error_message = r.value("message", "");
    if (r.contains("retry_after_s")) m.retry_after_s = r["retry_after_s"].get<int>();
    m.delay_ms = r.value("delay_ms", 0);
    for (const auto& c : r.value("tool_calls", json::array()))
      m.tool_calls.push_back({c.value("id", ""), c.value("name", ""), c.value("arguments", "{}")});
    out.push_back(std::move(m));
  }
  return out;
}

namespace {

// The chunks a real server streams for one answer: role, content in two pieces, each tool call
// (name first, arguments in two pieces), finish reason, usage.
std::vector<std::string> sse_events(const MockReply& r) {
  auto chunk = [](json choices, json extra = json::object()) {
    json c{{"id", "chatcmpl-mock"},
           {"object", "chat.completion.chunk"},
           {"model", "mock"},
           {"choices", std::move(choices)}};
    c.update(extra);
    return c.dump();
  };
  auto delta = [&](json d, json finish = nullptr) {
    return chunk(json::array({{{"index", 0}, {"delta", std::move(d)}, {"finish_reason", finish}}}));
  };
  std::vector<std::string> ev;
  ev.push_back(delta({{"role", "assistant"}, {"content", ""}}));
  if (!r.content.empty()) {
    size_t half = r.content.size() / 2;
    ev.push_back(delta({{"content", r.content.substr(0, half)}}));
    ev.push_back(delta({{"content", r.content.substr(half)}}));
  }
  for (size_t i = 0; i < r.tool_calls.size(); ++i) {
    const auto& c = r.tool_calls[i];
    ev.push_back(delta(
        {{"tool_calls", json::array({{{"index", i},
                                      {"id", c.id},
                                      {"type", "function"},
                                      {"function", {{"name", c.name}, {"arguments", ""}}}}})}}));
    size_t half = c.arguments.size() / 2;
    for (auto piece : {c.arguments.substr(0, half), c.arguments.substr(half)})
      ev.push_back(delta(
          {{"tool_calls", json::array({{{"index", i}, {"function", {{"arguments", piece}}}}})}}));
  }
  ev.push_back(delta(json::object(), r.tool_calls.empty() ? "stop" : "tool_calls"));
  ev.push_back(chunk(json::array(), {{"usage",
                                      {{"prompt_tokens", r.prompt_tokens},
                                       {"completion_tokens", r.completion_tokens}}}}));
  return ev;
}

std::string completion_json(const MockReply& r) {
  json msg{{"role", "assistant"}, {"content", r.content.empty() ? json(nullptr) : json(r.content)}};
  if (!r.tool_calls.empty()) {
    json calls = json::array();
    for (const auto& c : r.tool_calls)
      calls.push_back({{"id", c.id},
                       {"type", "function"},
                       {"function", {{"name", c.name}, {"arguments", c.arguments}}}});
    msg["tool_calls"] = calls;
  }
  return json{
      {"id", "chatcmpl-mock"},
      {"object", "chat.completion"},
      {"model", "mock"},
      {"choices", json::array({{{"index", 0},
                                {"message", msg},
                                {"finish_reason", r.tool_calls.empty() ? "stop" : "tool_calls"}}})},
      {"usage", {{"prompt_tokens", r.prompt_tokens}, {"completion_tokens", r.completion_tokens}}}}
      .dump();
}

}  // namespace

struct MockOpenAiServer::Impl {
  httplib::Server server;
  std::thread thread;
  int port = -1;
  std::string required_key;
  std::atomic<bool> stopping{false};
  mutable std::mutex mu;
  std::deque<MockReply> script;
  std::optional<MockReply> default_reply;
  std::vector<RecordedRequest> requests;

  // Sleeps up to `ms`, returning early when the server stops.
  void nap(int ms) {
    auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    while (!stopping && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }

  bool authorized(const httplib::Request& req, httplib::Response& res) {
    if (required_key.empty() || req.get_header_value("Authorization") == "Bearer " + required_key)
      return true;
    res.status = 401;
    res.set_content(R"({"error":{"message":"invalid api key","type":"invalid_request_error"}})",
                    "application/json");
    return false;
  }

  void chat(const httplib::Request& req, httplib::Response& res) {
    if (!authorized(req, res)) return;
    std::optional<MockReply> next;
    {
      std::lock_guard lock(mu);
      requests.push_back({req.method, req.path, req.get_header_value("Authorization"), req.body});
      if (!script.empty()) {
        next = std::move(script.front());
        script.pop_front();
      } else {
        next = default_reply;
      }
    }
    if (!next) {
      res.status = 400;
      res.set_content(R"({"error":{"message":"mock script exhausted"}})", "application/json");
      return;
    }
    MockReply r = std::move(*next);
    json body = json::parse(req.body, nullptr, false);
    bool stream = body.is_object() && body.value("stream", false);
    using K = MockReply::Kind;
    switch (r.kind) {
      case K::error:
        res.status = r.status;
        if (r.retry_after_s) res.set_header("Retry-After", std::to_string(*r.retry_after_s));
        res.set_content(json{{"error", {{"message", r.error_message}, {"type", "mock"}}}}.dump(),
                        "application/json");
        return;
      case K::hang: {
        nap(r.delay_ms);
        // Give up without an answer: a chunked provider that fails closes the connection.
        res.set_chunked_content_provider("text/event-stream",
                                         [](size_t, httplib::DataSink&) { return false; });
        return;
      }
      case K::plain_json:
        res.set_content(completion_json(r), "application/json");
        return;
      case K::completion:
        if (!stream) {
          res.set_content(completion_json(r), "application/json");
          return;
        }
        [[fallthrough]];
      default:
        break;
    }
    auto events = std::make_shared<std::vector<std::string>>(sse_events(r));
    auto step = std::make_shared<size_t>(0);
    res.set_chunked_content_provider("text/event-stream",
                                     [this, r, events, step](size_t, httplib::DataSink& sink) {
                                       size_t i = (*step)++;
                                       size_t cut_at = events->size() / 2;
                                       if (r.kind == K::cut_stream && i == cut_at)
                                         return false;  // connection closes
                                       if (r.kind == K::stall_stream && i == cut_at) {
                                         nap(r.delay_ms);
                                         return false;
                                       }
                                       std::string frame;
                                       if (r.kind == K::malformed_chunk && i == cut_at)
                                         frame = "data: {\"choices\": [oops\n\n";
                                       if (i < events->size())
                                         frame += "data: " + (*events)[i] + "\n\n";
                                       else if (i == events->size())
                                         frame += "data: [DONE]\n\n";
                                       if (!frame.empty()) sink.write(frame.data(), frame.size());
                                       if (i >= events->size()) sink.done();
                                       return true;
                                     });
  }
};

MockOpenAiServer::MockOpenAiServer(int port, std::string required_key) : impl_(new Impl) {
  Impl& s = *impl_;
  s.required_key = std::move(required_key);
  s.server.set_keep_alive_max_count(1000);
  s.server.Post("/v1/chat/completions", [this](const httplib::Request& req,
                                               httplib::Response& res) { impl_->chat(req, res); });
  s.server.Get("/v1/models", [this](const httplib::Request& req, httplib::Response& res) {
    if (!impl_->authorized(req, res)) return;
    res.set_content(R"({"object":"list","data":[{"id":"mock-model","object":"model"}]})",
                    "application/json");
  });
  // cpp-httplib 0.11 sets SO_REUSEPORT on Linux, which lets two servers bind one port and the
  // kernel split connections between them: the fake cliproxyapi's port race with a parallel
  // test's mock then passed the startup probe and lost the chat request to the other server.
  // SO_REUSEADDR alone makes a taken port fail the bind, which open_route retries on a new port.
  s.server.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  if (port == 0)
    s.port = s.server.bind_to_any_port("127.0.0.1");
  else
    s.port = s.server.bind_to_port("127.0.0.1", port) ? port : -1;
  if (s.port > 0) {
    s.thread = std::thread([this] { impl_->server.listen_after_bind(); });
    // stop() is a no-op until the server runs, so a quick stop would otherwise never end it.
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!s.server.is_running() && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

MockOpenAiServer::~MockOpenAiServer() {
  stop();
}

void MockOpenAiServer::stop() {
  impl_->stopping = true;
  impl_->server.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

int MockOpenAiServer::port() const {
  return impl_->port;
}
bool MockOpenAiServer::ok() const {
  return impl_->port > 0;
}
std::string MockOpenAiServer::base_url() const {
  return fmt::format("http://127.0.0.1:{}/v1", impl_->port);
}
void MockOpenAiServer::push(MockReply reply) {
  std::lock_guard lock(impl_->mu);
  impl_->script.push_back(std::move(reply));
}
void MockOpenAiServer::push(const std::vector<MockReply>& replies) {
  for (const auto& r : replies) push(r);
}
void MockOpenAiServer::set_default_reply(MockReply reply) {
  std::lock_guard lock(impl_->mu);
  impl_->default_reply = std::move(reply);
}
std::size_t MockOpenAiServer::remaining() const {
  std::lock_guard lock(impl_->mu);
  return impl_->script.size();
}
std::vector<RecordedRequest> MockOpenAiServer::requests() const {
  std::lock_guard lock(impl_->mu);
  return impl_->requests;
}

}  // namespace ts::agent::testing
