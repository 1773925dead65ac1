// Golden files: each tests/cpp/spec/golden/<name>.yaml is dumped (spec_dump.hpp) and compared
// with <name>.expected. Set TS_UPDATE_GOLDEN=1 to rewrite the expected files after a deliberate
// change, then review the diff.
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "spec_dump.hpp"

namespace {

const std::filesystem::path kGolden =
    std::filesystem::path(TS_SOURCE_DIR) / "tests/cpp/spec/golden";

std::string read(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void check_golden(const std::string& name) {
  const auto yaml = kGolden / (name + ".yaml");
  const auto expected_path = kGolden / (name + ".expected");
  const std::string actual = ts::spec::testing::dump_spec_file(yaml);
  if (std::getenv("TS_UPDATE_GOLDEN")) {
    std::ofstream(expected_path) << actual;
    GTEST_SKIP() << "rewrote " << expected_path;
  }
  ASSERT_TRUE(std::filesystem::exists(expected_path)) << expected_path;
  EXPECT_EQ(actual, read(expected_path)) << "golden mismatch for " << name;
}

TEST(SpecGolden, EveryLanguageConstruct) {
  check_golden("language");
}
TEST(SpecGolden, BrokenEntriesGiveLocatedDiagnostics) {
  check_golden("broken");
}

}  // namespace
