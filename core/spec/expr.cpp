#include "expr.hpp"

#include <cctype>
#include <charconv>
#include <cmath>

#include <fmt/format.h>

namespace ts::spec::detail {

const char* type_name(Type t) {
  switch (t) {
    case Type::unknown:
      return "unknown";
    case Type::int_:
      return "int";
    case Type::float_:
      return "float";
    case Type::bool_:
      return "bool";
    case Type::str:
      return "str";
    case Type::dtype:
      return "dtype";
    case Type::dims:
      return "dim list";
    case Type::tensor:
      return "tensor";
    case Type::shape:
      return "shape";
  }
  return "?";
}

int32_t ExprPool::add(Node n) {
  nodes.push_back(std::move(n));
  return static_cast<int32_t>(nodes.size() - 1);
}

bool checked_add(int64_t a, int64_t b, int64_t& out) {
  return !__builtin_add_overflow(a, b, &out);
}
bool checked_sub(int64_t a, int64_t b, int64_t& out) {
  return !__builtin_sub_overflow(a, b, &out);
}
bool checked_mul(int64_t a, int64_t b, int64_t& out) {
  return !__builtin_mul_overflow(a, b, &out);
}

// ---- lexer -----------------------------------------------------------------------------------

namespace {

enum class Tok : uint8_t {
  end,
  int_,
  float_,
  str,
  ident,
  lparen,
  rparen,
  lbrack,
  rbrack,
  comma,
  question,
  colon,
  plus,
  minus,
  star,
  slash,
  percent,
  eq,
  ne,
  lt,
  le,
  gt,
  ge,
  bang,
  and_,
  or_,
  error,
};

struct Token {
  Tok kind = Tok::end;
  int32_t pos = 0;
  std::string_view text;
  int64_t ival = 0;
  double fval = 0.0;
};

constexpr int kMaxDepth = 64;  // bounds recursion on hostile input

class Parser {
 public:
  Parser(ExprPool& pool, std::string_view src, ExprError& err) : pool_(pool), src_(src), err_(err) {
    advance();
  }

  int32_t parse_top() {
    int32_t root = parse_expr(0);
    if (root < 0) return -1;
    if (tok_.kind == Tok::error)
      return fail(tok_.pos, fmt::format("unexpected character '{}'", tok_.text));
    if (tok_.kind != Tok::end) return fail(tok_.pos, fmt::format("unexpected '{}'", tok_.text));
    return root;
  }

 private:
  int32_t fail(int32_t pos, std::string msg) {
    if (err_.message.empty()) err_ = ExprError{pos, std::move(msg)};
    return -1;
  }

  void advance() { tok_ = lex(); }

