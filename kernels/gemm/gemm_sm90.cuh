// CUTLASS 3 sm_90a GEMM instances: TMA loads + warp-specialized wgmma (CollectiveBuilder), fp32
// accumulation, a TMA-store epilogue with no C operand (d = acc, alpha = 1, beta = 0).
//
// One instance per (element type, layout of a, layout of b, config). CUTLASS names B's layout
// on the K x N matrix: ColumnMajor = K contiguous (our b stored [N, K], trans_b), RowMajor = N
// contiguous (b stored [K, N]). A: RowMajor = K contiguous (a stored [M, K]).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <type_traits>
#include <utility>

#include "cute/tensor.hpp"
#include "cutlass/cutlass.h"
#include "cutlass/epilogue/collective/collective_builder.hpp"
#include "cutlass/gemm/collective/collective_builder.hpp"
#include "cutlass/gemm/device/gemm_universal_adapter.h"
#include "cutlass/gemm/kernel/gemm_universal.hpp"
#include "gemm/gemm.hpp"
#include "gemm/gemm_configs.hpp"

namespace ts::kernels::sm90 {

template <class T, class LayoutA, class LayoutB, int kConfig>
struct GemmInstance {
  static constexpr GemmConfig c = kGemmConfigs[kConfig];
  static constexpr int kAlign = 16 / sizeof(T);  // TMA: 16-byte aligned rows
  using TileShape = cute::Shape<cute::Int<c.tile_m>, cute::Int<c.tile_n>, cute::Int<c.tile_k>>;
  using ClusterShape = cute::Shape<cute::Int<c.cluster_m>, cute::Int<c.cluster_n>, cute::_1>;
  using MainloopSchedule =
      std::conditional_t<c.cooperative, cutlass::gemm::KernelTmaWarpSpecializedCooperative,
                         cutlass::gemm::KernelTmaWarpSpecializedPingpong>;
  using EpilogueSchedule =
      std::conditional_t<c.cooperative, cutlass::epilogue::TmaWarpSpecializedCooperative,
                         cutlass::epilogue::TmaWarpSpecialized>;
  using LayoutD = cutlass::layout::RowMajor;

  using CollectiveEpilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
      cutlass::epilogue::collective::EpilogueTileAuto, float, float, void, LayoutD, kAlign, T,
      LayoutD, kAlign, EpilogueSchedule>::CollectiveOp;

  using CollectiveMainloop = typename cutlass::gemm::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, T, LayoutA, kAlign, T, LayoutB, kAlign,
      float, TileShape, ClusterShape,
      cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(
          sizeof(typename CollectiveEpilogue::SharedStorage))>,
      MainloopSchedule>::CollectiveOp;

  using Kernel = cutlass::gemm::kernel::GemmUniversal<cute::Shape<int, int, int, int>,
                                                      CollectiveMainloop, CollectiveEpilogue>;
  using Gemm = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;

  static typename Gemm::Arguments arguments(const GemmArgs& g, int num_sms) {
    using StrideA = typename Kernel::StrideA;  // (M, K, L)
    using StrideB = typename Kernel::StrideB;  // (N, K, L)
    using StrideD = typename Kernel::StrideD;  // (M, N, L)
    StrideA sa{};
    StrideB sb{};
    StrideD sd{};
    if constexpr (std::is_same_v<LayoutA, cutlass::layout::RowMajor>)
      cute::get<0>(sa) = g.lda;
    else
      cute::get<1>(sa) = g.lda;
    if constexpr (std::is_same_v<LayoutB, cutlass::layout::ColumnMajor>)
      cute::get<0>(sb) = g.ldb;
    else
      cute::get<1>(sb) = g.ldb;
    cute::get<0>(sd) = g.ldd;
    cutlass::KernelHardwareInfo hw;
    hw.device_id = 0;
    hw.sm_count = num_sms;
    return typename Gemm::Arguments{
        cutlass::gemm::GemmUniversalMode::kGemm,
        {static_cast<int>(g.M), static_cast<int>(g.N), static_cast<int>(g.K), 1},
        {static_cast<const T*>(g.a), sa, static_cast<const T*>(g.b), sb},
        {{1.0f, 0.0f}, nullptr, sd, static_cast<T*>(g.d), sd},
        hw};
  }

