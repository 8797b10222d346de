//===- ExecGraph.cpp - Lumos-style execution graph from a Kineto step -----===//

#include "rapid/Profile/ExecGraph.h"

#include "llvm/ADT/StringRef.h"

#include <algorithm>
#include <map>
#include <unordered_map>

namespace rapid::profile {

using trace::CollKind;
using trace::NodeKind;

bool isNcclKernel(llvm::StringRef kernel) {
  return kernel.starts_with("ncclKernel_") || kernel.starts_with("ncclDevKernel_");
}

const char *roleName(Role r) {
  static const char *names[] = {"start", "cpu",    "call",   "wait",       "launch",
                                "kernel", "copy", "memset", "collective", "p2p"};
  return names[int(r)];
}

namespace {

/// "ncclDevKernel_AllReduce_Sum_f16_RING_LL(...)" -> AllReduce; SendRecv is
/// an all-to-all when its call ran inside an "nccl:all_to_all" annotation or
/// the profiler names the collective so.
std::optional<CollKind> ncclKind(llvm::StringRef kernel, llvm::StringRef annotation, llvm::StringRef collective) {
  if (!kernel.consume_front("ncclKernel_") && !kernel.consume_front("ncclDevKernel_"))
    return std::nullopt;
  llvm::StringRef op = kernel.take_until([](char c) { return c == '_' || c == '('; });
  if (op == "AllReduce") return CollKind::AllReduce;
  if (op == "AllGather") return CollKind::AllGather;
  if (op == "ReduceScatter") return CollKind::ReduceScatter;
  if (op == "Broadcast") return CollKind::Broadcast;
  if (op == "Reduce") return CollKind::Reduce;
  if (annotation == "nccl:all_to_all" || annotation == "nccl:all_to_allv") return CollKind::AllToAll;
  if (collective == "all_to_all" || collective == "all_to_allv" || collective == "alltoall" ||
      collective == "alltoall_base")
    return CollKind::AllToAll;
  return std::nullopt; // send/recv between two ranks: paired by peer where named, else as measured
}


/// Calls that return only when device work is done, and what they wait on.
enum class Blocks { No, OwnWork, Stream, Device, Event };

Blocks blocking(llvm::StringRef call, const Event *work, llvm::StringRef workName) {
  if (call == "cudaDeviceSynchronize" || call == "cuCtxSynchronize") return Blocks::Device;
  if (call == "cudaStreamSynchronize" || call == "cuStreamSynchronize") return Blocks::Stream;
  if (call == "cudaEventSynchronize" || call == "cuEventSynchronize") return Blocks::Event;
  if (!work) return Blocks::No;
  if (call == "cudaMemcpy" || call == "cudaMemset" || call == "cuMemcpyDtoH_v2") return Blocks::OwnWork;
  // A copy to pageable host memory is staged: the call returns after it.
  if (work->kind == EventKind::Memcpy && workName.contains("DtoH") && workName.contains("Pageable"))
    return Blocks::OwnWork;
  return Blocks::No;
}

} // namespace

std::vector<int32_t> launchAnnotations(const KinetoTrace &t) {
  // t.host is by (thread, start): a thread's annotations in start order
  // (record_param_comms aside: the reader linked those already).
  std::unordered_map<int64_t, std::vector<int32_t>> notes;
  std::unordered_map<int64_t, size_t> callOf;
  for (size_t i = 0; i < t.host.size(); ++i) {
    const Event &e = t.host[i];
    if (e.kind == EventKind::Runtime) callOf[e.correlation] = i;
    else if (e.comm < 0) notes[e.lane].push_back(int32_t(i));
  }
  std::vector<int32_t> out(t.device.size(), -1);
  for (size_t d = 0; d < t.device.size(); ++d) {
    auto c = callOf.find(t.device[d].correlation);
    if (c == callOf.end()) continue;
    const Event &call = t.host[c->second];
    auto it = notes.find(call.lane);
    if (it == notes.end()) continue;
    const std::vector<int32_t> &lane = it->second;
    // The last to start of those holding the call.
    auto after = std::upper_bound(lane.begin(), lane.end(), call.startNs,
                                  [&](int64_t at, int32_t a) { return at < t.host[size_t(a)].startNs; });
    while (after != lane.begin())
      if (const Event &a = t.host[size_t(*--after)]; a.endNs() >= call.startNs) {
        out[d] = *after;
        break;
      }
  }
  return out;
}

namespace {

class Builder {
public:
  Builder(const KinetoTrace &t, ExecGraph &g) : t(t), g(g) {}

