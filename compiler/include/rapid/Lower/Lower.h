//===- Lower.h - Experiment points to operator graphs ----------*- C++ -*-===//
//
// Lowering turns one feasible training point into per-stage graphs:
// transformer layers sharded by TP/SP/CP (Megatron-LM's column/row splits),
// their backward and recompute, embedding and LM head on the first and last
// stage, MoE dispatch over EP, pipeline send/recv, data-parallel gradient
// collectives (bucketed; ZeRO/FSDP patterns) and the optimizer step, ordered
// by the pipeline schedule (GPipe, 1F1B, interleaved 1F1B).
//===----------------------------------------------------------------------===//
#pragma once

#include "rapid/IR/IR.h"
#include "rapid/Sema/Sema.h"

namespace rapid {

/// Lowers a feasible training point. Inference points lower to the forward
/// graph of their prefill (decode steps are the runtime's job).
ir::Program lowerPoint(const ExperimentPoint &p);

} // namespace rapid
