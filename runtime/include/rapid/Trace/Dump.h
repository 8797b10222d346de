//===- Dump.h - Print a Chakra trace as stable text or JSON ----*- C++ -*-===//
#pragma once

#include "rapid/Trace/EtReader.h"
#include "llvm/Support/raw_ostream.h"

namespace rapid::trace {

enum class DumpFormat { Text, Json };

/// Prints the GlobalMetadata, then one node per line in file order: id, name,
/// type, deps and attributes (sorted by name so the text is stable).
llvm::Error dumpEtFile(const std::string &path, DumpFormat format, const ReadOptions &opts,
                       llvm::raw_ostream &os);

} // namespace rapid::trace
