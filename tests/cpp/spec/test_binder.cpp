// Accept/reject matrix for the binder on the project's own specs, with the exact messages a user
// sees on a bad call.
#include <gtest/gtest.h>

#include "ts/spec/binder.hpp"

namespace {

using namespace ts::spec;

const Manifest& project() {
  static const Manifest m = [] {
    auto r = load_manifest(std::filesystem::path(TS_SOURCE_DIR) / "specs");
    if (!r) throw std::runtime_error(r.error().message);
    return *r;
  }();
  return m;
}

const OpSpec& op(const char* name) {
  const OpSpec* o = project().find(name);
  if (!o) throw std::runtime_error(name);
  return *o;
}

struct T {
  DType dtype;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides = {};
  bool present = true;
  std::uintptr_t address = 0;
};

ts::Expected<BoundCall> call(const char* name, const std::vector<T>& ts,
                             std::vector<ParamValue> ps = {}) {
  std::vector<TensorArg> args;
  for (const auto& t : ts) args.push_back({t.dtype, t.shape, t.strides, t.present, t.address});
  return bind_call(op(name), args, ps);
}

std::string error_of(const ts::Expected<BoundCall>& r) {
  return r ? "<bound>" : r.error().message;
}

constexpr auto bf16 = DType::bfloat16;
constexpr auto f16 = DType::float16;
constexpr auto f32 = DType::float32;

TEST(Binder, GemmDefaultIsNT) {
  auto r = call("GEMMFwdOp", {{bf16, {128, 64}}, {bf16, {256, 64}}});
  ASSERT_TRUE(r) << error_of(r);
  EXPECT_EQ(r->outputs[0].shape, (std::vector<int64_t>{128, 256}));
  EXPECT_EQ(r->outputs[0].dtype, bf16);
  EXPECT_EQ(*dim_value(op("GEMMFwdOp"), *r, "K"), 64);
}

TEST(Binder, GemmAllFourLayouts) {
  // logical M=8, N=16, K=32
  struct Case {
    bool ta, tb;
    std::vector<int64_t> a, b;
  };
  for (const auto& c :
       {Case{false, false, {8, 32}, {32, 16}}, Case{false, true, {8, 32}, {16, 32}},
        Case{true, false, {32, 8}, {32, 16}}, Case{true, true, {32, 8}, {16, 32}}}) {
    auto r = call("GEMMFwdOp", {{f16, c.a}, {f16, c.b}}, {c.ta, c.tb});
    ASSERT_TRUE(r) << c.ta << c.tb << ": " << error_of(r);
    EXPECT_EQ(r->outputs[0].shape, (std::vector<int64_t>{8, 16}));
  }
}

TEST(Binder, GemmRejectsWithPreciseMessages) {
  EXPECT_EQ(error_of(call("GEMMFwdOp", {{bf16, {1024, 512}}, {bf16, {1024, 256}}})),
            "GEMMFwdOp: b: expected shape [N, K] = [?, 512] (K bound by a), got [1024, 256]");
  EXPECT_EQ(error_of(call("GEMMFwdOp", {{bf16, {1024, 512}}, {bf16, {256, 1024}}}, {false, false})),
            "GEMMFwdOp: b: expected shape [K, N] = [512, ?] (K bound by a), got [256, 1024]");
  EXPECT_EQ(error_of(call("GEMMFwdOp", {{bf16, {4, 8}}, {f16, {8, 8}}})),
            "GEMMFwdOp: b: expected dtype T = bfloat16 (T bound by a), got float16");
  EXPECT_EQ(error_of(call("GEMMFwdOp", {{f32, {4, 8}}, {f32, {8, 8}}})),
            "GEMMFwdOp: a: dtype float32 is not allowed for T (allowed: float16, bfloat16)");
  EXPECT_EQ(error_of(call("GEMMFwdOp", {{bf16, {4, 8, 2}}, {bf16, {8, 8}}})),
            "GEMMFwdOp: a: expected shape [M, K], got [4, 8, 2]: rank 3 where 2 expected");
  EXPECT_EQ(error_of(call("GEMMFwdOp", {{bf16, {4, 8}}})),
            "GEMMFwdOp: expected 2 inputs (a, b), got 1");
  EXPECT_EQ(error_of(call("GEMMFwdOp", {{bf16, {4, 8}}, {bf16, {8, 8}}}, {int64_t{1}})),
            "GEMMFwdOp: param 'trans_a': expected a bool, got 1");
  // a transposed view is fine for `rows` layout only when the last dim is contiguous
  EXPECT_EQ(error_of(call("GEMMFwdOp", {{bf16, {4, 8}, {1, 4}}, {bf16, {8, 8}}})),
            "GEMMFwdOp: a: must be contiguous in its last dim (strides [1, 4] for shape [4, 8])");
  EXPECT_TRUE(call("GEMMFwdOp", {{bf16, {4, 8}, {16, 1}}, {bf16, {8, 8}}}));  // row-strided
}

TEST(Binder, VariadicBatchDims) {
  auto r = call("RMSNormFwdOp", {{bf16, {2, 3, 4096}}, {bf16, {4096}}});
  ASSERT_TRUE(r) << error_of(r);
  EXPECT_EQ(r->outputs[0].shape, (std::vector<int64_t>{2, 3, 4096}));
  EXPECT_EQ(r->dim_lists[0], (std::vector<int64_t>{2, 3}));
  EXPECT_TRUE(call("RMSNormFwdOp", {{bf16, {4096}}, {bf16, {4096}}}));  // no batch dims
  EXPECT_EQ(error_of(call("RMSNormFwdOp", {{bf16, {2, 4096}}, {bf16, {4095}}})),
            "RMSNormFwdOp: weight: expected shape [N] = [4096] (N bound by x), got [4095]");
  EXPECT_EQ(error_of(call("RMSNormFwdOp", {{bf16, {}}, {bf16, {4}}})),
            "RMSNormFwdOp: x: expected shape [*B, N], got []: rank 0 where at least 1 expected");
  EXPECT_EQ(error_of(call("RMSNormFwdOp", {{bf16, {2, 4}}, {bf16, {4}}}, {-1.0})),
            "RMSNormFwdOp: constraint 'eps > 0.0' does not hold (eps = -1): eps must be positive");
  EXPECT_EQ(error_of(call("RMSNormFwdOp", {{bf16, {2, 0}}, {bf16, {0}}})),
            "RMSNormFwdOp: constraint 'N >= 1' does not hold (N = 0): the normalized dimension "
            "cannot be empty");
  // an int for a float param is widened
  EXPECT_TRUE(call("RMSNormFwdOp", {{bf16, {2, 4}}, {bf16, {4}}}, {int64_t{1}}));
}

TEST(Binder, SolvesAffineDims) {
  auto r = call("SiluAndMulFwdOp", {{bf16, {16, 28672}}});
  ASSERT_TRUE(r) << error_of(r);
  EXPECT_EQ(r->outputs[0].shape, (std::vector<int64_t>{16, 14336}));
  EXPECT_EQ(error_of(call("SiluAndMulFwdOp", {{bf16, {16, 7}}})),
            "SiluAndMulFwdOp: x: expected shape [*B, 2 * N], got [16, 7]");
}

TEST(Binder, OptionalInputs) {
  EXPECT_TRUE(call("LayerNormFwdOp", {{f32, {8, 64}}, {f32, {64}}, {f32, {64}}}));
  EXPECT_TRUE(call("LayerNormFwdOp", {{f32, {8, 64}}, {f32, {}, {}, false}, {f32, {}, {}, false}}));
  EXPECT_EQ(error_of(call("LayerNormFwdOp", {{f32, {8, 64}}, {f32, {32}}, {f32, {}, {}, false}})),
            "LayerNormFwdOp: weight: expected shape [N] = [64] (N bound by x), got [32]");
  EXPECT_EQ(error_of(call("LayerNormFwdOp", {{f32, {}, {}, false}, {f32, {64}}, {f32, {64}}})),
            "LayerNormFwdOp: x: this input is required");
}

TEST(Binder, MutatedInputsAndFixedDtypes) {
  const std::vector<T> ok = {
      {DType::int64, {16}}, {bf16, {16, 32, 128}}, {bf16, {16, 8, 128}}, {f32, {8192, 128}}};
  auto r = call("RoPENeoXFwdOp", ok);
  ASSERT_TRUE(r) << error_of(r);
  EXPECT_TRUE(r->outputs.empty());
  auto bad = ok;
  bad[0].dtype = DType::int32;
  EXPECT_EQ(error_of(call("RoPENeoXFwdOp", bad)),
            "RoPENeoXFwdOp: positions: expected dtype int64, got int32");
  bad = ok;
  bad[3].shape = {8192, 130};
  EXPECT_EQ(error_of(call("RoPENeoXFwdOp", bad)),
            "RoPENeoXFwdOp: constraint 'R % 2 == 0 and 2 <= R and R <= D' does not hold (R = 130, "
            "D = 128): the rotary dims must be even and fit in a head");
  bad = ok;
  bad[2].shape = {16, 5, 128};
  EXPECT_EQ(error_of(call("RoPENeoXFwdOp", bad)),
            "RoPENeoXFwdOp: constraint 'Hq % Hk == 0' does not hold (Hq = 32, Hk = 5): query "
            "heads must be a multiple of key heads");
}

TEST(Binder, WrittenInputsMayNotShareMemoryOrBroadcast) {
  // q [16, 32, 128] and k [16, 8, 128] bf16, each with its own memory.
  constexpr std::uintptr_t base = 1 << 20;
  const std::vector<T> ok = {{DType::int64, {16}, {}, true, 0x100},
                             {bf16, {16, 32, 128}, {}, true, base},
                             {bf16, {16, 8, 128}, {}, true, base + 16 * 32 * 128 * 2},
                             {f32, {8192, 128}, {}, true, std::uintptr_t{1} << 30}};
  ASSERT_TRUE(call("RoPENeoXFwdOp", ok)) << error_of(call("RoPENeoXFwdOp", ok));
  auto same = ok;  // q and k the same tensor: rotated twice
  same[2] = {bf16, {16, 32, 128}, {}, true, base};
  EXPECT_EQ(error_of(call("RoPENeoXFwdOp", same)),
            "RoPENeoXFwdOp: q is written in place and shares memory with k; pass tensors that do "
            "not overlap");
  auto shifted = ok;  // k starts inside q
  shifted[2].address = base + 128 * 2;
  EXPECT_FALSE(call("RoPENeoXFwdOp", shifted));
  // q and k as slices of one fused qkv [16, 48 * 128] (32 q heads, 8 k heads, 8 v heads): each
  // token's q, k and v sit side by side; the writes never meet.
  const int64_t row = 48 * 128;
  auto fused = ok;
  fused[1] = {bf16, {16, 32, 128}, {row, 128, 1}, true, base};
  fused[2] = {bf16, {16, 8, 128}, {row, 128, 1}, true, base + 32 * 128 * 2};
  EXPECT_TRUE(call("RoPENeoXFwdOp", fused)) << error_of(call("RoPENeoXFwdOp", fused));
  fused[2].address = base + 31 * 128 * 2;  // k's first head is q's last
  EXPECT_FALSE(call("RoPENeoXFwdOp", fused));
  auto expanded = ok;  // q broadcast over tokens
  expanded[1] = {bf16, {16, 32, 128}, {0, 128, 1}, true, base};
  EXPECT_EQ(error_of(call("RoPENeoXFwdOp", expanded)),
            "RoPENeoXFwdOp: q is written in place but dimension 0 (size 16) is broadcast (stride "
            "0); pass a tensor with its own memory (.contiguous())");
  auto unknown = same;  // no addresses given: nothing to compare
  for (auto& t : unknown) t.address = 0;
  EXPECT_TRUE(call("RoPENeoXFwdOp", unknown));
}

TEST(Binder, GivenOutputsHaveTheBoundShapeTheirOwnMemoryAndNoInputs) {
  // RMSNorm x [6, 32] fp32 at base, weight [32]; y given by the caller.
  constexpr std::uintptr_t base = 1 << 20;
  const std::vector<T> in = {{f32, {6, 32}, {}, true, base}, {f32, {32}, {}, true, base + 4096}};
  auto with = [&](std::vector<T> outs) {
    std::vector<TensorArg> args, given;
    for (const auto& t : in) args.push_back({t.dtype, t.shape, t.strides, t.present, t.address});
    for (const auto& t : outs) given.push_back({t.dtype, t.shape, t.strides, t.present, t.address});
    return bind_call(op("RMSNormFwdOp"), args, {}, std::span<const TensorArg>(given));
  };
  const std::uintptr_t apart = std::uintptr_t{1} << 30;
  EXPECT_TRUE(with({{f32, {6, 32}, {}, true, apart}})) << error_of(with({{f32, {6, 32}}}));
  EXPECT_EQ(error_of(with({})), "RMSNormFwdOp: 0 output tensors given, the spec declares 1 (y)");
  EXPECT_EQ(error_of(with({{DType::float64, {6, 32}, {}, true, apart}})),
            "RMSNormFwdOp: output y is float64[6, 32]; the call needs float32[6, 32]");
  EXPECT_EQ(error_of(with({{f32, {6, 32}, {0, 1}, true, apart}})),
            "RMSNormFwdOp: output y has overlapping elements (a broadcast or self-overlapping "
            "view); pass a tensor with its own memory");
  EXPECT_FALSE(with({{f32, {6, 32}, {16, 1}, true, apart}}));  // rows overlap by half
  EXPECT_EQ(error_of(with({{f32, {6, 32}, {}, true, base}})),
            "RMSNormFwdOp: output y overlaps input x");
  // An empty output has no layout to check: torch gives [6, 0] the strides [1, 1].
  const std::vector<int64_t> x60 = {6, 0}, y60 = {6, 0}, strides11 = {1, 1};
  const std::vector<TensorArg> empty_x = {{bf16, x60, {}, true, base}};
  const std::vector<TensorArg> empty_y = {{bf16, y60, strides11, true, apart}};
  EXPECT_TRUE(bind_call(op("SiluAndMulFwdOp"), empty_x, {}, std::span<const TensorArg>(empty_y)));
  // Outputs are contiguous unless the spec declares them strided (attention's o).
  EXPECT_EQ(error_of(with({{f32, {6, 32}, {1, 6}, true, apart}})),
            "RMSNormFwdOp: output y: must be contiguous (strides [1, 6] for shape [6, 32])");
  const std::vector<T> qkv = {{bf16, {1, 2, 8, 64}, {}, true, base},
                              {bf16, {1, 2, 8, 64}, {}, true, base + 4096},
                              {bf16, {1, 2, 8, 64}, {}, true, base + 8192}};
  std::vector<TensorArg> args;
  for (const auto& t : qkv) args.push_back({t.dtype, t.shape, t.strides, t.present, t.address});
  const std::vector<int64_t> o_shape = {1, 2, 8, 64}, sbhd = {1024, 64, 128, 1};
  const std::vector<TensorArg> o = {{bf16, o_shape, sbhd, true, apart}};  // SDPA's [B, S, H, D]
  const std::vector<ParamValue> ps = {false, NoneValue{}};
  EXPECT_TRUE(bind_call(op("MultiHeadAttentionFwdOp"), args, ps, std::span<const TensorArg>(o)));
}

TEST(Binder, OptionalParamsAndGroupedHeads) {
  const std::vector<T> q = {
      {bf16, {2, 32, 128, 128}}, {bf16, {2, 8, 256, 128}}, {bf16, {2, 8, 256, 128}}};
  EXPECT_TRUE(call("MultiHeadAttentionFwdOp", q, {true, NoneValue{}}));
  EXPECT_TRUE(call("MultiHeadAttentionFwdOp", q, {true, 0.125}));
  EXPECT_EQ(error_of(call("MultiHeadAttentionFwdOp", q, {true, -1.0})),
            "MultiHeadAttentionFwdOp: constraint 'not present(scale) or scale > 0.0' does not "
            "hold (scale = -1): scale must be positive");
  EXPECT_EQ(error_of(call("MultiHeadAttentionFwdOp", q, {std::string("yes")})),
            "MultiHeadAttentionFwdOp: param 'is_causal': expected a bool, got \"yes\"");
  auto k5 = q;
  k5[1].shape = {2, 5, 256, 128};
  k5[2].shape = {2, 5, 256, 128};
  EXPECT_FALSE(call("MultiHeadAttentionFwdOp", k5));
  auto d96 = q;
  for (auto& t : d96) t.shape[3] = 96;
  EXPECT_EQ(error_of(call("MultiHeadAttentionFwdOp", d96)),
            "MultiHeadAttentionFwdOp: constraint 'D == 64 or D == 128 or D == 256' does not hold "
            "(D = 96): head dims 64, 128 and 256 are supported");
}

TEST(Roofline, ExactCounts) {
  auto g = call("GEMMFwdOp", {{bf16, {4096, 4096}}, {bf16, {4096, 4096}}});
  auto c = roofline_counts(op("GEMMFwdOp"), *g);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->flops, 2LL * 4096 * 4096 * 4096);
  EXPECT_EQ(c->bytes, 3LL * 4096 * 4096 * 2);  // compulsory: a, b read; d written
  EXPECT_TRUE(c->tensor_cores);
  EXPECT_EQ(c->compute_dtype, bf16);

