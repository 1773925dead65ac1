#include "ts/perf/hardware.hpp"

#include <array>
#include <cctype>
#include <string>

namespace ts::perf {
namespace {

// H200 SXM: datasheet 4.8 TB/s HBM3e, 989.4 TFLOP/s dense fp16/bf16, 494.7 tf32, 1978.9 fp8,
// 66.9 fp32 on CUDA cores, 132 SMs. Calibration measured on an H200 (
// PyTorch): a device-to-device copy moved about 4.3 TB/s counting read and write (0.896 of 4.8),
// and a bf16 8192^3 matmul on random data ran at about 790 TFLOP/s (0.798 of 989.4). The L2 size
// is what the device reports (60 MB). CUDA-core fp32 is not calibrated (factor 1).
//
// H100 SXM: the same GH100 compute (132 SMs, same tensor peaks) with 3.35 TB/s HBM3 and 50 MB of
// L2. No H100 was measured here: its factors reuse the H200's ratios and say so.
constexpr std::array<HardwareProfile, 2> kProfiles = {{
    {"h200", "NVIDIA H200 SXM (141 GB HBM3e)", 132, 60LL * 1000 * 1000, 4.8e12, 4.3 / 4.8, 989.4e12,
     494.7e12, 1978.9e12, 790.0 / 989.4, 66.9e12, 1.0,
     "measured on the project's H200: 4.3 TB/s device copy, 790 TFLOP/s bf16 8192^3 GEMM"},
    {"h100", "NVIDIA H100 SXM (80 GB HBM3)", 132, 50LL * 1000 * 1000, 3.35e12, 4.3 / 4.8, 989.4e12,
     494.7e12, 1978.9e12, 790.0 / 989.4, 66.9e12, 1.0,
     "not measured: the H200's measured ratios applied to the H100 datasheet"},
}};

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

double HardwareProfile::theoretical_flops(DType dtype, bool tensor_cores) const {
  if (!tensor_cores) return simt_fp32;
  switch (dtype) {
    case DType::float16:
    case DType::bfloat16:
      return tensor_fp16;
    case DType::float8_e4m3fn:
    case DType::float8_e5m2:
    case DType::int8:
    case DType::uint8:
      return tensor_fp8;
    // fp32 matmuls run in full fp32 on CUDA cores unless TF32 is allowed; count them there.
    default:
      return simt_fp32;
  }
}

double HardwareProfile::peak_flops(DType dtype, bool tensor_cores) const {
  const double theo = theoretical_flops(dtype, tensor_cores);
  return theo * (theo == simt_fp32 ? simt_calibration : tensor_calibration);
}

std::span<const HardwareProfile> hardware_profiles() {
  return kProfiles;
}

const HardwareProfile* find_profile(std::string_view key) {
  const std::string k = lower(key);
  for (const auto& p : kProfiles)
    if (p.key == k) return &p;
  return nullptr;
}

const HardwareProfile* profile_for_device_name(std::string_view device_name) {
  const std::string n = lower(device_name);
  for (const auto& p : kProfiles)
    if (n.find(p.key) != std::string::npos) return &p;
  return nullptr;
}

}  // namespace ts::perf
