//===- Files.h - Writing output files ---------------------------*- C++ -*-===//
#pragma once

#include "llvm/Support/Error.h"

#include <string>

namespace rapid {

/// Writes `text` to `path`, replacing it; an I/O failure is an Error naming the file.
llvm::Error writeFile(const std::string &path, const std::string &text);

/// The same through `path.tmp` and a rename, so a reader never sees half a file.
llvm::Error writeFileAtomically(const std::string &path, const std::string &text);

} // namespace rapid
