//===- ChakraNodes.h - IR ops as Chakra nodes, per rank --------*- C++ -*-===//
//
// What `--emit=chakra` and the in-process run share: the communicator
// groups a program uses and the Chakra node of every op of every rank. The
// emitter serialises the nodes; Run hands the same nodes to the runtime's
// graph builder, so a simulated point and its emitted traces run identically.
//===----------------------------------------------------------------------===//
#pragma once

#include "rapid/Collectives/CommGroups.h"
#include "rapid/IR/RankLayout.h"
#include "rapid/Trace/Graph.h"

#include <map>

namespace ChakraProtoMsg {
class Node;
}

namespace rapid::emit {

/// Communicator groups the program uses, numbered from 1 in the order first
/// met (ranks ascending), as Astra-Sim's comm-group file wants them.
class Groups {
public:
  struct Entry {
    int id;
    std::vector<int64_t> members;
    std::vector<bool> involved; ///< network dimensions the group spans
  };
  /// The groups of `ranks` (ascending; null: every rank).
  Groups(const ir::Program &prog, const RankLayout &layout, const std::vector<int64_t> *ranks = nullptr);
  const Entry &of(int64_t rank, ir::Group g) const { return entries[byRank.at({rank, g})]; }
  const std::vector<Entry> &all() const { return entries; }
  /// The group kinds stage `stage`'s ops name (PP aside), in enum order.
  const std::vector<ir::Group> &kindsOfStage(int64_t stage) const { return stageKinds[size_t(stage)]; }
  /// The group id of each kind `rank` communicates in (PP has none: sends
  /// and receives name their peer). Kinds with the same members share one.
  std::map<int, ir::Group> kindsOf(int64_t rank) const;
  /// The groups as the runtime reads them (and comm_groups.json holds them).
  coll::CommGroups runtimeGroups() const;

private:
  std::vector<Entry> entries;
  std::map<std::pair<int64_t, ir::Group>, size_t> byRank;
  std::vector<std::vector<ir::Group>> stageKinds;
};

/// What the runtime reads of op `idx` of `rank`'s stage graph (its name and
/// dependencies aside): fillNode writes exactly these fields as Chakra
/// attributes, so the in-process run and emitted traces cannot drift apart.
trace::TraceNode traceNode(const ir::Op &op, size_t idx, int64_t rank, const RankLayout &layout, const Groups &groups);

/// Op `idx` of stage graph `g` as every rank of the stage shares it, its
/// rank-dependent fields placeholders (a compact set's program, the
/// in-process run's shared bodies): a collective's pg_name is the slot of
/// its group kind among the stage's, a send's comm_dst and a receive's
/// comm_src the peer's stage. `rank` is any rank of the stage `groups` holds.
trace::TraceNode programNode(const ir::Op &op, size_t idx, const ir::Graph &g, int64_t rank, const RankLayout &layout,
                             const Groups &groups);

/// Fills the tables through which rank `rank` reads a shared program's
/// placeholders (trace::RankGraph::group, src, dst).
void fillRankTables(trace::RankGraph &rg, int64_t rank, int64_t stages, const RankLayout &layout,
                    const Groups &groups);

/// The Chakra node of op `idx` of `rank`'s stage graph: compute nodes carry
/// their exact time (`rapid_time_ns`), communication nodes their group or peer
/// (and a collective with a time its time: the runtime replays it).
void fillNode(ChakraProtoMsg::Node &n, const ir::Op &op, size_t idx, int64_t rank, const RankLayout &layout,
              const Groups &groups);

} // namespace rapid::emit
