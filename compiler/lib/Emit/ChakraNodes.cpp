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

#include <cmath>
#include <set>

namespace rapid::emit {

Groups::Groups(const ir::Program &prog, const RankLayout &layout, const std::vector<int64_t> *ranks) {
  std::vector<std::set<ir::Group>> used(prog.stages.size()); // per stage: the kinds its ops name
  for (const ir::Graph &g : prog.stages)
    for (const ir::Op &op : g.ops)
      if (op.isComm() && op.group != ir::Group::PP) used[g.stage].insert(op.group);
  std::map<std::vector<int64_t>, size_t> known;
  auto add = [&](int64_t r) {
    for (ir::Group kind : used[layout.coord(r, ir::Group::PP)]) {
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

void attrInt(Node &n, const char *name, int64_t v) {
  AttributeProto *a = n.add_attr();
  a->set_name(name);
  a->set_int64_val(v);
}

void attrInt32(Node &n, const char *name, int32_t v) {
  AttributeProto *a = n.add_attr();
  a->set_name(name);
  a->set_int32_val(v);
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

/// Fills `n` for op `idx` of the rank's stage graph.
void fillNode(Node &n, const ir::Op &op, size_t idx, int64_t rank, const RankLayout &layout, const Groups &groups) {
  n.set_id(idx);
  n.set_name(op.name);
  for (uint32_t d : op.deps) n.add_data_deps(d);
  AttributeProto *cpu = n.add_attr();
  cpu->set_name("is_cpu_op");
  cpu->set_bool_val(false);
  if (!op.isComm()) {
    n.set_type(COMP_NODE);
    // The runtime's clock stops at 2^62 ps: a longer op saturates there and
    // fails the run by name instead of wrapping an int64 here.
    double ns = std::min(op.time.value() * 1e9, double(kMaxTimePs / 1000));
    n.set_duration_micros(uint64_t(std::llround(ns / 1000)));
    attrInt(n, "rapid_time_ns", std::max<int64_t>(1, std::llround(ns)));
    attrInt(n, "num_ops", std::llround(op.flops));
    attrInt(n, "tensor_size", std::llround(op.bytes));
    return;
  }
  int64_t size = std::llround(op.commBytes);
  if (op.kind == ir::OpKind::Send || op.kind == ir::OpKind::Recv) {
    bool send = op.kind == ir::OpKind::Send;
    int64_t peer = layout.with(rank, ir::Group::PP, op.peer);
    n.set_type(send ? COMM_SEND_NODE : COMM_RECV_NODE);
    attrInt32(n, "comm_src", int32_t(send ? rank : peer));
    attrInt32(n, "comm_dst", int32_t(send ? peer : rank));
    attrInt32(n, "comm_tag", op.tag);
    attrInt(n, "comm_size", size);
    return;
  }
  n.set_type(COMM_COLL_NODE);
  attrInt(n, "comm_type", commType(op.kind));
  attrInt(n, "comm_size", size);
  if (op.time.value() > 0) // timed already (hierarchical mode): the runtime replays it
    attrInt(n, "rapid_time_ns", std::max<int64_t>(1, std::llround(op.time.value() * 1e9)));
  const Groups::Entry &g = groups.of(rank, op.group);
  AttributeProto *pg = n.add_attr();
  pg->set_name("pg_name");
  pg->set_string_val(std::to_string(g.id));
  AttributeProto *dims = n.add_attr();
  dims->set_name("involved_dim");
  for (bool b : g.involved) dims->mutable_bool_list()->add_values(b);
}

} // namespace rapid::emit
