// `_tskernels`: launches the CUDA kernels of kernels/ from Python without linking libtorch.
//
// Tensors cross as raw device pointers (torch's `t.data_ptr()`), sizes and strides in elements,
// a dtype code (0 f16, 1 bf16, 2 f32; ts::kernels::DType) and the caller's stream handle
// (`torch.cuda.current_stream().cuda_stream`). The op classes of python/tileops have already
// checked every shape, dtype and stride against the spec (the binder in tileops._core), so these
// functions only fill the launcher's Args and translate a failed launch into a Python exception:
//
//   _tskernels.rms_norm(x, y, w, rows, cols, x_stride, y_stride, eps, dtype, config, stream)
//   -> raises _tskernels.LaunchError("RMSNormFwdOp: rms_norm_launch failed: invalid argument
//      (cudaErrorInvalidValue)") when the launcher refuses or the launch fails.
//
// Nothing here allocates device memory or synchronizes, so a call can be captured in a CUDA graph.
// Linked against the static CUDA runtime: this module needs no libcudart.so of its own.
//
// Compiled a second time with TS_KERNELS_REFERENCE=1 as `_tskernels_ref`: the same functions over
// the kernels' fp64 CPU references (<op>_reference, host pointers, the stream ignored), so the op
// layer's whole launch path (pointers, strides, dtype codes, params) is tested on a CPU machine.
#include <cuda_runtime_api.h>
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <string>
#include <vector>

#include "activation/silu_and_mul.hpp"
#include "attention/attention.hpp"
#include "gemm/gemm.hpp"
#include "norm/layer_norm.hpp"
#include "norm/rms_norm.hpp"
#include "rope/rope.hpp"
#include "softmax/softmax.hpp"

