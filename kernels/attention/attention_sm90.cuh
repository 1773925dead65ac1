// FlashAttention-style forward kernel for sm_90a, written with CuTe's SM90 GMMA atoms.
//
// CTA: kBlockM query rows of one (batch, q head), kBlockM / 64 warpgroups, each owning 64 rows
// (wgmma's M). Loop over key blocks of kBlockN:
//   S  = Q K_j^T          wgmma, both operands in shared memory (K-major, 128-byte swizzle)
//   online softmax on S   fp32 in registers: running row max m, row sum l, exp2 with the scale
//                         folded in, causal / Skv-tail masking only on the blocks that need it
//   O += P V_j            wgmma with P converted to f16/bf16 in registers (the accumulator's
//                         fragment is reused as the A operand, no shared-memory round trip) and
//                         V read MN-major through a transposed view of its K-major tile
// K and V tiles stream through a kStages-deep ring of shared-memory buffers filled by cp.async
// (16-byte chunks, zero-filled past Skv) or, in the TMA variant, by the tensor memory
// accelerator; Q is loaded once (zero-filled past Sq).
//
// Shared memory (bytes): (kBlockM + 2 * kStages * kBlockN) * D * 2, e.g. D = 128, 128 x 128
// tiles, 2 stages: 160 KiB, one CTA per SM.
#pragma once

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "cute/arch/copy_sm80.hpp"
#include "cute/arch/copy_sm90_tma.hpp"
#include "cute/arch/mma_sm90.hpp"
#include "cute/atom/mma_atom.hpp"
#include "cute/tensor.hpp"
// after tensor.hpp: the TMA traits need the copy algorithms it declares
#include "cute/atom/copy_traits_sm90_tma.hpp"
#include "cutlass/numeric_types.h"

#include "attention/attention_tiles.hpp"
#include "common/fast_math.cuh"

namespace ts::kernels::attn {

using namespace cute;

struct AttnParams {
  const void* q;
  const void* k;
  const void* v;
  void* o;
  std::int64_t q_stride[3], k_stride[3], v_stride[3], o_stride[3];  // (b, h, s), elements
  TileShape shape;   // B, Hq, Sq, Skv, causal, and the tile order's section (ws_tile)
  int group;         // query heads per kv head
  float scale_log2;  // softmax scale * log2(e)
};

template <class Element_, int kHeadDim_, int kBlockM_, int kBlockN_, int kStages_>
struct AttnTraits {
  using Element = Element_;
  static constexpr int kHeadDim = kHeadDim_, kBlockM = kBlockM_, kBlockN = kBlockN_;
  static constexpr int kStages = kStages_;
  static constexpr int kWarpGroups = kBlockM / 64;
  static constexpr int kThreads = kWarpGroups * 128;

  // [rows, D] tiles, D contiguous, 128-byte swizzle (8 x 64-element atoms).
  using SmemAtom = GMMA::Layout_K_SW128_Atom<Element>;
  using SmemLayoutQ = decltype(tile_to_shape(SmemAtom{}, Shape<Int<kBlockM>, Int<kHeadDim>>{}));
  using SmemLayoutK = decltype(tile_to_shape(SmemAtom{}, Shape<Int<kBlockN>, Int<kHeadDim>>{}));
  // V^T as (D, kBlockN): element (d, n) is V's (n, d); D is the contiguous (MN-major) mode.
  using SmemLayoutVt =
      decltype(composition(SmemLayoutK{}, make_layout(Shape<Int<kHeadDim>, Int<kBlockN>>{},
                                                      Stride<Int<kBlockN>, _1>{})));

  using MmaQK = decltype(make_tiled_mma(
      GMMA::ss_op_selector<Element, Element, float, Shape<_64, Int<kBlockN>, Int<kHeadDim>>>(),
      Layout<Shape<Int<kWarpGroups>, _1, _1>>{}));
  using MmaPV = decltype(make_tiled_mma(
      GMMA::rs_op_selector<Element, Element, float, Shape<_64, Int<kHeadDim>, Int<kBlockN>>,
                           GMMA::Major::K, GMMA::Major::MN>(),
      Layout<Shape<Int<kWarpGroups>, _1, _1>>{}));

  static constexpr int kTileQ = kBlockM * kHeadDim, kTileKV = kBlockN * kHeadDim;
  static constexpr int kSmemBytes = (kTileQ + 2 * kStages * kTileKV) * int(sizeof(Element));
  // Warp-specialized kernel: the same tiles, then 3 * kStages mbarriers.
  static constexpr int kSmemBytesWs = kSmemBytes;
};

// Accumulator fragment ((2, 2, V), MMA_M, MMA_N) viewed as (rows, cols):
// rows ((2), MMA_M) = (row r, row r + 8), cols ((2, V), MMA_N) = (col pair, 8-column group).
template <class Layout>
__device__ __forceinline__ auto acc_rowcol(Layout l) {
  return make_layout(make_layout(get<0, 1>(l), get<1>(l)),
                     make_layout(get<0, 0>(l), get<0, 2>(l), get<2>(l)));
}

// The same accumulator as the A operand of a 16-bit RS wgmma: ((2, 2, 2), MMA_M, K blocks).
// A k16 block is two consecutive 8-column groups of the accumulator, in the same per-thread
// order (2 columns, 2 rows, 2 groups) as wgmma's A register fragment.
template <class Layout>
__device__ __forceinline__ auto acc_as_a_operand(Layout l) {
  auto groups = logical_divide(get<0, 2>(l), Tile<_2>{});  // (2, V / 2)
  return make_layout(make_layout(get<0, 0>(l), get<0, 1>(l), get<0, 0>(groups)), get<1>(l),
                     coalesce(make_layout(get<0, 1>(groups), get<2>(l))));
}

__device__ __forceinline__ void cp_async_16(void* smem, const void* gmem, bool valid) {
  const auto s = static_cast<std::uint32_t>(__cvta_generic_to_shared(smem));
  const int bytes = valid ? 16 : 0;  // 0: write 16 zero bytes, read nothing
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(gmem), "r"(bytes));
}
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::);
}
template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending));
}
// cp.async writes go through the generic proxy; wgmma reads shared memory through the async
// proxy, so each writer fences before the barrier that publishes the tile.
__device__ __forceinline__ void fence_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// Loads rows [0, rows_valid) of a [kRows, D] tile (row stride `stride`) into `tile`; rows past
// rows_valid become zeros (finite, so masked probabilities times them stay 0).
// kUnrolled = false keeps the loop rolled (the producer warpgroup runs on 24 registers).
template <class Traits, int kRows, int kThreads = Traits::kThreads, bool kUnrolled = true,
          class SmemTensor>
