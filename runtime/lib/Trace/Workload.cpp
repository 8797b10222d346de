//===- Workload.cpp - Load every rank and check the set -------------------===//

#include "rapid/Trace/Workload.h"

#include "llvm/Support/FileSystem.h"

#include <fmt/format.h>
#include <map>
#include <tuple>

namespace rapid::trace {

static llvm::Error nodeError(const RankGraph &g, const TraceNode &n, const std::string &what) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 fmt::format("{}: node {}: {}", g.file, n.id, what));
}

llvm::Expected<Workload> loadWorkload(const std::string &prefix, int numRanks,
                                      const ReadOptions &opts) {
  Workload w;
  w.prefix = prefix;
  w.ranks.reserve(numRanks);
  for (int r = 0; r < numRanks; ++r) {
    std::string file = fmt::format("{}.{}.et", prefix, r);
    if (!llvm::sys::fs::exists(file))
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          fmt::format("{}: missing trace file for rank {} (the network has {} ranks)", file, r,
                      numRanks));
    GraphBuilder builder(file, r, opts.lenient);
    ChakraProtoMsg::GlobalMetadata meta;
    if (auto err = readEtFile(file, opts, meta,
                              [&](ChakraProtoMsg::Node &n) { return builder.add(n); }))
      return err;
    auto graph = builder.finish();
    if (!graph)
      return graph.takeError();
    w.ranks.push_back(std::move(*graph));
  }
  // A trace set for more ranks than the network has would run its first
  // ranks alone, silently.
  std::string extra = fmt::format("{}.{}.et", prefix, numRanks);
  if (llvm::sys::fs::exists(extra))
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        fmt::format("{}: the trace set has more ranks than the network's {}", extra, numRanks));
  return w;
}

static bool supportedColl(CollKind k) {
  return k == CollKind::AllReduce || k == CollKind::AllGather || k == CollKind::ReduceScatter ||
         k == CollKind::AllToAll || k == CollKind::Broadcast;
}

static llvm::Error checkRequired(const RankGraph &g, const TraceNode &n,
                                 std::initializer_list<std::pair<const char *, int64_t>> attrs) {
  for (auto [name, value] : attrs)
    if (value == kAbsent)
      return nodeError(g, n, fmt::format("{} needs attribute '{}'", nodeKindName(n.kind), name));
  return llvm::Error::success();
}

static llvm::Error checkPeer(const RankGraph &g, const TraceNode &n, const char *what,
                             int64_t peer, int numRanks) {
  if (peer < 0 || peer >= numRanks)
    return nodeError(g, n, fmt::format("{} {} is not a rank (0..{})", what, peer, numRanks - 1));
  return llvm::Error::success();
}

static llvm::Error checkNode(const RankGraph &g, const TraceNode &n, int numRanks,
                             const CheckOptions &opts) {
  for (auto [name, value] : {std::pair{"comm_size", n.commSize}, {"num_ops", n.numOps},
                             {"tensor_size", n.tensorSize}, {"rapid_time_ns", n.rapidTimeNs},
                             {"rapid_measured_ns", n.measuredNs}, {"rapid_launch_ns", n.launchNs}})
    if (value != kAbsent && value < 0)
      return nodeError(g, n, fmt::format("attribute '{}' is negative ({})", name, value));
  switch (n.kind) {
  case NodeKind::Comp:
    if (opts.roofline && n.rapidTimeNs == kAbsent)
      return checkRequired(g, n, {{"num_ops", n.numOps}, {"tensor_size", n.tensorSize}});
    return llvm::Error::success();
  case NodeKind::Coll:
    if (auto err = checkRequired(g, n, {{"comm_type", n.commType}}))
      return err;
    if (n.commType < 0 || !supportedColl(n.coll()))
      return nodeError(g, n, fmt::format("unsupported collective {} (comm_type {})",
                                         collKindName(n.coll()), n.commType));
    if (n.coll() == CollKind::Broadcast)
      return llvm::Error::success();
    return checkRequired(g, n, {{"comm_size", n.commSize}});
  case NodeKind::Send:
    if (auto err = checkRequired(g, n, {{"comm_dst", n.commDst}, {"comm_size", n.commSize},
                                        {"comm_tag", n.commTag}}))
      return err;
    return checkPeer(g, n, "comm_dst", g.dst(n), numRanks);
  case NodeKind::Recv:
    if (auto err = checkRequired(g, n, {{"comm_src", n.commSrc}, {"comm_size", n.commSize},
                                        {"comm_tag", n.commTag}}))
      return err;
    return checkPeer(g, n, "comm_src", g.src(n), numRanks);
  case NodeKind::MemLoad:
  case NodeKind::MemStore:
    return nodeError(g, n, fmt::format("unsupported node kind {} (no memory model)",
                                       nodeKindName(n.kind)));
  default:
    return llvm::Error::success();
  }
}

/// Sends and receives pair on (src, dst, tag, size) in FIFO order, so the
/// counts per key must agree; the first unmatched node is named.
static llvm::Error checkPairing(const Workload &w) {
  using Key = std::tuple<int64_t, int64_t, int64_t, int64_t>;
  std::map<Key, std::pair<int64_t, const TraceNode *>> balance; // sends - recvs
  std::map<Key, const RankGraph *> owner;
  for (const auto &g : w.ranks)
    for (const auto &n : g.nodes()) {
      if (n.kind != NodeKind::Send && n.kind != NodeKind::Recv)
        continue;
      bool send = n.kind == NodeKind::Send;
      Key k{send ? g.rank : g.src(n), send ? g.dst(n) : g.rank, n.commTag, n.commSize};
      auto &[count, first] = balance[k];
      if (!first) {
        first = &n;
        owner[k] = &g;
      }
      count += send ? 1 : -1;
    }
  for (const auto &[k, entry] : balance)
    if (entry.first != 0) {
      auto [src, dst, tag, size] = k;
      return nodeError(*owner[k], *entry.second,
                       fmt::format("{} {} unmatched message(s) {} -> {} (tag {}, {} bytes) can "
                                   "never pair",
                                   entry.first > 0 ? "send has" : "recv has",
                                   std::abs(entry.first), src, dst, tag, size));
    }
  return llvm::Error::success();
}

llvm::Error checkWorkload(const Workload &w, const CheckOptions &opts) {
  int numRanks = int(w.ranks.size());
  for (const auto &g : w.ranks)
    for (const auto &n : g.nodes())
      if (auto err = checkNode(g, n, numRanks, opts))
        return err;
  return checkPairing(w);
}

} // namespace rapid::trace
