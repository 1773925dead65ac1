// Helpers shared by the agent tests: a temp directory per test and a secret scan.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace ts::agent::testing {

/// The fake API key every test uses; no file a test writes may contain it.
inline constexpr const char* kFakeKey = "sk-test-DO-NOT-LEAK-4f9c2b7e1d";

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "ts-agent-test-XXXXXX").string();
    path_ = mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void write_text(const std::filesystem::path& p, const std::string& text) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

/// Every regular file under `dir` that contains `secret`.
inline std::vector<std::filesystem::path> files_containing(const std::filesystem::path& dir,
                                                           const std::string& secret) {
  std::vector<std::filesystem::path> hits;
  std::error_code ec;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir, ec))
    if (e.is_regular_file() && read_text(e.path()).find(secret) != std::string::npos)
      hits.push_back(e.path());
  return hits;
}

}  // namespace ts::agent::testing
