//===- Routing.h - Paths through the topology ------------------*- C++ -*-===//
//
// Dimension-order routing: correct dimension 0 first, then 1, ...; inside a
// dimension the kind's natural minimal path (shorter way round a ring, axis
// by axis on tori, diagonals first on king meshes, bit by bit on hypercubes,
// leaf-spine-leaf on fat trees). If a hard fault cuts that path the router
// falls back to a breadth-first search over surviving links (fewest hops,
// ties to the lowest link id, so it is deterministic). Routes are cached per
// (src, dst) as ranges into one flat vector of link ids.
//===----------------------------------------------------------------------===//
#pragma once

#include "rapid/Network/Topology.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/Error.h"

namespace rapid::net {

/// A range of Router's flat link vector; stable while the router lives
/// (offsets, not pointers, because the vector grows as routes are added).
struct Route {
  uint32_t offset = 0, length = 0;
};

class Router {
public:
  explicit Router(const Topology &topo) : topo(topo) {}

  /// The links from rank src to rank dst; an error if faults disconnect them.
  llvm::Expected<Route> route(int src, int dst);
  /// The route src took last if it went to dst (most asks: a ring's member
  /// sends to one peer message after message), else null; no Expected to
  /// build and check on every message.
  const Route *lastRoute(int src, int dst) const {
    return size_t(src) < last_.size() && last_[size_t(src)].dst == dst ? &last_[size_t(src)].route : nullptr;
  }
  uint32_t link(Route r, uint32_t hop) const { return flat_[r.offset + hop]; }
  /// The fault-free dimension-order path as node ids (src first).
  void dimensionOrderNodes(int src, int dst, std::vector<uint32_t> &nodes) const;

private:
  void walkDim(int d, int &cur, int target, std::vector<uint32_t> &nodes) const;
  bool shortestPath(uint32_t src, uint32_t dst, std::vector<uint32_t> &links) const;

  const Topology &topo;
  std::vector<uint32_t> flat_;
  /// (offset, length) per (src, dst): open addressing, as every message asks.
  llvm::DenseMap<uint64_t, std::pair<uint32_t, uint32_t>> cache_;
  /// Each source's last destination and its route: a ring's members send to
  /// one peer message after message, so this answers most asks.
  struct Last {
    int dst = -1;
    Route route;
  };
  std::vector<Last> last_;
  std::vector<uint32_t> scratchNodes_, scratchLinks_;
};

} // namespace rapid::net
