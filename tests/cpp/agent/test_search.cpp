// The built-in search agent: its rewrites on real Inductor 2.11 CUDA wrappers (data/), its
// transport, and the agent loop it drives with the shared budget.
#include "ts/agent/search.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "test_util.hpp"
#include "ts/agent/agent.hpp"

namespace {

using namespace ts::agent;
using namespace ts::agent::testing;
using json = nlohmann::json;

std::string fixture(const std::string& name) {
  return read_text(std::filesystem::path(TS_SOURCE_DIR) / "tests/data/inductor_cuda" / name);
}

const std::string kMlp = "mlp_bf16.0.inference.py";
const std::string kAttn = "attn_bf16.0.inference.py";
const std::string kTrainFwd = "gated_mlp_train_bf16.0.forward.py";
const std::string kTrainBwd = "gated_mlp_train_bf16.1.backward.py";
const std::string kLossBwd = "loss_train_bf16.1.backward.py";
const std::string kTiny = "tiny_fp32.0.inference.py";

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t p = 0; (p = text.find(what, p)) != std::string::npos; p += what.size()) ++n;
  return n;
}

// ---- provider -----------------------------------------------------------------------------------

TEST(SearchProvider, ResolvesWithoutCredentialsAndNeedsNoNetwork) {
  auto p = resolve_provider(std::string(kSearchModel), EnvMap{});
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->route, RouteKind::search);
  EXPECT_EQ(p->model, "tilesmith-search");
  EXPECT_TRUE(p->api_key.empty());
  EXPECT_TRUE(p->base_url.empty());
  EXPECT_EQ(p->describe(), "search model=tilesmith-search (built in, no network)");
  // TILESMITH_MODEL names it too; a key in the environment does not change the route.
  auto q = resolve_provider(
      std::nullopt, EnvMap{{"TILESMITH_MODEL", "tilesmith-search"}, {"OPENAI_API_KEY", kFakeKey}});
  ASSERT_TRUE(q);
  EXPECT_EQ(q->route, RouteKind::search);
  EXPECT_TRUE(q->api_key.empty());
  auto route = open_route(*q);
  ASSERT_TRUE(route);
  EXPECT_FALSE((*route)->child_pid());
  auto search = make_model(*q, {}, Agency::medium);
  EXPECT_EQ(dynamic_cast<ChatClient*>(search.get()), nullptr);
  EXPECT_EQ(search->provider().route, RouteKind::search);
  Provider http;
  http.route = RouteKind::openai;
  EXPECT_NE(dynamic_cast<ChatClient*>(make_model(http, {}, Agency::medium).get()), nullptr);
}

// ---- rewrites -----------------------------------------------------------------------------------

TEST(SearchRewrite, AnalyzesRealWrappers) {
  auto mlp = analyze_wrapper(fixture(kMlp));
  ASSERT_TRUE(mlp) << mlp.error().message;
  EXPECT_TRUE(mlp->is_method);
  EXPECT_EQ(mlp->inputs,
            (std::vector<std::string>{"arg0_1", "arg1_1", "arg2_1", "arg3_1", "arg4_1"}));
  EXPECT_EQ(mlp->outputs, 1u);
  EXPECT_EQ(mlp->kernels, (std::vector<std::string>{"triton_poi_fused_gelu_0"}));
  EXPECT_TRUE(mlp->written_inputs.empty());
  EXPECT_EQ(mlp->cuda_graph_blocker, "");

  auto fwd = analyze_wrapper(fixture(kTrainFwd));
  ASSERT_TRUE(fwd);
  EXPECT_EQ(fwd->outputs, 11u);
  EXPECT_TRUE(fwd->written_inputs.empty());

  // The backward reuses the donated saved tensor `mm` (input 3) as a buffer: `buf1 = mm; del mm`.
  auto loss = analyze_wrapper(fixture(kLossBwd));
  ASSERT_TRUE(loss);
  EXPECT_EQ(loss->written_inputs, (std::vector<int>{3}));
  EXPECT_EQ(loss->outputs, 3u);
  // ...and gated_mlp's backward reuses mm_1 (input 8) through reinterpret_tensor.
  auto bwd = analyze_wrapper(fixture(kTrainBwd));
  ASSERT_TRUE(bwd);
  EXPECT_EQ(bwd->written_inputs, (std::vector<int>{8}));

  EXPECT_FALSE(analyze_wrapper("import torch\n"));
}

