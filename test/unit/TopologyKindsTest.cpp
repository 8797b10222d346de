//===- TopologyKindsTest.cpp - Every registered kind builds and routes ----===//
//
// Walks the registry rather than naming kinds, so a kind added to the table
// is tested here without anyone listing it.
//===----------------------------------------------------------------------===//

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
