//===- Routing.cpp - Dimension-order and fault-aware routes ---------------===//

#include "rapid/Network/Routing.h"
#include "rapid/Network/TopologyKinds.h"

#include <algorithm>
#include <deque>
#include <fmt/format.h>

namespace rapid::net {

/// Moves `cur` to `target`'s coordinate in dimension d the way the kind
/// routes, appending each node visited.
void Router::walkDim(int d, int &cur, int target, std::vector<uint32_t> &nodes) const {
  int from = topo.coord(cur, d), to = topo.coord(target, d);
  if (from == to)
    return;
  topologyKind(topo.spec().dims[d].kind).route(topo.line(d, topo.lineOf(cur, d)), from, to, nodes);
  cur = topo.withCoord(cur, d, to);
}

void Router::dimensionOrderNodes(int src, int dst, std::vector<uint32_t> &nodes) const {
  nodes.assign(1, uint32_t(src));
  int cur = src;
  for (int d = 0; d < topo.numDims(); ++d)
    walkDim(d, cur, dst, nodes);
}

/// BFS over links that are not failed; parents remembered per node.
bool Router::shortestPath(uint32_t src, uint32_t dst, std::vector<uint32_t> &links) const {
  std::vector<uint32_t> via(topo.numNodes(), kNoLink);
  std::vector<bool> seen(topo.numNodes(), false);
  std::deque<uint32_t> queue{src};
  seen[src] = true;
  while (!queue.empty() && !seen[dst]) {
    uint32_t n = queue.front();
    queue.pop_front();
    for (const uint32_t *l = topo.outBegin(n); l != topo.outEnd(n); ++l) {
      const Link &link = topo.links()[*l];
      if (link.failed || seen[link.dst])
        continue;
      // Any node forwards: in direct topologies (rings, meshes) ranks do.
      seen[link.dst] = true;
      via[link.dst] = *l;
      queue.push_back(link.dst);
    }
  }
  if (!seen[dst])
    return false;
  links.clear();
  for (uint32_t n = dst; n != src; n = topo.links()[via[n]].src)
    links.push_back(via[n]);
  std::reverse(links.begin(), links.end());
  return true;
}

llvm::Expected<Route> Router::route(int src, int dst) {
  if (const Route *last = lastRoute(src, dst)) return *last;
  if (last_.empty()) last_.resize(size_t(topo.numRanks()));
  uint64_t key = uint64_t(src) << 32 | uint32_t(dst);
  if (auto it = cache_.find(key); it != cache_.end()) {
    Route r{it->second.first, it->second.second};
    last_[size_t(src)] = {dst, r};
    return r;
  }
  dimensionOrderNodes(src, dst, scratchNodes_);
  scratchLinks_.clear();
  bool intact = true;
  for (size_t i = 1; i < scratchNodes_.size() && intact; ++i) {
    uint32_t l = topo.linkBetween(scratchNodes_[i - 1], scratchNodes_[i]);
    intact = l != kNoLink && !topo.links()[l].failed;
    scratchLinks_.push_back(l);
  }
  if (!intact && !shortestPath(uint32_t(src), uint32_t(dst), scratchLinks_))
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        fmt::format("ranks {} and {} must communicate but hard faults disconnect them", src, dst));
  uint32_t offset = uint32_t(flat_.size());
  flat_.insert(flat_.end(), scratchLinks_.begin(), scratchLinks_.end());
  cache_[key] = {offset, uint32_t(scratchLinks_.size())};
  Route r{offset, uint32_t(scratchLinks_.size())};
  last_[size_t(src)] = {dst, r};
  return r;
}

} // namespace rapid::net
