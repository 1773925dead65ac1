// The versioned prompt files of prompts/, compiled in. Internal.
#pragma once

#include <string_view>
#include <utility>
#include <vector>

namespace ts::agent::detail {

const std::vector<std::pair<std::string_view, std::string_view>>& embedded_prompts();

/// The text of prompts/<name>.md, e.g. prompt("system.v1"); throws InternalError if absent.
std::string_view prompt(std::string_view name);

}  // namespace ts::agent::detail
