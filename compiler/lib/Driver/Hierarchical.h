//===- Hierarchical.h - Layer-level timing, then the pipeline (private) -*- C++ -*-===//
#pragma once

#include "rapid/Engine/Simulator.h"
#include "rapid/IR/IR.h"
#include "rapid/IR/RankLayout.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
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

/// ZeRO-3's layer gathers where their shard group lies inside one replica
/// (CP only: dp = 1, or hybrid shard groups of one DP rank): the layer probe
/// runs them beside the layers, whose TP and CP collectives they slow where
/// they share links. Gathers across replicas stay out of it (replayed at the
/// pipeline level only, docs/simulation.md).
bool probedGather(const ir::Program &prog, const ir::Op &op);
bool probesGathers(const ir::Program &prog);
/// What the layer probe runs of a microbatch: its blocks' ops and the
/// probed gathers.
bool probedOp(const ir::Program &prog, const ir::Op &op);

/// ZeRO-3's limiter among the probed gathers: each waits for the use of the
/// gather two before it in the probe (SchedulePass::gatherParams), where the
/// whole program has it wait for a use in another microbatch (a backward's
/// first gathers wait on a later microbatch's forward). Per gather op of
/// `g`, the op that use ends with (UINT32_MAX: none); `kept` picks the
/// gathers the probe holds, in program order.
std::vector<uint32_t> gatherLimits(const ir::Graph &g, llvm::function_ref<bool(const ir::Op &)> kept);
/// A probed gather as a probe holds it: waiting for `limit` (gatherLimits,
/// an op of the whole program) where the probe has that op (`newIdx`).
ir::Op limitedGather(const ir::Op &gather, uint32_t limit, const std::vector<uint32_t> &newIdx);

/// Microbatch 0's blocks alone, in program order, without pipeline and DP
/// communication: every layer (or, with `copies`, every layer that copies
/// none), the embedding and the head once per stage; and the probed
/// gathers (probedGather), each waiting for the use of the probe's gather
/// two before it (FSDP's limiter in the probe's own order).
ir::Program probeProgram(const ir::Program &prog, const LayerCopies *copies = nullptr);

/// Seconds per block and stage of microbatch 0, from the simulated spans on
/// each stage's first rank (of a probe, or of the whole program).
using BlockTimes = std::vector<std::map<BlockKey, double>>;
BlockTimes blockTimes(const ir::Program &prog, const engine::SimResult &res, const RankLayout &layout);

/// Per rank, the blocks whose probed time differs from its stage's first
/// rank's (a fault slowing one replica's TP group): by how many seconds
/// (added to the block's time wherever it runs, a tail's too); ranks
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

/// Gradient buckets: the data-parallel collectives that reduce gradients
/// while the backward pass runs (each after the block that completes it).
/// They share links with the blocks of the microbatch whose backward issues
/// them, the last of each chunk (the tail), where a flattened run sees the
/// two slow each other and the block-level run cannot. The tail probe runs
/// microbatch 0's backward blocks with the buckets a tail would issue, the
/// blocks alone otherwise as probeProgram does, and the probed gathers of
/// those blocks as probeProgram has them; per stage, the tail's
/// microbatches. With `maxLayers`, only the first so many layers of each
/// model chunk (in the order the backward runs them), and with `copies` two
/// at least of each kind of layer, with their buckets.
ir::Program tailProbeProgram(const ir::Program &prog, size_t maxLayers = SIZE_MAX,
                             const LayerCopies *copies = nullptr);
std::vector<std::set<int32_t>> tailMicros(const ir::Program &prog);

/// Whether a tail probe has a bucket before a block: without overlap
/// (`grad_reduce_overlap = off`) the one bucket follows the whole backward.
bool bucketsOverlapBlocks(const ir::Program &tailProbe);

/// Seconds the buckets add to each backward block of a stage's tail: the
/// tail probe's block times (`measured`, blockTimes of its run) less the
/// probe's `times`.
BlockTimes tailDelays(BlockTimes measured, const BlockTimes &times);

/// Fills the delays of the layers a shortened tail probe left out: each
/// takes the delay of the last probed layer alike (`copies`), when that is
/// the one before it alike's within 1e-4 of the block's time (the tail has
/// settled: each bucket meets the next layer as the one before met its
/// layer). False, leaving some unfilled, where it has not.
bool settleTail(BlockTimes &delays, const ir::Program &tailProbe, const LayerCopies &copies, const BlockTimes &times);

/// The whole schedule with each block one node of its probed time, and a
/// tail's backward blocks `tail`'s delay (Hierarchical.h above) longer.
ir::Program pipelineProgram(const ir::Program &prog, const BlockTimes &times, const BlockTimes *tail = nullptr);

} // namespace rapid::run