#ifndef TS_KERNELS_REFERENCE
#define TS_KERNELS_REFERENCE 0
#endif
#if TS_KERNELS_REFERENCE
#define TS_KERNELS_MODULE _tskernels_ref
// The references validate nothing: the op layer only passes calls the spec accepted.
#define TS_RUN(kernel, args, stream) \
  ((void)(stream), ts::kernels::kernel##_reference(args), cudaSuccess)
#define TS_NUM_CONFIGS(kernel) (+[] { return 1; })  // one way to compute a reference
#else
#define TS_NUM_CONFIGS(kernel) ts::kernels::kernel##_num_configs
#define TS_KERNELS_MODULE _tskernels
#define TS_RUN(kernel, args, stream) ts::kernels::kernel##_launch(args, stream)
#endif

namespace nb = nanobind;
using ts::kernels::DType;

namespace {

PyObject* launch_error = nullptr;

// Pointers travel as Python ints (uintptr_t); 0 is nullptr.
template <class T = void>
T* ptr(std::uintptr_t p) {
  return reinterpret_cast<T*>(p);
}

cudaStream_t stream_of(std::uintptr_t s) {
  return reinterpret_cast<cudaStream_t>(s);
}

DType dtype_of(int code) {
  if (code < 0 || code > 2) {
    PyErr_SetString(PyExc_ValueError, ("unknown kernel dtype code " + std::to_string(code) +
                                       " (0 float16, 1 bfloat16, 2 float32)")
                                          .c_str());
    throw nb::python_error();
  }
  return static_cast<DType>(code);
}

/// Raises LaunchError naming the op and the launcher when `err` is not cudaSuccess.
void check(cudaError_t err, const char* op, const char* launcher) {
  if (err == cudaSuccess) return;
  const std::string message = std::string(op) + ": " + launcher +
                              " failed: " + cudaGetErrorString(err) + " (" + cudaGetErrorName(err) +
                              ")";
  PyErr_SetString(launch_error, message.c_str());
  throw nb::python_error();
}

// One entry per kernel this module was built with: name -> number of configs.
struct KernelInfo {
  const char* name;
  const char* op;
  int (*num_configs)();
};

const std::vector<KernelInfo>& kernel_table() {
  static const std::vector<KernelInfo> table = {
      {"rms_norm", "RMSNormFwdOp", TS_NUM_CONFIGS(rms_norm)},
      {"layer_norm", "LayerNormFwdOp", TS_NUM_CONFIGS(layer_norm)},
      {"softmax", "SoftmaxFwdOp", TS_NUM_CONFIGS(softmax)},
      {"silu_and_mul", "SiluAndMulFwdOp", TS_NUM_CONFIGS(silu_and_mul)},
      {"rope_neox", "RoPENeoXFwdOp", TS_NUM_CONFIGS(rope)},
      {"gemm", "GEMMFwdOp", TS_NUM_CONFIGS(gemm)},
      {"attention", "MultiHeadAttentionFwdOp", TS_NUM_CONFIGS(attention)},
  };
  return table;
}

void copy4(const std::vector<std::int64_t>& from, std::int64_t (&to)[4], const char* what) {
  if (from.size() != 4) {
    PyErr_SetString(
        PyExc_ValueError,
        (std::string(what) + ": expected 4 strides, got " + std::to_string(from.size())).c_str());
    throw nb::python_error();
  }
  for (int i = 0; i < 4; ++i) to[i] = from[static_cast<size_t>(i)];
}

/// Defines m.<name>(x, y, rows, cols, x_row_stride, y_row_stride, dtype, config, stream) for an
/// op of one input and one output: fills Args and hands it to run(args, stream).
template <class Args, class Run>
void def_rows_op(nb::module_& m, const char* name, Run run) {
  m.def(
      name,
      [run](std::uintptr_t x, std::uintptr_t y, std::int64_t rows, std::int64_t cols,
            std::int64_t x_stride, std::int64_t y_stride, int dtype, int config,
            std::uintptr_t stream) {
        Args a;
        a.x = ptr(x);
        a.y = ptr(y);
        a.rows = rows;
        a.cols = cols;
        a.x_row_stride = x_stride;
        a.y_row_stride = y_stride;
        a.dtype = dtype_of(dtype);
        a.config = config;
        run(a, stream_of(stream));
      },
      nb::arg("x"), nb::arg("y"), nb::arg("rows"), nb::arg("cols"), nb::arg("x_row_stride"),
      nb::arg("y_row_stride"), nb::arg("dtype"), nb::arg("config"), nb::arg("stream"));
}

}  // namespace

NB_MODULE(TS_KERNELS_MODULE, m) {
  m.doc() = "CUDA launchers of the TileOPs kernels (pointers, sizes, strides, stream; no libtorch)";
  nb::set_leak_warnings(false);  // functions stay referenced by tileops op instances at exit
  launch_error = PyErr_NewException("_tskernels.LaunchError", PyExc_RuntimeError, nullptr);
  m.attr("LaunchError") = nb::handle(launch_error);

  m.def(
      "kernels",
      [] {
        nb::dict d;
        for (const auto& k : kernel_table()) d[k.name] = k.op;
        return d;
      },
      "Kernel name -> the op it serves, for every kernel compiled into this module");
  m.def(
      "num_configs",
      [](const std::string& name) {
        for (const auto& k : kernel_table())
          if (name == k.name) return k.num_configs();
        PyErr_SetString(PyExc_KeyError, ("no kernel named '" + name + "' in _tskernels").c_str());
        throw nb::python_error();
      },
      nb::arg("kernel"), "Number of launch configurations of a kernel (valid `config` values)");
  m.attr("reference") = static_cast<bool>(TS_KERNELS_REFERENCE);
#if !TS_KERNELS_REFERENCE
  m.def("cuda_runtime_version", [] {
    int v = 0;
    cudaRuntimeGetVersion(&v);
    return v;
  });
#endif

  m.def(
      "rms_norm",
      [](std::uintptr_t x, std::uintptr_t y, std::uintptr_t w, std::int64_t rows, std::int64_t cols,
         std::int64_t x_stride, std::int64_t y_stride, float eps, int dtype, int config,
         std::uintptr_t stream) {
        ts::kernels::RmsNormArgs a;
        a.x = ptr(x);
        a.y = ptr(y);
        a.w = ptr(w);
        a.rows = rows;
        a.cols = cols;
        a.x_row_stride = x_stride;
        a.y_row_stride = y_stride;
        a.eps = eps;
        a.dtype = dtype_of(dtype);
        a.config = config;
        check(TS_RUN(rms_norm, a, stream_of(stream)), "RMSNormFwdOp", "rms_norm_launch");
      },
      nb::arg("x"), nb::arg("y"), nb::arg("w"), nb::arg("rows"), nb::arg("cols"),
      nb::arg("x_row_stride"), nb::arg("y_row_stride"), nb::arg("eps"), nb::arg("dtype"),
      nb::arg("config"), nb::arg("stream"));

  m.def(
      "layer_norm",
      [](std::uintptr_t x, std::uintptr_t y, std::uintptr_t w, std::uintptr_t b, std::int64_t rows,
         std::int64_t cols, std::int64_t x_stride, std::int64_t y_stride, float eps, int dtype,
         int config, std::uintptr_t stream) {
        ts::kernels::LayerNormArgs a;
        a.x = ptr(x);
        a.y = ptr(y);
        a.w = ptr(w);
        a.b = ptr(b);
        a.rows = rows;
        a.cols = cols;
        a.x_row_stride = x_stride;
        a.y_row_stride = y_stride;
        a.eps = eps;
        a.dtype = dtype_of(dtype);
        a.config = config;
        check(TS_RUN(layer_norm, a, stream_of(stream)), "LayerNormFwdOp", "layer_norm_launch");
      },
      nb::arg("x"), nb::arg("y"), nb::arg("w"), nb::arg("b"), nb::arg("rows"), nb::arg("cols"),
      nb::arg("x_row_stride"), nb::arg("y_row_stride"), nb::arg("eps"), nb::arg("dtype"),
      nb::arg("config"), nb::arg("stream"));

  // Softmax and SiluAndMul take the same arguments: x [rows, cols(*2 for SiluAndMul)] and
  // y [rows, cols], each with its own row stride.
  def_rows_op<ts::kernels::SoftmaxArgs>(m, "softmax", [](const auto& a, auto stream) {
    check(TS_RUN(softmax, a, stream), "SoftmaxFwdOp", "softmax_launch");
  });
  def_rows_op<ts::kernels::SiluAndMulArgs>(m, "silu_and_mul", [](const auto& a, auto stream) {
    check(TS_RUN(silu_and_mul, a, stream), "SiluAndMulFwdOp", "silu_and_mul_launch");
  });

  // In place (q_out == q, k_out == k) as the spec's RoPENeoXFwdOp says; cos_sin_cache rows hold
  // cos then sin: [max_position, rotary_dim] fp32.
  m.def(
      "rope_neox",
      [](std::uintptr_t positions, std::uintptr_t q, std::uintptr_t k, std::uintptr_t cos_sin,
         std::int64_t tokens, std::int64_t q_heads, std::int64_t k_heads, std::int64_t head_dim,
         std::int64_t rotary_dim, std::int64_t q_token_stride, std::int64_t q_head_stride,
         std::int64_t k_token_stride, std::int64_t k_head_stride, std::int64_t max_position,
         std::int64_t cache_row_stride, int dtype, int config, std::uintptr_t stream) {
        ts::kernels::RopeArgs a;
        a.positions = ptr<const std::int64_t>(positions);
        a.q = ptr(q);
        a.q_out = ptr(q);
        a.k = ptr(k);
        a.k_out = ptr(k);
        a.cos = ptr<const float>(cos_sin);
        a.sin = cos_sin ? ptr<const float>(cos_sin) + rotary_dim / 2 : nullptr;
        a.tokens = tokens;
        a.q_heads = q_heads;
        a.k_heads = k_heads;
        a.head_dim = head_dim;
        a.rotary_dim = rotary_dim;
        a.q_token_stride = q_token_stride;
        a.q_head_stride = q_head_stride;
        a.k_token_stride = k_token_stride;
        a.k_head_stride = k_head_stride;
        a.max_position = max_position;
        a.cache_row_stride = cache_row_stride;
        a.dtype = dtype_of(dtype);
        a.config = config;
        check(TS_RUN(rope, a, stream_of(stream)), "RoPENeoXFwdOp", "rope_launch");
      },
      nb::arg("positions"), nb::arg("q"), nb::arg("k"), nb::arg("cos_sin_cache"), nb::arg("tokens"),
      nb::arg("q_heads"), nb::arg("k_heads"), nb::arg("head_dim"), nb::arg("rotary_dim"),
      nb::arg("q_token_stride"), nb::arg("q_head_stride"), nb::arg("k_token_stride"),
      nb::arg("k_head_stride"), nb::arg("max_position"), nb::arg("cache_row_stride"),
      nb::arg("dtype"), nb::arg("config"), nb::arg("stream"));

  // Row-major storage with leading dims in elements; a is [M, K] ([K, M] when trans_a), b is
  // [K, N] ([N, K] when trans_b), d is [M, N].
  m.def(
      "gemm",
      [](std::uintptr_t a_ptr, std::uintptr_t b_ptr, std::uintptr_t d_ptr, std::int64_t M,
         std::int64_t N, std::int64_t K, std::int64_t lda, std::int64_t ldb, std::int64_t ldd,
         bool trans_a, bool trans_b, int dtype, int config, std::uintptr_t stream) {
        ts::kernels::GemmArgs g{};
        g.a = ptr(a_ptr);
        g.b = ptr(b_ptr);
        g.d = ptr(d_ptr);
        g.M = M;
        g.N = N;
        g.K = K;
        g.lda = lda;
        g.ldb = ldb;
        g.ldd = ldd;
        g.trans_a = trans_a;
        g.trans_b = trans_b;
        g.dtype = dtype_of(dtype);
        g.config = config;
        check(TS_RUN(gemm, g, stream_of(stream)), "GEMMFwdOp", "gemm_launch");
      },
      nb::arg("a"), nb::arg("b"), nb::arg("d"), nb::arg("M"), nb::arg("N"), nb::arg("K"),
      nb::arg("lda"), nb::arg("ldb"), nb::arg("ldd"), nb::arg("trans_a"), nb::arg("trans_b"),
      nb::arg("dtype"), nb::arg("config"), nb::arg("stream"));

  // SDPA layout [B, H, S, D] for q, k, v, o with strides in elements (4 each).
  m.def(
      "attention",
      [](std::uintptr_t q, std::uintptr_t k, std::uintptr_t v, std::uintptr_t o, std::int64_t B,
         std::int64_t Hq, std::int64_t Hkv, std::int64_t Sq, std::int64_t Skv, std::int64_t D,
         const std::vector<std::int64_t>& q_strides, const std::vector<std::int64_t>& k_strides,
         const std::vector<std::int64_t>& v_strides, const std::vector<std::int64_t>& o_strides,
         float scale, bool is_causal, int dtype, int config, std::uintptr_t stream) {
        ts::kernels::AttentionArgs a{};
        a.q = ptr(q);
        a.k = ptr(k);
        a.v = ptr(v);
        a.o = ptr(o);
        a.B = B;
        a.Hq = Hq;
        a.Hkv = Hkv;
        a.Sq = Sq;
        a.Skv = Skv;
        a.D = D;
        copy4(q_strides, a.q_strides, "q_strides");
        copy4(k_strides, a.k_strides, "k_strides");
        copy4(v_strides, a.v_strides, "v_strides");
        copy4(o_strides, a.o_strides, "o_strides");
        a.scale = scale;
        a.is_causal = is_causal;
        a.dtype = dtype_of(dtype);
        a.config = config;
        check(TS_RUN(attention, a, stream_of(stream)), "MultiHeadAttentionFwdOp",
              "attention_launch");
      },
      nb::arg("q"), nb::arg("k"), nb::arg("v"), nb::arg("o"), nb::arg("B"), nb::arg("Hq"),
      nb::arg("Hkv"), nb::arg("Sq"), nb::arg("Skv"), nb::arg("D"), nb::arg("q_strides"),
      nb::arg("k_strides"), nb::arg("v_strides"), nb::arg("o_strides"), nb::arg("scale"),
      nb::arg("is_causal"), nb::arg("dtype"), nb::arg("config"), nb::arg("stream"));
}
