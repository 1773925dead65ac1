// Decode-shape GEMM: d[M, N] = a[M, K] @ b[N, K]^T for M <= 16 (b stored [N, K], K contiguous,
// as nn.Linear keeps its weight). The product is a stream of b (N x K, read once); a (16 x K) is
// re-read by every CTA from L2.
//
// One mma.sync.m16n8k16 row block covers all of M (rows >= M read as zeros). A CTA owns
// 8 * kSub columns of d (kSub n8 subtiles); its kSkinnyWarps warps split K into 32-wide chunks
// (warp w takes chunks w, w + kSkinnyWarps, ...), each thread loading kInFlight chunks (16 bytes
// of each of its 2 rows of a and kSub rows of b per chunk) before their mmas; the warps' partial
// sums meet in shared memory at the end. kGemmSkinnyShapes (below) lists the variants tuned over.
//
// Loads stay 16 bytes because the order of k in a dot product is free: k is permuted the same
// way in a and b so that each thread's fragment elements are contiguous. Thread (g = lane / 4,
// q = lane % 4) loads physical k [8q, 8q + 8) of a chunk as words w0..w3 (two elements each);
// mma step t in {0, 1} takes w_{2t} as logical k {2q, 2q + 1} and w_{2t+1} as {2q + 8, 2q + 9}
// (the m16n8k16 fragment positions of a0a1 / a4a5 and b0b1 / b2b3). Each step then covers the
// physical k {8q + 4t + 0..3 : q}, and the two steps cover the chunk once.
#pragma once

#include <cstdint>
#include <type_traits>

#include "common/vec.cuh"
#include "gemm/gemm_configs.hpp"

namespace ts::kernels {
namespace {

constexpr int kSkinnyM = kGemmSkinnyMaxM;  // rows of d: one mma row block
constexpr int kSkinnyWarps = 8;            // warps splitting K
constexpr int kSkinnyChunk = 32;  // k per chunk: one 16-byte load per thread and operand row

template <class T>
struct GemmSkinnyParams {
  const T* a;  // [M, K], row stride lda
  const T* b;  // [N, K], row stride ldb
  T* d;        // [M, N], row stride ldd
  int M, N, K;
  std::int64_t lda, ldb, ldd;
};

// d (16 x 8, fp32) += a (16 x 16) b (16 x 8); fragments as PTX lays out m16n8k16.
template <class T>
__device__ __forceinline__ void mma_m16n8k16(float (&c)[4], const std::uint32_t (&a)[4],
                                             std::uint32_t b0, std::uint32_t b1) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
        "{%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  } else {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
        "{%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
}

__device__ __forceinline__ std::uint32_t word(const uint4& v, int i) {
  return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;
}

// Loads are unconditional (absent rows and k past the end read valid memory: row 0 / column 0 and
// k = 0) and masked afterwards, so all of a thread's loads issue back to back with no branches.
__device__ __forceinline__ uint4 masked(const uint4& v, bool keep) {
  return keep ? v : make_uint4(0, 0, 0, 0);
}

// kSub: n8 subtiles per CTA (columns 8 * kSub); kInFlight: chunks a thread loads before their
// mmas; kMinBlocks: CTAs per SM the register budget is cut for. Registers (ptxas -v, nvcc 13.0)
// are in kGemmSkinnyShapes.
template <class T, int kSub, int kInFlight, int kMinBlocks>
__global__ void __launch_bounds__(kSkinnyWarps * 32, kMinBlocks)
    gemm_skinny_kernel(const GemmSkinnyParams<T> p) {
  constexpr int kCols = 8 * kSub;
  __shared__ float partial[kSkinnyWarps][kSkinnyM][kCols];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int g = lane / 4, q = lane % 4;
  const int n0 = blockIdx.x * kCols;

  // Rows this thread loads: a's g and g + 8, b's n0 + s * 8 + g (the column of subtile s).
  const bool lo_ok = g < p.M, hi_ok = g + 8 < p.M;
  const T* a_lo = p.a + (lo_ok ? g : 0) * p.lda;
  const T* a_hi = p.a + (hi_ok ? g + 8 : 0) * p.lda;
  const T* b_rows[kSub];
  bool b_ok[kSub];
#pragma unroll
  for (int s = 0; s < kSub; ++s) {
    const int n = n0 + s * 8 + g;
    b_ok[s] = n < p.N;
    b_rows[s] = p.b + (b_ok[s] ? n : 0) * p.ldb;
  }

  float acc[kSub][4] = {};
  const int chunks = (p.K + kSkinnyChunk - 1) / kSkinnyChunk;
  for (int c0 = warp; c0 < chunks; c0 += kSkinnyWarps * kInFlight) {
    uint4 av[kInFlight][2], bv[kInFlight][kSub];
    bool k_ok[kInFlight];
#pragma unroll
    for (int u = 0; u < kInFlight; ++u) {
      const int c = c0 + u * kSkinnyWarps, k = c * kSkinnyChunk + 8 * q;
      k_ok[u] = c < chunks && k < p.K;  // K % 8 == 0: a vector is wholly inside or past the end
      const int kk = k_ok[u] ? k : 0;
      av[u][0] = *reinterpret_cast<const uint4*>(a_lo + kk);
      av[u][1] = *reinterpret_cast<const uint4*>(a_hi + kk);
#pragma unroll
      for (int s = 0; s < kSub; ++s) bv[u][s] = *reinterpret_cast<const uint4*>(b_rows[s] + kk);
    }
#pragma unroll
    for (int u = 0; u < kInFlight; ++u) {
      const uint4 lo = masked(av[u][0], k_ok[u] && lo_ok), hi = masked(av[u][1], k_ok[u] && hi_ok);
#pragma unroll
      for (int t = 0; t < 2; ++t) {
        const std::uint32_t af[4] = {word(lo, 2 * t), word(hi, 2 * t), word(lo, 2 * t + 1),
                                     word(hi, 2 * t + 1)};
#pragma unroll
        for (int s = 0; s < kSub; ++s) {
          // Masking a alone would do for k past the end; b rows past N only feed columns that
          // are never stored, but stay zero so no Inf or NaN can appear in their sums.
          const uint4 b = masked(bv[u][s], k_ok[u] && b_ok[s]);
          mma_m16n8k16<T>(acc[s], af, word(b, 2 * t), word(b, 2 * t + 1));
        }
      }
    }
  }

  // acc[s]: (row g, columns s * 8 + 2q + {0, 1}) and (row g + 8, the same columns).
#pragma unroll
  for (int s = 0; s < kSub; ++s) {
    const int col = s * 8 + 2 * q;
    partial[warp][g][col] = acc[s][0];
    partial[warp][g][col + 1] = acc[s][1];
    partial[warp][g + 8][col] = acc[s][2];
    partial[warp][g + 8][col + 1] = acc[s][3];
  }
  __syncthreads();
  for (int i = threadIdx.x; i < kSkinnyM * kCols; i += blockDim.x) {
    const int r = i / kCols, col = i % kCols, n = n0 + col;
    if (r >= p.M || n >= p.N) continue;
    float sum = 0.f;
#pragma unroll
    for (int w = 0; w < kSkinnyWarps; ++w) sum += partial[w][r][col];
    p.d[r * p.ldd + n] = from_float<T>(sum);
  }
}

}  // namespace
}  // namespace ts::kernels
