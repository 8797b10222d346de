//===- Replay.cpp - Match a profiled trace set's collectives, run it ------===//

#include "rapid/Profile/Replay.h"

#include "rapid/Network/Network.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>

namespace rapid::profile {

static llvm::Error error(const std::string &what) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), what);
}

namespace {

/// The communicator a collective ran on: the process group the profiler
/// names with its ranks, else its stream (NCCL gives each communicator its
/// own stream; older profiles name nothing). Streams sort first.
struct CommKey {
  bool named = false;
  int64_t stream = 0;
  std::string name;
  std::vector<int> ranks;
  auto tie() const { return std::tie(named, stream, name, ranks); }
  bool operator<(const CommKey &o) const { return tie() < o.tie(); }
  std::string label() const {
    return named ? fmt::format("process group '{}' (ranks {})", name, fmt::join(ranks, ", "))
                 : fmt::format("stream {}", stream);
  }
};

struct Communicator {
  std::vector<int> members; ///< ascending
  std::vector<std::vector<const CollectiveUse *>> uses; ///< per member, in launch order
};

} // namespace

/// Sorts every rank's collectives by communicator; a named group's members
/// are the ranks it lists, a stream's the ranks that used it.
static llvm::Expected<std::map<CommKey, Communicator>> communicators(const TraceSet &set, const ReplayResult &r) {
  std::map<CommKey, std::map<int, std::vector<const CollectiveUse *>>> byKey;
  int world = int(set.ranks.size());
  for (int k = 0; k < int(r.graphs.size()); ++k) {
    const KinetoTrace &t = set.ranks[size_t(k)];
    for (const CollectiveUse &c : r.graphs[size_t(k)].collectives) {
      CommKey key;
      key.stream = c.stream;
      int32_t g = c.comm >= 0 ? t.comms[size_t(c.comm)].group : -1;
      if (g >= 0 && !t.groups[size_t(g)].ranks.empty()) {
        const ProcessGroup &pg = t.groups[size_t(g)];
        key = CommKey{true, 0, pg.name, pg.ranks};
        if (pg.ranks.back() >= world)
          return error(fmt::format("{}: {} lists rank {}, not below world_size {}", t.file, key.label(),
                                   pg.ranks.back(), world));
        if (!std::binary_search(pg.ranks.begin(), pg.ranks.end(), t.rank))
          return error(fmt::format("{}: rank {} launched a collective of {}, which does not include it", t.file,
                                   t.rank, key.label()));
      }
      byKey[key][k].push_back(&c);
    }
  }
  std::map<CommKey, Communicator> out;
  for (auto &[key, perRank] : byKey) {
    Communicator &c = out[key];
    if (key.named) {
      c.members = key.ranks;
      for (int m : c.members)
        if (!perRank.count(m))
          return error(fmt::format("{}: rank {} is a member but launched none of its {} NCCL collectives: the traces "
                                   "are not of one iteration of one job",
                                   key.label(), m, perRank.begin()->second.size()));
    } else {
      for (const auto &[k, uses] : perRank) c.members.push_back(k);
      if (c.members.size() == 1 && set.ranks.size() > 1)
        return error(fmt::format("stream {}: only rank {} launched NCCL collectives there; a collective needs its "
                                 "peers: the traces are not of one iteration of one job",
                                 key.stream, c.members[0]));
    }
    for (int m : c.members) c.uses.push_back(std::move(perRank[m]));
    for (size_t m = 1; m < c.members.size(); ++m)
      if (c.uses[m].size() != c.uses[0].size())
        return error(fmt::format("{}: rank {} launched {} NCCL collectives, rank {} launched {}: "
                                 "the traces are not of one iteration of one job",
                                 key.label(), c.members[0], c.uses[0].size(), c.members[m], c.uses[m].size()));
  }
  return out;
}

/// The id of the group of `ranks` (0: the whole world), added if new.
static uint32_t groupOf(ReplayResult &r, const std::vector<int> &ranks, size_t world) {
  if (ranks.size() == world) return 0;
  for (const auto &[id, members] : r.groups.members)
    if (members == ranks) return id;
  uint32_t id = uint32_t(r.groups.members.size() + 1);
  r.groups.members[id] = ranks;
  return id;
}

