//===- Faults.h - Link faults as a layer over the topology -----*- C++ -*-===//
//
// Faults change link state only; routing reads that state. File format:
//   {"faults": [
//     {"kind": "soft", "link": [0, 1], "derate": 0.5, "extra_latency": "200 ns"},
//     {"kind": "hard", "link": [2, "sw9"]} ]}
// A link is named by its end nodes (rank numbers, or "swN" for switch node N
// as printed in the link report); both directions are affected unless
// "directed": true. Soft: bandwidth x derate (0 < derate <= 1) and extra
// latency per hop. Hard: the link is removed.
//===----------------------------------------------------------------------===//
#pragma once

#include "rapid/Network/Topology.h"

#include "llvm/Support/Error.h"

namespace rapid::net {

struct Fault {
  uint32_t src = 0, dst = 0;
  bool hard = false, directed = false;
  double derate = 1.0;
  int64_t extraLatencyPs = 0;
};

llvm::Expected<std::vector<Fault>> loadFaults(const std::string &path);
llvm::Expected<std::vector<Fault>> parseFaults(const std::string &path, llvm::StringRef text);
/// The inverse of parseFaults: nodes named as `topo` names them.
std::string writeFaultsJson(const std::vector<Fault> &faults, const Topology &topo);
/// Applies faults to the topology's links; an error names a fault whose link
/// does not exist.
llvm::Error applyFaults(const std::string &path, const std::vector<Fault> &faults, Topology &topo);

} // namespace rapid::net