__device__ __forceinline__ void load_tile(SmemTensor tile, const typename Traits::Element* g,
                                          std::int64_t stride, int rows_valid, int tid) {
  constexpr int kChunksPerRow = Traits::kHeadDim / 8;
  constexpr int kChunks = kRows * kChunksPerRow;
  static_assert(kChunks % kThreads == 0, "every thread copies the same chunk count");
#pragma unroll(kUnrolled ? kChunks / kThreads : 1)
  for (int i = 0; i < kChunks / kThreads; ++i) {
    const int chunk = tid + i * kThreads;
    const int row = chunk / kChunksPerRow, col = (chunk % kChunksPerRow) * 8;
    const bool valid = row < rows_valid;
    cp_async_16(&tile(row, col), valid ? g + row * stride + col : g, valid);
  }
}

// Stage `stage` of a shared-memory ring of [kBlockN, D] K or V tiles starting at `base`, in
// `Layout` (SmemLayoutK, or SmemLayoutVt for V read as V^T).
template <class Traits, class Layout = typename Traits::SmemLayoutK>
__device__ __forceinline__ auto stage_tile(typename Traits::Element* base, int stage) {
  return make_tensor(make_smem_ptr(base + stage * Traits::kTileKV), Layout{});
}

// S = Q K^T as one wgmma batch (the first k block overwrites S), committed and not waited for.
template <class Mma, class TQ, class TK, class TS>
__device__ __forceinline__ void wgmma_qk(Mma& mma, const TQ& tSrQ, const TK& tSrK, TS& tSrS) {
  warpgroup_fence_operand(tSrS);
  warpgroup_arrive();
  mma.accumulate_ = GMMA::ScaleOut::Zero;
#pragma unroll
  for (int kb = 0; kb < size<2>(tSrQ); ++kb) {
    cute::gemm(mma, tSrQ(_, _, kb), tSrK(_, _, kb), tSrS);
    mma.accumulate_ = GMMA::ScaleOut::One;
  }
  warpgroup_commit_batch();
}

// O += P V as one wgmma batch (P from registers), committed and not waited for.
template <class Mma, class TP, class TV, class TO>
__device__ __forceinline__ void wgmma_pv(Mma& mma, TP& tOrP, const TV& tOrV, TO& tOrO) {
  warpgroup_fence_operand(tOrP);
  warpgroup_fence_operand(tOrO);
  warpgroup_arrive();
#pragma unroll
  for (int kb = 0; kb < size<2>(tOrP); ++kb) cute::gemm(mma, tOrP(_, _, kb), tOrV(_, _, kb), tOrO);
  warpgroup_commit_batch();
}

// Masks keys past Skv and, causal, past each row's diagonal, in block (row0, col0) of S
// (kBlockN keys); most blocks reach neither and return at once.
template <int kBlockN, class TensorS, class TensorC>
__device__ __forceinline__ void mask_block(TensorS& S, const TensorC& S_coord, int row0, int col0,
                                           int Skv, bool causal) {
  if (col0 + kBlockN <= Skv && !(causal && col0 + kBlockN - 1 > row0)) return;
#pragma unroll
  for (int r = 0; r < size<0>(S); ++r)
#pragma unroll
    for (int c = 0; c < size<1>(S); ++c) {
      const int qi = row0 + get<0>(S_coord(r, c)), kj = col0 + get<1>(S_coord(r, c));
      if (kj >= Skv || (causal && kj > qi)) S(r, c) = -INFINITY;
    }
}

// Online softmax on one block: updates row_max, replaces S by exp2(S * scale_log2 - max) and
// returns, per row, the factor that rescales the old O and row sum (row_sum is updated here).
template <int kRows, class TensorS>
__device__ __forceinline__ void softmax_block(TensorS& S, float (&row_max)[kRows],
                                              float (&row_sum)[kRows], float (&correction)[kRows],
                                              float scale_log2) {
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    float mx = row_max[r];
#pragma unroll
    for (int c = 0; c < size<1>(S); ++c) mx = fmaxf(mx, S(r, c));
    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
    const float base = mx == -INFINITY ? 0.f : mx * scale_log2;
    correction[r] = exp2_ftz(row_max[r] * scale_log2 - base);
    row_max[r] = mx;
    float sum = 0.f;
#pragma unroll
    for (int c = 0; c < size<1>(S); ++c) {
      const float e = exp2_ftz(fmaf(S(r, c), scale_log2, -base));
      S(r, c) = e;
      sum += e;
    }
    row_sum[r] = row_sum[r] * correction[r] + sum;
  }
}

// O's rows times softmax_block's correction: the old accumulator rescaled to the new row max.
template <int kRows, class TensorO>
__device__ __forceinline__ void rescale_rows(TensorO& O, const float (&correction)[kRows]) {
#pragma unroll
  for (int r = 0; r < kRows; ++r)
#pragma unroll
    for (int c = 0; c < size<1>(O); ++c) O(r, c) *= correction[r];
}

// Finishes the row sums across the quad, normalizes O and stores its rows below rows_valid to o
// (the tile's row 0; o_row: row stride). Columns come in adjacent pairs (mode (0, 0) of the
// fragment): one 4-byte store each.
template <class Element, int kRows, class TensorO, class TensorC>
__device__ __forceinline__ void store_o(const TensorO& O, const TensorC& O_coord,
                                        const float (&row_sum)[kRows], Element* o,
                                        std::int64_t o_row, int rows_valid) {
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    float sum = row_sum[r];
    sum += __shfl_xor_sync(0xffffffffu, sum, 1);
    sum += __shfl_xor_sync(0xffffffffu, sum, 2);
    const float inv = sum > 0.f ? 1.f / sum : 0.f;
    const int row = get<0>(O_coord(r, 0));
    if (row >= rows_valid) continue;
    Element* orow = o + row * o_row;
#pragma unroll
    for (int c = 0; c < size<1>(O); c += 2) {
      const int col = get<1>(O_coord(r, c));
      Element pair[2] = {static_cast<Element>(O(r, c) * inv),
                         static_cast<Element>(O(r, c + 1) * inv)};
      *reinterpret_cast<std::uint32_t*>(orow + col) = *reinterpret_cast<std::uint32_t*>(pair);
    }
  }
}

