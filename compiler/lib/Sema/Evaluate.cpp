//===- Evaluate.cpp - Expressions with units ------------------------------===//
//
// Arithmetic follows dimensional analysis: products and quotients combine
// dimensions, sums and comparisons need equal ones. Builtins make sweeps
// short (`pow2(1, 64)`, `range(2, 16, 2)`, `1..8`) and describe random
// quantities (`normal(0.5, 0.1)`).
//===----------------------------------------------------------------------===//
#include "SemaImpl.h"

#include "llvm/ADT/ScopeExit.h"

#include <cmath>
#include <fmt/ranges.h>

namespace rapid::sema {
namespace {
/// Evaluation nests at most this deep: an expression within an expression,
/// or a field whose value uses another field (`ffn = 4 * hidden`), each count.
/// The parser bounds one expression's nesting; this bounds chains of fields
/// and of derived declarations (`base.x`). Every Evaluator of a thread
/// counts into the same depth, since one evaluates through another.
constexpr unsigned kMaxEvalDepth = 1024;
thread_local unsigned evalDepth = 0;
} // namespace

Value Evaluator::eval(const ast::Expr &e) {
  if (evalDepth >= kMaxEvalDepth) {
    diags.report(DiagID::EvalTooDeep, e.getRange(), kMaxEvalDepth);
    return Value::error();
  }
  ++evalDepth;
  auto leave = llvm::make_scope_exit([] { --evalDepth; });
  Value v;
  switch (e.getKind()) {
  case ast::Expr::Kind::Number: v = number(llvm::cast<ast::NumberExpr>(e)); break;
  case ast::Expr::Kind::Name: v = name(llvm::cast<ast::NameExpr>(e)); break;
  case ast::Expr::Kind::String:
    v.kind = Value::Kind::String;
    v.s = llvm::cast<ast::StringExpr>(e).value;
    break;
  case ast::Expr::Kind::List:
    if (llvm::cast<ast::ListExpr>(e).elems.size() > kMaxListLength) {
      diags.report(DiagID::ListTooLong, e.getRange(), llvm::cast<ast::ListExpr>(e).elems.size(), kMaxListLength);
      return Value::error();
    }
    v.kind = Value::Kind::List;
    for (const ast::ExprPtr &x : llvm::cast<ast::ListExpr>(e).elems) {
      v.items.push_back(eval(*x));
      if (v.items.back().isError()) return Value::error();
    }
    break;
  case ast::Expr::Kind::Range: v = range(llvm::cast<ast::RangeExpr>(e)); break;
  case ast::Expr::Kind::Call: v = call(llvm::cast<ast::CallExpr>(e)); break;
  case ast::Expr::Kind::Unary: v = unary(llvm::cast<ast::UnaryExpr>(e)); break;
  case ast::Expr::Kind::Binary: v = binary(llvm::cast<ast::BinaryExpr>(e)); break;
  }
  if (!v.range.Start.isValid())
    v.range = e.getRange();
  return v;
}

Value Evaluator::number(const ast::NumberExpr &e) {
  if (e.unit.empty())
    return Value::number(e.value, Dim::number(), e.getRange());
  auto u = lookupUnit(e.unit);
  if (!u) {
    std::vector<std::string> near = closestUnits(e.unit);
    diags.report(DiagID::UnknownUnit, e.unitRange, e.unit,
                 near.empty() ? std::string() : fmt::format("; did you mean '{}'?", fmt::join(near, "' or '")));
    return Value::error();
  }
  return finite(Value::number(u->toBase(e.value), u->dim, e.getRange()));
}

Value Evaluator::name(const ast::NameExpr &e) {
  if (std::optional<Value> v = lookup(e))
    return *v;
  std::string n = e.dotted();
  if (n == "on" || n == "true") return Value::boolean(true, e.getRange());
  if (n == "off" || n == "false") return Value::boolean(false, e.getRange());
  return Value::symbol(n, e.getRange());
}

/// `lo..hi` counts in whole steps, so its ends are whole numbers small
/// enough (below 2^53) that adding one always gives the next.
Value Evaluator::range(const ast::RangeExpr &e) {
  Value lo = eval(*e.lo), hi = eval(*e.hi);
  if (!needNumber(lo, e.lo->getRange()) || !needNumber(hi, e.hi->getRange()))
    return Value::error();
  constexpr double kExact = 9007199254740992.0; // 2^53
  if (!lo.isInteger() || !hi.isInteger() || std::abs(lo.num()) >= kExact || std::abs(hi.num()) >= kExact ||
      hi.num() - lo.num() >= kMaxListLength) {
    diags.report(DiagID::BadCall, e.getRange(),
                 fmt::format("a range needs whole numbers below 2^53, at most {} apart", kMaxListLength));
    return Value::error();
  }
  Value v;
  v.kind = Value::Kind::List;
  for (double x = lo.num(); x <= hi.num(); ++x)
    v.items.push_back(Value::number(x, Dim::number(), e.getRange()));
  return v;
}

Value Evaluator::unary(const ast::UnaryExpr &e) {
  Value x = eval(*e.operand);
  if (x.isError()) return x;
  if (e.op == "!") {
    if (x.kind != Value::Kind::Bool) {
      diags.report(DiagID::ExpectedKind, e.operand->getRange(), "a switch (on/off)", x.describe());
      return Value::error();
    }
    return Value::boolean(!x.b, e.getRange());
  }
  if (!needNumber(x, e.operand->getRange())) return Value::error();
  x.q.value = -x.q.value;
  x.range = e.getRange();
  return x;
}

} // namespace rapid::sema