TEST(SearchRewrite, CudaGraphKeepsTheAbiAndTheOriginalAsFallback) {
  for (const auto& name : {kMlp, kAttn, kTrainFwd, kTrainBwd, kLossBwd, kTiny}) {
    SCOPED_TRACE(name);
    const std::string original = fixture(name);
    auto cand = rewrite_cuda_graph(original);
    ASSERT_TRUE(cand) << cand.error().message;
    EXPECT_TRUE(check_wrapper_abi(original, *cand))
        << check_wrapper_abi(original, *cand).error().message;
    EXPECT_FALSE(check_wrapper_structure(original, *cand));  // not a "low" rewrite
    EXPECT_EQ(count(*cand, "def call(self, args):"), 1u);
    EXPECT_EQ(count(*cand, "def _ts_call_eager(self, args):"), 1u);
    EXPECT_EQ(count(*cand, "class _TsGraphedCall:"), 1u);
    EXPECT_NE(cand->find("_ts_out = _ts_graphed_call(self._ts_call_eager, _ts_args)"),
              std::string::npos);
    // The original body survives verbatim inside the eager path; the kernels are untouched.
    auto facts = analyze_wrapper(original);
    size_t body = original.find("        with torch.cuda._DeviceGuard(0):");
    size_t end = original.find("runner = Runner(partitions=[])");
    ASSERT_NE(body, std::string::npos);
    EXPECT_NE(cand->find(original.substr(body, end - body)), std::string::npos);
    // The input checks run in the new entry point before the dispatch, exactly as before.
    size_t asserts = cand->find("def call(self, args):");
    size_t dispatch = cand->find("_ts_graphed_call(self._ts_call_eager");
    EXPECT_EQ(count(cand->substr(asserts, dispatch - asserts), "assert_size_stride("),
              facts->inputs.size());
    // Applying it twice is refused.
    auto twice = rewrite_cuda_graph(*cand);
    ASSERT_FALSE(twice);
    EXPECT_NE(twice.error().message.find("already"), std::string::npos);
  }
  auto loss = rewrite_cuda_graph(fixture(kLossBwd));
  ASSERT_TRUE(loss);
  EXPECT_NE(loss->find("_ts_graphed_call = _TsGraphedCall(written_inputs=(3, ))"),
            std::string::npos);
}

TEST(SearchRewrite, DirectLaunchCallsTheLaunchersOnceSettledAndKeepsTheOriginal) {
  for (const auto& name : {kMlp, kAttn, kTrainFwd, kTrainBwd, kLossBwd, kTiny}) {
    SCOPED_TRACE(name);
    const std::string original = fixture(name);
    auto cand = rewrite_direct_launch(original);
    ASSERT_TRUE(cand) << cand.error().message;
    EXPECT_TRUE(check_wrapper_abi(original, *cand))
        << check_wrapper_abi(original, *cand).error().message;
    EXPECT_FALSE(check_candidate(Agency::low, original, *cand));  // it changes call()
    EXPECT_EQ(count(*cand, "# ---- tilesmith-search: direct Triton launches"), 1u);
    EXPECT_EQ(count(*cand, "def call(self, args):"), 1u);
    EXPECT_EQ(count(*cand, "def _ts_call_run(self, args):"), 1u);
    // The original body survives verbatim as the first-call path; the kernels are untouched.
    size_t body = original.find("        with torch.cuda._DeviceGuard(0):");
    size_t end = original.find("runner = Runner(partitions=[])");
    ASSERT_NE(body, std::string::npos);
    std::string verbatim = original.substr(body, end - body);
    size_t run_def = cand->find("def _ts_call_run(self, args):");
    EXPECT_NE(cand->find(verbatim, run_def), std::string::npos);
    // The new call(): every launch of the original goes through a launcher, and only there.
    std::string direct = cand->substr(cand->find("def call(self, args):"));
    direct = direct.substr(0, direct.find("def _ts_call_run("));
    EXPECT_NE(direct.find("_ts_out = self._ts_call_run(args)"), std::string::npos);
    EXPECT_EQ(count(direct, ".run("), 0u);
    size_t launches = 0;
    for (size_t k = 0; k < 64; ++k) launches += count(direct, fmt::format("_ts_launch_{}(", k));
    EXPECT_EQ(launches, count(verbatim, ".run("));
    EXPECT_GT(launches, 0u);
    // Applying it twice is refused: the new call() launches nothing through run().
    EXPECT_FALSE(rewrite_direct_launch(*cand));
  }
  // A call() that launches no Triton kernel itself (library calls only): nothing to do.
  auto none = rewrite_direct_launch(
      "def call(args):\n"
      "    arg0_1, = args\n"
      "    args.clear()\n"
      "    buf0 = empty_strided_cuda((4, 4), (4, 1), torch.float32)\n"
      "    extern_kernels.mm(arg0_1, arg0_1, out=buf0)\n"
      "    return (buf0, )\n");
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("launches no Triton kernel"), std::string::npos);
  // With wider autotuning on top: both banners, the ABI kept.
  auto both = apply_rewrites(fixture(kMlp), {RewriteKind::direct_launch, RewriteKind::autotune});
  ASSERT_TRUE(both) << both.error().message;
  EXPECT_EQ(count(*both, "# ---- tilesmith-search: direct Triton launches"), 1u);
  EXPECT_GT(count(*both, "# ---- tilesmith-search: wider autotuning"), 0u);
  EXPECT_TRUE(check_wrapper_abi(fixture(kMlp), *both));
}

