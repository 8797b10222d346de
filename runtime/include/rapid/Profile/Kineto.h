//===- Kineto.h - Read one rank's PyTorch profiler trace --------*- C++ -*-===//
//
// A Kineto trace is Chrome trace-event JSON (plain or gzip): CPU operators,
// CUDA runtime and driver calls on host threads, kernels, copies and memsets
// on device streams, linked by the CUPTI correlation id that a call and the
// work it launched share. We keep one profiler step: the host events inside
// its ProfilerStep annotation and the device work those calls launched,
// times in integer nanoseconds from the step's start. Everything else is
// counted by category so that nothing is dropped silently.
//===----------------------------------------------------------------------===//
#pragma once

#include "rapid/Profile/HostTrace.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace rapid::profile {

enum class EventKind : uint8_t {
  Runtime,    ///< cuda_runtime / cuda_driver call on a host thread
  Annotation, ///< user_annotation or cpu_op, kept for what collectives are
  Kernel,
  Memcpy,
  Memset,
};

struct Event {
  EventKind kind = EventKind::Runtime;
  uint32_t name = 0;        ///< into KinetoTrace::names
  int64_t startNs = 0;      ///< from the step's start (host events may not be negative)
  int64_t durNs = 0;
  int64_t lane = 0;         ///< host thread id, or device stream
  int64_t correlation = -1; ///< runtime calls and device work
  /// "nccl:*" annotations: the bytes of the tensor(s) the collective moves,
  /// from the op's first input ("Input Dims" x "Input type"); -1: unknown.
  int64_t bytes = -1;
  /// Device work: the shaped op (KinetoTrace::ops) whose call launched it,
  /// the innermost aten::mm / addmm / bmm / baddbmm or scaled-dot-product
  /// attention around the launch; -1: none.
  int32_t op = -1;
  /// record_param_comms, and the device work launched inside one (or
  /// whose own args say): what the profiler says about the collective
  /// (KinetoTrace::comms); -1: nothing.
  int32_t comm = -1;
  uint32_t index = 0;       ///< position in traceEvents, for messages
  /// An NCCL send/receive kernel carrying a batch of them
  /// (KinetoTrace::peerBatches); -1: none.
  int32_t batch = -1;

  int64_t endNs() const { return startNs + durNs; }
};

/// An op the host recorded with the shapes rapid's compute model needs: a
/// matrix multiply, C[batch, m, n] = A[batch, m, k] x B[batch, k, n], or a
/// fused attention (PyTorch's scaled-dot-product backends), q [batch, heads,
/// seq, headDim] against k and v [batch, kvHeads, seq, headDim]; of `type`
/// ("c10::BFloat16", "float" ...).
struct ShapedOp {
  enum class Kind : uint8_t { Matmul, Attention };
  Kind kind = Kind::Matmul;
  int64_t batch = 1, m = 0, k = 0, n = 0;                 ///< matmul
  int64_t heads = 0, kvHeads = 0, seq = 0, headDim = 0;   ///< attention
  bool causal = false, backward = false;                  ///< attention
  std::string backend;                                    ///< attention: "cudnn", "flash", "efficient"
  std::string type;
  int64_t lane = 0, startNs = 0, endNs = 0; ///< its host thread and span
};

/// A process group as recent PyTorch releases name it on each collective
/// ("Process Group Name", "Process Group Description", "Process Group
/// Ranks" on `record_param_comms` and on the NCCL kernel; the keys are in
/// torch/csrc/profiler/util.cpp). Older profiles (the shared Megatron and
/// DLRM sets) have none of it.
struct ProcessGroup {
  std::string name, desc; ///< "3", "TENSOR_MODEL_PARALLEL_GROUP"
  /// Global ranks, ascending; empty where not recorded (or cut short past 30
  /// ranks and not an arithmetic progression).
  std::vector<int> ranks;
  /// In a tensor-parallel what-if (reshardWorld), a group of one rank of
  /// each tensor-parallel group it spans (data parallel, the embeddings the
  /// first and last stage share): its collectives move the rank's share of
  /// the sharded parameters.
  bool parameterShare = false;
  /// In a tensor-parallel what-if, the ranks it had as profiled (0: not re-sharded).
  int profiledSize = 0;
};

