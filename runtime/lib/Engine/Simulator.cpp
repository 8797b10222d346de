//===- Simulator.cpp - Event loop, messages, point-to-point ---------------===//

#include "rapid/Engine/Simulator.h"
#include "rapid/Support/SimTime.h"

#include <fmt/format.h>

#include <algorithm>

namespace rapid::engine {

using trace::NodeKind;
using trace::TraceNode;

Simulator::Simulator(const trace::Workload &w, net::Network &net, const coll::CommGroups &groups,
                     SimOptions opts)
    : w_(w), net_(net), groups_(groups), opts_(std::move(opts)) {
  if (opts_.astraCompat)
    opts_.computeStreams = opts_.commStreams = 1;
  const SystemConfig &sys = opts_.system;
  endpointCosts_ = sys.sharedBus || sys.endpointDelayNs || sys.reduceMemBytesPerNs > 0;
  for (const auto &[id, members] : groups_.members) {
    auto &pos = groupPos_[id];
    pos.assign(w_.ranks.size(), -1);
    for (size_t i = 0; i < members.size(); ++i)
      pos[members[i]] = int32_t(i);
    if (std::optional<coll::GroupGrid> g = coll::groupGrid(members, net_.topology())) grids_.emplace(id, std::move(*g));
  }
}

void Simulator::fail(std::string message) {
  if (!error_)
    error_ = std::move(message);
}

void Simulator::fail(const trace::RankGraph &g, const TraceNode &n, const std::string &what) {
  std::string_view name = g.name(n);
  fail(name.empty() ? fmt::format("{}: node {}: {}", g.file, n.id, what)
                    : fmt::format("{}: node {} '{}': {}", g.file, n.id, name, what));
}

/// A new slot, where none was freed before (newMessage's cold path).
uint32_t Simulator::addMessage() {
  messages_.emplace_back();
  return uint32_t(messages_.size() - 1);
}

/// The message's head is at the near end of link `hop`: send it on. The next
/// event is the head reaching the next node, or, after the last link, the
/// tail reaching the destination. Inline (only this file calls it): every
/// message passes here once a hop.
[[gnu::always_inline]] inline void Simulator::forward(uint32_t id) {
  Message &m = messages_[id];
  net::HopTimes t = net_.sendHop(now_, net_.router().link(m.route, m.hop), m.bytes, m.tailPs);
  m.tailPs = t.tailPs;
  ++m.hop;
  // After the last link the receiver sees it once its protocol's handshake
  // is done too (holdPs); the links are free at tailPs regardless.
  queue_.push(m.hop < m.route.length ? t.headPs : addTime(t.tailPs, m.holdPs), MsgArrive, id, 0);
}

/// Puts message `id`, filled by the caller in its slot, from node `srcNode`
/// of rank `src` on the network at now_; `stepPs` is its protocol's least
/// step time (0: none). Filled in place: a message built on the stack and
/// copied whole made the CPU stall on every message (loads spanning several
/// recent stores). Route errors (a partition by hard faults) stop the
/// simulation, naming it.
void Simulator::inject(uint32_t src, uint32_t dst, uint32_t id, uint32_t srcNode, int64_t stepPs) {
  Message &m = messages_[id];
  if (const net::Route *last = net_.router().lastRoute(int(src), int(dst))) {
    m.route = *last;
  } else {
    auto route = net_.router().route(int(src), int(dst));
    if (!route) {
      freeMessages_.push_back(id);
      return fail(w_.ranks[src], w_.ranks[src].nodes()[srcNode], llvm::toString(route.takeError()));
    }
    m.route = *route;
  }
  m.hop = 0;
  m.tailPs = now_;
  // A protocol's step takes at least its handshake; the path's own
  // latency counts towards it.
  if (stepPs > 0) {
    int64_t pathPs = 0;
    const std::vector<net::Link> &links = net_.topology().links();
    for (uint32_t h = 0; h < m.route.length && pathPs < stepPs; ++h)
      pathPs += links[net_.router().link(m.route, h)].latencyPs;
    m.holdPs = std::max<int64_t>(0, stepPs - pathPs);
  }
  if (net_.mode() == net::NetMode::Analytical || !m.route.length) {
    m.hop = m.route.length;
    queue_.push(addTime(net_.sendAlphaBeta(now_, m.route, m.bytes), m.holdPs), MsgArrive, id, 0);
    return;
  }
  forward(id);
}

/// A message's head reached the end of a link. Inline into run(), its only
/// caller: every message ends here.
[[gnu::always_inline]] inline void Simulator::onArrive(uint32_t id) {
  Message &m = messages_[id];
  if (m.hop < m.route.length)
    return forward(id);
  freeMessages_.push_back(id); // its fields are read before anything reuses the slot
  if (m.inst != kNone)
    return deliverCollective(m.inst, m.member, m.chunk, m.step);
  // A send completes when its data arrives (Astra-Sim's semantics).
  finishNodeAt(now_, m.srcRank, m.srcNode);
  Channel &ch = channels_[m.channel];
  if (ch.head < ch.waiting.size()) {
    uint32_t recv = ch.waiting[ch.head++];
    finishNodeAt(std::max(now_, launchedAt(ch.dstRank, recv)), ch.dstRank, recv);
  } else {
    ++ch.arrived;
  }
}

/// Sends and receives pair on (src, dst, tag, size), first come first served.
uint32_t Simulator::channelFor(int64_t src, int64_t dst, int64_t tag, int64_t size) {
  auto [it, fresh] = channelIndex_.try_emplace(ChannelKey{src, dst, tag, size}, uint32_t(channels_.size()));
  if (fresh) {
    channels_.emplace_back();
    channels_.back().dstRank = uint32_t(dst);
  }
  return it->second;
}

void Simulator::issueSend(uint32_t r, uint32_t idx) {
  const TraceNode &n = w_.ranks[r].nodes()[idx];
  int64_t dst = w_.ranks[r].dst(n);
  uint32_t channel = channelFor(r, dst, n.commTag, n.commSize);
  Channel &ch = channels_[channel];
  if (ch.sendsIssued++ < ch.recvsPosted) { // its receive was waiting on this rank: now on the network
    RankState &d = ranks_[ch.dstRank];
    account(d);
    --d.peerWaits;
    commStarts(d, kP2pGroup);
  }
  uint32_t id = newMessage();
  Message &m = messages_[id];
  m.bytes = double(n.commSize);
  m.channel = channel;
  m.srcRank = r;
  m.srcNode = idx;
  inject(r, uint32_t(dst), id, idx, 0);
}

/// A communication node's host launch, ps: its rapid_launch_ns (ours, so
/// not under --astra-compat, which runs a trace as stock Astra-Sim).
int64_t Simulator::launchPs(const TraceNode &n) const {
  return n.launchNs != trace::kAbsent && !opts_.astraCompat ? timeFromUnits(n.launchNs, 1000) : 0;
}

/// When an issued node's kernel is launched.
int64_t Simulator::launchedAt(uint32_t r, uint32_t idx) const {
  return addTime(ranks_[r].startPs[idx], launchPs(w_.ranks[r].nodes()[idx]));
}

void Simulator::issueRecv(uint32_t r, uint32_t idx) {
  const TraceNode &n = w_.ranks[r].nodes()[idx];
  Channel &ch = channels_[channelFor(w_.ranks[r].src(n), r, n.commTag, n.commSize)];
  RankState &s = ranks_[r];
  if (ch.recvsPosted++ < ch.sendsIssued)
    commStarts(s, kP2pGroup); // its data is on the way, or in
  else
    ++s.peerWaits;
  if (ch.arrived) {
    --ch.arrived;
    finishNodeAt(launchedAt(r, idx), r, idx);
  } else {
    ch.waiting.push_back(idx);
  }
}

llvm::Expected<SimResult> Simulator::run() {
  ranks_.assign(w_.ranks.size(), RankState());
  for (uint32_t r = 0; r < ranks_.size(); ++r)
    initRank(r);
  for (uint32_t r = 0; r < ranks_.size() && !error_; ++r)
    for (uint32_t i = 0; i < w_.ranks[r].nodes().size(); ++i)
      if (!ranks_[r].pending[i])
        makeReady(r, i);
  for (uint32_t r = 0; r < ranks_.size() && !error_; ++r)
    tryIssue(r);
  runAdmitted();
  while (!queue_.empty() && !error_) {
    Event e = queue_.pop();
    now_ = e.time;
    if (e.kind == NodeDone)
      complete(e.a, e.b);
    else if (e.kind == MsgArrive)
      onArrive(e.a);
    else if (e.kind == MemberStart)
      startChunks(e.a, e.b);
    else if (e.kind == SendStart)
      issueSend(e.a, e.b);
    else
      runChunk(e.a, e.b / instances_[e.a].chunks, e.b % instances_[e.a].chunks);
    if (!admitted_.empty())
      runAdmitted();
  }
  if (!error_)
    for (const auto &s : ranks_)
      if (s.remaining) {
        fail(diagnoseStall());
        break;
      }
  if (error_)
    return llvm::createStringError(llvm::inconvertibleErrorCode(), *error_);
  return collectResults();
}

/// Nothing is left to happen but nodes remain: name the first node that was
/// issued and never finished (a receive or collective waiting for a peer), or
/// else the first node whose dependencies never finished.
std::string Simulator::diagnoseStall() const {
  if (std::string queues = diagnoseQueues(); !queues.empty())
    return queues;
  for (uint32_t r = 0; r < ranks_.size(); ++r) {
    const auto &g = w_.ranks[r];
    for (uint32_t i = 0; i < g.nodes().size(); ++i) {
      const TraceNode &n = g.nodes()[i];
      if (ranks_[r].state[i] != kRunning && ranks_[r].state[i] != kJoined)
        continue;
      if (n.kind == NodeKind::Recv)
        return fmt::format("{}: node {}: receive from rank {} (tag {}, {} bytes) never matched "
                           "a send",
                           g.file, n.id, g.src(n), n.commTag, n.commSize);
      return fmt::format("{}: node {}: {} never completed: not every member of group {} "
                         "issued it",
                         g.file, n.id, trace::collKindName(n.coll()), g.group(n));
    }
  }
  for (uint32_t r = 0; r < ranks_.size(); ++r)
    for (uint32_t i = 0; i < w_.ranks[r].nodes().size(); ++i)
      if (ranks_[r].state[i] == kWaiting)
        return fmt::format("{}: node {}: never ran: its dependencies never finished",
                           w_.ranks[r].file, w_.ranks[r].nodes()[i].id);
  return "simulation stalled";
}

SimResult Simulator::collectResults() {
  SimResult out;
  out.events = queue_.pushed();
  auto ns = [](int64_t ps) { return (ps + 500) / 1000; };
  for (auto &s : ranks_) {
    RankResult r{ns(s.finishPs), ns(s.computePs), ns(s.exposedPs), ns(s.peerWaitPs), 0, {}};
    r.idleNs = r.finishNs - r.computeNs - r.exposedCommNs - r.peerWaitNs;
    for (const RankState::GroupComm &g : s.groups)
      if (g.exposedPs > 0) r.exposedByGroupNs.emplace_back(g.group, ns(g.exposedPs));
    std::sort(r.exposedByGroupNs.begin(), r.exposedByGroupNs.end());
    out.totalNs = std::max(out.totalNs, r.finishNs);
    out.ranks.push_back(r);
  }
  out.spans = std::move(spans_);
  return out;
}

} // namespace rapid::engine