TEST(SearchRewrite, CudaGraphRefusesRandomnessSyncsAndCpuTensors) {
  const std::string original = fixture(kMlp);
  const std::string anchor = "            buf0 = empty_strided_cuda(";
  ASSERT_NE(original.find(anchor), std::string::npos);
  auto with_line = [&](const std::string& line) {
    std::string t = original;
    t.insert(t.find(anchor), "            " + line + "\n");
    return t;
  };
  struct Case {
    std::string line, why;
  };
  for (const auto& c : std::vector<Case>{
           {"buf9 = empty_strided_cuda((1, ), (1, ), torch.int64)\n            "
            "aten.randint.low_out(-9223372036854775808, 9223372036854775807, [1], out=buf9)",
            "random"},
           {"u0 = arg1_1.sum().item()", "host"},
           {"buf9 = empty_strided_cpu((1, ), (1, ), torch.float32)", "CPU"},
           {"torch.cuda.synchronize()", "synchron"}}) {
    SCOPED_TRACE(c.line);
    auto r = rewrite_cuda_graph(with_line(c.line));
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, ts::Errc::rejected);
    EXPECT_NE(r.error().message.find(c.why), std::string::npos) << r.error().message;
  }
  // A kernel drawing random numbers (seeded by the wrapper) is refused too.
  std::string rng = original;
  rng.replace(rng.find("    tmp1 = tmp0.to(tl.float32)"), 0, "    tmp99 = tl.rand(0, x0)\n");
  EXPECT_FALSE(rewrite_cuda_graph(rng));
}

TEST(SearchRewrite, AutotuneTouchesOnlyKernelSourcesAndPassesAgencyLow) {
  for (const auto& name : {kMlp, kAttn, kTrainFwd, kTrainBwd, kLossBwd, kTiny}) {
    SCOPED_TRACE(name);
    const std::string original = fixture(name);
    auto cand = rewrite_autotune(original, 0);
    ASSERT_TRUE(cand) << cand.error().message;
    EXPECT_TRUE(check_candidate(Agency::low, original, *cand))
        << check_candidate(Agency::low, original, *cand).error().message;
    auto facts = analyze_wrapper(original);
    EXPECT_EQ(count(*cand, "@_ts_widened(triton_heuristics."), facts->kernels.size());
    EXPECT_EQ(count(*cand, "def _ts_widened("), facts->kernels.size());
    EXPECT_EQ(count(*cand, "@triton_heuristics."), 0u);
    EXPECT_FALSE(rewrite_autotune(*cand, 0));  // nothing left to widen
  }
  // The facts the helper needs come from the kernel text: mlp's gelu is unmasked, 22544384 long.
  auto mlp = rewrite_autotune(fixture(kMlp), 0);
  EXPECT_NE(mlp->find("@_ts_widened(triton_heuristics.pointwise, 'POINTWISE', x_numel=22544384, "
                      "x_masked=False, r_numel=None, r_looped=False, seed=0)("),
            std::string::npos);
  // The seed changes only the variant order: same seed, same text.
  EXPECT_EQ(*rewrite_autotune(fixture(kMlp), 3), *rewrite_autotune(fixture(kMlp), 3));
  EXPECT_NE(*rewrite_autotune(fixture(kMlp), 3), *rewrite_autotune(fixture(kMlp), 4));
}

// The mlp wrapper with its (exact, erf) GELU kernel's computation replaced by `chain`: the
// lines Inductor 2.11 writes for ReLU and for tanh-GELU on a bf16 buffer.
std::string mlp_with_activation(const std::string& chain) {
  std::string text = fixture(kMlp);
  const std::string from = "    tmp0 = tl.load(in_out_ptr0 + (x0), None).to(tl.float32)\n";
  const std::string to = "    tl.store(in_out_ptr0 + (x0), tmp10, None)\n";
  auto b = text.find(from), e = text.find(to);
  EXPECT_NE(b, std::string::npos);
  EXPECT_NE(e, std::string::npos);
  return text.replace(b, e + to.size() - b, chain);
}

const std::string kReluChain =
    "    tmp0 = tl.load(in_out_ptr0 + (x0), None).to(tl.float32)\n"
    "    tmp1 = tl.full([1], 0, tl.int32)\n"
    "    tmp2 = triton_helpers.maximum(tmp1, tmp0)\n"
    "    tl.store(in_out_ptr0 + (x0), tmp2, None)\n";
const std::string kGeluTanhChain =
    "    tmp0 = tl.load(in_out_ptr0 + (x0), None).to(tl.float32)\n"
    "    tmp1 = tmp0.to(tl.float32)\n"
    "    tmp2 = tl.full([1], 0.5, tl.float32)\n"
    "    tmp3 = tmp1 * tmp2\n"
    "    tmp4 = tmp1 * tmp1\n"
    "    tmp5 = tmp4 * tmp1\n"
    "    tmp6 = tl.full([1], 0.044715, tl.float32)\n"
    "    tmp7 = tmp5 * tmp6\n"
    "    tmp8 = tmp1 + tmp7\n"
    "    tmp9 = tl.full([1], 0.7978845608028654, tl.float32)\n"
    "    tmp10 = tmp8 * tmp9\n"
    "    tmp11 = libdevice.tanh(tmp10)\n"
    "    tmp12 = tl.full([1], 1.0, tl.float32)\n"
    "    tmp13 = tmp11 + tmp12\n"
    "    tmp14 = tmp3 * tmp13\n"
    "    tmp15 = tmp14.to(tl.float32)\n"
    "    tl.store(in_out_ptr0 + (x0), tmp15, None)\n";

