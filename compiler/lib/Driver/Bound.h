//===- Bound.h - A lower bound on a training step (private) ------*- C++ -*-===//
//
// A search needs the best layouts and the Pareto front, not every layout's
// time: a layout whose step cannot be shorter than a bound that a faster,
// no heavier layout already beats is not on the front (docs/language.md,
// "search"). The bound holds for every schedule rapid runs (GPipe, 1F1B,
// interleaved): each stage runs its blocks one after another on its one
// compute stream; its first block waits for microbatch 0's first model
// chunk on every stage before it, and its last block, the first chunk's
// backward of the last microbatch, is followed by the same chunk's
// backward on every stage before it. Communication only adds.
//===----------------------------------------------------------------------===//
#pragma once

#include "Hierarchical.h"

namespace rapid::run {

/// Seconds per block and stage of microbatch 0 counting only the blocks'
/// compute ops (a flattened run's blocks take at least that).
BlockTimes computeBlockTimes(const ir::Program &prog);

/// A lower bound on the step time of `prog` when microbatch 0's blocks take
/// `times` and every microbatch's take as long:
///   max over stages s of  sum_{j<s} F_j + m * C_s + sum_{j<s} B_j,
/// with C_s a stage's blocks of one microbatch, F_j and B_j stage j's first
/// model chunk's forward and backward blocks, m the microbatches.
double stepLowerBound(const ir::Program &prog, const BlockTimes &times);

} // namespace rapid::run
