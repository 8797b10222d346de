//===- BuildDecl.cpp - Files, declarations and statements -----------------===//
#include "Builder.h"

namespace rapid::parse {

Builder::Builder(DiagnosticEngine &diags, unsigned bufferId) : diags(diags) {
  llvm::StringRef buf = diags.sourceMgr().getMemoryBuffer(bufferId)->getBuffer();
  bufStart = buf.data();
  if (llvm::all_of(buf, [](char c) { return (unsigned char)c < 0x80; }))
    return;
  // Map code point indices to byte offsets; continuation bytes start no point.
  for (size_t i = 0; i < buf.size(); ++i)
    if (((unsigned char)buf[i] & 0xC0) != 0x80)
      byteOfCodePoint.push_back(i);
  byteOfCodePoint.push_back(buf.size());
}

const char *Builder::at(size_t cp) const {
  if (byteOfCodePoint.empty())
    return bufStart + cp;
  return bufStart + byteOfCodePoint[std::min(cp, byteOfCodePoint.size() - 1)];
}

llvm::SMRange Builder::loc(antlr4::Token *tok) const {
  return {llvm::SMLoc::getFromPointer(at(tok->getStartIndex())),
          llvm::SMLoc::getFromPointer(at(tok->getStopIndex() + 1))};
}

llvm::SMRange Builder::loc(antlr4::ParserRuleContext *ctx) const {
  antlr4::Token *stop = ctx->getStop() ? ctx->getStop() : ctx->getStart();
  return {loc(ctx->getStart()).Start, loc(stop).End};
}

ast::Ident Builder::ident(antlr4::Token *tok) const { return {tok->getText(), loc(tok)}; }

std::unique_ptr<ast::Module> Builder::file(P::FileContext *ctx) {
  auto module = std::make_unique<ast::Module>();
  for (P::ItemContext *item : ctx->item()) {
    if (item->importDecl())
      module->imports.push_back(importDecl(item->importDecl()));
    else
      module->decls.push_back(decl(item->decl()));
  }
  return module;
}

ast::Import Builder::importDecl(P::ImportDeclContext *ctx) {
  ast::Import imp;
  imp.range = loc(ctx);
  if (ctx->dotted) {
    imp.spelling = ctx->dotted->getText();
  } else {
    std::string text = ctx->filePath->getText();
    imp.spelling = text.substr(1, text.size() - 2);
    imp.quoted = true;
  }
  return imp;
}

std::unique_ptr<ast::Decl> Builder::decl(P::DeclContext *ctx) {
  auto d = std::make_unique<ast::Decl>();
  d->kind = ident(ctx->kind);
  d->name = ident(ctx->name);
  if (ctx->base)
    d->base = ident(ctx->base);
  if (ctx->target)
    d->target = ident(ctx->target);
  if (ctx->source)
    d->source = call(ctx->source);
  if (ctx->block())
    d->body = block(ctx->block());
  else
    d->body.range = loc(ctx);
  d->range = loc(ctx);
  return d;
}

ast::Block Builder::block(P::BlockContext *ctx) {
  ast::Block b;
  b.range = loc(ctx);
  for (P::StmtContext *s : ctx->stmt())
    b.stmts.push_back(stmt(s));
  return b;
}

ast::Path Builder::path(P::PathContext *ctx) {
  ast::Path p;
  for (antlr4::Token *id : ctx->parts)
    p.parts.push_back(id->getText());
  p.range = loc(ctx);
  return p;
}

ast::StmtPtr Builder::stmt(P::StmtContext *ctx) {
  llvm::SMRange r = loc(ctx);
  if (auto *s = dynamic_cast<P::AssignStmtContext *>(ctx)) {
    std::vector<ast::ExprPtr> values;
    for (P::ExprContext *e : s->expr())
      values.push_back(expr(e));
    return std::make_unique<ast::AssignStmt>(r, path(s->path()), std::move(values));
  }
  if (auto *s = dynamic_cast<P::AxisStmtContext *>(ctx))
    return std::make_unique<ast::AxisStmt>(r, path(s->path()), expr(s->expr()));
  if (auto *s = dynamic_cast<P::WhereStmtContext *>(ctx))
    return std::make_unique<ast::WhereStmt>(r, expr(s->expr()));
  if (auto *s = dynamic_cast<P::MapStmtContext *>(ctx)) {
    std::vector<ast::Ident> degrees, dims;
    for (antlr4::Token *t : s->ids) degrees.push_back(ident(t));
    for (antlr4::Token *t : s->dims) dims.push_back(ident(t));
    return std::make_unique<ast::MapStmt>(r, std::move(degrees), std::move(dims));
  }
  if (auto *s = dynamic_cast<P::DimStmtContext *>(ctx)) {
    ast::Block body = s->block() ? block(s->block()) : ast::Block{};
    return std::make_unique<ast::DimStmt>(r, ident(s->name), call(s->call()), std::move(body));
  }
  if (auto *s = dynamic_cast<P::LinkFaultStmtContext *>(ctx)) {
    ast::Block body = s->block() ? block(s->block()) : ast::Block{};
    return std::make_unique<ast::LinkFaultStmt>(r, s->severity->getText() == "hard", ident(s->dim),
                                                expr(s->a), expr(s->b), std::move(body));
  }
  auto *s = dynamic_cast<P::SectionStmtContext *>(ctx);
  assert(s && "grammar has a statement form the builder does not know");
  std::optional<ast::Ident> name;
  if (s->name)
    name = ident(s->name);
  return std::make_unique<ast::SectionStmt>(r, ident(s->kind), std::move(name), block(s->block()));
}

} // namespace rapid::parse