TEST(SearchRewrite, EpilogueFusesReluAndTanhGeluIntoTheAddmm) {
  for (auto [chain, gelu] : {std::pair{kReluChain, false}, std::pair{kGeluTanhChain, true}}) {
    SCOPED_TRACE(gelu ? "tanh-GELU" : "ReLU");
    const std::string original = mlp_with_activation(chain);
    auto cand = rewrite_epilogue(original);
    ASSERT_TRUE(cand) << cand.error().message;
    EXPECT_NE(cand->find(fmt::format(
                  "torch.ops.aten._addmm_activation.out(arg1_1, arg2_1, reinterpret_tensor(arg0_1, "
                  "(4096, 11008), (1, 4096), 0), beta=1, alpha=1, use_gelu={}, out=buf0)",
                  gelu ? "True" : "False")),
              std::string::npos);
    EXPECT_EQ(count(*cand, "triton_poi_fused_gelu_0.run("), 0u);  // its launch is gone
    EXPECT_EQ(count(*cand, "# ---- tilesmith-search: epilogue fusion"), 1u);
    // The second addmm feeds no activation; it stays as it was.
    EXPECT_EQ(count(*cand, "extern_kernels.addmm(arg4_1, buf1"), 1u);
    EXPECT_TRUE(check_wrapper_abi(original, *cand));
    EXPECT_FALSE(check_candidate(Agency::low, original, *cand));  // it changes call()
    EXPECT_FALSE(rewrite_epilogue(*cand));                        // nothing left to fuse
    // Under a CUDA graph: the fused call is captured like any other library call.
    auto both = apply_rewrites(original, {RewriteKind::epilogue, RewriteKind::cuda_graph});
    ASSERT_TRUE(both) << both.error().message;
    EXPECT_EQ(count(*both, "_addmm_activation.out("), 1u);
    EXPECT_GT(both->find("_addmm_activation.out("), both->find("def _ts_call_eager("));
  }
}

TEST(SearchRewrite, EpilogueRefusesExactGeluOtherKernelsAndOtherUses) {
  // The fixture's own GELU is the erf form: cuBLASLt's epilogue would change the numbers.
  auto erf = rewrite_epilogue(fixture(kMlp));
  ASSERT_FALSE(erf);
  EXPECT_NE(erf.error().message.find("exact (erf) GELU"), std::string::npos);
  // A kernel that computes something else on sample points (here x * 0.5): not an activation.
  std::string half = mlp_with_activation(
      "    tmp0 = tl.load(in_out_ptr0 + (x0), None).to(tl.float32)\n"
      "    tmp1 = tl.full([1], 0.5, tl.float32)\n"
      "    tmp2 = tmp0 * tmp1\n"
      "    tl.store(in_out_ptr0 + (x0), tmp2, None)\n");
  EXPECT_FALSE(rewrite_epilogue(half));
  // A form the evaluator does not know (tl.where): refused rather than guessed.
  std::string where = mlp_with_activation(
      "    tmp0 = tl.load(in_out_ptr0 + (x0), None).to(tl.float32)\n"
      "    tmp1 = tl.full([1], 0, tl.int32)\n"
      "    tmp2 = tmp0 > tmp1\n"
      "    tmp3 = tl.where(tmp2, tmp0, tmp1)\n"
      "    tl.store(in_out_ptr0 + (x0), tmp3, None)\n");
  EXPECT_FALSE(rewrite_epilogue(where));
  // The buffer read by something else between the matmul and the activation: left alone.
  std::string relu = mlp_with_activation(kReluChain);
  auto at = relu.find("            buf1 = buf0; del buf0  # reuse\n");
  ASSERT_NE(at, std::string::npos);
  relu.insert(at, "            buf9 = buf0.clone()\n");
  EXPECT_FALSE(rewrite_epilogue(relu));
  // Wrappers with no addmm + activation pair at all.
  for (const auto& name : {kAttn, kTrainFwd, kTrainBwd, kLossBwd, kTiny})
    EXPECT_FALSE(rewrite_epilogue(fixture(name))) << name;
}

