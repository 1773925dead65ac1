// The compiled form of one manifest entry: every name resolved to a slot, every expression
// parsed into one arena and statically typed. Built once by the loader (manifest.cpp), read by the
// binder (binder.cpp) on every call.
#pragma once

#include <algorithm>
#include <span>
#include <string>
#include <vector>

#include "expr.hpp"
#include "ts/spec/binder.hpp"
#include "ts/spec/manifest.hpp"

namespace ts::spec::detail {

struct SourceLoc {
  int line = 0;  // 1-based
  int column = 0;
};

// Upper bounds on declarations per op, so binding can keep its state on the stack.
inline constexpr size_t kMaxVars = 32;  // Dim, Dims and DType variables, each kind
inline constexpr size_t kMaxParams = 32;
inline constexpr size_t kMaxTensors = 32;  // inputs + outputs

/// A vector with inline storage of fixed capacity: no allocation on the binder's hot path.
template <class T, size_t N>
class FixedVec {
 public:
  void assign(size_t n, const T& v) {
    TS_CHECK(n <= N, "FixedVec capacity exceeded");
    size_ = n;
    std::fill(data_, data_ + n, v);
  }
  void resize(size_t n) { assign(n, T{}); }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  size_t size() const { return size_; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  operator std::span<const T>() const { return {data_, size_}; }

 private:
  T data_[N] = {};
  size_t size_ = 0;
};

enum class ParamKind : uint8_t { bool_, int_, float_, enum_, int_list };

struct ParamDecl {
  std::string name;
  ParamKind kind = ParamKind::int_;
  bool optional = false;             // admits None
  std::vector<std::string> choices;  // enum_
  bool has_default = false;
  ParamValue default_value;
};

// any: every stride; contiguous: dense row-major; rows: last dim contiguous, the kernel reads
// [prod(leading dims), last dim] with one row stride (the op layer copies an input whose leading
// dims do not collapse); strided: last dim contiguous, the kernel takes every stride.
enum class Layout : uint8_t { any, contiguous, rows, strided };

struct TensorDecl {
  std::string name;
  bool optional = false;
  bool mutated = false;
  Layout layout = Layout::any;
  int dtype_var = -1;  // index of a DType variable, or -1 for fixed_dtype
  DType fixed_dtype = DType::float32;
  int32_t shape = -1;                       // root of a Type::shape expression in the pool
  int32_t range_low = -1, range_high = -1;  // integer inputs' values: [low, high), or -1
  SourceLoc loc;
};

struct DTypeVarDecl {
  std::string name;
  DTypeSet allowed;
};

struct ConstraintDecl {
  int32_t expr = -1;
  std::string message;  // optional explanation from the spec
};

struct WorkloadRow {
  std::string label;
  SourceLoc loc;
  std::vector<int64_t> dims;  // per Dim variable
  std::vector<uint8_t> dims_given;
  std::vector<std::vector<int64_t>> dim_lists;  // per Dims variable
  std::vector<uint8_t> dim_lists_given;
  std::vector<ParamValue> params;               // monostate where the row keeps the default
  std::vector<uint8_t> present;                 // per input
  std::vector<std::vector<DType>> dtype_cases;  // each: one dtype per DType variable
};

struct OpModel {
  std::string name, family, ref_api, doc, file;
  OpStatus status = OpStatus::spec_only;
  SourceLoc loc;

  std::vector<std::string> dim_names;
  std::vector<std::string> dim_list_names;
  std::vector<DTypeVarDecl> dtype_vars;
  std::vector<ParamDecl> params;
  std::vector<TensorDecl> inputs, outputs;
  std::vector<ConstraintDecl> constraints;
  std::vector<WorkloadRow> workloads;
  std::vector<WorkloadRow> cases;  // contract-test calls beyond the workloads (kernel paths)
  std::string reference;           // Python expression or module:function (tileops.testing)
  std::vector<std::pair<DType, double>> tolerance;  // per output dtype: rtol = atol vs fp64
  int32_t flops = -1;
  int32_t bytes = -1;  // -1: compulsory traffic
  bool tensor_cores = false;
  int compute_dtype_var = -1;  // -1: the dtype of the first input
  std::vector<std::string> kernels;
  ExprPool pool;

  // Descriptive copies for the public accessors.
  std::vector<VarInfo> var_infos;
  std::vector<ParamInfo> param_infos;
  std::vector<TensorInfo> input_infos, output_infos;
  std::vector<ConstraintInfo> constraint_infos;
  RooflineInfo roofline_info;
};

/// Converts a param value to an expression Value (strings point into `v`).
Value param_to_value(const ParamValue& v);

}  // namespace ts::spec::detail