template <class Traits>
__global__ void __launch_bounds__(Traits::kThreads, 1) attention_kernel(const AttnParams p) {
  using Element = typename Traits::Element;
  constexpr int kBlockM = Traits::kBlockM, kBlockN = Traits::kBlockN, kStages = Traits::kStages;
  constexpr int kHeadDim = Traits::kHeadDim;
  extern __shared__ __align__(1024) unsigned char smem[];
  Element* smem_q = reinterpret_cast<Element*>(smem);
  Element* smem_k = smem_q + Traits::kTileQ;             // kStages K tiles
  Element* smem_v = smem_k + kStages * Traits::kTileKV;  // kStages V tiles

  const int tid = threadIdx.x;
  const int m_block = gridDim.x - 1 - blockIdx.x;  // longest causal rows first
  const int h = blockIdx.y, b = blockIdx.z, g = h / p.group;
  const int row0 = m_block * kBlockM;

  const Element* q = static_cast<const Element*>(p.q) + b * p.q_stride[0] + h * p.q_stride[1] +
                     row0 * p.q_stride[2];
  const Element* k = static_cast<const Element*>(p.k) + b * p.k_stride[0] + g * p.k_stride[1];
  const Element* v = static_cast<const Element*>(p.v) + b * p.v_stride[0] + g * p.v_stride[1];
  Element* o =
      static_cast<Element*>(p.o) + b * p.o_stride[0] + h * p.o_stride[1] + row0 * p.o_stride[2];

  // Key blocks this query block sees: all of Skv, or up to its last row's diagonal.
  const int kv_end = p.shape.causal ? min(p.shape.Skv, row0 + kBlockM) : p.shape.Skv;
  const int n_blocks = (kv_end + kBlockN - 1) / kBlockN;

  Tensor sQ = make_tensor(make_smem_ptr(smem_q), typename Traits::SmemLayoutQ{});
  auto sK = [&](int stage) { return stage_tile<Traits>(smem_k, stage); };
  auto sV = [&](int stage) { return stage_tile<Traits>(smem_v, stage); };
  auto sVt = [&](int stage) {
    return stage_tile<Traits, typename Traits::SmemLayoutVt>(smem_v, stage);
  };

  auto load_kv = [&](int block) {
    if (block < n_blocks) {
      const int start = block * kBlockN;
      load_tile<Traits, kBlockN>(sK(block % kStages), k + start * p.k_stride[2], p.k_stride[2],
                                 p.shape.Skv - start, tid);
      cp_async_commit();
      load_tile<Traits, kBlockN>(sV(block % kStages), v + start * p.v_stride[2], p.v_stride[2],
                                 p.shape.Skv - start, tid);
      cp_async_commit();
    } else {  // keep the group count uniform so the waits below stay static
      cp_async_commit();
      cp_async_commit();
    }
  };

  load_tile<Traits, kBlockM>(sQ, q, p.q_stride[2], p.shape.Sq - row0, tid);
  cp_async_commit();
#pragma unroll
  for (int s = 0; s < kStages; ++s) load_kv(s);

  typename Traits::MmaQK mma_qk;
  typename Traits::MmaPV mma_pv;
  auto thr_qk = mma_qk.get_thread_slice(tid);
  auto thr_pv = mma_pv.get_thread_slice(tid);

  Tensor tSrQ = thr_qk.partition_fragment_A(sQ);
  Tensor tSrS = partition_fragment_C(mma_qk, Shape<Int<kBlockM>, Int<kBlockN>>{});
  Tensor tOrO = partition_fragment_C(mma_pv, Shape<Int<kBlockM>, Int<kHeadDim>>{});
  clear(tOrO);

  Tensor S = make_tensor(tSrS.data(), acc_rowcol(tSrS.layout()));  // (rows, cols) view
  Tensor O = make_tensor(tOrO.data(), acc_rowcol(tOrO.layout()));
  Tensor cS = thr_qk.partition_C(make_identity_tensor(Shape<Int<kBlockM>, Int<kBlockN>>{}));
  Tensor S_coord = make_tensor(cS.data(), acc_rowcol(cS.layout()));
  constexpr int kRows = decltype(size<0>(S))::value;  // 2: rows r and r + 8 of the warp's 16
  static_assert(kRows == decltype(size<0>(O))::value, "S and O rows coincide");

  float row_max[kRows], row_sum[kRows], correction[kRows];
#pragma unroll
  for (int r = 0; r < kRows; ++r) row_max[r] = -INFINITY, row_sum[r] = 0.f;

  for (int j = 0; j < n_blocks; ++j) {
    const int stage = j % kStages;
    cp_async_wait<2 * kStages - 1>();  // Q and K_j have landed (V_j and later may be in flight)
    fence_async_shared();
    __syncthreads();

    // S = Q K_j^T
    wgmma_qk(mma_qk, tSrQ, thr_qk.partition_fragment_B(sK(stage)), tSrS);
    warpgroup_wait<0>();
    warpgroup_fence_operand(tSrS);

    // Mask keys past Skv and, causal, past each row's diagonal (only blocks that reach them).
    mask_block<kBlockN>(S, S_coord, row0, j * kBlockN, p.shape.Skv, p.shape.causal);
    softmax_block(S, row_max, row_sum, correction, p.scale_log2);
    rescale_rows(O, correction);

    // P in 16-bit, laid out as the A operand of the P V wgmma.
    Tensor tOrP = make_tensor<Element>(acc_as_a_operand(tSrS.layout()));
    {
      Tensor P_flat = make_tensor(tOrP.data(), tSrS.layout());
#pragma unroll
      for (int i = 0; i < size(tSrS); ++i) P_flat(i) = static_cast<Element>(tSrS(i));
    }

    cp_async_wait<2 * kStages - 2>();  // V_j has landed
    fence_async_shared();
    __syncthreads();

    // O += P V_j
    wgmma_pv(mma_pv, tOrP, thr_pv.partition_fragment_B(sVt(stage)), tOrO);
    warpgroup_wait<0>();
    warpgroup_fence_operand(tOrO);

    __syncthreads();  // every warpgroup is done with this stage's K and V
    load_kv(j + kStages);
  }

  Tensor cO = thr_pv.partition_C(make_identity_tensor(Shape<Int<kBlockM>, Int<kHeadDim>>{}));
  Tensor O_coord = make_tensor(cO.data(), acc_rowcol(cO.layout()));
  store_o(O, O_coord, row_sum, o, p.o_stride[2], p.shape.Sq - row0);
}