TEST(SearchRewrite, TileOpsTakesTheNormsMatrixProductsAndAttentionTheLibraryCovers) {
  // gated MLP: F.rms_norm's kernel (x passed second, eps from the FX fragment) and three mm.
  const std::string mlp = fixture("gated_mlp_bf16.0.inference.py");
  auto cand = rewrite_tileops(mlp);
  ASSERT_TRUE(cand) << cand.error().message;
  EXPECT_NE(cand->find("_ts_tileops.rms_norm(triton_red_fused__fused_rms_norm_0, [arg1_1, arg0_1, "
                       "buf1, 2048, 2048], stream0, ins=(0, 1, ), out=2, rows=2048, n=2048, "
                       "eps=1.1920928955078125e-07)"),
            std::string::npos);
  EXPECT_EQ(count(*cand, "_ts_tileops.mm("), 3u);
  EXPECT_EQ(count(*cand, "extern_kernels.mm(reinterpret_tensor"), 0u);
  // silu(mm) * mm_1 reads two tensors and writes in place: not SiluAndMul's one [*, 2N] input.
  EXPECT_EQ(count(*cand, "triton_poi_fused__unsafe_view_mul_silu_1.run("), 1u);
  EXPECT_EQ(count(*cand, "# ---- tilesmith-search: TileOPs calls"), 1u);
  EXPECT_TRUE(check_wrapper_abi(mlp, *cand));
  EXPECT_FALSE(check_candidate(Agency::low, mlp, *cand));  // it changes call()

  // attention block: LayerNorm's kernel, cuDNN SDPA (only [0] used) laid out as call() asserts.
  const std::string attn = fixture(kAttn);
  auto a = rewrite_tileops(attn);
  ASSERT_TRUE(a) << a.error().message;
  EXPECT_NE(a->find("_ts_tileops.layer_norm(triton_per_fused_native_layer_norm_0, [arg0_1, "
                    "arg1_1, arg2_1, buf3, 2048, 1024], stream0, ins=(0, 1, 2, ), out=3, "
                    "rows=2048, n=1024, eps=1e-05)"),
            std::string::npos);
  EXPECT_NE(a->find("buf5 = _ts_tileops.attention((4, 16, 512, 64), (524288, 64, 1024, 1), "
                    "torch.ops.aten._scaled_dot_product_cudnn_attention.default, "
                    "reinterpret_tensor(buf4,"),
            std::string::npos);
  EXPECT_EQ(count(*a, "extern_kernels.addmm("), 2u);  // TileOPs' GEMM has no bias epilogue
  EXPECT_TRUE(check_wrapper_abi(attn, *a));
  // Under the CUDA graph the helper calls are captured like the launches they replace.
  auto both = apply_rewrites(attn, {RewriteKind::tileops, RewriteKind::cuda_graph});
  ASSERT_TRUE(both) << both.error().message;
  EXPECT_GT(both->find("_ts_tileops.attention("), both->find("def _ts_call_eager("));
}

TEST(SearchRewrite, TileOpsLeavesWhatTheLibraryDoesNotCover) {
  // fp32 matrix products (the GEMM is fp16/bf16) and no covered kernel.
  auto tiny = rewrite_tileops(fixture(kTiny));
  ASSERT_FALSE(tiny);
  EXPECT_EQ(tiny.error().code, ts::Errc::rejected);
  // A training forward keeps SDPA's logsumexp for the backward: attention stays.
  const std::string attn = fixture(kAttn);
  std::string kept = attn;
  auto at = kept.find("        buf6 = buf5[0]");
  ASSERT_NE(at, std::string::npos);
  kept.insert(at, "        buf7 = buf5[1]\n");
  auto cand = rewrite_tileops(kept);
  ASSERT_TRUE(cand) << cand.error().message;  // the LayerNorm still is
  EXPECT_EQ(count(*cand, "_ts_tileops.attention("), 0u);
  // A norm whose kernel also fuses the residual add is not a LayerNorm.
  std::string fused = attn;
  auto origin = fused.find("Original ATen: [aten.native_layer_norm]");
  fused.replace(origin, 39, "Original ATen: [aten.add, aten.native_layer_norm]");
  auto f = rewrite_tileops(fused);
  ASSERT_TRUE(f) << f.error().message;
  EXPECT_EQ(count(*f, "_ts_tileops.layer_norm("), 0u);
}

TEST(SearchRewrite, ComposesInEitherOrder) {
  const std::string original = fixture(kTrainFwd);
  auto a = apply_rewrites(original, {RewriteKind::cuda_graph, RewriteKind::autotune});
  auto b = apply_rewrites(original, {RewriteKind::autotune, RewriteKind::cuda_graph});
  ASSERT_TRUE(a && b);
  EXPECT_EQ(*a, *b);
  EXPECT_TRUE(check_wrapper_abi(original, *a));
}

// ---- the loop
// -------------------------------------------------------------------------------------

// A gate stand-in: `verdict(text)` decides; every evaluation and write is recorded.
class ScriptedGate : public Workspace {
 public:
  using Judge = std::function<EvalReport(const std::string&)>;
  ScriptedGate(std::filesystem::path dir, std::string original, Judge judge)
      : dir_(std::move(dir)), original_(std::move(original)), judge_(std::move(judge)) {}
  std::string original() override { return original_; }
  ts::Expected<void> write_candidate(std::string_view text) override {
    written.emplace_back(text);
    return {};
  }
  ts::Expected<EvalReport> evaluate(std::string_view candidate) override {
    evaluated.emplace_back(candidate);
    return judge_(std::string(candidate));
  }
  ts::Expected<std::vector<KernelTime>> profile(std::string_view) override {
    ++profiles;
    return profile_rows;
  }
  std::filesystem::path track_dir() override { return dir_; }

