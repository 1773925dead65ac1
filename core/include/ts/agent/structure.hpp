// Mechanical checks on a candidate Inductor wrapper (Python source), enforced by the host.
//
// Every agency level keeps the callable ABI (check_wrapper_abi):
//   - the `def call(args):` / `def call(self, args):` line, the input unpack line
//     (`primals_1, primals_2 = args`) and `args.clear()` are unchanged;
//   - the final `return (...)` of call has the same number of elements.
// "low" agency also keeps the wrapper's structure (check_wrapper_structure): the text with
//   (a) the contents of every triple-quoted string masked (Triton/CUDA kernel bodies), and
//   (b) the argument list of every launch `<kernel>.run(...)` inside call masked,
// after dropping blank and comment-only lines and trailing spaces, must be identical line for
// line. So only kernel bodies and launch parameters (grid, block sizes, numel, stream args) may
// change: same kernels, same launches in the same order, same allocations, same extern calls.
#pragma once

#include <string>
#include <string_view>

#include "ts/error.hpp"

namespace ts::agent {

enum class Agency { low, medium, high };
const char* agency_name(Agency a) noexcept;
Expected<Agency> parse_agency(std::string_view s);

/// Errc::rejected with a precise message when the candidate breaks the callable ABI.
Expected<void> check_wrapper_abi(std::string_view original, std::string_view candidate);
/// Errc::rejected naming the first differing line when the "low" structure changed.
Expected<void> check_wrapper_structure(std::string_view original, std::string_view candidate);
/// The checks an agency level requires.
Expected<void> check_candidate(Agency agency, std::string_view original,
                               std::string_view candidate);

}  // namespace ts::agent
