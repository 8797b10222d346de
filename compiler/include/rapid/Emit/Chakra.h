//===- Chakra.h - Per-rank Chakra execution traces --------------*- C++ -*-===//
//
// `rapidc --emit=chakra -o DIR` writes, for each experiment point:
//   DIR/PREFIX.<rank>.et   one trace per rank (varint32-delimited protobuf,
//                          GlobalMetadata first, nodes in topological order)
//   DIR/comm_groups.json   Astra-Sim's communicator groups
//   DIR/network.json       the network, in rapid-sim's format
//   DIR/system.json        collective settings (Astra-Sim's system keys)
//   DIR/faults.json        explicit link faults, when the point has any
// or, with `compact`, instead of the per-rank traces:
//   DIR/PREFIX.stage<s>.et each pipeline stage's program once, with slots for
//                          what differs per rank
//   DIR/PREFIX.ranks.json  which program each rank runs, with its groups and
//                          pipeline peers (rapid-sim --workload reads it)
// The traces keep to what stock Astra-Sim's analytical backend reads
// (shared/reference/chakra-format.md): no metadata nodes, supported
// collectives only, integer attribute types as its readers expect.
//===----------------------------------------------------------------------===//
#pragma once

#include "rapid/IR/IR.h"
#include "rapid/Sema/Sema.h"

#include "llvm/Support/Error.h"

namespace rapid {

/// Writes the point's traces (every rank's, or those `ranks` lists:
/// ascending, each below the point's rank count) and the files that go
/// with them (communicator groups, network, system, faults) to `dir`.
llvm::Error emitChakra(const ir::Program &prog, const ExperimentPoint &point, const std::string &dir,
                       const std::string &prefix, const std::vector<int64_t> *ranks = nullptr, bool compact = false);

/// `--ranks 0-7,64`: ranks and inclusive ranges, as an ascending list
/// without repeats; an error naming `option` and what is not one.
llvm::Expected<std::vector<int64_t>> parseRankList(llvm::StringRef spec, llvm::StringRef option);

/// The folder of a point under `root`: `root/<experiment>` or, for a sweep
/// point, `root/<sweep>/<axis>-<value>_...`.
std::string pointDirectory(const std::string &root, const ExperimentPoint &point);

} // namespace rapid
