//===- ASTPrinter.h - `--emit=ast` ------------------------------*- C++ -*-===//
#pragma once

#include "rapid/AST/AST.h"

#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

namespace rapid::ast {

/// Prints a module as an indented tree, one node per line, each with its
/// `line:col` (stable text for FileCheck).
void printModule(const Module &m, const llvm::SourceMgr &sm, llvm::raw_ostream &os);
/// An expression as source-like text: `(64 / (tp * cp))`, `Torus2D(4 x 4)`.
std::string exprToString(const Expr &e);

} // namespace rapid::ast
