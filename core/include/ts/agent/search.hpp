// The built-in search agent, `agent_model="tilesmith-search"`: no credentials, no network.
//
// It plays the model behind the same chat+tools loop, budget and gate as any other agent: a
// Model that answers each chat request from the conversation so far. It reads the attempt,
// proposes one rewrite per model invocation (write_candidate, then evaluate), reads the host's
// report to choose the next one, and sends a final message when nothing is left. Rewrites are
// text transformations of an Inductor CUDA wrapper, most promising first:
//   cuda_graph  the launch sequence of call() captured and replayed as one CUDA graph (static
//               shapes, no RNG draws, no host syncs; outputs fresh each call, aliases kept)
//   autotune    each Triton kernel autotunes over Inductor's own configs plus warp and block
//               variants at first launch (kernel sources only: allowed at agency "low")
//   epilogue    an addmm whose output an in-place ReLU or tanh-GELU kernel transforms next
//               becomes one aten._addmm_activation (cuBLASLt's bias + activation epilogue),
//               and that kernel's launch goes
//
//   auto model = make_model(route->provider(), client_options, Agency::medium, seed);
//   run_agent(*model, workspace, budget, options);
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ts/agent/chat.hpp"
#include "ts/agent/provider.hpp"
#include "ts/agent/structure.hpp"
#include "ts/error.hpp"

namespace ts::agent {

inline constexpr std::string_view kSearchModel = "tilesmith-search";

/// The model for `provider`: the built-in search agent (working at `agency`, its proposals
/// ordered by `seed`) for the search route, else a ChatClient over HTTP with `options`.
std::unique_ptr<Model> make_model(const Provider& provider, ClientOptions options, Agency agency,
                                  std::uint64_t seed = 0);

// ---- the rewrites, one pure function each (exposed for tests and tools) -----------------------

enum class RewriteKind { cuda_graph, autotune, epilogue, direct_launch, tileops };

/// One row of the rewrite table (search_rewrite.cpp), in the order the kinds are declared.
struct RewriteInfo {
  RewriteKind kind;
  const char* name;           // "cuda_graph"
  const char* banner;         // the comment every candidate it writes carries
  const char* description;    // what a proposal says it does
  bool structure_preserving;  // keeps the wrapper's structure (all agency "low" admits)
  // Computes some values with other kernels than Inductor's: in a combined proposal the gate
  // rejects as wrong, the likelier culprit (the other kinds stay proposable on their own).
  bool changes_arithmetic;
  Expected<std::string> (*apply)(std::string_view wrapper, std::uint64_t seed);
};
const std::vector<RewriteInfo>& rewrite_table();
const RewriteInfo& rewrite_info(RewriteKind kind);
const char* rewrite_kind_name(RewriteKind kind) noexcept;
bool structure_preserving(RewriteKind kind) noexcept;

/// What the rewrites need to know about a wrapper's call(); `Errc::parse` when there is none.
struct CallFacts {
  bool is_method = false;  // `def call(self, args):` (graph_partition) or `def call(args):`
  std::vector<std::string> inputs;   // names of the unpack line, in order
  std::vector<int> written_inputs;   // inputs the launch sequence writes (donated buffers)
  std::size_t outputs = 0;           // elements of the returned tuple
  std::vector<std::string> kernels;  // Triton kernels defined by async_compile.triton, in order
  std::string cuda_graph_blocker;    // empty when a CUDA graph capture is safe, else why not
};
Expected<CallFacts> analyze_wrapper(std::string_view wrapper);

/// call() captured in a CUDA graph; `Errc::rejected` naming the blocker when it is not safe.
Expected<std::string> rewrite_cuda_graph(std::string_view wrapper);

/// Every Triton kernel autotuned over wider configs; `seed` picks the order of the variants.
/// `Errc::rejected` when the wrapper has no kernel whose heuristics can be widened.
Expected<std::string> rewrite_autotune(std::string_view wrapper, std::uint64_t seed = 0);

/// Each addmm + in-place ReLU / tanh-GELU pair as one aten._addmm_activation call (the kernel's
/// computation is evaluated on sample points to tell which activation it is); `Errc::rejected`
/// when there is no such pair (exact erf GELU is not one: cuBLASLt's epilogue is the tanh form).
Expected<std::string> rewrite_epilogue(std::string_view wrapper);

/// call() launching each Triton kernel through its one compiled launcher once a first call has
/// compiled and autotuned it (skipping CachingAutotuner.run's per-launch checks), the original
/// call() kept for that first call and whenever the profiler or a debug mode watches;
/// `Errc::rejected` when call() launches no Triton kernel itself.
Expected<std::string> rewrite_direct_launch(std::string_view wrapper);

/// Matrix products (bf16/fp16 extern_kernels.mm), forward SDPA attention whose output alone is
/// used, and Triton kernels whose origins are exactly an RMSNorm, LayerNorm, softmax or
/// SiLU-and-mul, each computed by the TileOPs op into Inductor's buffer; at run time a call the
/// op's spec does not cover runs the original. `Errc::rejected` when nothing matches.
Expected<std::string> rewrite_tileops(std::string_view wrapper);

/// Applies `kinds` in order; the first failure is returned.
Expected<std::string> apply_rewrites(std::string_view wrapper,
                                     const std::vector<RewriteKind>& kinds, std::uint64_t seed = 0);

}  // namespace ts::agent