// ---- overlapped variant ----------------------------------------------------------------------
//
// Same tiles, but each warpgroup keeps the tensor cores busy while it does softmax: in
// iteration j it issues S_{j+1} = Q K_{j+1}^T and then O += P_j V_j back to back (wgmma runs
// them asynchronously, in order), waits only for S_{j+1}, masks it and computes its row max and
// exponentials while P_j V_j is still running, and only then waits for O and rescales it
// (FlashAttention-3's intra-warpgroup overlap, without its producer warps). K is therefore needed
// one block ahead of V; the two-stage rings are refilled as
//   prologue: {Q, K0} V0 K1 V1 | S_0 | K2        end of iteration j: V_{j+2} K_{j+3}
// so at the start of iteration j the groups after K_{j+1} are exactly V_{j+1}, K_{j+2}
// (cp.async.wait_group 2 publishes K_{j+1} and V_j).

template <class Traits>
__global__ void __launch_bounds__(Traits::kThreads, 1)
    attention_kernel_overlap(const AttnParams p) {
  using Element = typename Traits::Element;
  constexpr int kBlockM = Traits::kBlockM, kBlockN = Traits::kBlockN;
  constexpr int kHeadDim = Traits::kHeadDim;
  static_assert(Traits::kStages == 2, "the group arithmetic below assumes two-stage rings");
  extern __shared__ __align__(1024) unsigned char smem[];
  Element* smem_q = reinterpret_cast<Element*>(smem);
  Element* smem_k = smem_q + Traits::kTileQ;
  Element* smem_v = smem_k + 2 * Traits::kTileKV;

  const int tid = threadIdx.x;
  const int m_block = gridDim.x - 1 - blockIdx.x;
  const int h = blockIdx.y, b = blockIdx.z, g = h / p.group;
  const int row0 = m_block * kBlockM;

  const Element* q = static_cast<const Element*>(p.q) + b * p.q_stride[0] + h * p.q_stride[1] +
                     row0 * p.q_stride[2];
  const Element* k = static_cast<const Element*>(p.k) + b * p.k_stride[0] + g * p.k_stride[1];
  const Element* v = static_cast<const Element*>(p.v) + b * p.v_stride[0] + g * p.v_stride[1];
  Element* o =
      static_cast<Element*>(p.o) + b * p.o_stride[0] + h * p.o_stride[1] + row0 * p.o_stride[2];

  const int kv_end = p.shape.causal ? min(p.shape.Skv, row0 + kBlockM) : p.shape.Skv;
  const int n_blocks = (kv_end + kBlockN - 1) / kBlockN;

  Tensor sQ = make_tensor(make_smem_ptr(smem_q), typename Traits::SmemLayoutQ{});
  auto sK = [&](int block) { return stage_tile<Traits>(smem_k, block % 2); };
  auto sV = [&](int block) { return stage_tile<Traits>(smem_v, block % 2); };
  auto sVt = [&](int block) {
    return stage_tile<Traits, typename Traits::SmemLayoutVt>(smem_v, block % 2);
  };
  // One cp.async group per call (empty past the last block, so the counts stay uniform).
  auto load_k = [&](int block, bool commit) {
    if (block < n_blocks) {
      const int start = block * kBlockN;
      load_tile<Traits, kBlockN>(sK(block), k + start * p.k_stride[2], p.k_stride[2],
                                 p.shape.Skv - start, tid);
    }
    if (commit) cp_async_commit();
  };
  auto load_v = [&](int block) {
    if (block < n_blocks) {
      const int start = block * kBlockN;
      load_tile<Traits, kBlockN>(sV(block), v + start * p.v_stride[2], p.v_stride[2],
                                 p.shape.Skv - start, tid);
    }
    cp_async_commit();
  };

  typename Traits::MmaQK mma_qk;
  typename Traits::MmaPV mma_pv;
  auto thr_qk = mma_qk.get_thread_slice(tid);
  auto thr_pv = mma_pv.get_thread_slice(tid);
  Tensor tSrQ = thr_qk.partition_fragment_A(sQ);
  Tensor tSrS = partition_fragment_C(mma_qk, Shape<Int<kBlockM>, Int<kBlockN>>{});
  Tensor tOrO = partition_fragment_C(mma_pv, Shape<Int<kBlockM>, Int<kHeadDim>>{});
  Tensor tOrP = make_tensor<Element>(acc_as_a_operand(tSrS.layout()));
  clear(tOrO);
  Tensor S = make_tensor(tSrS.data(), acc_rowcol(tSrS.layout()));
  Tensor O = make_tensor(tOrO.data(), acc_rowcol(tOrO.layout()));
  Tensor cS = thr_qk.partition_C(make_identity_tensor(Shape<Int<kBlockM>, Int<kBlockN>>{}));
  Tensor S_coord = make_tensor(cS.data(), acc_rowcol(cS.layout()));
  constexpr int kRows = decltype(size<0>(S))::value;

  float row_max[kRows], row_sum[kRows], correction[kRows];
#pragma unroll
  for (int r = 0; r < kRows; ++r) row_max[r] = -INFINITY, row_sum[r] = 0.f;

  auto issue_qk = [&](int block) {
    wgmma_qk(mma_qk, tSrQ, thr_qk.partition_fragment_B(sK(block)), tSrS);
  };
  auto issue_pv = [&](int block) {
    wgmma_pv(mma_pv, tOrP, thr_pv.partition_fragment_B(sVt(block)), tOrO);
  };
  auto mask_if_needed = [&](int block) {
    mask_block<kBlockN>(S, S_coord, row0, block * kBlockN, p.shape.Skv, p.shape.causal);
  };
  auto convert_p = [&] {
    Tensor P_flat = make_tensor(tOrP.data(), tSrS.layout());
#pragma unroll
    for (int i = 0; i < size(tSrS); ++i) P_flat(i) = static_cast<Element>(tSrS(i));
  };

  // Prologue: S_0 and P_0.
  load_tile<Traits, kBlockM>(sQ, q, p.q_stride[2], p.shape.Sq - row0, tid);
  load_k(0, true);  // group {Q, K0}
  load_v(0);
  load_k(1, true);
  load_v(1);
  cp_async_wait<3>();
  fence_async_shared();
  __syncthreads();
  issue_qk(0);
  warpgroup_wait<0>();
  warpgroup_fence_operand(tSrS);
  mask_if_needed(0);
  softmax_block(S, row_max, row_sum, correction, p.scale_log2);
  convert_p();
  __syncthreads();  // every warpgroup is done with K0's buffer
  load_k(2, true);

  for (int j = 0; j < n_blocks; ++j) {
    cp_async_wait<2>();  // K_{j+1} and V_j have landed
    fence_async_shared();
    __syncthreads();
    const bool has_next = j + 1 < n_blocks;
    if (has_next) issue_qk(j + 1);
    issue_pv(j);
    if (has_next) {
      warpgroup_wait<1>();  // S_{j+1} is ready; P_j V_j may still run
      warpgroup_fence_operand(tSrS);
      mask_if_needed(j + 1);
      softmax_block(S, row_max, row_sum, correction, p.scale_log2);
    }
    warpgroup_wait<0>();
    warpgroup_fence_operand(tOrO);
    if (has_next) {
      rescale_rows(O, correction);
      convert_p();
    }
    __syncthreads();  // V_j and K_{j+1} are consumed by every warpgroup
    load_v(j + 2);
    load_k(j + 3, true);
  }

  Tensor cO = thr_pv.partition_C(make_identity_tensor(Shape<Int<kBlockM>, Int<kHeadDim>>{}));
  Tensor O_coord = make_tensor(cO.data(), acc_rowcol(cO.layout()));
  store_o(O, O_coord, row_sum, o, p.o_stride[2], p.shape.Sq - row0);
}

