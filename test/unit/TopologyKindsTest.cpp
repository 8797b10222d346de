//===- TopologyKindsTest.cpp - Every registered kind builds and routes ----===//
//
// Walks the registry rather than naming kinds, so a kind added to the table
// is tested here without anyone listing it.
//===----------------------------------------------------------------------===//

#include "rapid/Network/FatTree.h"
#include "rapid/Network/Routing.h"
#include "rapid/Network/TopologyKinds.h"

#include <gtest/gtest.h>

#include <deque>

using namespace rapid;
using namespace rapid::net;

namespace {

/// Extents every kind accepts: 16 is a power of two and a square.
std::vector<int64_t> sampleExtents(const TopologyKind &k) {
  switch (k.extents) {
  case 1: return {16};
  case 2: return {4, 3};
  default: return std::vector<int64_t>(k.extents, 2);
  }
}

DimSpec sampleDim(const TopologyKind &k) {
  DimSpec d;
  d.kind = k.kind;
  d.shape = k.axes(sampleExtents(k));
  d.bandwidth = BytesPerSecond(100e9);
  d.latency = Seconds(100 * 1e-9);
  d.leafSize = 4;
  d.podSize = 8; // FatTree(16): three tiers, 4 leaves in 2 pods
  return d;
}

DimSpec ring(int n) {
  DimSpec d;
  d.shape = {n};
  d.bandwidth = BytesPerSecond(50e9);
  d.latency = Seconds(1e-6);
  d.leafSize = n;
  return d;
}

/// Fewest hops from `src` to every node.
std::vector<int> hopsFrom(const Topology &topo, uint32_t src) {
  std::vector<int> hops(topo.numNodes(), -1);
  std::deque<uint32_t> queue{src};
  hops[src] = 0;
  while (!queue.empty()) {
    uint32_t n = queue.front();
    queue.pop_front();
    for (const uint32_t *l = topo.outBegin(n); l != topo.outEnd(n); ++l)
      if (uint32_t next = topo.links()[*l].dst; hops[next] < 0) {
        hops[next] = hops[n] + 1;
        queue.push_back(next);
      }
  }
  return hops;
}

} // namespace

TEST(TopologyKinds, TableMatchesDimKind) {
  for (size_t i = 0; i < topologyKinds().size(); ++i) {
    const TopologyKind &k = topologyKinds()[i];
    EXPECT_EQ(size_t(k.kind), i);
    EXPECT_EQ(&topologyKind(k.kind), &k);
    EXPECT_EQ(findTopologyKind(k.name), &k);
    EXPECT_STRNE(k.doc, "");
    DimKind parsed;
    ASSERT_TRUE(parseDimKind(llvm::StringRef(k.name).lower(), parsed)) << k.name;
    EXPECT_EQ(parsed, k.kind);
  }
  // The language is case-sensitive; the JSON and YAML readers are not.
  EXPECT_EQ(findTopologyKind("ring"), nullptr);
  EXPECT_EQ(findTopologyKind("Donut"), nullptr);
  EXPECT_EQ(topologyKindList(), "Ring, FullyConnected, Switch, Mesh, Mesh2D, Torus2D, Torus3D, "
                                "HyperCube, KingMesh, KingMesh2D, FatTree");
}

TEST(TopologyKinds, ExtentChecks) {
  EXPECT_EQ(findTopologyKind("HyperCube")->checkExtents({6}),
            "a HyperCube needs a power-of-two size, not 6");
  EXPECT_EQ(findTopologyKind("KingMesh")->checkExtents({12}),
            "a KingMesh needs a square number of ranks, not 12");
  EXPECT_EQ(findTopologyKind("Torus2D")->checkExtents({16}), "a Torus2D needs 2 extents, not 1");
  EXPECT_EQ(findTopologyKind("Ring")->checkExtents({4, 4}), "a Ring needs 1 extent, not 2");
  EXPECT_EQ(findTopologyKind("Mesh2D")->checkExtents({4, 0}),
            "a Mesh2D needs positive sizes, not 0");
  EXPECT_EQ(findTopologyKind("Torus3D")->checkExtents({65536, 65536, 2}),
            "a Torus3D of more than 2147483647 ranks is not supported");
  EXPECT_EQ(findTopologyKind("KingMesh")->axes({16}), (std::vector<int>{4, 4}));
  EXPECT_EQ(findTopologyKind("KingMesh2D")->axes({4, 2}), (std::vector<int>{4, 2}));
}

TEST(TopologyKinds, WrittenInvertsAxes) {
  for (const TopologyKind &k : topologyKinds()) {
    std::vector<int64_t> e = sampleExtents(k);
    ASSERT_EQ(k.checkExtents(e), "") << k.name;
    EXPECT_EQ(k.written(k.axes(e)), e) << k.name;
  }
}

