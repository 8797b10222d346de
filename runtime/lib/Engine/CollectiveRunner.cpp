//===- CollectiveRunner.cpp - Collectives as chunked message steps --------===//
//
// Ranks meet in a collective instance keyed by its signature (group, kind,
// size, involved dims) and how many collectives of that signature the rank
// joined before. Counting per signature, not per group, lets ranks reach
// independent collectives in different orders (STAGE traces do) and still
// pair the right ones. Each member walks the instance's plan once per chunk;
// a chunk's step s sends its messages and waits for step s's messages from
// its peers. Messages that arrive before their step (a fast peer) are
// counted and consumed later. Around the sends and receives a chunk may wait
// for a slot in its dimension's queue and for its endpoint (ChunkQueues.cpp).
//===----------------------------------------------------------------------===//

#include "rapid/Engine/Simulator.h"
#include "rapid/Collectives/Protocol.h"
#include "rapid/Support/SimTime.h"

#include <bit>
#include <fmt/format.h>

namespace rapid::engine {

using trace::TraceNode;

bool Simulator::insideFirstDimension(uint32_t involved, const net::Topology &topo) {
  for (int d = 1; d < int(topo.spec().dims.size()) && d < 32; ++d)
    if ((involved >> d & 1) && topo.dimSize(d) > 1) return false;
  return true;
}

double Simulator::firstDimensionWireScale(double bytesPerNs) const {
  double link = net_.topology().spec().dims[0].bandwidth.value() / 1e9;
  return bytesPerNs > 0 && bytesPerNs < link ? link / bytesPerNs : 1;
}

/// The engine's own all-reduce kernels (custom-all-reduce-*) take an
/// all-reduce of at most their size whose members lie in the first network
/// dimension (one NVLink node); anything else is NCCL's.
static std::optional<coll::Algorithm> engineKernel(const coll::CustomAllReduce &c, const TraceNode &n, uint32_t involved,
                                                   const net::Topology &topo, size_t members) {
  if (!c.any() || n.coll() != trace::CollKind::AllReduce || !Simulator::insideFirstDimension(involved, topo))
    return std::nullopt;
  return coll::customAllReduce(c, double(n.commSize), int(members));
}

void Simulator::createInstance(Instance &inst, uint32_t r, const TraceNode &n) {
  const auto &topo = net_.topology();
  std::vector<std::vector<int>> dims;
  for (const auto &d : topo.spec().dims)
    dims.push_back(d.shape);
  inst.chunks = uint32_t(opts_.system.splits);
  size_t members = inst.members ? inst.members->size() : size_t(topo.numRanks());
  if (n.measuredNs != trace::kAbsent) { // meets its peers, then takes its measured time
    inst.membersLeft = uint32_t(members);
    inst.node.assign(members, kNone);
    return;
  }
  int groupSize = inst.members ? int(inst.members->size()) : 0;
  std::optional<coll::Algorithm> kernel = engineKernel(opts_.system.customAllReduce, n, inst.involved, topo, members);
  coll::AlgorithmTable own;
  if (kernel) {
    own.perKind[0] = {*kernel};
    inst.chunks = 1; // the kernels take the buffer whole
  }
  inst.plan = coll::planCollective(n.coll(), double(n.commSize) / inst.chunks, dims, inst.involved, groupSize,
                                   kernel ? own : opts_.system.algorithms, inst.grid);
  if (!kernel && n.coll() == trace::CollKind::AllReduce && opts_.system.allReduceAuto)
    chooseAllReduceTree(inst, dims, groupSize);
  if (!kernel && n.coll() == trace::CollKind::AllReduce && opts_.system.nvlsBytesPerNs > 0)
    chooseNvls(inst, dims, groupSize, members);
  inst.numSteps = uint32_t(inst.plan.steps.size());
  if (kernel)
    setEngineKernelCosts(inst, int(members) - 1);
  else
    setProtocol(inst, n);
  if (!inst.plan.problem.empty())
    fail(w_.ranks[r], n, fmt::format("{} of {} B: {}", trace::collKindName(n.coll()), n.commSize, inst.plan.problem));
  // Receive counters are 16-bit to keep large instances small.
  for (const auto &st : inst.plan.steps)
    if (st.expected > UINT16_MAX)
      fail(w_.ranks[r], n, fmt::format("a collective step waits for {} messages; at most {} are supported",
                                       st.expected, UINT16_MAX));
  inst.membersLeft = uint32_t(members);
  inst.node.assign(members, kNone);
  inst.chunk.assign(members * inst.chunks, ChunkState{0, uint8_t(kEnter), {}});
  inst.chunksLeft.assign(members, inst.chunks);
  inst.places.resize(inst.plan.phases.size() * members);
  for (size_t ph = 0; ph < inst.plan.phases.size(); ++ph)
    for (uint32_t m = 0; m < members; ++m)
      inst.places[ph * members + m] = computePlace(inst, inst.plan.phases[ph], m);
  if (opts_.system.activeChunks) {
    size_t queues = members * dims.size();
    inst.dimActive.assign(queues, 0);
    inst.waitHead.assign(queues, kNone);
    inst.waitTail.assign(queues, kNone);
    inst.waitNext.assign(members * inst.chunks, kNone);
  }
}

/// An engine kernel pays no NCCL protocol: its start (kernel launch on the
/// GPU, a flag barrier with a flag to and from each peer), then its data at
/// its own rate where that is below the link's (a few thread blocks load and
/// store over NVLink).
void Simulator::setEngineKernelCosts(Instance &inst, int peers) const {
  const coll::CustomAllReduce &c = opts_.system.customAllReduce;
  inst.protoBasePs = timeFromPs((c.startNs + c.startPerPeerNs * peers) * 1000);
  inst.wireScale = firstDimensionWireScale(c.bytesPerNs);
}

/// Bytes per ns of the slowest link among the dimensions it involves.
double Simulator::slowestLink(const Instance &inst) const {
  const auto &dims = net_.topology().spec().dims;
  double slowest = 0;
  for (size_t d = 0; d < dims.size(); ++d)
    if (!inst.involved || (inst.involved >> d & 1)) {
      double bw = dims[d].bandwidth.value() / 1e9;
      slowest = slowest > 0 ? std::min(slowest, bw) : bw;
    }
  return slowest;
}

/// The instance's protocol: the system's, or for `auto` what NCCL's model
/// picks given the slowest link among the dimensions it involves.
void Simulator::setProtocol(Instance &inst, const TraceNode &n) const {
  bool nvls = isNvls(inst.plan);
  if (nvls) inst.wireScale = firstDimensionWireScale(opts_.system.nvlsBytesPerNs);
  if (opts_.system.protocol == coll::Protocol::None)
    return;
  double slowest = slowestLink(inst);
  double llMax = opts_.system.llMaxBytesPerNs;
  // NVLS has one protocol and its own latency (coll::nvlsCost).
  coll::ProtocolCost c = nvls ? coll::nvlsCost()
                              : coll::protocolCost(coll::chooseProtocol(opts_.system.protocol, inst.plan, inst.chunks,
                                                                        slowest, llMax),
                                                   slowest, llMax);
  inst.protoBasePs = timeFromPs(c.baseNs * 1000);
  inst.protoStepPs = timeFromPs(c.stepNs * 1000);
  inst.wireScale *= c.wireScale;
}

/// The instance this node joins, created by the first member to arrive.
uint32_t Simulator::findInstance(uint32_t r, const TraceNode &n, uint32_t group) {
  uint32_t involved = w_.ranks[r].involved(n);
  CollKey key{group, n.commType, n.commSize, involved};
  uint64_t seq = ranks_[r].collSeq[key]++;
  auto [it, fresh] = instanceIndex_.try_emplace({key, seq}, uint32_t(instances_.size()));
  if (fresh) {
    Instance inst;
    inst.kind = n.coll();
    inst.commSize = n.commSize;
    inst.involved = involved;
    inst.group = group;
    inst.seq = seq;
    if (group) {
      inst.members = &groups_.members.at(group);
      auto grid = grids_.find(group);
      inst.grid = grid != grids_.end() ? &grid->second : nullptr;
    }
    createInstance(inst, r, n);
    instances_.push_back(std::move(inst));
  }
  return it->second;
}

/// The node's position in its group (its rank for whole-machine ones), or
/// kNone with error_ set.
uint32_t Simulator::memberIndex(uint32_t r, const TraceNode &n) {
  uint32_t group = w_.ranks[r].group(n);
  if (!group)
    return r;
  auto pos = groupPos_.find(group);
  if (pos == groupPos_.end()) {
    fail(w_.ranks[r], n, fmt::format("communicator group {} not found (pg_name); pass its "
                                     "--comm-group file",
                                     group));
    return kNone;
  }
  if (pos->second[r] < 0) {
    fail(w_.ranks[r], n, fmt::format("rank {} is not in communicator group {}", r, group));
    return kNone;
  }
  return uint32_t(pos->second[r]);
}

/// Registers a ready collective with its instance; when the last member
/// arrives the instance waits for a comm slot on every member.
void Simulator::joinCollective(uint32_t r, uint32_t idx) {
  const TraceNode &n = w_.ranks[r].nodes()[idx];
  uint32_t member = memberIndex(r, n);
  if (member == kNone)
    return;
  uint32_t id = findInstance(r, n, w_.ranks[r].group(n));
  ranks_[r].instOf[idx] = id;
  ranks_[r].state[idx] = kJoined;
  Instance &inst = instances_[id];
  inst.node[member] = idx;
  if (++inst.membersJoined < inst.node.size())
    return;
  // Complete: no member looks it up again, and the index stays as small as
  // the collectives still gathering members (it was a tenth of a ZeRO-2 tail).
  instanceIndex_.erase({CollKey{inst.group, n.commType, n.commSize, inst.involved}, inst.seq});
  for (uint32_t m = 0; m < inst.node.size(); ++m)
    memberQueue(inst, m).waiting.insert(id);
  tryStartInstance(id);
}

Simulator::LaneQueue &Simulator::memberQueue(const Instance &inst, uint32_t member) {
  uint32_t rank = rankOf(inst, member);
  return queueOf(rank, w_.ranks[rank].nodes()[inst.node[member]]);
}

/// Starts the instance if every member has a free comm slot. A slot frees
/// on one queue at a time, so each event tries only the new instance or the
/// instances waiting on the freed queue, in instance order, until it is full
/// again: the same instances start, in the same order, as a rescan of every
/// waiting instance (which was quadratic when hundreds queue behind a busy
/// stream: ZeRO-2's per-microbatch reduce-scatters).
bool Simulator::tryStartInstance(uint32_t id) {
  const Instance &inst = instances_[id];
  for (uint32_t m = 0; m < inst.node.size(); ++m)
    if (memberQueue(inst, m).busy >= laneLimit(Lane::Comm)) return false;
  for (uint32_t m = 0; m < inst.node.size(); ++m)
    memberQueue(inst, m).waiting.erase(id);
  for (uint32_t m = 0; m < inst.node.size() && !error_; ++m)
    issue(rankOf(inst, m), inst.node[m]);
  return true;
}

/// A slot freed on q: its waiting instances, in instance order, while it has
/// one. Looked up afresh each time: starting one may end others at once and
/// change the set under an iterator.
void Simulator::startWaiting(LaneQueue &q) {
  for (uint32_t from = 0; !error_ && q.busy < laneLimit(Lane::Comm);) {
    auto it = q.waiting.lower_bound(from);
    if (it == q.waiting.end()) break;
    uint32_t id = *it;
    from = id + 1;
    tryStartInstance(id);
  }
}

/// The member's collective got a comm stream: its chunks start walking.
/// Each asks for its first dimension's slot now, in chunk order, as
/// Astra-Sim queues all of a collective's chunks when it starts.
void Simulator::startCollective(uint32_t r, uint32_t idx) {
  uint32_t id = ranks_[r].instOf[idx];
  const TraceNode &n = w_.ranks[r].nodes()[idx];
  if (n.measuredNs != trace::kAbsent)
    return finishNodeAt(addTime(now_, timeFromUnits(n.measuredNs, 1000)), r, idx);
  uint32_t member = memberIndex(r, n);
  if (instances_[id].numSteps == 0)
    return memberDone(id, member);
  // The member's own launch, then the instance's start.
  if (int64_t base = addTime(instances_[id].protoBasePs, launchPs(n)); base > 0)
    return queue_.push(addTime(now_, base), MemberStart, id, member);
  startChunks(id, member);
}

void Simulator::startChunks(uint32_t id, uint32_t member) {
  for (uint32_t c = 0; c < instances_[id].chunks && !error_; ++c)
    runChunk(id, member, c);
}

/// Where a member sits in a phase: its rank, its index within the phase's
/// dimension (local) and its position along the phase's axis (pos).
Simulator::Place Simulator::computePlace(const Instance &inst, const coll::Phase &ph,
                                        uint32_t member) const {
  uint32_t rank = rankOf(inst, member);
  if (ph.gridAxis >= 0)
    return Place{rank, int(inst.grid->linear[member]), inst.grid->pos(member, ph.gridAxis)};
  if (ph.dim < 0)
    return Place{rank, int(member), int(member)};
  int local = net_.topology().coord(int(rank), ph.dim);
  return Place{rank, local, local / ph.axisStride % ph.size};
}

uint32_t Simulator::treeExpectedAt(const Instance &inst, uint32_t member, uint32_t chunk, uint32_t step) const {
  const coll::Step &st = inst.plan.steps[step];
  const coll::Phase &ph = inst.plan.phases[st.phase];
  return coll::expectedAt(st, ph.size, placeOf(inst, st.phase, member).pos, chunk);
}

/// The step's messages from this member's chunk to its peers. Inline: runChunk
/// is its only caller, once a message.
[[gnu::always_inline]] inline void Simulator::sendStep(uint32_t id, uint32_t member, uint32_t chunk, uint32_t step) {
  const Instance &inst = instances_[id];
  const coll::Step &st = inst.plan.steps[step];
  const coll::Phase &ph = inst.plan.phases[st.phase];
  const Place &at = placeOf(inst, st.phase, member);
  // A peer differs from us only in the phase's axis.
  coll::forEachPeer(st, ph.size, at.pos, chunk, [&](int peerPos) {
    int peerLocal = at.local + (peerPos - at.pos) * ph.axisStride;
    // at.local is the rank's coordinate in ph.dim: withCoord without its divisions.
    uint32_t peerMember = ph.dim >= 0        ? at.rank + uint32_t((peerLocal - at.local) * net_.topology().stride(ph.dim))
                          : ph.gridAxis >= 0 ? inst.grid->member[uint32_t(peerLocal)]
                                             : uint32_t(peerPos);
    uint32_t msg = newMessage();
    Message &m = messages_[msg];
    m.bytes = st.bytes * inst.wireScale;
    m.inst = id;
    m.member = peerMember;
    m.chunk = chunk;
    m.step = uint32_t(int(step) + st.recvOffset);
    inject(at.rank, rankOf(inst, peerMember), msg, inst.node[member], inst.protoStepPs);
  });
}

/// Moves a member's chunk on as far as it can go now: into its dimension's
/// queue, past its endpoint's delays, through every step whose messages are
/// already in. Each stage is left by one kind of event only (a slot handed
/// over, a delay's end, the step's last message), so no step runs twice.
/// The stages are tested in the order a step passes them, each pass one
/// step: a ring's chunk goes wait, tail, enter, lead and back to wait on
/// every message, and a switch per stage was a tenth of its instructions.
void Simulator::runChunk(uint32_t id, uint32_t member, uint32_t chunk) {
  Instance &inst = instances_[id];
  size_t at = size_t(member) * inst.chunks + chunk;
  ChunkState &cs = inst.chunk[at];
  while (!error_) {
    uint32_t step = cs.step;
    if (cs.stage == kWait) {
      uint32_t expected = expectedAt(inst, member, chunk, step);
      if (cs.window[step % kWindow] < expected)
        return;
      cs.stage = kTail;
      if (int64_t d = endpointCosts_ ? tailDelayPs(inst, step, expected) : 0)
        return resumeAt(d, id, member, chunk);
    }
    if (cs.stage == kTail) {
      if (opts_.system.activeChunks && leavesQueue(inst, step))
        release(id, member, step);
      // The slot goes to step + kWindow, with what arrived for it early.
      uint16_t &slot = cs.window[step % kWindow];
      slot = 0;
      if (!inst.further.empty())
        if (auto it = inst.further.find(uint64_t(at) << 32 | (step + kWindow)); it != inst.further.end()) {
          slot = it->second;
          inst.further.erase(it);
        }
      cs.step = ++step;
      cs.stage = kEnter;
    }
    if (cs.stage == kEnter) {
      if (step == inst.numSteps)
        return finishChunk(id, member);
      if (opts_.system.activeChunks && entersQueue(inst, step) && !admit(id, member, chunk))
        return void(cs.stage = kQueued);
      cs.stage = kQueued;
    }
    if (cs.stage == kQueued) { // the slot is ours
      cs.stage = kLead;
      if (int64_t d = endpointCosts_ ? leadDelayPs(inst, step) : 0)
        return resumeAt(d, id, member, chunk);
    }
    // kLead: the endpoint is ready, the step's messages go out.
    sendStep(id, member, chunk, step);
    cs.stage = kWait;
  }
}

void Simulator::finishChunk(uint32_t id, uint32_t member) {
  if (--instances_[id].chunksLeft[member] == 0)
    memberDone(id, member);
}

void Simulator::memberDone(uint32_t id, uint32_t member) {
  Instance &inst = instances_[id];
  finishNodeAt(now_, rankOf(inst, member), inst.node[member]);
  if (--inst.membersLeft == 0) {
    // Every member has all its messages, so none is in flight: keep the
    // record (its index is the key) and drop everything else.
    Instance done;
    done.kind = inst.kind;
    done.group = inst.group;
    inst = std::move(done);
  }
}

} // namespace rapid::engine
