//===- CommGroups.h - Communicator groups ----------------------*- C++ -*-===//
//
// Astra-Sim's comm-group file: {"1": [0, 1, 2, 3], "2": [4, 5, 6, 7]}. A
// COMM_COLL node names its group with pg_name; 0 (or no pg_name) is every
// rank. A named group runs as one logical line over the listed ranks in the
// listed order.
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/Support/Error.h"

#include <map>
#include <string>
#include <vector>

namespace rapid::coll {

struct CommGroups {
  std::map<uint32_t, std::vector<int>> members; ///< group id -> ranks in order
};

llvm::Expected<CommGroups> loadCommGroups(const std::string &path, int numRanks);
/// The inverse of loadCommGroups: groups in id order, compact JSON.
std::string writeCommGroupsJson(const CommGroups &groups);

} // namespace rapid::coll
