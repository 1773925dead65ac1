#include "ts/agent/budget.hpp"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace {

using ts::agent::CallBudget;

TEST(CallBudget, SeventyPermitsExactlySeventy) {
  CallBudget budget(70);
  for (int i = 0; i < 70; ++i) ASSERT_TRUE(budget.try_acquire()) << i;
  EXPECT_FALSE(budget.try_acquire());
  EXPECT_FALSE(budget.try_acquire());
  EXPECT_EQ(budget.used(), 70);
  EXPECT_TRUE(budget.spent());
}

TEST(CallBudget, ZeroPermitsNothingAndNulloptHasNoCap) {
  CallBudget none(0);
  EXPECT_FALSE(none.try_acquire());
  EXPECT_EQ(none.used(), 0);
  CallBudget unlimited(std::nullopt);
  for (int i = 0; i < 100000; ++i) ASSERT_TRUE(unlimited.try_acquire());
  EXPECT_FALSE(unlimited.spent());
  EXPECT_EQ(unlimited.used(), 100000);
}

TEST(CallBudget, ExactUnderContention) {
  CallBudget budget(1000);
  std::atomic<int> granted{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 500; ++i)
        if (budget.try_acquire()) granted.fetch_add(1);
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(granted.load(), 1000);
  EXPECT_EQ(budget.used(), 1000);
}

}  // namespace
