// search_rewrite IN OUT KINDS [SEED]: applies the search agent's rewrites (KINDS: comma-separated
// names of the rewrite table's rows) to the wrapper IN and writes OUT. Exit 0 written, 2 refused
// (the reason on stderr), 1 usage or I/O error. Used by the Python check that candidates compile.
#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include "ts/agent/search.hpp"

int main(int argc, char** argv) {
  using namespace ts::agent;
  if (argc < 4) {
    std::cerr << "usage: search_rewrite IN OUT KINDS [SEED]\n";
    return 1;
  }
  std::ifstream in(argv[1]);
  if (!in) {
    std::cerr << "cannot read " << argv[1] << "\n";
    return 1;
  }
  std::stringstream text;
  text << in.rdbuf();
  std::vector<RewriteKind> kinds;
  std::stringstream names(argv[3]);
  for (std::string name; std::getline(names, name, ',');) {
    auto row = std::find_if(rewrite_table().begin(), rewrite_table().end(),
                            [&](const RewriteInfo& r) { return name == r.name; });
    if (row == rewrite_table().end()) {
      std::cerr << "unknown rewrite '" << name << "'\n";
      return 1;
    }
    kinds.push_back(row->kind);
  }
  std::uint64_t seed = argc > 4 ? std::strtoull(argv[4], nullptr, 10) : 0;
  auto out = apply_rewrites(text.str(), kinds, seed);
  if (!out) {
    std::cerr << out.error().message << "\n";
    return 2;
  }
  std::ofstream(argv[2]) << *out;
  return 0;
}