  std::vector<std::string> written, evaluated;
  std::vector<KernelTime> profile_rows{{"triton_poi_fused_gelu_0", 0.05, 0.05},
                                       {"sm90_xmma_gemm_bf16bf16", 0.45, 0.45}};
  int profiles = 0;

 private:
  std::filesystem::path dir_;
  std::string original_;
  Judge judge_;
};

EvalReport report(bool accepted, double speedup, std::string reason, bool correct = true) {
  EvalReport r;
  r.correctness = {{"normal", correct, correct ? "" : "max abs err 3e-1 > 1e-2"}};
  r.timing = {1.0, 1.0 / speedup, 0.5, 40};
  r.speedup = speedup;
  r.verdict = accepted ? Verdict::accepted : Verdict::rejected;
  r.reason = std::move(reason);
  return r;
}

bool graphed(const std::string& t) {
  return t.find("class _TsGraphedCall") != std::string::npos;
}
bool widened(const std::string& t) {
  return t.find("@_ts_widened(") != std::string::npos;
}
bool direct(const std::string& t) {
  return t.find("# ---- tilesmith-search: direct Triton launches") != std::string::npos;
}

struct Run {
  AgentResult result;
  std::vector<std::string> written, evaluated;
  int profiles = 0;
};

Run run_search(const std::string& original, ScriptedGate::Judge judge, std::optional<int> budget,
               AgentOptions options = {}, std::uint64_t seed = 0,
               std::optional<std::vector<KernelTime>> profile_rows = std::nullopt) {
  TempDir dir;
  ScriptedGate gate(dir.path(), original, std::move(judge));
  if (profile_rows) gate.profile_rows = *profile_rows;
  auto provider = resolve_provider(std::string(kSearchModel), EnvMap{});
  auto model = make_model(*provider, {}, options.agency, seed);
  CallBudget calls(budget);
  Run run{run_agent(*model, gate, calls, options), gate.written, gate.evaluated, gate.profiles};
  EXPECT_EQ(run.result.model_calls, calls.used());
  return run;
}

TEST(SearchLoop, FirstProposalIsTheCudaGraphAndAcceptanceEndsTheLoop) {
  const std::string original = fixture(kTiny);
  auto run = run_search(
      original,
      [](const std::string& t) {
        return graphed(t) ? report(true, 1.6, "accepted: 1.60x, confirmed")
                          : report(false, 0.9, "rejected: slower");
      },
      std::nullopt);
  EXPECT_EQ(run.result.outcome, Outcome::accepted) << run.result.reason;
  ASSERT_EQ(run.result.accepted.size(), 1u);
  EXPECT_TRUE(graphed(run.result.accepted[0].text));
  EXPECT_FALSE(widened(run.result.accepted[0].text));  // tiny kernels: nothing to tune first
  EXPECT_EQ(run.result.model_calls, 2);                // read, then one proposal
  EXPECT_EQ(run.profiles, 0);  // the text decides: nothing large enough to need measuring
  EXPECT_EQ(run.evaluated.size(), 1u);
}

bool fused(const std::string& t) {
  return t.find("_addmm_activation.out(") != std::string::npos;
}

TEST(SearchLoop, TheEpilogueGoesFirstUnderTheGraphAndIsDroppedOnceWrong) {
  const std::string original = mlp_with_activation(kGeluTanhChain);
  // Every fused candidate is judged wrong: the epilogue is then not proposed again.
  auto run = run_search(
      original,
      [](const std::string& t) {
        return fused(t) ? report(false, 1.2, "rejected: incorrect (out[0])", false)
                        : report(false, 0.97, "rejected: marginal (0.97x)");
      },
      std::nullopt);
  ASSERT_GE(run.evaluated.size(), 2u);
  EXPECT_TRUE(fused(run.evaluated[0]) && graphed(run.evaluated[0]));
  for (size_t i = 1; i < run.evaluated.size(); ++i) EXPECT_FALSE(fused(run.evaluated[i])) << i;
  // At agency low the epilogue (it changes call()) is never proposed.
  AgentOptions low;
  low.agency = Agency::low;
  auto lowrun = run_search(
      original, [](const std::string&) { return report(false, 0.97, "rejected: marginal"); },
      std::nullopt, low);
  for (const auto& t : lowrun.evaluated) EXPECT_FALSE(fused(t));
}

TEST(SearchLoop, AWrongTileOpsCandidateUnderTheGraphLeavesTheGraphProposable) {
  const std::string original = fixture(kAttn);
  auto tileops = [](const std::string& t) {
    return t.find("# ---- tilesmith-search: TileOPs calls") != std::string::npos;
  };
  auto run = run_search(
      original,
      [&](const std::string& t) {
        return tileops(t) ? report(false, 0, "rejected: incorrect (normal: out[0] max abs err 56)")
                          : report(false, 0.97, "rejected: marginal (0.97x)");
      },
      std::nullopt);
  ASSERT_GE(run.evaluated.size(), 2u);
  EXPECT_TRUE(tileops(run.evaluated[0]) && graphed(run.evaluated[0]));
  EXPECT_TRUE(graphed(run.evaluated[1]) && !tileops(run.evaluated[1]));
  for (size_t i = 1; i < run.evaluated.size(); ++i) EXPECT_FALSE(tileops(run.evaluated[i])) << i;
}

