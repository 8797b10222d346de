//===- FatTree.cpp - Tiers, links and routes of a fat tree ----------------===//
//
// Inside a line, switches are numbered leaves first, then the pod spines (if
// any), then the top switch; links are added every rank to its leaf, then
// the leaves' trunks, then the pods' trunks. Link ids appear in reports, so
// a two-level tree is built link for link as before pods existed.
//===----------------------------------------------------------------------===//

#include "rapid/Network/FatTree.h"

#include <fmt/format.h>

namespace rapid::net {
namespace {

int ceilDiv(int a, int b) { return (a + b - 1) / b; }

/// The switches above position `pos` (relative to the line's first switch),
/// its leaf first and the top last. Groups nest (a pod is whole leaves), so
/// two positions that share a switch share every one above it.
llvm::SmallVector<uint32_t, 3> ancestors(llvm::ArrayRef<FatTreeTier> tiers, int size, int pos) {
  llvm::SmallVector<uint32_t, 3> out;
  int offset = 0;
  for (const FatTreeTier &t : tiers) {
    out.push_back(uint32_t(offset + pos / t.groupSize));
    offset += ceilDiv(size, t.groupSize);
  }
  out.push_back(uint32_t(offset));
  return out;
}

/// As the readers bound an oversubscription: finite and far from 0, so a
/// trunk keeps a bandwidth the picosecond clock can time.
bool validRatio(double r) { return r > 0 && r <= 1e6; }
/// 0 means "derived"; a given trunk is bounded as any link's bandwidth.
bool validTrunk(BytesPerSecond bw) { return bw.value() == 0 || (bw.value() >= 1 && bw.value() <= 1e18); }

} // namespace

bool hasPods(const DimSpec &ds) { return ds.podSize > 0 && ds.podSize < ds.size(); }

llvm::SmallVector<FatTreeTier, 2> fatTreeTiers(const DimSpec &ds) {
  BytesPerSecond leafTrunk =
      ds.trunk.value() > 0 ? ds.trunk : ds.bandwidth * (ds.leafSize / ds.oversubscription);
  llvm::SmallVector<FatTreeTier, 2> tiers{{ds.leafSize, leafTrunk}};
  if (hasPods(ds)) {
    // A pod spine's down-capacity is its leaves' trunks together.
    int leavesPerPod = ds.podSize / ds.leafSize;
    BytesPerSecond podTrunk = ds.podTrunk.value() > 0
                                  ? ds.podTrunk
                                  : leafTrunk * (leavesPerPod / ds.podOversubscription);
    tiers.push_back({ds.podSize, podTrunk});
  }
  return tiers;
}

std::string fatTreeProblem(const DimSpec &ds) {
  int n = ds.size();
  if (ds.leafSize < 1 || ds.leafSize > n)
    return fmt::format("leaf_size must be from 1 to the dimension's {} ranks, not {}", n, ds.leafSize);
  // Pods are whole leaves; a partial last pod (or leaf) is allowed, as
  // clusters leave slots empty.
  if (ds.podSize != 0 && (ds.podSize < ds.leafSize || ds.podSize > n || ds.podSize % ds.leafSize != 0))
    return fmt::format("pod_size must be a multiple of leaf_size ({}) and at most the dimension's {} ranks, not {}",
                       ds.leafSize, n, ds.podSize);
  if (!validRatio(ds.oversubscription) || !validRatio(ds.podOversubscription))
    return "oversubscription and pod_oversubscription must be above 0 and at most 1e6";
  if (!validTrunk(ds.trunk) || !validTrunk(ds.podTrunk))
    return "trunk and pod_trunk must be from 1 B/s to 1 EB/s";
  if (ds.trunk.value() > 0 && ds.oversubscription != 1)
    return "a leaf's trunk is given by trunk or by oversubscription, not both";
  if (ds.podTrunk.value() > 0 && ds.podOversubscription != 1)
    return "a pod's trunk is given by pod_trunk or by pod_oversubscription, not both";
  // (oversubscription alone has always been read on any dimension, and still is.)
  if (ds.trunk.value() > 0 && ds.leafSize == n)
    return fmt::format("trunk shapes the trunks above the leaves, but there is one leaf (leaf_size is the "
                       "dimension's {} ranks)",
                       n);
  if (!hasPods(ds) && (ds.podOversubscription != 1 || ds.podTrunk.value() > 0))
    return fmt::format("pod_oversubscription and pod_trunk shape the trunks above the pods, but there is one pod "
                       "(pod_size is the dimension's {} ranks)",
                       n);
  return "";
}

int fatTreeSwitches(const DimSpec &ds) {
  int switches = 1;
  for (const FatTreeTier &t : fatTreeTiers(ds))
    switches += ceilDiv(ds.size(), t.groupSize);
  return switches;
}

void buildFatTree(const DimLine &line, LinkAdder add) {
  const DimSpec &ds = line.dim;
  int n = ds.size();
  auto tiers = fatTreeTiers(ds);
  for (int pos = 0; pos < n; ++pos)
    add(line.rank(pos), line.firstSwitch + uint32_t(pos / ds.leafSize), ds.bandwidth);
  // A switch is named by the first position below it, which also names its parent.
  for (size_t t = 0; t < tiers.size(); ++t)
    for (int first = 0; first < n; first += tiers[t].groupSize) {
      auto up = ancestors(tiers, n, first);
      add(line.firstSwitch + up[t], line.firstSwitch + up[t + 1], tiers[t].uplink);
    }
}

/// Up to the lowest switch above both ends (the leaf, the pod spine or the
/// top), then down.
void routeFatTree(const DimLine &line, int from, int to, std::vector<uint32_t> &nodes) {
  auto tiers = fatTreeTiers(line.dim);
  auto up = ancestors(tiers, line.dim.size(), from), down = ancestors(tiers, line.dim.size(), to);
  size_t turn = 0;
  while (up[turn] != down[turn])
    ++turn;
  for (size_t i = 0; i <= turn; ++i)
    nodes.push_back(line.firstSwitch + up[i]);
  for (size_t i = turn; i-- > 0;)
    nodes.push_back(line.firstSwitch + down[i]);
  nodes.push_back(line.rank(to));
}

} // namespace rapid::net
