// A complete, deterministic text dump of a spec file: every diagnostic, every loaded op's
// signature, and every workload call with its bound variables, outputs and roofline. The golden
// tests compare it to a committed `.expected` file.
#pragma once

#include <filesystem>
#include <string>

namespace ts::spec::testing {
std::string dump_spec_file(const std::filesystem::path& file);
}
