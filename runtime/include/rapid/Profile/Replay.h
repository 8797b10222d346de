//===- Replay.h - Replay a set of profiled ranks on the runtime --*- C++ -*-===//
//
// A trace set is one Kineto trace per rank of one job. Each rank's step
// becomes an execution graph (ExecGraph.h); NCCL collectives are matched
// across ranks by their communicator's stream and their order on it, and run
// on the simulator as collectives that meet their peers and then take the
// time the last rank to arrive measured (its kernel did not wait for anyone).
// The replayed step is compared with the profiled one rank by rank.
//===----------------------------------------------------------------------===//
#pragma once

#include <functional>
#include <optional>

#include "rapid/Collectives/CommGroups.h"
#include "rapid/Engine/Simulator.h"
#include "rapid/Network/Faults.h"
#include "rapid/Profile/ExecGraph.h"

namespace rapid::profile {

struct TraceSet {
  std::string source;              ///< the directory or file given
  std::vector<KinetoTrace> ranks;  ///< by rank
  std::vector<std::string> others; ///< files in the directory that are neither Kineto nor host traces
  size_t hostFiles = 0;            ///< host execution traces in the directory (HostTrace.h)
  int profiledWorld = 0;           ///< ranks profiled; those after them run copies (scaleWorld)
  int tensorParallel = 0;          ///< the degree reshardWorld ran the job at; 0: as profiled
  int profiledTensorParallel = 0;  ///< the degree it was profiled at (reshardWorld)
  int pipelineStages = 1;          ///< the stages reshardWorld read from the sends between them
  std::vector<int> origin;         ///< after reshardWorld: the profiled rank each rank runs
  std::vector<std::string> whatIfs; ///< what was changed, one line each, for the report
};

/// Reads a directory of per-rank traces (every .json / .json.gz holding
/// "traceEvents", with the host execution traces beside them where a trace
/// lacks shapes, HostTrace.h; other files are listed) or one trace file. Checks that the ranks are 0..world_size-1, each once, and
/// that they profiled the same step.
llvm::Expected<TraceSet> loadTraceSet(const std::string &path, const ReadOptions &opts);
/// Its checks on traces read already: ranks placed, the same step.
llvm::Expected<TraceSet> makeTraceSet(std::string source, std::vector<KinetoTrace> traces);

/// The process groups the set's traces name with their ranks, each once,
/// keyed by name and ranks, with their descriptions.
using NamedGroups = std::map<std::pair<std::string, std::vector<int>>, std::string>;
NamedGroups namedGroups(const TraceSet &set);

/// The largest world scaleWorld makes.
inline constexpr int kMaxScaledWorld = 1024;
/// Weak scaling: the job on `world` ranks, a multiple of the profiled W.
/// Rank r runs the profile of rank r mod W (copy r / W of the job). A
/// communicator spanning the profiled world spans the new one, with the
/// bytes a rank it had (data-parallel gradient all-reduces, all-to-alls over
/// tables sharded across the world). A process group the profile names with
/// its ranks (recent PyTorch) and that is smaller either grows the same way,
/// gaining the same members of every copy, where `dataParallel` lists its
/// description or name, or is copied with the job (tensor, pipeline, expert
/// parallel); listing none while such groups exist is an error naming them.
/// An all-gather in a group that grows moves a member's share of the same
/// whole: its bytes shrink by the copies. A smaller communicator the profile does not name has no rule and is an
/// error. Whether the world's communicators are data-parallel is the
/// caller's statement; a job whose whole world is one tensor-parallel group
/// is not (docs/trace-replay.md).
llvm::Error scaleWorld(TraceSet &set, int world, llvm::ArrayRef<std::string> dataParallel = {});

struct ReplayOptions {
  /// Ranks enter the step when their profiles say (one host clock); false:
  /// all at time 0.
  bool profiledStarts = true;
  /// Scale every measured device kernel (not collectives) by this factor: a
  /// faster or slower GPU, to first order.
  double kernelScale = 1.0;
  /// Another GPU, to first order: the factor each kernel, copy or memset's
  /// measured time is multiplied by (after kernelScale); empty: 1.
  std::function<double(const KinetoTrace &, const Event &)> deviceScale;
  /// Collectives re-simulated on this network (as many ranks as the set)
  /// from the sizes their nccl:* annotations record, with these faults
  /// (read from faultsFile) and system settings; absent: measured times.
  std::optional<net::NetworkSpec> network;
  std::vector<net::Fault> faults;
  std::string faultsFile;
  engine::SystemConfig system;
};

/// Within a rank's step: device time computing (kernels, copies, memsets),
/// communicating while not computing, and with nothing on the device.
struct Breakdown {
  int64_t computeNs = 0, exposedCommNs = 0, idleNs = 0;
};

struct RankReplay {
  int rank = 0;
  int64_t startNs = 0;                   ///< after the first rank entered
  int64_t profiledNs = 0, replayedNs = 0; ///< the step annotation's span
  int64_t profiledDeviceNs = 0, replayedDeviceNs = 0; ///< until the step's last device work ended
  Breakdown profiled, replayed;
};

struct ReplayResult {
  std::vector<RankReplay> ranks;
  trace::Workload workload;
  coll::CommGroups groups;
  std::vector<ExecGraph> graphs;
  engine::SimResult sim;
  uint64_t collectives = 0, peerToPeer = 0; ///< NCCL instances matched; p2p kernels replayed as measured
  uint64_t peersMatched = 0; ///< sends paired with their receives (the profile names the peer)
  bool simulatedCollectives = false;        ///< on ReplayOptions::network
  /// Summed over collective instances: the profiled time (the last member
  /// to arrive) and the replayed one (from meeting to the end).
  int64_t collectiveProfiledNs = 0, collectiveReplayedNs = 0;
  /// One NCCL collective across its members: what it moved and how long it
  /// took, profiled (its last member's kernel) and replayed (meeting to end).
  struct Instance {
    uint32_t rank, node; ///< its first member's
    trace::CollKind kind;
    int64_t bytes;       ///< -1: unknown
    uint32_t members;
    int64_t profiledNs, replayedNs = 0;
  };
  std::vector<Instance> instances; ///< by (rank, node) of the first member
  int streams = 1, threads = 1; ///< the most device streams and host threads of a rank
};

/// Builds the graphs, matches the collectives and runs the set.
llvm::Expected<ReplayResult> replay(const TraceSet &set, const ReplayOptions &opts);
/// The first half of replay(): graphs, matched collectives and the workload
/// (what `rapid-trace convert` writes), not run.
llvm::Expected<ReplayResult> buildReplay(const TraceSet &set, const ReplayOptions &opts);
/// The network the replay runs on: ReplayOptions::network, or (collectives
/// measured) a fully connected one of the set's ranks that carries nothing.
net::NetworkSpec replayNetwork(const TraceSet &set, const ReplayOptions &opts);
/// How the simulator must run a replayed workload: a compute slot per stream
/// and a CPU slot per host thread (each keeps its order by dependencies).
engine::SimOptions replaySimOptions(const ReplayResult &r, const ReplayOptions &opts);

/// The replay as a table (or one JSON object) with the profiled figures
/// beside the replayed ones and the events that were not used.
void printReplay(const TraceSet &set, const ReplayResult &r, bool json, llvm::raw_ostream &os);

/// A Perfetto timeline of the replay: one process per rank, one row per host
/// thread and per device stream, as the profiler draws them.
llvm::Error writeReplayTimeline(const std::string &path, const TraceSet &set, const ReplayResult &r);

} // namespace rapid::profile
