//===- ExecGraph.h - One rank's execution graph from its profile -*- C++ -*-===//
//
// The graph Lumos (arXiv 2504.09307) builds from a Kineto trace, in the
// simulator's node vocabulary:
//  * each host thread is a chain: the gap before a CUDA call (framework and
//    Python time, as measured) then the call itself;
//  * a launch edge from each call to the kernel, copy or memset it launched,
//    through a delay: the launch latency the profile shows where the stream
//    was idle and waited for nothing else (else the rank's median of those),
//    and stream order between the device work of one stream;
//  * cudaStreamWaitEvent: the next work launched on the waiting stream
//    depends on the latest work launched on each other stream before the
//    wait (the trace does not record which event, and PyTorch records one
//    right before waiting on it);
//  * blocking calls (cudaStreamSynchronize, cudaDeviceSynchronize,
//    cudaEventSynchronize, synchronous copies, copies to pageable memory)
//    wait for the work they wait on and then take what the profile shows
//    after that work ended;
//  * NCCL kernels are collectives, matched across ranks by the replay.
// Every measured duration is kept, so replaying the graph unchanged gives
// the profile back wherever the dependencies are the ones that held.
//===----------------------------------------------------------------------===//
#pragma once

#include "rapid/Profile/Kineto.h"
#include "rapid/Trace/Graph.h"

namespace rapid::profile {

/// What a node stands for: its row in reports and timelines.
enum class Role : uint8_t { Start, Gap, Call, Wait, Launch, Kernel, Copy, Set, Collective, PeerToPeer };

const char *roleName(Role r);
/// NCCL's device kernels ("ncclKernel_...", "ncclDevKernel_..."): the work
/// the replay runs as communication.
bool isNcclKernel(llvm::StringRef kernel);
inline bool onDevice(Role r) { return r >= Role::Kernel; }

/// For each of `t`'s device events, the annotation (index into `t.host`) a
/// collective's size is read from: of the annotations holding the call that
/// launched it, the last to start (record_param_comms aside); -1: none.
/// What-ifs that change a collective's bytes change them there too.
std::vector<int32_t> launchAnnotations(const KinetoTrace &t);
inline bool communicates(Role r) { return r == Role::Collective || r == Role::PeerToPeer; }

struct GraphNode {
  trace::TraceNode node; ///< kind, times, collective fields; id = index
  Role role = Role::Gap;
  int64_t lane = 0;      ///< host thread, or device stream
  uint32_t name = 0;     ///< into the trace's names
  int32_t device = -1;   ///< device work: its event in the trace's `device`
  std::vector<uint32_t> deps;
};

/// An NCCL kernel that has to meet the same kernel on its peers.
struct CollectiveUse {
  uint32_t node;
  int64_t stream;   ///< NCCL gives each communicator its own stream
  uint32_t ordinal; ///< collectives before it on that stream
  int64_t measuredNs;
  int64_t bytes; ///< from its nccl:* annotation, else its CommInfo; -1: unknown
  int32_t comm;  ///< what the profiler says about it (KinetoTrace::comms); -1: nothing
};

/// An NCCL send or receive whose peer the profiler names ("Dst Rank" /
/// "Src Rank"): the replay pairs it with its peer's receive or send.
struct PeerUse {
  uint32_t node;
  bool send;
  int peer; ///< global rank
  int64_t measuredNs;
  int64_t bytes; ///< -1: unknown
};

struct ExecGraph {
  std::vector<GraphNode> nodes;
  std::vector<CollectiveUse> collectives;
  std::vector<PeerUse> peers; ///< in launch order
  std::vector<int64_t> threads, streams; ///< ascending
  uint32_t stepEnd = 0; ///< the step's last host node (the main thread's)
  /// Device work that launched no node (its call was filtered): none today.
  uint64_t kernels = 0, copies = 0, memsets = 0, calls = 0, waits = 0;
};

/// Builds the graph of `t`'s step; the first node (Start) takes
/// `startOffsetNs`, the time this rank entered the step after the first.
ExecGraph buildExecGraph(const KinetoTrace &t, int64_t startOffsetNs);

} // namespace rapid::profile
