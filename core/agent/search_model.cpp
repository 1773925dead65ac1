// The search model: answers each chat request of the agent loop by planning rewrites.
//
// It keeps no state between requests: everything it decides follows from the conversation it
// is sent (the attempt read, the candidates written, the host's reports), its agency and the
// seed, so the same conversation always gets the same answer.
#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "search_internal.hpp"
#include "ts/agent/search.hpp"

namespace ts::agent {

namespace {

using json = nlohmann::json;

constexpr std::string_view kProposalTag = "tilesmith-search proposal ";
// Elements (xnumel * r0_numel) from which a Triton kernel's config can matter next to launch
// overhead: 4M elements are a few microseconds of memory traffic on an H200.
constexpr long long kLargeKernel = 1 << 22;

struct Proposal {
  std::string id;  // "cuda_graph+autotune"
  std::vector<RewriteKind> kinds;
};

std::string proposal_id(const std::vector<RewriteKind>& kinds) {
  std::string id;
  for (RewriteKind k : kinds) id += (id.empty() ? "" : "+") + std::string(rewrite_kind_name(k));
  return id;
}

// One candidate the search has written in this conversation, and what the host said.
struct Tried {
  std::string id;
  std::string text;
  std::optional<json> report;  // the evaluate tool's result
};

// What the conversation so far tells the search.
struct History {
  Agency agency = Agency::medium;
  bool read_requested = false;
  bool profile_requested = false;
  std::optional<std::string> original;  // the first attempt read
  std::optional<std::string> base;      // what the current loop improves
  bool truncated = false;
  std::optional<json> profile;
  std::vector<Tried> tried;
  bool last_reply_final = false;  // the previous assistant message had no tool calls
  bool has_tools = false;
  bool has_profile_tool = false;
  int replies = 0;  // assistant messages so far
};

History read_history(const ChatRequest& request, Agency agency) {
  History h;
  h.agency = agency;
  std::set<std::string> tools;
  for (const auto& tool : request.tools) tools.insert(tool.name);
  h.has_tools =
      tools.count("read_attempt") && tools.count("write_candidate") && tools.count("evaluate");
  h.has_profile_tool = tools.count("profile") > 0;

  std::map<std::string, std::pair<std::string, std::string>> calls;  // id -> (name, arguments)
  std::optional<Tried> pending;  // written in the latest assistant message, awaiting its report
  for (const auto& m : request.messages) {
    const std::string& content = m.content;
    if (m.role == Role::assistant) {
      ++h.replies;
      h.last_reply_final = m.tool_calls.empty();
      std::string id;
      if (auto p = content.find(kProposalTag); p != std::string::npos) {
        auto b = p + kProposalTag.size();
        id = content.substr(b, content.find(':', b) - b);
      }
      for (const auto& c : m.tool_calls) {
        const std::string& name = c.name;
        const std::string& args = c.arguments;
        calls[c.id] = {name, args};
        if (name == "read_attempt") h.read_requested = true;
        if (name == "profile") h.profile_requested = true;
        if (name == "write_candidate") {
          json a = json::parse(args, nullptr, false);
          if (a.is_object() && a.contains("content") && a["content"].is_string())
            pending = Tried{id, a["content"].get<std::string>(), std::nullopt};
        }
      }
      continue;
    }
    if (m.role != Role::tool) continue;
    auto it = calls.find(m.tool_call_id);
    if (it == calls.end()) continue;
    const std::string& name = it->second.first;
    if (name == "read_attempt") {
      json maybe_error = json::parse(content, nullptr, false);
      if (maybe_error.is_object() && maybe_error.contains("error")) continue;
      auto cut = content.rfind("\n[... ");
      if (cut != std::string::npos && content.find("more bytes cut]", cut) != std::string::npos)
        h.truncated = true;
      if (!h.original) h.original = content;
      h.base = content;
    } else if (name == "profile") {
      json rows = json::parse(content, nullptr, false);
      if (rows.is_array()) h.profile = rows;
    } else if (name == "write_candidate") {
      json r = json::parse(content, nullptr, false);
      if (pending && !(r.is_object() && r.value("written", false))) {
        // Not written (the host refused it): remember it as tried with the refusal as report.
        pending->report =
            json{{"verdict", "rejected"}, {"reason", "not written: " + r.value("error", content)}};
        h.tried.push_back(*pending);
        pending.reset();
      }
    } else if (name == "evaluate") {
      json r = json::parse(content, nullptr, false);
      if (!pending) continue;
      pending->report = r.is_object() ? r : json{{"verdict", "rejected"}, {"reason", content}};
      if (pending->report->value("verdict", "") == "accepted") h.base = pending->text;
      h.tried.push_back(*pending);
      pending.reset();
    }
  }
  if (pending) h.tried.push_back(*pending);
  return h;
}

bool contains(const std::vector<RewriteKind>& kinds, RewriteKind k) {
  return std::find(kinds.begin(), kinds.end(), k) != kinds.end();
}

// A rejection that says the rewrite itself is wrong here (not merely not fast enough). The gate
// writes "rejected: <kind> (detail)"; the kinds about speed are not_faster, too_noisy,
// too_few_samples and unconfirmed (a scripted gate may say slower or marginal). Every other
// kind (incorrect, aliasing, caching, crashed, ...) or a failed correctness row means wrong.
bool broken_rejection(const json& report) {
  if (report.value("verdict", "") == "accepted") return false;
  if (auto c = report.find("correctness"); c != report.end() && c->is_array())
    for (const auto& row : *c)
      if (row.is_object() && !row.value("passed", true)) return true;
  std::string reason = report.value("reason", "");
  std::string_view kind = reason;
  if (detail::starts_with(kind, "rejected: ")) kind.remove_prefix(10);
  size_t end = kind.find_first_of(" (:,");
  kind = kind.substr(0, end);
  for (std::string_view speed : {"not_faster", "too_noisy", "too_few_samples", "unconfirmed",
                                 "slower", "marginal", "duplicate"})
    if (kind == speed) return false;
  return true;
}

// Share of the profiled GPU time spent in Triton kernels, and the total (ms).
std::pair<double, double> triton_share(const json& profile) {
  double triton = 0, total = 0;
  for (const auto& row : profile) {
    if (!row.is_object() || !row.contains("original_ms") || !row["original_ms"].is_number())
      continue;
    double ms = row["original_ms"].get<double>();
    total += ms;
    if (row.value("kernel", "").find("triton") != std::string::npos) triton += ms;
  }
  return {total > 0 ? triton / total : 0.0, total};
}

struct Plan {
  std::optional<Proposal> next;
  std::string text;                  // the candidate for `next`
  std::vector<std::string> skipped;  // why other rewrites are not proposed
};

Plan plan_next(const History& h, std::uint64_t seed) {
  Plan plan;
  const std::string& base = *h.base;
  const std::string& original = h.original ? *h.original : base;

  std::set<RewriteKind> broken;
  std::set<std::string> tried_texts;
  for (const auto& t : h.tried) {
    tried_texts.insert(t.text);
    if (!t.report || !broken_rejection(*t.report)) continue;
    // A wrong value from a proposal that computes some values differently is blamed on those
    // kinds alone: the CUDA graph under TileOPs calls stays proposable by itself.
    std::vector<RewriteKind> in_proposal, arithmetic;
    for (const auto& r : rewrite_table())
      if (t.id.find(r.name) != std::string::npos) {
        in_proposal.push_back(r.kind);
        if (r.changes_arithmetic) arithmetic.push_back(r.kind);
      }
    const bool numeric = t.report->value("reason", "").find("incorrect") != std::string::npos;
    for (RewriteKind k : numeric && !arithmetic.empty() ? arithmetic : in_proposal)
      broken.insert(k);
  }

  // Which rewrites apply to this base at this agency.
  std::vector<RewriteKind> available;
  for (const auto& row : rewrite_table()) {
    const RewriteKind k = row.kind;
    if (h.agency == Agency::low && !structure_preserving(k)) {
      plan.skipped.push_back(
          fmt::format("{}: agency low keeps the wrapper's structure", rewrite_kind_name(k)));
      continue;
    }
    if (broken.count(k)) {
      plan.skipped.push_back(
          fmt::format("{}: the host rejected it here as wrong", rewrite_kind_name(k)));
      continue;
    }
    auto probe = apply_rewrites(base, {k}, seed);
    if (!probe) {
      plan.skipped.push_back(probe.error().message);
      continue;
    }
    available.push_back(k);
  }

  // Ranked composites: the CUDA graph is the big win on launch-bound graphs; autotuning joins
  // it first when the profile says Triton kernels are a large part of the GPU time.
  bool cg = contains(available, RewriteKind::cuda_graph);
  bool at = contains(available, RewriteKind::autotune);
  bool ep = contains(available, RewriteKind::epilogue);
  bool dl = contains(available, RewriteKind::direct_launch);
  bool to = contains(available, RewriteKind::tileops);
  bool autotune_first = false;
  if (h.profile) {
    auto [share, total] = triton_share(*h.profile);
    autotune_first = share >= 0.3 && total >= 0.05;
  } else {
    // Without a profile: only Triton kernels, and large ones (memory-bound norms, losses).
    auto work = detail::work_facts(base);
    autotune_first = !work.library_calls && work.largest_kernel >= kLargeKernel;
  }
  std::vector<std::vector<RewriteKind>> ranked;
  // The epilogue removes a launch and a pass over the activation outright: first, under the
  // CUDA graph when there is one (it rewrites call()'s lines, so it goes in before the capture).
  if (ep && cg) ranked.push_back({RewriteKind::epilogue, RewriteKind::cuda_graph});
  if (ep) ranked.push_back({RewriteKind::epilogue});
  // This project's own kernels where TileOPs covers a matrix product, attention or norm of the
  // graph: under the CUDA graph (the helper's per-call checks leave the replay), then alone.
  if (to && cg) ranked.push_back({RewriteKind::tileops, RewriteKind::cuda_graph});
  if (cg && at && autotune_first)
    ranked.push_back({RewriteKind::cuda_graph, RewriteKind::autotune});
  if (cg) ranked.push_back({RewriteKind::cuda_graph});
  if (cg && at && !autotune_first)
    ranked.push_back({RewriteKind::cuda_graph, RewriteKind::autotune});
  // Without a graph (or when it lost): less host time per Triton launch, which is what a
  // launch-bound call() is made of; with wider autotuning when that came first.
  if (dl && at && autotune_first)
    ranked.push_back({RewriteKind::direct_launch, RewriteKind::autotune});
  if (dl) ranked.push_back({RewriteKind::direct_launch});
  if (to) ranked.push_back({RewriteKind::tileops});
  if (at) ranked.push_back({RewriteKind::autotune});
  if (dl && at && !autotune_first)
    ranked.push_back({RewriteKind::direct_launch, RewriteKind::autotune});
  // A second autotune variant set when the first was only not fast enough.
  if (at) ranked.push_back({RewriteKind::autotune, RewriteKind::autotune});

  for (const auto& kinds : ranked) {
    std::vector<RewriteKind> unique_kinds;
    std::uint64_t variant_seed = seed;
    for (RewriteKind k : kinds) {
      if (contains(unique_kinds, k)) {
        ++variant_seed;  // a repeated kind means: the same rewrite, another variant order
        continue;
      }
      unique_kinds.push_back(k);
    }
    auto text = apply_rewrites(base, unique_kinds, variant_seed);
    if (!text || tried_texts.count(*text) || *text == base) continue;
    if (auto ok = check_candidate(h.agency, original, *text); !ok) {
      plan.skipped.push_back(fmt::format("{}: {}", proposal_id(kinds), ok.error().message));
      continue;
    }
    plan.next = Proposal{proposal_id(kinds), kinds};
    plan.text = std::move(*text);
    return plan;
  }
  return plan;
}

// Whether the ranking needs measured kernel times: library calls and large Triton kernels both,
// so which dominates is not visible in the text.
bool needs_profile(const History& h) {
  if (h.profile || h.profile_requested || !h.has_profile_tool || !h.base) return false;
  if (h.agency == Agency::low) return false;  // only one kind of rewrite to rank
  auto work = detail::work_facts(*h.base);
  return work.library_calls && work.largest_kernel >= kLargeKernel;
}

// ---- answers ------------------------------------------------------------------------------------

ChatResponse answer(std::string content, std::vector<ToolCall> calls, std::size_t prompt_bytes) {
  ChatResponse r;
  r.message.role = Role::assistant;
  r.finish_reason = calls.empty() ? "stop" : "tool_calls";
  std::size_t completion_bytes = content.size();
  for (const auto& c : calls) completion_bytes += c.arguments.size();
  r.usage.prompt_tokens = static_cast<int>(prompt_bytes / 4);  // a byte count, not tokens
  r.usage.completion_tokens = static_cast<int>(completion_bytes / 4);
  r.message.content = std::move(content);
  r.message.tool_calls = std::move(calls);
  return r;
}

class SearchModel final : public Model {
 public:
  SearchModel(Provider provider, Agency agency, std::uint64_t seed)
      : provider_(std::move(provider)), agency_(agency), seed_(seed) {}

