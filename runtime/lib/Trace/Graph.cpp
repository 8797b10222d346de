//===- Graph.cpp - Decode nodes and build a checked rank graph ------------===//

#include "rapid/Trace/Graph.h"
#include "rapid/Trace/Attr.h"

#include <algorithm>
#include <cctype>
#include <fmt/format.h>

namespace rapid::trace {

const char *nodeKindName(NodeKind k) {
  static const char *names[] = {"INVALID_NODE",   "METADATA_NODE",  "MEM_LOAD_NODE",
                                "MEM_STORE_NODE", "COMP_NODE",      "COMM_SEND_NODE",
                                "COMM_RECV_NODE", "COMM_COLL_NODE"};
  return names[int(k)];
}

const char *collKindName(CollKind k) {
  static const char *names[] = {"ALL_REDUCE", "REDUCE",         "ALL_GATHER",
                                "GATHER",     "SCATTER",        "BROADCAST",
                                "ALL_TO_ALL", "REDUCE_SCATTER", "REDUCE_SCATTER_BLOCK",
                                "BARRIER"};
  return unsigned(k) < 10 ? names[int(k)] : "UNKNOWN";
}

GraphBuilder::GraphBuilder(std::string file, int rank, bool lenient) : b(*g.body), lenient(lenient) {
  g.file = std::move(file);
  g.rank = rank;
}

static llvm::Error nodeError(const std::string &file, uint64_t id, const std::string &what) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 fmt::format("{}: node {}: {}", file, id, what));
}

/// Integer attributes the simulator reads, by name; the table keeps the
/// decoder one loop instead of a chain of string compares per field.
static int64_t TraceNode::*intField(const std::string &name) {
  static const std::pair<const char *, int64_t TraceNode::*> table[] = {
      {"rapid_time_ns", &TraceNode::rapidTimeNs}, {"rapid_measured_ns", &TraceNode::measuredNs},
      {"rapid_launch_ns", &TraceNode::launchNs},
      {"num_ops", &TraceNode::numOps},
      {"tensor_size", &TraceNode::tensorSize},    {"comm_size", &TraceNode::commSize},
      {"comm_src", &TraceNode::commSrc},          {"comm_dst", &TraceNode::commDst},
      {"comm_tag", &TraceNode::commTag},          {"comm_type", &TraceNode::commType}};
  for (auto &[n, field] : table)
    if (name == n)
      return field;
  return nullptr;
}

static llvm::Error decodeAttr(const std::string &file, const AttributeProto &a, TraceNode &n) {
  const std::string &name = a.name();
  if (auto field = intField(name)) {
    auto v = attrAsInt(a);
    if (!v)
      return nodeError(file, n.id, fmt::format("attribute '{}' must be an integer, found {}",
                                               name, attrTypeName(a)));
    n.*field = *v;
  } else if (name == "is_cpu_op") {
    auto v = attrAsInt(a);
    if (!v)
      return nodeError(file, n.id, "attribute 'is_cpu_op' must be a bool or integer");
    n.isCpuOp = *v != 0;
  } else if (name == "pg_name") {
    auto s = attrAsString(a);
    auto i = attrAsInt(a);
    if (s && s->empty())
      n.pgName = 0;
    else if (s && s->size() < 10 &&
             std::all_of(s->begin(), s->end(), [](unsigned char c) { return std::isdigit(c); }))
      n.pgName = uint32_t(std::stoul(*s));
    else if (i && *i >= 0)
      n.pgName = uint32_t(*i);
    else
      return nodeError(file, n.id, "attribute 'pg_name' must name a communicator group by number");
  } else if (name == "involved_dim") {
    auto dims = attrAsBoolList(a);
    if (!dims)
      return nodeError(file, n.id, "attribute 'involved_dim' must be a bool_list");
    n.involvedDims = 0;
    for (size_t d = 0; d < dims->size() && d < 32; ++d)
      n.involvedDims |= uint32_t((*dims)[d]) << d;
  }
  return llvm::Error::success();
}

llvm::Error GraphBuilder::add(const ChakraProtoMsg::Node &pn) {
  TraceNode n;
  n.id = pn.id();
  n.durationMicros = pn.duration_micros();
  int type = int(pn.type());
  if (type < 0 || type > 7)
    return nodeError(g.file, n.id, fmt::format("unknown node type {}", type));
  n.kind = NodeKind(type);
  for (const auto &a : pn.attr())
    if (auto err = decodeAttr(g.file, a, n))
      return err;
  if (lenient && n.kind == NodeKind::Coll && n.commType == kAbsent) {
    n.kind = NodeKind::Invalid;
    ++g.emptiedColls;
  }
  n.nameBegin = uint32_t(b.names.size());
  n.nameLen = uint32_t(pn.name().size());
  b.names += pn.name();
  n.depBegin = uint32_t(depIds.size());
  depIds.insert(depIds.end(), pn.data_deps().begin(), pn.data_deps().end());
  depIds.insert(depIds.end(), pn.ctrl_deps().begin(), pn.ctrl_deps().end());
  n.depCount = uint32_t(depIds.size()) - n.depBegin;
  b.nodes.push_back(n);
  return llvm::Error::success();
}

