#include "ts/error.hpp"

#include <fmt/format.h>

namespace ts {

const char* errc_name(Errc code) noexcept {
  switch (code) {
    case Errc::invalid_argument:
      return "invalid_argument";
    case Errc::parse:
      return "parse";
    case Errc::bind:
      return "bind";
    case Errc::overflow:
      return "overflow";
    case Errc::not_found:
      return "not_found";
    case Errc::io:
      return "io";
    case Errc::unavailable:
      return "unavailable";
    case Errc::transport:
      return "transport";
    case Errc::rejected:
      return "rejected";
    case Errc::timeout:
      return "timeout";
    case Errc::budget:
      return "budget";
    case Errc::crashed:
      return "crashed";
    case Errc::cancelled:
      return "cancelled";
  }
  return "unknown";
}

namespace detail {
void check_failed(const char* file, int line, const char* expr, const std::string& msg) {
  throw InternalError(fmt::format("{}:{}: internal check failed: {}: {}", file, line, expr, msg));
}
}  // namespace detail

}  // namespace ts
