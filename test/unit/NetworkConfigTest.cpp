//===- NetworkConfigTest.cpp - Network JSON written and read back ---------===//

#include "rapid/Network/NetworkConfig.h"
#include "rapid/Network/TopologyKinds.h"

#include <gtest/gtest.h>

using namespace rapid;
using namespace rapid::net;

namespace {

NetworkSpec parsed(const std::string &text) {
  auto spec = parseNetworkJson("net.json", text);
  EXPECT_TRUE(bool(spec)) << (spec ? "" : llvm::toString(spec.takeError()));
  return spec ? *spec : NetworkSpec{};
}

} // namespace

/// Every kind twice: once with defaults and no name, once with everything
/// set (a leaf size that is not the default, a packet, fractional numbers).
TEST(NetworkJson, WriteThenReadGivesTheSameSpec) {
  for (const TopologyKind &k : topologyKinds()) {
    SCOPED_TRACE(k.name);
    std::vector<int64_t> extents = k.extents == 1 ? std::vector<int64_t>{16}
                                                  : std::vector<int64_t>(k.extents, 2);
    DimSpec plain;
    plain.kind = k.kind;
    plain.shape = k.axes(extents);
    plain.bandwidth = BytesPerSecond(100e9);
    plain.latency = Seconds(500 * 1e-9); // what reading "500 ns" gives
    plain.leafSize = plain.podSize = plain.size(); // what the reader sets when not written
    DimSpec full = plain;
    full.name = "fast \"x\"";
    full.bandwidth = BytesPerSecond(12.5e9);
    full.latency = Seconds(1500.25 * 1e-9);
    full.leafSize = 4;
    full.oversubscription = 1.5;
    full.packet = Bytes(4096);
    full.sameNode = true;
    NetworkSpec spec{{plain, full}};
    std::string text = writeNetworkJson(spec);
    EXPECT_EQ(parsed(text), spec) << text;
  }
}

/// A three-tier fat tree written and read back: pods, their
/// oversubscription, a given leaf trunk and a given pod trunk.
TEST(NetworkJson, FatTreePodsAndTrunksRoundTrip) {
  DimSpec tree;
  tree.kind = DimKind::FatTree;
  tree.shape = {64};
  tree.bandwidth = BytesPerSecond(50e9);
  tree.latency = Seconds(1000 * 1e-9);
  tree.leafSize = 8;
  tree.podSize = 32;
  tree.podOversubscription = 7;
  tree.trunk = BytesPerSecond(300e9);
  DimSpec given = tree;
  given.podOversubscription = 1;
  given.podTrunk = BytesPerSecond(125e9);
  for (const DimSpec &d : {tree, given}) {
    NetworkSpec spec{{d}};
    std::string text = writeNetworkJson(spec);
    EXPECT_EQ(parsed(text), spec) << text;
  }
  EXPECT_NE(writeNetworkJson(NetworkSpec{{tree}}).find(R"("trunk": "300000000000 B/s",
      "pod_size": 32,
      "pod_oversubscription": 7)"),
            std::string::npos);
}

TEST(NetworkJson, WritesTheCompilersKeys) {
  NetworkSpec spec = parsed(R"({"dimensions": [
    {"name": "fast", "kind": "Torus2D", "shape": [4, 2], "bandwidth": "100 GB/s", "latency": "0.5 us"},
    {"kind": "KingMesh", "size": 16, "bandwidth": "1.5 Gb/s", "latency": "1 us", "oversubscription": 2},
    {"name": "ib", "kind": "FatTree", "size": 8, "leaf_size": 4, "bandwidth": "25 GB/s", "latency": "5 us",
     "packet": "4 KiB"}]})");
  EXPECT_EQ(spec.dims[1].shape, (std::vector<int>{4, 4}));
  EXPECT_EQ(writeNetworkJson(spec), R"({
  "dimensions": [
    {
      "name": "fast",
      "kind": "Torus2D",
      "shape": [
        4,
        2
      ],
      "bandwidth": "100000000000 B/s",
      "latency": "500 ns",
      "oversubscription": 1
    },
    {
      "kind": "KingMesh",
      "size": 16,
      "bandwidth": "187500000 B/s",
      "latency": "1000 ns",
      "oversubscription": 2
    },
    {
      "name": "ib",
      "kind": "FatTree",
      "size": 8,
      "bandwidth": "25000000000 B/s",
      "latency": "5000 ns",
      "oversubscription": 1,
      "leaf_size": 4,
      "packet": "4096 B"
    }
  ]
}
)");
}