  Token lex() {
    while (i_ < src_.size() && std::isspace(static_cast<unsigned char>(src_[i_]))) ++i_;
    Token t;
    t.pos = static_cast<int32_t>(i_);
    if (i_ >= src_.size()) return t;
    const char c = src_[i_];
    auto two = [&](char next) { return i_ + 1 < src_.size() && src_[i_ + 1] == next; };
    auto single = [&](Tok k, size_t n) {
      t.kind = k;
      t.text = src_.substr(i_, n);
      i_ += n;
      return t;
    };
    if (std::isdigit(static_cast<unsigned char>(c))) {
      size_t j = i_;
      while (j < src_.size() &&
             (std::isdigit(static_cast<unsigned char>(src_[j])) || src_[j] == '_'))
        ++j;
      bool is_float = false;
      if (j < src_.size() && src_[j] == '.') {
        is_float = true;
        ++j;
        while (j < src_.size() && std::isdigit(static_cast<unsigned char>(src_[j]))) ++j;
      }
      if (j < src_.size() && (src_[j] == 'e' || src_[j] == 'E')) {
        size_t k = j + 1;
        if (k < src_.size() && (src_[k] == '+' || src_[k] == '-')) ++k;
        if (k < src_.size() && std::isdigit(static_cast<unsigned char>(src_[k]))) {
          is_float = true;
          j = k;
          while (j < src_.size() && std::isdigit(static_cast<unsigned char>(src_[j]))) ++j;
        }
      }
      t.text = src_.substr(i_, j - i_);
      i_ = j;
      std::string digits;
      for (char d : t.text)
        if (d != '_') digits += d;
      if (is_float) {
        t.kind = Tok::float_;
        auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), t.fval);
        if (ec != std::errc() || p != digits.data() + digits.size()) t.kind = Tok::error;
      } else {
        t.kind = Tok::int_;
        auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), t.ival);
        if (ec != std::errc() || p != digits.data() + digits.size()) t.kind = Tok::error;
      }
      return t;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t j = i_;
      while (j < src_.size() &&
             (std::isalnum(static_cast<unsigned char>(src_[j])) || src_[j] == '_'))
        ++j;
      t.text = src_.substr(i_, j - i_);
      i_ = j;
      t.kind = t.text == "and"   ? Tok::and_
               : t.text == "or"  ? Tok::or_
               : t.text == "not" ? Tok::bang
                                 : Tok::ident;
      return t;
    }
    if (c == '"' || c == '\'') {
      size_t j = i_ + 1;
      while (j < src_.size() && src_[j] != c) ++j;
      if (j >= src_.size()) {
        t.kind = Tok::error;
        t.text = "unterminated string";
        i_ = src_.size();
        return t;
      }
      t.kind = Tok::str;
      t.text = src_.substr(i_ + 1, j - i_ - 1);
      i_ = j + 1;
      return t;
    }
    switch (c) {
      case '(':
        return single(Tok::lparen, 1);
      case ')':
        return single(Tok::rparen, 1);
      case '[':
        return single(Tok::lbrack, 1);
      case ']':
        return single(Tok::rbrack, 1);
      case ',':
        return single(Tok::comma, 1);
      case '?':
        return single(Tok::question, 1);
      case ':':
        return single(Tok::colon, 1);
      case '+':
        return single(Tok::plus, 1);
      case '-':
        return single(Tok::minus, 1);
      case '*':
        return single(Tok::star, 1);
      case '/':
        return two('/') ? single(Tok::slash, 2) : single(Tok::slash, 1);
      case '%':
        return single(Tok::percent, 1);
      case '=':
        return two('=') ? single(Tok::eq, 2) : single(Tok::error, 1);
      case '!':
        return two('=') ? single(Tok::ne, 2) : single(Tok::bang, 1);
      case '<':
        return two('=') ? single(Tok::le, 2) : single(Tok::lt, 1);
      case '>':
        return two('=') ? single(Tok::ge, 2) : single(Tok::gt, 1);
      case '&':
        return two('&') ? single(Tok::and_, 2) : single(Tok::error, 1);
      case '|':
        return two('|') ? single(Tok::or_, 2) : single(Tok::error, 1);
      default:
        return single(Tok::error, 1);
    }
  }

  bool expect(Tok k, const char* what) {
    if (tok_.kind == k) {
      advance();
      return true;
    }
    fail(tok_.pos, tok_.kind == Tok::end ? fmt::format("expected {} but the expression ended", what)
                                         : fmt::format("expected {}, found '{}'", what, tok_.text));
    return false;
  }

  int32_t node(Op op, int32_t pos, std::vector<int32_t> args = {}) {
    Node n;
    n.op = op;
    n.pos = pos;
    n.args = std::move(args);
    return pool_.add(std::move(n));
  }

  int32_t parse_expr(int depth) {
    if (depth > kMaxDepth) return fail(tok_.pos, "expression nested too deeply");
    int32_t c = parse_or(depth + 1);
    if (c < 0) return -1;
    if (tok_.kind != Tok::question) return c;
    int32_t pos = tok_.pos;
    advance();
    int32_t a = parse_expr(depth + 1);
    if (a < 0 || !expect(Tok::colon, "':' of a conditional")) return -1;
    int32_t b = parse_expr(depth + 1);
    if (b < 0) return -1;
    return node(Op::cond, pos, {c, a, b});
  }

  int32_t parse_or(int depth) {
    int32_t l = parse_and(depth);
    while (l >= 0 && tok_.kind == Tok::or_) {
      int32_t pos = tok_.pos;
      advance();
      int32_t r = parse_and(depth);
      if (r < 0) return -1;
      l = node(Op::logical_or, pos, {l, r});
    }
    return l;
  }

  int32_t parse_and(int depth) {
    int32_t l = parse_not(depth);
    while (l >= 0 && tok_.kind == Tok::and_) {
      int32_t pos = tok_.pos;
      advance();
      int32_t r = parse_not(depth);
      if (r < 0) return -1;
      l = node(Op::logical_and, pos, {l, r});
    }
    return l;
  }

  int32_t parse_not(int depth) {
    if (depth > kMaxDepth) return fail(tok_.pos, "expression nested too deeply");
    if (tok_.kind == Tok::bang) {
      int32_t pos = tok_.pos;
      advance();
      int32_t a = parse_not(depth + 1);
      return a < 0 ? -1 : node(Op::logical_not, pos, {a});
    }
    return parse_cmp(depth);
  }

  static bool cmp_op(Tok k, Op& op) {
    switch (k) {
      case Tok::eq:
        op = Op::eq;
        return true;
      case Tok::ne:
        op = Op::ne;
        return true;
      case Tok::lt:
        op = Op::lt;
        return true;
      case Tok::le:
        op = Op::le;
        return true;
      case Tok::gt:
        op = Op::gt;
        return true;
      case Tok::ge:
        op = Op::ge;
        return true;
      default:
        return false;
    }
  }

  // a < b <= c  ==>  (a < b) and (b <= c); the middle operand is shared, not copied.
  int32_t parse_cmp(int depth) {
    int32_t l = parse_sum(depth);
    Op op;
    int32_t result = -1;
    while (l >= 0 && cmp_op(tok_.kind, op)) {
      int32_t pos = tok_.pos;
      advance();
      int32_t r = parse_sum(depth);
      if (r < 0) return -1;
      int32_t c = node(op, pos, {l, r});
      result = result < 0 ? c : node(Op::logical_and, pos, {result, c});
      l = r;
    }
    return result >= 0 ? result : l;
  }

  int32_t parse_sum(int depth) {
    int32_t l = parse_prod(depth);
    while (l >= 0 && (tok_.kind == Tok::plus || tok_.kind == Tok::minus)) {
      Op op = tok_.kind == Tok::plus ? Op::add : Op::sub;
      int32_t pos = tok_.pos;
      advance();
      int32_t r = parse_prod(depth);
      if (r < 0) return -1;
      l = node(op, pos, {l, r});
    }
    return l;
  }

  int32_t parse_prod(int depth) {
    int32_t l = parse_unary(depth);
    while (l >= 0 &&
           (tok_.kind == Tok::star || tok_.kind == Tok::slash || tok_.kind == Tok::percent)) {
      Op op = tok_.kind == Tok::star ? Op::mul : tok_.kind == Tok::slash ? Op::div : Op::mod;
      int32_t pos = tok_.pos;
      advance();
      int32_t r = parse_unary(depth);
      if (r < 0) return -1;
      l = node(op, pos, {l, r});
    }
    return l;
  }

  int32_t parse_unary(int depth) {
    if (depth > kMaxDepth) return fail(tok_.pos, "expression nested too deeply");
    if (tok_.kind == Tok::minus) {
      int32_t pos = tok_.pos;
      advance();
      int32_t a = parse_unary(depth + 1);
      return a < 0 ? -1 : node(Op::neg, pos, {a});
    }
    return parse_atom(depth + 1);
  }

  // Comma-separated list up to `close`; items may be '*Name' splats when allow_splat.
  bool parse_list(Tok close, const char* what, bool allow_splat, int depth,
                  std::vector<int32_t>& out) {
    if (tok_.kind == close) {
      advance();
      return true;
    }
    for (;;) {
      if (allow_splat && tok_.kind == Tok::star) {
        int32_t pos = tok_.pos;
        advance();
        if (tok_.kind != Tok::ident) {
          fail(tok_.pos, "expected a dim-list name after '*'");
          return false;
        }
        int32_t name = node(Op::name, tok_.pos);
        pool_[name].text = std::string(tok_.text);
        advance();
        out.push_back(node(Op::splat, pos, {name}));
      } else {
        int32_t e = parse_expr(depth + 1);
        if (e < 0) return false;
        out.push_back(e);
      }
      if (tok_.kind == Tok::comma) {
        advance();
        continue;
      }
      return expect(close, what);
    }
  }

  int32_t parse_atom(int depth) {
    Token t = tok_;
    switch (t.kind) {
      case Tok::int_: {
        advance();
        int32_t n = node(Op::int_lit, t.pos);
        pool_[n].ival = t.ival;
        return n;
      }
      case Tok::float_: {
        advance();
        int32_t n = node(Op::float_lit, t.pos);
        pool_[n].fval = t.fval;
        return n;
      }
      case Tok::str: {
        advance();
        int32_t n = node(Op::str_lit, t.pos);
        pool_[n].text = std::string(t.text);
        return n;
      }
      case Tok::ident: {
        advance();
        if (t.text == "true" || t.text == "false") {
          int32_t n = node(Op::bool_lit, t.pos);
          pool_[n].ival = t.text == "true";
          return n;
        }
        if (tok_.kind == Tok::lparen) {
          advance();
          std::vector<int32_t> args;
          if (!parse_list(Tok::rparen, "')' closing the call", false, depth, args)) return -1;
          int32_t n = node(Op::call, t.pos, std::move(args));
          pool_[n].text = std::string(t.text);
          return n;
        }
        if (tok_.kind == Tok::lbrack) {
          advance();
          std::vector<int32_t> args;
          if (!parse_list(Tok::rbrack, "']' closing the type arguments", false, depth, args))
            return -1;
          int32_t n = node(Op::type_app, t.pos, std::move(args));
          pool_[n].text = std::string(t.text);
          return n;
        }
        int32_t n = node(Op::name, t.pos);
        pool_[n].text = std::string(t.text);
        return n;
      }
      case Tok::lparen: {
        advance();
        int32_t e = parse_expr(depth + 1);
        if (e < 0 || !expect(Tok::rparen, "')'")) return -1;
        return e;
      }
      case Tok::lbrack: {
        advance();
        std::vector<int32_t> items;
        if (!parse_list(Tok::rbrack, "']' closing the shape", true, depth, items)) return -1;
        return node(Op::shape, t.pos, std::move(items));
      }
      case Tok::end:
        return fail(t.pos, "expected a value but the expression ended");
      case Tok::error:
        return fail(t.pos, t.text == "unterminated string"
                               ? std::string("unterminated string literal")
                               : fmt::format("unexpected character '{}'", t.text));
      default:
        return fail(t.pos, fmt::format("expected a value, found '{}'", t.text));
    }
  }

  ExprPool& pool_;
  std::string_view src_;
  ExprError& err_;
  size_t i_ = 0;
  Token tok_;
};