/// A Megatron-LM tensor-parallel autograd function's forward on a host
/// thread (its cpu_op): what a tensor-parallel what-if reads the profile's
/// sharding from (TensorParallel.h).
struct TpMarker {
  enum class Kind : uint8_t {
    Linear,              ///< LinearWithGradAccumulationAndAsyncCommunication: a column- or row-parallel GEMM
    Reduce,              ///< _ReduceFromModelParallelRegion: a row-parallel output's all-reduce
    ReduceScatter,       ///< _ReduceScatterToSequenceParallelRegion: the same, reduce-scattered along the sequence
    SequenceScatter,     ///< _ScatterToSequenceParallelRegion: the embeddings split along the sequence
    SequenceGather,      ///< _GatherFromSequenceParallelRegion: sequence shards gathered whole again
    VocabCrossEntropy,   ///< _VocabParallelCrossEntropy: the loss over vocabulary-sharded logits
    SequenceParallel,    ///< another _*SequenceParallelRegion, whose effect is not known
    Optimizer,           ///< Optimizer.step#...: the update of the rank's parameters
  };
  Kind kind;
  int64_t lane = 0, startNs = 0, endNs = 0;
};

/// A host op autograd numbered ("Sequence number"): a forward op that made
/// a graph node, or the backward pass's evaluate_function of that node; the
/// pair shares (forward thread, sequence number).
struct AutogradOp {
  int64_t lane = 0, startNs = 0, endNs = 0;
  int64_t seq = 0, forwardThread = 0; ///< "Fwd thread id": autograd's id of the forward op's thread
  bool backward = false;              ///< autograd::engine::evaluate_function: ...
};

/// What the profiler says about one collective or send/recv.
struct CommInfo {
  int32_t group = -1;     ///< into KinetoTrace::groups; -1: not named
  std::string collective; ///< "Collective name": "allreduce", "send", ...
  int64_t bytes = -1;     ///< "In msg nelems" x the dtype's bytes; -1: unknown
  int peer = -1;          ///< send: "Dst Rank", recv: "Src Rank" (global); -1: none
};

struct KinetoTrace {
  std::string file;
  int rank = -1, worldSize = 0; ///< distributedInfo; -1: absent
  std::string backend, gpu; ///< distributedInfo.backend, deviceProperties[0].name
  std::string step;             ///< "ProfilerStep#3"
  int64_t stepStartUs = 0;      ///< the step's start on the trace's clock (us)
  int64_t stepNs = 0;           ///< the step annotation's duration
  int64_t mainThread = 0;       ///< the thread that carries the step annotation
  std::vector<Event> host;      ///< runtime calls and annotations in the step, by (lane, start)
  std::vector<Event> device;    ///< work launched by those calls, by (lane, start)
  std::vector<std::string> names;
  std::vector<ShapedOp> ops;    ///< matrix multiplies and attentions in the step with their shapes
  std::vector<ProcessGroup> groups; ///< process groups the profile names, each once
  std::vector<CommInfo> comms;      ///< Event::comm
  /// Sends and receives batched into one NCCL kernel
  /// (torch.distributed.batch_isend_irecv: each op's record_param_comms
  /// names its peer, and one kernel under "nccl:coalesced" carries them
  /// all): Event::batch, the ops' comms in call order.
  std::vector<std::vector<int32_t>> peerBatches;
  std::vector<TpMarker> tpMarkers;  ///< by (lane, start)
  std::vector<AutogradOp> autograd; ///< by (lane, start)
  /// A what-if's factor on each device event's measured time (its index in
  /// `device`), on top of ReplayOptions' scales; empty: none.
  std::vector<double> deviceFactor;
  /// Events not used, by category ("ac2g", "cpu_op", "python_function",
  /// "device work launched outside the step" ...).
  std::map<std::string, uint64_t> skipped;
  /// The host execution trace linked to this one (HostTrace.h); file empty: none.
  HostLink hostTrace;

  const std::string &name(const Event &e) const { return names[e.name]; }
};

struct ReadOptions {
  /// Which ProfilerStep to keep ("ProfilerStep#3" or just "3"); empty: the
  /// first one in the trace.
  std::string step;
};

/// Reads and checks one trace file (.json or .json.gz). Errors name the file
/// and, where one is at fault, the event (its index in traceEvents and name).
llvm::Expected<KinetoTrace> readKineto(const std::string &path, const ReadOptions &opts = {});
/// The same for a file's text, read already.
llvm::Expected<KinetoTrace> parseKineto(const std::string &path, llvm::StringRef text,
                                        const ReadOptions &opts = {});

/// The same for a document parsed already (a host trace may have filled in
/// its operators' shapes, HostTrace.h).
llvm::Expected<KinetoTrace> readKinetoDocument(const std::string &path, const llvm::json::Object &top,
                                               const ReadOptions &opts = {});

/// The file's bytes, gunzipped when they start with the gzip magic.
llvm::Expected<std::string> readMaybeGzip(const std::string &path);

} // namespace rapid::profile
