// The tile order of the warp-specialized attention kernel (plain C++: used by the kernel and the
// launcher, unit-tested on the CPU).
//
// A launch covers (128-row query block, q head, batch) tiles. A CTA takes tiles blockIdx.x,
// + gridDim.x, ...: one tile each when the grid has one CTA per tile, several when it has one per
// SM (persistent: the producer then loads the next tile's K and V while the consumers finish the
// current one).
//
// Order: the (batch, head) pairs fall into sections of `section` heads whose K and V fit in L2
// together; within a section, longest causal query blocks first, heads fastest. Longest first
// leaves the short tiles for the tail, where they even out the SMs' finishing times, and a static
// walk (persistent) stays balanced because each round of gridDim.x tiles has nearly equal lengths;
// query blocks fastest would hand CTA i the lengths i, i + gridDim.x, ... mod the block count
// (Llama-3-8B 2k causal on 132 SMs: 10 key blocks a tile for some CTAs against 8.5 on average).
// Sections of one head are query blocks fastest: the launcher's order for non-causal calls, whose
// tiles are all of one length, where fewer heads in flight share more of their K and V in L2.
#pragma once

#include <algorithm>
#include <cstdint>

#if defined(__CUDACC__)
#define TS_HOST_DEVICE __host__ __device__
#else
#define TS_HOST_DEVICE
#endif

namespace ts::kernels::attn {

struct TileShape {
  int B, Hq, Sq, Skv;
  bool causal;
  int section;  // query heads (b, h) per section: ws_tile_section
};

struct WsTile {
  int row0, h, b, n_blocks;  // n_blocks: key blocks this tile sees
};

/// Query heads whose K and V (2-byte elements, head dim D, `group` query heads per kv head) take
/// at most 32 MiB together, of the H100's and H200's 50 MiB L2; at least 1, at most B * Hq.
inline std::int64_t ws_tile_section(std::int64_t B, std::int64_t Hq, std::int64_t group,
                                    std::int64_t Skv, std::int64_t D) {
  const std::int64_t kv_head_bytes = std::max<std::int64_t>(1, 2 * Skv * D * 2);
  const std::int64_t kv_heads = std::max<std::int64_t>(1, (std::int64_t{32} << 20) / kv_head_bytes);
  return std::max<std::int64_t>(1, std::min(kv_heads * group, B * Hq));
}

TS_HOST_DEVICE inline std::int64_t ws_num_tiles(const TileShape& s, int block_m) {
  return std::int64_t{(s.Sq + block_m - 1) / block_m} * s.Hq * s.B;
}

/// Tile t of ws_num_tiles(s, block_m).
TS_HOST_DEVICE inline WsTile ws_tile(const TileShape& s, int block_m, int block_n, std::int64_t t) {
  const std::int64_t m_blocks = (s.Sq + block_m - 1) / block_m, heads = std::int64_t{s.Hq} * s.B;
  const std::int64_t section = t / (m_blocks * s.section), first = section * s.section;
  const std::int64_t in_section = heads - first < s.section ? heads - first : s.section;
  const std::int64_t r = t - section * m_blocks * s.section;
  const std::int64_t bh = first + r % in_section;
  WsTile tile;
  tile.row0 = static_cast<int>((m_blocks - 1 - r / in_section) * block_m);
  tile.h = static_cast<int>(bh % s.Hq);
  tile.b = static_cast<int>(bh / s.Hq);
  const int kv_end = s.causal && tile.row0 + block_m < s.Skv ? tile.row0 + block_m : s.Skv;
  tile.n_blocks = (kv_end + block_n - 1) / block_n;
  return tile;
}

}  // namespace ts::kernels::attn