// ---- warp-specialized variant (attention_kernel_ws) ------------------------------------------
//
// 3 warpgroups: warpgroup 2 produces K and V tiles into a kStages ring (cp.async, each stage's
// arrival signalled on an mbarrier by cp.async.mbarrier.arrive.noinc, so no consumer waits on
// another's copies; or TMA, below), warpgroups 0 and 1 consume 64 query rows each. The consumers
// never synchronize with each other except through a token that alternates their wgmma issues (QK
// of warpgroup 1, QK of 2, PV of 1, PV of 2, ...): while one does softmax, the other's products
// keep the tensor cores busy (FlashAttention-3's ping-pong schedule). Registers: a 384-thread
// launch caps every thread at 168 (each SM quarter holds 3 warps); setmaxnreg moves the producer to
// 24 and the consumers to 240, with the two roles as the two branches of one if/else (else ptxas
// ignores it).
//
//   full_k[s], full_v[s]: cp.async: 128 producer arrivals (one per thread, when its copies have
//                         landed); TMA: 1 arrival with the tile's byte count + the transactions
//   empty_k[s]:           8 consumer arrivals (lane 0 of each consumer warp, once its Q K^T
//                         has landed), empty_v[s] likewise after its P V: K and V are separate
//                         rings, so a K stage refills while the P V that follows still reads V
//                         (with 2 stages and the overlapped schedule, one shared release after
//                         P V left the producer a block behind)
//   named barriers 1, 2:  the wgmma token of consumer 0, 1;  3, 4: Q loaded, per consumer

__device__ __forceinline__ void named_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
__device__ __forceinline__ void named_arrive(int id, int threads) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
__device__ __forceinline__ void cp_async_arrive_noinc(std::uint64_t* bar) {
  const auto a = static_cast<std::uint32_t>(__cvta_generic_to_shared(bar));
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(a) : "memory");
}
__device__ __forceinline__ void mbar_init(std::uint64_t* bar, int count) {
  const auto a = static_cast<std::uint32_t>(__cvta_generic_to_shared(bar));
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(a), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_arrive(std::uint64_t* bar) {
  const auto a = static_cast<std::uint32_t>(__cvta_generic_to_shared(bar));
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(a) : "memory");
}
// Waits until the phase with parity `parity` of the barrier has completed.
__device__ __forceinline__ void mbar_wait(std::uint64_t* bar, int parity) {
  const auto a = static_cast<std::uint32_t>(__cvta_generic_to_shared(bar));
  asm volatile(
      "{\n .reg .pred done;\n WAIT_%=:\n"
      " mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      " @!done bra WAIT_%=;\n}\n" ::"r"(a),
      "r"(parity)
      : "memory");
}

constexpr int kWsThreads = 384;

template <class Traits>
struct WsShared {
  static constexpr int kStages = Traits::kStages;
  static constexpr int kBarrierBytes = 4 * kStages * 8;  // full_k, full_v, empty_k, empty_v
  static constexpr int kBytes = Traits::kSmemBytesWs + kBarrierBytes;
};

