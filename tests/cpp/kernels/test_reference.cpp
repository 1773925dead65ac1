// Known-value tests of the fp64 CPU references the GPU tests compare against.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "activation/gated_mul.hpp"
#include "common/host_convert.hpp"
#include "norm/layer_norm.hpp"
#include "norm/rms_norm.hpp"
#include "rope/rope.hpp"
#include "softmax/softmax.hpp"

namespace ts::kernels {
namespace {

/// A host buffer of `dtype` filled from doubles.
std::vector<std::uint8_t> make(DType dtype, const std::vector<double>& values) {
  std::vector<std::uint8_t> buf(values.size() * dtype_size(dtype));
  for (std::size_t i = 0; i < values.size(); ++i)
    store_element(buf.data(), dtype, static_cast<std::int64_t>(i), values[i]);
  return buf;
}

double at(const std::vector<std::uint8_t>& buf, DType dtype, std::int64_t i) {
  return load_element(buf.data(), dtype, i);
}

class PerDtype : public ::testing::TestWithParam<DType> {};
INSTANTIATE_TEST_SUITE_P(All, PerDtype, ::testing::Values(DType::f32, DType::f16, DType::bf16),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

double tol(DType dtype) {
  return dtype == DType::f32 ? 1e-6 : dtype == DType::f16 ? 1e-3 : 8e-3;
}

TEST_P(PerDtype, RmsNormOfConstantRowIsWeight) {
  const DType dt = GetParam();
  const std::vector<double> w = {0.5, 1.0, -2.0, 3.0, 0.25};
  auto x = make(dt, {-3, -3, -3, -3, -3});  // constant c: x / |c| * w = sign(c) * w
  auto wb = make(dt, w);
  auto y = make(dt, std::vector<double>(5, 99.0));
  rms_norm_reference({x.data(), y.data(), wb.data(), 1, 5, 5, 5, 0.0f, dt, -1});
  for (int c = 0; c < 5; ++c) EXPECT_NEAR(at(y, dt, c), -w[c], tol(dt) * 4) << c;
}

TEST_P(PerDtype, RmsNormKnownValuesAndRowStride) {
  const DType dt = GetParam();
  // Row 0: [3, 4] -> rms = sqrt(12.5); row 1 sits 3 elements later (stride 3, one pad element).
  auto x = make(dt, {3, 4, 77, 1, 1, 77});
  auto w = make(dt, {1, 2});
  auto y = make(dt, {0, 0, 55, 0, 0, 55});
  rms_norm_reference({x.data(), y.data(), w.data(), 2, 2, 3, 3, 0.0f, dt, -1});
  const double r = std::sqrt(12.5);
  EXPECT_NEAR(at(y, dt, 0), 3 / r, tol(dt));
  EXPECT_NEAR(at(y, dt, 1), 8 / r, tol(dt) * 2);
  EXPECT_EQ(at(y, dt, 2), 55);  // padding untouched
  EXPECT_NEAR(at(y, dt, 3), 1, tol(dt));
  EXPECT_NEAR(at(y, dt, 4), 2, tol(dt));
}

TEST_P(PerDtype, LayerNormHasZeroMeanUnitVariance) {
  const DType dt = GetParam();
  auto x = make(dt, {1, 2, 3, 4, 10, 10, 10, 10});
  auto y = make(dt, std::vector<double>(8, 0));
  layer_norm_reference({x.data(), y.data(), nullptr, nullptr, 2, 4, 4, 4, 0.0f, dt, -1});
  // Row 0: mean 2.5, var 1.25.
  const double sd = std::sqrt(1.25);
  for (int c = 0; c < 4; ++c) EXPECT_NEAR(at(y, dt, c), (c + 1 - 2.5) / sd, tol(dt) * 2);
  // Row 1 is constant: (x - mean) = 0, so the output is 0 even with eps = 0 ... except 0/0.
  // eps = 0 and var = 0 gives NaN, like torch; with eps it is 0.
  layer_norm_reference({x.data(), y.data(), nullptr, nullptr, 2, 4, 4, 4, 1e-5f, dt, -1});
  for (int c = 4; c < 8; ++c) EXPECT_EQ(at(y, dt, c), 0.0);
}

TEST_P(PerDtype, LayerNormAppliesWeightAndBias) {
  const DType dt = GetParam();
  auto x = make(dt, {-1, 1});  // normalized: [-1, 1]
  auto w = make(dt, {2, 3});
  auto b = make(dt, {0.5, -0.5});
  auto y = make(dt, {0, 0});
  layer_norm_reference({x.data(), y.data(), w.data(), b.data(), 1, 2, 2, 2, 0.0f, dt, -1});
  EXPECT_NEAR(at(y, dt, 0), -1.5, tol(dt) * 2);
  EXPECT_NEAR(at(y, dt, 1), 2.5, tol(dt) * 3);
}

TEST_P(PerDtype, SoftmaxOfConstantRowIsUniform) {
  const DType dt = GetParam();
  auto x = make(dt, std::vector<double>(64, 7.0));
  auto y = make(dt, std::vector<double>(64, 0));
  softmax_reference({x.data(), y.data(), 1, 64, 64, 64, dt, -1});
  for (int c = 0; c < 64; ++c) EXPECT_NEAR(at(y, dt, c), 1.0 / 64, tol(dt) / 32);
}

TEST_P(PerDtype, SoftmaxKnownValuesShiftInvarianceAndSum) {
  const DType dt = GetParam();
  auto x = make(dt, {0, 1, 2, 100, 101, 102});  // row 1 = row 0 + 100 (exact in bf16): same result
  auto y = make(dt, std::vector<double>(6, 0));
  softmax_reference({x.data(), y.data(), 2, 3, 3, 3, dt, -1});
  const double z = 1 + std::exp(1.0) + std::exp(2.0);
  for (int r = 0; r < 2; ++r) {
    double sum = 0;
    for (int c = 0; c < 3; ++c) {
      EXPECT_NEAR(at(y, dt, r * 3 + c), std::exp(double(c)) / z, tol(dt)) << r << "," << c;
      sum += at(y, dt, r * 3 + c);
    }
    EXPECT_NEAR(sum, 1.0, 3 * tol(dt));
  }
}

TEST(SoftmaxReference, NegativeInfinityGetsZeroWeight) {
  std::vector<float> x = {-INFINITY, 0.f, 0.f};
  std::vector<float> y(3, -1.f);
  softmax_reference({x.data(), y.data(), 1, 3, 3, 3, DType::f32, -1});
  EXPECT_EQ(y[0], 0.f);
  EXPECT_FLOAT_EQ(y[1], 0.5f);
  EXPECT_FLOAT_EQ(y[2], 0.5f);
}

TEST_P(PerDtype, SiluAndMulKnownValues) {
  const DType dt = GetParam();
  // Row: gate [0, 2, -2], up [5, 1, 3]; silu(0) = 0, silu(2) = 2 / (1 + e^-2).
  auto x = make(dt, {0, 2, -2, 5, 1, 3, 9});  // one pad element (row stride 7)
  auto y = make(dt, {42, 42, 42});
  gated_mul_reference({x.data(), y.data(), 1, 3, 7, 3, dt, -1, GatedActivation::silu});
  EXPECT_EQ(at(y, dt, 0), 0.0);
  EXPECT_NEAR(at(y, dt, 1), 2 / (1 + std::exp(-2.0)), tol(dt) * 2);
  EXPECT_NEAR(at(y, dt, 2), -2 / (1 + std::exp(2.0)) * 3, tol(dt));
}

/// q [tokens, heads, head_dim] random-ish values; cos/sin for inv_freq = 10000^(-2i/rot).
struct RopeFixture {
  std::int64_t tokens = 3, heads = 2, head_dim = 8, rot = 8, max_pos = 16;
  std::vector<float> cos, sin, q, out;
  std::vector<std::int64_t> pos = {0, 5, 15};
  RopeFixture() {
    const std::int64_t half = rot / 2;
    for (std::int64_t p = 0; p < max_pos; ++p)
      for (std::int64_t i = 0; i < half; ++i) {
        const double a = p * std::pow(10000.0, -2.0 * i / rot);
        cos.push_back(static_cast<float>(std::cos(a)));
        sin.push_back(static_cast<float>(std::sin(a)));
      }
    for (std::int64_t i = 0; i < tokens * heads * head_dim; ++i)
      q.push_back(0.1f * static_cast<float>(i % 13) - 0.6f);
    out.assign(q.size(), NAN);
  }
  RopeArgs args() {
    RopeArgs a;
    a.q = q.data(), a.q_out = out.data(), a.positions = pos.data(), a.cos = cos.data(),
    a.sin = sin.data();
    a.tokens = tokens, a.q_heads = heads, a.head_dim = head_dim, a.rotary_dim = rot;
    a.q_token_stride = heads * head_dim, a.q_head_stride = head_dim, a.max_position = max_pos;
    a.dtype = DType::f32;
    return a;
  }
};

TEST(RopeReference, PositionZeroIsIdentity) {
  RopeFixture f;
  rope_reference(f.args());
  for (std::int64_t i = 0; i < f.heads * f.head_dim; ++i) EXPECT_FLOAT_EQ(f.out[i], f.q[i]) << i;
}

TEST(RopeReference, PreservesNormOfEveryPairAndMatchesFormula) {
  RopeFixture f;
  rope_reference(f.args());
  const std::int64_t half = f.rot / 2;
  for (std::int64_t t = 0; t < f.tokens; ++t)
    for (std::int64_t h = 0; h < f.heads; ++h)
      for (std::int64_t i = 0; i < half; ++i) {
        const std::int64_t base = (t * f.heads + h) * f.head_dim;
        const double x1 = f.q[base + i], x2 = f.q[base + i + half];
        const double o1 = f.out[base + i], o2 = f.out[base + i + half];
        EXPECT_NEAR(o1 * o1 + o2 * o2, x1 * x1 + x2 * x2, 1e-5);
        const double c = f.cos[f.pos[t] * half + i], s = f.sin[f.pos[t] * half + i];
        EXPECT_NEAR(o1, x1 * c - x2 * s, 1e-6);
        EXPECT_NEAR(o2, x2 * c + x1 * s, 1e-6);
      }
  // Position 5 really rotates (a test that only saw identity could not fail).
  EXPECT_GT(std::fabs(f.out[f.heads * f.head_dim] - f.q[f.heads * f.head_dim]), 1e-3);
}

TEST(RopeReference, InPlacePartialRotaryAndInvalidPosition) {
  RopeFixture f;
  f.rot = 4;  // dims 4..7 pass through
  f.cos.clear(), f.sin.clear();
  for (std::int64_t p = 0; p < f.max_pos; ++p)
    for (std::int64_t i = 0; i < 2; ++i) {
      f.cos.push_back(std::cos(0.3f * p * (i + 1)));
      f.sin.push_back(std::sin(0.3f * p * (i + 1)));
    }
  f.pos = {3, -1, 16};  // tokens 1 and 2 are out of range: left unrotated
  const std::vector<float> original = f.q;
  RopeArgs a = f.args();
  a.q_out = f.q.data();  // in place
  rope_reference(a);
  const std::int64_t w = f.heads * f.head_dim;
  for (std::int64_t i = w; i < 3 * w; ++i) EXPECT_EQ(f.q[i], original[i]) << i;
  for (std::int64_t h = 0; h < f.heads; ++h)
    for (std::int64_t d = 4; d < 8; ++d) EXPECT_EQ(f.q[h * 8 + d], original[h * 8 + d]);
  const double c = f.cos[3 * 2 + 0], s = f.sin[3 * 2 + 0];
  EXPECT_NEAR(f.q[0], original[0] * c - original[2] * s, 1e-6);
  EXPECT_NEAR(f.q[2], original[2] * c + original[0] * s, 1e-6);
}

}  // namespace
}  // namespace ts::kernels
