// The built-in search agent: its rewrites on real Inductor 2.11 CUDA wrappers (data/), its
// transport, and the agent loop it drives.
#include "ts/agent/search.hpp"

#include <gtest/gtest.h>