// The two consumer warpgroups of attention_kernel_ws (threads 0..255).
//
// In sequence (kOverlap = false), block n is: S = Q K_n, softmax, O += P V_n, each wgmma batch
// issued while holding the token. Overlapped (FlashAttention-3's intra-warpgroup pipelining), one
// turn issues S_n = Q K_n and O += P_{n-1} V_{n-1} together, and the softmax of S_n runs while
// P_{n-1} V_{n-1} is still on the tensor cores; O is rescaled by block n's correction only after
// that product lands. Registers: S_n, P_{n-1} and O live at once (64 + 32 + 64 per thread at
// D = 128), within the consumers' 240.
//
// Each consumer loads its own 64 rows of Q (only its wgmmas read them); once its last Q K^T of a
// tile has landed it starts loading the next tile's rows, under the last P V and the epilogue.
// The token keeps alternating across tiles (both consumers take the same number of turns per
// tile), so consumer 0 always issues first.
template <class Traits, bool kOverlap, class SK>
__device__ __forceinline__ void consume_ws(const AttnParams& p, typename Traits::Element* smem_q,
                                           typename Traits::Element* smem_v, std::uint64_t* full_k,
                                           std::uint64_t* full_v, std::uint64_t* empty_k,
                                           std::uint64_t* empty_v, SK sK) {
  using Element = typename Traits::Element;
  constexpr int kBlockM = Traits::kBlockM, kBlockN = Traits::kBlockN, kStages = Traits::kStages;
  constexpr int kHeadDim = Traits::kHeadDim;
  asm volatile("setmaxnreg.inc.sync.aligned.u32 240;\n" ::);
  const int consumer = threadIdx.x / 128;  // 0 or 1: rows [64 consumer, 64 consumer + 64)
  const int tid = threadIdx.x;             // 0..255 across both consumers
  const int ctid = tid % 128;              // within this consumer
  const TileShape& tiles = p.shape;
  const std::int64_t n_tiles = ws_num_tiles(tiles, kBlockM);

  Tensor sQ = make_tensor(make_smem_ptr(smem_q), typename Traits::SmemLayoutQ{});
  Tensor sQ_mine = local_tile(sQ, Shape<_64, Int<kHeadDim>>{}, make_coord(consumer, 0));
  auto load_q = [&](std::int64_t t) {  // this consumer's 64 rows of tile t's Q, one cp.async group
    const WsTile tile = ws_tile(tiles, kBlockM, kBlockN, t);
    const int row = tile.row0 + 64 * consumer;
    const Element* q = static_cast<const Element*>(p.q) + tile.b * p.q_stride[0] +
                       tile.h * p.q_stride[1] + row * p.q_stride[2];
    load_tile<Traits, 64, 128>(sQ_mine, q, p.q_stride[2], p.shape.Sq - row, ctid);
    cp_async_commit();
  };
  auto prefetch_q = [&](std::int64_t t) {  // after this consumer's last Q K^T of the tile
    if (t + gridDim.x >= n_tiles) return;
    named_sync(3 + consumer, 128);  // all 4 warps' wgmmas are done reading Q
    load_q(t + gridDim.x);
  };

  typename Traits::MmaQK mma_qk;
  typename Traits::MmaPV mma_pv;
  auto thr_qk = mma_qk.get_thread_slice(tid);
  auto thr_pv = mma_pv.get_thread_slice(tid);
  Tensor tSrQ = thr_qk.partition_fragment_A(sQ);
  Tensor tSrS = partition_fragment_C(mma_qk, Shape<Int<kBlockM>, Int<kBlockN>>{});
  Tensor tOrO = partition_fragment_C(mma_pv, Shape<Int<kBlockM>, Int<kHeadDim>>{});
  Tensor tOrP = make_tensor<Element>(acc_as_a_operand(tSrS.layout()));
  Tensor S = make_tensor(tSrS.data(), acc_rowcol(tSrS.layout()));
  Tensor O = make_tensor(tOrO.data(), acc_rowcol(tOrO.layout()));
  Tensor cS = thr_qk.partition_C(make_identity_tensor(Shape<Int<kBlockM>, Int<kBlockN>>{}));
  Tensor S_coord = make_tensor(cS.data(), acc_rowcol(cS.layout()));
  Tensor cO = thr_pv.partition_C(make_identity_tensor(Shape<Int<kBlockM>, Int<kHeadDim>>{}));
  Tensor O_coord = make_tensor(cO.data(), acc_rowcol(cO.layout()));
  constexpr int kRows = decltype(size<0>(S))::value;
  float row_max[kRows], row_sum[kRows], correction[kRows];

  // The wgmma token: consumer c issues after bar 1 + c, then hands it to the other one.
  const int my_turn = 1 + consumer, their_turn = 2 - consumer;
  if (consumer == 1) named_arrive(1, 256);  // consumer 0 goes first

  int row0 = 0;
  int consumed = 0;  // key blocks consumed in earlier tiles: the rings' running index
  auto issue_qk = [&](int n) {
    wgmma_qk(mma_qk, tSrQ, thr_qk.partition_fragment_B(sK((consumed + n) % kStages)), tSrS);
  };
  auto issue_pv = [&](int n) {
    wgmma_pv(mma_pv, tOrP,
             thr_pv.partition_fragment_B(stage_tile<Traits, typename Traits::SmemLayoutVt>(
                 smem_v, (consumed + n) % kStages)),
             tOrO);
  };
  auto softmax_of = [&](int n) {  // S of block n -> probabilities in S, correction[] for O
    warpgroup_fence_operand(tSrS);
    mask_block<kBlockN>(S, S_coord, row0, n * kBlockN, p.shape.Skv, p.shape.causal);
    softmax_block(S, row_max, row_sum, correction, p.scale_log2);
  };
  auto rescale_o_and_convert_p = [&] {  // after the last P V wgmma that read tOrP has landed
    warpgroup_fence_operand(tOrP);
    rescale_rows(O, correction);
    Tensor P_flat = make_tensor(tOrP.data(), tSrS.layout());
#pragma unroll
    for (int i = 0; i < size(tSrS); ++i) P_flat(i) = static_cast<Element>(tSrS(i));
  };
  auto release = [&](std::uint64_t* empty, int n) {  // this warp is done with block n's K or V
    __syncwarp();
    if (threadIdx.x % 32 == 0) mbar_arrive(&empty[(consumed + n) % kStages]);
  };
  auto wait_full = [&](std::uint64_t* full, int n) {
    const int i = consumed + n;
    mbar_wait(&full[i % kStages], (i / kStages) & 1);
    fence_async_shared();
  };

  if (blockIdx.x < n_tiles) load_q(blockIdx.x);
  for (std::int64_t t = blockIdx.x; t < n_tiles; t += gridDim.x) {
    const WsTile tile = ws_tile(tiles, kBlockM, kBlockN, t);
    const int n_blocks = tile.n_blocks;
    row0 = tile.row0;
    cp_async_wait<0>();  // this tile's Q
    fence_async_shared();
    named_sync(3 + consumer, 128);
    clear(tOrO);
#pragma unroll
    for (int r = 0; r < kRows; ++r) row_max[r] = -INFINITY, row_sum[r] = 0.f;

    if constexpr (!kOverlap) {
      for (int n = 0; n < n_blocks; ++n) {
        wait_full(full_k, n);
        named_sync(my_turn, 256);
        issue_qk(n);
        named_arrive(their_turn, 256);
        warpgroup_wait<0>();
        release(empty_k, n);
        if (n == n_blocks - 1) prefetch_q(t);
        softmax_of(n);
        rescale_o_and_convert_p();
        wait_full(full_v, n);
        named_sync(my_turn, 256);
        issue_pv(n);
        named_arrive(their_turn, 256);
        warpgroup_wait<0>();
        warpgroup_fence_operand(tOrO);
        release(empty_v, n);
      }
    } else {
      wait_full(full_k, 0);
      named_sync(my_turn, 256);
      issue_qk(0);
      named_arrive(their_turn, 256);
      warpgroup_wait<0>();
      release(empty_k, 0);
      if (n_blocks == 1) prefetch_q(t);
      softmax_of(0);
      rescale_o_and_convert_p();  // O is still 0: the rescale is a no-op
      for (int n = 1; n < n_blocks; ++n) {
        wait_full(full_k, n);
        wait_full(full_v, n - 1);
        named_sync(my_turn, 256);
        issue_qk(n);
        issue_pv(n - 1);
        named_arrive(their_turn, 256);
        warpgroup_wait<1>();  // S_n has landed; P_{n-1} V_{n-1} may still run
        release(empty_k, n);
        if (n == n_blocks - 1) prefetch_q(t);
        softmax_of(n);
        warpgroup_wait<0>();
        warpgroup_fence_operand(tOrO);
        release(empty_v, n - 1);
        rescale_o_and_convert_p();
      }
      wait_full(full_v, n_blocks - 1);
      named_sync(my_turn, 256);
      issue_pv(n_blocks - 1);
      named_arrive(their_turn, 256);
      warpgroup_wait<0>();
      warpgroup_fence_operand(tOrO);
      release(empty_v, n_blocks - 1);
    }
    consumed += n_blocks;

    Element* o = static_cast<Element*>(p.o) + tile.b * p.o_stride[0] + tile.h * p.o_stride[1] +
                 row0 * p.o_stride[2];
    store_o(O, O_coord, row_sum, o, p.o_stride[2], p.shape.Sq - row0);
  }
  if (consumer == 0) named_sync(1, 256);  // take the token consumer 1 handed back last
}

