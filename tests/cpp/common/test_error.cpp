#include "ts/error.hpp"

#include <gtest/gtest.h>

namespace {

ts::Expected<int> half(int x) {
  if (x % 2) return ts::fail(ts::Errc::invalid_argument, "odd");
  return x / 2;
}

TEST(Error, ExpectedCarriesValueOrError) {
  EXPECT_EQ(*half(4), 2);
  auto r = half(3);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ts::Errc::invalid_argument);
  EXPECT_EQ(r.error().message, "odd");
  EXPECT_STREQ(ts::errc_name(ts::Errc::overflow), "overflow");
}

TEST(Error, CheckThrowsInternalErrorWithLocation) {
  try {
    TS_CHECK(1 + 1 == 3, "arithmetic");
    FAIL() << "no throw";
  } catch (const ts::InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("test_error.cpp"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("arithmetic"), std::string::npos);
  }
}

}  // namespace
