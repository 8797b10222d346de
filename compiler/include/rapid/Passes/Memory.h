//===- Memory.h - Does a point fit, and why not -----------------*- C++ -*-===//
#pragma once

#include "rapid/IR/IR.h"
#include "rapid/Sema/Sema.h"

#include "llvm/Support/raw_ostream.h"

namespace rapid {

/// Memory of one rank of a stage at its peak (bytes).
struct StageMemory {
  int32_t stage = 0;
  int64_t rank = 0;     ///< the stage's first rank (see RankLayout)
  double weights = 0, gradients = 0, optimizer = 0, activations = 0, kvCache = 0, reserve = 0;
  double peak = 0, capacity = 0;
  double headroom() const { return capacity - peak; }
};

struct MemoryReport {
  std::vector<StageMemory> stages;
  bool fits = true;
  std::string reason; ///< "needs 93.4 GiB on rank 0 (stage 0) but 'a100_sxm_80gb' has 80 GiB"
  const StageMemory &worst() const;
};

/// Static memory from the parameters a rank holds (ZeRO/FSDP sharding over
/// DP), activations from a liveness walk over each stage's scheduled graph
/// (so 1F1B keeps only the microbatches in flight), KV cache for inference,
/// and the GPU's declared reserve.
MemoryReport analyzeMemory(const ir::Program &prog, const ExperimentPoint &point);

void printMemoryText(const MemoryReport &r, const ir::MemoryFacts &mf, const ExperimentPoint &p,
                     llvm::raw_ostream &os);
void printMemoryJson(const MemoryReport &r, const ExperimentPoint &p, llvm::raw_ostream &os);

} // namespace rapid