  auto rope =
      call("RoPENeoXFwdOp",
           {{DType::int64, {10}}, {f16, {10, 4, 64}}, {f16, {10, 2, 64}}, {f32, {100, 32}}});
  c = roofline_counts(op("RoPENeoXFwdOp"), *rope);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->flops, 3 * 10 * 6 * 32);
  EXPECT_EQ(c->bytes, 2 * 10 * 6 * 32 * 2 + 10 * 8 + 10 * 32 * 4);  // rotary slice only (R = 32)

  auto mha =
      call("MultiHeadAttentionFwdOp",
           {{bf16, {1, 4, 64, 128}}, {bf16, {1, 2, 64, 128}}, {bf16, {1, 2, 64, 128}}}, {true});
  c = roofline_counts(op("MultiHeadAttentionFwdOp"), *mha);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->flops, 4 * 4 * 64 * 64 * 128 / 2);
  EXPECT_EQ(c->bytes, (4 * 64 * 128 + 2 * 2 * 64 * 128 + 4 * 64 * 128) * 2);

  // LayerNorm without affine params reads only x.
  auto ln = call("LayerNormFwdOp", {{f32, {8, 64}}, {f32, {}, {}, false}, {f32, {}, {}, false}});
  c = roofline_counts(op("LayerNormFwdOp"), *ln);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->bytes, 2 * 8 * 64 * 4);
  EXPECT_EQ(c->flops, 8 * 8 * 64);
}

