// The search "model": a Transport that answers chat-completion requests by planning rewrites.
//
// It keeps no state between requests: everything it decides follows from the conversation it
// is sent (the attempt read, the candidates written, the host's reports) and the seed, so the
// same conversation always gets the same answer.
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

const char* describe(RewriteKind k) {
  switch (k) {
    case RewriteKind::cuda_graph:
      return "capture call()'s launch sequence in a CUDA graph and replay it (inputs checked by "
             "address or copied in, outputs fresh each call, the original kept as fallback)";
    case RewriteKind::autotune:
      return "autotune every Triton kernel over Inductor's configs plus warp/block variants";
    case RewriteKind::epilogue:
      return "fuse each matmul + bias + ReLU/tanh-GELU into one cuBLASLt call (its epilogue)";
    case RewriteKind::direct_launch:
      return "launch each Triton kernel through its one compiled launcher, skipping "
             "CachingAutotuner.run's per-launch checks (the original kept for the first call)";
  }
  return "";
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

History read_history(const json& body) {
  History h;
  std::set<std::string> tools;
  if (auto t = body.find("tools"); t != body.end() && t->is_array())
    for (const auto& tool : *t)
      if (tool.contains("function") && tool["function"].contains("name"))
        tools.insert(tool["function"]["name"].get<std::string>());
  h.has_tools =
      tools.count("read_attempt") && tools.count("write_candidate") && tools.count("evaluate");
  h.has_profile_tool = tools.count("profile") > 0;

  std::map<std::string, std::pair<std::string, std::string>> calls;  // id -> (name, arguments)
  std::optional<Tried> pending;  // written in the latest assistant message, awaiting its report
  const json messages = body.value("messages", json::array());
  for (const auto& m : messages) {
    std::string role = m.value("role", "");
    std::string content = m.contains("content") && m["content"].is_string()
                              ? m["content"].get<std::string>()
                              : std::string();
    if (role == "system" && content.find("Agency: low.") != std::string::npos)
      h.agency = Agency::low;
    else if (role == "system" && content.find("Agency: high.") != std::string::npos)
      h.agency = Agency::high;
    if (role == "assistant") {
      ++h.replies;
      auto tc = m.find("tool_calls");
      h.last_reply_final = tc == m.end() || !tc->is_array() || tc->empty();
      std::string id;
      if (auto p = content.find(kProposalTag); p != std::string::npos) {
        auto b = p + kProposalTag.size();
        id = content.substr(b, content.find(':', b) - b);
      }
      if (tc == m.end() || !tc->is_array()) continue;
      for (const auto& c : *tc) {
        std::string cid = c.value("id", "");
        const json fn = c.value("function", json::object());
        std::string name = fn.value("name", "");
        std::string args = fn.value("arguments", "");
        calls[cid] = {name, args};
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
    if (role != "tool") continue;
    auto it = calls.find(m.value("tool_call_id", ""));
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

constexpr RewriteKind kAllKinds[] = {RewriteKind::cuda_graph, RewriteKind::autotune,
                                     RewriteKind::epilogue, RewriteKind::direct_launch};

Plan plan_next(const History& h, std::uint64_t seed) {
  Plan plan;
  const std::string& base = *h.base;
  const std::string& original = h.original ? *h.original : base;

  std::set<RewriteKind> broken;
  std::set<std::string> tried_texts;
  for (const auto& t : h.tried) {
    tried_texts.insert(t.text);
    if (!t.report || !broken_rejection(*t.report)) continue;
    for (RewriteKind k : kAllKinds)
      if (t.id.find(rewrite_kind_name(k)) != std::string::npos) broken.insert(k);
  }

  // Which rewrites apply to this base at this agency.
  std::vector<RewriteKind> available;
  for (RewriteKind k : kAllKinds) {
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

struct Answer {
  std::string content;
  std::vector<ToolCall> calls;
};

std::string completion_body(const Answer& a, int n, std::size_t prompt_bytes) {
  json message{{"role", "assistant"}, {"content", a.content}};
  if (!a.calls.empty()) {
    json calls = json::array();
    for (const auto& c : a.calls)
      calls.push_back({{"id", c.id},
                       {"type", "function"},
                       {"function", {{"name", c.name}, {"arguments", c.arguments}}}});
    message["tool_calls"] = calls;
  }
  std::size_t completion_bytes = a.content.size();
  for (const auto& c : a.calls) completion_bytes += c.arguments.size();
  return json{
      {"id", fmt::format("tilesmith-search-{}", n)},
      {"object", "chat.completion"},
      {"created", 0},
      {"model", kSearchModel},
      {"choices", json::array({{{"index", 0},
                                {"message", message},
                                {"finish_reason", a.calls.empty() ? "stop" : "tool_calls"}}})},
      {"usage",
       {{"prompt_tokens", int(prompt_bytes / 4)},
        {"completion_tokens", int(completion_bytes / 4)}}}}
      .dump();
}

std::string stream_body(const Answer& a, int n, std::size_t prompt_bytes) {
  auto chunk = [&](json choice_delta, json finish) {
    return "data: " +
           json{{"id", fmt::format("tilesmith-search-{}", n)},
                {"object", "chat.completion.chunk"},
                {"created", 0},
                {"model", kSearchModel},
                {"choices",
                 json::array({{{"index", 0}, {"delta", choice_delta}, {"finish_reason", finish}}})}}
               .dump() +
           "\n\n";
  };
  std::string out = chunk({{"role", "assistant"}, {"content", a.content}}, nullptr);
  for (size_t i = 0; i < a.calls.size(); ++i) {
    const auto& c = a.calls[i];
    out += chunk({{"tool_calls",
                   json::array({{{"index", i},
                                 {"id", c.id},
                                 {"type", "function"},
                                 {"function", {{"name", c.name}, {"arguments", c.arguments}}}}})}},
                 nullptr);
  }
  out += chunk(json::object(), a.calls.empty() ? "stop" : "tool_calls");
  std::size_t completion_bytes = a.content.size();
  for (const auto& c : a.calls) completion_bytes += c.arguments.size();
  out += "data: " +
         json{{"id", fmt::format("tilesmith-search-{}", n)},
              {"object", "chat.completion.chunk"},
              {"choices", json::array()},
              {"usage",
               {{"prompt_tokens", int(prompt_bytes / 4)},
                {"completion_tokens", int(completion_bytes / 4)}}}}
             .dump() +
         "\n\n";
  out += "data: [DONE]\n\n";
  return out;
}

HttpResult refuse(long status, const std::string& message) {
  HttpResult r;
  r.status = status;
  r.detail = message;
  r.error_body = json{{"error", {{"message", message}, {"type", "tilesmith_search"}}}}.dump();
  return r;
}

class SearchTransport final : public Transport {
 public:
  explicit SearchTransport(std::uint64_t seed) : seed_(seed) {}

  HttpResult post(const HttpRequest& request, const HttpDeadlines&, const BodySink& sink) override {
    json body = json::parse(request.body, nullptr, false);
    if (!body.is_object()) return refuse(400, "tilesmith-search: the request is not a JSON object");
    History h = read_history(body);
    const int n = h.replies + 1;
    auto tag = [&](std::string s) { return fmt::format("ts{}_{}", n, s); };

    std::optional<Answer> answer;
    if (h.last_reply_final) {
      // The previous answer already said there is nothing left; asking again cannot change it.
      return refuse(409, fmt::format("tilesmith-search: nothing more to propose ({} candidate(s) "
                                     "tried)",
                                     h.tried.size()));
    }
    if (!h.has_tools) {
      answer = Answer{
          "tilesmith-search needs the read_attempt, write_candidate and evaluate "
          "tools; none were offered, so it has nothing to propose.",
          {}};
    } else if (!h.base && !h.read_requested) {
      answer =
          Answer{"tilesmith-search: reading the attempt", {{tag("read"), "read_attempt", "{}"}}};
    } else if (!h.base) {
      answer = Answer{"tilesmith-search: the attempt could not be read; nothing to propose.", {}};
    } else if (h.truncated) {
      answer = Answer{
          "tilesmith-search: the attempt was cut by the host's tool-result cap, so no "
          "exact rewrite of it is possible; nothing to propose.",
          {}};
    } else if (needs_profile(h)) {
      answer = Answer{
          "tilesmith-search: library calls and large Triton kernels both; measuring "
          "per-kernel times to rank the rewrites",
          {{tag("profile"), "profile", "{}"}}};
    } else {
      Plan plan = plan_next(h, seed_);
      if (plan.next) {
        std::string what;
        for (RewriteKind k : plan.next->kinds) {
          if (!what.empty() && what.find(describe(k)) != std::string::npos) {
            what += "; then another variant order";
            continue;
          }
          what += (what.empty() ? "" : "; and ") + std::string(describe(k));
        }
        answer = Answer{fmt::format("{}{}: {}", kProposalTag, plan.next->id, what),
                        {{tag("write"), "write_candidate", json{{"content", plan.text}}.dump()},
                         {tag("evaluate"), "evaluate", "{}"}}};
      } else {
        std::string tried;
        for (const auto& t : h.tried)
          tried += fmt::format("\n- {}: {}", t.id,
                               t.report ? t.report->value("reason", "no reason") : "no report");
        std::string skipped;
        for (const auto& s : plan.skipped) skipped += "\n- " + s;
        answer = Answer{fmt::format("tilesmith-search: nothing more to propose for this graph."
                                    "\nTried ({}):{}\nNot proposed:{}",
                                    h.tried.size(), tried.empty() ? " none" : tried,
                                    skipped.empty() ? " none" : skipped),
                        {}};
      }
    }
    bool stream = body.value("stream", false);
    std::string out = stream ? stream_body(*answer, n, request.body.size())
                             : completion_body(*answer, n, request.body.size());
    HttpResult result;
    if (!sink(out)) {
      result.failure = TransportFailure::aborted;
      result.detail = "the client stopped reading the answer";
      return result;
    }
    result.status = 200;
    return result;
  }

 private:
  std::uint64_t seed_;
};

}  // namespace

std::unique_ptr<Transport> transport_for(const Provider& provider, std::uint64_t seed) {
  if (provider.route != RouteKind::search) return nullptr;
  return std::make_unique<SearchTransport>(seed);
}

}  // namespace ts::agent
