// Hardware profiles: the ceilings a roofline is drawn against. Each peak has a theoretical value
// (the vendor's datasheet) and a calibration factor (measured / theoretical); the effective
// ceiling is their product, so a report can show both.
//
//   const auto* h200 = ts::perf::find_profile("h200");
//   double bw = h200->hbm_bandwidth();                       // bytes/s, calibrated
//   double peak = h200->peak_flops(DType::bfloat16, true);   // FLOP/s on tensor cores
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "ts/spec/dtype.hpp"

namespace ts::perf {

using spec::DType;

struct HardwareProfile {
  std::string_view key;   // "h200"
  std::string_view name;  // "NVIDIA H200 SXM (141 GB HBM3e)"
  int sm_count;
  int64_t l2_bytes;
  // Memory: theoretical bytes/s and measured/theoretical.
  double hbm_theoretical;
  double hbm_calibration;
  // Dense tensor-core peaks (no sparsity), FLOP/s, theoretical.
  double tensor_fp16;  // also bf16
  double tensor_tf32;
  double tensor_fp8;  // also int8 (OP/s)
  double tensor_calibration;
  // CUDA-core fp32 FLOP/s (elementwise and reduction work is counted here).
  double simt_fp32;
  double simt_calibration;
  std::string_view calibration_source;  // where the factors come from

  double hbm_bandwidth() const { return hbm_theoretical * hbm_calibration; }
  /// Calibrated peak for work in `dtype`, on tensor cores or CUDA cores.
  double peak_flops(DType dtype, bool tensor_cores) const;
  /// Uncalibrated (datasheet) peak, for reports that show both.
  double theoretical_flops(DType dtype, bool tensor_cores) const;
};

/// All built-in profiles.
std::span<const HardwareProfile> hardware_profiles();
/// By key ("h200", "h100"), case-insensitive; nullptr when unknown.
const HardwareProfile* find_profile(std::string_view key);
/// Picks a profile from a CUDA device name such as "NVIDIA H200" or "NVIDIA H100 80GB HBM3".
const HardwareProfile* profile_for_device_name(std::string_view device_name);

}  // namespace ts::perf
