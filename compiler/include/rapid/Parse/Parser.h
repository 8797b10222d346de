//===- Parser.h - Text to AST -----------------------------------*- C++ -*-===//
//
// The only door between ANTLR and the rest of rapid: these functions run the
// generated parser and hand back our own AST. Syntax errors are reported
// through the DiagnosticEngine with exact source locations.
//===----------------------------------------------------------------------===//
#pragma once

#include "rapid/AST/AST.h"
#include "rapid/Support/Diagnostics.h"

namespace rapid {

/// Parses buffer `bufferId` of the engine's SourceMgr as a whole .rapid file.
/// Returns null if it has syntax errors (already reported).
std::unique_ptr<ast::Module> parseModule(unsigned bufferId, DiagnosticEngine &diags);

/// Parses a buffer holding exactly one statement, such as `a.b = 3 GB;`.
ast::StmtPtr parseStatement(unsigned bufferId, DiagnosticEngine &diags);

} // namespace rapid
