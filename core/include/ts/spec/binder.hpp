// Binding a concrete call to an op's signature: every forall variable gets a value, every
// constraint is checked, and the outputs' shapes and dtypes come out. This runs on every op call,
// so it allocates little and formats text only on failure.
//
//   int64_t a_shape[] = {1024, 512}, a_strides[] = {512, 1};
//   int64_t b_shape[] = {1024, 512}, b_strides[] = {512, 1};
//   ts::spec::TensorArg args[] = {{DType::bfloat16, a_shape, a_strides},
//                                 {DType::bfloat16, b_shape, b_strides}};
//   auto call = bind_call(*gemm, args, {});   // trans_b defaults to true
//   call->outputs[0].shape == {1024, 1024}
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "ts/error.hpp"
#include "ts/spec/dtype.hpp"
#include "ts/spec/manifest.hpp"

namespace ts::spec {

struct NoneValue {
  bool operator==(const NoneValue&) const = default;
};

/// A param value. std::monostate means "not given": the default applies.
using ParamValue = std::variant<std::monostate, NoneValue, bool, int64_t, double, std::string,
                                std::vector<int64_t>>;

/// One input tensor as the caller sees it. `present = false` passes None for an optional input.
/// `address` (bytes, 0 = not known) lets the binder refuse a call whose written (mutated) input
/// shares memory with another input: q and k the same tensor would be rotated twice.
struct TensorArg {
  DType dtype = DType::float32;
  std::span<const int64_t> shape;
  std::span<const int64_t> strides;  // in elements; empty means contiguous
  bool present = true;
  std::uintptr_t address = 0;
};

struct OutputDesc {
  DType dtype;
  std::vector<int64_t> shape;
};

/// Everything known about a call after binding, indexed like the op's declarations.
struct BoundCall {
  std::vector<int64_t> dims;                    // one per Dim variable, in declaration order
  std::vector<uint8_t> dims_bound;              // 0 for a Dim only an absent optional input has
  std::vector<std::vector<int64_t>> dim_lists;  // one per Dims variable
  std::vector<DType> dtypes;                    // one per DType variable
  std::vector<ParamValue> params;               // defaults filled in
  std::vector<uint8_t> present;                 // per input
  std::vector<OutputDesc> outputs;
  std::vector<DType> tensor_dtypes;   // inputs then outputs
  std::vector<int64_t> tensor_numel;  // inputs then outputs; -1 for an absent optional input
};

/// Binds `inputs` (in declaration order, one per declared input) and `params` (in declaration
/// order; fewer than declared means the rest take their defaults) to `op`. A mutated input must
/// be writable element by element: no broadcast (stride 0) dimension, no memory shared with
/// another input (checked where addresses are given). `outputs`, when given (one per declared
/// output), are the caller's buffers the call will write instead of fresh ones: each must have
/// the bound dtype and shape, no two of its indices may address one element, and it may share no
/// memory with an input.
Expected<BoundCall> bind_call(const OpSpec& op, std::span<const TensorArg> inputs,
                              std::span<const ParamValue> params,
                              std::optional<std::span<const TensorArg>> outputs = std::nullopt);

/// Value of a Dim variable by name after binding (for messages, tests and tools).
std::optional<int64_t> dim_value(const OpSpec& op, const BoundCall& call, std::string_view name);

/// Canonical text of a param value: true, 3, 1e-06, "tanh", [1, 2], none.
std::string param_value_text(const ParamValue& v);

/// The roofline counts of a bound call, evaluated from the spec's formulas.
struct RooflineCounts {
  int64_t flops = 0;
  int64_t bytes = 0;
  bool tensor_cores = false;  // compute: tensor
  DType compute_dtype = DType::float32;
};
Expected<RooflineCounts> roofline_counts(const OpSpec& op, const BoundCall& call);

/// The default of param `index`, nullopt when the param is required.
std::optional<ParamValue> param_default(const OpSpec& op, size_t index);

/// Per input, the [low, high) its values lie in where the spec declares a `range` (integer
/// inputs that index: positions, token ids), evaluated for a bound call; nullopt elsewhere.
Expected<std::vector<std::optional<std::pair<int64_t, int64_t>>>> input_ranges(
    const OpSpec& op, const BoundCall& call);

/// The concrete calls an op's workloads describe: one per workload row and dtype case.
struct WorkloadCall {
  std::string label;                               // the row's label
  std::string dtype_case;                          // "T=bfloat16"
  std::vector<std::vector<int64_t>> input_shapes;  // empty for absent optional inputs
  std::vector<DType> input_dtypes;
  std::vector<uint8_t> input_present;
  std::vector<ParamValue> params;
  BoundCall bound;
};
Expected<std::vector<WorkloadCall>> workload_calls(const OpSpec& op);

/// A workload row that does not bind, located at the row in its spec file.
struct WorkloadProblem {
  int line = 0, column = 0;
  std::string message;
};
/// Every row and dtype case that binds; each one that does not is in `problems` instead.
std::vector<WorkloadCall> workload_calls(const OpSpec& op, std::vector<WorkloadProblem>& problems);
/// The same for the entry's contract `cases` (a row without dtype cases runs every dtype of the
/// first DType variable).
std::vector<WorkloadCall> case_calls(const OpSpec& op, std::vector<WorkloadProblem>& problems);

/// A call described by variable values instead of tensors, for generated contract tests and
/// tools: every Dim and Dims the inputs' shapes use, one dtype per DType variable, params by name
/// (the rest keep their defaults), and the optional inputs passed as None. The inputs' shapes
/// are evaluated from the spec and the call is bound, so `bound.outputs` holds the outputs; a
/// violated constraint fails with the binder's message.
///   instantiate_call(gemm, {.dims = {{"M", 3}, {"N", 5}, {"K", 7}},
///                           .dtypes = {{"T", DType::bfloat16}}})->input_shapes == {{3, 7}, {5, 7}}
struct CallValues {
  std::vector<std::pair<std::string, int64_t>> dims;
  std::vector<std::pair<std::string, std::vector<int64_t>>> dim_lists;
  std::vector<std::pair<std::string, DType>> dtypes;
  std::vector<std::pair<std::string, ParamValue>> params;
  std::vector<std::string> absent;
};
Expected<WorkloadCall> instantiate_call(const OpSpec& op, const CallValues& values);

}  // namespace ts::spec
