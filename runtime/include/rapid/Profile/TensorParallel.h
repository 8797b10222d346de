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
//  * with sequence parallelism (Megatron-LM's scatter of the embeddings
//    and reduce-scatter of a row-parallel output along the sequence) the
//    work between the linears that would be replicated is on sequence
//    shards: sharded, until a gather makes the sequence whole again;
//  * collectives change members; all-reduces and reduce-scatters keep
//    their bytes (the whole: an all-reduce of the hidden state is as large
//    at any degree), all-gathers' bytes (a rank's share) scale.
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
  bool sequenceParallel = false; ///< the activations between the linears are sequence shards
};

/// What each of `t`'s device events is to the tensor parallelism, or an
/// error naming the file: no Megatron-LM linears, a sequence-parallel
/// region of an unknown kind.
llvm::Expected<TpRoles> tensorParallelRoles(const KinetoTrace &t);

/// The world of a job re-sharded to tensor-parallel degree `tp`. The
/// profiled world is read in Megatron-LM's order, rank (p D + d) T + j:
/// P pipeline stages from the sends between them (the least distance of a
/// send to its peer; one stage without sends), D data-parallel copies from
/// the groups `dataParallel` names (by description or name), T the rest,
/// with the other named groups smaller than the world checked to be whole
/// tensor-parallel groups or one rank of each (the pipeline's, the shared
/// embeddings'). A job profiled as one tensor-parallel group of W ranks
/// runs on `tp` ranks. The job runs on tp x D x P ranks, rank (p D + d)
/// tp + j running profiled rank (p D + d) T + j mod T; each group keeps its
/// stages and spans the new tensor-parallel group where it spanned the old
/// one. With `world` (a multiple of tp x P; 0: as profiled) the job runs
/// world / (tp P) copies instead of D, copy d running copy d mod D's
/// profiles, its data-parallel groups as many. Other layouts and unnamed
/// collectives over fewer ranks than the world are errors.
llvm::Error reshardWorld(TraceSet &set, int tp, llvm::ArrayRef<std::string> dataParallel = {}, int world = 0);

/// An all-gather moves each rank's share of a whole that the degree does
/// not change, and its bytes are that share (the collective's input, as
/// PyTorch records it and as Chakra counts an all-gather): at `to` ranks
/// they are from/to times the profiled. Scales the bytes of `t`'s
/// all-gathers (their nccl: annotations and record_param_comms); the count
/// of all-gather kernels, or an error where the bytes do not split.
/// All-reduces and reduce-scatters (whose bytes are the whole) keep theirs.
/// In a group of one rank of each tensor-parallel group
/// (ProcessGroup::parameterShare: data parallel, shared embeddings) every
/// collective moves the rank's share of the sharded parameters or their
/// gradients: its bytes scale by from/to, rounded to the byte (an
/// all-gather's, a member's share, also by its group's profiled size over
/// its size now, ProcessGroup::profiledSize). A pipeline
/// send keeps its bytes, or with sequence parallelism (the rank's share of
/// the sequence) scales them by from/to.
struct ResizedCollectives {
  size_t allGathers = 0, parameterShare = 0, sends = 0; ///< kernels of each kind resized
};
llvm::Expected<ResizedCollectives> reshardCollectives(KinetoTrace &t, int from, int to);

} // namespace rapid::profile
