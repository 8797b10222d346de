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
//  * the work launched between a column-parallel linear and the
//    row-parallel linear after it (attention over the rank's heads, the
//    activation over its share of the MLP) is sharded with it; after a
//    column-parallel linear with no row-parallel one next (the output
//    layer), the vocabulary-parallel cross entropy is;
//  * everything else (norms, residual adds, embeddings, dropout on the full
//    hidden state) is replicated: each rank does all of it;
//  * a backward pass's work (autograd's evaluate_function of a node) is of
//    its forward node's kind, matched by autograd's sequence number: a
//    linear's input- and weight-gradient GEMMs each have the linear's shard
//    as one dimension, and all of a linear's backward work is sharded;
//  * the optimizer step (Optimizer.step#...) updates the rank's parameters:
//    sharded (the linears' weights are all but the norms' few);
//  * collectives keep their bytes (an all-reduce of the hidden state is
//    as large at any degree) and change members.
// Sequence parallelism is an error (the replicated work is sharded along
// the sequence and the collectives change kind).
//===----------------------------------------------------------------------===//
#pragma once

#include "rapid/Profile/Replay.h"

namespace rapid::profile {

enum class TpRole : uint8_t {
  Replicated, ///< every rank does all of it, at any degree
  Column,     ///< a column-parallel linear's GEMM: N sharded
  Row,        ///< a row-parallel linear's GEMM: K sharded
  Grad,       ///< a linear's backward GEMM: the dimension equal to its shard (TpRoles::shard)
  Sharded,    ///< other work on sharded activations (per head, per MLP column, per vocabulary entry)
  Collective, ///< NCCL: re-simulated with the new members
};

struct TpRoles {
  std::vector<TpRole> device;  ///< per KinetoTrace::device event
  std::vector<int64_t> shard;  ///< per device event: Grad's shard a rank (0: unknown, or not Grad)
  size_t columns = 0, rows = 0; ///< forward linears of each kind
  size_t backward = 0, unmatchedBackward = 0; ///< backward nodes with and without their forward op in the step
};

/// What each of `t`'s device events is to the tensor parallelism, or an
/// error naming the file: no Megatron-LM linears, sequence parallelism.
llvm::Expected<TpRoles> tensorParallelRoles(const KinetoTrace &t);

/// The world of a job re-sharded to `tp` ranks: the profiled world is its
/// tensor-parallel group (every communicator spans it); rank r runs rank
/// r mod W's profile. Jobs with smaller groups or point-to-point sends are
/// errors (not derivable yet).
llvm::Error reshardWorld(TraceSet &set, int tp);

} // namespace rapid::profile