  /// True when the kernel accepts these shapes, strides and pointers (no launch).
  static bool can_implement(const GemmArgs& g, int num_sms) {
    const auto args = arguments(g, num_sms);
    return Gemm::can_implement(args) == cutlass::Status::kSuccess &&
           Gemm::get_workspace_size(args) == 0;
  }

  static cudaError_t run(const GemmArgs& g, int num_sms, cudaStream_t stream) {
    const auto args = arguments(g, num_sms);
    Gemm gemm;
    if (Gemm::can_implement(args) != cutlass::Status::kSuccess) return cudaErrorInvalidValue;
    if (Gemm::get_workspace_size(args) != 0) return cudaErrorInvalidValue;  // never allocate
    if (gemm.initialize(args, nullptr, stream) != cutlass::Status::kSuccess)
      return cudaErrorInvalidValue;
    if (gemm.run(stream) != cutlass::Status::kSuccess) {
      const cudaError_t err = cudaGetLastError();
      return err != cudaSuccess ? err : cudaErrorLaunchFailure;
    }
    return cudaSuccess;
  }
};

/// Runs (or, kCheckOnly, checks) config `config`: one instance per entry of kGemmConfigs.
template <class T, class LayoutA, class LayoutB, bool kCheckOnly, std::size_t... kConfigs>
cudaError_t dispatch_config(const GemmArgs& g, int config, int num_sms, cudaStream_t stream,
                            std::index_sequence<kConfigs...>) {
  cudaError_t err = cudaErrorInvalidValue;
  auto one = [&]<std::size_t kConfig>(std::integral_constant<std::size_t, kConfig>) {
    using Instance = GemmInstance<T, LayoutA, LayoutB, static_cast<int>(kConfig)>;
    if constexpr (kCheckOnly)
      err = Instance::can_implement(g, num_sms) ? cudaSuccess : cudaErrorInvalidValue;
    else
      err = Instance::run(g, num_sms, stream);
  };
  ((config == static_cast<int>(kConfigs) ? one(std::integral_constant<std::size_t, kConfigs>{})
                                         : void()),
   ...);
  return err;
}

/// Entry points, one per (dtype, trans_a, trans_b); each file gemm_sm90_<dtype>_<layouts>.cu
/// defines one of them for every config. num_sms > 0.
#define TS_GEMM_SM90_DECLARE(NAME)                                                   \
  cudaError_t NAME(const GemmArgs& g, int config, int num_sms, cudaStream_t stream); \
  bool NAME##_ok(const GemmArgs& g, int config, int num_sms);

TS_GEMM_SM90_DECLARE(gemm_sm90_f16_nn)
TS_GEMM_SM90_DECLARE(gemm_sm90_f16_nt)
TS_GEMM_SM90_DECLARE(gemm_sm90_f16_tn)
TS_GEMM_SM90_DECLARE(gemm_sm90_f16_tt)
TS_GEMM_SM90_DECLARE(gemm_sm90_bf16_nn)
TS_GEMM_SM90_DECLARE(gemm_sm90_bf16_nt)
TS_GEMM_SM90_DECLARE(gemm_sm90_bf16_tn)
TS_GEMM_SM90_DECLARE(gemm_sm90_bf16_tt)
#undef TS_GEMM_SM90_DECLARE

}  // namespace ts::kernels::sm90

/// Body of one instance file: T, the layouts of a and b, and the entry point's name.
#define TS_GEMM_SM90_DEFINE(NAME, T, LAYOUT_A, LAYOUT_B)                                    \
  namespace ts::kernels::sm90 {                                                             \
  cudaError_t NAME(const GemmArgs& g, int config, int num_sms, cudaStream_t stream) {       \
    return dispatch_config<T, LAYOUT_A, LAYOUT_B, false>(                                   \
        g, config, num_sms, stream, std::make_index_sequence<kNumGemmConfigs>{});           \
  }                                                                                         \
  bool NAME##_ok(const GemmArgs& g, int config, int num_sms) {                              \
    return dispatch_config<T, LAYOUT_A, LAYOUT_B, true>(                                    \
               g, config, num_sms, nullptr, std::make_index_sequence<kNumGemmConfigs>{}) == \
           cudaSuccess;                                                                     \
  }                                                                                         \
  }
