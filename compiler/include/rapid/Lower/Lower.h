//===- Lower.h - Op builders: layers, embedding, head, decode steps -*- C++ -*-===//
//
// What one unit of work lowers to on one rank: transformer layers sharded by
// TP/SP/CP (Megatron-LM's column/row splits), their backward and recompute,
// the embedding and LM head, MoE dispatch over EP, a prefill or decode step.
// The schedule pass (Passes/SchedulePass.cpp) calls these in the order the
// pipeline schedule gives, on shard sizes fixed by the layout pass.
//===----------------------------------------------------------------------===//
#pragma once

#include "rapid/Cost/Pointwise.h"
#include "rapid/IR/IR.h"
#include "rapid/Sema/Sema.h"

namespace rapid::lower {

using ir::Group;
using ir::Op;
using ir::OpKind;
using ir::Phase;

/// Shard sizes of one rank, fixed for the whole point by its layout.
struct Shard {
  ModelSpec model;
  ir::Layout layout;
  DType dtype = DType::BF16;
  double d = 2;                ///< bytes per activation element
  double paramBytes = 2;       ///< bytes per weight
  double kvBytes = 2;          ///< bytes per KV-cache element (inference.kv_precision)
  int64_t b = 1;               ///< sequences per microbatch
  int64_t seq = 0;             ///< full sequence length (inference: the prompt)
  int64_t decodeTokens = 0;    ///< inference: generated tokens
  int64_t decodeSamples = 0;   ///< inference: decode steps lowered
  int64_t s = 0;               ///< tokens of a sequence on this rank (seq / cp)
  int64_t tokens = 0;          ///< b * s
  int64_t kvTokens = 0;        ///< keys each query attends over on this rank
  bool decode = false;         ///< one new token per sequence against the KV cache
  int64_t headsLocal = 0;      ///< query heads on this rank
  int64_t kvLocal = 0;         ///< key/value width on this rank (heads * head_dim)
  int64_t ffnLocal = 0;        ///< MLP columns on this rank (x2 for the gate of SwiGLU)
  bool flash = true;
  Recompute recompute = Recompute::None;
  Optimizer optimizer = Optimizer::Adam;
  bool training = true;
  int64_t zero = 0;
  double gradBucket = 0;
  double gradBytes = 4;        ///< bytes of a gradient, kept and reduced (stack.grad_precision)
  bool gradReduceOverlap = true; ///< stack.grad_reduce_overlap
  bool fused = true;             ///< stack.fused_kernels
  /// The point's GPU and stack, where a lowering choice is the stack's
  /// kernel choice on that GPU (whether a decode step's attention kernel turns
  /// q and k itself, decode_attention.rotary and .grouped_*); null
  /// in shards built without a point.
  const GpuSpec *gpu = nullptr;
  const StackSpec *stack = nullptr;
  bool decodeOnly = false;       ///< serving: a step of decodes alone (its body knows no `decode`)
  bool ppScatterGather = false;  ///< stack.pp_scatter_gather
  bool paramGatherOverlap = false; ///< stack.param_gather_overlap
  bool tpCommOverlap = false;      ///< stack.tp_comm_overlap (training)
  bool attention = true;         ///< false: layers lower without their attention core (serving steps)

  int64_t layerBegin(int64_t chunk, int64_t stage) const { return layout.layerBegin(chunk, stage); }
  int64_t layerEnd(int64_t chunk, int64_t stage) const { return layout.layerEnd(chunk, stage); }
  int64_t stageLayerCount(int64_t stage) const { return layout.stageLayers(stage); }

  int64_t t() const { return layout.tp; }
  bool sp() const { return layout.sp && layout.tp > 1; }
  /// Elements of a [tokens, hidden] activation on this rank, split by SP.
  double actElems() const { return double(tokens) * model.hidden / (sp() ? t() : 1); }
  /// Bytes of one token's K and V in one layer on this rank, as the cache holds them.
  double kvBytesPerToken() const { return 2.0 * double(kvLocal) * kvBytes; }
  /// Elements of the attention score matrices on this rank (naive attention).
  double scoreElems() const { return double(b) * headsLocal * s * double(kvTokens); }
  bool isMoeLayer(int64_t layer) const {
    return model.experts > 1 && (layer + 1) % model.moeEvery == 0;
  }
  /// An MoE layer's expert GEMMs on this rank: `routed` token-expert pairs
  /// (tokens x top_k x capacity factor; the dispatch all-to-all brings a
  /// rank as many as it sends) over `active` of its local experts, `rows`
  /// tokens each. With fewer pairs than local experts (decode at small
  /// batch) only as many experts run, one row each, never zero.
  struct ExpertWork {
    double routed;
    int64_t active, rows;
  };
  ExpertWork expertWork() const;
  /// Parameters of one norm: LayerNorm's scale and bias, RMSNorm's scale.
  double normParams() const { return double(model.hidden) * (model.norm == Norm::RmsNorm ? 1 : 2); }
  /// The first stage's parameters beside the token table, replicated over
  /// TP: a learned position table of max_seq x h (Megatron-LM's position
  /// embedding is not vocabulary-parallel) and the embedding's LayerNorm.
  double embeddingSideParams() const {
    return (model.learnedPositions() ? double(model.maxSeq) * double(model.hidden) : 0) +
           (model.embeddingNorm ? 2.0 * double(model.hidden) : 0);
  }
  /// Parameters of one layer held by one rank (before ZeRO sharding).
  double layerParams(int64_t layer) const;
};

/// The shard sizes of `p` under the layout pass's `layout`.
Shard makeShard(const ir::Layout &layout, const ExperimentPoint &p);

/// Appends ops to a graph as a chain: each op waits for the previous one,
/// plus any detached ops (overlapped collectives, receives) named by `after`.
class Chain {
public:
  explicit Chain(ir::Graph &g) : g(g) {}
  uint32_t add(Op op);
  /// Adds an op that depends only on `deps` and on nothing in the chain.
  uint32_t addDetached(Op op, std::vector<uint32_t> deps);
  void after(uint32_t idx) { pending.push_back(idx); }
  uint32_t last() const { return lastIdx; }
  bool empty() const { return lastIdx == kNone; }
  ir::Graph &graph() { return g; }
  static constexpr uint32_t kNone = ~0u;