// ---- printer ---------------------------------------------------------------------------------

int precedence(Op op) {
  switch (op) {
    case Op::cond:
      return 1;
    case Op::logical_or:
      return 2;
    case Op::logical_and:
      return 3;
    case Op::logical_not:
      return 4;
    case Op::eq:
    case Op::ne:
    case Op::lt:
    case Op::le:
    case Op::gt:
    case Op::ge:
      return 5;
    case Op::add:
    case Op::sub:
      return 6;
    case Op::mul:
    case Op::div:
    case Op::mod:
      return 7;
    case Op::neg:
      return 8;
    default:
      return 9;
  }
}

const char* op_text(Op op) {
  switch (op) {
    case Op::add:
      return "+";
    case Op::sub:
      return "-";
    case Op::mul:
      return "*";
    case Op::div:
      return "/";
    case Op::mod:
      return "%";
    case Op::eq:
      return "==";
    case Op::ne:
      return "!=";
    case Op::lt:
      return "<";
    case Op::le:
      return "<=";
    case Op::gt:
      return ">";
    case Op::ge:
      return ">=";
    case Op::logical_and:
      return "and";
    case Op::logical_or:
      return "or";
    default:
      return "?";
  }
}

void print_into(const ExprPool& pool, int32_t i, std::string& out, int parent_prec, bool right) {
  const Node& n = pool[i];
  const int prec = precedence(n.op);
  const bool paren = prec < parent_prec || (right && prec == parent_prec && prec >= 5);
  if (paren) out += '(';
  auto list = [&](const char* open, const char* close) {
    out += open;
    for (size_t k = 0; k < n.args.size(); ++k) {
      if (k) out += ", ";
      print_into(pool, n.args[k], out, 0, false);
    }
    out += close;
  };
  switch (n.op) {
    case Op::int_lit:
      out += std::to_string(n.ival);
      break;
    case Op::float_lit: {
      std::string f = fmt::format("{}", n.fval);
      if (f.find_first_of(".en") == std::string::npos) f += ".0";  // keep it a float literal
      out += f;
      break;
    }
    case Op::str_lit:
      out += '"' + n.text + '"';
      break;
    case Op::bool_lit:
      out += n.ival ? "true" : "false";
      break;
    case Op::name:
    case Op::var:
      out += n.text;
      break;
    case Op::neg:
      out += '-';
      print_into(pool, n.args[0], out, prec, false);
      break;
    case Op::logical_not:
      out += "not ";
      print_into(pool, n.args[0], out, prec, false);
      break;
    case Op::cond:
      print_into(pool, n.args[0], out, prec + 1, false);
      out += " ? ";
      print_into(pool, n.args[1], out, prec, false);
      out += " : ";
      print_into(pool, n.args[2], out, prec, false);
      break;
    case Op::call:
      out += n.text;
      list("(", ")");
      break;
    case Op::type_app:
      out += n.text;
      list("[", "]");
      break;
    case Op::shape:
      list("[", "]");
      break;
    case Op::splat:
      out += '*';
      print_into(pool, n.args[0], out, 9, false);
      break;
    default:
      print_into(pool, n.args[0], out, prec, false);
      out += ' ';
      out += op_text(n.op);
      out += ' ';
      print_into(pool, n.args[1], out, prec, true);
  }
  if (paren) out += ')';
}

