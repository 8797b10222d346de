//===- Simulator.h - Execute a workload on a network -----------*- C++ -*-===//
//
// One Simulator is one simulation context: the event queue, every rank's
// scheduler state, collective instances and messages all live in it, so
// several simulations can run in parallel threads (nothing is static).
//
// Scheduling (per rank): a node is ready when all its data and control
// dependencies are done. Ready nodes wait in per-resource heaps ordered by
// node id and are issued while the resource has a free slot: GPU compute
// streams, GPU comm streams (collectives, sends), one CPU slot (is_cpu_op
// compute); receives and empty nodes need no slot. Comm streams belong to a
// communicator group, as NCCL gives each process group its own stream: a
// collective waiting for a slow group does not block another group's.
// Collectives are gang-scheduled: once every member has reached one, it
// starts on all members together as soon as each has a free comm slot, full
// instances first-come first-served. Ranks that reach collectives in
// different orders (node ids need not follow program order) therefore
// cannot deadlock by each holding a stream the other needs.
// --astra-compat is Astra-Sim's HardwareResource model instead: one compute
// and one comm op in flight per rank, all groups sharing the comm slot.
//===----------------------------------------------------------------------===//
#pragma once

#include "rapid/Collectives/CommGroups.h"
#include "rapid/Collectives/Plan.h"
#include "rapid/Engine/EventQueue.h"
#include "rapid/Engine/SystemConfig.h"
#include "rapid/Network/Network.h"
#include "rapid/Trace/Workload.h"

#include "llvm/ADT/DenseMap.h"

#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>

namespace rapid::engine {

struct SimOptions {
  bool astraCompat = false;
  int computeStreams = 1;
  int commStreams = 1;
  /// Host threads: is_cpu_op nodes in flight per rank (a profile replayed
  /// keeps each thread's order by its own dependencies).
  int cpuThreads = 1;
  bool recordTimeline = false;
  /// Without recordTimeline: record the spans of the ranks marked here only
  /// (none when empty), for figures read off a few ranks at their memory
  /// cost (a 1,024-rank probe's every span was 50 MB).
  std::vector<uint8_t> recordRanks;
  SystemConfig system;
};

/// Per-rank figures, rounded to whole nanoseconds at the end of a run.
/// The four add up to finishNs: computing; communicating and not computing;
/// waiting on a posted receive whose send the peer has not issued (a
/// pipeline bubble); anything else (nothing ready, or a collective's peers).
struct RankResult {
  int64_t finishNs = 0, computeNs = 0, exposedCommNs = 0, peerWaitNs = 0, idleNs = 0;
  /// exposedCommNs by communicator group (kP2pGroup: sends and receives),
  /// ascending; time with several groups communicating is split evenly.
  std::vector<std::pair<uint32_t, int64_t>> exposedByGroupNs;
};

/// The group that point-to-point sends and receives count under.
constexpr uint32_t kP2pGroup = UINT32_MAX;

/// Which resource a node occupies while it runs.
enum class Lane : uint8_t { Compute, Cpu, Comm, Free };

struct Span {
  uint32_t rank, node;
  int64_t startPs, endPs;
  Lane lane;
};

struct SimResult {
  std::vector<RankResult> ranks;
  int64_t totalNs = 0;
  uint64_t events = 0;
  std::vector<Span> spans; ///< with SimOptions::recordTimeline (or recordRanks' only)
};

class Simulator {
public:
  Simulator(const trace::Workload &w, net::Network &net, const coll::CommGroups &groups,
            SimOptions opts);
  llvm::Expected<SimResult> run();
  /// Whether a collective involving these dimensions (bits) keeps to the
  /// first one, a node's NVLink: where the engine's own kernels and NVLS run.
  static bool insideFirstDimension(uint32_t involved, const net::Topology &topo);

private:
  /// MemberStart: a member's chunks start walking once its collective's
  /// protocol start cost has passed (one event, not one per chunk).
  /// SendStart: a send's data leaves once its launch (rapid_launch_ns) has.
  enum EventKind : uint32_t { NodeDone, MsgArrive, ChunkResume, MemberStart, SendStart };
  static constexpr uint32_t kNone = UINT32_MAX;
  enum NodeState : uint8_t { kWaiting, kJoined, kRunning, kDone };
  /// What members must agree on: group, comm_type, comm_size, involved_dim.
  using CollKey = std::tuple<uint32_t, int64_t, int64_t, uint32_t>;