/// Gives every NCCL collective its peers' common time and group, matched on
/// its communicator by its place in that communicator's order.
static llvm::Error matchCollectives(const TraceSet &set, bool simulate, ReplayResult &r) {
  auto comms = communicators(set, r);
  if (!comms) return comms.takeError();
  for (const auto &[key, comm] : *comms) {
    const std::vector<int> &ranks = comm.members;
    const auto &uses = comm.uses;
    uint32_t group = groupOf(r, ranks, set.ranks.size());
    for (size_t k = 0; k < uses[0].size(); ++k) {
      int64_t ns = INT64_MAX, bytes = 0;
      bool known = true;
      const trace::TraceNode &first = r.graphs[ranks[0]].nodes[uses[0][k]->node].node;
      for (size_t m = 0; m < ranks.size(); ++m) {
        const GraphNode &g = r.graphs[ranks[m]].nodes[uses[m][k]->node];
        if (g.node.commType != first.commType)
          return error(fmt::format("{}: NCCL collective {} is {} on rank {} but {} on rank {}", key.label(), k,
                                   trace::collKindName(first.coll()), ranks[0], trace::collKindName(g.node.coll()),
                                   ranks[m]));
        ns = std::min(ns, uses[m][k]->measuredNs);
        if (simulate && uses[m][k]->bytes < 0)
          return error(fmt::format("{}: NCCL collective {} on {} ({}) has no size: no nccl:* annotation with "
                                   "'Input Dims' and 'Input type' around its launch (profile with record_shapes=True), "
                                   "or keep the measured times (no --network; collectives = measured)",
                                   set.ranks[ranks[m]].file, k, key.label(), trace::collKindName(g.node.coll())));
        known &= uses[m][k]->bytes >= 0;
        bytes = std::max(bytes, uses[m][k]->bytes);
      }
      for (size_t m = 0; m < ranks.size(); ++m) {
        trace::TraceNode &n = r.graphs[ranks[m]].nodes[uses[m][k]->node].node;
        // Members must agree on the size to meet: the largest (an uneven
        // all-to-all). Measured collectives carry it too, for other tools.
        n.commSize = known ? bytes : 0;
        if (!simulate) n.measuredNs = ns;
        n.pgName = group;
      }
      ++r.collectives;
      r.collectiveProfiledNs += ns;
      r.instances.push_back({uint32_t(ranks[0]), uses[0][k]->node, first.coll(), known ? bytes : -1,
                             uint32_t(ranks.size()), ns});
    }
  }
  return llvm::Error::success();
}

/// Pairs every send the profile names the peer of with that peer's
/// receive: the k-th send from s to d meets the k-th receive on d from s
/// (NCCL keeps each peer's order). On a network the pair is a message from
/// s to d; with measured times both kernels meet and then take the shorter
/// profiled time (the later to arrive did not wait), as a collective of two.
static llvm::Error matchPeers(const TraceSet &set, bool simulate, ReplayResult &r) {
  using Side = std::vector<std::pair<int, const PeerUse *>>; // (rank, use) in launch order
  std::map<std::pair<int, int>, std::pair<Side, Side>> byPair;  // (src, dst) -> sends, receives
  int world = int(set.ranks.size());
  for (int k = 0; k < world; ++k)
    for (const PeerUse &u : r.graphs[size_t(k)].peers) {
      if (u.peer >= world || u.peer == k)
        return error(fmt::format("{}: a {} rank {}: not another rank of the world of {}", set.ranks[size_t(k)].file,
                                 u.send ? "send to" : "receive from", u.peer, world));
      auto &[sends, recvs] = byPair[u.send ? std::pair{k, u.peer} : std::pair{u.peer, k}];
      (u.send ? sends : recvs).push_back({k, &u});
    }
  for (const auto &[key, sides] : byPair) {
    const auto &[sends, recvs] = sides;
    auto [src, dst] = key;
    if (sends.size() != recvs.size())
      return error(fmt::format("rank {} sent {} messages to rank {}, which received {} from it: the traces are not "
                               "of one iteration of one job",
                               src, sends.size(), dst, recvs.size()));
    uint32_t pair = simulate ? 0 : groupOf(r, {std::min(src, dst), std::max(src, dst)}, size_t(world));
    for (size_t i = 0; i < sends.size(); ++i) {
      const PeerUse &s = *sends[i].second, &d = *recvs[i].second;
      trace::TraceNode &sn = r.graphs[size_t(src)].nodes[s.node].node, &dn = r.graphs[size_t(dst)].nodes[d.node].node;
      int64_t bytes = std::max(s.bytes, d.bytes);
      if (simulate && bytes < 0)
        return error(fmt::format("{}: send {} from rank {} to rank {} has no size ('In msg nelems' and 'dtype'), or keep "
                                 "the measured times (no --network; collectives = measured)",
                                 set.ranks[size_t(src)].file, i, src, dst));
      for (trace::TraceNode *n : {&sn, &dn}) {
        n->commSize = std::max<int64_t>(bytes, 0);
        if (simulate) {
          n->commType = trace::kAbsent;
          n->commTag = int64_t(i);
        } else {
          n->measuredNs = std::min(s.measuredNs, d.measuredNs);
          n->pgName = pair;
        }
      }
      if (simulate) {
        for (trace::TraceNode *n : {&sn, &dn}) n->commSrc = src, n->commDst = dst;
        sn.kind = trace::NodeKind::Send;
        dn.kind = trace::NodeKind::Recv;
      }
      ++r.peersMatched;
    }
  }
  return llvm::Error::success();
}

