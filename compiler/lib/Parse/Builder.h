//===- Builder.h - Parse tree to AST (private to Parse/) --------*- C++ -*-===//
//
// A hand-written builder with one method per grammar rule, split by grammar
// area: BuildDecl.cpp for files, declarations and statements, BuildExpr.cpp
// for expressions. This header is the only one that sees generated types.
//===----------------------------------------------------------------------===//
#pragma once

#include "RapidParser.h"
#include "rapid/AST/AST.h"
#include "rapid/Support/Diagnostics.h"

#include "llvm/Support/SourceMgr.h"

namespace rapid::parse {

using P = grammar::RapidParser;

class Builder {
public:
  Builder(DiagnosticEngine &diags, unsigned bufferId);

  std::unique_ptr<ast::Module> file(P::FileContext *ctx);
  ast::StmtPtr stmt(P::StmtContext *ctx);
  /// Whether the builder reported an error (a number out of range).
  bool failed() const { return errors; }

private:
  // BuildDecl.cpp
  ast::Import importDecl(P::ImportDeclContext *ctx);
  std::unique_ptr<ast::Decl> decl(P::DeclContext *ctx);
  ast::Block block(P::BlockContext *ctx);
  ast::Path path(P::PathContext *ctx);

  // BuildExpr.cpp
  ast::ExprPtr expr(P::ExprContext *ctx);
  ast::ExprPtr leftChain(P::ExprContext *ctx);
  ast::ExprPtr primary(P::PrimaryContext *ctx);
  ast::ExprPtr quantity(P::QuantityContext *ctx);
  std::unique_ptr<ast::CallExpr> call(P::CallContext *ctx);

  // Locations: ANTLR indexes code points; the SourceMgr indexes bytes.
  llvm::SMRange loc(antlr4::ParserRuleContext *ctx) const;
  llvm::SMRange loc(antlr4::Token *tok) const;
  ast::Ident ident(antlr4::Token *tok) const;
  const char *at(size_t codePoint) const;

  DiagnosticEngine &diags;
  bool errors = false;
  const char *bufStart;
  std::vector<uint32_t> byteOfCodePoint; ///< empty when the buffer is ASCII
};

} // namespace rapid::parse
