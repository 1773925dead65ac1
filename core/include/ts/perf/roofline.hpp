// The roofline of one op call on one device: speed-of-light time, bound type, efficiency.
//
//   sol = max(bytes / bandwidth, flops / peak)    bound = whichever term is larger
//   efficiency(measured) = sol / measured         1.0 means at the roofline
#pragma once

#include <cstdint>

#include "ts/perf/hardware.hpp"

namespace ts::perf {

enum class Bound { memory, compute };
const char* bound_name(Bound b);

struct Roofline {
  int64_t flops = 0;
  int64_t bytes = 0;
  double intensity = 0.0;   // FLOP per byte (infinite when bytes == 0)
  double peak_flops = 0.0;  // calibrated ceiling used
  double bandwidth = 0.0;   // calibrated bytes/s used
  double ridge = 0.0;       // intensity where the two ceilings meet
  double memory_seconds = 0.0;
  double compute_seconds = 0.0;
  double sol_seconds = 0.0;
  Bound bound = Bound::memory;

  /// Fraction of the roofline a measured time reaches: sol / measured (0 for no measurement).
  double efficiency(double measured_seconds) const {
    return measured_seconds > 0.0 ? sol_seconds / measured_seconds : 0.0;
  }
  /// Achieved FLOP/s and bytes/s at a measured time.
  double achieved_flops(double measured_seconds) const { return flops / measured_seconds; }
  double achieved_bandwidth(double measured_seconds) const { return bytes / measured_seconds; }
};

Roofline evaluate_roofline(const HardwareProfile& hw, int64_t flops, int64_t bytes, DType dtype,
                           bool tensor_cores);

}  // namespace ts::perf