// ---- the producers and the warp-specialized kernel ----------------------------------------
//
// With TMA (configs 6-9), one thread of warpgroup 2 issues one TMA copy per K and per V tile
// (boxes of 64 columns x kBlockN rows in the 128-byte swizzle the wgmma reads, rows past Skv
// zero-filled by the TMA unit), each completing its full barrier by transaction count; the
// producer's other 127 threads only give up their registers. The cp.async producer issues
// 2 * kBlockN * D / 8 / 128 copies per thread per stage on 24 registers (32 at 128 x 128,
// D = 128), the TMA one 2 instructions a stage: on the H100 the same consumers run in half the
// time. kOverlap picks the consumers' overlapped schedule (consume_ws).

__device__ __forceinline__ void mbar_arrive_expect_tx(std::uint64_t* bar, std::uint32_t bytes) {
  const auto a = static_cast<std::uint32_t>(__cvta_generic_to_shared(bar));
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(a), "r"(bytes)
               : "memory");
}

// Host: the TMA copy of one K or V tensor, seen as (Skv, D, Hkv, B) with D contiguous, in
// Traits' (kBlockN, D) shared-memory tiles. Every stride must be positive, a multiple of 16
// bytes and below 2^40 bytes (the launcher checks; cuTensorMapEncodeTiled rejects others).
template <class Traits>
auto make_kv_tma(const typename Traits::Element* ptr, int S, int H, int B, std::int64_t s_stride,
                 std::int64_t h_stride, std::int64_t b_stride) {
  Tensor g = make_tensor(make_gmem_ptr(ptr), make_shape(S, Int<Traits::kHeadDim>{}, H, B),
                         make_stride(s_stride, _1{}, h_stride, b_stride));
  return make_tma_copy(SM90_TMA_LOAD{}, g, typename Traits::SmemLayoutK{});
}
template <class Traits>
using KvTma = decltype(make_kv_tma<Traits>(nullptr, 1, 1, 1, 0, 0, 0));

// For key block n of every tile of this CTA, in the consumers' order: load_k(tile, n, stage)
// once the consumers have released that stage of the K ring, then load_v(...) likewise for V.
template <class Traits, class LoadK, class LoadV>
__device__ __forceinline__ void produce_each_block(const AttnParams& p, std::uint64_t* empty_k,
                                                   std::uint64_t* empty_v, LoadK load_k,
                                                   LoadV load_v) {
  constexpr int kStages = Traits::kStages;
  const TileShape& tiles = p.shape;
  const std::int64_t n_tiles = ws_num_tiles(tiles, Traits::kBlockM);
  int i = 0;  // the rings' running index
  for (std::int64_t t = blockIdx.x; t < n_tiles; t += gridDim.x) {
    const WsTile tile = ws_tile(tiles, Traits::kBlockM, Traits::kBlockN, t);
    for (int n = 0; n < tile.n_blocks; ++n, ++i) {
      const int stage = i % kStages, parity = ((i / kStages) & 1) ^ 1;  // round 0 passes at once
      mbar_wait(&empty_k[stage], parity);
      load_k(tile, n, stage);
      mbar_wait(&empty_v[stage], parity);
      load_v(tile, n, stage);
    }
  }
}

