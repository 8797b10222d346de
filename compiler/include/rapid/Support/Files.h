//===- Files.h - Writing output files, errors about input files --*- C++ -*-===//
#pragma once

#include "llvm/Support/Error.h"

#include <string>

namespace rapid {

/// An error about an input file, read "<path>: <what>" (every reader of the
/// runtime and the profile reader says it so).
llvm::Error fileError(const std::string &path, const std::string &what);

/// Writes `text` to `path`, replacing it; an I/O failure is an Error naming the file.
llvm::Error writeFile(const std::string &path, const std::string &text);

/// The same through `path.tmp` and a rename, so a reader never sees half a file.
llvm::Error writeFileAtomically(const std::string &path, const std::string &text);

} // namespace rapid
