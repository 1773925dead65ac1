// Error handling for the whole core.
//
// Expected failures (a malformed spec, a call that does not bind, a timeout, an HTTP 429) are
// values: functions return `ts::Expected<T>`, which holds either a T or a `ts::Error`.
// Programming errors (a broken invariant inside the core) throw `ts::InternalError` through
// TS_CHECK, which stays on in release builds. Nothing in the library calls exit().
//
//   ts::Expected<int> parse_port(std::string_view s);
//   auto port = parse_port("80");
//   if (!port) fmt::print("{}\n", port.error().message);
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

#include <tl/expected.hpp>

namespace ts {

/// What kind of failure an Error is; callers branch on this, people read `message`.
enum class Errc {
  invalid_argument,  // a caller passed something malformed
  parse,             // a document (YAML, JSON, expression) does not parse or does not type-check
  bind,              // a concrete call does not match an op's signature
  overflow,          // exact int64 arithmetic overflowed
  not_found,         // a named thing (op, file, profile) does not exist
  io,                // the file system said no
  unavailable,       // a model, route or device is not there
  transport,         // the network failed after retries
  rejected,          // a peer refused (HTTP 4xx other than 429)
  timeout,           // a deadline passed
  budget,            // a budget (model calls) is spent
  crashed,           // a child process died
  cancelled,         // the caller asked to stop (an interrupt, a time budget)
};

const char* errc_name(Errc code) noexcept;

/// An expected failure: a code to branch on and a complete, human-readable message.
struct Error {
  Errc code;
  std::string message;
};

template <class T>
using Expected = tl::expected<T, Error>;

/// `return ts::fail(Errc::parse, "specs/gemm.yaml:3:5: expected a map");`
inline tl::unexpected<Error> fail(Errc code, std::string message) {
  return tl::unexpected<Error>(Error{code, std::move(message)});
}

/// Thrown only for programming errors inside the core (a broken invariant), never for bad input.
class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

namespace detail {
[[noreturn]] void check_failed(const char* file, int line, const char* expr,
                               const std::string& msg);
}  // namespace detail

}  // namespace ts

/// Asserts an internal invariant; on failure throws ts::InternalError naming file:line and expr.
#define TS_CHECK(cond, msg)                                         \
  do {                                                              \
    if (!(cond)) [[unlikely]]                                       \
      ::ts::detail::check_failed(__FILE__, __LINE__, #cond, (msg)); \
  } while (0)
