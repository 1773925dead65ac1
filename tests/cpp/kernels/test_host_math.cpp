// Host-side pieces of the kernels: fp16/bf16 rounding (the references round like the device)
// and the row-config table and heuristic an autotuner will read.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include "common/host_convert.hpp"
#include "common/row_config.hpp"

namespace ts::kernels {
namespace {

TEST(HostConvert, Bf16RoundsToNearestEven) {
  EXPECT_EQ(float_to_bf16_bits(1.0f), 0x3f80);
  EXPECT_EQ(bf16_bits_to_float(0x3f80), 1.0f);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to even (1.0).
  EXPECT_EQ(float_to_bf16_bits(1.0f + 0x1p-8f), 0x3f80);
  // 1 + 3 * 2^-8 is halfway between 1 + 2^-7 and 1 + 2^-6: ties to even (1 + 2^-6).
  EXPECT_EQ(bf16_bits_to_float(float_to_bf16_bits(1.0f + 3 * 0x1p-8f)), 1.0f + 0x1p-6f);
  EXPECT_EQ(bf16_bits_to_float(float_to_bf16_bits(-2.5f)), -2.5f);
  EXPECT_TRUE(std::isnan(bf16_bits_to_float(float_to_bf16_bits(NAN))));
}

TEST(HostConvert, HalfRoundTripsAndRounds) {
  EXPECT_EQ(float_to_half_bits(1.0f), 0x3c00);
  EXPECT_EQ(float_to_half_bits(-2.0f), 0xc000);
  EXPECT_EQ(float_to_half_bits(65504.0f), 0x7bff);
  EXPECT_EQ(float_to_half_bits(1e6f), 0x7c00);
  EXPECT_EQ(half_bits_to_float(0x0001), 0x1p-24f);  // smallest subnormal
  EXPECT_EQ(float_to_half_bits(0x1p-24f), 0x0001);
  EXPECT_EQ(float_to_half_bits(1.0f + 0x1p-11f), 0x3c00);      // tie to even
  EXPECT_EQ(float_to_half_bits(1.0f + 3 * 0x1p-11f), 0x3c02);  // tie to even (up)
  for (std::uint32_t bits = 0; bits < 0x7c00; bits += 7) {     // every 7th finite half
    const float f = half_bits_to_float(static_cast<std::uint16_t>(bits));
    EXPECT_EQ(float_to_half_bits(f), bits) << bits;
  }
  EXPECT_TRUE(std::isnan(half_bits_to_float(float_to_half_bits(NAN))));
}

TEST(HostConvert, LoadStoreElement) {
  std::uint16_t h[2];
  store_element(h, DType::bf16, 1, 3.0);
  EXPECT_EQ(load_element(h, DType::bf16, 1), 3.0);
  float f[1];
  store_element(f, DType::f32, 0, 0.1);
  EXPECT_EQ(load_element(f, DType::f32, 0), static_cast<double>(0.1f));
}

TEST(RowConfig, TableInvariants) {
  for (const RowConfig& c : kRowConfigs) {
    EXPECT_TRUE(c.warps_per_row == 1 || c.rows_per_cta == 1);  // group_sum syncs the CTA
    EXPECT_LE(c.threads_per_cta(), 1024);
    EXPECT_GE(c.vecs_per_thread, 1);
  }
  for (int i = 1; i <= 5; ++i)
    EXPECT_LE(kRowConfigs[i - 1].capacity_vecs(), kRowConfigs[i].capacity_vecs());
}

TEST(RowConfig, ManyRowsKeepTheRowInRegisters) {
  const int sms = 132;
  for (std::int64_t vecs : {1, 100, 128, 129, 512, 1024, 2048}) {
    const int c = pick_row_config(16384, vecs, sms);
    ASSERT_GE(c, 0);
    ASSERT_LT(c, kNumRowConfigs);
    EXPECT_GE(kRowConfigs[c].capacity_vecs(), vecs) << vecs;
    // ... and no smaller-capacity config of the ordered range would have held it.
    if (c > 0) {
      EXPECT_LT(kRowConfigs[c - 1].capacity_vecs(), vecs) << vecs;
    }
  }
  // Longer rows stream with 512 threads (measured faster on H200 than the big cached configs).
  EXPECT_EQ(pick_row_config(16384, 4096, sms), 3);
  EXPECT_EQ(pick_row_config(16384, 16384, sms), 3);
  EXPECT_EQ(pick_row_config(32, 16384, sms), 4);
}

TEST(RowConfig, FewRowsSpreadEachRowOverMoreThreads) {
  // bf16 [1, 4096] = 512 vectors: one vector per thread.
  const RowConfig& c = kRowConfigs[pick_row_config(1, 512, 132)];
  EXPECT_EQ(c.capacity_vecs(), 512);
  EXPECT_EQ(c.vecs_per_thread, 1);
  EXPECT_EQ(pick_row_config(1, 10, 132), 0);
  // bf16 [16, 8192] (llama3-70b decode) = 1024 vectors: 512 threads of two vectors, whose
  // weights the norms load with x.
  EXPECT_EQ(kRowConfigs[pick_row_config(16, 1024, 132)].vecs_per_thread, 2);
  EXPECT_EQ(kRowConfigs[pick_row_config(16, 1024, 132)].threads_per_row(), 512);
  EXPECT_EQ(kRowConfigs[pick_row_config(16, 1024, 132)].capacity_vecs(), 1024);
  // Fewer rows than SMs gets at least as many threads per row as many rows would.
  for (std::int64_t vecs : {64, 512, 1024, 4096})
    EXPECT_GE(kRowConfigs[pick_row_config(8, vecs, 132)].threads_per_row(),
              kRowConfigs[pick_row_config(100000, vecs, 132)].threads_per_row());
}

}  // namespace
}  // namespace ts::kernels