  struct LaneQueue {
    std::vector<uint32_t> ready; ///< min-heap of node indices
    int busy = 0;
    /// Comm queues: the instances whose members have all joined, waiting
    /// for a slot here (and maybe elsewhere), in instance order.
    std::set<uint32_t> waiting;
  };

  struct RankState {
    std::vector<uint32_t> pending; ///< unmet dependencies per node
    std::vector<int64_t> startPs;  ///< issue time per node
    std::vector<uint8_t> state;    ///< NodeState per node
    std::vector<uint32_t> instOf;  ///< collective instance per node
    LaneQueue lanes[3];                 ///< Compute, Cpu, Free
    std::map<uint32_t, LaneQueue> comm; ///< per communicator group
    uint32_t remaining = 0;
    int activeCompute = 0, activeComm = 0;
    int peerWaits = 0; ///< posted receives whose send is not issued yet
    /// Per communicator group: nodes communicating now, and exposed time.
    struct GroupComm {
      uint32_t group;
      int active;
      int64_t exposedPs;
    };
    std::vector<GroupComm> groups;
    int64_t lastChangePs = 0, finishPs = 0, computePs = 0, exposedPs = 0, peerWaitPs = 0;
    llvm::SmallDenseMap<CollKey, uint64_t, 4> collSeq; ///< collectives issued per signature (few: inline)
  };

  /// Where a member's chunk is in its current step.
  enum ChunkStage : uint8_t {
    kEnter,  ///< about to start the step (a dimension slot, then the lead delay)
    kQueued, ///< waiting for a slot in the step's dimension queue
    kLead,   ///< the endpoint prepares the step's sends (lead delay running)
    kWait,   ///< sent; waiting for the step's messages
    kTail,   ///< all in; the endpoint takes and reduces them (tail delay running)
  };

  struct Place {
    uint32_t rank;
    int local, pos;
  };

  static constexpr uint32_t kWindow = 8;

  /// Where one member's chunk is: its step, its ChunkStage, and the
  /// messages received for its next kWindow steps (slot step % kWindow).
  /// Linear in members, where one counter per step was quadratic in a ring.
  struct ChunkState {
    uint32_t step = 0;
    uint8_t stage = 0;
    uint16_t window[kWindow] = {};
  };

  struct Instance {
    trace::CollKind kind = trace::CollKind::AllReduce;
    int64_t commSize = 0;
    uint32_t involved = 0, group = 0;
    uint64_t seq = 0;
    coll::Plan plan;
    /// The costs of NCCL's protocol for this instance (Protocol.h): its
    /// start, the least time a step's message takes, wire bytes per byte.
    int64_t protoBasePs = 0, protoStepPs = 0;
    double wireScale = 1;
    uint32_t chunks = 1, numSteps = 0, membersLeft = 0, membersJoined = 0;
    const std::vector<int> *members = nullptr; ///< null: every rank
    const coll::GroupGrid *grid = nullptr;     ///< the group's grid, when it is one
    std::vector<uint32_t> node;                ///< per member; kNone until joined
    /// Per member and chunk, together: each message reads and writes all of it.
    std::vector<ChunkState> chunk;
    /// Messages that arrived for steps beyond a chunk's window (rare: a
    /// chunk far behind its ring neighbour), keyed (member * chunks + chunk, step).
    std::unordered_map<uint64_t, uint16_t> further;
    std::vector<uint32_t> chunksLeft;          ///< per member
    std::vector<Place> places;                 ///< per phase and member: placeOf, asked on every message
    /// With active-chunks-per-dimension, per member and network dimension:
    /// chunks working there, and the first and last of those waiting (a
    /// FIFO linked through waitNext, per member and chunk).
    std::vector<uint32_t> dimActive, waitHead, waitTail, waitNext;
  };

  struct alignas(64) Message { // one cache line each: a message straddling two cost two misses
    double bytes = 0;
    net::Route route;
    uint32_t hop = 0;  ///< next link to take; == route.length: delivering
    uint32_t chunk = 0; ///< collective delivery (beside hop: the struct stays 64 B)
    int64_t tailPs = 0; ///< when the last byte reaches the current node
    int64_t holdPs = 0; ///< delivered this long after its tail arrives: the rest of its protocol's step
    /// Collective delivery. Chunk and step apart: one slot number cost a
    /// division on every message to split.
    uint32_t inst = kNone, member = 0, step = 0;
    uint32_t channel = kNone, srcRank = 0, srcNode = 0; ///< point-to-point
  };