TEST(Roofline, OverflowIsAnError) {
  auto m = load_manifest_text(R"(
Big:
  ref_api: none
  family: big
  status: spec-only
  signature:
    forall: {N: Dim, T: "DType[float32]"}
    inputs: {x: {dtype: T, shape: "[N]"}}
    outputs: {y: {dtype: T, shape: "[N]"}}
  workloads: [{N: 4, label: small}]
  roofline: {flops: "N * 4611686018427387904"}
)",
                              "big.yaml");
  ASSERT_TRUE(m) << m.error().message;
  auto calls = workload_calls(m->ops()[0]);
  ASSERT_TRUE(calls);
  auto c = roofline_counts(m->ops()[0], (*calls)[0].bound);
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().code, ts::Errc::overflow);
  EXPECT_EQ(c.error().message, "Big: roofline.flops: int64 overflow at 'N * 4611686018427387904'");
}

TEST(Manifest, ProjectSpecsLoadAndBindEveryWorkload) {
  size_t cases = 0;
  for (const auto& o : project().ops()) {
    auto calls = workload_calls(o);
    ASSERT_TRUE(calls) << calls.error().message;
    for (const auto& c : *calls)
      ASSERT_TRUE(roofline_counts(o, c.bound)) << o.name() << " " << c.label;
    cases += calls->size();
  }
  EXPECT_GE(project().ops().size(), 7u);  // the first op set, and whatever grew since
  EXPECT_GT(cases, 40u);
}