  void build(int64_t startOffsetNs) {
    for (size_t i = 0; i < t.device.size(); ++i) byCorrelation[t.device[i].correlation] = uint32_t(i);
    nodeOfDevice.assign(t.device.size(), kNone);
    start = add(Role::Start, NodeKind::Comp, true, -1, startOffsetNs, {});
    // Host calls of every thread in time order, so "launched before" means
    // what it meant on the machine.
    std::vector<const Event *> calls;
    for (const Event &e : t.host)
      if (e.kind == EventKind::Runtime) calls.push_back(&e);
    noteOf = launchAnnotations(t);
    std::sort(calls.begin(), calls.end(), [](const Event *a, const Event *b) {
      return std::tie(a->startNs, a->index) < std::tie(b->startNs, b->index);
    });
    for (const Event *e : calls) lastEnd[e->lane] = std::max(lastEnd[e->lane], e->endNs());
    threadOf(t.mainThread);
    for (const Event *e : calls) call(*e);
    Thread &main = threadOf(t.mainThread);
    std::vector<uint32_t> deps{main.tail};
    int64_t from = joinThreads(main, t.stepNs, deps);
    g.stepEnd = add(Role::Gap, NodeKind::Comp, true, t.mainThread, t.stepNs - from, std::move(deps));
    if (!latencies.empty()) { // the lower median: a latency the profile shows, not a mean of two
      std::nth_element(latencies.begin(), latencies.begin() + (latencies.size() - 1) / 2, latencies.end());
      for (uint32_t n : heldLaunches) g.nodes[n].node.rapidTimeNs = latencies[(latencies.size() - 1) / 2];
    }
    for (const auto &[tid, th] : threads) g.threads.push_back(tid);
    for (const auto &[s, n] : lastOnStream) g.streams.push_back(s);
  }

private:
  struct Thread {
    uint32_t tail = 0;
    int64_t cursor = 0; ///< end of the last call (ns from the step's start)
    int64_t lastStream = -1;
    int64_t recorded = -1; ///< node captured by the last cudaEventRecord
    bool joined = false;   ///< the main thread has waited for this one
    std::vector<std::vector<std::pair<int64_t, uint32_t>>> waits; ///< per pending wait: (stream, node)
  };

  Thread &threadOf(int64_t tid) {
    auto [it, fresh] = threads.try_emplace(tid);
    if (fresh) it->second.tail = start;
    return it->second;
  }

  uint32_t add(Role role, NodeKind kind, bool cpu, int64_t lane, int64_t ns, std::vector<uint32_t> deps,
               uint32_t name = 0) {
    GraphNode n;
    n.node.id = g.nodes.size();
    n.node.kind = kind;
    n.node.isCpuOp = cpu;
    n.node.rapidTimeNs = std::max<int64_t>(0, ns);
    n.role = role;
    n.lane = lane;
    n.name = name;
    n.deps = std::move(deps);
    g.nodes.push_back(std::move(n));
    return uint32_t(g.nodes.size() - 1);
  }