// ---- evaluator -------------------------------------------------------------------------------

// The six comparisons, for ints and floats alike.
template <class T>
int64_t compare(Op op, T x, T y) {
  switch (op) {
    case Op::eq:
      return x == y;
    case Op::ne:
      return x != y;
    case Op::lt:
      return x < y;
    case Op::le:
      return x <= y;
    case Op::gt:
      return x > y;
    default:
      return x >= y;  // Op::ge
  }
}

struct Evaluator {
  const ExprPool& pool;
  const EvalEnv& env;
  EvalResult bad;  // the first failure

  bool fail(EvalStatus s, int32_t node) {
    bad.status = s;
    bad.node = node;
    return false;
  }

  bool int_of(int32_t i, int64_t& out) {
    Value v;
    if (!eval(i, v)) return false;
    out = v.i;
    return true;
  }

  bool eval(int32_t i, Value& out) {
    const Node& n = pool[i];
    out = Value{};
    out.type = n.type;
    switch (n.op) {
      case Op::int_lit:
      case Op::bool_lit:
        out.i = n.ival;
        return true;
      case Op::float_lit:
        out.f = n.fval;
        return true;
      case Op::str_lit:
        out.s = n.text;
        return true;
      case Op::var:
        return eval_var(i, n, out);
      case Op::neg: {
        Value a;
        if (!eval(n.args[0], a)) return false;
        if (a.type == Type::float_) {
          out.f = -a.f;
          return true;
        }
        if (!checked_sub(0, a.i, out.i)) return fail(EvalStatus::overflow, i);
        return true;
      }
      case Op::logical_not: {
        int64_t a;
        if (!int_of(n.args[0], a)) return false;
        out.i = !a;
        return true;
      }
      case Op::logical_and:
      case Op::logical_or: {
        int64_t a;
        if (!int_of(n.args[0], a)) return false;
        if ((n.op == Op::logical_and) != static_cast<bool>(a)) {  // short-circuit
          out.i = a ? 1 : 0;
          return true;
        }
        int64_t b;
        if (!int_of(n.args[1], b)) return false;
        out.i = b ? 1 : 0;
        return true;
      }
      case Op::cond: {
        int64_t c;
        if (!int_of(n.args[0], c)) return false;
        return eval(n.args[c ? 1 : 2], out);
      }
      case Op::call:
        return eval_call(i, n, out);
      case Op::add:
      case Op::sub:
      case Op::mul:
      case Op::div:
      case Op::mod:
      case Op::eq:
      case Op::ne:
      case Op::lt:
      case Op::le:
      case Op::gt:
      case Op::ge:
        return eval_binary(i, n, out);
      default:
        return fail(EvalStatus::bad_value, i);
    }
  }