void GraphBuilder::reserve(size_t nodes, size_t deps) {
  b.nodes.reserve(nodes);
  depIds.reserve(deps);
}

void GraphBuilder::add(TraceNode n, std::string_view name, llvm::ArrayRef<uint32_t> deps) {
  n.nameBegin = uint32_t(b.names.size());
  n.nameLen = uint32_t(name.size());
  b.names += name;
  n.depBegin = uint32_t(depIds.size());
  depIds.insert(depIds.end(), deps.begin(), deps.end());
  n.depCount = uint32_t(deps.size());
  b.nodes.push_back(n);
}

llvm::Error GraphBuilder::resolveDeps() {
  auto &nodes = b.nodes;
  auto byId = [](const TraceNode &a, const TraceNode &b) { return a.id < b.id; };
  if (!std::is_sorted(nodes.begin(), nodes.end(), byId)) // rapidc's own graphs come in order
    std::stable_sort(nodes.begin(), nodes.end(), byId);
  for (size_t i = 1; i < nodes.size(); ++i)
    if (nodes[i].id == nodes[i - 1].id)
      return nodeError(g.file, nodes[i].id, "duplicate node id");
  auto indexOf = [&](uint64_t id) -> int64_t {
    if (id < nodes.size() && nodes[id].id == id) return int64_t(id); // ids 0..n-1, as most traces number them
    auto it = std::lower_bound(nodes.begin(), nodes.end(), id,
                               [](const TraceNode &n, uint64_t v) { return n.id < v; });
    return it != nodes.end() && it->id == id ? it - nodes.begin() : -1;
  };
  std::vector<uint32_t> childCount(nodes.size(), 0);
  for (auto &n : nodes) {
    uint32_t begin = uint32_t(b.deps.size());
    for (uint32_t k = 0; k < n.depCount; ++k) {
      uint64_t depId = depIds[n.depBegin + k];
      int64_t idx = indexOf(depId);
      if (idx < 0 && lenient) {
        ++g.droppedDeps;
        continue;
      }
      if (idx < 0)
        return nodeError(g.file, n.id, fmt::format("depends on node {}, which does not exist", depId));
      // A node listed in both data_deps and ctrl_deps is one dependency.
      if (std::find(b.deps.begin() + begin, b.deps.end(), uint32_t(idx)) != b.deps.end())
        continue;
      b.deps.push_back(uint32_t(idx));
      ++childCount[idx];
      backwardOnly &= idx < &n - nodes.data();
    }
    n.depBegin = begin;
    n.depCount = uint32_t(b.deps.size()) - begin;
  }
  buildChildren(childCount);
  depIds.clear();
  depIds.shrink_to_fit();
  return llvm::Error::success();
}

/// Children as CSR: prefix sums of the counts, then one scatter pass.
void GraphBuilder::buildChildren(const std::vector<uint32_t> &childCount) {
  auto &nodes = b.nodes;
  uint32_t offset = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    nodes[i].childBegin = offset;
    nodes[i].childCount = childCount[i];
    offset += childCount[i];
  }
  b.children.assign(offset, 0);
  std::vector<uint32_t> fill(nodes.size(), 0);
  for (uint32_t i = 0; i < nodes.size(); ++i)
    for (uint32_t k = 0; k < nodes[i].depCount; ++k) {
      uint32_t p = b.deps[nodes[i].depBegin + k];
      b.children[nodes[p].childBegin + fill[p]++] = i;
    }
}

/// Kahn's algorithm; whatever is never released lies on or behind a cycle,
/// and the smallest such id is named so the message is stable.
llvm::Error GraphBuilder::checkAcyclic() const {
  std::vector<uint32_t> pending(b.nodes.size()), stack;
  for (uint32_t i = 0; i < b.nodes.size(); ++i)
    if (!(pending[i] = b.nodes[i].depCount))
      stack.push_back(i);
  size_t released = 0;
  while (!stack.empty()) {
    uint32_t i = stack.back();
    stack.pop_back();
    ++released;
    const auto &n = b.nodes[i];
    for (uint32_t k = 0; k < n.childCount; ++k)
      if (--pending[b.children[n.childBegin + k]] == 0)
        stack.push_back(b.children[n.childBegin + k]);
  }
  if (released == b.nodes.size())
    return llvm::Error::success();
  for (uint32_t i = 0; i < b.nodes.size(); ++i)
    if (pending[i])
      return nodeError(g.file, b.nodes[i].id, "is part of (or depends on) a dependency cycle");
  return llvm::Error::success();
}

llvm::Expected<RankGraph> GraphBuilder::finish() {
  if (auto err = resolveDeps())
    return err;
  // A graph whose every dependency is an earlier node has no cycle.
  if (!backwardOnly)
    if (auto err = checkAcyclic())
      return err;
  return std::move(g);
}

} // namespace rapid::trace