TEST(SearchLoop, EveryProposalCostsOneCallAndTheSearchEndsWhenNothingIsLeft) {
  const std::string original = fixture(kMlp);
  auto slower = [](const std::string&) {
    return report(false, 0.97, "rejected: marginal (0.97x)");
  };
  auto run = run_search(original, slower, std::nullopt);
  EXPECT_EQ(run.result.outcome, Outcome::failed);
  EXPECT_NE(run.result.reason.find("nothing more to propose"), std::string::npos)
      << run.result.reason;
  // What the user reads in diagnostics(): why the rewrites left were not proposed.
  EXPECT_NE(run.result.reason.find("; not proposed: epilogue: the activation after the matmul is "
                                   "exact (erf) GELU"),
            std::string::npos)
      << run.result.reason;
  // read, profile (an addmm and a 22M-element GELU: which dominates is measured), 6 proposals
  // (graph, graph+autotune, direct launches, autotune, direct+autotune, autotune variant),
  // final, refusal.
  ASSERT_EQ(run.evaluated.size(), 6u);
  EXPECT_EQ(run.result.model_calls, 10);
  EXPECT_EQ(run.profiles, 1);
  EXPECT_EQ(run.result.rejected_candidates, 7);  // 6 proposals + the host's re-check after "done"
  auto is = [&](size_t i, bool g, bool w, bool d) {
    return graphed(run.evaluated[i]) == g && widened(run.evaluated[i]) == w &&
           direct(run.evaluated[i]) == d;
  };
  EXPECT_TRUE(is(0, true, false, false));
  EXPECT_TRUE(is(1, true, true, false));
  EXPECT_TRUE(is(2, false, false, true));
  EXPECT_TRUE(is(3, false, true, false));
  EXPECT_TRUE(is(4, false, true, true));
  EXPECT_TRUE(is(5, false, true, false));
  EXPECT_NE(run.evaluated[3], run.evaluated[5]);
  // All distinct, all keep the ABI.
  for (size_t i = 0; i < run.evaluated.size(); ++i) {
    EXPECT_TRUE(check_wrapper_abi(original, run.evaluated[i]));
    for (size_t j = 0; j < i; ++j) EXPECT_NE(run.evaluated[i], run.evaluated[j]);
  }

  // With a budget of 4 the run stops after two proposals.
  auto limited = run_search(original, slower, 4);
  EXPECT_EQ(limited.result.outcome, Outcome::budget_spent);
  EXPECT_EQ(limited.result.model_calls, 4);
  EXPECT_EQ(limited.evaluated.size(), 2u);
}

TEST(SearchLoop, AnIncorrectRewriteIsNotProposedAgain) {
  const std::string original = fixture(kTrainFwd);
  auto run = run_search(
      original,
      [](const std::string& t) {
        if (graphed(t))
          return report(false, 0, "rejected: incorrect (normal: out[0] max abs err 3e-1)", false);
        return report(true, 1.05, "accepted: 1.05x, confirmed");
      },
      std::nullopt);
  EXPECT_EQ(run.result.outcome, Outcome::accepted) << run.result.reason;
  auto tileops = [](const std::string& t) {
    return t.find("# ---- tilesmith-search: TileOPs calls") != std::string::npos;
  };
  ASSERT_EQ(run.evaluated.size(), 3u);
  // TileOPs calls under the graph, wrong: blamed on the TileOPs calls; then the graph alone,
  // wrong too: no graph+autotune after it.
  EXPECT_TRUE(graphed(run.evaluated[0]) && tileops(run.evaluated[0]));
  EXPECT_TRUE(graphed(run.evaluated[1]) && !tileops(run.evaluated[1]));
  EXPECT_FALSE(graphed(run.evaluated[2]));
  EXPECT_TRUE(direct(run.evaluated[2]));
}

TEST(SearchLoop, AgencyLowProposesOnlyStructurePreservingRewrites) {
  const std::string original = fixture(kAttn);
  AgentOptions options;
  options.agency = Agency::low;
  auto run = run_search(
      original, [](const std::string&) { return report(false, 1.0, "rejected: marginal"); },
      std::nullopt, options);
  ASSERT_EQ(run.evaluated.size(), 2u);
  for (const auto& t : run.written) {
    EXPECT_FALSE(graphed(t));
    EXPECT_TRUE(check_candidate(Agency::low, original, t));
  }
}

