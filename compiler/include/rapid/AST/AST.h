//===- AST.h - The .rapid abstract syntax tree -----------------*- C++ -*-===//
//
// A closed family of nodes (Kind enum + classof, dispatched with switch and
// llvm::isa/cast/dyn_cast, as in MLIR's Toy). Every node carries the source
// range it came from so that every later diagnostic can point at the text.
// The tree knows nothing of ANTLR; Parse/ builds it.
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/Support/Casting.h"
#include "llvm/Support/SMLoc.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace rapid::ast {

/// A name as written, with where it was written.
struct Ident {
  std::string name;
  llvm::SMRange range;
};

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

class Expr {
public:
  enum class Kind { Number, Name, String, List, Range, Call, Unary, Binary };
  Expr(Kind kind, llvm::SMRange range) : kind(kind), range(range) {}
  virtual ~Expr() = default;
  Kind getKind() const { return kind; }
  llvm::SMRange getRange() const { return range; }

private:
  Kind kind;
  llvm::SMRange range;
};
using ExprPtr = std::unique_ptr<Expr>;

/// `4096`, `80 GiB`, `100 GB/s`, `73 %`: a literal and its unit spelling.
struct NumberExpr : Expr {
  NumberExpr(llvm::SMRange r, double value, std::string unit, llvm::SMRange unitRange)
      : Expr(Kind::Number, r), value(value), unit(std::move(unit)), unitRange(unitRange) {}
  double value;
  std::string unit; ///< "" for a plain number
  llvm::SMRange unitRange;
  static bool classof(const Expr *e) { return e->getKind() == Kind::Number; }
};

/// `hidden`, `parallel.tp`, `a100_sxm_80gb`, `on`: meaning is decided by Sema.
struct NameExpr : Expr {
  NameExpr(llvm::SMRange r, std::vector<std::string> path) : Expr(Kind::Name, r), path(std::move(path)) {}
  std::vector<std::string> path;
  std::string dotted() const;
  static bool classof(const Expr *e) { return e->getKind() == Kind::Name; }
};

struct StringExpr : Expr {
  StringExpr(llvm::SMRange r, std::string value) : Expr(Kind::String, r), value(std::move(value)) {}
  std::string value;
  static bool classof(const Expr *e) { return e->getKind() == Kind::String; }
};

struct ListExpr : Expr {
  ListExpr(llvm::SMRange r, std::vector<ExprPtr> elems) : Expr(Kind::List, r), elems(std::move(elems)) {}
  std::vector<ExprPtr> elems;
  static bool classof(const Expr *e) { return e->getKind() == Kind::List; }
};

/// The left operand of a binary or range expression (null for others).
/// `1 + 2 + ... + n` is a tree as deep as it is long down this side, so code
/// that walks it loops along it (`leftSpine`) rather than recursing.
const Expr *leftOperand(const Expr &e);
/// `e` and the left operands below it while they are binary or range
/// expressions, top first; the last one's left operand is the chain's start.
std::vector<const Expr *> leftSpine(const Expr &e);

/// `lo..hi`, inclusive.
struct RangeExpr : Expr {
  RangeExpr(llvm::SMRange r, ExprPtr lo, ExprPtr hi) : Expr(Kind::Range, r), lo(std::move(lo)), hi(std::move(hi)) {}
  ~RangeExpr() override;
  ExprPtr lo, hi;
  static bool classof(const Expr *e) { return e->getKind() == Kind::Range; }
};

/// One argument of a call: optionally named, and a shape `4 x 4` of one or
/// more extents.
struct Arg {
  std::optional<Ident> key;
  std::vector<ExprPtr> shape;
  llvm::SMRange range;
};

/// `Torus2D(4 x 4)`, `normal(0.5, 0.1)`, `pow2(1, 64)`.
struct CallExpr : Expr {
  CallExpr(llvm::SMRange r, Ident callee, std::vector<Arg> args)
      : Expr(Kind::Call, r), callee(std::move(callee)), args(std::move(args)) {}
  Ident callee;
  std::vector<Arg> args;
  static bool classof(const Expr *e) { return e->getKind() == Kind::Call; }
};

struct UnaryExpr : Expr {
  UnaryExpr(llvm::SMRange r, std::string op, ExprPtr operand)
      : Expr(Kind::Unary, r), op(std::move(op)), operand(std::move(operand)) {}
  std::string op;
  ExprPtr operand;
  static bool classof(const Expr *e) { return e->getKind() == Kind::Unary; }
};

struct BinaryExpr : Expr {
  BinaryExpr(llvm::SMRange r, std::string op, llvm::SMRange opRange, ExprPtr lhs, ExprPtr rhs)
      : Expr(Kind::Binary, r), op(std::move(op)), opRange(opRange), lhs(std::move(lhs)), rhs(std::move(rhs)) {}
  ~BinaryExpr() override;
  std::string op;
  llvm::SMRange opRange;
  ExprPtr lhs, rhs;
  static bool classof(const Expr *e) { return e->getKind() == Kind::Binary; }
};

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

