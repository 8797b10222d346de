//===- TopologyKinds.cpp - The table of dimension kinds -------------------===//
//
// Builders and routers work on one line of a dimension in its own positions
// (0 .. size-1); DimLine maps a position to a rank. Link order matters: link
// ids appear in reports and break ties in fault rerouting, so builders add
// links in a fixed order.
//===----------------------------------------------------------------------===//

#include "rapid/Network/TopologyKinds.h"
#include "rapid/Network/FatTree.h"

#include "llvm/ADT/StringExtras.h"

#include <bit>
#include <climits>
#include <cmath>
#include <fmt/format.h>

namespace rapid::net {
namespace {

//===----------------------------------------------------------------------===//
// Grids: rings, meshes, tori, king meshes
//===----------------------------------------------------------------------===//

/// A link to the next position along each axis (wrapping on tori, where an
/// axis of 2 would only duplicate its one link), plus both diagonals on king
/// meshes.
template <bool Wrap, bool Diagonal> void buildGrid(const DimLine &line, LinkAdder add) {
  const DimSpec &ds = line.dim;
  for (int pos = 0, k = ds.size(); pos < k; ++pos) {
    int axisStride = 1;
    for (int extent : ds.shape) {
      int c = pos / axisStride % extent;
      if (c + 1 < extent || (Wrap && extent > 2))
        add(line.rank(pos), line.rank(pos + ((c + 1) % extent - c) * axisStride), ds.bandwidth);
      axisStride *= extent;
    }
    if (Diagonal && ds.shape.size() == 2) {
      int w = ds.shape[0], x = pos % w, y = pos / w;
      if (x + 1 < w && y + 1 < ds.shape[1])
        add(line.rank(pos), line.rank(pos + 1 + w), ds.bandwidth);
      if (x > 0 && y + 1 < ds.shape[1])
        add(line.rank(pos), line.rank(pos - 1 + w), ds.bandwidth);
    }
  }
}

/// Axis by axis, x first, the shorter way round where axes wrap (ties go
/// forward); king meshes first move diagonally while both axes differ.
template <bool Wrap, bool Diagonal>
void routeGrid(const DimLine &line, int pos, int goal, std::vector<uint32_t> &nodes) {
  const std::vector<int> &shape = line.dim.shape;
  auto step = [&](int delta) {
    pos += delta;
    nodes.push_back(line.rank(pos));
  };
  if (Diagonal) {
    int w = shape[0];
    while (pos % w != goal % w && pos / w != goal / w)
      step((goal % w > pos % w ? 1 : -1) + (goal / w > pos / w ? w : -w));
  }
  int axisStride = 1;
  for (int extent : shape) {
    int c = pos / axisStride % extent, g = goal / axisStride % extent;
    int forward = ((g - c) % extent + extent) % extent;
    int dir = (!Wrap || forward == 0) ? (g > c ? 1 : -1) : (forward <= extent - forward ? 1 : -1);
    for (; c != g; c = ((c + dir) % extent + extent) % extent)
      step(((c + dir + extent) % extent - c) * axisStride);
    axisStride *= extent;
  }
}

//===----------------------------------------------------------------------===//
// Direct kinds: fully connected, hypercube
//===----------------------------------------------------------------------===//

void buildFullyConnected(const DimLine &line, LinkAdder add) {
  for (int a = 0, k = line.dim.size(); a < k; ++a)
    for (int b = a + 1; b < k; ++b)
      add(line.rank(a), line.rank(b), line.dim.bandwidth);
}

void routeFullyConnected(const DimLine &line, int, int to, std::vector<uint32_t> &nodes) {
  nodes.push_back(line.rank(to));
}

void buildHyperCube(const DimLine &line, LinkAdder add) {
  for (int a = 0, k = line.dim.size(); a < k; ++a)
    for (int bit = 1; bit < k; bit <<= 1)
      if (!(a & bit))
        add(line.rank(a), line.rank(a | bit), line.dim.bandwidth);
}

/// Bit by bit, lowest first.
void routeHyperCube(const DimLine &line, int pos, int to, std::vector<uint32_t> &nodes) {
  for (int diff = pos ^ to; diff; diff &= diff - 1) {
    pos ^= diff & -diff;
    nodes.push_back(line.rank(pos));
  }
}

//===----------------------------------------------------------------------===//
// Switched kinds: one switch (fat trees: FatTree.cpp)
//===----------------------------------------------------------------------===//

int oneSwitch(const DimSpec &) { return 1; }

void buildSwitch(const DimLine &line, LinkAdder add) {
  for (int pos = 0, k = line.dim.size(); pos < k; ++pos)
    add(line.rank(pos), line.firstSwitch, line.dim.bandwidth);
}

void routeSwitch(const DimLine &line, int, int to, std::vector<uint32_t> &nodes) {
  nodes.push_back(line.firstSwitch);
  nodes.push_back(line.rank(to));
}

//===----------------------------------------------------------------------===//
// Written extents
//===----------------------------------------------------------------------===//

std::string powerOfTwo(llvm::ArrayRef<int64_t> e) {
  return std::has_single_bit(uint64_t(e[0]))
             ? ""
             : fmt::format("a HyperCube needs a power-of-two size, not {}", e[0]);
}

int64_t squareSide(int64_t n) { return std::llround(std::sqrt(double(n))); }

std::string perfectSquare(llvm::ArrayRef<int64_t> e) {
  int64_t side = squareSide(e[0]);
  return side * side == e[0]
             ? ""
             : fmt::format("a KingMesh needs a square number of ranks, not {}", e[0]);
}

/// Astra-Sim's KingMesh2D takes a rank count and lays it out square.
std::vector<int> squareAxes(llvm::ArrayRef<int64_t> e) {
  int side = int(squareSide(e[0]));
  return {side, side};
}

using K = DimKind;

// clang-format off
constexpr TopologyKind kKinds[] = {
  {K::Ring, "Ring", 1, false, "bidirectional ring; the shorter way round",
   nullptr, nullptr, nullptr, buildGrid<true, false>, routeGrid<true, false>},
  {K::FullyConnected, "FullyConnected", 1, false, "a direct link between every two ranks",
   nullptr, nullptr, nullptr, buildFullyConnected, routeFullyConnected},
  {K::Switch, "Switch", 1, true, "every rank linked to one switch",
   nullptr, nullptr, oneSwitch, buildSwitch, routeSwitch},
  {K::Mesh, "Mesh", 1, false, "a line of ranks, each linked to its neighbours",
   nullptr, nullptr, nullptr, buildGrid<false, false>, routeGrid<false, false>},
  {K::Mesh2D, "Mesh2D", 2, false, "an a x b grid, each rank linked to its neighbours",
   nullptr, nullptr, nullptr, buildGrid<false, false>, routeGrid<false, false>},
  {K::Torus2D, "Torus2D", 2, false, "an a x b grid whose axes wrap around",
   nullptr, nullptr, nullptr, buildGrid<true, false>, routeGrid<true, false>},
  {K::Torus3D, "Torus3D", 3, false, "an a x b x c grid whose axes wrap around",
   nullptr, nullptr, nullptr, buildGrid<true, false>, routeGrid<true, false>},
  {K::HyperCube, "HyperCube", 1, false, "ranks linked when they differ in one bit; n a power of two",
   powerOfTwo, nullptr, nullptr, buildHyperCube, routeHyperCube},
  {K::KingMesh, "KingMesh", 1, false, "a KingMesh2D on a square grid of n ranks",
   perfectSquare, squareAxes, nullptr, buildGrid<false, true>, routeGrid<false, true>},
  {K::KingMesh2D, "KingMesh2D", 2, false, "an a x b grid linked to neighbours and diagonals",
   nullptr, nullptr, nullptr, buildGrid<false, true>, routeGrid<false, true>},
  {K::FatTree, "FatTree", 1, true, "leaf switches of leaf_size ranks under one spine, or under pod spines of pod_size ranks under one core (from the language: one leaf of n ranks)",
   nullptr, nullptr, fatTreeSwitches, buildFatTree, routeFatTree},
};
// clang-format on

/// topologyKind() indexes the table by DimKind, and `switched` must say what
/// the builders do.
constexpr bool tableIsConsistent() {
  for (size_t i = 0; i < std::size(kKinds); ++i)
    if (kKinds[i].kind != DimKind(i) || kKinds[i].switched != (kKinds[i].switches != nullptr) ||
        !kKinds[i].build || !kKinds[i].route || kKinds[i].extents < 1)
      return false;
  return std::size(kKinds) == size_t(DimKind::FatTree) + 1;
}
static_assert(tableIsConsistent(), "kKinds must list every DimKind once, in order");

} // namespace

std::string TopologyKind::checkExtents(llvm::ArrayRef<int64_t> e) const {
  if (e.size() != extents)
    return fmt::format("a {} needs {} extent{}, not {}", name, extents, extents > 1 ? "s" : "",
                       e.size());
  int64_t ranks = 1;
  for (int64_t x : e) {
    if (x < 1)
      return fmt::format("a {} needs positive sizes, not {}", name, x);
    if (x > INT_MAX / ranks)
      return fmt::format("a {} of more than {} ranks is not supported", name, INT_MAX);
    ranks *= x;
  }
  return rule ? rule(e) : "";
}

std::vector<int> TopologyKind::axes(llvm::ArrayRef<int64_t> e) const {
  return toAxes ? toAxes(e) : std::vector<int>(e.begin(), e.end());
}

std::vector<int64_t> TopologyKind::written(llvm::ArrayRef<int> shape) const {
  if (shape.size() == extents)
    return std::vector<int64_t>(shape.begin(), shape.end());
  // Kinds whose axes are derived write their rank count.
  int64_t n = 1;
  for (int s : shape)
    n *= s;
  return {n};
}

llvm::ArrayRef<TopologyKind> topologyKinds() { return kKinds; }

const TopologyKind &topologyKind(DimKind kind) { return kKinds[size_t(kind)]; }

double estimatedLinks(DimKind kind, double size, double ranks) {
  double lines = ranks / size, perLine = 4 * size;
  if (kind == DimKind::FullyConnected)
    perLine = size * size;
  else if (kind == DimKind::HyperCube)
    perLine = size * std::log2(size);
  else if (kind == DimKind::FatTree)
    perLine = 6 * size; // both ways: ranks to leaves, at most n leaves' and n pods' trunks
  return lines * perLine;
}

double estimatedLinks(const NetworkSpec &spec) {
  double ranks = 1, links = 0;
  for (const DimSpec &d : spec.dims) ranks *= double(d.size());
  for (const DimSpec &d : spec.dims) links += estimatedLinks(d.kind, d.size(), ranks);
  return links;
}

const TopologyKind *findTopologyKind(llvm::StringRef name) {
  for (const TopologyKind &k : kKinds)
    if (name == k.name)
      return &k;
  return nullptr;
}

std::string topologyKindList() {
  std::vector<llvm::StringRef> names;
  for (const TopologyKind &k : kKinds)
    names.push_back(k.name);
  return llvm::join(names, ", ");
}

const char *dimKindName(DimKind kind) { return topologyKind(kind).name; }

bool parseDimKind(llvm::StringRef name, DimKind &out) {
  for (const TopologyKind &k : kKinds)
    if (name.equals_insensitive(k.name)) {
      out = k.kind;
      return true;
    }
  return false;
}

} // namespace rapid::net
