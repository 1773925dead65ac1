// Launcher for softmax: validates Args, picks vector width and row config, launches.
#include "softmax/softmax.hpp"

#include "common/dispatch.cuh"
#include "softmax/softmax.cuh"

namespace ts::kernels {
namespace {

template <class T>
SoftmaxParams<T> params_of(const SoftmaxArgs& a) {
  return {static_cast<const T*>(a.x),
          static_cast<T*>(a.y),
          a.rows,
          a.cols,
          a.x_row_stride,
          a.y_row_stride};
}

template <class T, int kVec, int kConfig>
void launch_softmax(const SoftmaxArgs& a, cudaStream_t stream) {
  constexpr RowConfig c = kRowConfigs[kConfig];
  const SoftmaxParams<T> p = params_of<T>(a);
  const auto grid = static_cast<unsigned>((a.rows + c.rows_per_cta - 1) / c.rows_per_cta);
  softmax_kernel<T, kVec, c.warps_per_row, c.rows_per_cta, c.vecs_per_thread>
      <<<grid, c.threads_per_cta(), 0, stream>>>(p);
}

// Cluster configs (softmax_cluster_kernel), tuning indices kNumRowConfigs + i. A row of up to
// threads * vecs_per_thread * cluster vectors is read once.
struct ClusterConfig {
  int threads;
  int vecs_per_thread;
  int cluster;
  constexpr std::int64_t capacity_vecs() const {
    return std::int64_t{threads} * vecs_per_thread * cluster;
  }
};
constexpr ClusterConfig kClusterConfigs[] = {
    {256, 4, 8},   // up to 8192 vectors: bf16 rows of 64k
    {512, 4, 8},   // up to 16384: bf16 vocab rows (128256)
    {1024, 4, 8},  // up to 32768: fp32 vocab rows
};
constexpr int kNumClusterConfigs = sizeof(kClusterConfigs) / sizeof(kClusterConfigs[0]);

template <class T, int kVec, int kConfig>
void launch_softmax_cluster(const SoftmaxArgs& a, cudaStream_t stream) {
  constexpr ClusterConfig c = kClusterConfigs[kConfig];
  const SoftmaxParams<T> p = params_of<T>(a);
  const auto rows = static_cast<unsigned>(a.rows < 65535 ? a.rows : 65535);
  softmax_cluster_kernel<T, kVec, c.threads, c.vecs_per_thread, c.cluster>
      <<<dim3(c.cluster, rows), c.threads, 0, stream>>>(p);
}

// Row config that streams long rows with many rows to do: 512 threads, one vector each.
constexpr int kStreamLongRows = 7;
static_assert(kRowConfigs[kStreamLongRows].threads_per_cta() == 512 &&
              kRowConfigs[kStreamLongRows].vecs_per_thread == 1);

// Cluster config for a vectorized row of row_vecs vectors: the smallest that holds it, or -1.
int pick_cluster_config(std::int64_t row_vecs) {
  for (int i = 0; i < kNumClusterConfigs; ++i)
    if (kClusterConfigs[i].capacity_vecs() >= row_vecs) return i;
  return -1;
}

}  // namespace

int softmax_num_configs() {
  return kNumRowConfigs + kNumClusterConfigs;
}

cudaError_t softmax_launch(const SoftmaxArgs& a, cudaStream_t stream) {
  if (a.rows < 0 || a.cols <= 0 || a.x_row_stride < a.cols || a.y_row_stride < a.cols)
    return cudaErrorInvalidValue;
  if (a.config < -1 || a.config >= softmax_num_configs()) return cudaErrorInvalidValue;
  if (a.rows == 0) return cudaSuccess;
  if (!a.x || !a.y) return cudaErrorInvalidValue;
  if (a.rows > (std::int64_t{1} << 31) - 1) return cudaErrorInvalidValue;

  const int vec = vec_width(a.dtype);
  const bool vectorized = is_aligned16(a.x) && is_aligned16(a.y) && a.x_row_stride % vec == 0 &&
                          a.y_row_stride % vec == 0;
  const std::int64_t row_vecs = vectorized ? a.cols / vec : a.cols;
  // Rows longer than one CTA's registers hold (config 3: 2048 vectors, 16k bf16):
  //  - fewer rows than SMs go to a cluster when they split into whole vectors (H200, bf16
  //    16 x 128256: 10.4 us, was 20.6 with one 1024-thread CTA a row; torch.compile 19.5);
  //  - more rows stream with 512 threads of one vector (bf16 1024 x 128256: 206.5 us, against
  //    227.8 with config 3 and 230.3 clustered: two 512-thread CTAs an SM keep too little in
  //    flight).
  const int cluster_fit = vectorized && a.cols % vec == 0 ? pick_cluster_config(row_vecs) : -1;
  const int num_sms = current_sm_count();
  int config = a.config;
  if (config < 0) {
    if (row_vecs <= kRowConfigs[3].capacity_vecs())
      config = pick_row_config(a.rows, row_vecs, num_sms);
    else if (a.rows < num_sms && cluster_fit >= 0)
      config = kNumRowConfigs + cluster_fit;
    else
      config = a.rows < num_sms ? pick_row_config(a.rows, row_vecs, num_sms) : kStreamLongRows;
  }

  const cudaError_t err = dispatch_dtype(a.dtype, [&](auto tag) {
    using T = decltype(tag);
    if (config >= kNumRowConfigs) {
      const int i = config - kNumRowConfigs;
      if (cluster_fit < 0 || i < cluster_fit) return cudaErrorInvalidValue;  // row does not fit
      return dispatch_config<kNumClusterConfigs>(i, [&](auto cfg) {
        launch_softmax_cluster<T, 16 / sizeof(T), cfg.value>(a, stream);
        return cudaSuccess;
      });
    }
    return dispatch_row_config(config, [&](auto cfg) {
      if (vectorized)
        launch_softmax<T, 16 / sizeof(T), cfg.value>(a, stream);
      else
        launch_softmax<T, 1, cfg.value>(a, stream);
      return cudaSuccess;
    });
  });
  if (err != cudaSuccess) return err;
  return cudaGetLastError();
}

TS_REGISTER_KERNEL(cuda, softmax, "SoftmaxFwdOp", (run_launch<softmax_args, softmax_launch>),
                   softmax_num_configs);

}  // namespace ts::kernels
