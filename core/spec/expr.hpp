// The spec language's expressions: one small language for dimension arithmetic, constraints,
// shape types and roofline formulas.
//
//   expr   := cond ('?' expr ':' expr)?               ternary, lowest precedence
//   cond   := and (('or' | '||') and)*
//   and    := not (('and' | '&&') not)*
//   not    := ('not' | '!') not | cmp
//   cmp    := sum (('==' | '!=' | '<' | '<=' | '>' | '>=') sum)*   chains like 1 <= D <= 256
//   sum    := prod (('+' | '-') prod)*
//   prod   := unary (('*' | '/' | '%') unary)*           '/' is floor division on integers
//   unary  := '-' unary | atom
//   atom   := INT | FLOAT | STRING | 'true' | 'false' | IDENT | IDENT '(' args ')'
//           | IDENT '[' args ']'                          application of a declared shape type
//           | '(' expr ')' | '[' (item (',' item)*)? ']' a shape; item := expr | '*' IDENT
//
// Expressions are parsed into a per-op arena (ExprPool), resolved against a scope (dims, dim
// lists, dtype variables, params, tensors) and statically typed once, when the manifest loads.
// Evaluation is exact int64 arithmetic with overflow detection; it allocates nothing.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ts/spec/dtype.hpp"

namespace ts::spec::detail {

enum class Op : uint8_t {
  int_lit,
  float_lit,
  str_lit,
  bool_lit,
  name,  // unresolved identifier (only before resolve())
  var,   // resolved identifier: see Symbol
  neg,
  logical_not,
  add,
  sub,
  mul,
  div,
  mod,
  eq,
  ne,
  lt,
  le,
  gt,
  ge,
  logical_and,
  logical_or,
  cond,      // a ? b : c
  call,      // builtin function: fn, args
  type_app,  // Name[args]: expanded away by resolve()
  shape,     // [items]
  splat,     // *Dims inside a shape
};

enum class Builtin : uint8_t { none, prod, len, min, max, cdiv, sizeof_, numel, present };

/// Static types. Shape is only valid at the top of a shape expression.
enum class Type : uint8_t { unknown, int_, float_, bool_, str, dtype, dims, tensor, shape };
const char* type_name(Type t);

enum class SymKind : uint8_t { none, dim, dims, dtype_var, param, input, output, type_param };

struct Symbol {
  SymKind kind = SymKind::none;
  int16_t index = -1;
};

struct Node {
  Op op;
  Type type = Type::unknown;
  Builtin fn = Builtin::none;
  Symbol sym;
  int32_t pos = 0;  // byte offset in the source text it was parsed from
  int64_t ival = 0;
  double fval = 0.0;
  std::string text;           // identifier or string literal
  std::vector<int32_t> args;  // operands, in order
};

/// All nodes of one op's expressions. An expression is the index of its root.
struct ExprPool {
  std::vector<Node> nodes;
  const Node& operator[](int32_t i) const { return nodes[static_cast<size_t>(i)]; }
  Node& operator[](int32_t i) { return nodes[static_cast<size_t>(i)]; }
  int32_t add(Node n);
};

/// A parse error at byte offset `pos` of the parsed text.
struct ExprError {
  int32_t pos;
  std::string message;
};

/// Parses `text` into `pool`; on success returns the root index, else fills `error`.
int32_t parse_expr(ExprPool& pool, std::string_view text, ExprError& error);

/// Renders an expression back to canonical text (minimal parentheses).
std::string print_expr(const ExprPool& pool, int32_t root);

// ---- evaluation ------------------------------------------------------------------------------

struct Value {
  Type type = Type::unknown;
  bool is_none = false;  // an optional param whose value is None
  int64_t i = 0;         // int, bool (0/1), dtype (enum value)
  double f = 0.0;
  std::string_view s;  // str: points into the caller's storage
};

enum class EvalStatus : uint8_t { ok, unbound, overflow, div_by_zero, none_value, bad_value };

/// What an expression reads at evaluation time. Unbound dims carry bound[i] == false.
struct EvalEnv {
  std::span<const int64_t> dims;
  std::span<const uint8_t> dims_bound;
  std::span<const std::vector<int64_t>> dim_lists;
  std::span<const uint8_t> dim_lists_bound;
  std::span<const DType> dtypes;
  std::span<const uint8_t> dtypes_bound;
  std::span<const Value> params;
  // Tensors, inputs then outputs: presence, dtype, element count (numel) where known.
  std::span<const uint8_t> tensor_present;
  std::span<const DType> tensor_dtype;
  std::span<const int64_t> tensor_numel;
  int num_inputs = 0;
};

struct EvalResult {
  Value value;
  EvalStatus status = EvalStatus::ok;
  int32_t node = -1;  // the node that failed
};

EvalResult eval_expr(const ExprPool& pool, int32_t root, const EvalEnv& env);

/// The unbound dim referenced at `node` (for messages), or -1.
int32_t first_unbound_dim(const ExprPool& pool, int32_t root, const EvalEnv& env);

/// Checked int64 arithmetic.
bool checked_add(int64_t a, int64_t b, int64_t& out);
bool checked_sub(int64_t a, int64_t b, int64_t& out);
bool checked_mul(int64_t a, int64_t b, int64_t& out);

}  // namespace ts::spec::detail
