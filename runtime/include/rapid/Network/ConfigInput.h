//===- ConfigInput.h - Reading the runtime's input files safely -*- C++ -*-===//
//
// Every file rapid-sim reads (network, faults, comm groups, system, traces)
// goes through these: only regular files of bounded size (a FIFO or
// /dev/zero would block or never end), JSON with no key written twice, and
// objects with no key the format does not have. Errors read
// "<file>: <what>", as the rest of the runtime's.
//===----------------------------------------------------------------------===//
#pragma once

#include "rapid/Support/Files.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <memory>
#include <string>

namespace rapid::net {

/// The file's bytes, if it is a regular file of at most `maxBytes`.
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> readInputFile(const std::string &path,
                                                                  uint64_t maxBytes = uint64_t(64) << 20);

/// Parses JSON text; a key written twice in one object is an error (LLVM's
/// parser would keep the last one silently).
llvm::Expected<llvm::json::Value> parseJsonText(const std::string &path, llvm::StringRef text);
llvm::Expected<llvm::json::Value> readJsonFile(const std::string &path);

/// An error naming the first key of `o` that is not in `allowed` (with the
/// closest allowed one), or success. `where` says which object: "dimension 2".
llvm::Error checkKeys(const std::string &path, const std::string &where, const llvm::json::Object &o,
                      llvm::ArrayRef<llvm::StringRef> allowed);

} // namespace rapid::net
