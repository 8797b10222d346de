//===- Hierarchical.h - Layer-level timing, then the pipeline (private) -*- C++ -*-===//
#pragma once

#include "rapid/Engine/Simulator.h"
#include "rapid/IR/IR.h"
#include "rapid/IR/RankLayout.h"

#include <compare>
#include <map>
#include <optional>
#include <string>

namespace rapid::run {

/// A block: one layer's forward or backward (recompute included), or the
/// embedding's or the LM head's, for one microbatch.
struct BlockKey {
  int32_t layer;
  bool backward;
  int part; ///< 0 a layer, 1 the embedding, 2 the head
  auto operator<=>(const BlockKey &) const = default;
};

/// A program of `prog`'s experiment and layout with one empty graph per
/// stage, for the programs the hierarchical run derives.
ir::Program emptyStages(const ir::Program &prog);

/// The block an op belongs to; none for what the pipeline level keeps:
/// send/recv, DP collectives, the optimizer.
std::optional<BlockKey> blockOf(const ir::Op &op);

/// Appends what the simulation of `op` depends on (kind, phase, group,
/// time, bytes, shape), dependencies aside: ops with equal signatures in
/// equal places simulate alike.
void appendSignature(std::string &to, const ir::Op &op);

/// Per stage, the layer each layer copies its probed blocks from (itself
/// when it is probed): the first earlier layer whose microbatch-0 ops are
/// the same op for op (kinds, shapes, times, bytes, groups, dependencies).
using LayerCopies = std::vector<std::map<int32_t, int32_t>>;
LayerCopies probeLayers(const ir::Program &prog);

/// Microbatch 0's blocks alone, in program order, without pipeline and DP
/// communication: every layer (or, with `copies`, every layer that copies
/// none), the embedding and the head once per stage.
ir::Program probeProgram(const ir::Program &prog, const LayerCopies *copies = nullptr);

/// Seconds per block and stage of microbatch 0, from the simulated spans on
/// each stage's first rank (of a probe, or of the whole program).
using BlockTimes = std::vector<std::map<BlockKey, double>>;
BlockTimes blockTimes(const ir::Program &prog, const engine::SimResult &res, const RankLayout &layout);

/// Per rank, the blocks whose probed time differs from its stage's first
/// rank's (a fault slowing one replica's TP group), in seconds; ranks
/// without a difference are absent.
using RankBlockTimes = std::map<int64_t, std::map<BlockKey, double>>;
RankBlockTimes rankBlockTimes(const ir::Program &probe, const engine::SimResult &res, const RankLayout &layout,
                              const BlockTimes &times);

/// Whether every block of a probe ended at the same time on every rank that
/// ran it: the next block then starts from an idle network with its ranks
/// in step, so a layer that repeats the one before takes the same time.
bool blocksInStep(const ir::Program &probe, const engine::SimResult &res, const RankLayout &layout);

/// Fills the blocks of layers that copy another's (`copies`), per stage
/// and, with `ranks`, per rank.
void copyLayers(BlockTimes &times, const LayerCopies &copies, RankBlockTimes *ranks, const RankLayout &layout);

/// Stage 0's first layer: forward and backward seconds (0 when absent).
std::pair<double, double> firstLayerTimes(const BlockTimes &times);

/// The whole schedule with each block one node of its probed time.
ir::Program pipelineProgram(const ir::Program &prog, const BlockTimes &times);

} // namespace rapid::run
