//===- Pipeline.h - The compiler pipeline for one point --------*- C++ -*-===//
//
// A point becomes a program by four passes, in this order, each filling
// what the IR's Program says it fills:
//   layout    degrees, layers per stage, degrees over the network's ranks
//   schedule  each stage's ops in pipeline-schedule order, memory facts
//   cost      a time and a bound for every compute op
//   memory    every stage's peak memory and whether the point fits
// The verifier runs after each one; `--print-after-all` prints the IR after
// each one.
//===----------------------------------------------------------------------===//
#pragma once

#include "rapid/IR/IR.h"
#include "rapid/Sema/Sema.h"

#include "llvm/Support/raw_ostream.h"

#include "rapid/Cost/KernelCost.h"

#include <map>
#include <span>
#include <tuple>

namespace rapid {

struct PipelineOptions {
  /// Dump the IR after every pass (`--print-after-all`) to this stream.
  llvm::raw_ostream *printAfterAll = nullptr;
  /// Lower layers of microbatches after the first as blocks (ir::Program::layerBlocks).
  bool layerBlocks = false;
  /// Serving: lower this engine step instead of the point's workload.
  std::optional<ir::ServeStep> serveStep;
};

/// A pass transforms a program in place; `point` gives it the resolved
/// hardware and workload.
struct Pass {
  const char *name;
  void (*run)(ir::Program &prog, const ExperimentPoint &point);
};

/// The passes, in pipeline order.
std::span<const Pass> passes();

/// Runs every pass over one feasible point, verifying the IR between passes.
ir::Program compilePoint(const ExperimentPoint &point, const PipelineOptions &opts);

/// Kernel costs already computed, by everything that decides them but the
/// GPU and stack. Layers repeat the same shapes, so each GPU and stack (or
/// serving run) keeps one.
struct CostMemo {
  /// Everything costOf reads of an op: kind, shape, type, masks, pass, bytes,
  /// FLOPs, kernels, (decode attention) the query heads per KV head and
  /// whether a pointwise op indexes strided views; whether a CUDA graph
  /// replays it on a GPU with a kernel gap.
  using Key = std::tuple<ir::OpKind, int64_t, int64_t, int64_t, int64_t, DType, bool, bool, bool, double, double, int32_t,
                         int32_t, bool, bool>;
  std::map<Key, cost::KernelCost> costs;
};

/// Gives one op its time and bound as the cost pass does (a serving step's
/// attention and head, costed outside a program).
void costOp(ir::Op &op, const ExperimentPoint &point, CostMemo &memo);
/// A costed op that keeps the tensor cores busy: a GEMM or attention bound
/// by the clock (math or shared memory), what draws `power.tensor`.
bool onTensorCores(const ir::Op &op);

// The passes, each in its own file.
void layoutPass(ir::Program &prog, const ExperimentPoint &point);
void schedulePass(ir::Program &prog, const ExperimentPoint &point);
void costPass(ir::Program &prog, const ExperimentPoint &point);
void memoryPass(ir::Program &prog, const ExperimentPoint &point);

} // namespace rapid
