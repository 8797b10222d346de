//===- Pipeline.h - The compiler pipeline for one point --------*- C++ -*-===//
#pragma once

#include "rapid/IR/IR.h"
#include "rapid/Sema/Sema.h"

#include "llvm/Support/raw_ostream.h"

namespace rapid {

struct PipelineOptions {
  /// Dump the IR after every pass (`--print-after-all`) to this stream.
  llvm::raw_ostream *printAfterAll = nullptr;
};

/// A pass transforms a program in place; `point` gives it the resolved
/// hardware and workload.
struct Pass {
  const char *name;
  void (*run)(ir::Program &prog, const ExperimentPoint &point);
};

/// Lowers one feasible point and runs every pass over it, verifying the IR
/// between passes.
ir::Program compilePoint(const ExperimentPoint &point, const PipelineOptions &opts);

// The passes, each in its own file.
void costPass(ir::Program &prog, const ExperimentPoint &point);

} // namespace rapid
