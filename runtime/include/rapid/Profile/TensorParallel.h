//===- TensorParallel.h - What a profile's tensor parallelism shards -*- C++ -*-===//
//
// A tensor-parallel what-if runs a profiled Megatron-LM job at another
// tensor-parallel degree (docs/trace-replay.md, "Another tensor-parallel
// degree"). The profile says which work is sharded through Megatron-LM's
// autograd functions around it (Kineto's cpu_ops, TpMarker):
//  * a linear followed by a tensor-parallel all-reduce
//    (_ReduceFromModelParallelRegion) before the next linear is
//    row-parallel: its GEMM's K is the sharded dimension; any other linear
//    is column-parallel: its GEMM's N is;
//  * the work launched between a column-parallel linear and the next linear
//    (attention over the rank's heads, the activation over its share of the
//    MLP) is sharded with it, as is the vocabulary-parallel cross entropy
//    after the last column-parallel linear (the output layer's);
//  * everything else (norms, residual adds, embeddings, dropout on the full
//    hidden state) is replicated: each rank does all of it;
//  * collectives keep their bytes (an all-reduce of the hidden state is
//    as large at any degree) and change members.
// Forward passes only: a backward pass reverses the pattern (a column-
// parallel linear's input gradient is all-reduced) and is an error, as is
// sequence parallelism (the replicated work is sharded along the sequence
// and the collectives change kind).
//===----------------------------------------------------------------------===//
#pragma once

#include "rapid/Profile/Replay.h"

namespace rapid::profile {

enum class TpRole : uint8_t {
  Replicated, ///< every rank does all of it, at any degree
  Column,     ///< a column-parallel linear's GEMM: N sharded
  Row,        ///< a row-parallel linear's GEMM: K sharded
  Sharded,    ///< other work on sharded activations (per head, per MLP column, per vocabulary entry)
  Collective, ///< NCCL: re-simulated with the new members
};

struct TpRoles {
  std::vector<TpRole> device; ///< per KinetoTrace::device event
  size_t columns = 0, rows = 0; ///< linears of each kind
};

/// What each of `t`'s device events is to the tensor parallelism, or an
/// error naming the file: no Megatron-LM linears, a backward pass, sequence
/// parallelism.
llvm::Expected<TpRoles> tensorParallelRoles(const KinetoTrace &t);

/// The world of a job re-sharded to `tp` ranks: the profiled world is its
/// tensor-parallel group (every communicator spans it); rank r runs rank
/// r mod W's profile. Jobs with smaller groups or point-to-point sends are
/// errors (not derivable yet).
llvm::Error reshardWorld(TraceSet &set, int tp);

} // namespace rapid::profile
