// Known-value tests of the GEMM and attention fp64 CPU references (the GPU tests compare the
// kernels against them) and of the GEMM config heuristic.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <set>
#include <tuple>
#include <vector>

#include "attention/attention.hpp"
#include "attention/attention_pack.hpp"
#include "attention/attention_tiles.hpp"
#include "common/host_convert.hpp"
#include "gemm/gemm.hpp"
#include "gemm/gemm_configs.hpp"

namespace ts::kernels {
namespace {

std::vector<std::uint8_t> make(DType dtype, const std::vector<double>& values) {
  std::vector<std::uint8_t> buf(values.size() * dtype_size(dtype));
  for (std::size_t i = 0; i < values.size(); ++i)
    store_element(buf.data(), dtype, static_cast<std::int64_t>(i), values[i]);
  return buf;
}

double at(const std::vector<std::uint8_t>& buf, DType dtype, std::int64_t i) {
  return load_element(buf.data(), dtype, i);
}

class Mm16 : public ::testing::TestWithParam<DType> {};
INSTANTIATE_TEST_SUITE_P(All, Mm16, ::testing::Values(DType::f16, DType::bf16),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

// a = [[1, 2, 3], [4, 5, 6]] (M = 2, K = 3), b = [[1, 0], [0, 1], [1, 1]] (K = 3, N = 2):
// a @ b = [[4, 5], [10, 11]].
TEST_P(Mm16, GemmKnownValuesInAllFourLayouts) {
  const DType dt = GetParam();
  const std::vector<double> a_rm = {1, 2, 3, 4, 5, 6}, a_cm = {1, 4, 2, 5, 3, 6};
  const std::vector<double> b_kn = {1, 0, 0, 1, 1, 1}, b_nk = {1, 0, 1, 0, 1, 1};
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      auto a = make(dt, ta ? a_cm : a_rm);
      auto b = make(dt, tb ? b_nk : b_kn);
      auto d = make(dt, {-1, -1, 77, -1, -1, 77});  // ldd = 3: one pad element per row
      GemmArgs g;
      g.a = a.data(), g.b = b.data(), g.d = d.data(), g.M = 2, g.N = 2, g.K = 3;
      g.lda = ta ? 2 : 3, g.ldb = tb ? 3 : 2, g.ldd = 3, g.trans_a = ta, g.trans_b = tb;
      g.dtype = dt;
      gemm_reference(g);
      EXPECT_EQ(at(d, dt, 0), 4) << ta << tb;
      EXPECT_EQ(at(d, dt, 1), 5) << ta << tb;
      EXPECT_EQ(at(d, dt, 2), 77) << "padding untouched";
      EXPECT_EQ(at(d, dt, 3), 10) << ta << tb;
      EXPECT_EQ(at(d, dt, 4), 11) << ta << tb;
    }
  }
}

TEST(GemmReference, KZeroWritesZerosAndRoundsOutput) {
  auto d = make(DType::bf16, {5, 5});
  GemmArgs g;
  g.a = g.b = d.data(), g.d = d.data(), g.M = 1, g.N = 2, g.K = 0, g.lda = 0, g.ldb = 0, g.ldd = 2;
  gemm_reference(g);
  EXPECT_EQ(at(d, DType::bf16, 0), 0);
  EXPECT_EQ(at(d, DType::bf16, 1), 0);
  // 1 + 2^-9 in bf16 inputs is 1; the product 3 * (1/3) rounds like the kernels round fp32.
  auto a = make(DType::bf16, {3}), b = make(DType::bf16, {1.0 / 3.0}), o = make(DType::bf16, {0});
  GemmArgs h;
  h.a = a.data(), h.b = b.data(), h.d = o.data(), h.M = h.N = h.K = 1, h.lda = h.ldb = h.ldd = 1;
  gemm_reference(h);
  EXPECT_EQ(
      at(o, DType::bf16, 0),
      bf16_bits_to_float(float_to_bf16_bits(static_cast<float>(3.0 * at(b, DType::bf16, 0)))));
}

TEST(GemmConfigs, HeuristicUsesBigTilesOnlyWhenTheyFillTheDevice) {
  EXPECT_EQ(pick_gemm_config(4096, 4096, 132), 0);  // 512 tiles of 128 x 256
  EXPECT_EQ(pick_gemm_config(8192, 28672, 132), 0);
  EXPECT_EQ(pick_gemm_config(2048, 2048, 132), 1);  // 128 big tiles < 2 waves; 256 medium
  EXPECT_EQ(pick_gemm_config(2048, 1024, 132), 2);  // 128 medium tiles < 132; 256 small
  EXPECT_EQ(pick_gemm_config(1024, 1024, 132), 3);  // 128 small tiles: one an SM, cooperative
  EXPECT_EQ(pick_gemm_config(1024, 1024, 100), 2);  // 64 medium < 100 < 128 small: ping-pong
  EXPECT_EQ(pick_gemm_config(16, 6144, 132), 3);
  EXPECT_EQ(pick_gemm_config(1, 1, 0), 3);  // unknown SM count: assumes 132
  for (const GemmConfig& c : kGemmConfigs) {
    EXPECT_EQ(c.tile_k * 2 % 128, 0) << c.name;  // K tile: whole 128-byte swizzle rows
    EXPECT_TRUE(!c.cooperative || c.tile_m >= 128) << c.name;
  }
}

TEST(GemmConfigs, DecodeShapesTakeTheDecodeKernelOnlyWhereItServes) {
  alignas(16) static std::uint16_t buf[16];
  GemmArgs g;  // Llama-3-8B decode qkv: [16, 4096] @ [6144, 4096]^T
  g.a = g.b = buf, g.d = buf, g.M = 16, g.N = 6144, g.K = 4096, g.lda = g.ldb = 4096, g.ldd = 6144;
  EXPECT_TRUE(gemm_skinny_serves(g));
  GemmArgs one = g;
  one.M = 1;
  EXPECT_TRUE(gemm_skinny_serves(one));
  const auto refused = [&](auto change) {
    GemmArgs h = g;
    change(h);
    return !gemm_skinny_serves(h);
  };
  EXPECT_TRUE(refused([](GemmArgs& h) { h.M = 17; }));  // more rows than one mma block
  EXPECT_TRUE(refused([](GemmArgs& h) { h.M = 0; }));
  EXPECT_TRUE(refused([](GemmArgs& h) { h.trans_b = false; }));  // b stored [K, N]
  EXPECT_TRUE(refused([](GemmArgs& h) { h.trans_a = true; }));
  EXPECT_TRUE(refused([](GemmArgs& h) { h.K = 4100; }));  // a k tail shorter than 16 bytes
  EXPECT_TRUE(refused([](GemmArgs& h) { h.lda = 4100; }));
  EXPECT_TRUE(refused([](GemmArgs& h) { h.ldb = 4100; }));
  EXPECT_TRUE(refused([](GemmArgs& h) { h.b = buf + 1; }));  // rows not 16-byte aligned
  EXPECT_TRUE(refused([](GemmArgs& h) { h.N = std::int64_t{1} << 30; }));
}

// Attention helper: contiguous [B, H, S, D] strides.
void strides(std::int64_t H, std::int64_t S, std::int64_t D, std::int64_t out[4]) {
  out[0] = H * S * D, out[1] = S * D, out[2] = D, out[3] = 1;
}

TEST_P(Mm16, AttentionWithEqualScoresAveragesValuesAndCausalFirstRowCopiesV0) {
  const DType dt = GetParam();
  const std::int64_t S = 3, D = 64;
  std::vector<double> qv(S * D, 0.0), kv(S * D, 0.0), vv(S * D);
  for (std::int64_t j = 0; j < S; ++j)
    for (std::int64_t d = 0; d < D; ++d)
      vv[j * D + d] = static_cast<double>(j + 1) * (d % 2 ? -1 : 1);
  auto q = make(dt, qv), k = make(dt, kv), v = make(dt, vv),
       o = make(dt, std::vector<double>(S * D, 9));
  for (bool causal : {false, true}) {
    AttentionArgs a;
    a.q = q.data(), a.k = k.data(), a.v = v.data(), a.o = o.data();
    a.B = 1, a.Hq = 1, a.Hkv = 1, a.Sq = S, a.Skv = S, a.D = D, a.is_causal = causal, a.dtype = dt;
    strides(1, S, D, a.q_strides), strides(1, S, D, a.k_strides), strides(1, S, D, a.v_strides);
    strides(1, S, D, a.o_strides);
    attention_reference(a);
    for (std::int64_t i = 0; i < S; ++i) {
      // zero scores: uniform weights over the visible keys 0..(causal ? i : S - 1)
      const std::int64_t n = causal ? i + 1 : S;
      const double mean = static_cast<double>(n + 1) / 2.0;
      EXPECT_NEAR(at(o, dt, i * D), mean, 1e-2) << causal << " row " << i;
      EXPECT_NEAR(at(o, dt, i * D + 1), -mean, 1e-2) << causal << " row " << i;
    }
  }
}

TEST(AttentionReference, ScaleSharpensAndGroupedHeadsShareKv) {
  // Two q heads share one kv head. Keys e0 and e1 (D = 64); q head 0 points at e0, head 1 at e1,
  // so with a large scale each head copies "its" value row.
  const DType dt = DType::f16;
  const std::int64_t D = 64, Skv = 2;
  std::vector<double> qv(2 * D, 0.0), kv(Skv * D, 0.0), vv(Skv * D, 0.0);
  qv[0] = 1, qv[D + 1] = 1;  // head 0 . e0 = 1, head 1 . e1 = 1
  kv[0] = 1, kv[D + 1] = 1;
  for (std::int64_t d = 0; d < D; ++d) vv[d] = 1, vv[D + d] = -1;
  auto q = make(dt, qv), k = make(dt, kv), v = make(dt, vv),
       o = make(dt, std::vector<double>(2 * D));
  AttentionArgs a;
  a.q = q.data(), a.k = k.data(), a.v = v.data(), a.o = o.data();
  a.B = 1, a.Hq = 2, a.Hkv = 1, a.Sq = 1, a.Skv = Skv, a.D = D, a.scale = 20.f, a.dtype = dt;
  strides(2, 1, D, a.q_strides), strides(2, 1, D, a.o_strides);
  strides(1, Skv, D, a.k_strides), strides(1, Skv, D, a.v_strides);
  attention_reference(a);
  const double w = 1.0 / (1.0 + std::exp(-20.0));  // softmax weight of the matching key
  EXPECT_NEAR(at(o, dt, 0), w - (1 - w), 1e-3);
  EXPECT_NEAR(at(o, dt, D), -(w - (1 - w)), 1e-3);
  // scale == 0 means 1 / sqrt(D): weights e^(1/8) : 1
  a.scale = 0.f;
  attention_reference(a);
  const double w8 = 1.0 / (1.0 + std::exp(-1.0 / 8.0));
  EXPECT_NEAR(at(o, dt, 0), 2 * w8 - 1, 2e-3);
}

// Packing a kv group's query heads into one head of group * Sq rows (the decode launch path)
// must compute the same attention: the reference over the packed args writes the same bytes.
TEST(AttentionPack, PackedArgsComputeTheSameAttention) {
  const DType dt = DType::bf16;
  const std::int64_t B = 2, Hq = 8, Hkv = 2, Skv = 7, D = 64;
  std::uint64_t state = 12345;
  auto noise = [&](std::size_t n) {
    std::vector<double> v(n);
    for (double& x : v) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      x = static_cast<double>(state >> 40) / static_cast<double>(1ull << 24) * 4.0 - 2.0;
    }
    return v;
  };
  struct Layout {
    const char* name;
    std::int64_t Sq;
    bool heads_outer;  // [H, B, S, D] in memory (batch and head strides swapped)
    bool causal;
    bool packs;
  };
  const Layout layouts[] = {
      {"decode", 1, false, false, true}, {"decode, heads outer", 1, true, false, true},
      {"3 rows", 3, false, false, true}, {"3 rows, heads outer", 3, true, false, false},
      {"causal", 1, false, true, false}, {"prefill", 128, false, false, false}};
  for (const Layout& l : layouts) {
    const std::int64_t Sq = l.Sq;
    auto q = make(dt, noise(B * Hq * Sq * D)), k = make(dt, noise(B * Hkv * Skv * D)),
         v = make(dt, noise(B * Hkv * Skv * D));
    auto o = make(dt, std::vector<double>(B * Hq * Sq * D)), o_packed = o;
    AttentionArgs a;
    a.q = q.data(), a.k = k.data(), a.v = v.data(), a.o = o.data();
    a.B = B, a.Hq = Hq, a.Hkv = Hkv, a.Sq = Sq, a.Skv = Skv, a.D = D, a.dtype = dt;
    a.is_causal = l.causal;
    strides(Hq, Sq, D, a.q_strides), strides(Hq, Sq, D, a.o_strides);
    strides(Hkv, Skv, D, a.k_strides), strides(Hkv, Skv, D, a.v_strides);
    if (l.heads_outer) {
      for (std::int64_t* s : {a.q_strides, a.o_strides}) s[0] = Sq * D, s[1] = B * Sq * D;
    }
    AttentionArgs packed = a;
    ASSERT_EQ(pack_query_groups(packed), l.packs) << l.name;
    if (!l.packs) continue;
    EXPECT_EQ(packed.Hq, Hkv) << l.name;
    EXPECT_EQ(packed.Sq, Sq * Hq / Hkv) << l.name;
    attention_reference(a);
    packed.o = o_packed.data();
    attention_reference(packed);
    EXPECT_EQ(o, o_packed) << l.name;
    EXPECT_NE(o, std::vector<std::uint8_t>(o.size(), 0)) << l.name;
  }
}

