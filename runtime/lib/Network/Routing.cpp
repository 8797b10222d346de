//===- Routing.cpp - Dimension-order and fault-aware routes ---------------===//

#include "rapid/Network/Routing.h"

#include <bit>
#include <algorithm>
#include <deque>
#include <fmt/format.h>

namespace rapid::net {

/// Moves `cur` along a grid-like dimension d until it equals `target`,
/// appending each node visited.
void Router::walkGrid(int d, int &cur, int target, std::vector<uint32_t> &nodes) const {
  const auto &ds = topo.spec().dims[d];
  bool wrap = ds.kind == DimKind::Ring || ds.kind == DimKind::Torus2D ||
              ds.kind == DimKind::Torus3D;
  int s = topo.stride(d);
  int local = topo.coord(cur, d), goal = topo.coord(target, d);
  auto step = [&](int delta) {
    local += delta;
    cur += delta * s;
    nodes.push_back(uint32_t(cur));
  };
  if (ds.kind == DimKind::KingMesh) {
    // Diagonal moves fix both axes at once while both differ.
    int w = ds.shape[0];
    while (local % w != goal % w && local / w != goal / w)
      step((goal % w > local % w ? 1 : -1) + (goal / w > local / w ? w : -w));
  }
  int axisStride = 1;
  for (int extent : ds.shape) {
    int c = local / axisStride % extent, g = goal / axisStride % extent;
    int forward = ((g - c) % extent + extent) % extent;
    int dir = (!wrap || forward == 0) ? (g > c ? 1 : -1) : (forward <= extent - forward ? 1 : -1);
    for (; c != g; c = ((c + dir) % extent + extent) % extent)
      step(((c + dir + extent) % extent - c) * axisStride);
    axisStride *= extent;
  }
}

void Router::walkDim(int d, int &cur, int target, std::vector<uint32_t> &nodes) const {
  const auto &ds = topo.spec().dims[d];
  int next = topo.withCoord(cur, d, topo.coord(target, d));
  if (next == cur)
    return;
  int line = topo.lineOf(cur, d);
  switch (ds.kind) {
  case DimKind::FullyConnected:
    break;
  case DimKind::Switch:
    nodes.push_back(topo.switchBase(d) + uint32_t(line));
    break;
  case DimKind::FatTree: {
    int leaves = (ds.size() + ds.leafSize - 1) / ds.leafSize;
    uint32_t first = topo.switchBase(d) + uint32_t(line * (leaves + 1));
    int a = topo.coord(cur, d) / ds.leafSize, b = topo.coord(next, d) / ds.leafSize;
    nodes.push_back(first + a);
    if (a != b) {
      nodes.push_back(first + uint32_t(leaves));
      nodes.push_back(first + b);
    }
    break;
  }
  case DimKind::HyperCube: {
    int local = topo.coord(cur, d), goal = topo.coord(next, d);
    for (int diff = local ^ goal; diff; diff &= diff - 1) {
      local ^= diff & -diff;
      nodes.push_back(uint32_t(topo.withCoord(cur, d, local)));
    }
    cur = next;
    return;
  }
  default:
    walkGrid(d, cur, next, nodes);
    return;
  }
  nodes.push_back(uint32_t(next));
  cur = next;
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
  uint64_t key = uint64_t(src) << 32 | uint32_t(dst);
  if (auto it = cache_.find(key); it != cache_.end())
    return Route{it->second.first, it->second.second};
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
  return Route{offset, uint32_t(scratchLinks_.size())};
}

} // namespace rapid::net