  struct Channel {
    uint32_t arrived = 0, head = 0, dstRank = 0;
    std::vector<uint32_t> waiting; ///< receive nodes, FIFO from head
    /// Receives match sends in order: receive i is waiting on its peer (not
    /// on the network) until send i is issued.
    uint32_t sendsIssued = 0, recvsPosted = 0;
  };

  // Scheduler.cpp
  void initRank(uint32_t r);
  Lane laneOf(const trace::TraceNode &n) const;
  int laneLimit(Lane l) const;
  LaneQueue &queueOf(uint32_t r, const trace::TraceNode &n);
  void drain(uint32_t r, LaneQueue &q, Lane lane);
  void tryIssue(uint32_t r);
  void makeReady(uint32_t r, uint32_t idx);
  void issue(uint32_t r, uint32_t idx);
  void complete(uint32_t r, uint32_t idx);
  void account(RankState &s);
  /// A node of `group` starts or stops moving data on rank state `s`.
  void commStarts(RankState &s, uint32_t group);
  void commEnds(RankState &s, uint32_t group);
  int64_t computeTimePs(const trace::TraceNode &n) const;
  void finishNodeAt(int64_t t, uint32_t r, uint32_t idx) { queue_.push(t, NodeDone, r, idx); }

  // CollectiveRunner.cpp
  void joinCollective(uint32_t r, uint32_t idx);
  uint32_t memberIndex(uint32_t r, const trace::TraceNode &n);
  void startCollective(uint32_t r, uint32_t idx);
  void startChunks(uint32_t inst, uint32_t member);
  LaneQueue &memberQueue(const Instance &inst, uint32_t member);
  bool tryStartInstance(uint32_t id);
  void startWaiting(LaneQueue &q);
  uint32_t findInstance(uint32_t r, const trace::TraceNode &n, uint32_t group);
  void createInstance(Instance &inst, uint32_t r, const trace::TraceNode &n);
  void setEngineKernelCosts(Instance &inst, int peers) const;
  void setProtocol(Instance &inst, const trace::TraceNode &n) const;
  double slowestLink(const Instance &inst) const;
  void chooseAllReduceTree(Instance &inst, const std::vector<std::vector<int>> &dims, int groupSize) const;
  void chooseNvls(Instance &inst, const std::vector<std::vector<int>> &dims, int groupSize, size_t members) const;
  static bool isNvls(const coll::Plan &plan);
  /// Wire bytes per byte for data a few kernels move at `bytesPerNs` over
  /// the first dimension's links (the custom all-reduce's, NVLS's): the
  /// link's rate over theirs where theirs is below it, else 1.
  double firstDimensionWireScale(double bytesPerNs) const;
  void runChunk(uint32_t inst, uint32_t member, uint32_t chunk);
  void finishChunk(uint32_t inst, uint32_t member);
  void sendStep(uint32_t inst, uint32_t member, uint32_t chunk, uint32_t step);
  /// A collective's message for the member's chunk and step: counted, and
  /// the chunk moved on if it was waiting for it. In the header: every
  /// collective message ends here.
  void deliverCollective(uint32_t id, uint32_t member, uint32_t chunk, uint32_t step) {
    Instance &inst = instances_[id];
    size_t at = size_t(member) * inst.chunks + chunk;
    ChunkState &cs = inst.chunk[at];
    uint32_t current = cs.step;
    if (step < current) // counted nowhere: that step is done (it had all it waits for)
      return;
    if (step < current + kWindow)
      ++cs.window[step % kWindow];
    else
      ++inst.further[uint64_t(at) << 32 | step];
    if (cs.stage == kWait && current == step)
      runChunk(id, member, chunk);
  }
  uint32_t rankOf(const Instance &inst, uint32_t member) const {
    return inst.members ? uint32_t((*inst.members)[member]) : member;
  }
  /// A member's index within its dimension (local) and along the phase (pos).
  /// Where a member sits in a phase of its collective (Instance::places).
  const Place &placeOf(const Instance &inst, uint32_t phase, uint32_t member) const {
    return inst.places[size_t(phase) * inst.node.size() + member];
  }
  Place computePlace(const Instance &inst, const coll::Phase &ph, uint32_t member) const;
  /// How many messages the member's chunk waits for in `step`: the step's
  /// own count but in trees, where it depends on the member's place.
  uint32_t expectedAt(const Instance &inst, uint32_t member, uint32_t chunk, uint32_t step) const {
    const coll::Step &st = inst.plan.steps[step];
    return st.pattern < coll::Pattern::TreeGather ? st.expected : treeExpectedAt(inst, member, chunk, step);
  }
  uint32_t treeExpectedAt(const Instance &inst, uint32_t member, uint32_t chunk, uint32_t step) const;
  void memberDone(uint32_t inst, uint32_t member);

