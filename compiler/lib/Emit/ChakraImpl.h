//===- ChakraImpl.h - Shared by the Chakra emitter's files -----*- C++ -*-===//
#pragma once

#include "rapid/Passes/RankLayout.h"

#include "llvm/Support/Error.h"

#include <map>

namespace rapid::emit {

/// Communicator groups the program uses, numbered from 1 in the order first
/// met (ranks ascending), as Astra-Sim's comm-group file wants them.
class Groups {
public:
  struct Entry {
    int id;
    std::vector<int64_t> members;
    std::vector<bool> involved; ///< network dimensions the group spans
  };
  Groups(const ir::Program &prog, const RankLayout &layout);
  const Entry &of(int64_t rank, ir::Group g) const { return entries[byRank.at({rank, g})]; }
  const std::vector<Entry> &all() const { return entries; }

private:
  std::vector<Entry> entries;
  std::map<std::pair<int64_t, ir::Group>, size_t> byRank;
};

} // namespace rapid::emit

namespace ChakraProtoMsg {
class Node;
}

namespace rapid::emit {

/// The Chakra node of op `idx` of `rank`'s stage graph.
void fillNode(ChakraProtoMsg::Node &n, const ir::Op &op, size_t idx, int64_t rank, const RankLayout &layout,
              const Groups &groups);

llvm::Error writeRankTrace(const std::string &path, const ir::Graph &g, int64_t rank, const RankLayout &layout,
                           const Groups &groups);

} // namespace rapid::emit
