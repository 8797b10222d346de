//===- TensorParallel.h - A profiled job at another tensor-parallel degree -*- C++ -*-===//
//
// `rapid-trace replay --tensor-parallel N --profiled-gpu GPU`, or an
// experiment's `replay.tensor_parallel`: a Megatron-LM step profiled
// with its world as one tensor-parallel group runs on N ranks, each doing
// its share (Profile/TensorParallel.h says which work is sharded):
//  * a column-parallel GEMM's N and a row-parallel GEMM's K, a linear's
//    gradient GEMM's dimension equal to its shard, an attention GEMM's batch
//    of heads and a fused attention's heads become W/N times what the
//    profile ran: each kernel's measured time is multiplied by rapid's
//    compute model on the profiled GPU, new shape over old (W/N itself for a
//    gradient GEMM with no such dimension);
//  * other kernels, copies and memsets on sharded activations move W/N
//    times the bytes: the measured time past the GPU's kernel start
//    (cost::streamStart) scales by W/N, the start does not;
//  * replicated work keeps its time, collectives their bytes (re-simulated
//    on the network with N members), the host its measured gaps.
//===----------------------------------------------------------------------===//
#pragma once

#include "rapid/Profile/Replay.h"
#include "rapid/Spec/Specs.h"

namespace rapid::profile {

/// Re-shards `set` (as loaded, unscaled) to tensor-parallel degree `tp` on
/// `profiledGpu` (`dataParallel`: the profile's data-parallel groups;
/// `world`: the ranks, for another data-parallel degree; reshardWorld),
/// adding a line to its what-ifs; errors name the file and the work that
/// does not split.
llvm::Error reshardTensorParallel(TraceSet &set, int tp, const GpuSpec &profiledGpu,
                                  llvm::ArrayRef<std::string> dataParallel = {}, int world = 0);

/// The same for a gpu declaration by name (std.gpus and `imports`).
llvm::Error reshardTensorParallel(TraceSet &set, int tp, const std::string &profiledGpu,
                                  const std::vector<std::string> &imports, const std::string &stdlibDir,
                                  llvm::ArrayRef<std::string> dataParallel = {}, int world = 0);

} // namespace rapid::profile
