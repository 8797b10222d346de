//===- Memory.h - Does a point fit, and why not -----------------*- C++ -*-===//
#pragma once

#include "rapid/IR/IR.h"
#include "rapid/Sema/Sema.h"

#include "llvm/Support/raw_ostream.h"

namespace rapid {

using StageMemory = ir::StageMemory;
using MemoryReport = ir::MemoryReport;

// The memory pass (Passes/Pipeline.h) fills Program::memoryReport: static
// memory from the parameters a rank holds (ZeRO/FSDP sharding over DP),
// activations from a liveness walk over each stage's scheduled graph (so
// 1F1B keeps only the microbatches in flight), KV cache for inference, and
// the GPU's declared reserve. These print it.

void printMemoryText(const MemoryReport &r, const ir::MemoryFacts &mf, const ExperimentPoint &p,
                     llvm::raw_ostream &os);
void printMemoryJson(const MemoryReport &r, const ExperimentPoint &p, llvm::raw_ostream &os);

} // namespace rapid
