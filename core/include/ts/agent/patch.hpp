// Applying a unified diff (as `diff -u` / `git diff` write it) to a text, strictly.
//
// Each hunk's context and removed lines must match the text exactly; a hunk may be found at an
// offset from its stated line (the nearest exact match wins). Anything else is an error whose
// message names the hunk, the line and what was expected versus found, so a model can fix it.
//
//   auto patched = ts::agent::apply_unified_diff(original, "@@ -1 +1 @@\n-a\n+b\n");
#pragma once

#include <string>
#include <string_view>

#include "ts/error.hpp"

namespace ts::agent {

Expected<std::string> apply_unified_diff(std::string_view original, std::string_view diff);

}  // namespace ts::agent
