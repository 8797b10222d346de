//===- GroupGrid.cpp - Recognise communicator groups that are grids -------===//

#include "rapid/Collectives/GroupGrid.h"

#include <algorithm>

namespace rapid::coll {

bool withinOneNode(const net::NetworkSpec &spec, const std::vector<int> &dims) {
  if (dims.empty()) return false;
  int lo = *std::min_element(dims.begin(), dims.end()), hi = *std::max_element(dims.begin(), dims.end());
  if (lo == hi) return false; // the axes of one dimension (a torus): its own phases
  for (int d = lo + 1; d <= hi; ++d)
    if (!spec.dims[d].sameNode) return false;
  return true;
}

std::optional<GroupGrid> groupGrid(const std::vector<int> &members, const net::Topology &topo) {
  GroupGrid g;
  std::vector<std::vector<int>> values; // per axis: the coordinates members take, sorted
  std::vector<std::vector<int>> coords(members.size());
  const auto &dims = topo.spec().dims;
  for (int d = 0; d < int(dims.size()); ++d) {
    int axisStride = 1;
    for (int extent : dims[d].shape) {
      std::vector<int> seen;
      for (size_t m = 0; m < members.size(); ++m) seen.push_back(topo.coord(members[m], d) / axisStride % extent);
      std::vector<int> distinct = seen;
      std::sort(distinct.begin(), distinct.end());
      distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
      axisStride *= extent;
      if (distinct.size() < 2) continue;
      g.axes.push_back({d, int(distinct.size()), 0});
      for (size_t m = 0; m < members.size(); ++m)
        coords[m].push_back(int(std::lower_bound(distinct.begin(), distinct.end(), seen[m]) - distinct.begin()));
      values.push_back(std::move(distinct));
    }
  }
  if (g.axes.size() < 2) return std::nullopt;
  std::vector<int> spanned;
  for (const GroupGrid::Axis &a : g.axes) spanned.push_back(a.dim);
  if (withinOneNode(topo.spec(), spanned)) return std::nullopt; // NCCL's ring over the node
  int64_t cells = 1;
  for (GroupGrid::Axis &a : g.axes) {
    a.stride = int(cells);
    cells *= a.size;
    if (cells > int64_t(members.size())) return std::nullopt;
  }
  if (cells != int64_t(members.size())) return std::nullopt;
  // As many distinct cells as members: each member fills one, so every
  // combination is present.
  g.linear.resize(members.size());
  g.member.assign(members.size(), UINT32_MAX);
  for (size_t m = 0; m < members.size(); ++m) {
    uint32_t at = 0;
    for (size_t a = 0; a < g.axes.size(); ++a) at += uint32_t(coords[m][a] * g.axes[a].stride);
    if (g.member[at] != UINT32_MAX) return std::nullopt; // two members in one cell: not a grid
    g.linear[m] = at;
    g.member[at] = uint32_t(m);
  }
  return g;
}

} // namespace rapid::coll
