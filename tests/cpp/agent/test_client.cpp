// The chat client against a real HTTP server on 127.0.0.1, with fault injection.
#include "ts/agent/chat.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "mock_openai_server.hpp"
#include "test_util.hpp"

namespace {

using namespace ts::agent;
using namespace ts::agent::testing;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using K = MockReply::Kind;

Provider local_provider(const MockOpenAiServer& server) {
  Provider p;
  p.route = RouteKind::openai;
  p.model = "mock-model";
  p.base_url = server.base_url();
  p.api_key = kFakeKey;
  return p;
}

ClientOptions fast(bool stream = true) {
  ClientOptions o;
  o.stream = stream;
  o.connect_timeout = 500ms;
  o.first_byte_timeout = 300ms;
  o.idle_timeout = 300ms;
  o.attempt_timeout = 3s;
  o.invocation_timeout = 10s;
  o.max_attempts = 4;
  o.backoff_initial = 5ms;
  o.backoff_max = 20ms;
  return o;
}

ChatRequest hello() {
  ChatRequest r;
  r.messages = {system_message("be brief"), user_message("hi")};
  r.tools = {{"read_attempt", "read it", R"({"type":"object","properties":{}})"}};
  return r;
}

class ChatClientTest : public ::testing::TestWithParam<bool> {};

TEST_P(ChatClientTest, DecodesContentToolCallsAndUsage) {
  MockOpenAiServer server;
  ASSERT_TRUE(server.ok());
  server.push(completion_reply("thinking", {{"call_1", "read_attempt", R"({"which":"base"})"},
                                            {"call_2", "evaluate", "{}"}}));
  ChatClient client(local_provider(server), fast(GetParam()));
  auto r = client.complete(hello());
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->message.role, Role::assistant);
  EXPECT_EQ(r->message.content, "thinking");
  ASSERT_EQ(r->message.tool_calls.size(), 2u);
  EXPECT_EQ(r->message.tool_calls[0].id, "call_1");
  EXPECT_EQ(r->message.tool_calls[0].name, "read_attempt");
  EXPECT_EQ(r->message.tool_calls[0].arguments, R"({"which":"base"})");
  EXPECT_EQ(r->message.tool_calls[1].name, "evaluate");
  EXPECT_EQ(r->finish_reason, "tool_calls");
  EXPECT_EQ(r->usage.prompt_tokens, 11);
  EXPECT_EQ(r->usage.completion_tokens, 7);
  EXPECT_EQ(r->http_attempts, 1);

  auto requests = server.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].path, "/v1/chat/completions");
  EXPECT_EQ(requests[0].authorization, std::string("Bearer ") + kFakeKey);
  auto body = nlohmann::json::parse(requests[0].body);
  EXPECT_EQ(body["model"], "mock-model");
  EXPECT_EQ(body["messages"].size(), 2u);
  EXPECT_EQ(body["tools"][0]["function"]["name"], "read_attempt");
  EXPECT_EQ(body.value("stream", false), GetParam());
}

INSTANTIATE_TEST_SUITE_P(StreamedAndNot, ChatClientTest, ::testing::Bool());

// One call whose stop check says `why` from `after` on; it must end cancelled within 2 s.
ts::Error stopped_call(MockReply reply, ClientOptions o, std::chrono::milliseconds after,
                       std::string why) {
  MockOpenAiServer server;
  server.push(std::move(reply));
  auto t0 = Clock::now();
  o.stop = [=]() -> std::string { return Clock::now() - t0 > after ? why : ""; };
  ChatClient client(local_provider(server), o);
  auto r = client.complete(hello());
  EXPECT_LT(Clock::now() - t0, 2s);
  if (r) {
    ADD_FAILURE() << "the call was not stopped";
    return {};
  }
  EXPECT_EQ(r.error().code, ts::Errc::cancelled);
  return r.error();
}

TEST(ChatClient, AStopEndsACallThatIsWaitingAtOnce) {
  ClientOptions o = fast();
  o.first_byte_timeout = 10s;
  auto e = stopped_call(fault_reply(K::hang, 5000), o, 200ms, "interrupted");
  EXPECT_NE(e.message.find("stopped: interrupted"), std::string::npos) << e.message;
}

TEST(ChatClient, AStopCutsTheWaitBeforeARetry) {
  ClientOptions o = fast();
  o.retry_after_cap = 60s;
  o.invocation_timeout = 120s;
  stopped_call(error_reply(429, "slow down", /*retry_after_s=*/30), o, 300ms, "time budget spent");
}

TEST(ChatClient, AStreamedRequestAnsweredWithPlainJsonIsAccepted) {
  MockOpenAiServer server;
  MockReply plain = completion_reply("plain", {{"c1", "evaluate", "{}"}});
  plain.kind = K::plain_json;
  server.push(plain);
  ChatClient client(local_provider(server), fast(/*stream=*/true));
  auto r = client.complete(hello());
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->message.content, "plain");
  ASSERT_EQ(r->message.tool_calls.size(), 1u);
  EXPECT_EQ(r->message.tool_calls[0].name, "evaluate");
  EXPECT_EQ(r->http_attempts, 1);
  EXPECT_EQ(server.requests().size(), 1u);
}