static llvm::Expected<trace::RankGraph> rankGraph(const KinetoTrace &t, const ExecGraph &g) {
  trace::GraphBuilder b(t.file, t.rank);
  for (const GraphNode &n : g.nodes) {
    bool named = n.role >= Role::Call && n.role != Role::Launch;
    b.add(n.node, named ? std::string_view(t.names[n.name]) : std::string_view(roleName(n.role)), n.deps);
  }
  return b.finish();
}

/// Union lengths within [lo, hi]: the device computing, and busy at all.
static Breakdown breakdown(std::vector<std::tuple<int64_t, int64_t, bool>> spans, int64_t lo, int64_t hi) {
  std::sort(spans.begin(), spans.end());
  auto unionNs = [&](bool commToo) {
    int64_t total = 0, curLo = 0, curHi = INT64_MIN;
    for (auto [s, e, comm] : spans) {
      if (comm && !commToo) continue;
      s = std::max(s, lo), e = std::min(e, hi);
      if (e <= s) continue;
      if (s > curHi) {
        if (curHi > curLo) total += curHi - curLo;
        curLo = s, curHi = e;
      } else {
        curHi = std::max(curHi, e);
      }
    }
    if (curHi > curLo) total += curHi - curLo;
    return total;
  };
  Breakdown b;
  b.computeNs = unionNs(false);
  int64_t busy = unionNs(true);
  b.exposedCommNs = busy - b.computeNs;
  b.idleNs = std::max<int64_t>(0, hi - lo) - busy;
  return b;
}

static void profiledFigures(const KinetoTrace &t, RankReplay &out) {
  out.profiledNs = t.stepNs;
  std::vector<std::tuple<int64_t, int64_t, bool>> spans;
  for (const Event &d : t.device) {
    spans.emplace_back(d.startNs, d.endNs(), d.kind == EventKind::Kernel && isNcclKernel(t.name(d)));
    out.profiledDeviceNs = std::max(out.profiledDeviceNs, d.endNs());
  }
  out.profiled = breakdown(std::move(spans), 0, t.stepNs);
}

static void replayedFigures(const ReplayResult &r, size_t rank, RankReplay &out) {
  const ExecGraph &g = r.graphs[rank];
  std::vector<int64_t> startNs(g.nodes.size(), 0), endNs(g.nodes.size(), 0);
  for (const engine::Span &s : r.sim.spans)
    if (s.rank == rank) startNs[s.node] = (s.startPs + 500) / 1000, endNs[s.node] = (s.endPs + 500) / 1000;
  std::vector<std::tuple<int64_t, int64_t, bool>> spans;
  int64_t stepEnd = endNs[g.stepEnd], deviceEnd = out.startNs;
  for (uint32_t i = 0; i < g.nodes.size(); ++i) {
    const GraphNode &n = g.nodes[i];
    if (!onDevice(n.role)) continue;
    // An NCCL kernel runs from when its stream reaches it, waiting for its
    // peers inside: count it so, as the profile does.
    int64_t from = startNs[i];
    if (communicates(n.role)) {
      int64_t ready = 0;
      for (uint32_t d : n.deps) ready = std::max(ready, endNs[d]);
      from = std::min(from, ready);
    }
    spans.emplace_back(from, endNs[i], communicates(n.role));
    deviceEnd = std::max(deviceEnd, endNs[i]);
  }
  out.replayedNs = stepEnd - out.startNs;
  out.replayedDeviceNs = deviceEnd - out.startNs;
  out.replayed = breakdown(std::move(spans), out.startNs, stepEnd);
}

net::NetworkSpec replayNetwork(const TraceSet &set, const ReplayOptions &opts) {
  if (opts.network) return *opts.network;
  // With measured collectives the network only has to exist.
  net::DimSpec dim;
  dim.kind = net::DimKind::FullyConnected;
  dim.shape = {int(set.ranks.size())};
  dim.bandwidth = BytesPerSecond(1e12);
  return net::NetworkSpec{{dim}};
}

