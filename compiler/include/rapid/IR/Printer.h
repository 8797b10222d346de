//===- Printer.h - `--emit=ir` ----------------------------------*- C++ -*-===//
#pragma once

#include "rapid/IR/IR.h"

#include "llvm/Support/raw_ostream.h"

namespace rapid::ir {

/// Stable text, one op per line:
///   %7 = gemm "attn.qkv" fwd L0 mb0 [m=2048 n=3072 k=1024] bf16 flops=1.288e+10 bytes=... l2=... smem=...
///        time=41.2us bound=compute deps=(%6)
/// (bytes: HBM traffic; l2, smem: the on-chip levels)
void printProgram(const Program &p, llvm::raw_ostream &os);
/// Totals per stage and for the program: op counts, FLOPs by phase.
void printSummary(const Program &p, llvm::raw_ostream &os);

/// Matrix-multiply FLOPs (GEMMs and attention) of all ranks in one step:
/// per-stage FLOPs times the ranks that run each stage (tp*cp*dp). This is
/// what the Megatron-LM and Korthikanti formulas count.
/// With `fullCausal`, causal attention counts its whole score matrix, as
/// the MFU convention of Megatron-LM does.
double totalFlops(const Program &p, bool withRecompute, bool fullCausal = false);

} // namespace rapid::ir
