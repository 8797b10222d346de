//===- Workload.h - IR to the runtime's in-memory traces (private) -*- C++ -*-===//
#pragma once

#include "Hierarchical.h"

#include "rapid/Driver/Run.h"
#include "rapid/IR/IR.h"
#include "rapid/Sema/Sema.h"
#include "rapid/Collectives/CommGroups.h"
#include "rapid/Engine/Simulator.h"
#include "rapid/Network/Faults.h"
#include "rapid/Network/Topology.h"
#include "rapid/Trace/Workload.h"

namespace rapid::run {

struct Simulation {
  trace::Workload workload;
  coll::CommGroups groups;
  std::map<int, ir::Group> rank0Kinds; ///< what each of rank 0's groups is
};

/// Every rank's graph, built from the same fields the emitter writes as
/// Chakra nodes (emit::programNode, a compact set's form), so a simulated
/// point and its emitted traces run identically. The ranks of a stage share
/// its program; each reads its groups and pipeline peers through its own
/// tables (trace::RankGraph).
/// With `active`, only those ranks (ascending) get their graphs; the others
/// are empty (hierarchical mode's replica reduction, Symmetry.h).
/// With `blockTimes`, a layer block of a rank listed there takes the rank's
/// own time (hierarchical runs under faults).
llvm::Expected<Simulation> buildSimulation(const ir::Program &prog, const ExperimentPoint &point,
                                           const std::vector<int64_t> *active = nullptr,
                                           const RankBlockTimes *blockTimes = nullptr);

/// Which spans a simulation keeps: none, rank 0's (the first layer's times),
/// each stage's first rank's (blockTimes: a tail probe's) or every rank's
/// (inference figures, the hierarchical probe).
enum class Spans { None, Rank0, StageFirsts, All };

/// The point's network with its faults and `extra` ones.
llvm::Expected<net::Topology> faultedTopology(const ExperimentPoint &point, const std::vector<net::Fault> &extra);

/// Simulates `prog` on the point's network with its faults and `extra` ones
/// (with none at all when `extra` is null), the `active` ranks only when
/// given, layer blocks at their ranks' own `blockTimes` where listed. `kinds`
/// receives what rank 0's communicator groups are; with `timeline`, the
/// Perfetto timeline of `timelineRanks` (every rank when null) goes there.
llvm::Expected<engine::SimResult> simulate(const ir::Program &prog, const ExperimentPoint &point, Spans spans,
                                           const std::string &timeline, const std::vector<net::Fault> *extra,
                                           std::map<int, ir::Group> &kinds,
                                           const std::vector<int64_t> *active = nullptr,
                                           const RankBlockTimes *blockTimes = nullptr,
                                           const std::vector<int64_t> *timelineRanks = nullptr);

/// Simulates the `active` ranks of `prog` on the point's network with its
/// explicit faults; when the last of them finishes, in seconds.
llvm::Expected<double> finishSeconds(const ir::Program &prog, const ExperimentPoint &point,
                                     const std::vector<int64_t> &active);

/// A serving point: requests through its engine, each step costed by the
/// pipeline and the network (Serving.cpp).
llvm::Expected<RunResult> runServing(const ExperimentPoint &point);

/// A replay point: a profiled job on the point's GPU and network (Replay.cpp).
llvm::Expected<RunResult> runReplay(const ExperimentPoint &point, unsigned jobs);

/// Applies the point's explicit link faults to its network.
llvm::Error applyPointFaults(const ExperimentPoint &point, net::Topology &topo);

} // namespace rapid::run
