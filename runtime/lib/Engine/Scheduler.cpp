//===- Scheduler.cpp - Per-rank readiness, resources and accounting -------===//

#include "rapid/Engine/Simulator.h"
#include "rapid/Support/SimTime.h"

#include <cmath>
#include <utility>

namespace rapid::engine {

using trace::NodeKind;
using trace::TraceNode;

static bool earlierId(uint32_t a, uint32_t b) { return a > b; } // min-heap on index

void Simulator::initRank(uint32_t r) {
  const auto &g = w_.ranks[r];
  RankState &s = ranks_[r];
  size_t n = g.nodes().size();
  s.pending.resize(n);
  s.startPs.assign(n, 0);
  s.state.assign(n, kWaiting);
  s.instOf.assign(n, kNone);
  s.remaining = uint32_t(n);
  for (uint32_t i = 0; i < n; ++i)
    s.pending[i] = g.nodes()[i].depCount;
}

/// A collective the network decides (not a broadcast, which is replayed, nor
/// one that carries its own time).
static bool simulatedCollective(const TraceNode &n) {
  return n.kind == NodeKind::Coll && n.coll() != trace::CollKind::Broadcast && n.rapidTimeNs == trace::kAbsent;
}

/// A collective first meets its peers (it takes no stream while it waits for
/// them, so ranks that reach collectives in different orders cannot block
/// each other); anything else waits for a slot on its resource.
void Simulator::makeReady(uint32_t r, uint32_t idx) {
  const TraceNode &n = w_.ranks[r].nodes()[idx];
  if (simulatedCollective(n))
    return joinCollective(r, idx);
  auto &heap = queueOf(r, n).ready;
  heap.push_back(idx);
  std::push_heap(heap.begin(), heap.end(), earlierId);
}

Lane Simulator::laneOf(const TraceNode &n) const {
  switch (n.kind) {
  case NodeKind::Comp: return n.isCpuOp ? Lane::Cpu : Lane::Compute;
  case NodeKind::Coll:
  case NodeKind::Send: return Lane::Comm;
  default: return Lane::Free;
  }
}

int Simulator::laneLimit(Lane l) const {
  switch (l) {
  case Lane::Compute: return opts_.computeStreams;
  case Lane::Comm: return opts_.commStreams;
  case Lane::Cpu: return opts_.cpuThreads;
  default: return INT32_MAX;
  }
}

Simulator::LaneQueue &Simulator::queueOf(uint32_t r, const TraceNode &n) {
  RankState &s = ranks_[r];
  Lane lane = laneOf(n);
  if (lane != Lane::Comm)
    return s.lanes[lane == Lane::Free ? 2 : int(lane)];
  bool ownStream = !opts_.astraCompat && n.kind == NodeKind::Coll;
  return s.comm[ownStream ? w_.ranks[r].group(n) : 0];
}

void Simulator::drain(uint32_t r, LaneQueue &q, Lane lane) {
  while (!q.ready.empty() && q.busy < laneLimit(lane) && !error_) {
    std::pop_heap(q.ready.begin(), q.ready.end(), earlierId);
    uint32_t idx = q.ready.back();
    q.ready.pop_back();
    issue(r, idx);
  }
}

void Simulator::tryIssue(uint32_t r) {
  RankState &s = ranks_[r];
  drain(r, s.lanes[0], Lane::Compute);
  drain(r, s.lanes[1], Lane::Cpu);
  drain(r, s.lanes[2], Lane::Free);
  for (auto &[group, q] : s.comm)
    drain(r, q, Lane::Comm);
}

/// Splits the time since the last change into compute (anything computing),
/// exposed communication (communicating, not computing), waiting on a peer
/// (a receive posted before its send: the pipeline bubble) or idle.
void Simulator::account(RankState &s) {
  int64_t dt = now_ - s.lastChangePs;
  if (s.activeCompute) {
    s.computePs += dt;
  } else if (s.activeComm) {
    s.exposedPs += dt;
    int64_t groups = 0;
    for (const RankState::GroupComm &g : s.groups) groups += g.active > 0;
    int64_t share = dt / groups, rest = dt - share * groups;
    for (RankState::GroupComm &g : s.groups)
      if (g.active > 0) g.exposedPs += share + std::exchange(rest, 0);
  } else if (s.peerWaits) {
    s.peerWaitPs += dt;
  }
  s.lastChangePs = now_;
}

static uint32_t commGroup(const trace::RankGraph &g, const TraceNode &n) {
  return n.kind == NodeKind::Coll ? g.group(n) : kP2pGroup;
}

void Simulator::commStarts(RankState &s, uint32_t group) {
  ++s.activeComm;
  for (RankState::GroupComm &g : s.groups)
    if (g.group == group) return void(++g.active);
  s.groups.push_back({group, 1, 0});
}

void Simulator::commEnds(RankState &s, uint32_t group) {
  --s.activeComm;
  for (RankState::GroupComm &g : s.groups)
    if (g.group == group) return void(--g.active);
}

static bool isComm(NodeKind k) {
  return k == NodeKind::Coll || k == NodeKind::Send || k == NodeKind::Recv;
}

void Simulator::issue(uint32_t r, uint32_t idx) {
  const TraceNode &n = w_.ranks[r].nodes()[idx];
  RankState &s = ranks_[r];
  ++queueOf(r, n).busy;
  account(s);
  s.activeCompute += n.kind == NodeKind::Comp;
  if (isComm(n.kind) && n.kind != NodeKind::Recv) // issueRecv says which a receive is
    commStarts(s, commGroup(w_.ranks[r], n));
  s.startPs[idx] = now_;
  s.state[idx] = kRunning;
  switch (n.kind) {
  case NodeKind::Comp:
    finishNodeAt(addTime(now_, computeTimePs(n)), r, idx);
    break;
  case NodeKind::Coll:
    if (simulatedCollective(n))
      startCollective(r, idx);
    else if (n.rapidTimeNs != trace::kAbsent) // timed already (rapidc's hierarchical mode): replayed on its stream
      finishNodeAt(addTime(now_, timeFromUnits(n.rapidTimeNs, 1000)), r, idx);
    else // a broadcast: replayed, as Astra-Sim does
      finishNodeAt(addTime(now_, std::max<int64_t>(1000, timeFromUnits(int64_t(std::min<uint64_t>(n.durationMicros, INT64_MAX)), 1000000))), r, idx);
    break;
  case NodeKind::Send: // its data leaves once it is launched
    if (int64_t launch = launchPs(n); launch > 0)
      queue_.push(addTime(now_, launch), SendStart, r, idx);
    else
      issueSend(r, idx);
    break;
  case NodeKind::Recv: issueRecv(r, idx); break;
  default: // on no resource; our rapid_time_ns makes it a delay (a replayed kernel's launch latency)
    finishNodeAt(n.rapidTimeNs != trace::kAbsent && !opts_.astraCompat
                     ? addTime(now_, timeFromUnits(n.rapidTimeNs, 1000))
                     : now_,
                 r, idx);
    break;
  }
}

void Simulator::complete(uint32_t r, uint32_t idx) {
  const auto &g = w_.ranks[r];
  const TraceNode &n = g.nodes()[idx];
  if (now_ >= kMaxTimePs) { // every time saturates there: this one would have wrapped
    fail(g, n, "finishes past the simulated-time limit of 2^62 ps (53 days): a duration, or a message "
               "too large for its links' bandwidth");
    return;
  }
  RankState &s = ranks_[r];
  --queueOf(r, n).busy;
  account(s);
  s.activeCompute -= n.kind == NodeKind::Comp;
  if (isComm(n.kind)) commEnds(s, commGroup(g, n));
  if (opts_.recordTimeline || (r < opts_.recordRanks.size() && opts_.recordRanks[r]))
    spans_.push_back(Span{r, idx, s.startPs[idx], now_, laneOf(n)});
  s.state[idx] = kDone;
  --s.remaining;
  s.finishPs = now_;
  for (uint32_t k = 0; k < n.childCount; ++k) {
    uint32_t c = g.children()[n.childBegin + k];
    if (--s.pending[c] == 0)
      makeReady(r, c);
  }
  tryIssue(r);
  if (laneOf(n) == Lane::Comm)
    startWaiting(queueOf(r, n));
}

/// rapid_time_ns wins (our compiler's exact figure); then the roofline when
/// enabled for GPU ops (whole ns, as Astra-Sim); else duration_micros, where
/// 0 becomes 1 ns as in Astra-Sim. Returns picoseconds.
int64_t Simulator::computeTimePs(const TraceNode &n) const {
  if (n.rapidTimeNs != trace::kAbsent && !opts_.astraCompat)
    return timeFromUnits(n.rapidTimeNs, 1000);
  const auto &sys = opts_.system;
  if (sys.roofline && !n.isCpuOp && n.numOps != trace::kAbsent && n.tensorSize != trace::kAbsent) {
    if (n.tensorSize <= 0 || n.numOps <= 0)
      return 0;
    double intensity = double(n.numOps) / double(n.tensorSize);
    double perf = std::min(sys.memBytesPerNs * intensity, sys.peakFlopsPerNs);
    return std::max<int64_t>(1000, timeFromPs(std::nearbyint(double(n.numOps) / perf) * 1000));
  }
  return std::max<int64_t>(1000, timeFromUnits(int64_t(std::min<uint64_t>(n.durationMicros, INT64_MAX)), 1000000));
}

} // namespace rapid::engine
