#include "ts/agent/structure.hpp"

#include <gtest/gtest.h>

#include "wrapper_fixture.hpp"

namespace {

using namespace ts::agent;
using ts::agent::testing::kWrapper;
using ts::agent::testing::replaced;

std::string message_of(const ts::Expected<void>& r) {
  return r ? "" : r.error().message;
}

TEST(WrapperAbi, KeepsOrRejectsTheCallableAbi) {
  EXPECT_TRUE(check_wrapper_abi(kWrapper, kWrapper));
  auto renamed =
      check_wrapper_abi(kWrapper, replaced(kWrapper, "def call(args):", "def call(inputs):"));
  ASSERT_FALSE(renamed);
  EXPECT_EQ(renamed.error().code, ts::Errc::rejected);
  EXPECT_NE(message_of(renamed).find("entry point"), std::string::npos);
  auto unpack = check_wrapper_abi(
      kWrapper, replaced(kWrapper, "arg0_1, arg1_1 = args", "arg1_1, arg0_1 = args"));
  EXPECT_NE(message_of(unpack).find("unpacked exactly as 'arg0_1, arg1_1 = args'"),
            std::string::npos)
      << message_of(unpack);
  auto clear = check_wrapper_abi(kWrapper, replaced(kWrapper, "    args.clear()\n", ""));
  EXPECT_NE(message_of(clear).find("args.clear()"), std::string::npos);
  auto arity =
      check_wrapper_abi(kWrapper, replaced(kWrapper, "return (buf1, arg0_1, )", "return (buf1, )"));
  EXPECT_NE(message_of(arity).find("return 2 values"), std::string::npos) << message_of(arity);
  auto no_call = check_wrapper_abi(kWrapper, "print('hi')\n");
  EXPECT_FALSE(no_call);
  // Not a wrapper (a TileOPs kernel file): nothing to keep.
  EXPECT_TRUE(check_wrapper_abi("__global__ void k() {}\n", "anything"));
}

TEST(WrapperStructure, KernelBodiesAndLaunchArgumentsMayChange) {
  std::string candidate =
      replaced(kWrapper, "tl.maximum(tmp0 + 1.0, 0.0)", "tl.where(tmp0 > -1.0, tmp0 + 1.0, 0.0)");
  candidate = replaced(
      candidate, "1024,\n                                        grid=grid(1024), stream=stream0)",
      "1024, grid=grid(512), stream=stream0)");
  candidate =
      replaced(candidate, "# kernel path: /tmp/torchinductor/ab/cab.py", "# tuned by the agent");
  EXPECT_TRUE(check_wrapper_structure(kWrapper, candidate))
      << message_of(check_wrapper_structure(kWrapper, candidate));
  EXPECT_TRUE(check_candidate(Agency::low, kWrapper, candidate));
}

TEST(WrapperStructure, AnyOtherChangeIsRejectedWithTheLine) {
  auto extra_launch =
      replaced(kWrapper, "        buf1 = extern_kernels.mm(buf0, arg1_1)\n",
               "        triton_poi_fused_add_relu_0.run(buf0, buf0, 1024, stream=stream0)\n"
               "        buf1 = extern_kernels.mm(buf0, arg1_1)\n");
  auto r = check_wrapper_structure(kWrapper, extra_launch);
  ASSERT_FALSE(r);
  EXPECT_NE(message_of(r).find("agency=low"), std::string::npos);
  EXPECT_NE(message_of(r).find("triton_poi_fused_add_relu_0.run(...)"), std::string::npos)
      << message_of(r);

  auto alloc = replaced(kWrapper, "torch.float32)", "torch.float16)");
  EXPECT_NE(message_of(check_wrapper_structure(kWrapper, alloc)).find("torch.float16"),
            std::string::npos);

  auto dropped = replaced(kWrapper, "        del buf0\n", "");
  EXPECT_NE(message_of(check_wrapper_structure(kWrapper, dropped)).find("del buf0"),
            std::string::npos);

  // Medium agency allows the same change as long as the ABI holds.
  EXPECT_TRUE(check_candidate(Agency::medium, kWrapper, extra_launch));
  EXPECT_FALSE(check_candidate(Agency::low, kWrapper, extra_launch));
}

TEST(Agency, ParsesNames) {
  EXPECT_EQ(*parse_agency("low"), Agency::low);
  EXPECT_EQ(*parse_agency("high"), Agency::high);
  EXPECT_FALSE(parse_agency("max"));
  EXPECT_STREQ(agency_name(Agency::medium), "medium");
}

}  // namespace
