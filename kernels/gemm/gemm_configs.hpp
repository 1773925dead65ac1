// The tensor-core GEMM configurations (plain C++, shared by the launcher, the instance files and
// the host-side tests). Index = GemmArgs::config.
#pragma once

#include <cstdint>

namespace ts::kernels {

struct GemmConfig {
  int tile_m, tile_n, tile_k;
  int cluster_m, cluster_n;
  bool cooperative;  // true: two consumer warpgroups split one tile; false: ping-pong tiles
  const char* name;
};

inline constexpr GemmConfig kGemmConfigs[] = {
    {128, 256, 64, 2, 1, true, "128x256x64 cluster 2x1 cooperative"},  // 0: large problems
    {128, 128, 64, 2, 1, false, "128x128x64 cluster 2x1 ping-pong"},   // 1: medium
    {128, 64, 64, 1, 1, false, "128x64x64 cluster 1x1 ping-pong"},     // 2: few tiles (1k^2)
    // 3: about one tile per SM (1k^2: 128 tiles on 132 SMs). A ping-pong CTA with one tile runs
    // one consumer warpgroup; here both split its rows. Tuning candidate, not yet a default.
    {128, 64, 64, 1, 1, true, "128x64x64 cluster 1x1 cooperative"},
};
inline constexpr int kNumGemmConfigs = sizeof(kGemmConfigs) / sizeof(kGemmConfigs[0]);

/// Output tiles of config `c` for an M x N product.
constexpr std::int64_t gemm_tiles(const GemmConfig& c, std::int64_t M, std::int64_t N) {
  return ((M + c.tile_m - 1) / c.tile_m) * ((N + c.tile_n - 1) / c.tile_n);
}

/// Largest tile that still gives every SM at least one tile (and, for the 128x256 tile, two
/// waves' worth, so the last wave's imbalance stays small); the smallest tile otherwise.
inline int pick_gemm_config(std::int64_t M, std::int64_t N, int num_sms) {
  const std::int64_t sms = num_sms > 0 ? num_sms : 132;
  if (gemm_tiles(kGemmConfigs[0], M, N) >= 2 * sms) return 0;
  if (gemm_tiles(kGemmConfigs[1], M, N) >= sms) return 1;
  return 2;
}

}  // namespace ts::kernels