/// Each kind as dimension 1 behind a ring of 2, so lines other than the first
/// and strides other than 1 are exercised: the dimension-order path uses only
/// links the kind built, is as short as any path, and switched kinds add
/// switch nodes.
TEST(TopologyKinds, EveryKindBuildsAndRoutes) {
  for (const TopologyKind &k : topologyKinds()) {
    SCOPED_TRACE(k.name);
    Topology topo(NetworkSpec{{ring(2), sampleDim(k)}});
    EXPECT_EQ(topo.numNodes() > topo.numRanks(), k.switched);
    Router router(topo);
    std::vector<uint32_t> nodes;
    for (int src = 0; src < topo.numRanks(); ++src) {
      std::vector<int> hops = hopsFrom(topo, uint32_t(src));
      for (int dst = 0; dst < topo.numRanks(); ++dst) {
        router.dimensionOrderNodes(src, dst, nodes);
        ASSERT_EQ(nodes.front(), uint32_t(src));
        ASSERT_EQ(nodes.back(), uint32_t(dst)) << src << " -> " << dst;
        for (size_t i = 1; i < nodes.size(); ++i)
          ASSERT_NE(topo.linkBetween(nodes[i - 1], nodes[i]), kNoLink)
              << src << " -> " << dst << " hop " << i;
        EXPECT_EQ(int(nodes.size()) - 1, hops[dst]) << src << " -> " << dst;
        auto route = router.route(src, dst);
        ASSERT_TRUE(bool(route));
        EXPECT_EQ(route->length, nodes.size() - 1);
      }
    }
  }
}

TEST(TopologyKinds, KingMeshIsKingMesh2DOnASquare) {
  DimSpec square = sampleDim(*findTopologyKind("KingMesh"));
  DimSpec grid = square;
  grid.kind = DimKind::KingMesh2D;
  Topology a(NetworkSpec{{square}}), b(NetworkSpec{{grid}});
  ASSERT_EQ(a.links().size(), b.links().size());
  for (size_t l = 0; l < a.links().size(); ++l) {
    EXPECT_EQ(a.links()[l].src, b.links()[l].src);
    EXPECT_EQ(a.links()[l].dst, b.links()[l].dst);
  }
}

namespace {

DimSpec fatTree(int n, int leaf, int pod) {
  DimSpec d = ring(n);
  d.kind = DimKind::FatTree;
  d.bandwidth = BytesPerSecond(100e9); // 100 B/ns
  d.leafSize = leaf;
  d.podSize = pod;
  return d;
}

std::vector<uint32_t> route(const Topology &topo, int src, int dst) {
  Router router(topo);
  std::vector<uint32_t> nodes;
  router.dimensionOrderNodes(src, dst, nodes);
  return nodes;
}

double bytesPerNs(const Topology &topo, uint32_t a, uint32_t b) {
  uint32_t l = topo.linkBetween(a, b);
  EXPECT_NE(l, kNoLink) << a << " -> " << b;
  return l == kNoLink ? 0 : topo.links()[l].bytesPerNs;
}

} // namespace

/// FatTree(16), leaves of 2, pods of 8: switches 16-23 are the leaves,
/// 24 and 25 the pod spines, 26 the core. Links both ways: 16 rank links,
/// 8 leaf trunks, 2 pod trunks = 52.
TEST(FatTree, ThreeTiersOfSwitchesAndTrunks) {
  DimSpec d = fatTree(16, 2, 8);
  d.oversubscription = 2;
  d.podOversubscription = 4;
  Topology topo(NetworkSpec{{d}});
  EXPECT_EQ(topo.numNodes(), 16 + 8 + 2 + 1);
  EXPECT_EQ(topo.links().size(), 52u);
  // A leaf's trunk: 2 links of 100 B/ns / 2 = 100 B/ns; a pod's: its 4
  // leaves' trunks / 4 = 100 B/ns.
  EXPECT_DOUBLE_EQ(bytesPerNs(topo, 0, 16), 100);
  EXPECT_DOUBLE_EQ(bytesPerNs(topo, 16, 24), 100);
  EXPECT_DOUBLE_EQ(bytesPerNs(topo, 23, 25), 100);
  EXPECT_DOUBLE_EQ(bytesPerNs(topo, 25, 26), 100);
  EXPECT_EQ(topo.linkBetween(16, 26), kNoLink); // leaves reach the core only through their pod
}

/// Up only as far as the lowest switch above both ends.
TEST(FatTree, RoutesTurnAtTheLowestCommonSwitch) {
  Topology topo(NetworkSpec{{fatTree(16, 2, 8)}});
  EXPECT_EQ(route(topo, 0, 1), (std::vector<uint32_t>{0, 16, 1}));                // one leaf
  EXPECT_EQ(route(topo, 0, 7), (std::vector<uint32_t>{0, 16, 24, 19, 7}));        // one pod
  EXPECT_EQ(route(topo, 9, 2), (std::vector<uint32_t>{9, 20, 25, 26, 24, 17, 2})); // across pods
}