using Dims = std::vector<std::pair<std::string, int64_t>>;
using DimLists = std::vector<std::pair<std::string, std::vector<int64_t>>>;
using DTypes = std::vector<std::pair<std::string, DType>>;
using Params = std::vector<std::pair<std::string, ParamValue>>;

ts::Expected<WorkloadCall> instantiate(const char* name, Dims dims, DimLists lists, DTypes dtypes,
                                       Params params = {}, std::vector<std::string> absent = {}) {
  CallValues v;
  v.dims = std::move(dims);
  v.dim_lists = std::move(lists);
  v.dtypes = std::move(dtypes);
  v.params = std::move(params);
  v.absent = std::move(absent);
  return instantiate_call(op(name), v);
}

TEST(Instantiate, InputsFromVariableValues) {
  // GEMM with trans_b = false: b is stored [K, N].
  auto g = instantiate("GEMMFwdOp", {{"M", 3}, {"N", 5}, {"K", 7}}, {}, {{"T", DType::bfloat16}},
                       {{"trans_b", false}});
  ASSERT_TRUE(g) << g.error().message;
  EXPECT_EQ(g->input_shapes, (std::vector<std::vector<int64_t>>{{3, 7}, {7, 5}}));
  EXPECT_EQ(g->bound.outputs[0].shape, (std::vector<int64_t>{3, 5}));
  // Dims lists and absent optional inputs.
  auto ln =
      instantiate("LayerNormFwdOp", {}, {{"B", {2, 3}}}, {{"T", DType::float16}}, {}, {"bias"});
  ASSERT_FALSE(ln);  // N is not given
  EXPECT_EQ(ln.error().message, "LayerNormFwdOp: values (B=[2, 3]): input x: N is not given");
  ln = instantiate("LayerNormFwdOp", {{"N", 9}}, {{"B", {2, 3}}}, {{"T", DType::float16}}, {},
                   {"bias"});
  ASSERT_TRUE(ln) << ln.error().message;
  EXPECT_EQ(ln->input_shapes, (std::vector<std::vector<int64_t>>{{2, 3, 9}, {9}, {}}));
  EXPECT_EQ(ln->input_present, (std::vector<uint8_t>{1, 1, 0}));
}

