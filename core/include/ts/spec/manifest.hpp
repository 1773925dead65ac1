// The op manifest: `specs/<family>.yaml`, one file per family, each mapping an op name to its
// entry (signature, workloads, roofline). Loading parses, resolves and type-checks every entry
// once; the result is immutable and cheap to bind calls against (ts/spec/binder.hpp).
//
//   std::vector<ts::spec::Diagnostic> diags;
//   auto manifest = ts::spec::load_manifest("specs", &diags);
//   if (!manifest) for (auto& d : diags) fmt::print("{}\n", d.str());
//   const ts::spec::OpSpec* gemm = manifest->find("GEMMFwdOp");
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ts/error.hpp"
#include "ts/spec/dtype.hpp"

namespace ts::spec {

namespace detail {
struct OpModel;
}

/// One located problem in a spec file: `specs/gemm.yaml:12:7: what was expected, what was found`.
struct Diagnostic {
  std::string file;
  int line = 0;    // 1-based
  int column = 0;  // 1-based
  std::string message;
  std::string str() const;
};

enum class OpStatus { implemented, spec_only };

/// A forall variable: `M: Dim`, `B: Dims` (any number of dims), `T: DType[float16 | bfloat16]`.
struct VarInfo {
  std::string name;
  std::string kind;  // as written: "Dim", "Dims", "DType[float16 | bfloat16]"
};

struct ParamInfo {
  std::string name;
  std::string type;  // canonical: bool, int, float, list[int], enum[a, b], optional[...]
  std::optional<std::string> default_value;  // canonical text; nullopt when required
};

struct TensorInfo {
  std::string name;
  std::string dtype;  // a dtype variable or a concrete dtype
  std::string shape;  // canonical shape expression, e.g. "Mat[trans_a, M, K]"
  bool optional = false;
  bool mutated = false;
  std::string layout;      // "any", "contiguous", "rows" or "strided" (last dim contiguous)
  bool has_range = false;  // values in a declared [low, high) (see input_ranges)
};

struct ConstraintInfo {
  std::string expr;
  std::string message;
};

struct RooflineInfo {
  std::string flops;
  std::string bytes;    // empty: compulsory traffic (inputs read once, outputs written once)
  std::string compute;  // "tensor" (tensor cores) or "simt" (CUDA cores)
};

/// One op's compiled entry. Copies share the same immutable model.
class OpSpec {
 public:
  explicit OpSpec(std::shared_ptr<const detail::OpModel> model) : model_(std::move(model)) {}

  const std::string& name() const;
  const std::string& family() const;
  const std::string& ref_api() const;
  OpStatus status() const;
  const std::string& file() const;
  int line() const;

  const std::vector<VarInfo>& vars() const;
  const std::vector<ParamInfo>& params() const;
  const std::vector<TensorInfo>& inputs() const;
  const std::vector<TensorInfo>& outputs() const;
  const std::vector<ConstraintInfo>& constraints() const;
  const RooflineInfo& roofline() const;
  const std::vector<std::string>& kernels() const;
  const std::string& doc() const;
  /// The entry's `reference:` (a Python expression or module:function), empty when it has none.
  const std::string& reference() const;
  /// The entry's `tolerance:` (rtol = atol of an output against the fp64 reference) by dtype.
  const std::vector<std::pair<DType, double>>& tolerance() const;

  int param_index(std::string_view name) const;  // -1 when absent
  int input_index(std::string_view name) const;

  /// `GEMMFwdOp[T: DType[float16 | bfloat16]](a: T Mat[trans_a, M, K], ...) -> (d: T [M, N])`
  std::string signature_text() const;

  const detail::OpModel& model() const { return *model_; }

 private:
  std::shared_ptr<const detail::OpModel> model_;
};

class Manifest {
 public:
  const std::vector<OpSpec>& ops() const { return ops_; }
  const OpSpec* find(std::string_view name) const;
  void add(OpSpec op) { ops_.push_back(std::move(op)); }

 private:
  std::vector<OpSpec> ops_;
};

/// Loads every `*.yaml` file under `path` (a directory) or the one file `path`. All problems are
/// collected into `diagnostics` (when given); the Error lists them one per line.
Expected<Manifest> load_manifest(const std::filesystem::path& path,
                                 std::vector<Diagnostic>* diagnostics = nullptr);

/// Loads what it can: every entry that compiles is in the result, every problem in `diagnostics`.
/// The validator uses this to go on checking the good entries of a manifest with broken ones.
Manifest load_manifest_partial(const std::filesystem::path& path,
                               std::vector<Diagnostic>& diagnostics);

/// Same as load_manifest, for a document already in memory; `file_name` is used in messages.
Expected<Manifest> load_manifest_text(std::string_view text, std::string_view file_name,
                                      std::vector<Diagnostic>* diagnostics = nullptr);

/// The manifest shipped with the project (the `specs/` folder of the source or the package).
std::filesystem::path default_manifest_dir();

}  // namespace ts::spec