TEST(AttentionTiles, EveryTileOnceLongestFirstWithinEachSection) {
  // (B, Hq, group, Sq, Skv, causal, D): Llama-3-8B 2k causal (one section), an MHA whose K and V
  // overflow one section, a ragged last query block, Sq != Skv, a ragged last section.
  const std::tuple<int, int, int, int, int, bool, int> shapes[] = {
      {4, 32, 4, 2048, 2048, true, 128}, {4, 32, 1, 8192, 8192, true, 128},
      {3, 5, 1, 300, 300, true, 64},     {2, 8, 2, 130, 200, false, 128},
      {1, 28, 7, 520, 520, true, 128},   {1, 20, 1, 8192, 8192, true, 128}};
  for (const auto& [B, Hq, group, Sq, Skv, causal, D] : shapes) {
    const int l2_section = static_cast<int>(attn::ws_tile_section(B, Hq, group, Skv, D));
    EXPECT_LE(std::int64_t{l2_section} / group * 2 * Skv * D * 2, std::int64_t{32} << 20);
    // sections of one head: the launcher's order for non-causal calls (query blocks fastest)
    for (const int section : {l2_section, 1}) {
      SCOPED_TRACE(testing::Message() << B << "x" << Hq << " Sq " << Sq << " section " << section);
      const attn::TileShape shape{B, Hq, Sq, Skv, causal, section};
      const std::int64_t n = attn::ws_num_tiles(shape, 128);
      std::set<std::tuple<int, int, int>> seen;
      int prev_len = 1 << 30, prev_section = 0;
      for (std::int64_t t = 0; t < n; ++t) {
        const attn::WsTile tile = attn::ws_tile(shape, 128, 128, t);
        ASSERT_TRUE(tile.row0 >= 0 && tile.row0 < Sq && tile.row0 % 128 == 0);
        ASSERT_TRUE(tile.h >= 0 && tile.h < Hq && tile.b >= 0 && tile.b < B);
        EXPECT_EQ(tile.n_blocks, ((causal ? std::min(Skv, tile.row0 + 128) : Skv) + 127) / 128);
        EXPECT_TRUE(seen.insert({tile.row0, tile.h, tile.b}).second) << "tile " << t << " twice";
        const int sec = (tile.b * Hq + tile.h) / section;
        EXPECT_GE(sec, prev_section);  // sections in order
        if (sec != prev_section) prev_len = 1 << 30;
        EXPECT_LE(tile.n_blocks, prev_len) << "tile " << t;  // longest first within a section
        prev_len = tile.n_blocks, prev_section = sec;
        if (section == 1) {  // tile t = ((b Hq + h) m_blocks + m), the row blocks last first
          const std::int64_t m_blocks = (Sq + 127) / 128;
          EXPECT_EQ(tile.row0, (m_blocks - 1 - t % m_blocks) * 128);
          EXPECT_EQ(std::int64_t{tile.b} * Hq + tile.h, t / m_blocks);
        }
      }
      EXPECT_EQ(static_cast<std::int64_t>(seen.size()), n);
    }
  }
}

}  // namespace
}  // namespace ts::kernels
