//===- Source.cpp ---------------------------------------------------------===//
#include "rapid/Support/Source.h"

#include "llvm/Support/FileSystem.h"

#include <fmt/format.h>

namespace rapid {

llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> readSourceFile(const std::string &path) {
  // Look before opening: opening a FIFO for reading waits for a writer.
  llvm::sys::fs::file_status st;
  if (std::error_code ec = llvm::sys::fs::status(path, st))
    return llvm::createStringError(ec, ec.message());
  if (st.type() == llvm::sys::fs::file_type::directory_file)
    return llvm::createStringError(std::make_error_code(std::errc::is_a_directory), "it is a folder, not a file");
  if (st.type() != llvm::sys::fs::file_type::regular_file)
    return llvm::createStringError(std::make_error_code(std::errc::invalid_argument), "not a regular file");
  auto tooLarge = [&](uint64_t bytes) {
    return llvm::createStringError(std::make_error_code(std::errc::file_too_large),
                                   fmt::format("it has {} bytes; a source file has at most {} ({} MiB)", bytes,
                                               kMaxSourceBytes, kMaxSourceBytes >> 20));
  };
  if (st.getSize() > kMaxSourceBytes)
    return tooLarge(st.getSize());
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buf)
    return llvm::createStringError(buf.getError(), buf.getError().message());
  if ((*buf)->getBufferSize() > kMaxSourceBytes) // it grew after we looked
    return tooLarge((*buf)->getBufferSize());
  return std::move(*buf);
}

unsigned addSourceBuffer(llvm::SourceMgr &sm, std::unique_ptr<llvm::MemoryBuffer> buf, llvm::SMLoc includedFrom) {
  llvm::StringRef text = buf->getBuffer();
  bool loneCr = false;
  for (size_t i = text.find('\r'); i != llvm::StringRef::npos && !loneCr; i = text.find('\r', i + 1))
    loneCr = i + 1 == text.size() || text[i + 1] != '\n';
  if (loneCr) {
    std::string fixed = text.str();
    for (size_t i = 0; i < fixed.size(); ++i)
      if (fixed[i] == '\r' && (i + 1 == fixed.size() || fixed[i + 1] != '\n')) fixed[i] = '\n';
    buf = llvm::MemoryBuffer::getMemBufferCopy(fixed, buf->getBufferIdentifier());
  }
  return sm.AddNewSourceBuffer(std::move(buf), includedFrom);
}

} // namespace rapid
