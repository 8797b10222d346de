//===- FuzzCommon.h - What every libFuzzer target of rapid shares -*- C++ -*-===//
//
// The tools read files, so each target writes its input to a private
// temporary folder and hands the path to the same library entry the tool
// uses. See docs/testing.md.
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace rapid::fuzz {

/// A folder of this process's own, made on first use.
inline const std::string &workDir() {
  static const std::string dir = [] {
    llvm::SmallString<128> d;
    if (llvm::sys::fs::createUniqueDirectory("rapid-fuzz", d)) {
      std::fprintf(stderr, "fuzz: cannot create a temporary folder\n");
      std::abort();
    }
    return std::string(d);
  }();
  return dir;
}

/// Writes `data` to `path`, replacing it; aborts on failure (a broken
/// harness must not look like a clean run).
inline void writeFile(const std::string &path, llvm::StringRef data) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_None);
  if (ec) {
    std::fprintf(stderr, "fuzz: cannot write %s: %s\n", path.c_str(), ec.message().c_str());
    std::abort();
  }
  os << data;
}

/// A finding that is not a sanitizer report (a silent or unlocated error):
/// print it and abort, so libFuzzer saves the input.
[[noreturn]] inline void fail(const std::string &what, llvm::StringRef detail) {
  std::fprintf(stderr, "fuzz: %s\n", what.c_str());
  std::fwrite(detail.data(), 1, detail.size(), stderr); // may hold NUL bytes
  std::fputc('\n', stderr);
  std::abort();
}

/// A trace-set input: an options byte, then the ranks' files joined by
/// "\n--RANK--\n" (test/fuzz/seeds.py packs them so). False for an empty
/// input or more than `most` ranks: not a shape the target explores.
inline bool splitRanks(const uint8_t *data, size_t size, size_t most, uint8_t &flags,
                       llvm::SmallVectorImpl<llvm::StringRef> &parts) {
  if (size == 0) return false;
  flags = data[0];
  llvm::StringRef(reinterpret_cast<const char *>(data + 1), size - 1).split(parts, "\n--RANK--\n");
  return parts.size() <= most;
}

} // namespace rapid::fuzz
