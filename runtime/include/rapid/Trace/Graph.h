//===- Graph.h - One rank's execution graph in flat arrays ------*- C++ -*-===//
//
// The simulator's view of a Chakra trace: every node decoded once into a
// fixed-size record, dependencies and children as index ranges into shared
// vectors (CSR). Nodes are sorted by id, so "ascending id" (Astra-Sim's issue
// order) is "ascending index" and a ready set can be a heap of uint32.
//===----------------------------------------------------------------------===//
#pragma once

#include "et_def.pb.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace rapid::trace {

enum class NodeKind : uint8_t { Invalid, Metadata, MemLoad, MemStore, Comp, Send, Recv, Coll };

/// Values equal Chakra's CollectiveCommType.
enum class CollKind : uint8_t {
  AllReduce = 0, Reduce, AllGather, Gather, Scatter, Broadcast, AllToAll,
  ReduceScatter, ReduceScatterBlock, Barrier
};

const char *nodeKindName(NodeKind k);
const char *collKindName(CollKind k);

/// Sentinel for "attribute absent".
inline constexpr int64_t kAbsent = INT64_MIN;

struct TraceNode {
  uint64_t id = 0;
  uint64_t durationMicros = 0;
  int64_t rapidTimeNs = kAbsent; ///< our own attribute: exact compute time
  /// Our own attribute rapid_measured_ns: a collective that meets its peers
  /// and then takes this long (a profiled collective, replayed).
  int64_t measuredNs = kAbsent;
  /// Our own attribute rapid_launch_ns: a collective whose host launch
  /// (the software's per-kernel cost) comes before it can start.
  int64_t launchNs = kAbsent;
  int64_t numOps = kAbsent, tensorSize = kAbsent;
  int64_t commSize = kAbsent, commSrc = kAbsent, commDst = kAbsent, commTag = kAbsent;
  int64_t commType = kAbsent;
  uint32_t pgName = 0;          ///< communicator group id; 0 = all ranks
  uint32_t involvedDims = ~0u;  ///< bit d set: network dimension d takes part
  uint32_t depBegin = 0, depCount = 0;     ///< into RankGraph::deps
  uint32_t childBegin = 0, childCount = 0; ///< into RankGraph::children
  uint32_t nameBegin = 0, nameLen = 0;     ///< into RankGraph::names
  NodeKind kind = NodeKind::Invalid;
  bool isCpuOp = false;

  CollKind coll() const { return CollKind(commType); }
};

/// A program's nodes, edges and names: one rank's, or shared by every rank
/// that runs the same program (a compact set, rapidc's in-process runs).
struct GraphBody {
  std::vector<TraceNode> nodes;   ///< sorted by id
  std::vector<uint32_t> deps;     ///< node indices, data and ctrl merged
  std::vector<uint32_t> children; ///< reverse of deps
  std::string names;              ///< all node names, concatenated
};

struct RankGraph {
  std::string file;
  int rank = 0;
  std::shared_ptr<GraphBody> body = std::make_shared<GraphBody>();
  /// A shared program's placeholders, which this rank's tables fill: a
  /// collective's pg_name (non-zero) is a slot into `groupOfSlot` and
  /// `involvedOfSlot`; a send's comm_dst and a receive's comm_src are
  /// pipeline stages into `rankOfStage` (the other end is this rank). A
  /// graph of its own (`shared` false) holds the values in its nodes.
  bool shared = false;
  std::vector<uint32_t> groupOfSlot, involvedOfSlot;
  std::vector<int64_t> rankOfStage;
  uint32_t droppedDeps = 0;       ///< lenient reading: deps on missing nodes
  uint32_t emptiedColls = 0;      ///< lenient reading: collectives without comm_type

  const std::vector<TraceNode> &nodes() const { return body->nodes; }
  const std::vector<uint32_t> &deps() const { return body->deps; }
  const std::vector<uint32_t> &children() const { return body->children; }
  std::string_view name(const TraceNode &n) const {
    return std::string_view(body->names).substr(n.nameBegin, n.nameLen);
  }
  /// The body to change: copied first when other ranks share it.
  GraphBody &own() {
    if (body.use_count() > 1) body = std::make_shared<GraphBody>(*body);
    return *body;
  }

  /// A node's fields as this rank sees them.
  uint32_t group(const TraceNode &n) const { return shared && n.pgName ? groupOfSlot[n.pgName - 1] : n.pgName; }
  uint32_t involved(const TraceNode &n) const {
    return shared && n.pgName ? involvedOfSlot[n.pgName - 1] : n.involvedDims;
  }
  int64_t src(const TraceNode &n) const {
    if (!shared) return n.commSrc;
    if (n.kind == NodeKind::Send) return rank;
    return n.commSrc == kAbsent ? kAbsent : rankOfStage[size_t(n.commSrc)];
  }
  int64_t dst(const TraceNode &n) const {
    if (!shared) return n.commDst;
    if (n.kind == NodeKind::Recv) return rank;
    return n.commDst == kAbsent ? kAbsent : rankOfStage[size_t(n.commDst)];
  }
};

/// Collects decoded nodes and turns them into a RankGraph: ids sorted,
/// dependencies resolved to indices, dangling deps, duplicate ids and cycles
/// reported as `<file>: node <id>: <what>`.
class GraphBuilder {
public:
  GraphBuilder(std::string file, int rank, bool lenient = false);
  GraphBuilder(const GraphBuilder &) = delete; // `b` refers into its own graph
  GraphBuilder &operator=(const GraphBuilder &) = delete;
  /// Decodes one protobuf node (attribute types checked here).
  llvm::Error add(const ChakraProtoMsg::Node &node);
  /// Adds a node decoded already (rapidc's in-process run builds them
  /// straight from its IR); `node`'s name and dependency fields are set here.
  void add(TraceNode node, std::string_view name, llvm::ArrayRef<uint32_t> deps);
  /// Room for `nodes` nodes and `deps` dependencies, when the caller knows
  /// them: at thousands of ranks, growth by doubling left up to half of each
  /// rank's node array empty.
  void reserve(size_t nodes, size_t deps);
  llvm::Expected<RankGraph> finish();

private:
  llvm::Error resolveDeps();
  void buildChildren(const std::vector<uint32_t> &childCount);
  llvm::Error checkAcyclic() const;

  RankGraph g;
  GraphBody &b; ///< g's body, built here
  std::vector<uint64_t> depIds; ///< raw ids, indexed by depBegin until resolved
  bool lenient = false;
  bool backwardOnly = true; ///< every resolved dependency is an earlier node
};

} // namespace rapid::trace
