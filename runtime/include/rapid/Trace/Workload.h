//===- Workload.h - All ranks of a trace set, loaded and checked -*- C++ -*-===//
//
// Everything that can be known wrong before simulating is checked here, so a
// bad trace ends with one clear message instead of a hang: missing rank files,
// attributes a node kind needs, unsupported kinds and collectives, peers out
// of range, and sends/receives that can never pair.
//===----------------------------------------------------------------------===//
#pragma once

#include "rapid/Trace/EtReader.h"
#include "rapid/Trace/Graph.h"

namespace rapid::trace {

struct Workload {
  std::string prefix;
  std::vector<RankGraph> ranks;
};

/// Reads `<prefix>.<r>.et` for r in [0, numRanks).
llvm::Expected<Workload> loadWorkload(const std::string &prefix, int numRanks,
                                      const ReadOptions &opts);

/// Whether `path` names a compact set's rank map (PREFIX.ranks.json).
bool isCompactMap(const std::string &path);
/// Reads a compact set (CompactWorkload.cpp): each program once, every rank
/// from the map with its groups and pipeline peers filled in.
llvm::Expected<Workload> loadCompactWorkload(const std::string &map, int numRanks, const ReadOptions &opts);

struct CheckOptions {
  bool roofline = false; ///< COMP nodes then need num_ops and tensor_size
};

/// The semantic checks above; the first problem found (in rank, then id
/// order) is returned.
llvm::Error checkWorkload(const Workload &w, const CheckOptions &opts);

} // namespace rapid::trace