llvm::Expected<ReplayResult> buildReplay(const TraceSet &set, const ReplayOptions &opts) {
  ReplayResult r;
  int64_t first = INT64_MAX;
  for (const KinetoTrace &t : set.ranks) first = std::min(first, t.stepStartUs);
  for (const KinetoTrace &t : set.ranks) {
    RankReplay rr;
    rr.rank = t.rank;
    rr.startNs = opts.profiledStarts ? (t.stepStartUs - first) * 1000 : 0;
    r.ranks.push_back(rr);
    r.graphs.push_back(buildExecGraph(t, rr.startNs));
    ExecGraph &g = r.graphs.back();
    for (GraphNode &n : g.nodes) {
      if (n.role == Role::Kernel || n.role == Role::Copy || n.role == Role::Set) {
        double f = opts.kernelScale * (opts.deviceScale ? opts.deviceScale(t, t.device[n.device]) : 1.0) *
                   (t.deviceFactor.empty() ? 1.0 : t.deviceFactor[size_t(n.device)]);
        f = std::isfinite(f) ? std::clamp(f, 1e-6, 1e6) : 1.0; // a time stays a time, however odd the GPUs
        n.node.rapidTimeNs = std::llround(double(n.node.rapidTimeNs) * f);
      }
      if (n.node.rapidTimeNs != trace::kAbsent) // the standard field, for other tools
        n.node.durationMicros = uint64_t((n.node.rapidTimeNs + 500) / 1000);
      r.peerToPeer += n.role == Role::PeerToPeer;
    }
    r.streams = std::max(r.streams, int(g.streams.size()));
    r.threads = std::max(r.threads, int(g.threads.size()));
  }
  r.simulatedCollectives = opts.network.has_value();
  if (int(set.ranks.size()) != set.profiledWorld && !r.simulatedCollectives)
    return error(fmt::format("{} ranks run a profile of {}: a collective over {} ranks than profiled has no "
                             "measured time; re-simulate the collectives on a network of {} ranks",
                             set.ranks.size(), set.profiledWorld,
                             int(set.ranks.size()) > set.profiledWorld ? "more" : "fewer", set.ranks.size()));
  if (auto err = matchCollectives(set, r.simulatedCollectives, r)) return err;
  if (auto err = matchPeers(set, r.simulatedCollectives, r)) return err;
  r.peerToPeer -= 2 * r.peersMatched;
  for (size_t k = 0; k < set.ranks.size(); ++k) {
    auto rg = rankGraph(set.ranks[k], r.graphs[k]);
    if (!rg) return rg.takeError();
    r.workload.ranks.push_back(std::move(*rg));
  }
  r.workload.prefix = set.source;
  return r;
}

engine::SimOptions replaySimOptions(const ReplayResult &r, const ReplayOptions &opts) {
  engine::SimOptions so;
  so.system = opts.system;
  so.computeStreams = r.streams;
  so.commStreams = r.streams;
  so.cpuThreads = r.threads;
  return so;
}

llvm::Expected<ReplayResult> replay(const TraceSet &set, const ReplayOptions &opts) {
  auto built = buildReplay(set, opts);
  if (!built) return built.takeError();
  ReplayResult &r = *built;
  net::Topology topo(replayNetwork(set, opts));
  if (topo.numRanks() != int(set.ranks.size()))
    return error(fmt::format("the network has {} ranks but the trace set {}", topo.numRanks(), set.ranks.size()));
  if (!opts.faults.empty())
    if (auto err = net::applyFaults(opts.faultsFile, opts.faults, topo)) return err;
  net::Network net(topo, opts.network ? net::NetMode::Congestion : net::NetMode::Analytical);
  engine::SimOptions so = replaySimOptions(r, opts);
  so.recordTimeline = true;
  engine::Simulator sim(r.workload, net, r.groups, so);
  auto res = sim.run();
  if (!res) return res.takeError();
  r.sim = std::move(*res);
  auto head = [](const ReplayResult::Instance &i) { return std::pair{i.rank, i.node}; };
  std::sort(r.instances.begin(), r.instances.end(), [&](auto &a, auto &b) { return head(a) < head(b); });
  for (const engine::Span &s : r.sim.spans) {
    auto it = std::lower_bound(r.instances.begin(), r.instances.end(), std::pair{s.rank, s.node},
                               [&](const ReplayResult::Instance &i, std::pair<uint32_t, uint32_t> k) { return head(i) < k; });
    if (it == r.instances.end() || head(*it) != std::pair{s.rank, s.node}) continue;
    it->replayedNs = (s.endPs - s.startPs + 500) / 1000;
    r.collectiveReplayedNs += it->replayedNs;
  }
  for (size_t k = 0; k < set.ranks.size(); ++k) {
    profiledFigures(set.ranks[k], r.ranks[k]);
    replayedFigures(r, k, r.ranks[k]);
  }
  return std::move(r);
}

} // namespace rapid::profile
