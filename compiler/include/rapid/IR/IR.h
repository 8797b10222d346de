//===- IR.h - The operator-level IR ----------------------------*- C++ -*-===//
//
// One experiment point lowers to a Program: one Graph per pipeline stage (and
// virtual chunk layout), because every rank of a stage runs the same program
// on its own shard (SPMD); the Chakra emitter expands stages to ranks.
//
// A Graph is a flat vector of Ops in program order (a valid topological
// order); `deps` index earlier ops of the same graph. Compute ops carry
// shapes, FLOPs and bytes; communication ops carry the collective kind, the
// bytes each rank contributes, and the communicator group. Times and the
// bound that set them are filled by the cost pass.
//===----------------------------------------------------------------------===//
#pragma once

#include "rapid/Support/DType.h"
#include "rapid/Support/Units.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rapid::ir {

enum class OpKind : uint8_t {
  // Compute.
  Gemm,           ///< (m x k)·(k x n), `batch` times
  FlashAttention, ///< fused attention, forward or backward
  DecodeAttention, ///< one new token per sequence attending over the KV cache
  Softmax,        ///< naive attention's scale+mask+softmax over the score matrix
  Norm,           ///< LayerNorm / RMSNorm
  Activation,     ///< GELU / SwiGLU
  Residual,       ///< elementwise add (with dropout: Megatron's fused bias-dropout-add)
  Dropout,        ///< a dropout mask applied, forward or backward
  BiasGrad,       ///< a bias gradient: the output gradient summed over tokens
  Rotary,         ///< rotary position embedding on Q and K
  Copy,           ///< a tensor copied or rearranged (an eager module's repeat_kv, KV-cache write, split gradients)
  Embedding,      ///< token (+position) lookup, or its gradient scatter
  CrossEntropy,   ///< LM-head softmax and loss
  Router,         ///< MoE top-k gate
  Optimizer,      ///< the parameter update
  Block,          ///< hierarchical mode: a whole layer's forward or backward (recompute included), timed by simulation
  // Communication.
  AllReduce,
  AllGather,
  ReduceScatter,
  AllToAll,
  Send,
  Recv,
};

enum class Phase : uint8_t { Forward, Backward, Recompute, Update };

/// Which communicator a collective runs in (ranks of the same stage that
/// differ only in that coordinate), or the pipeline for send/recv.
enum class Group : uint8_t {
  None, TP, CP, DP, EP, PP,
  DPCP, ///< data and context parallel ranks together: they hold the same weights
  /// Hybrid sharding (Layout::shard < dp): a block of `shard` consecutive
  /// DP ranks with every CP rank, which ZeRO shards over; and the ranks at
  /// the same place in every block, which reduce each shard's gradients.
  Shard, Replica,
};

/// The groups of ranks that hold the same weights, or a part of them: what
/// gradient reduction and ZeRO's gathers run over.
inline bool isDataParallel(Group g) {
  return g == Group::DP || g == Group::DPCP || g == Group::Shard || g == Group::Replica;
}

/// What set an op's time in the cost model.
enum class Bound : uint8_t { None, Compute, Latency, SharedMemory, L2, HBM, Launch, Network };

struct Shape {
  int64_t m = 0, n = 0, k = 0, batch = 1;
};

/// One operation of a stage's program. Fields are ordered so that the small
/// ones pack together: a program holds hundreds of thousands of ops.
struct Op {
  OpKind kind = OpKind::Gemm;
  Phase phase = Phase::Forward;
  DType dtype = DType::BF16;
  bool causal = false;  ///< attention masks the upper triangle
  bool dropout = false; ///< fused attention drops out its probabilities (in-kernel random numbers)
  bool strided = false; ///< pointwise over non-contiguous views (an eager module's): shape.m = elements indexed
  Group group = Group::None; ///< communication: the communicator
  Bound bound = Bound::None; ///< filled by the cost pass
  int32_t layer = -1;   ///< transformer layer, -1 for embedding/head/optimizer
  int32_t micro = -1;   ///< microbatch, -1 for once-per-step ops
  int32_t kernels = 1;  ///< launches the op stands for (a LayerNorm backward is two)
  int32_t peer = -1;    ///< send/recv: the stage at the other end
  int32_t tag = 0;      ///< send/recv pairing tag
  int32_t kvGroup = 1;  ///< decode attention: query heads per key/value head on this rank (GQA's group)
  /// "attn.qkv", "mlp.fc1.wgrad", ...: always a string literal (static
  /// storage), so that an op copies without allocating.
  std::string_view name;
  Shape shape;          ///< GEMM dimensions; attention: m = q tokens, n = kv tokens, k = head_dim, batch = b*heads
  double flops = 0;     ///< floating-point operations of this op on one rank
  double bytes = 0;     ///< HBM bytes read + written (GEMMs: filled by the cost pass from its tiling)
  double l2Bytes = 0, smemBytes = 0; ///< traffic at the on-chip levels, from the cost pass
  double commBytes = 0; ///< Chakra comm_size meaning: AR/RS/A2A whole buffer, AG per-rank input, P2P message
  Seconds time;         ///< filled by the cost pass
  Seconds launch;       ///< communication: its host launch before it can start (the cost pass: the stack's)
  /// Earlier ops of the graph; most ops have one or two, held inline.
  llvm::SmallVector<uint32_t, 2> deps;

  bool isComm() const { return kind >= OpKind::AllReduce; }
};

