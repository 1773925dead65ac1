// One calling convention for every kernel, and the table that finds them by name.
//
// A call is what the spec's binder accepted, in the spec's order: the inputs (an absent optional
// input has data == nullptr), the outputs, the params as typed values, a config index and the
// stream. Every kernel is reached through the same function type:
//
//   cudaError_t run(const KernelCall& call, cudaStream_t stream);
//
// and registers itself where it is defined, once for the CUDA launch (in its .cu) and once for
// its fp64 CPU reference (in its reference.cpp):
//
//   TS_REGISTER_KERNEL(cuda, rms_norm, "RMSNormFwdOp", rms_norm_run, rms_norm_num_configs);
//
// so the Python module and the tests find kernels by name without a hand-kept list. Each kernel's
// header turns a KernelCall into its own Args (sizes and strides in elements, checked against the
// spec before the call, re-checked by the launcher). Plain C++: safe to include without nvcc.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "common/dtype.hpp"

namespace ts::kernels {

constexpr int kMaxRank = 8;

/// Element types a call's tensors may have: the kernels' DType codes, then int64 (indices).
enum class ElemType : int { f16 = 0, bf16 = 1, f32 = 2, i64 = 3 };

/// One tensor of a call: pointer, element type, sizes and strides (elements), outermost first.
struct TensorArg {
  void* data = nullptr;  // nullptr: an optional input that is absent
  ElemType type = ElemType::f32;
  int rank = 0;
  std::int64_t sizes[kMaxRank] = {};
  std::int64_t strides[kMaxRank] = {};

  bool present() const { return data != nullptr; }
  std::int64_t size(int d) const { return sizes[d < 0 ? d + rank : d]; }
  std::int64_t stride(int d) const { return strides[d < 0 ? d + rank : d]; }
  std::int64_t numel() const {
    std::int64_t n = 1;
    for (int d = 0; d < rank; ++d) n *= sizes[d];
    return n;
  }
  template <class T = void>
  T* ptr() const {
    return static_cast<T*>(data);
  }
};

/// One spec param: none (an unset optional), bool, int or float.
struct ParamArg {
  enum class Kind : int { none, boolean, integer, real } kind = Kind::none;
  std::int64_t i = 0;  // boolean and integer
  double f = 0;        // real

  bool is_none() const { return kind == Kind::none; }
  double real() const { return kind == Kind::real ? f : static_cast<double>(i); }
  bool boolean() const { return kind != Kind::none && (kind == Kind::real ? f != 0 : i != 0); }
};

struct KernelCall {
  std::span<const TensorArg> inputs;   // the spec's inputs, in order
  std::span<const TensorArg> outputs;  // the spec's outputs, in order
  std::span<const ParamArg> params;    // the spec's params, in order
  int config = -1;                     // -1: the kernel's own choice
};

using KernelRun = cudaError_t (*)(const KernelCall&, cudaStream_t);

enum class Backend : int { cuda, reference };

struct KernelEntry {
  Backend backend;
  const char* name;  // "rms_norm"
  const char* op;    // the spec entry it serves: "RMSNormFwdOp"
  KernelRun run;
  int (*num_configs)();
};

/// Every kernel registered in this binary (both backends where both are linked).
inline std::vector<KernelEntry>& kernel_registry() {
  static std::vector<KernelEntry> entries;
  return entries;
}

inline const KernelEntry* find_kernel(Backend backend, std::string_view name) {
  for (const auto& e : kernel_registry())
    if (e.backend == backend && name == e.name) return &e;
  return nullptr;
}

struct KernelRegistrar {
  explicit KernelRegistrar(KernelEntry e) { kernel_registry().push_back(e); }
};

#define TS_REGISTER_KERNEL(backend, name, op, run, num_configs)                        \
  static const ::ts::kernels::KernelRegistrar ts_kernel_registrar_##backend##_##name { \
    { ::ts::kernels::Backend::backend, #name, op, run, num_configs }                   \
  }

/// The float DType of a tensor; nullopt for int64.
inline std::optional<DType> float_dtype(const TensorArg& t) {
  if (t.type == ElemType::i64) return std::nullopt;
  return static_cast<DType>(static_cast<int>(t.type));
}

/// A tensor seen as [rows, last dim] with one row stride: its leading dims must collapse into a
/// single stride (size-1 dims are skipped). nullopt when they do not.
struct RowView {
  std::int64_t rows = 1, cols = 1, row_stride = 1;
};
inline std::optional<RowView> row_view(const TensorArg& t) {
  RowView v;
  v.cols = t.rank ? t.size(-1) : 1;
  std::optional<std::int64_t> stride;
  for (int d = t.rank - 2; d >= 0; --d) {
    if (t.sizes[d] == 1) continue;
    if (!stride)
      stride = t.strides[d];
    else if (t.strides[d] != *stride * v.rows)
      return std::nullopt;
    v.rows *= t.sizes[d];
  }
  v.row_stride = stride.value_or(v.cols);
  return v;
}

/// The fields every row kernel's Args share (x, y, rows, cols, row strides, dtype, config) from
/// the call's first input x and first output y, each seen as [rows, last dim]: rows and cols are
/// y's (SiluAndMul's x rows are 2 * cols wide). nullopt when x or y does not collapse.
template <class Args>
std::optional<Args> row_args(const KernelCall& c) {
  if (c.inputs.empty() || c.outputs.empty()) return std::nullopt;
  const auto x = row_view(c.inputs[0]), y = row_view(c.outputs[0]);
  const auto dtype = float_dtype(c.inputs[0]);
  if (!x || !y || !dtype) return std::nullopt;
  Args a;
  a.x = c.inputs[0].data;
  a.y = c.outputs[0].data;
  a.rows = y->rows;
  a.cols = y->cols;
  a.x_row_stride = x->row_stride;
  a.y_row_stride = y->row_stride;
  a.dtype = *dtype;
  a.config = c.config;
  return a;
}

/// True when `call` has the spec's numbers of inputs, outputs and params.
inline bool has_arity(const KernelCall& call, std::size_t inputs, std::size_t outputs,
                      std::size_t params) {
  return call.inputs.size() == inputs && call.outputs.size() == outputs &&
         call.params.size() == params;
}

/// The registered entry points of a kernel whose header defines `std::optional<Args>
/// to_args(const KernelCall&)`: the CUDA launch, and the fp64 CPU reference (stream ignored).
/// A call the adapter cannot express is cudaErrorInvalidValue, as the launchers answer.
template <auto to_args, auto launch>
cudaError_t run_launch(const KernelCall& call, cudaStream_t stream) {
  const auto args = to_args(call);
  return args ? launch(*args, stream) : cudaErrorInvalidValue;
}
template <auto to_args, auto reference>
cudaError_t run_reference(const KernelCall& call, cudaStream_t) {
  const auto args = to_args(call);
  if (!args) return cudaErrorInvalidValue;
  reference(*args);
  return cudaSuccess;
}
// A reference computes one way: one config.
inline int one_config() {
  return 1;
}

}  // namespace ts::kernels
