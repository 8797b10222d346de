//===- Printer.h - `--emit=ir` ----------------------------------*- C++ -*-===//
#pragma once

#include "rapid/IR/IR.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>

namespace rapid::ir {

/// Stable text, one op per line:
///   %7 = gemm "attn.qkv" fwd L0 mb0 [m=2048 n=3072 k=1024] bf16 flops=1.288e+10 bytes=... l2=... smem=...
///        time=41.2us bound=compute deps=(%6)
/// (bytes: HBM traffic; l2, smem: the on-chip levels)
void printProgram(const Program &p, llvm::raw_ostream &os);

/// Which ops `--emit=ir` shows: a stage, a layer (-1: the embedding, head
/// and optimizer), a microbatch (-1: once-per-step ops); unset shows all.
struct OpFilter {
  std::optional<int64_t> stage, layer, micro;
  bool keeps(const Graph &g, const Op &op) const {
    return (!stage || *stage == g.stage) && (!layer || *layer == op.layer) && (!micro || *micro == op.micro);
  }
};
/// printProgram's ops (those `filter` keeps), as text; or as CSV rows
/// point,stage,index,kind,name,phase,layer,micro,group,bytes,flops,time_s,bound,deps
/// (`point` names the program; csvHeader() is the first line).
void printOps(const Program &p, const OpFilter &filter, bool csv, llvm::StringRef point, llvm::raw_ostream &os);
const char *opsCsvHeader();
/// Totals per stage and for the program: op counts, FLOPs by phase.
void printSummary(const Program &p, llvm::raw_ostream &os);

/// Matrix-multiply FLOPs (GEMMs and attention) of all ranks in one step:
/// per-stage FLOPs times the ranks that run each stage (tp*cp*dp). This is
/// what the Megatron-LM and Korthikanti formulas count.
/// With `fullCausal`, causal attention counts its whole score matrix, as
/// the MFU convention of Megatron-LM does.
double totalFlops(const Program &p, bool withRecompute, bool fullCausal = false);

} // namespace rapid::ir
