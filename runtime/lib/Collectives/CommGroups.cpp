//===- CommGroups.cpp - Read the comm-group JSON --------------------------===//

#include "rapid/Collectives/CommGroups.h"
#include "rapid/Network/NetworkConfig.h"

#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>
#include <set>

namespace rapid::coll {

llvm::Expected<CommGroups> loadCommGroups(const std::string &path, int numRanks) {
  auto doc = net::readJsonFile(path);
  if (!doc)
    return doc.takeError();
  const auto *obj = doc->getAsObject();
  if (!obj)
    return fileError(path, "expected {\"<group id>\": [ranks...], ...}");
  CommGroups groups;
  for (const auto &[key, value] : *obj) {
    uint32_t id;
    if (llvm::StringRef(key).getAsInteger(10, id) || id == 0)
      return fileError(path, fmt::format("group id '{}' must be a positive integer", key.str()));
    const auto *list = value.getAsArray();
    if (!list || list->empty())
      return fileError(path, fmt::format("group {}: expected a non-empty list of ranks", id));
    std::set<int64_t> seen;
    auto &ranks = groups.members[id];
    for (const auto &v : *list) {
      auto r = v.getAsInteger();
      if (!r || *r < 0 || *r >= numRanks)
        return fileError(path, fmt::format("group {}: member is not a rank in 0..{}", id,
                                           numRanks - 1));
      if (!seen.insert(*r).second)
        return fileError(path, fmt::format("group {}: rank {} listed twice", id, *r));
      ranks.push_back(int(*r));
    }
  }
  return groups;
}

std::string writeCommGroupsJson(const CommGroups &groups) {
  std::string out;
  llvm::raw_string_ostream os(out);
  llvm::json::OStream j(os); // compact: groups of thousands of ranks stay small
  j.object([&] {
    for (const auto &[id, ranks] : groups.members)
      j.attributeArray(std::to_string(id), [&] {
        for (int r : ranks) j.value(r);
      });
  });
  return out + "\n";
}

} // namespace rapid::coll