  /// Device work launched by `callNode`, after its stream's previous work
  /// and whatever the stream was told to wait for.
  uint32_t launch(const Event &call, uint32_t callNode, uint32_t di, Thread &th) {
    const Event &d = t.device[di];
    std::vector<uint32_t> deps{callNode};
    int64_t heldUntil = 0; // when the stream's previous work and the waited-for work ended
    // The device events are in stream order, so the previous one of this
    // stream is the one before it.
    if (di > 0 && t.device[di - 1].lane == d.lane && nodeOfDevice[di - 1] != kNone) {
      deps.push_back(nodeOfDevice[di - 1]);
      heldUntil = t.device[di - 1].endNs();
    }
    for (const auto &snapshot : th.waits)
      for (auto [stream, node] : snapshot)
        if (stream != d.lane) deps.push_back(node), heldUntil = std::max(heldUntil, endOf(node));
    th.waits.clear();
    // Where the call was what the work waited for, its own latency, as
    // profiled; else the rank's median of those (set in build()), for
    // what-ifs that free the stream sooner.
    bool held = heldUntil > call.endNs();
    int64_t own = d.startNs - call.endNs();
    if (!held && own >= 0 && own <= 50000) latencies.push_back(own);
    if (held || own > 0) {
      deps[0] = add(Role::Launch, NodeKind::Metadata, false, d.lane, held ? 0 : own, {callNode});
      if (held) heldLaunches.push_back(deps[0]);
    }
    llvm::StringRef name = t.name(d);
    Role role = d.kind == EventKind::Memcpy ? Role::Copy : d.kind == EventKind::Memset ? Role::Set : Role::Kernel;
    uint32_t n;
    if (d.kind == EventKind::Kernel && isNcclKernel(name)) {
      const Event *note = noteOf[di] >= 0 ? &t.host[size_t(noteOf[di])] : nullptr;
      const CommInfo *comm = d.comm >= 0 ? &t.comms[size_t(d.comm)] : nullptr;
      auto kind = ncclKind(name, note ? llvm::StringRef(t.name(*note)) : "", comm ? comm->collective : "");
      // The sends and receives it carries, each paired by the replay with
      // its peer's: its own, or a batch's (Event::batch).
      std::vector<const CommInfo *> uses;
      auto peerOp = [](const CommInfo &c) { return c.peer >= 0 && (c.collective == "send" || c.collective == "recv"); };
      if (!kind && comm && peerOp(*comm)) uses.push_back(comm);
      if (!kind && d.batch >= 0)
        for (int32_t c : t.peerBatches[size_t(d.batch)])
          if (peerOp(t.comms[size_t(c)])) uses.push_back(&t.comms[size_t(c)]);
      std::vector<uint32_t> launchDeps = uses.size() > 1 ? deps : std::vector<uint32_t>{};
      n = add(kind ? Role::Collective : Role::PeerToPeer, NodeKind::Coll, false, d.lane, 0, std::move(deps), d.name);
      GraphNode &gn = g.nodes[n];
      gn.node.commType = int64_t(kind.value_or(CollKind::AllToAll));
      gn.node.commSize = 0;
      gn.device = int32_t(di);
      if (!uses.empty()) {
        // A batch's ops start together; the stream moves on after the last.
        std::vector<uint32_t> ops;
        for (const CommInfo *c : uses) {
          uint32_t m = ops.empty() ? n : add(Role::PeerToPeer, NodeKind::Coll, false, d.lane, 0, launchDeps, d.name);
          g.nodes[m].node.commType = int64_t(CollKind::AllToAll);
          g.nodes[m].node.commSize = 0;
          g.nodes[m].node.rapidTimeNs = trace::kAbsent; // the replay pairs it with its peer's
          g.nodes[m].device = int32_t(di);
          g.peers.push_back({m, c->collective == "send", c->peer, d.durNs, c->bytes});
          ops.push_back(m);
        }
        if (ops.size() > 1) n = add(Role::Launch, NodeKind::Metadata, false, d.lane, 0, std::move(ops));
      } else if (kind) {
        gn.node.rapidTimeNs = trace::kAbsent; // the replay sets the instance's time
        int64_t bytes = note && note->bytes >= 0 ? note->bytes : comm ? comm->bytes : -1;
        g.collectives.push_back({n, d.lane, ncclOrdinal[d.lane]++, d.durNs, bytes, d.comm});
      } else {
        gn.node.rapidTimeNs = d.durNs; // replayed on its stream as measured
      }
    } else {
      n = add(role, NodeKind::Comp, false, d.lane, d.durNs, std::move(deps), d.name);
      (role == Role::Kernel ? g.kernels : role == Role::Copy ? g.copies : g.memsets)++;
    }
    nodeOfDevice[di] = n;
    g.nodes[n].device = int32_t(di); // a batch's join too: it ends with the kernel
    lastOnStream[d.lane] = n;
    th.lastStream = d.lane;
    return n;
  }

  /// Other threads that finished by `at` and that the main thread has not
  /// waited for yet: its next gap starts after them (the main thread blocks in
  /// backward() while the autograd thread runs). Returns when the gap starts.
  int64_t joinThreads(Thread &main, int64_t at, std::vector<uint32_t> &deps) {
    int64_t from = main.cursor;
    for (auto &[tid, th] : threads) {
      if (tid == t.mainThread || th.joined || lastEnd[tid] > at) continue;
      th.joined = true;
      deps.push_back(th.tail);
      from = std::max(from, lastEnd[tid]);
    }
    return from;
  }

