//===- AST.cpp ------------------------------------------------------------===//
#include "rapid/AST/AST.h"

#include "llvm/ADT/StringExtras.h"

namespace rapid::ast {

std::string NameExpr::dotted() const { return llvm::join(path, "."); }
std::string Path::dotted() const { return llvm::join(parts, "."); }

} // namespace rapid::ast
