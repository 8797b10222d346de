//===- ChunkQueues.cpp - Dimension queues and endpoint delays -------------===//
//
// Two things Astra-Sim's system layer puts between a chunk's messages, both
// off unless the system file asks (docs/runtime.md, "Collectives"):
//
// active-chunks-per-dimension bounds how many chunks a member works on at
// once in each network dimension. A chunk enters its dimension's queue when
// it reaches a phase there, works once admitted (first come, first served),
// and leaves when its next phase is in another dimension, so a 2-D
// all-reduce's chunk 1 reduce-scatters in dimension 0 while chunk 0 works
// in dimension 1. Astra-Sim's queues belong to the rank (Sys.cc,
// SchedulerUnit), but its HardwareResource lets a rank run one collective at
// a time, so they only ever hold that collective's chunks; here each
// collective instance has its own per-member queues: the same under
// --astra-compat (one comm op per rank), and collectives of different
// communicators, which rapid-sim runs side by side as NCCL does, do not
// throttle (or deadlock) each other. A slot handed over starts its new
// chunk at the end of the current event (runAdmitted), never inside the
// chunk that left: thousands may wait.
//
// endpoint-delay is what a member's endpoint spends on each message it
// handles (Astra-Sim's MemBus): before a phase's first send, and after every
// step whose messages it waited for; a reduced message also costs
// 3 x bytes / local-mem-bw (PacketBundle.cc). The delays sit on the chunk's
// own walk only: other chunks keep the links busy meanwhile.
//===----------------------------------------------------------------------===//

#include "rapid/Engine/Simulator.h"
#include "rapid/Support/SimTime.h"

#include <fmt/format.h>

#include <cmath>

