#include "ts/perf/roofline.hpp"

#include <algorithm>
#include <limits>

namespace ts::perf {

const char* bound_name(Bound b) {
  return b == Bound::memory ? "memory" : "compute";
}

Roofline evaluate_roofline(const HardwareProfile& hw, int64_t flops, int64_t bytes, DType dtype,
                           bool tensor_cores) {
  Roofline r;
  r.flops = flops;
  r.bytes = bytes;
  r.peak_flops = hw.peak_flops(dtype, tensor_cores);
  r.bandwidth = hw.hbm_bandwidth();
  r.ridge = r.peak_flops / r.bandwidth;
  r.intensity = bytes > 0 ? static_cast<double>(flops) / static_cast<double>(bytes)
                          : std::numeric_limits<double>::infinity();
  r.memory_seconds = static_cast<double>(bytes) / r.bandwidth;
  r.compute_seconds = static_cast<double>(flops) / r.peak_flops;
  r.sol_seconds = std::max(r.memory_seconds, r.compute_seconds);
  r.bound = r.compute_seconds > r.memory_seconds ? Bound::compute : Bound::memory;
  return r;
}

}  // namespace ts::perf