  void call(const Event &e) {
    bool fresh = !threads.count(e.lane);
    Thread &th = threadOf(e.lane);
    Thread &main = threadOf(t.mainThread);
    // Another thread starts from where the main thread was when it woke,
    // unless the main thread was inside a call then.
    if (fresh && e.lane != t.mainThread && main.cursor <= e.startNs) {
      th.tail = main.tail;
      th.cursor = main.cursor;
    }
    std::vector<uint32_t> before{th.tail};
    int64_t from = e.lane == t.mainThread ? joinThreads(th, e.startNs, before) : th.cursor;
    uint32_t gap = add(Role::Gap, NodeKind::Comp, true, e.lane, e.startNs - from, std::move(before));
    th.cursor = std::max(th.cursor, e.endNs());
    ++g.calls;
    llvm::StringRef name = t.name(e);
    auto dev = byCorrelation.find(e.correlation);
    const Event *work = dev != byCorrelation.end() ? &t.device[dev->second] : nullptr;
    Blocks b = blocking(name, work, work ? llvm::StringRef(t.name(*work)) : "");
    if (name == "cudaEventRecord" || name == "cuEventRecord")
      th.recorded = th.lastStream >= 0 ? int64_t(lastOnStream[th.lastStream]) : -1;
    if (name == "cudaStreamWaitEvent" || name == "cuStreamWaitEvent") {
      std::vector<std::pair<int64_t, uint32_t>> snapshot(lastOnStream.begin(), lastOnStream.end());
      th.waits.push_back(std::move(snapshot));
    }
    if (b == Blocks::No || b == Blocks::OwnWork) {
      int64_t own = b == Blocks::OwnWork ? std::clamp<int64_t>(work->startNs - e.startNs, 0, e.durNs) : e.durNs;
      uint32_t c = add(Role::Call, NodeKind::Comp, true, e.lane, own, {gap}, e.name);
      th.tail = c;
      if (!work) return;
      uint32_t w = launch(e, c, dev->second, th);
      if (b == Blocks::OwnWork) {
        th.tail = add(Role::Wait, NodeKind::Comp, true, e.lane, e.endNs() - work->endNs(), {c, w}, e.name);
        ++g.waits;
      }
      return;
    }
    // A synchronising call: it waits, then takes what followed the wait.
    std::vector<uint32_t> deps{gap};
    if (b == Blocks::Event && th.recorded >= 0) {
      deps.push_back(uint32_t(th.recorded));
    } else if (b == Blocks::Stream && th.lastStream >= 0) {
      deps.push_back(lastOnStream[th.lastStream]);
    } else {
      for (const auto &[s, n] : lastOnStream) deps.push_back(n);
    }
    int64_t waitedUntil = e.startNs;
    for (size_t i = 1; i < deps.size(); ++i) waitedUntil = std::max(waitedUntil, endOf(deps[i]));
    th.tail = add(Role::Wait, NodeKind::Comp, true, e.lane, e.endNs() - std::min(waitedUntil, e.endNs()),
                  std::move(deps), e.name);
    ++g.waits;
  }

  /// When the device work behind `node` ended in the profile.
  int64_t endOf(uint32_t node) const {
    int32_t di = g.nodes[node].device;
    return di >= 0 ? t.device[di].endNs() : 0;
  }

  const KinetoTrace &t;
  ExecGraph &g;
  uint32_t start = 0;
  std::vector<int64_t> latencies;     ///< launch latencies where the call was what work waited for
  std::vector<uint32_t> heldLaunches; ///< launch delays of work that waited for something else
  std::map<int64_t, Thread> threads;
  std::map<int64_t, int64_t> lastEnd; ///< per thread, when its last call ended
  std::map<int64_t, uint32_t> lastOnStream;
  std::map<int64_t, uint32_t> ncclOrdinal;
  std::unordered_map<int64_t, uint32_t> byCorrelation;
  static constexpr uint32_t kNone = UINT32_MAX;
  std::vector<uint32_t> nodeOfDevice; ///< per device event, its node (kNone before its launch)
  std::vector<int32_t> noteOf; ///< per device event, its launch's annotation (launchAnnotations)
};

} // namespace

ExecGraph buildExecGraph(const KinetoTrace &t, int64_t startOffsetNs) {
  ExecGraph g;
  Builder(t, g).build(startOffsetNs);
  return g;
}

} // namespace rapid::profile
