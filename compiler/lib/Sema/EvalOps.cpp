//===- EvalOps.cpp - Operators and builtin functions ----------------------===//
#include "SemaImpl.h"

#include <cmath>

namespace rapid::sema {
namespace {

/// `pow2(lo, hi)`: the powers of two from lo (at least 1) to hi; a few
/// thousand at most, since doubles end at 2^1024.
std::optional<std::vector<double>> powersOfTwo(double lo, double hi) {
  std::vector<double> xs;
  for (double x = std::exp2(std::ceil(std::log2(std::max(lo, 1.0)))); x <= hi && xs.size() <= kMaxListLength; x *= 2)
    xs.push_back(x);
  if (xs.size() > kMaxListLength) return std::nullopt;
  return xs;
}

/// `range(lo, hi, step)`: lo, lo + step, ... up to hi, added up as written.
/// None when the list would be too long or a step stops changing the value
/// (`range(1e17, 1e17 + 10)`: 1e17 + 1 is 1e17 in a double).
std::optional<std::vector<double>> steps(double lo, double hi, double step) {
  if (!(step > 0)) return std::nullopt;
  std::vector<double> xs;
  for (double x = lo; x <= hi; x += step) {
    if (xs.size() == kMaxListLength || x + step == x) return std::nullopt;
    xs.push_back(x);
  }
  return xs;
}

} // namespace

static const char *verbFor(const std::string &op) {
  return op == "+" ? "add" : op == "-" ? "subtract" : "compare";
}

bool Evaluator::needNumber(const Value &v, llvm::SMRange r) {
  if (v.isError()) return false;
  if (v.isNumber()) return true;
  if (v.kind == Value::Kind::Symbol) {
    diags.report(DiagID::UnknownName, r, "name", v.s,
                 didYouMean(v.s, knownNames ? knownNames() : std::vector<std::string_view>{}));
    return false;
  }
  diags.report(DiagID::ExpectedKind, r, "a number", v.describe());
  return false;
}

/// `1 + 2 + ... + n` is as deep as it is long down its left side: evaluated
/// in a loop along that side, so a long sum does not recurse.
Value Evaluator::binary(const ast::BinaryExpr &e) {
  std::vector<const ast::BinaryExpr *> spine{&e};
  while (auto *l = llvm::dyn_cast<ast::BinaryExpr>(spine.back()->lhs.get()))
    spine.push_back(l);
  Value acc = eval(*spine.back()->lhs);
  for (auto it = spine.rbegin(); it != spine.rend(); ++it) {
    acc = apply(**it, acc, eval(*(*it)->rhs));
    if (!acc.range.Start.isValid())
      acc.range = (*it)->getRange();
  }
  return acc;
}

Value Evaluator::apply(const ast::BinaryExpr &e, const Value &l, const Value &r) {
  if (l.isError() || r.isError()) return Value::error();
  if (e.op == "&&" || e.op == "||") {
    for (auto [v, x] : {std::pair{&l, e.lhs.get()}, {&r, e.rhs.get()}})
      if (v->kind != Value::Kind::Bool) {
        diags.report(DiagID::ExpectedKind, x->getRange(), "a condition", v->describe());
        return Value::error();
      }
    return Value::boolean(e.op == "&&" ? l.b && r.b : l.b || r.b, e.getRange());
  }
  if (e.op == "==" || e.op == "!=" || e.op == "<" || e.op == "<=" || e.op == ">" || e.op == ">=")
    return compare(e, l, r);
  if (!needNumber(l, e.lhs->getRange()) || !needNumber(r, e.rhs->getRange()))
    return Value::error();
  return arithmetic(e, l, r);
}

Value Evaluator::arithmetic(const ast::BinaryExpr &e, const Value &l, const Value &r) {
  double a = l.num(), b = r.num();
  if (e.op == "*") return finite(Value::number(a * b, l.q.dim * r.q.dim, e.getRange()));
  if (e.op == "/") {
    if (b == 0) {
      diags.report(DiagID::DivisionByZero, e.rhs->getRange());
      return Value::error();
    }
    return finite(Value::number(a / b, l.q.dim / r.q.dim, e.getRange()));
  }
  if (l.q.dim != r.q.dim) {
    diags.report(DiagID::OperandUnits, e.opRange, verbFor(e.op), describeDim(l.q.dim), describeDim(r.q.dim));
    return Value::error();
  }
  return finite(Value::number(e.op == "+" ? a + b : a - b, l.q.dim, e.getRange()));
}

/// Every value is finite: `1e200 * 1e200` is an error where it overflows,
/// not an infinity that later checks would compare and convert.
Value Evaluator::finite(Value v) {
  if (std::isfinite(v.num())) return v;
  diags.report(DiagID::NotFinite, v.range);
  return Value::error();
}

Value Evaluator::compare(const ast::BinaryExpr &e, const Value &l, const Value &r) {
  bool eq = e.op == "==" || e.op == "!=";
  if (eq && l.kind == r.kind && l.kind != Value::Kind::Number)
    return Value::boolean((l.str() == r.str()) == (e.op == "=="), e.getRange());
  if (!needNumber(l, e.lhs->getRange()) || !needNumber(r, e.rhs->getRange()))
    return Value::error();
  if (l.q.dim != r.q.dim) {
    diags.report(DiagID::OperandUnits, e.opRange, verbFor(e.op), describeDim(l.q.dim), describeDim(r.q.dim));
    return Value::error();
  }
  double a = l.num(), b = r.num();
  bool res = e.op == "==" ? a == b : e.op == "!=" ? a != b : e.op == "<" ? a < b
           : e.op == "<=" ? a <= b : e.op == ">" ? a > b : a >= b;
  return Value::boolean(res, e.getRange());
}

std::vector<Value> Evaluator::numericArgs(const ast::CallExpr &e, size_t min, size_t max) {
  const std::string &f = e.callee.name;
  if (e.args.size() < min || e.args.size() > max) {
    std::string want = min == max ? std::to_string(min) : fmt::format("{} to {}", min, max);
    diags.report(DiagID::BadCall, e.getRange(),
                 fmt::format("'{}' takes {} arguments but {} given", f, want, e.args.size()));
    return {};
  }
  std::vector<Value> out;
  for (const ast::Arg &a : e.args) {
    if (a.key || a.shape.size() != 1) {
      diags.report(DiagID::BadCall, a.range, fmt::format("'{}' takes plain values", f));
      return {};
    }
    Value v = eval(*a.shape[0]);
    if (!needNumber(v, a.range)) return {};
    out.push_back(v);
  }
  return out;
}

Value Evaluator::call(const ast::CallExpr &e) {
  const std::string &f = e.callee.name;
  auto list = [&](auto &&fill) {
    Value v;
    v.kind = Value::Kind::List;
    fill(v.items);
    return v;
  };
  if (f == "pow2" || f == "range") {
    std::vector<Value> a = numericArgs(e, 2, f == "range" ? 3 : 2);
    if (a.empty()) return Value::error();
    std::optional<std::vector<double>> xs = f == "pow2" ? powersOfTwo(a[0].num(), a[1].num())
                                                        : steps(a[0].num(), a[1].num(), a.size() > 2 ? a[2].num() : 1);
    if (!xs) {
      diags.report(DiagID::BadCall, e.getRange(),
                   fmt::format("'{}' would not give a list of at most {} distinct values", f, kMaxListLength));
      return Value::error();
    }
    return list([&](std::vector<Value> &items) {
      for (double x : *xs) items.push_back(Value::number(x, a[0].q.dim, e.getRange()));
    });
  }
  if (f == "min" || f == "max" || f == "ceil" || f == "floor") {
    bool unary = f == "ceil" || f == "floor";
    std::vector<Value> a = numericArgs(e, unary ? 1 : 2, unary ? 1 : 8);
    if (a.empty()) return Value::error();
    Value best = a[0];
    for (const Value &x : a) {
      if (x.q.dim != best.q.dim) {
        diags.report(DiagID::OperandUnits, e.getRange(), "compare", describeDim(best.q.dim), describeDim(x.q.dim));
        return Value::error();
      }
      if ((f == "min" && x.num() < best.num()) || (f == "max" && x.num() > best.num())) best = x;
    }
    if (f == "ceil") best.q.value = std::ceil(best.q.value);
    if (f == "floor") best.q.value = std::floor(best.q.value);
    best.range = e.getRange();
    return best;
  }
  if (f == "normal" || f == "uniform" || f == "constant") {
    std::vector<Value> a = numericArgs(e, f == "constant" ? 1 : 2, f == "constant" ? 1 : 2);
    if (a.empty()) return Value::error();
    Value v;
    v.kind = Value::Kind::Call;
    v.s = f;
    v.items = std::move(a);
    return v;
  }
  static const std::vector<std::string> builtins = {"pow2", "range", "min", "max", "ceil", "floor",
                                                    "normal", "uniform", "constant"};
  diags.report(DiagID::UnknownName, e.callee.range, "function", f, didYouMean(f, builtins));
  return Value::error();
}

} // namespace rapid::sema
