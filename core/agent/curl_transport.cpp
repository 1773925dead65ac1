// libcurl transport. The multi interface lets us wake every few milliseconds and enforce the
// deadlines curl has no option for: time to first response byte and silence mid-stream.
#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <mutex>

#include <fmt/format.h>

#include "ts/agent/chat.hpp"

namespace ts::agent {

namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kErrorBodyCap = 16 * 1024;

struct Transfer {
  CURL* easy = nullptr;
  const BodySink* sink = nullptr;
  HttpResult* result = nullptr;
  Clock::time_point last_byte{};
  bool any_byte = false;
  bool sink_refused = false;
};

size_t on_header(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  size_t len = size * n;
  t->any_byte = true;
  t->last_byte = Clock::now();
  std::string_view line(data, len);
  constexpr std::string_view name = "retry-after:";
  if (line.size() > name.size() &&
      std::equal(name.begin(), name.end(), line.begin(),
                 [](char a, char b) { return a == std::tolower(static_cast<unsigned char>(b)); })) {
    std::string value(line.substr(name.size()));
    char* end = nullptr;
    double seconds = std::strtod(value.c_str(), &end);
    if (end != value.c_str() && seconds >= 0) t->result->retry_after = seconds;
    // An HTTP-date form is ignored: the client falls back to its own backoff.
  }
  return len;
}

size_t on_body(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  size_t len = size * n;
  t->any_byte = true;
  t->last_byte = Clock::now();
  long status = 0;
  curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &status);
  if (status >= 200 && status < 300) {
    if (!(*t->sink)(std::string_view(data, len))) {
      t->sink_refused = true;
      return 0;  // CURLE_WRITE_ERROR: abort this attempt
    }
  } else {
    auto& body = t->result->error_body;
    body.append(data, std::min(len, kErrorBodyCap - std::min(kErrorBodyCap, body.size())));
  }
  return len;
}

class CurlTransport final : public Transport {
 public:
  CurlTransport() {
    static std::once_flag once;
    std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
    multi_ = curl_multi_init();
    easy_ = curl_easy_init();
  }
  ~CurlTransport() override {
    curl_easy_cleanup(easy_);
    curl_multi_cleanup(multi_);
  }

  HttpResult post(const HttpRequest& request, const HttpDeadlines& deadlines,
                  const BodySink& sink) override {
    HttpResult result;
    if (!multi_ || !easy_) {
      result.failure = TransportFailure::connect;
      result.detail = "libcurl could not be initialised";
      return result;
    }
    Transfer t{easy_, &sink, &result};
    curl_slist* headers = nullptr;
    for (const auto& h : request.headers) headers = curl_slist_append(headers, h.c_str());
    headers = curl_slist_append(headers, "Expect:");  // no 100-continue round trip

    curl_easy_reset(easy_);  // keeps the connection cache of the multi handle
    curl_easy_setopt(easy_, CURLOPT_URL, request.url.c_str());
    curl_easy_setopt(easy_, CURLOPT_POST, 1L);
    curl_easy_setopt(easy_, CURLOPT_POSTFIELDS, request.body.data());
    curl_easy_setopt(easy_, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(request.body.size()));
    curl_easy_setopt(easy_, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(easy_, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(easy_, CURLOPT_HEADERDATA, &t);
    curl_easy_setopt(easy_, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(easy_, CURLOPT_WRITEDATA, &t);
    curl_easy_setopt(easy_, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(easy_, CURLOPT_CONNECTTIMEOUT_MS, long(deadlines.connect.count()));
    curl_easy_setopt(easy_, CURLOPT_TIMEOUT_MS, long(deadlines.total.count()));
    curl_easy_setopt(easy_, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(easy_, CURLOPT_ACCEPT_ENCODING, "");

    auto start = Clock::now();
    curl_multi_add_handle(multi_, easy_);
    int running = 1;
    while (running) {
      if (curl_multi_perform(multi_, &running) != CURLM_OK) break;
      if (!running) break;
      auto now = Clock::now();
      if (deadlines.stop && deadlines.stop()) {
        result.failure = TransportFailure::stopped;
        result.detail = "stopped by the caller";
        break;
      }
      if (!t.any_byte && now - start > deadlines.connect + deadlines.first_byte) {
        result.failure = TransportFailure::first_byte_timeout;
        result.detail = fmt::format("no response within {} ms", deadlines.first_byte.count());
        break;
      }
      if (t.any_byte && now - t.last_byte > deadlines.idle) {
        result.failure = TransportFailure::idle_timeout;
        result.detail = fmt::format("the response stalled for {} ms", deadlines.idle.count());
        break;
      }
      curl_multi_poll(multi_, nullptr, 0, 5, nullptr);
    }
    CURLcode code = CURLE_OK;
    int queued;
    while (CURLMsg* msg = curl_multi_info_read(multi_, &queued))
      if (msg->msg == CURLMSG_DONE && msg->easy_handle == easy_) code = msg->data.result;
    curl_easy_getinfo(easy_, CURLINFO_RESPONSE_CODE, &result.status);
    curl_multi_remove_handle(multi_, easy_);
    curl_slist_free_all(headers);

    if (result.failure != TransportFailure::none) return result;
    if (t.sink_refused) {
      result.failure = TransportFailure::aborted;
      result.detail = "the response was refused while streaming";
      return result;
    }
    switch (code) {
      case CURLE_OK:
        break;
      case CURLE_COULDNT_CONNECT:
      case CURLE_COULDNT_RESOLVE_HOST:
      case CURLE_COULDNT_RESOLVE_PROXY:
      case CURLE_SSL_CONNECT_ERROR:
        result.failure = TransportFailure::connect;
        break;
      case CURLE_OPERATION_TIMEDOUT:
        result.failure = result.status == 0 && !t.any_byte ? TransportFailure::connect
                                                           : TransportFailure::total_timeout;
        if (Clock::now() - start >= deadlines.total)
          result.failure = TransportFailure::total_timeout;
        break;
      default:  // RECV_ERROR, SEND_ERROR, GOT_NOTHING, PARTIAL_FILE, ...
        result.failure = TransportFailure::reset;
        break;
    }
    if (code != CURLE_OK) result.detail = curl_easy_strerror(code);
    return result;
  }

 private:
  CURLM* multi_ = nullptr;
  CURL* easy_ = nullptr;
};

}  // namespace

std::unique_ptr<Transport> make_curl_transport() {
  return std::make_unique<CurlTransport>();
}

}  // namespace ts::agent
