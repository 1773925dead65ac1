// The expression language on its own: parsing, canonical printing, error positions, exact
// evaluation.
#include <gtest/gtest.h>

#include "expr.hpp"

namespace {

using namespace ts::spec::detail;

std::string round_trip(const char* text) {
  ExprPool pool;
  ExprError err;
  const int32_t root = parse_expr(pool, text, err);
  if (root < 0) return "error@" + std::to_string(err.pos) + ": " + err.message;
  return print_expr(pool, root);
}

TEST(Expr, PrintsCanonicallyWithMinimalParentheses) {
  EXPECT_EQ(round_trip("2*M*N*K"), "2 * M * N * K");
  EXPECT_EQ(round_trip("(a + b) * c"), "(a + b) * c");
  EXPECT_EQ(round_trip("a - (b - c)"), "a - (b - c)");
  EXPECT_EQ(round_trip("a - b - c"), "a - b - c");
  EXPECT_EQ(round_trip("t ? [C, R] : [R, C]"), "t ? [C, R] : [R, C]");
  EXPECT_EQ(round_trip("[*B, 2 * N]"), "[*B, 2 * N]");
  EXPECT_EQ(round_trip("1 <= D <= 256"), "1 <= D and D <= 256");
  EXPECT_EQ(round_trip("!x || y && z"), "not x or y and z");
  EXPECT_EQ(round_trip("Mat[trans_a, M, K]"), "Mat[trans_a, M, K]");
  EXPECT_EQ(round_trip("mode == 'mean'"), "mode == \"mean\"");
  EXPECT_EQ(round_trip("1.0e-6 + 2"), "1e-06 + 2");
  EXPECT_EQ(round_trip("-x * 3"), "-x * 3");
  EXPECT_EQ(round_trip("cdiv(M, 128)"), "cdiv(M, 128)");
  EXPECT_EQ(round_trip("1_000_000"), "1000000");
}

TEST(Expr, ReportsTheOffendingPosition) {
  EXPECT_EQ(round_trip("2 * * M"), "error@4: expected a value, found '*'");
  EXPECT_EQ(round_trip("[K, N"),
            "error@5: expected ']' closing the shape but the expression ended");
  EXPECT_EQ(round_trip("M + 1)"), "error@5: unexpected ')'");
  EXPECT_EQ(round_trip("M $ 2"), "error@2: unexpected character '$'");
  EXPECT_EQ(round_trip("a = b"), "error@2: unexpected character '='");
  EXPECT_EQ(round_trip("'abc"), "error@0: unterminated string literal");
  EXPECT_EQ(round_trip("99999999999999999999"),
            "error@0: unexpected character '99999999999999999999'");
  EXPECT_EQ(round_trip(""), "error@0: expected a value but the expression ended");
  EXPECT_EQ(round_trip("[*3]"), "error@2: expected a dim-list name after '*'");
}

TEST(Expr, DeepNestingIsRejectedNotACrash) {
  std::string deep(5000, '(');
  deep += "1";
  deep += std::string(5000, ')');
  EXPECT_NE(round_trip(deep.c_str()).find("nested too deeply"), std::string::npos);
  std::string negs(5000, '-');
  negs += "1";
  EXPECT_NE(round_trip(negs.c_str()).find("nested too deeply"), std::string::npos);
}

TEST(Expr, CheckedArithmetic) {
  int64_t out;
  EXPECT_FALSE(checked_mul(INT64_MAX / 2 + 1, 2, out));
  EXPECT_TRUE(checked_mul(INT64_MAX / 2, 2, out));
  EXPECT_FALSE(checked_add(INT64_MAX, 1, out));
  EXPECT_FALSE(checked_sub(INT64_MIN, 1, out));
}

}  // namespace
