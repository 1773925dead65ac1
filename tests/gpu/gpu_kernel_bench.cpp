// gpu_kernel_bench: times every memory-bound kernel on large (prefill) and decode workloads.
//
// Method: CUDA events around each launch; before each timed launch a 256 MiB cudaMemset
// evicts L2 (60 MB on H200), so inputs come from HBM; 10 warm-up launches; median, p10 and p90
// of --runs (default 100) launches. TB/s counts compulsory bytes (every input read once, every
// output written once). The same run measures a 2 GiB device-to-device copy (bytes read +
// written), and each row reports its fraction of that copy bandwidth. For each workload the
// default config (-1) is timed, then every config, so an autotuner's table comes for free.
//
//   gpu_kernel_bench [--json PATH] [--runs N] [--no-sweep]
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "activation/gated_mul.hpp"
#include "gpu_common.hpp"
#include "norm/layer_norm.hpp"
#include "norm/rms_norm.hpp"
#include "rope/rope.hpp"
#include "softmax/softmax.hpp"

namespace ts::gpu_test {
namespace {

using kernels::dtype_name;
using kernels::dtype_size;

struct Timing {
  double median_us, p10_us, p90_us;
};

struct Row {
  std::string op, shape, dtype;
  int config;
  bool is_default;
  Timing t;
  double bytes, tbps, pct_copy;
};

class Bench {
 public:
  explicit Bench(int runs) : runs_(runs), flush_(std::size_t{256} << 20) {
    TS_CUDA_CHECK(cudaEventCreate(&start_));
    TS_CUDA_CHECK(cudaEventCreate(&stop_));
  }
  ~Bench() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }

  /// Times `launch` (which returns cudaError_t); flushes L2 before each run.
  Timing time(const std::function<cudaError_t()>& launch, int runs) {
    for (int i = 0; i < 10; ++i) TS_CUDA_CHECK(launch());
    TS_CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<cudaEvent_t> events(2 * static_cast<std::size_t>(runs));
    for (auto& e : events) TS_CUDA_CHECK(cudaEventCreate(&e));
    for (int i = 0; i < runs; ++i) {
      TS_CUDA_CHECK(cudaMemsetAsync(flush_.get(), i & 0xff, flush_.bytes(), nullptr));
      TS_CUDA_CHECK(cudaEventRecord(events[2 * i], nullptr));
      TS_CUDA_CHECK(launch());
      TS_CUDA_CHECK(cudaEventRecord(events[2 * i + 1], nullptr));
    }
    TS_CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<double> us(static_cast<std::size_t>(runs));
    for (int i = 0; i < runs; ++i) {
      float ms = 0;
      TS_CUDA_CHECK(cudaEventElapsedTime(&ms, events[2 * i], events[2 * i + 1]));
      us[i] = ms * 1e3;
    }
    for (auto& e : events) cudaEventDestroy(e);
    std::sort(us.begin(), us.end());
    auto at = [&](double q) { return us[static_cast<std::size_t>(q * (runs - 1) + 0.5)]; };
    return {at(0.5), at(0.1), at(0.9)};
  }

  void add(const std::string& op, const std::string& shape, DType dtype, int config, double bytes,
           const std::function<cudaError_t(int)>& launch, int num_configs, bool sweep) {
    auto record = [&](int c) {
      const Timing t = time([&] { return launch(c); }, runs_);
      const double tbps = bytes / (t.median_us * 1e-6) / 1e12;
      rows_.push_back({op, shape, dtype_name(dtype), c, c == config, t, bytes, tbps,
                       copy_tbps_ > 0 ? 100.0 * tbps / copy_tbps_ : 0.0});
      print(rows_.back());
    };
    record(config);
    if (sweep)
      for (int c = 0; c < num_configs; ++c) record(c);
  }

  void measure_copy() {
    const std::size_t bytes = std::size_t{2} << 30;
    DeviceBuffer a(bytes), b(bytes);
    TS_CUDA_CHECK(cudaMemset(a.get(), 1, bytes));
    const Timing t = time(
        [&] { return cudaMemcpyAsync(b.get(), a.get(), bytes, cudaMemcpyDeviceToDevice, nullptr); },
        std::max(20, runs_ / 4));
    copy_tbps_ = 2.0 * static_cast<double>(bytes) / (t.median_us * 1e-6) / 1e12;
    rows_.push_back({"device_copy", "2GiB", "u8", -1, true, t, 2.0 * bytes, copy_tbps_, 100.0});
    print(rows_.back());
  }

  void print(const Row& r) const {
    std::printf(
        "%-14s %-22s %-5s cfg=%2d%s median=%9.2f us  p10=%9.2f  p90=%9.2f  %6.3f TB/s  %5.1f%% of "
        "copy\n",
        r.op.c_str(), r.shape.c_str(), r.dtype.c_str(), r.config, r.is_default ? "*" : " ",
        r.t.median_us, r.t.p10_us, r.t.p90_us, r.tbps, r.pct_copy);
    std::fflush(stdout);
  }

