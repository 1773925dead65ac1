#include "ts/agent/patch.hpp"

#include <gtest/gtest.h>

namespace {

using ts::agent::apply_unified_diff;

const std::string kText = "a\nb\nc\nd\ne\nf\ng\n";

TEST(UnifiedDiff, AppliesReplaceInsertDelete) {
  auto r = apply_unified_diff(kText,
                              "--- a/x.py\n+++ b/x.py\n"
                              "@@ -2,3 +2,3 @@\n b\n-c\n+C\n d\n"
                              "@@ -5,2 +5,3 @@\n e\n+e2\n f\n"
                              "@@ -7 +8,0 @@\n-g\n");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(*r, "a\nb\nC\nd\ne\ne2\nf\n");
}

TEST(UnifiedDiff, FindsAHunkAtAnOffset) {
  // Header says line 1, the context is really at line 4.
  auto r = apply_unified_diff(kText, "@@ -1,2 +1,2 @@\n d\n-e\n+E\n");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(*r, "a\nb\nc\nd\nE\nf\ng\n");
}

TEST(UnifiedDiff, InsertAtTopAndNoNewlineMarker) {
  auto r = apply_unified_diff(
      "x\ny", "@@ -0,0 +1 @@\n+w\n@@ -2 +3 @@\n-y\n\\ No newline at end of file\n+z\n");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(*r, "w\nx\nz\n");
}

TEST(UnifiedDiff, MismatchNamesHunkLineAndText) {
  auto r = apply_unified_diff(kText, "@@ -2,2 +2,2 @@\n b\n-X\n+Y\n");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ts::Errc::invalid_argument);
  EXPECT_NE(r.error().message.find("hunk 1"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("line 3 is 'c'"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("expects 'X'"), std::string::npos) << r.error().message;
}

TEST(UnifiedDiff, MalformedInputsAreErrorsNotCrashes) {
  EXPECT_FALSE(apply_unified_diff(kText, "just some text\n"));
  EXPECT_FALSE(apply_unified_diff(kText, "@@ -x +y @@\n"));
  EXPECT_FALSE(apply_unified_diff(kText, "@@ -1,3 +1,3 @@\n a\n"));           // truncated hunk
  EXPECT_FALSE(apply_unified_diff(kText, "@@ -1,1 +1,1 @@\n*a\n"));           // bad line op
  EXPECT_FALSE(apply_unified_diff(kText, "@@ -100,1 +100,1 @@\n-zz\n+y\n"));  // past the end
  EXPECT_FALSE(apply_unified_diff("", "@@ -1 +1 @@\n-a\n+b\n"));
}

}  // namespace