  bool eval_var(int32_t i, const Node& n, Value& out) {
    const auto k = static_cast<size_t>(n.sym.index);
    switch (n.sym.kind) {
      case SymKind::dim:
        if (!env.dims_bound[k]) return fail(EvalStatus::unbound, i);
        out.i = env.dims[k];
        return true;
      case SymKind::dtype_var:
        if (!env.dtypes_bound[k]) return fail(EvalStatus::unbound, i);
        out.i = static_cast<int64_t>(env.dtypes[k]);
        return true;
      case SymKind::param:
        out = env.params[k];
        if (out.is_none) return fail(EvalStatus::none_value, i);
        return true;
      default:
        return fail(EvalStatus::bad_value, i);
    }
  }

  bool eval_binary(int32_t i, const Node& n, Value& out) {
    Value a, b;
    if (!eval(n.args[0], a) || !eval(n.args[1], b)) return false;
    if (a.type == Type::float_ || b.type == Type::float_) {
      const double x = a.type == Type::float_ ? a.f : static_cast<double>(a.i);
      const double y = b.type == Type::float_ ? b.f : static_cast<double>(b.i);
      switch (n.op) {
        case Op::add:
          out.f = x + y;
          return true;
        case Op::sub:
          out.f = x - y;
          return true;
        case Op::mul:
          out.f = x * y;
          return true;
        case Op::div:
          if (y == 0.0) return fail(EvalStatus::div_by_zero, i);
          out.f = x / y;
          return true;
        case Op::eq:
        case Op::ne:
        case Op::lt:
        case Op::le:
        case Op::gt:
        case Op::ge:
          out.i = compare(n.op, x, y);
          return true;
        default:
          return fail(EvalStatus::bad_value, i);
      }
    }
    if (a.type == Type::str) {
      switch (n.op) {
        case Op::eq:
          out.i = a.s == b.s;
          return true;
        case Op::ne:
          out.i = a.s != b.s;
          return true;
        default:
          return fail(EvalStatus::bad_value, i);
      }
    }
    const int64_t x = a.i, y = b.i;
    switch (n.op) {
      case Op::add:
        if (!checked_add(x, y, out.i)) return fail(EvalStatus::overflow, i);
        return true;
      case Op::sub:
        if (!checked_sub(x, y, out.i)) return fail(EvalStatus::overflow, i);
        return true;
      case Op::mul:
        if (!checked_mul(x, y, out.i)) return fail(EvalStatus::overflow, i);
        return true;
      case Op::div:
      case Op::mod: {
        if (y == 0) return fail(EvalStatus::div_by_zero, i);
        if (x == INT64_MIN && y == -1) return fail(EvalStatus::overflow, i);
        int64_t q = x / y, r = x % y;
        if (r != 0 && ((r < 0) != (y < 0))) {  // floor semantics, as Python's //
          q -= 1;
          r += y;
        }
        out.i = n.op == Op::div ? q : r;
        return true;
      }
      case Op::eq:
      case Op::ne:
      case Op::lt:
      case Op::le:
      case Op::gt:
      case Op::ge:
        out.i = compare(n.op, x, y);
        return true;
      default:
        return fail(EvalStatus::bad_value, i);
    }
  }

