//===- BuildExpr.cpp - Expressions ----------------------------------------===//
#include "Builder.h"

#include "llvm/ADT/StringRef.h"

#include <cmath>
#include <string>

namespace rapid::parse {
namespace {

/// The left operand of a binary or range expression, or null.
P::ExprContext *leftOf(P::ExprContext *ctx) {
  if (auto *e = dynamic_cast<P::BinaryExprContext *>(ctx)) return e->lhs;
  if (auto *e = dynamic_cast<P::RangeExprContext *>(ctx)) return e->lo;
  return nullptr;
}

} // namespace

ast::ExprPtr Builder::expr(P::ExprContext *ctx) {
  if (leftOf(ctx))
    return leftChain(ctx);
  if (auto *e = dynamic_cast<P::UnaryExprContext *>(ctx))
    return std::make_unique<ast::UnaryExpr>(loc(ctx), e->op->getText(), expr(e->expr()));
  auto *e = dynamic_cast<P::PrimaryExprContext *>(ctx);
  assert(e && "grammar has an expression form the builder does not know");
  return primary(e->primary());
}

/// `1 + 2 + ... + n` parses as a left-deep tree as deep as the sum is long:
/// its left side is built bottom-up in a loop, so only the right operands
/// (whose nesting the parser bounds) recurse.
ast::ExprPtr Builder::leftChain(P::ExprContext *top) {
  std::vector<P::ExprContext *> spine{top};
  while (leftOf(leftOf(spine.back())))
    spine.push_back(leftOf(spine.back()));
  ast::ExprPtr acc = expr(leftOf(spine.back()));
  for (auto it = spine.rbegin(); it != spine.rend(); ++it) {
    if (auto *e = dynamic_cast<P::BinaryExprContext *>(*it))
      acc = std::make_unique<ast::BinaryExpr>(loc(e), e->op->getText(), loc(e->op), std::move(acc), expr(e->rhs));
    else
      acc = std::make_unique<ast::RangeExpr>(loc(*it), std::move(acc),
                                             expr(dynamic_cast<P::RangeExprContext *>(*it)->hi));
  }
  return acc;
}

ast::ExprPtr Builder::primary(P::PrimaryContext *ctx) {
  llvm::SMRange r = loc(ctx);
  if (auto *p = dynamic_cast<P::QuantityPrimaryContext *>(ctx))
    return quantity(p->quantity());
  if (auto *p = dynamic_cast<P::CallPrimaryContext *>(ctx))
    return call(p->call());
  if (auto *p = dynamic_cast<P::NamePrimaryContext *>(ctx)) {
    std::vector<std::string> parts;
    for (antlr4::Token *id : p->path()->parts)
      parts.push_back(id->getText());
    return std::make_unique<ast::NameExpr>(r, std::move(parts));
  }
  if (auto *p = dynamic_cast<P::StringPrimaryContext *>(ctx)) {
    std::string text = p->STRING()->getText();
    return std::make_unique<ast::StringExpr>(r, text.substr(1, text.size() - 2));
  }
  if (auto *p = dynamic_cast<P::ListPrimaryContext *>(ctx)) {
    std::vector<ast::ExprPtr> elems;
    for (P::ExprContext *x : p->expr())
      elems.push_back(expr(x));
    return std::make_unique<ast::ListExpr>(r, std::move(elems));
  }
  auto *p = dynamic_cast<P::ParenPrimaryContext *>(ctx);
  assert(p && "grammar has a primary form the builder does not know");
  return expr(p->expr());
}

ast::ExprPtr Builder::quantity(P::QuantityContext *ctx) {
  std::string digits;
  for (char c : ctx->NUMBER()->getText())
    if (c != '_') // 1_000_000 groups digits
      digits += c;
  // Every number the language computes with is finite.
  double value = 0;
  if (llvm::StringRef(digits).getAsDouble(value, /*AllowInexact=*/true) || !std::isfinite(value)) {
    diags.report(DiagID::NumberOutOfRange, loc(ctx->NUMBER()->getSymbol()), ctx->NUMBER()->getText());
    errors = true;
  }
  std::string unit;
  llvm::SMRange unitRange;
  if (P::UnitContext *u = ctx->unit()) {
    unit = u->num->getText();
    if (u->den)
      unit += "/" + u->den->getText();
    unitRange = loc(u);
  }
  return std::make_unique<ast::NumberExpr>(loc(ctx), value, unit, unitRange);
}

std::unique_ptr<ast::CallExpr> Builder::call(P::CallContext *ctx) {
  std::vector<ast::Arg> args;
  for (P::ArgContext *a : ctx->arg()) {
    ast::Arg arg;
    if (a->key)
      arg.key = ident(a->key);
    for (P::ExprContext *x : a->shape()->expr())
      arg.shape.push_back(expr(x));
    arg.range = loc(a);
    args.push_back(std::move(arg));
  }
  return std::make_unique<ast::CallExpr>(loc(ctx), ident(ctx->callee), std::move(args));
}

} // namespace rapid::parse