TEST(ChatClientFaults, RetriesEachTransientFaultWithinOneInvocation) {
  struct Case {
    const char* name;
    MockReply fault;
  };
  std::vector<Case> cases = {
      {"429", error_reply(429, "rate limited", 0)},
      {"500", error_reply(500, "internal")},
      {"503", error_reply(503, "overloaded")},
      {"cut mid-stream", fault_reply(K::cut_stream)},
      {"malformed chunk", fault_reply(K::malformed_chunk)},
      {"hung server", fault_reply(K::hang, 5'000)},
      {"stalled stream", fault_reply(K::stall_stream, 5'000)},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    MockOpenAiServer server;
    server.push(c.fault);
    server.push(completion_reply("recovered"));
    ChatClient client(local_provider(server), fast());
    auto start = Clock::now();
    auto r = client.complete(hello());
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->message.content, "recovered");
    EXPECT_EQ(r->http_attempts, 2);
    EXPECT_EQ(server.requests().size(), 2u);
    EXPECT_LT(Clock::now() - start, 2s);  // deadlines of 300 ms, not the server's 5 s
  }
}

TEST(ChatClientFaults, HonoursRetryAfter) {
  MockOpenAiServer server;
  server.push(error_reply(429, "slow down", 1));
  server.push(completion_reply("ok"));
  ChatClient client(local_provider(server), fast());
  auto start = Clock::now();
  auto r = client.complete(hello());
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_GE(Clock::now() - start, 950ms);  // the backoff alone would be <= 20 ms
  EXPECT_EQ(r->http_attempts, 2);
}

TEST(ChatClientFaults, ClientErrorsFailAtOnceWithoutTheKey) {
  for (int status : {400, 401, 403}) {
    MockOpenAiServer server;
    server.push(error_reply(status, std::string("bad request; key was ") + kFakeKey));
    server.push(completion_reply("never served"));
    ChatClient client(local_provider(server), fast());
    auto r = client.complete(hello());
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, ts::Errc::rejected);
    EXPECT_NE(r.error().message.find("HTTP " + std::to_string(status)), std::string::npos);
    EXPECT_EQ(r.error().message.find(kFakeKey), std::string::npos) << r.error().message;
    EXPECT_EQ(server.requests().size(), 1u);
  }
}

TEST(ChatClientFaults, GivesUpAfterMaxAttempts) {
  MockOpenAiServer server;
  for (int i = 0; i < 10; ++i) server.push(error_reply(500, "down"));
  ChatClient client(local_provider(server), fast());
  auto r = client.complete(hello());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ts::Errc::transport);
  EXPECT_NE(r.error().message.find("HTTP 500"), std::string::npos) << r.error().message;
  EXPECT_EQ(server.requests().size(), 4u);
}

TEST(ChatClientFaults, InvocationDeadlineBoundsAHangingServer) {
  MockOpenAiServer server;
  for (int i = 0; i < 10; ++i) server.push(fault_reply(K::hang, 5'000));
  auto options = fast();
  options.max_attempts = 100;
  options.invocation_timeout = 800ms;
  ChatClient client(local_provider(server), options);
  auto start = Clock::now();
  auto r = client.complete(hello());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ts::Errc::transport);
  EXPECT_LT(Clock::now() - start, 1500ms);
}

TEST(ChatClientFaults, RefusedConnectionIsRetriedThenReported) {
  int port;
  {
    MockOpenAiServer gone;
    port = gone.port();
  }
  Provider p;
  p.model = "m";
  p.base_url = "http://127.0.0.1:" + std::to_string(port) + "/v1";
  auto options = fast();
  options.max_attempts = 3;
  ChatClient client(p, options);
  auto start = Clock::now();
  auto r = client.complete(hello());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ts::Errc::transport);
  EXPECT_NE(r.error().message.find("connect"), std::string::npos) << r.error().message;
  EXPECT_LT(Clock::now() - start, 2s);
}

TEST(MockScript, ParsesTheExecutablesScriptFormat) {
  auto s = parse_script(
      R"([{"kind":"completion","tool_calls":[{"id":"c1","name":"evaluate","arguments":"{}"}]},
                            {"kind":"error","status":429,"message":"slow","retry_after_s":0},
                            {"kind":"hang","delay_ms":10}])");
  ASSERT_TRUE(s) << s.error().message;
  ASSERT_EQ(s->size(), 3u);
  EXPECT_EQ((*s)[0].tool_calls[0].name, "evaluate");
  EXPECT_EQ((*s)[1].retry_after_s, 0);
  EXPECT_EQ((*s)[2].kind, K::hang);
  EXPECT_FALSE(parse_script(R"([{"kind":"explode"}])"));
  EXPECT_FALSE(parse_script("{}"));
}

}  // namespace