  const std::vector<int64_t>* dim_list(int32_t arg) {
    const Node& a = pool[arg];
    const auto k = static_cast<size_t>(a.sym.index);
    if (!env.dim_lists_bound[k]) {
      fail(EvalStatus::unbound, arg);
      return nullptr;
    }
    return &env.dim_lists[k];
  }

  int tensor_slot(const Node& a) const {
    return a.sym.kind == SymKind::input ? a.sym.index : env.num_inputs + a.sym.index;
  }

  bool eval_call(int32_t i, const Node& n, Value& out) {
    switch (n.fn) {
      case Builtin::prod:
      case Builtin::len: {
        const auto* list = dim_list(n.args[0]);
        if (!list) return false;
        if (n.fn == Builtin::len) {
          out.i = static_cast<int64_t>(list->size());
          return true;
        }
        out.i = 1;
        for (int64_t d : *list)
          if (!checked_mul(out.i, d, out.i)) return fail(EvalStatus::overflow, i);
        return true;
      }
      case Builtin::min:
      case Builtin::max: {
        for (size_t k = 0; k < n.args.size(); ++k) {
          int64_t v;
          if (!int_of(n.args[k], v)) return false;
          if (k == 0 || (n.fn == Builtin::min ? v < out.i : v > out.i)) out.i = v;
        }
        return true;
      }
      case Builtin::cdiv: {
        int64_t a, b;
        if (!int_of(n.args[0], a) || !int_of(n.args[1], b)) return false;
        if (b <= 0) return fail(EvalStatus::div_by_zero, i);
        if (a <= 0) {
          out.i = 0;
          return true;
        }
        out.i = (a - 1) / b + 1;
        return true;
      }
      case Builtin::sizeof_: {
        const Node& a = pool[n.args[0]];
        if (a.type == Type::tensor) {
          const int slot = tensor_slot(a);
          if (!env.tensor_present[static_cast<size_t>(slot)])
            return fail(EvalStatus::unbound, n.args[0]);
          out.i = dtype_size(env.tensor_dtype[static_cast<size_t>(slot)]);
          return true;
        }
        Value v;
        if (!eval(n.args[0], v)) return false;
        out.i = dtype_size(static_cast<DType>(v.i));
        return true;
      }
      case Builtin::numel: {
        const Node& a = pool[n.args[0]];
        const int slot = tensor_slot(a);
        if (!env.tensor_present[static_cast<size_t>(slot)] ||
            env.tensor_numel[static_cast<size_t>(slot)] < 0)
          return fail(EvalStatus::unbound, n.args[0]);
        out.i = env.tensor_numel[static_cast<size_t>(slot)];
        return true;
      }
      case Builtin::present: {
        const Node& a = pool[n.args[0]];
        if (a.sym.kind == SymKind::param) {
          out.i = !env.params[static_cast<size_t>(a.sym.index)].is_none;
          return true;
        }
        out.i = env.tensor_present[static_cast<size_t>(tensor_slot(a))];
        return true;
      }
      case Builtin::none:
        return fail(EvalStatus::bad_value, i);
    }
    return fail(EvalStatus::bad_value, i);
  }
};

}  // namespace

int32_t parse_expr(ExprPool& pool, std::string_view text, ExprError& error) {
  error = ExprError{0, {}};
  Parser p(pool, text, error);
  return p.parse_top();
}

std::string print_expr(const ExprPool& pool, int32_t root) {
  std::string out;
  print_into(pool, root, out, 0, false);
  return out;
}

EvalResult eval_expr(const ExprPool& pool, int32_t root, const EvalEnv& env) {
  Evaluator e{pool, env, {}};
  EvalResult r;
  if (!e.eval(root, r.value)) return e.bad;
  return r;
}

int32_t first_unbound_dim(const ExprPool& pool, int32_t root, const EvalEnv& env) {
  const Node& n = pool[root];
  if (n.op == Op::var && n.sym.kind == SymKind::dim &&
      !env.dims_bound[static_cast<size_t>(n.sym.index)])
    return root;
  for (int32_t a : n.args)
    if (int32_t u = first_unbound_dim(pool, a, env); u >= 0) return u;
  return -1;
}

}  // namespace ts::spec::detail
