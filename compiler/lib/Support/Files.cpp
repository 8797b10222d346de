//===- Files.cpp ----------------------------------------------------------===//
#include "rapid/Support/Files.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>

namespace rapid {

llvm::Error fileError(const std::string &path, const std::string &what) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), fmt::format("{}: {}", path, what));
}

llvm::Error writeFile(const std::string &path, const std::string &text) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (!ec) {
    os << text;
    os.close();
    ec = os.error();
  }
  if (ec) return llvm::createStringError(ec, "cannot write '%s': %s", path.c_str(), ec.message().c_str());
  return llvm::Error::success();
}

llvm::Error writeFileAtomically(const std::string &path, const std::string &text) {
  std::string tmp = path + ".tmp";
  if (llvm::Error e = writeFile(tmp, text)) return e;
  if (std::error_code ec = llvm::sys::fs::rename(tmp, path))
    return llvm::createStringError(ec, "cannot write '%s': %s", path.c_str(), ec.message().c_str());
  return llvm::Error::success();
}

} // namespace rapid
