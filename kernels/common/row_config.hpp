// How a row-wise kernel (norms, softmax) maps rows onto threads, and the default choice.
//
// A "row group" of `warps_per_row` warps owns one row; a CTA holds `rows_per_cta` groups.
// Each thread keeps up to `vecs_per_thread` 16-byte vectors of its row in registers, so a row of
// at most  capacity = warps_per_row * 32 * vecs_per_thread  vectors is read from HBM exactly
// once. Longer rows are streamed twice (the second read mostly hits L2).
//
//   row r, vector j (of `vec` elements) is handled by thread (j % threads_per_row) of group r,
//   in its register slot j / threads_per_row.
//
// Plain C++ so the heuristic is unit-tested on the CPU and visible to an autotuner.
#pragma once

#include <cstdint>

namespace ts::kernels {

struct RowConfig {
  int warps_per_row;    // warps that cooperate on one row (1: a warp per row, no __syncthreads)
  int rows_per_cta;     // row groups per CTA; > 1 only when warps_per_row == 1
  int vecs_per_thread;  // register-resident 16-byte vectors per thread

  constexpr int threads_per_row() const { return warps_per_row * 32; }
  constexpr int threads_per_cta() const { return threads_per_row() * rows_per_cta; }
  constexpr std::int64_t capacity_vecs() const {
    return static_cast<std::int64_t>(threads_per_row()) * vecs_per_thread;
  }
};

/// The instantiated configurations, smallest capacity first. Index = the `config` field of Args.
inline constexpr RowConfig kRowConfigs[] = {
    {1, 4, 4},    // 0: warp per row, 4 rows per CTA: short rows (<= 1024 bf16)
    {4, 1, 4},    // 1: 128 threads per row (<= 4096 bf16)
    {8, 1, 4},    // 2: 256 threads per row (<= 8192 bf16)
    {16, 1, 4},   // 3: 512 threads per row (<= 16384 bf16)
    {32, 1, 4},   // 4: 1024 threads per row (<= 32768 bf16)
    {16, 1, 16},  // 5: 512 threads, 16 vectors each (<= 65536 bf16; 1024 x 8 spills)
    {4, 1, 1},    // 6: 128 threads, one vector each: latency-bound small batches
    {16, 1, 1},   // 7: 512 threads, one vector each: decode rows of 4096..8192
    {32, 1, 1},   // 8: 1024 threads, one vector each: decode rows of 8192..16384
    {16, 1, 2},   // 9: 512 threads, two vectors each: decode rows of 8192..16384
};
inline constexpr int kNumRowConfigs = sizeof(kRowConfigs) / sizeof(kRowConfigs[0]);

/// The norms' row kernels load a row's weight (and bias) vectors together with its x vectors in
/// configs of at most this many vectors a thread (the decode ones): the weights' round trip then
/// overlaps x's instead of following the reduction (H200, bf16 16 x 4096: 5.1 -> 4.8 us). Wider
/// configs load them after the reduction: preloading 4 vectors cost occupancy (16384 x 8192:
/// 129.5 -> 161.6 us).
inline constexpr int kNormPreloadMaxVecs = 2;

/// Persistent norm configs (tuning indices kNumRowConfigs + i of RMSNorm and LayerNorm; never
/// the default until measured faster): a CTA walks rows r, r + grid, ... with the weight slice
/// loaded once and the next row in flight during this one's reduction. Serves rows of whole
/// 16-byte vectors, at most threads * vecs_per_thread of them.
struct PersistentConfig {
  int threads;
  int vecs_per_thread;
  constexpr std::int64_t capacity_vecs() const {
    return static_cast<std::int64_t>(threads) * vecs_per_thread;
  }
};
inline constexpr PersistentConfig kPersistentConfigs[] = {{128, 4}, {256, 2}, {256, 4}, {512, 2}};
inline constexpr int kNumPersistentConfigs =
    sizeof(kPersistentConfigs) / sizeof(kPersistentConfigs[0]);

/// Weight-prefetch norm configs (tuning indices kNumRowConfigs + kNumPersistentConfigs + i of
/// RMSNorm and LayerNorm; never the default until measured faster): row config
/// kNormPrefetchConfigs[i], its weight (and bias) lines asked into L1 right after the row's x
/// loads (prefetch.global.L1: no registers), so the weight loads after the reductions hit L1
/// rather than wait on an L2 round trip. LayerNorm 16384 x 8192 bf16 runs config 2 at 0.98x
/// torch.compile on the H100, a gap the same build reproduced within 0.3%.
inline constexpr int kNormPrefetchConfigs[] = {2, 3};
inline constexpr int kNumNormPrefetchConfigs =
    sizeof(kNormPrefetchConfigs) / sizeof(kNormPrefetchConfigs[0]);
static_assert(
    [] {
      for (const int c : kNormPrefetchConfigs)
        if (kRowConfigs[c].vecs_per_thread <= kNormPreloadMaxVecs) return false;
      return true;
    }(),
    "a prefetch config's base loads its weights after the reductions");

/// The norms' configs: row, then persistent, then weight-prefetch (dispatch_row_kernel).
inline constexpr int kNumNormConfigs =
    kNumRowConfigs + kNumPersistentConfigs + kNumNormPrefetchConfigs;

/// Default config for `rows` rows of `row_vecs` vectors on a device with `num_sms` SMs.
/// Enough rows to fill the device: the smallest config that keeps the whole row in registers
/// (more rows per SM, more bytes in flight). Fewer rows than SMs: the kernel is latency-bound,
/// so spread each row over as many threads as it has vectors, to shorten each thread's chain.
inline int pick_row_config(std::int64_t rows, std::int64_t row_vecs, int num_sms) {
  if (rows < num_sms) {
    if (row_vecs <= 32) return 0;
    if (row_vecs <= 128) return 6;
    if (row_vecs <= 512) return 7;
    // One or two vectors per thread also let the norms load their weights with x (one DRAM
    // round trip, not two: H200 bf16 16 x 4096 went 5.1 -> 4.8 us with config 7). At 16 x 8192,
    // 512 threads of two vectors (Triton's shape): Nsight Compute on the H100 timed config 8's
    // 1024 threads at 4.1 us against Triton's 512 at 3.8-3.9.
    if (row_vecs <= 1024) return 9;
    return 4;  // H200: 1024 threads streaming beat 512 x 16 cached (which spills) at 32 x 128k
  }
  // Configs 0..3 are ordered by capacity; take the first that holds the whole row. Longer rows
  // stream with 512 threads: measured on H200 (bf16 4096 x 32768: 71% of copy bandwidth vs 63%
  // for the 1024 x 4 cached config 4; 1024 x 131072: 54% vs 41% for config 5).
  for (int i = 0; i <= 3; ++i)
    if (kRowConfigs[i].capacity_vecs() >= row_vecs) return i;
  return 3;
}

}  // namespace ts::kernels