class Stmt;
using StmtPtr = std::unique_ptr<Stmt>;
struct Block {
  std::vector<StmtPtr> stmts;
  llvm::SMRange range;
};

class Stmt {
public:
  enum class Kind { Assign, Axis, Where, Map, Dim, LinkFault, Section };
  Stmt(Kind kind, llvm::SMRange range) : kind(kind), range(range) {}
  virtual ~Stmt() = default;
  Kind getKind() const { return kind; }
  llvm::SMRange getRange() const { return range; }

private:
  Kind kind;
  llvm::SMRange range;
};

/// A dotted field path as written: `l2.capacity`.
struct Path {
  std::vector<std::string> parts;
  llvm::SMRange range;
  std::string dotted() const;
};

/// `path = value (, value)*;`
struct AssignStmt : Stmt {
  AssignStmt(llvm::SMRange r, Path path, std::vector<ExprPtr> values)
      : Stmt(Kind::Assign, r), path(std::move(path)), values(std::move(values)) {}
  Path path;
  std::vector<ExprPtr> values;
  static bool classof(const Stmt *s) { return s->getKind() == Kind::Assign; }
};

/// A sweep axis: `tp in [1, 2, 4];`
struct AxisStmt : Stmt {
  AxisStmt(llvm::SMRange r, Path path, ExprPtr values)
      : Stmt(Kind::Axis, r), path(std::move(path)), values(std::move(values)) {}
  Path path;
  ExprPtr values;
  static bool classof(const Stmt *s) { return s->getKind() == Kind::Axis; }
};

/// A sweep constraint: `where dp >= 1;`
struct WhereStmt : Stmt {
  WhereStmt(llvm::SMRange r, ExprPtr cond) : Stmt(Kind::Where, r), cond(std::move(cond)) {}
  ExprPtr cond;
  static bool classof(const Stmt *s) { return s->getKind() == Kind::Where; }
};

/// `map tp, cp -> fast;`: parallel degrees laid onto network dimensions.
struct MapStmt : Stmt {
  MapStmt(llvm::SMRange r, std::vector<Ident> degrees, std::vector<Ident> dims)
      : Stmt(Kind::Map, r), degrees(std::move(degrees)), dims(std::move(dims)) {}
  std::vector<Ident> degrees, dims;
  static bool classof(const Stmt *s) { return s->getKind() == Kind::Map; }
};

/// `dim fast : Torus2D(4 x 4) { link = 100 GB/s, 500 ns; }`
struct DimStmt : Stmt {
  DimStmt(llvm::SMRange r, Ident name, std::unique_ptr<CallExpr> shape, Block body)
      : Stmt(Kind::Dim, r), name(std::move(name)), shape(std::move(shape)), body(std::move(body)) {}
  Ident name;
  std::unique_ptr<CallExpr> shape;
  Block body;
  static bool classof(const Stmt *s) { return s->getKind() == Kind::Dim; }
};

/// `soft fast(0, 1) { derate = 50 %; }` or `hard slow(2, 3);`
struct LinkFaultStmt : Stmt {
  LinkFaultStmt(llvm::SMRange r, bool hard, Ident dim, ExprPtr a, ExprPtr b, Block body)
      : Stmt(Kind::LinkFault, r), hard(hard), dim(std::move(dim)), a(std::move(a)), b(std::move(b)),
        body(std::move(body)) {}
  bool hard;
  Ident dim;
  ExprPtr a, b;
  Block body;
  static bool classof(const Stmt *s) { return s->getKind() == Kind::LinkFault; }
};

/// `training { ... }`, `l2 { ... }`, `random one_link { ... }`
struct SectionStmt : Stmt {
  SectionStmt(llvm::SMRange r, Ident kind, std::optional<Ident> name, Block body)
      : Stmt(Kind::Section, r), kind(std::move(kind)), name(std::move(name)), body(std::move(body)) {}
  Ident kind;
  std::optional<Ident> name;
  Block body;
  static bool classof(const Stmt *s) { return s->getKind() == Kind::Section; }
};

//===----------------------------------------------------------------------===//
// Declarations and files
//===----------------------------------------------------------------------===//

/// `gpu name : base { ... }`, `sweep name over experiment { ... }`
struct Decl {
  Ident kind;
  Ident name;
  std::optional<Ident> base;
  std::optional<Ident> target;
  /// `model m = hf("config.json")`: where the fields come from; Sema turns
  /// the file into assignments ahead of the body's.
  std::unique_ptr<CallExpr> source;
  Block body;
  llvm::SMRange range;
};

/// `import std.gpus;` or `import "other.rapid";`
struct Import {
  std::string spelling; ///< dotted name or the quoted path's contents
  bool quoted = false;
  llvm::SMRange range;
};

struct Module {
  std::string path;
  unsigned bufferId = 0;
  std::vector<Import> imports;
  std::vector<std::unique_ptr<Decl>> decls;
};

} // namespace rapid::ast