/// Given trunks replace the derived ones: the pod trunk is the pod spine's
/// own, and the derived pod trunk adds up the given leaf trunks.
TEST(FatTree, GivenTrunksAndDerivedOnesAbove) {
  DimSpec d = fatTree(16, 2, 8);
  d.trunk = BytesPerSecond(300e9);
  d.podOversubscription = 3;
  Topology derived(NetworkSpec{{d}});
  EXPECT_DOUBLE_EQ(bytesPerNs(derived, 16, 24), 300);
  EXPECT_DOUBLE_EQ(bytesPerNs(derived, 24, 26), 4 * 300 / 3.0);
  d.podOversubscription = 1;
  d.podTrunk = BytesPerSecond(50e9);
  Topology given(NetworkSpec{{d}});
  EXPECT_DOUBLE_EQ(bytesPerNs(given, 24, 26), 50);
}

/// Pods are whole leaves, but the last pod and leaf may be partial:
/// FatTree(12) with leaves of 4 and pods of 8 has 3 leaves (12-14), pods 15
/// and 16 (the second holds one leaf) and the core 17.
TEST(FatTree, PartialLastPod) {
  Topology topo(NetworkSpec{{fatTree(12, 4, 8)}});
  EXPECT_EQ(topo.numNodes(), 12 + 3 + 2 + 1);
  EXPECT_EQ(route(topo, 0, 11), (std::vector<uint32_t>{0, 12, 15, 17, 16, 14, 11}));
  EXPECT_DOUBLE_EQ(bytesPerNs(topo, 14, 16), 400); // a leaf's trunk, though the pod has one leaf
  EXPECT_DOUBLE_EQ(bytesPerNs(topo, 16, 17), 800);
}

/// pod_size = the line's size (what the readers write for no pods) is the
/// two-level tree, link for link.
TEST(FatTree, OnePodIsTheTwoLevelTree) {
  Topology two(NetworkSpec{{fatTree(8, 4, 0)}}), onePod(NetworkSpec{{fatTree(8, 4, 8)}});
  ASSERT_EQ(two.links().size(), onePod.links().size());
  EXPECT_EQ(two.numNodes(), 8 + 2 + 1);
  for (size_t l = 0; l < two.links().size(); ++l) {
    EXPECT_EQ(two.links()[l].src, onePod.links()[l].src);
    EXPECT_EQ(two.links()[l].dst, onePod.links()[l].dst);
    EXPECT_EQ(two.links()[l].bytesPerNs, onePod.links()[l].bytesPerNs);
  }
}

/// estimatedLinks bounds what is built, fat trees with a switch per rank at
/// each tier included (the readers' limit relies on it).
TEST(FatTree, EstimatedLinksBoundTheBuiltOnes) {
  for (auto [leaf, pod] : {std::pair{1, 1}, {1, 2}, {2, 16}, {4, 8}}) {
    Topology topo(NetworkSpec{{fatTree(16, leaf, pod)}});
    EXPECT_LE(double(topo.links().size()), estimatedLinks(DimKind::FatTree, 16, 16)) << leaf << " " << pod;
  }
  EXPECT_EQ(Topology(NetworkSpec{{fatTree(16, 1, 1)}}).links().size(), 6u * 16);
}

TEST(FatTree, ProblemsNameTheKey) {
  EXPECT_EQ(fatTreeProblem(fatTree(16, 2, 8)), "");
  EXPECT_EQ(fatTreeProblem(fatTree(16, 17, 16)), "leaf_size must be from 1 to the dimension's 16 ranks, not 17");
  EXPECT_EQ(fatTreeProblem(fatTree(16, 4, 6)),
            "pod_size must be a multiple of leaf_size (4) and at most the dimension's 16 ranks, not 6");
  DimSpec onePod = fatTree(16, 4, 16);
  onePod.podOversubscription = 7;
  EXPECT_EQ(fatTreeProblem(onePod), "pod_oversubscription and pod_trunk shape the trunks above the pods, but there "
                                    "is one pod (pod_size is the dimension's 16 ranks)");
  DimSpec oneLeaf = fatTree(16, 16, 16);
  oneLeaf.trunk = BytesPerSecond(1e9);
  EXPECT_EQ(fatTreeProblem(oneLeaf),
            "trunk shapes the trunks above the leaves, but there is one leaf (leaf_size is the dimension's 16 ranks)");
  DimSpec both = fatTree(16, 4, 8);
  both.trunk = BytesPerSecond(1e9);
  both.oversubscription = 2;
  EXPECT_EQ(fatTreeProblem(both), "a leaf's trunk is given by trunk or by oversubscription, not both");
}