  void write_json(const char* path, const char* device) const {
    FILE* f = std::fopen(path, "w");
    if (!f) {
      std::fprintf(stderr, "cannot write %s\n", path);
      return;
    }
    std::fprintf(f,
                 "{\"device\": \"%s\", \"copy_tbps\": %.4f, \"method\": \"cuda events, L2 flushed "
                 "by a 256 MiB memset before each run, median of %d\", \"rows\": [\n",
                 device, copy_tbps_, runs_);
    for (std::size_t i = 0; i < rows_.size(); ++i) {
      const Row& r = rows_[i];
      std::fprintf(f,
                   "  {\"op\": \"%s\", \"shape\": \"%s\", \"dtype\": \"%s\", \"config\": %d, "
                   "\"is_default\": %s, \"median_us\": %.3f, \"p10_us\": %.3f, \"p90_us\": %.3f, "
                   "\"bytes\": %.0f, \"tbps\": %.4f, \"pct_of_copy\": %.2f}%s\n",
                   r.op.c_str(), r.shape.c_str(), r.dtype.c_str(), r.config,
                   r.is_default ? "true" : "false", r.t.median_us, r.t.p10_us, r.t.p90_us, r.bytes,
                   r.tbps, r.pct_copy, i + 1 < rows_.size() ? "," : "");
    }
    std::fprintf(f, "]}\n");
    std::fclose(f);
  }

  /// Best-vs-default summary per workload (printed last: the tail of the output).
  void summary() const {
    std::printf("\nSUMMARY (default config vs best config), copy = %.3f TB/s\n", copy_tbps_);
    for (std::size_t i = 0; i < rows_.size(); ++i) {
      if (!rows_[i].is_default || rows_[i].op == "device_copy") continue;
      const Row& d = rows_[i];
      const Row* best = &d;
      for (std::size_t j = i + 1; j < rows_.size() && !rows_[j].is_default; ++j)
        if (rows_[j].t.median_us < best->t.median_us) best = &rows_[j];
      std::printf(
          "%-14s %-22s %-5s default %8.2f us %6.3f TB/s %5.1f%% | best cfg %d %8.2f us %5.1f%%\n",
          d.op.c_str(), d.shape.c_str(), d.dtype.c_str(), d.t.median_us, d.tbps, d.pct_copy,
          best->config, best->t.median_us, best->pct_copy);
    }
  }

