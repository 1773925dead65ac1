// Internals of the search agent shared by its rewrites, its transport and the structure check
// (structure.cpp): Python-source text helpers and what the rewrites read from a wrapper.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ts/error.hpp"

namespace ts::agent::detail {

/// The Python runtime pasted into a CUDA graph candidate (core/agent/search/*.py, compiled in).
std::string_view embedded_cuda_graph_runtime();
/// The helper pasted into each widened Triton kernel module.
std::string_view embedded_autotune_helper();
/// The helper pasted into a direct-launch candidate.
std::string_view embedded_direct_launch_helper();
/// The helper pasted into a TileOPs-calls candidate.
std::string_view embedded_tileops_calls();

std::string_view trim(std::string_view s);
bool starts_with(std::string_view s, std::string_view prefix);
std::vector<std::string_view> split_lines(std::string_view text);
size_t indent_of(std::string_view line);
/// The line without a trailing `# comment` outside string literals.
std::string_view code_part(std::string_view line);
/// `s` split at `sep` outside brackets and strings, pieces trimmed, trailing empties dropped.
std::vector<std::string_view> split_top_level(std::string_view s, char sep);
std::optional<size_t> matching_paren(std::string_view s, size_t open);
bool is_identifier(std::string_view s);
std::string_view root_name(std::string_view expr);

/// One `name = async_compile.triton('name', '''<source>''', ...)`.
struct KernelSource {
  std::string name;
  size_t body_begin = 0, body_end = 0;  // byte range of the source inside the wrapper
  std::vector<std::string> params;      // of `def <name>(...)`
  std::string heuristic;                // pointwise | reduction | persistent_reduction | ""
};
std::vector<KernelSource> find_kernels(std::string_view text);

/// Line indices (0-based) of the parts of call().
struct CallSite {
  bool is_method = false;
  size_t def_line = 0, body_begin = 0, body_end = 0;  // body: [begin, end)
  std::string def_indent, body_indent;
  std::optional<size_t> unpack_line, clear_line, return_line;
  std::vector<size_t> assert_lines;  // top-level input checks before the device guard
  std::vector<std::string> inputs;
  std::vector<std::string> returns;  // elements of the returned tuple
};
Expected<CallSite> find_call_site(std::string_view text);

/// What decides whether autotuning is worth proposing early, read from the text alone.
struct WorkFacts {
  bool library_calls = false;    // extern_kernels.* / aten ops in call() (GEMMs, convs, attention)
  long long largest_kernel = 0;  // max over Triton kernels of xnumel * r0_numel (elements)
};
WorkFacts work_facts(std::string_view text);

}  // namespace ts::agent::detail
