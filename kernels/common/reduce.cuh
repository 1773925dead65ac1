// Warp and row-group reductions in fp32. A row group is `kWarps` consecutive warps of one CTA;
// with kWarps == 1 it is a register-only shuffle reduction with no shared memory and no barrier.
#pragma once

#include <cooperative_groups.h>

#include <cmath>
#include <cstdint>

namespace ts::kernels {

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1)
    v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

/// Sum over the kWarps warps of a row group; every thread of the group gets the total.
/// `scratch` holds kWarps floats private to this group. With kWarps > 1 the whole CTA must call
/// it (it has __syncthreads), so such kernels put exactly one row group in a CTA.
template <int kWarps>
__device__ __forceinline__ float group_sum(float v, float* scratch) {
  v = warp_sum(v);
  if constexpr (kWarps == 1) {
    return v;
  } else {
    const int warp = (threadIdx.x / 32) % kWarps;
    if (threadIdx.x % 32 == 0) scratch[warp] = v;
    __syncthreads();
    float total = 0.f;
#pragma unroll
    for (int i = 0; i < kWarps; ++i) total += scratch[i];
    __syncthreads();  // scratch may be reused by the next reduction
    return total;
  }
}

template <int kWarps>
__device__ __forceinline__ float group_max(float v, float* scratch) {
  v = warp_max(v);
  if constexpr (kWarps == 1) {
    return v;
  } else {
    const int warp = (threadIdx.x / 32) % kWarps;
    if (threadIdx.x % 32 == 0) scratch[warp] = v;
    __syncthreads();
    float total = -INFINITY;
#pragma unroll
    for (int i = 0; i < kWarps; ++i) total = fmaxf(total, scratch[i]);
    __syncthreads();
    return total;
  }
}

/// This CTA's slice of a row of `nvec` vectors split over a cluster of kCluster CTAs: vectors
/// [begin, begin + nvec), ceil(nvec / kCluster) of them (fewer, or none, at the row's end).
struct RowSlice {
  std::int64_t begin, nvec;
};
template <int kCluster>
__device__ __forceinline__ RowSlice row_slice(std::int64_t nvec) {
  const std::int64_t per = (nvec + kCluster - 1) / kCluster;
  const std::int64_t begin = cooperative_groups::this_cluster().block_rank() * per;
  return {begin, begin < nvec ? (per < nvec - begin ? per : nvec - begin) : 0};
}

/// One value per CTA combined across a thread-block cluster of kCluster CTAs that split a row:
/// each CTA publishes its partial in its own shared memory (`slot`), one cluster barrier, then
/// every thread reads the kCluster partials through distributed shared memory and folds them in
/// rank order, so all CTAs get bit-identical results. The barrier that keeps a CTA's slot alive
/// until every CTA has read it is split: the call arrives once it has read, and waits at the
/// next call (before the slot is rewritten) or at finish() (before the CTA exits), so the work
/// in between (the row's stores) overlaps it. Every thread of every CTA of the cluster makes the
/// same calls, and each CTA calls finish() before it exits.
template <class P, int kCluster>
class ClusterCombine {
 public:
  __device__ explicit ClusterCombine(P* slot) : slot_(slot) {}

  /// `mine`: this CTA's partial (the same in every thread); `fold(P, P) -> P`.
  template <class Fold>
  __device__ __forceinline__ P operator()(const P& mine, Fold fold) {
    namespace cg = cooperative_groups;
    cg::cluster_group cluster = cg::this_cluster();
    if (pending_) cluster.barrier_wait();  // every CTA has read the slot's last value
    if (threadIdx.x == 0) *slot_ = mine;
    cluster.sync();  // every CTA's partial is published (release/acquire: visible cluster-wide)
    P acc = *cluster.map_shared_rank(slot_, 0);
#pragma unroll
    for (int r = 1; r < kCluster; ++r) acc = fold(acc, *cluster.map_shared_rank(slot_, r));
    (void)cluster.barrier_arrive();
    pending_ = true;
    return acc;
  }

  __device__ __forceinline__ void finish() {
    if (pending_) cooperative_groups::this_cluster().barrier_wait();
    pending_ = false;
  }

 private:
  P* slot_;
  bool pending_ = false;
};

}  // namespace ts::kernels
