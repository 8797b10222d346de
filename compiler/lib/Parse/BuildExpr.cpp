//===- BuildExpr.cpp - Expressions ----------------------------------------===//
#include "Builder.h"

#include <string>

namespace rapid::parse {

ast::ExprPtr Builder::expr(P::ExprContext *ctx) {
  llvm::SMRange r = loc(ctx);
  if (auto *e = dynamic_cast<P::UnaryExprContext *>(ctx))
    return std::make_unique<ast::UnaryExpr>(r, e->op->getText(), expr(e->expr()));
  if (auto *e = dynamic_cast<P::BinaryExprContext *>(ctx))
    return std::make_unique<ast::BinaryExpr>(r, e->op->getText(), loc(e->op), expr(e->lhs), expr(e->rhs));
  if (auto *e = dynamic_cast<P::RangeExprContext *>(ctx))
    return std::make_unique<ast::RangeExpr>(r, expr(e->lo), expr(e->hi));
  auto *e = dynamic_cast<P::PrimaryExprContext *>(ctx);
  assert(e && "grammar has an expression form the builder does not know");
  return primary(e->primary());
}

ast::ExprPtr Builder::primary(P::PrimaryContext *ctx) {
  llvm::SMRange r = loc(ctx);
  if (auto *p = dynamic_cast<P::QuantityPrimaryContext *>(ctx))
    return quantity(p->quantity());
  if (auto *p = dynamic_cast<P::CallPrimaryContext *>(ctx))
    return call(p->call());
  if (auto *p = dynamic_cast<P::NamePrimaryContext *>(ctx)) {
    std::vector<std::string> parts;
    for (antlr4::tree::TerminalNode *id : p->path()->ID())
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
  double value = std::stod(digits);
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