// The producer of attention_kernel_ws with cp.async: every thread of warpgroup 2 copies its
// share of each K and V tile and signals the stage's full barrier when its copies land.
template <class Traits, class SK, class SV>
__device__ __forceinline__ void produce_cp_async(const AttnParams& p, SK sK, SV sV,
                                                 std::uint64_t* full_k, std::uint64_t* full_v,
                                                 std::uint64_t* empty_k, std::uint64_t* empty_v) {
  using Element = typename Traits::Element;
  constexpr int kBlockN = Traits::kBlockN;
  const int tid = threadIdx.x - 256;
  // rows [n kBlockN, n kBlockN + kBlockN) of this tile's (batch, kv head) of K or V into `dst`
  auto load = [&](auto dst, const void* base, const std::int64_t* stride, const WsTile& tile, int n,
                  std::uint64_t* full) {
    const int start = n * kBlockN;
    const Element* g = static_cast<const Element*>(base) + tile.b * stride[0] +
                       tile.h / p.group * stride[1] + start * stride[2];
    load_tile<Traits, kBlockN, 128, false>(dst, g, stride[2], p.shape.Skv - start, tid);
    cp_async_arrive_noinc(full);
  };
  produce_each_block<Traits>(
      p, empty_k, empty_v,
      [&](const WsTile& tile, int n, int stage) {
        load(sK(stage), p.k, p.k_stride, tile, n, &full_k[stage]);
      },
      [&](const WsTile& tile, int n, int stage) {
        load(sV(stage), p.v, p.v_stride, tile, n, &full_v[stage]);
      });
  cp_async_wait<0>();
}

// The producer of attention_kernel_ws with TMA: thread 256 alone issues every copy.
template <class Traits, class Tma, class SK, class SV>
__device__ __forceinline__ void produce_tma(const AttnParams& p, const Tma& tma_k, const Tma& tma_v,
                                            SK sK, SV sV, std::uint64_t* full_k,
                                            std::uint64_t* full_v, std::uint64_t* empty_k,
                                            std::uint64_t* empty_v) {
  using Element = typename Traits::Element;
  constexpr int kBlockN = Traits::kBlockN, kHeadDim = Traits::kHeadDim;
  if (threadIdx.x != 256) return;
  const auto kv_shape = make_shape(p.shape.Skv, Int<kHeadDim>{}, p.shape.Hq / p.group, p.shape.B);
  const auto kv_tile = Shape<Int<kBlockN>, Int<kHeadDim>>{};
  constexpr auto kTileBytes = static_cast<std::uint32_t>(Traits::kTileKV * sizeof(Element));
  // key block n of this tile's (batch, kv head) of K or V into `dst`, completing `full`
  auto load = [&](const Tma& tma, auto dst, const WsTile& tile, int n, std::uint64_t* full) {
    // (kBlockN, D, key block) view of this (batch, kv head)
    Tensor g = local_tile(tma.get_tma_tensor(kv_shape)(_, _, tile.h / p.group, tile.b), kv_tile,
                          make_coord(_, 0));
    auto [tg, ts] =
        tma_partition(tma, Int<0>{}, Layout<_1>{}, group_modes<0, 2>(dst), group_modes<0, 2>(g));
    mbar_arrive_expect_tx(full, kTileBytes);
    copy(tma.with(*full), tg(_, n), ts);
  };
  produce_each_block<Traits>(
      p, empty_k, empty_v,
      [&](const WsTile& tile, int n, int stage) {
        load(tma_k, sK(stage), tile, n, &full_k[stage]);
      },
      [&](const WsTile& tile, int n, int stage) {
        load(tma_v, sV(stage), tile, n, &full_v[stage]);
      });
}

// Tma = NoTma: the cp.async producer; else the TMA copy type of K and V (KvTma<Traits>).
struct NoTma {};

template <class Traits, class Tma, bool kOverlap>
__global__ void __launch_bounds__(kWsThreads, 1)
    attention_kernel_ws(const __grid_constant__ AttnParams p, const __grid_constant__ Tma tma_k,
                        const __grid_constant__ Tma tma_v) {
  using Element = typename Traits::Element;
  constexpr bool kTma = !std::is_same_v<Tma, NoTma>;
  constexpr int kStages = Traits::kStages;
  static_assert(Traits::kBlockM == 128, "two consumer warpgroups of 64 rows");
  extern __shared__ __align__(1024) unsigned char smem[];
  Element* smem_q = reinterpret_cast<Element*>(smem);
  Element* smem_k = smem_q + Traits::kTileQ;
  Element* smem_v = smem_k + kStages * Traits::kTileKV;
  std::uint64_t* full_k = reinterpret_cast<std::uint64_t*>(smem + Traits::kSmemBytesWs);
  std::uint64_t* full_v = full_k + kStages;
  std::uint64_t* empty_k = full_v + kStages;
  std::uint64_t* empty_v = empty_k + kStages;

  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      mbar_init(&full_k[s], kTma ? 1 : 128);
      mbar_init(&full_v[s], kTma ? 1 : 128);
      mbar_init(&empty_k[s], 8);
      mbar_init(&empty_v[s], 8);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  if constexpr (kTma) {
    if (threadIdx.x == 256) {
      prefetch_tma_descriptor(tma_k.get_tma_descriptor());
      prefetch_tma_descriptor(tma_v.get_tma_descriptor());
    }
  }
  __syncthreads();

  auto sK = [&](int stage) { return stage_tile<Traits>(smem_k, stage); };
  auto sV = [&](int stage) { return stage_tile<Traits>(smem_v, stage); };

  if (threadIdx.x >= 256) {  // ---- producer warpgroup
    asm volatile("setmaxnreg.dec.sync.aligned.u32 24;\n" ::);
    if constexpr (kTma)
      produce_tma<Traits>(p, tma_k, tma_v, sK, sV, full_k, full_v, empty_k, empty_v);
    else
      produce_cp_async<Traits>(p, sK, sV, full_k, full_v, empty_k, empty_v);
  } else {
    consume_ws<Traits, kOverlap>(p, smem_q, smem_v, full_k, full_v, empty_k, empty_v, sK);
  }
}

}  // namespace ts::kernels::attn
