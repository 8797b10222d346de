//===- Probes.h - The hierarchical run's probes and timed collectives (private) -*- C++ -*-===//
//
// What a hierarchical run simulates before its pipeline level: the layer
// probe (each block's time), the tail probe (what gradient buckets add to
// the last backward they overlap) and, where ranks stand for others, each
// distinct collective left at the pipeline level timed alone.
//===----------------------------------------------------------------------===//
#pragma once

#include "Hierarchical.h"
#include "Symmetry.h"
#include "Workload.h"

namespace rapid::run {

/// The ids of the links `extra` and the point's faults change in `clean`;
/// none when one is removed (traffic then takes other routes).
llvm::Expected<std::optional<std::vector<uint32_t>>> softFaultedLinks(const net::Topology &clean,
                                                                      const ExperimentPoint &point,
                                                                      const std::vector<net::Fault> &extra);

/// A layer probe and what it simulated.
struct Probe {
  ir::Program prog;
  engine::SimResult res;
  LayerCopies copies;
};

/// The layer probe on the `active` ranks (every rank when null) under
/// `faults` (simulate's `extra`). Layers that probe alike are probed once
/// (with `copy`) when every probed block ends with its ranks in step: the
/// next then starts as the first did. A fault on a probed link skews ranks,
/// the skew carries into later layers, and the probe runs again with every
/// layer.
llvm::Expected<Probe> runProbe(const ir::Program &prog, const ExperimentPoint &point, bool copy,
                               const std::vector<net::Fault> *faults, const std::vector<int64_t> *active,
                               std::map<int, ir::Group> &kinds);

/// Every stage's block times on a fault-free network, from the probe on the
/// ranks `red` reduces it to; with `rank0`, rank 0's figures in the probe
/// (what its blocks spent computing and waiting on each group).
llvm::Expected<BlockTimes> cleanBlockTimes(const ir::Program &prog, const ExperimentPoint &point, bool reduce,
                                           const Reduction &red, std::map<int, ir::Group> &kinds,
                                           engine::RankResult *rank0 = nullptr);

/// Rank 0's blocks in the layer probe: their busy time, and how much of it
/// each kind of group's communication held exposed.
struct BlockShares {
  double busy = 0;
  ExposedByGroup exposed;
};

/// What every fault sample of a hierarchical point shares: the fault-free
/// block times, the delays gradient buckets add to a tail's backward blocks
/// (none where they share no link) and rank 0's block shares.
struct Clean {
  BlockTimes times;
  std::optional<BlockTimes> tail;
  BlockShares blocks;
};

/// The tail's delays (Hierarchical.h) on the fault-free network, against its
/// block times `clean` (probed here when null and needed).
llvm::Expected<std::optional<BlockTimes>> cleanTailDelays(const ir::Program &prog, const ExperimentPoint &point,
                                                          bool reduce, const BlockTimes *clean);

/// Gives the collectives of `pipeline` (every one with `all`, else the
/// data-parallel ones) their time, simulated once per distinct collective on
/// one group of the full network (Symmetry.h), and once per run for points
/// alike (SimMemo.h).
llvm::Error timeCollectives(ir::Program &pipeline, const ExperimentPoint &point, bool all);

} // namespace rapid::run
