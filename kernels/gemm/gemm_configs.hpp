// The tensor-core GEMM configurations (plain C++, shared by the launcher, the instance files and
// the host-side tests). Index = GemmArgs::config.
#pragma once

#include <cstdint>

#include "gemm/gemm.hpp"

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
    {128, 64, 64, 1, 1, false, "128x64x64 cluster 1x1 ping-pong"},     // 2: few tiles
    // 3: at most one tile per SM (1k^2: 128 tiles on 132 SMs). A ping-pong CTA with one tile runs
    // one consumer warpgroup; here both split its rows: 9.3-9.5 us at 1k^2 where config 2 took
    // 9.8-10.4 (H100, tuner, f16 and bf16, nn and nt).
    {128, 64, 64, 1, 1, true, "128x64x64 cluster 1x1 cooperative"},
};
inline constexpr int kNumGemmConfigs = sizeof(kGemmConfigs) / sizeof(kGemmConfigs[0]);

/// Output tiles of config `c` for an M x N product.
constexpr std::int64_t gemm_tiles(const GemmConfig& c, std::int64_t M, std::int64_t N) {
  return ((M + c.tile_m - 1) / c.tile_m) * ((N + c.tile_n - 1) / c.tile_n);
}

/// Largest tile that still gives every SM at least one tile (and, for the 128x256 tile, two
/// waves' worth, so the last wave's imbalance stays small); the smallest tile otherwise, ping-pong
/// while SMs get several tiles, cooperative once each gets at most one.
inline int pick_gemm_config(std::int64_t M, std::int64_t N, int num_sms) {
  const std::int64_t sms = num_sms > 0 ? num_sms : 132;
  if (gemm_tiles(kGemmConfigs[0], M, N) >= 2 * sms) return 0;
  if (gemm_tiles(kGemmConfigs[1], M, N) >= sms) return 1;
  return gemm_tiles(kGemmConfigs[2], M, N) > sms ? 2 : 3;
}

/// Rows the decode-shape kernel (gemm_skinny.cuh) covers: one mma.sync row block.
inline constexpr std::int64_t kGemmSkinnyMaxM = 16;

/// Variants of the decode-shape kernel, configs kNumGemmConfigs + i (the first is the default).
/// Its time is the stream of b; they trade columns per CTA (a's re-reads from L2, and how evenly
/// N / columns CTAs fill the last wave: Llama-3-8B gate-up's 896 CTAs of 32 columns are 3.4 waves
/// of 264) against bytes in flight per thread and CTAs per SM.
struct GemmSkinnyShape {
  int subtiles;    // n8 subtiles per CTA: 8 * subtiles columns
  int in_flight;   // 32-wide k chunks a thread loads before their mmas
  int min_blocks;  // CTAs per SM the register budget is cut for (__launch_bounds__)
  const char* name;
};
// Registers (ptxas -v, nvcc 13.0, bf16), none spilled: 96, 119, 79, 80, 188. The default (first):
// on the H100 (tuner) 23.3 / 86.3 us for Llama-3-8B decode qkv / gate-up, where 32
// columns a CTA with 3 chunks in flight took 24.8 / 93.6 and the best CUTLASS config 35.0 / 99.4;
// the last variant tied it on gate-up (85.8).
inline constexpr GemmSkinnyShape kGemmSkinnyShapes[] = {
    {2, 4, 2, "M <= 16 mma.sync: 16 columns a CTA, 4 k chunks in flight, 2 CTAs an SM"},
    {4, 3, 2, "M <= 16 mma.sync: 32 columns a CTA, 3 k chunks in flight, 2 CTAs an SM"},
    {2, 4, 3, "M <= 16 mma.sync: 16 columns a CTA, 4 k chunks in flight, 3 CTAs an SM"},
    {4, 2, 3, "M <= 16 mma.sync: 32 columns a CTA, 2 k chunks in flight, 3 CTAs an SM"},
    {4, 6, 1, "M <= 16 mma.sync: 32 columns a CTA, 6 k chunks in flight, 1 CTA an SM"},
};
inline constexpr int kNumGemmSkinnyShapes =
    sizeof(kGemmSkinnyShapes) / sizeof(kGemmSkinnyShapes[0]);

/// True when the decode-shape kernel serves `g`: M <= 16 rows of a [M, K] times b stored [N, K],
/// both K-contiguous with 16-byte aligned rows (its k and column indices are ints: N and K below
/// 2^30). It is the default there (config -1): on the H100 it took 24 / 93 us for Llama-3-8B's
/// decode qkv / gate-up where the CUTLASS configs' best took 35 / 99 (tuner).
inline bool gemm_skinny_serves(const GemmArgs& g) {
  constexpr std::int64_t kLimit = std::int64_t{1} << 30;
  const auto aligned16 = [](const void* p) {
    return reinterpret_cast<std::uintptr_t>(p) % 16 == 0;
  };
  return !g.trans_a && g.trans_b && g.M >= 1 && g.M <= kGemmSkinnyMaxM && g.K > 0 && g.K % 8 == 0 &&
         g.K < kLimit && g.N < kLimit && g.lda % 8 == 0 && g.ldb % 8 == 0 && aligned16(g.a) &&
         aligned16(g.b);
}

}  // namespace ts::kernels