  const Provider& provider() const override { return provider_; }

  Expected<ChatResponse> complete(const ChatRequest& request) override {
    std::size_t prompt_bytes = 0;
    for (const auto& m : request.messages) prompt_bytes += m.content.size();
    History h = read_history(request, agency_);
    const int n = h.replies + 1;
    auto tag = [&](std::string s) { return fmt::format("ts{}_{}", n, s); };
    auto say = [&](std::string content, std::vector<ToolCall> calls = {}) {
      return answer(std::move(content), std::move(calls), prompt_bytes);
    };

    if (h.last_reply_final) {  // it already said there is nothing left; asking again changes
                               // nothing
      // The error is what the user reads in diagnostics(): say why each rewrite was not proposed.
      std::string why;
      if (h.base)
        for (const auto& s : plan_next(h, seed_).skipped) why += (why.empty() ? "" : "; ") + s;
      const std::string what =
          h.tried.empty()
              ? std::string("tilesmith-search found nothing in this graph that it can rewrite")
              : fmt::format(
                    "tilesmith-search has nothing more to propose for this graph after {} "
                    "candidate(s)",
                    h.tried.size());
      return fail(Errc::rejected, what + (why.empty() ? "" : "; not proposed: " + why));
    }
    if (!h.has_tools)
      return say(
          "tilesmith-search needs the read_attempt, write_candidate and evaluate tools; "
          "none were offered, so it has nothing to propose.");
    if (!h.base && !h.read_requested)
      return say("tilesmith-search: reading the attempt", {{tag("read"), "read_attempt", "{}"}});
    if (!h.base) return say("tilesmith-search: the attempt could not be read; nothing to propose.");
    if (h.truncated)
      return say(
          "tilesmith-search: the attempt was cut by the host's tool-result cap, so no exact "
          "rewrite of it is possible; nothing to propose.");
    if (needs_profile(h))
      return say(
          "tilesmith-search: library calls and large Triton kernels both; measuring "
          "per-kernel times to rank the rewrites",
          {{tag("profile"), "profile", "{}"}});
    Plan plan = plan_next(h, seed_);
    if (plan.next) {
      std::string what;
      for (RewriteKind k : plan.next->kinds) {
        const std::string description = rewrite_info(k).description;
        if (!what.empty() && what.find(description) != std::string::npos) {
          what += "; then another variant order";
          continue;
        }
        what += (what.empty() ? "" : "; and ") + description;
      }
      return say(fmt::format("{}{}: {}", kProposalTag, plan.next->id, what),
                 {{tag("write"), "write_candidate", json{{"content", plan.text}}.dump()},
                  {tag("evaluate"), "evaluate", "{}"}});
    }
    std::string tried;
    for (const auto& t : h.tried)
      tried += fmt::format("\n- {}: {}", t.id,
                           t.report ? t.report->value("reason", "no reason") : "no report");
    std::string skipped;
    for (const auto& s : plan.skipped) skipped += "\n- " + s;
    return say(fmt::format(
        "tilesmith-search: nothing more to propose for this graph.\nTried "
        "({}):{}\nNot proposed:{}",
        h.tried.size(), tried.empty() ? " none" : tried, skipped.empty() ? " none" : skipped));
  }

 private:
  Provider provider_;
  Agency agency_;
  std::uint64_t seed_;
};

}  // namespace

std::unique_ptr<Model> make_model(const Provider& provider, ClientOptions options, Agency agency,
                                  std::uint64_t seed) {
  if (provider.route == RouteKind::search)
    return std::make_unique<SearchModel>(provider, agency, seed);
  return std::make_unique<ChatClient>(provider, std::move(options));
}

}  // namespace ts::agent