 private:
  int runs_;
  DeviceBuffer flush_;
  cudaEvent_t start_{}, stop_{};
  double copy_tbps_ = 0;
  std::vector<Row> rows_;
};

std::string shape2(std::int64_t m, std::int64_t n) {
  return std::to_string(m) + "x" + std::to_string(n);
}

void bench_row_ops(Bench& bench, bool sweep) {
  struct Work {
    std::int64_t m, n;
    DType dtype;
  };
  const Work norm_work[] = {{16384, 8192, DType::bf16}, {8192, 4096, DType::bf16},
                            {16384, 8192, DType::f16},  {16384, 8192, DType::f32},
                            {32, 4096, DType::bf16},    {1, 4096, DType::bf16},
                            {1, 8192, DType::bf16},     {4096, 5120, DType::bf16}};
  for (const Work& w : norm_work) {
    const std::size_t es = dtype_size(w.dtype);
    auto x_host = random_buffer(w.dtype, w.m * w.n, -3, 3, 1);
    auto p_host = random_buffer(w.dtype, w.n, 0.5, 1.5, 2);
    DeviceBuffer x(x_host.size()), y(x_host.size()), wt(p_host.size()), b(p_host.size());
    x.upload(x_host.data());
    wt.upload(p_host.data());
    b.upload(p_host.data());
    const double mn = static_cast<double>(w.m * w.n);
    bench.add(
        "rms_norm", shape2(w.m, w.n), w.dtype, -1, (2 * mn + w.n) * es,
        [&](int c) {
          return kernels::rms_norm_launch(
              {x.get(), y.get(), wt.get(), w.m, w.n, w.n, w.n, 1e-6f, w.dtype, c}, nullptr);
        },
        kernels::rms_norm_num_configs(), sweep);
    bench.add(
        "layer_norm", shape2(w.m, w.n), w.dtype, -1, (2 * mn + 2 * w.n) * es,
        [&](int c) {
          return kernels::layer_norm_launch(
              {x.get(), y.get(), wt.get(), b.get(), w.m, w.n, w.n, w.n, 1e-5f, w.dtype, c},
              nullptr);
        },
        kernels::layer_norm_num_configs(), sweep);
  }
  const Work softmax_work[] = {
      {16384, 8192, DType::bf16}, {8192, 4096, DType::bf16},   {16384, 8192, DType::f32},
      {4096, 32768, DType::bf16}, {1024, 131072, DType::bf16}, {32, 131072, DType::bf16},
      {1, 131072, DType::bf16},   {32, 4096, DType::bf16},     {1, 4096, DType::bf16}};
  for (const Work& w : softmax_work) {
    const std::size_t es = dtype_size(w.dtype);
    auto x_host = random_buffer(w.dtype, w.m * w.n, -8, 8, 3);
    DeviceBuffer x(x_host.size()), y(x_host.size());
    x.upload(x_host.data());
    bench.add(
        "softmax", shape2(w.m, w.n), w.dtype, -1, 2.0 * w.m * w.n * es,
        [&](int c) {
          return kernels::softmax_launch({x.get(), y.get(), w.m, w.n, w.n, w.n, w.dtype, c},
                                         nullptr);
        },
        kernels::softmax_num_configs(), sweep);
  }
  // SiluAndMul: n is the output width (input [m, 2n]).
  const Work silu_work[] = {{16384, 8192, DType::bf16},
                            {8192, 14336, DType::bf16},
                            {16384, 8192, DType::f32},
                            {32, 14336, DType::bf16},
                            {1, 14336, DType::bf16}};
  for (const Work& w : silu_work) {
    const std::size_t es = dtype_size(w.dtype);
    auto x_host = random_buffer(w.dtype, 2 * w.m * w.n, -6, 6, 4);
    DeviceBuffer x(x_host.size()), y(x_host.size() / 2);
    x.upload(x_host.data());
    bench.add(
        "silu_and_mul", shape2(w.m, 2 * w.n), w.dtype, -1, 3.0 * w.m * w.n * es,
        [&](int c) {
          return kernels::gated_mul_launch({x.get(), y.get(), w.m, w.n, 2 * w.n, w.n, w.dtype, c},
                                           nullptr);
        },
        kernels::gated_mul_num_configs(), sweep);
  }
}

void bench_rope(Bench& bench, bool sweep) {
  const std::int64_t hq = 32, hk = 8, d = 128, max_pos = 8192;
  for (std::int64_t tokens : {8192, 32, 1}) {
    const DType dtype = DType::bf16;
    const std::size_t es = dtype_size(dtype);
    const std::int64_t width = (hq + hk) * d;
    auto qk_host = random_buffer(dtype, tokens * width, -2, 2, 5);
    std::vector<float> cache(static_cast<std::size_t>(max_pos * d / 2), 0.5f);
    std::vector<std::int64_t> pos(static_cast<std::size_t>(tokens));
    for (std::int64_t t = 0; t < tokens; ++t) pos[t] = (t * 7919) % max_pos;
    DeviceBuffer qk(qk_host.size()), cos(cache.size() * 4), sin(cache.size() * 4),
        pos_dev(pos.size() * 8);
    qk.upload(qk_host.data());
    cos.upload(cache.data());
    sin.upload(cache.data());
    pos_dev.upload(pos.data());
    kernels::RopeArgs a;
    a.q = qk.get();
    a.q_out = qk.get();
    a.k = static_cast<std::uint8_t*>(qk.get()) + hq * d * es;
    a.k_out = const_cast<void*>(a.k);
    a.positions = static_cast<const std::int64_t*>(pos_dev.get());
    a.cos = static_cast<const float*>(cos.get());
    a.sin = static_cast<const float*>(sin.get());
    a.tokens = tokens, a.q_heads = hq, a.k_heads = hk, a.head_dim = d;
    a.q_token_stride = a.k_token_stride = width;
    a.q_head_stride = a.k_head_stride = d;
    a.max_position = max_pos;
    a.dtype = dtype;
    const double bytes = 2.0 * tokens * width * es + tokens * 8.0 + 2.0 * tokens * (d / 2) * 4.0;
    char shape[64];
    std::snprintf(shape, sizeof shape, "T%lld,Hq32,Hk8,D128", static_cast<long long>(tokens));
    bench.add(
        "rope(inplace)", shape, dtype, -1, bytes,
        [&](int c) {
          kernels::RopeArgs b = a;
          b.config = c;
          return kernels::rope_launch(b, nullptr);
        },
        kernels::rope_num_configs(), sweep);
  }
}

}  // namespace
}  // namespace ts::gpu_test

int main(int argc, char** argv) {
  using namespace ts::gpu_test;
  const char* json = nullptr;
  int runs = 100;
  bool sweep = true;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--json") && i + 1 < argc)
      json = argv[++i];
    else if (!std::strcmp(argv[i], "--runs") && i + 1 < argc)
      runs = std::max(50, std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "--no-sweep"))
      sweep = false;
    else {
      std::fprintf(stderr, "usage: %s [--json PATH] [--runs N>=50] [--no-sweep]\n", argv[0]);
      return 2;
    }
  }
  cudaDeviceProp prop{};
  TS_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s, %d SMs, L2 %d MB; rows marked * use the default config\n", prop.name,
              prop.multiProcessorCount, prop.l2CacheSize >> 20);
  Bench bench(runs);
  bench.measure_copy();
  bench_row_ops(bench, sweep);
  bench_rope(bench, sweep);
  bench.summary();
  if (json) {
    bench.write_json(json, prop.name);
    std::printf("wrote %s\n", json);
  }
  return 0;
}
