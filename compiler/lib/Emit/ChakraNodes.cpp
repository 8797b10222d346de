//===- ChakraNodes.cpp - IR ops to Chakra nodes, communicator groups ------===//
//
// Every rank of a stage runs the stage's graph; what differs per rank is
// which communicator each collective names and which rank a send or receive
// talks to. Compute nodes carry their time exactly (`rapid_time_ns`) and the
// standard `duration_micros`, `num_ops` and `tensor_size`.
//===----------------------------------------------------------------------===//
#include "rapid/Emit/ChakraNodes.h"

#include "et_def.pb.h"
#include "rapid/Support/SimTime.h"
#include "rapid/Trace/NodeWriter.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace rapid::emit {

Groups::Groups(const ir::Program &prog, const RankLayout &layout, const std::vector<int64_t> *ranks) {
  for (const ir::Graph &g : prog.stages) {
    std::set<ir::Group> used;
    for (const ir::Op &op : g.ops)
      if (op.isComm() && op.group != ir::Group::PP) used.insert(op.group);
    stageKinds.emplace_back(used.begin(), used.end());
  }
  std::map<std::vector<int64_t>, size_t> known;
  auto add = [&](int64_t r) {
    for (ir::Group kind : stageKinds[size_t(layout.coord(r, ir::Group::PP))]) {
      std::vector<int64_t> m = layout.members(r, kind);
      auto [it, fresh] = known.emplace(m, entries.size());
      if (fresh) entries.push_back({int(entries.size()) + 1, m, layout.involvedDims(m)});
      byRank[{r, kind}] = it->second;
    }
  };
  if (ranks)
    for (int64_t r : *ranks) add(r);
  else
    for (int64_t r = 0; r < layout.ranks(); ++r) add(r);
}

std::map<int, ir::Group> Groups::kindsOf(int64_t rank) const {
  std::map<int, ir::Group> out;
  for (auto it = byRank.lower_bound({rank, ir::Group::None}); it != byRank.end() && it->first.first == rank; ++it)
    out.emplace(entries[it->second].id, it->first.second); // the first kind (enum order) names a shared group
  return out;
}

coll::CommGroups Groups::runtimeGroups() const {
  coll::CommGroups out;
  for (const Entry &e : entries) out.members[uint32_t(e.id)] = std::vector<int>(e.members.begin(), e.members.end());
  return out;
}

using namespace ChakraProtoMsg;

namespace {

/// A group's network dimensions as the runtime's bit mask (bit d: dimension d).
uint32_t involvedBits(const Groups::Entry &g) {
  uint32_t bits = 0;
  for (size_t d = 0; d < g.involved.size() && d < 32; ++d) bits |= uint32_t(g.involved[d]) << d;
  return bits;
}

CollectiveCommType commType(ir::OpKind k) {
  switch (k) {
  case ir::OpKind::AllReduce: return ALL_REDUCE;
  case ir::OpKind::AllGather: return ALL_GATHER;
  case ir::OpKind::ReduceScatter: return REDUCE_SCATTER;
  default: return ALL_TO_ALL;
  }
}

} // namespace

trace::TraceNode traceNode(const ir::Op &op, size_t idx, int64_t rank, const RankLayout &layout, const Groups &groups) {
  trace::TraceNode t;
  t.id = idx;
  if (!op.isComm()) {
    t.kind = trace::NodeKind::Comp;
    // The runtime's clock stops at 2^62 ps: a longer op saturates there and
    // fails the run by name instead of wrapping an int64 here.
    double ns = std::min(op.time.value() * 1e9, double(kMaxTimePs / 1000));
    t.durationMicros = uint64_t(std::llround(ns / 1000));
    t.rapidTimeNs = std::max<int64_t>(1, std::llround(ns));
    t.numOps = std::llround(op.flops);
    t.tensorSize = std::llround(op.bytes);
    return t;
  }
  t.commSize = std::llround(op.commBytes);
  if (op.launch.value() > 0) // the host launches it before it can start (ours: rapid_launch_ns)
    t.launchNs = std::llround(std::min(op.launch.value() * 1e9, double(kMaxTimePs / 1000)));
  if (op.kind == ir::OpKind::Send || op.kind == ir::OpKind::Recv) {
    bool send = op.kind == ir::OpKind::Send;
    int64_t peer = layout.with(rank, ir::Group::PP, op.peer);
    t.kind = send ? trace::NodeKind::Send : trace::NodeKind::Recv;
    t.commSrc = int32_t(send ? rank : peer);
    t.commDst = int32_t(send ? peer : rank);
    t.commTag = op.tag;
    return t;
  }
  t.kind = trace::NodeKind::Coll;
  t.commType = commType(op.kind);
  if (op.time.value() > 0) // timed already (hierarchical mode): the runtime replays it
    t.rapidTimeNs = std::max<int64_t>(1, std::llround(op.time.value() * 1e9));
  const Groups::Entry &g = groups.of(rank, op.group);
  t.pgName = uint32_t(g.id);
  t.involvedDims = involvedBits(g);
  return t;
}

trace::TraceNode programNode(const ir::Op &op, size_t idx, const ir::Graph &g, int64_t rank, const RankLayout &layout,
                             const Groups &groups) {
  const std::vector<ir::Group> &kinds = groups.kindsOfStage(g.stage);
  trace::TraceNode t = traceNode(op, idx, rank, layout, groups);
  if (t.kind == trace::NodeKind::Send) t.commSrc = g.stage, t.commDst = op.peer;
  if (t.kind == trace::NodeKind::Recv) t.commSrc = op.peer, t.commDst = g.stage;
  if (t.kind == trace::NodeKind::Coll)
    t.pgName = uint32_t(std::find(kinds.begin(), kinds.end(), op.group) - kinds.begin()) + 1;
  return t;
}

void fillRankTables(trace::RankGraph &rg, int64_t rank, int64_t stages, const RankLayout &layout,
                    const Groups &groups) {
  rg.shared = true;
  for (ir::Group k : groups.kindsOfStage(layout.coord(rank, ir::Group::PP))) {
    const Groups::Entry &e = groups.of(rank, k);
    rg.groupOfSlot.push_back(uint32_t(e.id));
    rg.involvedOfSlot.push_back(involvedBits(e));
  }
  for (int64_t s = 0; s < stages; ++s) rg.rankOfStage.push_back(layout.with(rank, ir::Group::PP, s));
}

/// Fills `n` for op `idx` of the rank's stage graph: traceNode's fields, and
/// a collective's network dimensions.
void fillNode(Node &n, const ir::Op &op, size_t idx, int64_t rank, const RankLayout &layout, const Groups &groups) {
  trace::TraceNode t = traceNode(op, idx, rank, layout, groups);
  trace::writeNode(t, op.name, op.deps, n);
  if (t.kind != trace::NodeKind::Coll) return;
  AttributeProto *dims = n.add_attr();
  dims->set_name("involved_dim");
  for (bool b : groups.of(rank, op.group).involved) dims->mutable_bool_list()->add_values(b);
}

} // namespace rapid::emit
