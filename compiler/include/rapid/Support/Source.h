//===- Source.h - Reading .rapid sources ------------------------*- C++ -*-===//
//
// Every .rapid text reaches the SourceMgr through here: files (the one named
// on the command line and its imports) are read only if they are regular
// files of bounded size, so `rapidc /dev/zero` or a FIFO is an error rather
// than a hang, and every buffer gets one line-ending convention, so that
// llvm::SourceMgr and ANTLR, which both count lines by '\n' alone, agree on
// lines and columns in files written with '\r' or "\r\n".
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include <cstdint>
#include <memory>
#include <string>

namespace rapid {

/// The largest source file rapidc reads: far above any real experiment file.
constexpr uint64_t kMaxSourceBytes = uint64_t(16) << 20;

/// Reads the source file `path`. The error says why it cannot be read
/// ("not a regular file", its size over the limit, the system's reason);
/// the caller names the file.
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> readSourceFile(const std::string &path);

/// Adds `buf` to `sm` with every line break as '\n': a '\r' not followed by
/// '\n' becomes '\n' (byte for byte, so offsets do not move; "\r\n" stays,
/// its '\r' ending the line's text). Returns the buffer's id.
unsigned addSourceBuffer(llvm::SourceMgr &sm, std::unique_ptr<llvm::MemoryBuffer> buf, llvm::SMLoc includedFrom);

} // namespace rapid
