//===- Docs.h - Field tables for the documentation -------------*- C++ -*-===//
#pragma once

#include <string>

namespace rapid {

/// Every field table as Markdown, each between `<!-- fields: NAME -->` and
/// `<!-- end fields -->` lines, in the order docs/language.md shows them.
std::string fieldTablesMarkdown();

} // namespace rapid