struct Graph {
  int32_t stage = 0;
  std::vector<Op> ops;
  /// Appends `op` and returns its index.
  uint32_t add(Op op) {
    ops.push_back(std::move(op));
    return uint32_t(ops.size() - 1);
  }
};

/// The parallel layout, decided by the layout pass: degrees, which layers
/// each stage runs, and how the degrees lie over the network's ranks.
struct Layout {
  int64_t tp = 1, cp = 1, pp = 1, dp = 1, ep = 1;
  int64_t shard = 1; ///< DP ranks per ZeRO shard group (dp without hybrid sharding)
  bool sp = false;
  int64_t virtualStages = 1;
  int64_t microbatches = 1;
  /// First layer of each (chunk, stage), index chunk * pp + stage, then one
  /// past the last layer.
  std::vector<int64_t> chunkStart;
  /// TP, CP, DP and PP over the rank numbers, fastest first (the `map`
  /// statements' order; Megatron-LM's tp, cp, dp, pp without them).
  std::vector<Group> rankOrder;
  /// Ranks along each network dimension, dimension 0 (fastest) first.
  std::vector<int64_t> dimSizes;

  /// Ranks that run each stage's program: one per TP x CP x DP coordinate.
  int64_t ranksPerStage() const { return tp * cp * dp; }
  int64_t degree(Group g) const;
  int64_t layerBegin(int64_t chunk, int64_t stage) const { return chunkStart[chunk * pp + stage]; }
  int64_t layerEnd(int64_t chunk, int64_t stage) const { return chunkStart[chunk * pp + stage + 1]; }
  /// Transformer layers of one stage over all its chunks.
  int64_t stageLayers(int64_t stage) const;
};

/// What lowering knows about memory, for the memory pass: sizes come from
/// the sharded shapes, lifetimes from walking the scheduled graphs.
struct MemoryFacts {
  bool training = true;
  std::vector<double> stored;    ///< per layer: bytes one rank keeps from forward to backward, per microbatch
  std::vector<double> recompute; ///< per layer: extra bytes while its backward re-runs forward work
  double storedHead = 0;         ///< LM-head logits kept for the loss backward, per microbatch
  std::vector<double> stageParams; ///< per stage: parameters one rank holds before ZeRO sharding
  std::vector<int64_t> stageLayers; ///< per stage: transformer layers
  double paramBytes = 2, masterBytes = 4, gradBytes = 4, optimizerBytes = 8; ///< per parameter
  int64_t zero = 0;
  std::vector<double> kvCache;   ///< per stage: KV-cache bytes per rank (inference)
  double transient = 0;          ///< inference: largest working set of one layer's forward
  double logits = 0;             ///< inference: the sampled positions' logits, on the last stage
};

/// Inference: decode steps are lowered at sample points; each stands for
/// `weight` steps of the generation (the samples' weights add up to the
/// number of generated tokens). Ops of sample i have micro = i + 1; the
/// prefill has micro = 0.
struct DecodeSample {
  int64_t step = 0;     ///< 1 = the first generated token after the prefill
  int64_t kvLength = 0; ///< tokens in the KV cache the step attends over
  double weight = 1;
};

/// Serving: the engine step a program lowers (Lower.h buildServeBody).
struct ServeStep {
  int64_t tokens = 1;      ///< new tokens of every request in the step
  int64_t maxSampled = 1;  ///< sequences a step samples at most: their logits' memory
  bool decodeOnly = false; ///< no prefill in it: replayed from CUDA graphs where the stack captures decode
};

/// Memory of one rank of a stage at its peak (bytes).
struct StageMemory {
  int32_t stage = 0;
  int64_t rank = 0; ///< the stage's first rank
  double weights = 0, gradients = 0, optimizer = 0, activations = 0, kvCache = 0, reserve = 0;
  double commBuffers = 0; ///< the collective library's own buffers (NCCL's NVLS)
  double peak = 0, capacity = 0;
  double headroom() const { return capacity - peak; }
};

/// What the memory pass found: every stage's peak and whether it fits.
struct MemoryReport {
  std::vector<StageMemory> stages;
  bool fits = true;
  std::string reason; ///< "needs 93.4 GiB on rank 0 (stage 0) but 'a100_sxm_80gb' has 80 GiB"
  const StageMemory &worst() const;
};

/// A point's program as the passes build it up: the layout pass fills
/// `layout`, the schedule pass `stages`, `memory` and `decode`, the cost
/// pass every op's time, the memory pass `memoryReport`.
struct Program {
  std::string experiment;
  /// Set before the schedule pass for hierarchical runs: microbatches after
  /// the first lower each layer's forward and backward as one Block op,
  /// which the driver times from microbatch 0's (every microbatch runs the
  /// same shapes); the embedding, the head and communication stay whole.
  bool layerBlocks = false;
  Layout layout;
  std::vector<Graph> stages;
  MemoryFacts memory;
  std::vector<DecodeSample> decode;
  /// Set before the schedule pass for serving: the one step to lower.
  std::optional<ServeStep> serveStep;
  std::optional<MemoryReport> memoryReport;
};

/// `total` plus `f` of each of `g`'s ops in order, a Block counting as the
/// ops it stands for: its layer's microbatch-0 ops in its direction
/// (recompute with the backward), which every microbatch repeats.
double sumExpanded(const Graph &g, llvm::function_ref<double(const Op &)> f, double total = 0);

const char *kindName(OpKind k);
const char *phaseName(Phase p);
const char *groupName(Group g);
const char *boundName(Bound b);

} // namespace rapid::ir
