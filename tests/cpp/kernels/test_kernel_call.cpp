// The one calling convention (kernels/common/kernel_call.hpp): every reference kernel registered
// by name, the adapters' reading of a call, and their refusals of calls they cannot express.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/host_convert.hpp"
#include "common/kernel_call.hpp"
#include "ts/spec/manifest.hpp"

namespace tk = ts::kernels;

namespace {

tk::TensorArg tensor(void* data, tk::ElemType type, std::vector<std::int64_t> sizes,
                     std::vector<std::int64_t> strides) {
  tk::TensorArg t;
  t.data = data;
  t.type = type;
  t.rank = static_cast<int>(sizes.size());
  for (int d = 0; d < t.rank; ++d) {
    t.sizes[d] = sizes[static_cast<size_t>(d)];
    t.strides[d] = strides[static_cast<size_t>(d)];
  }
  return t;
}

tk::ParamArg real(double f) {
  tk::ParamArg p;
  p.kind = tk::ParamArg::Kind::real;
  p.f = f;
  return p;
}

}  // namespace

TEST(KernelCall, EveryReferenceKernelIsRegisteredOnceUnderItsOp) {
  std::set<std::pair<std::string, std::string>> registered;  // (kernel, op)
  for (const auto& e : tk::kernel_registry()) {
    if (e.backend != tk::Backend::reference) continue;
    EXPECT_TRUE(registered.emplace(e.name, e.op).second) << e.name;
    EXPECT_EQ(e.num_configs(), 1) << e.name;
  }
  // Exactly the kernels the manifest's implemented entries name, each under its entry.
  auto manifest = ts::spec::load_manifest(ts::spec::default_manifest_dir());
  ASSERT_TRUE(manifest) << manifest.error().message;
  std::set<std::pair<std::string, std::string>> named;
  for (const auto& op : manifest->ops())
    if (op.status() == ts::spec::OpStatus::implemented)
      for (const auto& k : op.kernels()) named.emplace(k, op.name());
  EXPECT_EQ(registered, named);
  EXPECT_TRUE(registered.contains({"silu_and_mul", "SiluAndMulFwdOp"}));
  ASSERT_NE(tk::find_kernel(tk::Backend::reference, "rms_norm"), nullptr);
  EXPECT_STREQ(tk::find_kernel(tk::Backend::reference, "rms_norm")->op, "RMSNormFwdOp");
  EXPECT_EQ(tk::find_kernel(tk::Backend::reference, "nope"), nullptr);
}

TEST(KernelCall, RowViewCollapsesLeadingDimsOrSaysItCannot) {
  int dummy = 0;
  // [2, 3, 8] contiguous: 6 rows of 8.
  auto v = tk::row_view(tensor(&dummy, tk::ElemType::f32, {2, 3, 8}, {24, 8, 1}));
  ASSERT_TRUE(v);
  EXPECT_EQ(v->rows, 6);
  EXPECT_EQ(v->cols, 8);
  EXPECT_EQ(v->row_stride, 8);
  // Rows padded to 16, a size-1 dim with any stride: still one stride.
  v = tk::row_view(tensor(&dummy, tk::ElemType::f32, {1, 4, 8}, {999, 16, 1}));
  ASSERT_TRUE(v);
  EXPECT_EQ(v->rows, 4);
  EXPECT_EQ(v->row_stride, 16);
  // A permuted view [3, 2, 8] of a [2, 3, 8] tensor: no single row stride.
  EXPECT_FALSE(tk::row_view(tensor(&dummy, tk::ElemType::f32, {3, 2, 8}, {8, 24, 1})));
  // One dim: one row.
  v = tk::row_view(tensor(&dummy, tk::ElemType::f32, {8}, {1}));
  ASSERT_TRUE(v);
  EXPECT_EQ(v->rows, 1);
  EXPECT_EQ(v->row_stride, 8);
}

TEST(KernelCall, RmsNormRunsThroughTheRegistryOnItsReference) {
  // x [2, 4] bf16 rows of 1, 2, 3, 4 (the second row scaled by 2), weight of ones.
  std::vector<std::uint16_t> x(8), w(4), y(8);
  for (int i = 0; i < 4; ++i) {
    tk::store_element(x.data(), tk::DType::bf16, i, i + 1.0);
    tk::store_element(x.data(), tk::DType::bf16, i + 4, 2.0 * (i + 1));
    tk::store_element(w.data(), tk::DType::bf16, i, 1.0);
  }
  const tk::TensorArg ins[] = {tensor(x.data(), tk::ElemType::bf16, {2, 4}, {4, 1}),
                               tensor(w.data(), tk::ElemType::bf16, {4}, {1})};
  const tk::TensorArg outs[] = {tensor(y.data(), tk::ElemType::bf16, {2, 4}, {4, 1})};
  const tk::ParamArg params[] = {real(1e-6)};
  const auto* k = tk::find_kernel(tk::Backend::reference, "rms_norm");
  ASSERT_NE(k, nullptr);
  ASSERT_EQ(k->run({ins, outs, params, -1}, nullptr), cudaSuccess);
  // rms(1, 2, 3, 4) = sqrt(7.5): both rows normalize to the same values.
  for (int i = 0; i < 4; ++i) {
    const double want = (i + 1) / std::sqrt(7.5);
    EXPECT_NEAR(tk::load_element(y.data(), tk::DType::bf16, i), want, 1e-2) << i;
    EXPECT_NEAR(tk::load_element(y.data(), tk::DType::bf16, i + 4), want, 1e-2) << i;
  }
  // Calls the adapter cannot express: a missing input, an int64 x, an uncollapsible x.
  EXPECT_EQ(k->run({std::span(ins, 1), outs, params, -1}, nullptr), cudaErrorInvalidValue);
  const tk::TensorArg int_x[] = {tensor(x.data(), tk::ElemType::i64, {2, 4}, {4, 1}), ins[1]};
  EXPECT_EQ(k->run({int_x, outs, params, -1}, nullptr), cudaErrorInvalidValue);
  const tk::TensorArg permuted[] = {tensor(x.data(), tk::ElemType::bf16, {2, 2, 2}, {2, 4, 1}),
                                    ins[1]};
  EXPECT_EQ(k->run({permuted, outs, params, -1}, nullptr), cudaErrorInvalidValue);
}
