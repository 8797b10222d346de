//===- ConfigInput.cpp - Bounded files, strict JSON -----------------------===//
#include "rapid/Network/ConfigInput.h"

#include "llvm/Support/FileSystem.h"

#include <fmt/format.h>
#include <set>
#include <vector>

namespace rapid::net {

llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> readInputFile(const std::string &path, uint64_t maxBytes) {
  llvm::sys::fs::file_status st;
  if (std::error_code ec = llvm::sys::fs::status(path, st))
    return fileError(path, "cannot read: " + ec.message());
  if (st.type() != llvm::sys::fs::file_type::regular_file)
    return fileError(path, "not a regular file");
  if (st.getSize() > maxBytes)
    return fileError(path, fmt::format("{} bytes; at most {} are read", st.getSize(), maxBytes));
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buf) return fileError(path, "cannot read: " + buf.getError().message());
  return std::move(*buf);
}

namespace {

/// The keys of every object in well-formed JSON text, checked for repeats:
/// a stack of key sets, one per open object, and string tokens followed by
/// ':' as keys.
std::string repeatedKey(llvm::StringRef text) {
  std::vector<std::set<std::string>> objects;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '{') objects.emplace_back();
    else if (c == '}' && !objects.empty()) objects.pop_back();
    else if (c == '"') {
      std::string s;
      for (++i; i < text.size() && text[i] != '"'; ++i) {
        if (text[i] == '\\') ++i; // an escaped character never ends the string
        if (i < text.size()) s += text[i];
      }
      size_t j = text.find_first_not_of(" \t\r\n", i + 1);
      if (j != llvm::StringRef::npos && text[j] == ':' && !objects.empty() && !objects.back().insert(s).second)
        return s;
    }
  }
  return "";
}

} // namespace

llvm::Expected<llvm::json::Value> parseJsonText(const std::string &path, llvm::StringRef text) {
  auto value = llvm::json::parse(text);
  if (!value) return fileError(path, "invalid JSON: " + llvm::toString(value.takeError()));
  if (std::string key = repeatedKey(text); !key.empty())
    return fileError(path, fmt::format("key \"{}\" is written twice in one object", key));
  return std::move(*value);
}

llvm::Expected<llvm::json::Value> readJsonFile(const std::string &path) {
  auto buf = readInputFile(path);
  if (!buf) return buf.takeError();
  return parseJsonText(path, (*buf)->getBuffer());
}

llvm::Error checkKeys(const std::string &path, const std::string &where, const llvm::json::Object &o,
                      llvm::ArrayRef<llvm::StringRef> allowed) {
  // Sorted, so that the error names the same key whatever the hash order.
  std::vector<std::string> keys;
  for (const auto &[k, v] : o) keys.push_back(k.str());
  std::sort(keys.begin(), keys.end());
  for (const std::string &k : keys) {
    if (llvm::is_contained(allowed, k)) continue;
    llvm::StringRef best;
    unsigned bestDistance = 3;
    for (llvm::StringRef a : allowed)
      if (unsigned d = llvm::StringRef(k).edit_distance(a); d < bestDistance) best = a, bestDistance = d;
    std::string list;
    for (llvm::StringRef a : allowed) list += (list.empty() ? "" : ", ") + a.str();
    return fileError(path, fmt::format("{}: unknown key \"{}\"{}; expected {}", where, k,
                                       best.empty() ? "" : fmt::format(" (did you mean \"{}\"?)", best.str()),
                                       list));
  }
  return llvm::Error::success();
}

} // namespace rapid::net
