// The exact budget of model invocations, shared by a main agent and all its subagents.
//
// One invocation is one chat completion as the agent sees it: the HTTP retries inside it, and
// every tool, shell, benchmark or graph step around it, cost nothing. A limit of 70 permits
// exactly 70 invocations and refuses the 71st; no limit (nullopt) means no cap at all.
//
//   ts::agent::CallBudget budget(70);
//   if (!budget.try_acquire()) return;  // spent: the caller keeps plain Inductor
#pragma once

#include <atomic>
#include <optional>

namespace ts::agent {

class CallBudget {
 public:
  explicit CallBudget(std::optional<int> limit) : limit_(limit) {}
  CallBudget(const CallBudget&) = delete;
  CallBudget& operator=(const CallBudget&) = delete;

  /// Takes one invocation; false (and nothing taken) once the limit is reached. Thread-safe.
  bool try_acquire() noexcept {
    if (!limit_) {
      used_.fetch_add(1, std::memory_order_relaxed);
      return true;
    }
    int used = used_.load(std::memory_order_relaxed);
    while (used < *limit_) {
      if (used_.compare_exchange_weak(used, used + 1, std::memory_order_relaxed)) return true;
    }
    return false;
  }

  int used() const noexcept { return used_.load(std::memory_order_relaxed); }
  std::optional<int> limit() const noexcept { return limit_; }
  bool spent() const noexcept { return limit_ && used() >= *limit_; }

 private:
  std::optional<int> limit_;
  std::atomic<int> used_{0};
};

}  // namespace ts::agent
