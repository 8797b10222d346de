//===- ASTPrinter.cpp -----------------------------------------------------===//
#include "rapid/AST/ASTPrinter.h"

#include "llvm/ADT/StringExtras.h"

#include <fmt/format.h>

namespace rapid::ast {
namespace {

std::string callToString(const CallExpr &c) {
  std::vector<std::string> args;
  for (const Arg &a : c.args) {
    std::vector<std::string> extents;
    for (const ExprPtr &x : a.shape) extents.push_back(exprToString(*x));
    args.push_back((a.key ? a.key->name + " = " : "") + llvm::join(extents, " x "));
  }
  return c.callee.name + "(" + llvm::join(args, ", ") + ")";
}

/// `((1 + 2) + 3)`, `1..8`: a left-deep chain, printed in a loop along its left side.
std::string chainToString(const Expr &e) {
  std::vector<const Expr *> spine = leftSpine(e);
  std::string out;
  for (const Expr *x : spine)
    if (llvm::isa<BinaryExpr>(x)) out += "(";
  out += exprToString(*leftOperand(*spine.back()));
  for (auto it = spine.rbegin(); it != spine.rend(); ++it) {
    if (auto *b = llvm::dyn_cast<BinaryExpr>(*it))
      out += " " + b->op + " " + exprToString(*b->rhs) + ")";
    else
      out += ".." + exprToString(*llvm::cast<RangeExpr>(*it)->hi);
  }
  return out;
}

class Printer {
public:
  Printer(const llvm::SourceMgr &sm, llvm::raw_ostream &os) : sm(sm), os(os) {}

  void module(const Module &m) {
    for (const Import &i : m.imports)
      line(0, i.range, fmt::format("import {}", i.quoted ? "\"" + i.spelling + "\"" : i.spelling));
    for (const auto &d : m.decls) {
      std::string head = fmt::format("decl {} {}", d->kind.name, d->name.name);
      if (d->base) head += " : " + d->base->name;
      if (d->target) head += " over " + d->target->name;
      line(0, d->range, head);
      block(1, d->body);
    }
  }

private:
  void line(int depth, llvm::SMRange r, const std::string &text) {
    auto [l, c] = sm.getLineAndColumn(r.Start);
    os << std::string(2 * depth, ' ') << text << " <" << l << ":" << c << ">\n";
  }

  void block(int depth, const Block &b) {
    for (const StmtPtr &s : b.stmts) stmt(depth, *s);
  }

  void stmt(int depth, const Stmt &s) {
    switch (s.getKind()) {
    case Stmt::Kind::Assign: {
      auto &a = llvm::cast<AssignStmt>(s);
      std::vector<std::string> vals;
      for (const ExprPtr &v : a.values) vals.push_back(exprToString(*v));
      return line(depth, s.getRange(), fmt::format("assign {} = {}", a.path.dotted(), llvm::join(vals, ", ")));
    }
    case Stmt::Kind::Axis: {
      auto &a = llvm::cast<AxisStmt>(s);
      return line(depth, s.getRange(), fmt::format("axis {} in {}", a.path.dotted(), exprToString(*a.values)));
    }
    case Stmt::Kind::Where:
      return line(depth, s.getRange(), "where " + exprToString(*llvm::cast<WhereStmt>(s).cond));
    case Stmt::Kind::Map: {
      auto &m = llvm::cast<MapStmt>(s);
      auto names = [](const std::vector<Ident> &v) {
        std::vector<std::string> out;
        for (const Ident &i : v) out.push_back(i.name);
        return llvm::join(out, ", ");
      };
      return line(depth, s.getRange(), fmt::format("map {} -> {}", names(m.degrees), names(m.dims)));
    }
    case Stmt::Kind::Dim: {
      auto &d = llvm::cast<DimStmt>(s);
      line(depth, s.getRange(), fmt::format("dim {} : {}", d.name.name, callToString(*d.shape)));
      return block(depth + 1, d.body);
    }
    case Stmt::Kind::LinkFault: {
      auto &f = llvm::cast<LinkFaultStmt>(s);
      line(depth, s.getRange(), fmt::format("{} {}({}, {})", f.hard ? "hard" : "soft", f.dim.name,
                                            exprToString(*f.a), exprToString(*f.b)));
      return block(depth + 1, f.body);
    }
    case Stmt::Kind::Section: {
      auto &sec = llvm::cast<SectionStmt>(s);
      line(depth, s.getRange(), "section " + sec.kind.name + (sec.name ? " " + sec.name->name : ""));
      return block(depth + 1, sec.body);
    }
    }
  }

  const llvm::SourceMgr &sm;
  llvm::raw_ostream &os;
};

} // namespace

std::string exprToString(const Expr &e) {
  switch (e.getKind()) {
  case Expr::Kind::Number: {
    auto &n = llvm::cast<NumberExpr>(e);
    std::string v = fmt::format("{}", n.value);
    return n.unit.empty() ? v : v + " " + n.unit;
  }
  case Expr::Kind::Name: return llvm::cast<NameExpr>(e).dotted();
  case Expr::Kind::String: return "\"" + llvm::cast<StringExpr>(e).value + "\"";
  case Expr::Kind::List: {
    std::vector<std::string> items;
    for (const ExprPtr &x : llvm::cast<ListExpr>(e).elems) items.push_back(exprToString(*x));
    return "[" + llvm::join(items, ", ") + "]";
  }
  case Expr::Kind::Range:
  case Expr::Kind::Binary: return chainToString(e);
  case Expr::Kind::Call: return callToString(llvm::cast<CallExpr>(e));
  case Expr::Kind::Unary: {
    auto &u = llvm::cast<UnaryExpr>(e);
    return u.op + exprToString(*u.operand);
  }
  }
  return "";
}

void printModule(const Module &m, const llvm::SourceMgr &sm, llvm::raw_ostream &os) {
  Printer(sm, os).module(m);
}

} // namespace rapid::ast