  // ChunkQueues.cpp
  /// A chunk named in one word: instance, member and chunk.
  static uint64_t chunkRef(uint32_t inst, uint32_t slot) { return uint64_t(inst) << 32 | slot; }
  bool entersQueue(const Instance &inst, uint32_t step) const;
  bool leavesQueue(const Instance &inst, uint32_t step) const;
  bool admit(uint32_t inst, uint32_t member, uint32_t chunk);
  void release(uint32_t inst, uint32_t member, uint32_t step);
  void runAdmitted();
  int64_t leadDelayPs(const Instance &inst, uint32_t step) const;
  int64_t tailDelayPs(const Instance &inst, uint32_t step, uint32_t expected) const;
  void resumeAt(int64_t delayPs, uint32_t inst, uint32_t member, uint32_t chunk);
  std::string diagnoseQueues() const;

  // Simulator.cpp
  /// A message slot for the caller to fill, every field reset (one freed
  /// before, or a new one).
  uint32_t newMessage() {
    if (freeMessages_.empty()) return addMessage();
    uint32_t id = freeMessages_.back();
    freeMessages_.pop_back();
    messages_[id] = Message{};
    return id;
  }
  uint32_t addMessage();
  void inject(uint32_t src, uint32_t dst, uint32_t id, uint32_t srcNode, int64_t stepPs);
  void forward(uint32_t msg);
  void onArrive(uint32_t msg);
  void issueSend(uint32_t r, uint32_t idx);
  void issueRecv(uint32_t r, uint32_t idx);
  int64_t launchPs(const trace::TraceNode &n) const;
  int64_t launchedAt(uint32_t r, uint32_t idx) const;
  uint32_t channelFor(int64_t src, int64_t dst, int64_t tag, int64_t size);
  void fail(const trace::RankGraph &g, const trace::TraceNode &n, const std::string &what);
  void fail(std::string message);
  std::string diagnoseStall() const;
  SimResult collectResults();

  const trace::Workload &w_;
  net::Network &net_;
  const coll::CommGroups &groups_;
  SimOptions opts_;
  /// The system charges endpoint delays or reductions (ChunkQueues.cpp):
  /// without, a chunk's walk skips asking on every message.
  bool endpointCosts_ = false;
  EventQueue queue_;
  int64_t now_ = 0; ///< ps
  std::vector<RankState> ranks_;
  std::vector<Instance> instances_;
  llvm::DenseMap<std::pair<CollKey, uint64_t>, uint32_t> instanceIndex_; ///< per collective issued
  std::map<uint32_t, std::vector<int32_t>> groupPos_; ///< group -> position per rank (-1)
  std::map<uint32_t, coll::GroupGrid> grids_;         ///< the groups that are grids
  std::vector<Message> messages_;
  std::vector<uint32_t> freeMessages_;
  std::vector<Channel> channels_;
  /// (src, dst, tag, size): what a send and its receive agree on. Open
  /// addressing: a pipeline's every message makes a channel.
  using ChannelKey = std::tuple<int64_t, int64_t, int64_t, int64_t>;
  llvm::DenseMap<ChannelKey, uint32_t> channelIndex_;
  std::vector<Span> spans_;
  /// Chunks given a dimension slot by a chunk that left it; they start at
  /// the end of the current event, in order, so a hand-off never recurses.
  std::vector<uint64_t> admitted_;
  std::optional<std::string> error_;
};

} // namespace rapid::engine
