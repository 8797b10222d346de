//===- Symmetry.h - Which ranks stand for all the others (private) -*- C++ -*-===//
//
// Every rank of a stage runs the same program, and every data-parallel
// replica the same stages; on a symmetric network they run alike. A
// hierarchical run then simulates
//  - the layer probe on the first replica only (the first `ep` replicas with
//    expert parallelism: an EP group spans them), and there only on stages
//    whose probe differs from every earlier stage's, and
//  - the pipeline on one rank per stage, with every collective left at the
//    pipeline level timed once per distinct collective on one group of the
//    full network and replayed at that time; or, when that is not exact, on
//    the ranks that share rank 0's place in every dimension the pipeline's
//    traffic does not take (a slab: the other slabs repeat it link for
//    link), replaying nothing; or on the first replica's ranks, or every
//    rank where pipeline sends cross two dimensions, replaying the
//    data-parallel collectives.
// Symmetry.cpp says when each is exact under the network model.
//===----------------------------------------------------------------------===//
#pragma once

#include "Hierarchical.h"

#include "rapid/IR/IR.h"
#include "rapid/Network/Topology.h"

namespace rapid::run {

struct Reduction {
  std::vector<int64_t> probe;    ///< ranks of the layer probe, ascending; empty: every rank
  /// Per stage, the stage whose probed blocks it copies (itself when
  /// simulated); empty: every stage of `probe` is simulated.
  std::vector<int32_t> probeStageOf;
  /// Ranks of the pipeline run, ascending; empty: every rank, replaying none.
  std::vector<int64_t> pipeline;
  /// Which of the pipeline run's collectives are timed once and replayed.
  enum class Replay { None, DataParallel, All } replay = Replay::None;
};

/// The largest exact reduction of a point; none for a `faulted` one.
Reduction reduce(const ir::Program &prog, const net::NetworkSpec &net, bool faulted);

/// Whether the gradient buckets of a tail probe (tailProbeProgram) take a
/// network dimension its blocks' collectives take: else they share no link
/// and the tail runs as every other microbatch.
bool bucketsMeetBlocks(const ir::Program &tailProbe, const net::NetworkSpec &net);

/// The ranks a tail probe runs on: every replica of the stages whose tail
/// probe differs from every earlier one's, where that is exact (as for the
/// layer probe); `stageOf` as Reduction::probeStageOf. Empty: every rank.
struct TailReduction {
  std::vector<int64_t> ranks;
  std::vector<int32_t> stageOf;
};
TailReduction reduceTail(const ir::Program &tailProbe, const net::NetworkSpec &net);

/// What a soft-fault sample can reach. Ranks joined by traffic form units;
/// units whose traffic shares no link (every route, both ways, between two
/// ranks that talk: the fault-free router's paths) run as if alone, and a
/// unit none of whose links is faulted runs as on a fault-free network.
/// Hard faults reroute traffic: callers do not ask then.
///
/// faultedProbe: the ranks of the units of the layer probe (ranks its
/// blocks' groups join) with a link in `faulted` (link ids of `topo`);
/// every other rank's blocks take their fault-free times. None when units
/// share links: every rank is probed under the faults.
std::optional<std::vector<int64_t>> faultedProbe(const ir::Program &prog, const net::Topology &topo,
                                                 const std::vector<uint32_t> &faulted);

/// pipelineClasses: the pipeline units (ranks joined by sends and
/// data-parallel collectives) whose simulation gives the step time, the
/// slowest unit's: every unit with a faulted link, and one of each kind of
/// the others (the same programs, block times `own` and links, shared
/// alike). None when units share links or there is one unit.
struct PipelineClasses {
  std::vector<std::vector<int64_t>> units; ///< each a set of ranks, ascending
};
std::optional<PipelineClasses> pipelineClasses(const ir::Program &pipeline, const net::Topology &topo,
                                               const std::vector<uint32_t> &faulted, const RankBlockTimes &own);

/// Per stage, the first stage whose probe simulates exactly what its own
/// would (the same ops, shapes and times, layers numbered alike).
std::vector<int32_t> probeStages(const ir::Program &prog);

/// Fills the times of stages the probe did not simulate from the stage
/// they copy (`stageOf`), block for block in key order.
void copyRepresented(BlockTimes &times, const ir::Program &prog, const std::vector<int32_t> &stageOf);

/// Whether `op` is a collective (not a send or receive).
bool isCollective(const ir::Op &op);

/// Whether `op` is a collective between replicas (DP or DP x CP).
bool isDataParallel(const ir::Op &op);

/// The ops the pipeline level runs itself: every one outside the blocks.
bool outsideBlocks(const ir::Op &op);

/// Per stage, whom the ops `kept` picks talk with: their collectives'
/// group kinds and their sends' and receives' peer stages.
struct StageTalk {
  std::set<ir::Group> groups;
  std::set<int32_t> peers;
};
std::vector<StageTalk> stageTalk(const ir::Program &prog, llvm::function_ref<bool(const ir::Op &)> kept);

/// A collective's signature: ops with equal keys take equal time.
struct CollectiveKey {
  ir::OpKind kind;
  ir::Group group;
  double bytes;
  auto operator<=>(const CollectiveKey &) const = default;
};

/// A program of one op: `op` alone in stage `stage`'s graph, every other
/// stage empty; simulated on its group's members only, it times the op.
ir::Program collectiveProgram(const ir::Program &prog, const ir::Op &op, int32_t stage);

} // namespace rapid::run