namespace rapid::engine {

static int dimOf(const coll::Plan &plan, uint32_t step) {
  return plan.phases[plan.steps[step].phase].queue;
}

/// With active-chunks-per-dimension (runChunk asks only then), the chunk
/// needs a slot before step `step`: its first, or the first in another
/// dimension than the step before.
bool Simulator::entersQueue(const Instance &inst, uint32_t step) const {
  return step == 0 || dimOf(inst.plan, step) != dimOf(inst.plan, step - 1);
}

/// With active-chunks-per-dimension, the chunk gives its slot up after step
/// `step`: its last, or the last before a phase in another dimension.
bool Simulator::leavesQueue(const Instance &inst, uint32_t step) const {
  return step + 1 == inst.numSteps || dimOf(inst.plan, step + 1) != dimOf(inst.plan, step);
}

/// The index of the member's queue for step `step`'s dimension.
static size_t queueIndex(const coll::Plan &plan, size_t dims, uint32_t member, uint32_t step) {
  return member * dims + size_t(dimOf(plan, step));
}

/// Takes a slot in the dimension queue of the chunk's current step, or joins
/// the queue's waiting line. Chunks only wait while every slot is taken.
bool Simulator::admit(uint32_t id, uint32_t member, uint32_t chunk) {
  Instance &inst = instances_[id];
  uint32_t slot = member * inst.chunks + chunk;
  size_t dims = inst.dimActive.size() / inst.node.size();
  size_t q = queueIndex(inst.plan, dims, member, inst.chunk[slot].step);
  if (inst.dimActive[q] < uint32_t(opts_.system.activeChunks)) {
    ++inst.dimActive[q];
    return true;
  }
  uint32_t &tail = inst.waitTail[q];
  inst.waitNext[slot] = kNone; // it may have waited in another queue before
  (tail == kNone ? inst.waitHead[q] : inst.waitNext[tail]) = slot;
  tail = slot;
  return false;
}

/// The member's chunk leaves the queue of step `step`: the first waiting
/// chunk, if any, takes its slot over.
void Simulator::release(uint32_t id, uint32_t member, uint32_t step) {
  Instance &inst = instances_[id];
  size_t q = queueIndex(inst.plan, inst.dimActive.size() / inst.node.size(), member, step);
  uint32_t next = inst.waitHead[q];
  if (next == kNone) {
    --inst.dimActive[q];
    return;
  }
  inst.waitHead[q] = inst.waitNext[next];
  if (inst.waitHead[q] == kNone)
    inst.waitTail[q] = kNone;
  admitted_.push_back(chunkRef(id, next));
}

/// Starts the chunks handed a slot during this event, in hand-off order. By
/// index: one that runs through its phase hands its own slot on, appending.
void Simulator::runAdmitted() {
  for (size_t i = 0; i < admitted_.size() && !error_; ++i) {
    uint32_t id = uint32_t(admitted_[i] >> 32), slot = uint32_t(admitted_[i]);
    uint32_t chunks = instances_[id].chunks;
    runChunk(id, slot / chunks, slot % chunks);
  }
  admitted_.clear();
}

/// Before step `step`'s sends: the endpoint-delay when the step opens a
/// phase. Astra-Sim's shared bus (model-shared-bus) replaces it. (A
/// protocol's start cost passes before the chunks start: startCollective.)
int64_t Simulator::leadDelayPs(const Instance &inst, uint32_t step) const {
  const SystemConfig &sys = opts_.system;
  if (sys.sharedBus || !sys.endpointDelayNs || !coll::opensPhase(inst.plan, step))
    return 0;
  return timeFromUnits(sys.endpointDelayNs, 1000);
}

/// After step `step`'s `expected` messages are in: the endpoint-delay, and
/// the reduction of one message when the step reduces. A step's messages
/// are reduced side by side (Astra-Sim charges each on its own), so the
/// last one's reduction is what the chunk waits for.
int64_t Simulator::tailDelayPs(const Instance &inst, uint32_t step, uint32_t expected) const {
  const SystemConfig &sys = opts_.system;
  if (!expected)
    return 0;
  int64_t ps = sys.sharedBus ? 0 : timeFromUnits(sys.endpointDelayNs, 1000);
  if (!coll::reducesInput(inst.plan, step))
    return ps;
  double bytes = inst.plan.steps[step].bytes;
  // Read the two operands, write the sum, at local-mem-bw.
  if (sys.reduceMemBytesPerNs > 0)
    ps = addTime(ps, timeFromPs(3 * bytes * 1000 / sys.reduceMemBytesPerNs));
  // The shared bus's reduction unit: local-reduction-delay per whole 100 B,
  // plus 50 (LogGP.cc).
  if (sys.sharedBus)
    ps = addTime(ps, timeFromPs((std::floor(bytes / 100) * double(sys.reductionNsPer100B) + 50) * 1000));
  return ps;
}

void Simulator::resumeAt(int64_t delayPs, uint32_t id, uint32_t member, uint32_t chunk) {
  queue_.push(addTime(now_, delayPs), ChunkResume, id, member * instances_[id].chunks + chunk);
}

/// A stall with chunks waiting for dimension slots: members of one
/// collective hold the slots each other's chunks need (chunks reached a
/// queue in different orders on different ranks). Names the first.
std::string Simulator::diagnoseQueues() const {
  for (const Instance &inst : instances_)
    for (size_t q = 0; q < inst.waitHead.size(); ++q) {
      if (inst.waitHead[q] == kNone)
        continue;
      uint32_t member = uint32_t(q / (inst.waitHead.size() / inst.node.size()));
      const trace::RankGraph &g = w_.ranks[rankOf(inst, member)];
      return fmt::format("{}: node {}: {} never completed: its chunks wait for one of the {} "
                         "active-chunks-per-dimension slots of dimension {}, which chunks waiting "
                         "on other ranks hold; raise active-chunks-per-dimension, or set it to 0 "
                         "(no limit)",
                         g.file, g.nodes()[inst.node[member]].id, trace::collKindName(inst.kind),
                         opts_.system.activeChunks, q % (inst.waitHead.size() / inst.node.size()));
    }
  return "";
}

} // namespace rapid::engine