  // Context stamped onto every op.
  Phase phase = Phase::Forward;
  int32_t layer = -1, micro = -1;
  DType dtype = DType::BF16;

private:
  ir::Graph &g;
  uint32_t lastIdx = kNone;
  std::vector<uint32_t> pending;
};

// Op builders (Ops.cpp).
Op p2p(OpKind kind, const char *name, int64_t peerStage, int32_t tag, double bytes);
Op gemm(const char *name, int64_t m, int64_t n, int64_t k, int64_t batch = 1);
Op pointwise(OpKind kind, const char *name, double elems, double flopsPerElem, double bytesPerElem, double d);
/// A kernel of the cost model's pointwise table (norms, softmax, GELU,
/// SwiGLU, Adam): its bytes, FLOPs and launches from cost::pointwiseWork, the
/// one place they are counted.
Op pointwise(OpKind kind, const char *name, cost::PointwiseOp op, double elems, DType t, bool backward);
Op collective(OpKind kind, const char *name, Group g, double commBytes);
/// The optimizer's update of `params` parameters: FP32 master weights and
/// state, FLOPs and bytes per parameter in docs/lowering.md.
Op optimizerStep(const Shard &sh, double params);

// Inference.cpp
std::vector<ir::DecodeSample> decodeSamples(int64_t prefill, int64_t decode, int64_t samples);
void buildInferenceStage(const Shard &sh, ir::Graph &g, int64_t stage, const std::vector<ir::DecodeSample> &samples);

// Activations.cpp: what memory the program needs, for the memory pass.
double stageParams(const Shard &sh, int64_t stage);
/// What a stage holds outside its layers: the embedding, the LM head.
double stageEndParams(const Shard &sh, int64_t stage);
double storedAll(const Shard &sh, int64_t layer);
void memoryFacts(const Shard &sh, ir::Program &prog);

// Serving.cpp: one engine step of a serving run (docs/serving.md).
/// The step's work that depends only on its `step.tokens` new tokens:
/// embedding, every layer but its attention core, the stage sends. The
/// attention of each request and the LM head are costed per step by the
/// driver from the ops below.
void buildServeBody(const Shard &sh, ir::Graph &g, int64_t stage, const ir::ServeStep &step);
/// One layer's attention cores for a step: a FlashAttention op per prefill
/// chunk (`q` new tokens after `context` cached ones) and one decode op for
/// `decodeSeqs` single-token sequences attending over `decodeKv` cached
/// tokens in all (the cache each reads, plus its new token). With
/// speculative decoding the decodes have `decodeQueries` query rows in all
/// (their last tokens and drafts; decodeSeqs without it, or 0 for that).
struct PrefillChunk {
  int64_t q = 0, context = 0;
};
std::vector<Op> serveAttention(const Shard &sh, const std::vector<PrefillChunk> &chunks, int64_t decodeSeqs,
                               int64_t decodeKv, int64_t decodeQueries = 0);
/// The LM head's ops for `sampled` sequences (their last token's logits).
std::vector<Op> serveHead(const Shard &sh, int64_t sampled);

// Eager.cpp: a plain PyTorch module's small kernels where the stack's
// fused_kernels is off (each a no-op, or the fused form, where it is on).
/// `op` over `elems` elements of strided views: costed by the offsets it
/// computes (the stack's strided_instructions and strided_latency).
Op overStridedViews(Op op, double elems);
void rotaryForward(Chain &c, const Shard &sh);
void rotaryBackward(Chain &c, const Shard &sh);
/// Grouped K and V repeated for every query head (prefill and training).
void repeatKv(Chain &c, const Shard &sh, bool backward);
/// A decode step's new K and V copied into the cache.
void cacheWrite(Chain &c, const Shard &sh);
/// Backward: the gradients of one projection's split outputs gathered.
void splitGrad(Chain &c, const Shard &sh, const char *name, double elems);

// Layer.cpp
Op flashAttention(const Shard &sh, bool backward);
/// One token per sequence reads the whole KV cache (FlashDecoding's split-KV kernel).
Op decodeAttention(const Shard &sh);
void layerForward(Chain &c, const Shard &sh, int64_t layer);
void layerBackward(Chain &c, const Shard &sh, int64_t layer);
void embeddingForward(Chain &c, const Shard &sh);
void embeddingBackward(Chain &c, const Shard &sh);
void headForward(Chain &c, const Shard &sh);
void headBackward(Chain &c, const Shard &sh);

} // namespace rapid::lower