TEST(SearchLoop, LoopsStackRewritesOnTheAcceptedBase) {
  const std::string original = fixture(kMlp);
  AgentOptions options;
  options.loops = 2;
  auto run = run_search(
      original, [](const std::string&) { return report(true, 1.1, "accepted: 1.10x"); },
      std::nullopt, options);
  EXPECT_EQ(run.result.outcome, Outcome::accepted) << run.result.reason;
  ASSERT_EQ(run.result.accepted.size(), 2u);
  EXPECT_TRUE(graphed(run.result.accepted[0].text) && !widened(run.result.accepted[0].text));
  EXPECT_TRUE(graphed(run.result.accepted[1].text) && widened(run.result.accepted[1].text));
  EXPECT_EQ(run.result.model_calls, 4);  // read, profile, two proposals
}

TEST(SearchLoop, DeterministicForASeed) {
  const std::string original = fixture(kLossBwd);
  auto slower = [](const std::string&) { return report(false, 0.99, "rejected: marginal"); };
  auto a = run_search(original, slower, std::nullopt, {}, 5);
  auto b = run_search(original, slower, std::nullopt, {}, 5);
  auto c = run_search(original, slower, std::nullopt, {}, 6);
  EXPECT_EQ(a.evaluated, b.evaluated);
  EXPECT_EQ(a.result.model_calls, b.result.model_calls);
  ASSERT_EQ(a.evaluated.size(), c.evaluated.size());
  EXPECT_EQ(a.evaluated[0], c.evaluated[0]);          // the graph rewrite has no seed
  EXPECT_NE(a.evaluated.back(), c.evaluated.back());  // the autotune variants do
}

TEST(SearchLoop, NoToolsMeansAFinalAnswer) {
  auto provider = resolve_provider(std::string(kSearchModel), EnvMap{});
  auto model = make_model(*provider, {}, Agency::medium);
  auto reply = model->complete({{user_message("hello")}, {}});
  ASSERT_TRUE(reply) << reply.error().message;
  EXPECT_TRUE(reply->message.tool_calls.empty());
  EXPECT_NE(reply->message.content.find("nothing to propose"), std::string::npos);
}

}  // namespace

namespace {

TEST(SearchLoop, ReadsTheGatesRejectionKinds) {
  const std::string original = fixture(kAttn);
  // not_faster is about speed: the graph is tried again with autotuning; caching is about
  // correctness: no further graph candidate after it.
  auto speed = run_search(
      original,
      [](const std::string& t) {
        return report(false, 1.01,
                      graphed(t) && !widened(t) ? "rejected: not_faster (1.01x < 1.02x)"
                                                : "rejected: too_noisy (spread 9%)");
      },
      5);
  // (the TileOPs calls under the graph come first on this fixture, then the plain graph)
  auto plain = std::find_if(speed.evaluated.begin(), speed.evaluated.end(), [](const auto& t) {
    return graphed(t) && t.find("# ---- tilesmith-search: TileOPs calls") == std::string::npos;
  });
  ASSERT_TRUE(plain != speed.evaluated.end() && plain + 1 != speed.evaluated.end());
  EXPECT_FALSE(widened(*plain));
  EXPECT_TRUE(graphed(plain[1]) && widened(plain[1]));

  auto wrong = run_search(
      original,
      [](const std::string& t) {
        return graphed(t) ? report(false, 0,
                                   "rejected: caching (out[0] is the same storage as the "
                                   "previous call's output while that is still alive)")
                          : report(false, 1.0, "rejected: not_faster (1.00x)");
      },
      std::nullopt);
  ASSERT_GE(wrong.evaluated.size(), 2u);
  EXPECT_TRUE(graphed(wrong.evaluated[0]));
  for (size_t i = 1; i < wrong.evaluated.size(); ++i) EXPECT_FALSE(graphed(wrong.evaluated[i]));
}

}  // namespace

namespace {

TEST(SearchLoop, TheProfileDecidesWhetherAutotuningJoinsTheFirstProposal) {
  // mlp: an addmm and a 22M-element GELU. Measured GELU-heavy: graph and autotuning together.
  const std::string original = fixture(kMlp);
  auto slower = [](const std::string&) { return report(false, 0.99, "rejected: not_faster"); };
  auto heavy = run_search(original, slower, 3, {}, 0,
                          std::vector<KernelTime>{{"triton_poi_fused_gelu_0", 0.30, 0.30},
                                                  {"sm90_xmma_gemm_bf16bf16", 0.25, 0.25}});
  ASSERT_EQ(heavy.evaluated.size(), 1u);
  EXPECT_TRUE(graphed(heavy.evaluated[0]) && widened(heavy.evaluated[0]));
  auto light = run_search(original, slower, 3);  // the default rows: GELU 10%
  ASSERT_EQ(light.evaluated.size(), 1u);
  EXPECT_TRUE(graphed(light.evaluated[0]) && !widened(light.evaluated[0]));
  // Agency low has one kind of rewrite: nothing to rank, no profile.
  AgentOptions low;
  low.agency = Agency::low;
  auto only = run_search(original, slower, 2, low);
  EXPECT_EQ(only.profiles, 0);
  ASSERT_EQ(only.evaluated.size(), 1u);
  EXPECT_TRUE(widened(only.evaluated[0]));
}

}  // namespace