TEST(Instantiate, ViolationsCarryTheBindersMessage) {
  auto a = instantiate("MultiHeadAttentionFwdOp",
                       {{"B", 1}, {"Hq", 2}, {"Hkv", 1}, {"Sq", 4}, {"Skv", 4}, {"D", 96}}, {},
                       {{"T", DType::float16}});
  ASSERT_FALSE(a);
  EXPECT_EQ(a.error().code, ts::Errc::bind);
  EXPECT_NE(a.error().message.find("head dims 64, 128 and 256 are supported"), std::string::npos)
      << a.error().message;
  auto unknown = instantiate("SoftmaxFwdOp", {{"M", 3}}, {}, {});
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().message, "SoftmaxFwdOp: no Dim variable 'M' (Dim: N)");
  auto no_dtype = instantiate("SoftmaxFwdOp", {{"N", 3}}, {{"B", {2}}}, {});
  ASSERT_FALSE(no_dtype);
  EXPECT_EQ(no_dtype.error().message, "SoftmaxFwdOp: DType variable 'T' is not given");
  auto not_optional =
      instantiate("SoftmaxFwdOp", {{"N", 3}}, {{"B", {2}}}, {{"T", DType::float32}}, {}, {"x"});
  ASSERT_FALSE(not_optional);
  EXPECT_EQ(not_optional.error().message, "SoftmaxFwdOp: 'x' is not an optional input");
}

}  // namespace
