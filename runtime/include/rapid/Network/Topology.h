//===- Topology.h - Multi-dimensional network as explicit links -*- C++ -*-===//
//
// A network is an ordered list of dimensions. Rank r has one coordinate per
// dimension, dimension 0 fastest (r = c0 + s0*(c1 + s1*(c2 ...))). Every
// physical link is a directed object in one flat vector; switches are extra
// nodes numbered after the ranks. Topology knows shape only: link state
// (queues, statistics) lives in Network, failures are applied by Faults.
//===----------------------------------------------------------------------===//
#pragma once

#include "rapid/Support/Units.h"

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace rapid::net {

/// What each kind is and does lives in its TopologyKinds.h entry.
enum class DimKind { Ring, FullyConnected, Switch, Mesh, Mesh2D, Torus2D, Torus3D,
                     HyperCube, KingMesh, KingMesh2D, FatTree };

struct DimSpec {
  DimKind kind = DimKind::Ring;
  std::string name;               ///< optional; the compiler's dimension name
  /// Axes: {8} for a ring, {4,4} for Torus2D and for KingMesh(16); the kind's
  /// written() gives back what the user wrote.
  std::vector<int> shape;
  BytesPerSecond bandwidth{0};    ///< per link and direction
  Seconds latency{0};             ///< per hop
  // FatTree shape (FatTree.h): leaves, optionally pods, one top switch.
  int leafSize = 0;               ///< FatTree: ranks per leaf switch
  double oversubscription = 1.0;  ///< FatTree: leaf down-capacity / up-capacity
  BytesPerSecond trunk{0};        ///< FatTree: a leaf's trunk when given; 0: derived
  int podSize = 0;                ///< FatTree: ranks per pod; 0 or size(): no pod tier
  double podOversubscription = 1.0; ///< FatTree: a pod's down-capacity / up-capacity
  BytesPerSecond podTrunk{0};     ///< FatTree: a pod's trunk to the core when given; 0: derived
  /// What a switch or router forwards whole: with cut-through switching, a
  /// hop adds one packet's serialisation. 0: forwarded bit by bit.
  Bytes packet{0};
  /// Joins the GPUs of the node the dimensions before it make: a group
  /// varying only within one node runs as one ring (NCCL's intra-node ring).
  bool sameNode = false;

  int size() const;
  friend bool operator==(const DimSpec &, const DimSpec &) = default;
};

struct NetworkSpec {
  std::vector<DimSpec> dims;
  int numRanks() const;
  /// Dimensions (bits, the first 32) between nodes: past the first, a
  /// node's own fabric, and not `same_node`. NCCL builds its trees there.
  uint32_t betweenNodes() const;
  friend bool operator==(const NetworkSpec &, const NetworkSpec &) = default;
};

/// One line of a dimension: the ranks whose other coordinates are equal, and
/// the switch nodes that line owns.
struct DimLine {
  const DimSpec &dim;
  uint32_t base = 0, stride = 1; ///< position i on the line is rank base + i * stride
  uint32_t firstSwitch = 0;      ///< switched kinds: the line's first switch node
  uint32_t rank(int pos) const { return base + uint32_t(pos) * stride; }
};

inline constexpr uint32_t kNoLink = UINT32_MAX;

struct Link {
  uint32_t src = 0, dst = 0; ///< node ids
  uint16_t dim = 0;
  bool failed = false;       ///< hard fault: the link is gone
  double bytesPerNs = 0;     ///< after soft-fault derating
  int64_t latencyPs = 0;     ///< after soft-fault extra latency
  double packetBytes = 0;    ///< the dimension's packet; 0: bit-level forwarding
};

class Topology {
public:
  explicit Topology(NetworkSpec spec);

  const NetworkSpec &spec() const { return spec_; }
  int numRanks() const { return numRanks_; }
  int numNodes() const { return numNodes_; }
  int numDims() const { return int(spec_.dims.size()); }
  int dimSize(int d) const { return sizes_[d]; }
  int stride(int d) const { return strides_[d]; }
  int coord(int rank, int d) const { return coords_[size_t(rank) * sizes_.size() + size_t(d)]; }
  /// The rank with coordinate `c` in dimension d and `rank`'s other coordinates.
  int withCoord(int rank, int d, int c) const { return rank + (c - coord(rank, d)) * strides_[d]; }
  /// Which line of dimension d `rank` lies on (its other coordinates, packed).
  int lineOf(int rank, int d) const;
  /// Line `index` of dimension d (0 <= index < numRanks / dimSize(d)).
  DimLine line(int d, int index) const;

  std::vector<Link> &links() { return links_; }
  const std::vector<Link> &links() const { return links_; }
  uint32_t linkBetween(uint32_t a, uint32_t b) const;
  /// Outgoing link ids of a node (CSR), for fault-aware search.
  const uint32_t *outBegin(uint32_t node) const { return outLinks_.data() + outStart_[node]; }
  const uint32_t *outEnd(uint32_t node) const { return outLinks_.data() + outStart_[node + 1]; }
  std::string nodeName(uint32_t node) const;

private:
  void addLink(uint32_t a, uint32_t b, int d, BytesPerSecond bw, bool both = true);
  void buildDim(int d);
  void buildAdjacency();

  NetworkSpec spec_;
  int numRanks_ = 1, numNodes_ = 0;
  std::vector<int> strides_, sizes_;
  std::vector<int> coords_; ///< per rank and dimension: collectives ask on every message, and division is slow
  std::vector<uint32_t> switchBase_, switchesPerLine_;
  std::vector<Link> links_;
  std::unordered_map<uint64_t, uint32_t> linkIndex_;
  std::vector<uint32_t> outStart_, outLinks_;
};

} // namespace rapid::net
