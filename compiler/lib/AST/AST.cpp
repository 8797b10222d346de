//===- AST.cpp ------------------------------------------------------------===//
#include "rapid/AST/AST.h"

#include "llvm/ADT/StringExtras.h"

namespace rapid::ast {

std::string NameExpr::dotted() const { return llvm::join(path, "."); }

const Expr *leftOperand(const Expr &e) {
  if (auto *b = llvm::dyn_cast<BinaryExpr>(&e)) return b->lhs.get();
  if (auto *r = llvm::dyn_cast<RangeExpr>(&e)) return r->lo.get();
  return nullptr;
}

std::vector<const Expr *> leftSpine(const Expr &e) {
  std::vector<const Expr *> spine{&e};
  for (const Expr *l = leftOperand(e); l && leftOperand(*l); l = leftOperand(*l))
    spine.push_back(l);
  return spine;
}

namespace {
/// Detaches the left operand of a binary or range expression.
ExprPtr takeLeft(Expr &e) {
  if (auto *b = llvm::dyn_cast<BinaryExpr>(&e)) return std::move(b->lhs);
  if (auto *r = llvm::dyn_cast<RangeExpr>(&e)) return std::move(r->lo);
  return nullptr;
}
/// Frees a left-deep chain in a loop: each node goes with its left side detached.
void freeLeftChain(ExprPtr next) {
  while (next) next = takeLeft(*next);
}
} // namespace

BinaryExpr::~BinaryExpr() { freeLeftChain(std::move(lhs)); }
RangeExpr::~RangeExpr() { freeLeftChain(std::move(lo)); }
std::string Path::dotted() const { return llvm::join(parts, "."); }

} // namespace rapid::ast
