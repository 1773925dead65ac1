// Property test: 10,000+ mutated or malformed YAML documents, derived from the project's real
// specs, go through the loader. None may crash, hang or throw; every document that does not
// load must come with at least one located diagnostic (file:line:col). Leaks are checked by the
// sanitizer build of this test (scripts/test.sh runs it with -fsanitize=address when available).
#include <chrono>
#include <fstream>
#include <random>
#include <sstream>

#include <gtest/gtest.h>

#include "ts/spec/binder.hpp"
#include "ts/spec/manifest.hpp"

namespace {

std::vector<std::string> seed_documents() {
  std::vector<std::string> docs;
  const auto dir = std::filesystem::path(TS_SOURCE_DIR);
  for (const auto& sub : {dir / "specs", dir / "tests/cpp/spec/golden"})
    for (const auto& e : std::filesystem::directory_iterator(sub))
      if (e.path().extension() == ".yaml") {
        std::ifstream in(e.path());
        std::stringstream s;
        s << in.rdbuf();
        docs.push_back(s.str());
      }
  return docs;
}

// One random edit of the kinds that break YAML and specs in practice.
std::string mutate(std::string doc, std::mt19937_64& rng) {
  auto pick = [&](size_t n) { return n ? static_cast<size_t>(rng() % n) : 0; };
  static const std::string kSpecial = "[]{}:,-#&*!|>'\"%@`?\t\n \\0123456789";
  static const char* kTokens[] = {"Dim",
                                  "Dims",
                                  "DType[",
                                  "*B",
                                  "Mat[",
                                  "?",
                                  ":",
                                  "null",
                                  "~",
                                  "true",
                                  "9223372036854775807",
                                  "-1",
                                  "[[[[[[[[",
                                  "]]]]",
                                  "{",
                                  "&anchor",
                                  "*anchor",
                                  "!!binary",
                                  "<<: *a",
                                  "\"\\u0000\"",
                                  "forall",
                                  "inputs",
                                  "shape",
                                  "dtype_cases",
                                  "present",
                                  "...",
                                  "---",
                                  "- ",
                                  "1e999",
                                  "0x10",
                                  "sizeof(",
                                  "prod(B) /"};
  const int edits = 1 + static_cast<int>(pick(4));
  for (int e = 0; e < edits && !doc.empty(); ++e) {
    const size_t at = pick(doc.size());
    switch (pick(8)) {
      case 0:
        doc.erase(at, 1 + pick(40));
        break;
      case 1:
        doc.insert(at, 1, kSpecial[pick(kSpecial.size())]);
        break;
      case 2:
        doc.insert(at, kTokens[pick(std::size(kTokens))]);
        break;
      case 3:
        doc.resize(at);
        break;
      case 4: {  // duplicate a slice elsewhere
        const size_t len = pick(200);
        doc.insert(pick(doc.size()), doc.substr(at, len));
        break;
      }
      case 5:
        doc[at] = static_cast<char>(rng() & 0xff);
        break;   // arbitrary bytes, not UTF-8
      case 6: {  // swap two lines
        auto a = doc.rfind('\n', at), b = doc.find('\n', at + 1);
        if (a != std::string::npos && b != std::string::npos) std::swap(doc[a + 1], doc[b - 1]);
        break;
      }
      default: {  // replace a number with an extreme one
        auto d = doc.find_first_of("0123456789", at);
        if (d != std::string::npos) doc.replace(d, 1, rng() % 2 ? "99999999999999999999" : "-0");
      }
    }
  }
  return doc;
}

TEST(SpecFuzz, TenThousandMutatedDocumentsNeverCrashOrHang) {
  const auto seeds = seed_documents();
  ASSERT_GE(seeds.size(), 6u);
  std::mt19937_64 rng(20261202);
  int failed = 0, loaded = 0;
  double worst_ms = 0;
  constexpr int kDocs = 10000;
  for (int i = 0; i < kDocs; ++i) {
    const std::string doc = mutate(seeds[static_cast<size_t>(i) % seeds.size()], rng);
    std::vector<ts::spec::Diagnostic> diags;
    const auto t0 = std::chrono::steady_clock::now();
    auto m = ts::spec::load_manifest_text(doc, "fuzz.yaml", &diags);
    if (m) {
      ++loaded;
      // What loads must also bind its workloads without crashing (errors are fine).
      for (const auto& op : m->ops()) (void)ts::spec::workload_calls(op);
    } else {
      ++failed;
      ASSERT_FALSE(diags.empty()) << "document " << i << " failed without a diagnostic";
      for (const auto& d : diags) {
        ASSERT_EQ(d.file, "fuzz.yaml");
        ASSERT_GE(d.line, 1);
        ASSERT_GE(d.column, 1);
        ASSERT_FALSE(d.message.empty());
      }
    }
    worst_ms = std::max(
        worst_ms,
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  EXPECT_EQ(failed + loaded, kDocs);
  EXPECT_GT(failed, kDocs / 2) << "mutations too gentle to exercise the error paths";
  EXPECT_LT(worst_ms, 2000.0) << "one document took too long";
  std::printf("fuzz: %d documents, %d rejected with diagnostics, %d loaded, worst %.1f ms\n", kDocs,
              failed, loaded, worst_ms);
}

TEST(SpecFuzz, HostileShapes) {
  for (const char* doc : {"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[", "{a: {b: {c: ",
                          "&a [*a, *a]", "a: *undefined", "- - - -", "\xff\xfe\x01x: [", ":",
                          "!!int x: 1", "Op: {signature: {forall: [1, 2]}}", "Op: 7", "? [a]: b"}) {
    std::vector<ts::spec::Diagnostic> diags;
    auto m = ts::spec::load_manifest_text(doc, "hostile.yaml", &diags);
    EXPECT_FALSE(m) << doc;
    EXPECT_FALSE(diags.empty()) << doc;
  }
  std::string deep(100000, '[');
  std::vector<ts::spec::Diagnostic> diags;
  EXPECT_FALSE(ts::spec::load_manifest_text(deep, "deep.yaml", &diags));
}

}  // namespace
