//===- Layer.cpp - One transformer layer, embedding and LM head -----------===//
//
// Megatron-LM sharding (Shoeybi et al. 2019; Korthikanti et al. 2022): QKV
// and FC1 split their output columns over TP, the output projection and FC2
// their input rows, so each block ends in one TP all-reduce (or, with
// sequence parallelism, a reduce-scatter, with an all-gather before the next
// block's first GEMM). Context parallelism splits tokens; each rank gathers
// the keys and values of the whole sequence. Backward runs each GEMM's dgrad
// and wgrad; the dgrad's TP collective overlaps the wgrad.
// The small kernels around the GEMMs are Megatron-LM's: biases are added in
// the GEMM epilogue or in the fused bias-GeLU / bias-dropout-add kernels, so
// they cost nothing forward; backward reduces each bias gradient over the
// tokens, runs each dropout's mask over the gradient, and adds the residual
// path's gradient to the norm's at each block input.
// Pointwise FLOP and byte counts per element are in docs/lowering.md.
//===----------------------------------------------------------------------===//
#include "rapid/Lower/Lower.h"
#include "rapid/Cost/Attention.h"

namespace rapid::lower {
namespace {

/// What a TP all-reduce (or SP reduce-scatter) closing a row-parallel block
/// moves: the whole [tokens, hidden] activation.
double tpBlockBytes(const Shard &sh) { return double(sh.tokens) * sh.model.hidden * sh.d; }
/// What an SP all-gather takes from each rank: its share of the activation.
double spGatherBytes(const Shard &sh) { return sh.actElems() * sh.d; }

/// All-reduce (or SP reduce-scatter) that closes a row-parallel block.
void tpReduce(Chain &c, const Shard &sh, const char *ar, const char *rs) {
  if (sh.t() == 1) return;
  double full = tpBlockBytes(sh);
  c.add(sh.sp() ? collective(OpKind::ReduceScatter, rs, Group::TP, full)
                : collective(OpKind::AllReduce, ar, Group::TP, full));
}

/// SP all-gather of a sequence-sharded activation before a column-parallel GEMM.
void spGather(Chain &c, const Shard &sh, const char *name) {
  if (sh.sp()) c.add(collective(OpKind::AllGather, name, Group::TP, spGatherBytes(sh)));
}

/// Whether the stack splits SP collectives to run beside their GEMMs.
bool overlapsTp(const Shard &sh) { return sh.sp() && sh.tpCommOverlap; }

/// The SP all-gather a column-parallel GEMM takes, then the GEMM. With
/// tp_comm_overlap the gather runs in tp pieces, each beside the GEMM on the
/// piece before (Transformer Engine's pipelined all-gather + GEMM; Wang et
/// al., ASPLOS 2023): the first piece alone, the other tp - 1 beside the
/// whole GEMM, so c / tp + max(c (tp - 1) / tp, g).
void gatherThenGemm(Chain &c, const Shard &sh, const char *name, const char *overlapped, Op g) {
  if (!overlapsTp(sh)) {
    spGather(c, sh, name);
    c.add(std::move(g));
    return;
  }
  double bytes = spGatherBytes(sh), first = bytes / double(sh.t());
  c.add(collective(OpKind::AllGather, name, Group::TP, first));
  uint32_t rest = c.addDetached(collective(OpKind::AllGather, overlapped, Group::TP, bytes - first), {c.last()});
  c.add(std::move(g));
  c.after(rest);
}

/// A row-parallel GEMM, then the TP collective that closes its block. With
/// tp_comm_overlap the SP reduce-scatter runs in tp pieces, each beside the
/// GEMM's next piece: all but the last beside the whole GEMM, the last alone,
/// so max(g, c (tp - 1) / tp) + c / tp.
void gemmThenReduce(Chain &c, const Shard &sh, Op g, const char *ar, const char *rs, const char *overlapped) {
  if (!overlapsTp(sh)) {
    c.add(std::move(g));
    tpReduce(c, sh, ar, rs);
    return;
  }
  double full = tpBlockBytes(sh), last = full / double(sh.t());
  uint32_t before = c.last();
  uint32_t early = c.addDetached(collective(OpKind::ReduceScatter, overlapped, Group::TP, full - last), {before});
  c.add(std::move(g));
  c.after(early);
  c.add(collective(OpKind::ReduceScatter, rs, Group::TP, last));
}

/// The TP collective of a column-parallel dgrad runs while the wgrad
/// computes; the op after the wgrad waits for both.
void dgradReduceThenWgrad(Chain &c, const Shard &sh, const char *ar, const char *rs, const char *gather, Op wgrad) {
  if (sh.t() == 1) {
    c.add(std::move(wgrad));
    return;
  }
  double full = tpBlockBytes(sh);
  uint32_t reduce = c.addDetached(sh.sp() ? collective(OpKind::ReduceScatter, rs, Group::TP, full)
                                          : collective(OpKind::AllReduce, ar, Group::TP, full),
                                  {c.last()});
  spGather(c, sh, gather); // with SP the wgrad needs the whole input again
  c.add(std::move(wgrad));
  c.after(reduce);
}

/// A LayerNorm or RMSNorm over the rank's activation (docs/model.md §4:
/// RMSNorm moves the same tensors and skips the mean).
Op norm(const Shard &sh, const char *name, bool backward, bool layerNorm = false) {
  bool rms = sh.model.norm == Norm::RmsNorm && !layerNorm;
  return pointwise(OpKind::Norm, name, rms ? cost::PointwiseOp::RmsNorm : cost::PointwiseOp::LayerNorm, sh.actElems(),
                   sh.dtype, backward);
}

/// The MLP activation over `elems` outputs of the MLP or the experts (`moe`):
/// SwiGLU or GELU (ReLU moves the same bytes), with the bias add, in one
/// kernel (Megatron's fused bias-GeLU, a fused SiLU-and-multiply). Unfused,
/// eager PyTorch activates on its own (nn.Linear's bias is added in the
/// GEMM's epilogue by cuBLASLt: the `_bias_` GEMM kernels of a profile);
/// SwiGLU is a SiLU over the gate, then a multiply by the up projection,
/// both over halves of one GEMM's output: strided views (Eager.cpp).
void activation(Chain &c, const Shard &sh, bool moe, double elems, bool backward) {
  bool gated = sh.model.gated();
  bool split = gated && !sh.fused;
  auto add = [&](Op op) { c.add(split ? overStridedViews(std::move(op), elems) : std::move(op)); };
  auto table = [&](cost::PointwiseOp op, const char *name) {
    add(pointwise(OpKind::Activation, name, op, elems, sh.dtype, backward));
  };
  auto plain = [&](const char *name, double flops, double accesses) {
    add(pointwise(OpKind::Activation, name, elems, flops, accesses, sh.d));
  };
  const char *act = moe ? (backward ? "moe.act.bwd" : "moe.act") : (backward ? "mlp.act.bwd" : "mlp.act");
  if (sh.fused || !gated) {
    table(gated ? cost::PointwiseOp::SwiGlu : cost::PointwiseOp::Gelu, act);
  } else if (!backward) { // SiLU over the gate, then times up
    table(cost::PointwiseOp::Gelu, act);
    plain(moe ? "moe.gate.mul" : "mlp.gate.mul", 1, 3);
  } else { // dy * up and dy * silu(gate), then SiLU's backward
    plain(moe ? "moe.gate.mul.bwd" : "mlp.gate.mul.bwd", 2, 5);
    table(cost::PointwiseOp::Gelu, act);
  }
}

Op softmax(const Shard &sh, const char *name, bool backward) {
  return pointwise(OpKind::Softmax, name, cost::PointwiseOp::Softmax, sh.scoreElems(), sh.dtype, backward);
}

/// The scores' scale and causal mask: inside Megatron's fused
/// scale-mask-softmax, or two kernels of their own in eager PyTorch (a
/// multiply, a masked fill), each reading and writing the scores.
void scaleAndMask(Chain &c, const Shard &sh, bool backward) {
  if (sh.fused) return;
  auto pass = [&](const char *name) { c.add(pointwise(OpKind::Softmax, name, sh.scoreElems(), 1, 2, sh.d)); };
  if (backward) { // the scale's gradient; the mask's (another masked fill) is not counted
    pass("attn.scale.bwd");
  } else {
    pass("attn.scale");
    pass("attn.mask");
  }
}

/// Training only: generation runs the model in eval mode.
bool dropout(const Shard &sh) { return sh.training && sh.model.dropout; }

/// `op` also moving a dropout mask of one byte per element.
Op withMask(Op op, double elems) {
  op.bytes += elems;
  return op;
}

/// Forward dropout over `elems`: reads x, writes y and the mask, drawing
/// it (integer work: `dropout` set).
Op dropoutForward(const Shard &sh, const char *name, double elems) {
  Op op = withMask(pointwise(OpKind::Dropout, name, elems, cost::kDropoutOpsPerElement, 2, sh.d), elems);
  op.dropout = true;
  return op;
}

/// Its backward: reads dy and the mask, writes dx = dy * mask / (1 - p).
Op dropoutBackward(const Shard &sh, const char *name, double elems) {
  return withMask(pointwise(OpKind::Dropout, name, elems, 2, 2, sh.d), elems);
}

/// A bias gradient: the output gradient ([tokens, cols]) summed over tokens.
void biasGrad(Chain &c, const Shard &sh, const char *name, double elems) {
  if (sh.model.bias) c.add(pointwise(OpKind::BiasGrad, name, elems, 1, 1, sh.d));
}

/// The end of a block: out = residual + dropout(x + bias), one fused kernel
/// (Megatron's bias-dropout-add) that also writes the mask. Unfused, eager
/// PyTorch runs the dropout and adds the residual in turn; the bias is in
/// the GEMM's epilogue (as for the activation) unless TP splits the GEMM's
/// inputs: a row-parallel layer adds its bias once, after the all-reduce.
void residualAdd(Chain &c, const Shard &sh, const char *name) {
  double elems = sh.actElems();
  bool biasAfterReduce = sh.model.bias && sh.t() > 1;
  if (!sh.fused && (biasAfterReduce || dropout(sh))) {
    if (biasAfterReduce) c.add(pointwise(OpKind::Residual, "bias.add", elems, 1, 2, sh.d));
    if (dropout(sh)) c.add(dropoutForward(sh, "dropout", elems));
    c.add(pointwise(OpKind::Residual, name, elems, 1, 3, sh.d));
  } else if (dropout(sh)) {
    Op op = withMask(pointwise(OpKind::Residual, name, elems, 2 + cost::kDropoutOpsPerElement, 3, sh.d), elems);
    op.dropout = true; // the draws dominate its two adds
    c.add(op);
  } else {
    c.add(pointwise(OpKind::Residual, name, elems, sh.fused && sh.model.bias ? 2 : 1, 3, sh.d));
  }
}

/// Backward of residualAdd into the branch: the dropout mask over the
/// gradient and the bias gradient (the residual path passes it unchanged).
void residualBackward(Chain &c, const Shard &sh, const char *dropoutName, const char *biasName) {
  if (dropout(sh)) c.add(dropoutBackward(sh, dropoutName, sh.actElems()));
  biasGrad(c, sh, biasName, sh.actElems());
}

/// The block input feeds the norm and the residual path: their gradients add.
Op residualGradAdd(const Shard &sh, const char *name) {
  return pointwise(OpKind::Residual, name, sh.actElems(), 1, 3, sh.d);
}

int64_t qLocal(const Shard &sh) { return sh.headsLocal * sh.model.headDim; }
int64_t qkvLocal(const Shard &sh) { return qLocal(sh) + 2 * sh.kvLocal; }

/// Query heads per key/value head on this rank.
int64_t kvGroup(const Shard &sh) {
  return std::max<int64_t>(1, sh.headsLocal / std::max<int64_t>(1, sh.kvLocal / sh.model.headDim));
}

} // namespace

Op flashAttention(const Shard &sh, bool backward) {
  Op op;
  op.kind = OpKind::FlashAttention;
  op.name = backward ? "attn.core.bwd" : "attn.core";
  int64_t kv = sh.kvTokens;
  op.shape = {sh.s, kv, sh.model.headDim, sh.b * sh.headsLocal};
  op.causal = true;
  op.dropout = dropout(sh); // on the probabilities, drawn in the kernel (and again backward)
  // QK^T and PV, 2 FLOPs per multiply-add; the causal mask skips half the tiles.
  double fwd = 4.0 * sh.s * kv * sh.model.headDim * double(op.shape.batch) * 0.5;
  // Backward recomputes S and runs dV, dP, dQ, dK: 5 products against 2.
  op.flops = backward ? 2.5 * fwd : fwd;
  double q = double(sh.s) * qLocal(sh), k = double(kv) * sh.kvLocal;
  op.bytes = double(sh.b) * sh.d * (backward ? 4 * q + 4 * k : 2 * q + 2 * k);
  return op;
}

/// One token per sequence reads the whole KV cache: memory bound (the
/// FlashDecoding split-KV kernel); its new K and V are appended.
Op decodeAttention(const Shard &sh) {
  Op op;
  op.kind = OpKind::DecodeAttention;
  op.name = "attn.decode";
  op.shape = {1, sh.kvTokens, sh.model.headDim, sh.b * sh.headsLocal};
  op.kvGroup = int32_t(kvGroup(sh));
  op.flops = 4.0 * sh.kvTokens * sh.model.headDim * double(op.shape.batch);
  double q = double(sh.b) * qLocal(sh);
  double kv = sh.kvBytes / sh.d; // the cache may be stored narrower than the math (FP8 KV)
  op.bytes = sh.d * (2.0 * sh.b * sh.kvTokens * sh.kvLocal * kv + 2 * q + 2.0 * sh.b * sh.kvLocal * kv);
  return op;
}

namespace {

/// The core of attention: scores, (causal-masked) softmax, the attention
/// probabilities' dropout, and attention over V. FlashAttention fuses all of
/// it, dropout included.
void attentionForward(Chain &c, const Shard &sh) {
  if (!sh.attention) return; // a serving step's attention is costed per request (Serving.cpp)
  if (sh.decode) {
    c.add(decodeAttention(sh));
    return;
  }
  if (sh.flash) {
    c.add(flashAttention(sh, false));
    return;
  }
  int64_t kv = sh.kvTokens, batch = sh.b * sh.headsLocal;
  // ALiBi without FlashAttention (Megatron-DeepSpeed's BLOOM): the bias is
  // the beta input of the score baddbmm, expanded into the score buffer
  // first and read back by the GEMM. FlashAttention adds it in registers.
  if (sh.model.alibi()) c.add(pointwise(OpKind::Softmax, "attn.alibi", sh.scoreElems(), 0, 2, sh.d));
  c.add(gemm("attn.score", sh.s, kv, sh.model.headDim, batch));
  scaleAndMask(c, sh, false);
  c.add(softmax(sh, "attn.softmax", false));
  if (dropout(sh)) c.add(dropoutForward(sh, "attn.probs.dropout", sh.scoreElems()));
  c.add(gemm("attn.pv", sh.s, sh.model.headDim, kv, batch));
}

void attentionBackward(Chain &c, const Shard &sh) {
  if (sh.flash) { // the fused backward recomputes the scores itself
    c.add(flashAttention(sh, true));
    return;
  }
  if (sh.recompute == Recompute::Selective) {
    // Korthikanti et al. Sec. 5: re-run QK^T, softmax, softmax dropout and
    // attention over V, whose outputs are the memory-heavy part.
    Phase saved = c.phase;
    c.phase = Phase::Recompute;
    attentionForward(c, sh);
    c.phase = saved;
  }
  int64_t kv = sh.kvTokens, batch = sh.b * sh.headsLocal, hd = sh.model.headDim;
  c.add(gemm("attn.pv.dgrad_v", kv, hd, sh.s, batch));
  c.add(gemm("attn.pv.dgrad_p", sh.s, kv, hd, batch));
  if (dropout(sh)) c.add(dropoutBackward(sh, "attn.probs.dropout.bwd", sh.scoreElems()));
  c.add(softmax(sh, "attn.softmax.bwd", true));
  scaleAndMask(c, sh, true);
  c.add(gemm("attn.score.dgrad_q", sh.s, hd, kv, batch));
  c.add(gemm("attn.score.dgrad_k", kv, hd, sh.s, batch));
}

void moeForward(Chain &c, const Shard &sh) {
  const ModelSpec &m = sh.model;
  int64_t T = sh.tokens;
  auto [routed, local, perExpert] = sh.expertWork();
  c.add(gemm("moe.router", T, m.experts, m.hidden));
  c.add(pointwise(OpKind::Router, "moe.topk", double(T) * m.experts, 5, 2, sh.d));
  c.add(collective(OpKind::AllToAll, "moe.dispatch", Group::EP, routed * m.hidden * sh.d));
  int64_t f1 = m.expertFfn * (m.gated() ? 2 : 1) / sh.t(), f2 = m.expertFfn / sh.t();
  c.add(gemm("moe.fc1", perExpert, f1, m.hidden, local));
  activation(c, sh, /*moe=*/true, double(perExpert) * local * f2, false);
  c.add(gemm("moe.fc2", perExpert, m.hidden, f2, local));
  c.add(collective(OpKind::AllToAll, "moe.combine", Group::EP, routed * m.hidden * sh.d));
}

void moeBackward(Chain &c, const Shard &sh) {
  const ModelSpec &m = sh.model;
  int64_t T = sh.tokens;
  auto [routed, local, perExpert] = sh.expertWork();
  int64_t f1 = m.expertFfn * (m.gated() ? 2 : 1) / sh.t(), f2 = m.expertFfn / sh.t();
  c.add(collective(OpKind::AllToAll, "moe.combine.bwd", Group::EP, routed * m.hidden * sh.d));
  c.add(gemm("moe.fc2.dgrad", perExpert, f2, m.hidden, local));
  c.add(gemm("moe.fc2.wgrad", f2, m.hidden, perExpert, local));
  activation(c, sh, /*moe=*/true, double(perExpert) * local * f2, true);
  c.add(gemm("moe.fc1.dgrad", perExpert, m.hidden, f1, local));
  c.add(gemm("moe.fc1.wgrad", m.hidden, f1, perExpert, local));
  c.add(collective(OpKind::AllToAll, "moe.dispatch.bwd", Group::EP, routed * m.hidden * sh.d));
  c.add(gemm("moe.router.dgrad", T, m.hidden, m.experts));
  c.add(gemm("moe.router.wgrad", m.hidden, m.experts, T));
}

/// The dense MLP between its SP all-gather and its TP reduction.
void mlpForward(Chain &c, const Shard &sh) {
  int64_t T = sh.tokens, f = sh.model.ffn / sh.t();
  gatherThenGemm(c, sh, "mlp.sp.allgather", "mlp.sp.allgather.overlapped", gemm("mlp.fc1", T, sh.ffnLocal, sh.model.hidden));
  activation(c, sh, /*moe=*/false, double(T) * f, false);
  gemmThenReduce(c, sh, gemm("mlp.fc2", T, sh.model.hidden, f), "mlp.tp.allreduce", "mlp.sp.reducescatter",
                 "mlp.sp.reducescatter.overlapped");
}

/// Whether a decode step's attention kernel turns q and k itself, so that
/// its rotary embedding has no kernel of its own: the stack's per-head
/// kernel does where the stack says so (TensorRT-LLM's masked MHA); its
/// grouped kernel (XQA) runs a pre-processing kernel first, as prefill does.
bool rotaryInDecodeKernel(const Shard &sh) {
  if (!sh.stack || !sh.gpu || !sh.stack->decodeAttentionRotary || !(sh.decode || sh.decodeOnly)) return false;
  int64_t pairs = (sh.decode ? sh.b : sh.tokens) * sh.headsLocal; // a decode-only step: a token a sequence
  return cost::decodeAttentionBlocks(*sh.gpu, *sh.stack, pairs, kvGroup(sh)) == pairs;
}

} // namespace

void layerForward(Chain &c, const Shard &sh, int64_t layer) {
  c.layer = int32_t(layer);
  int64_t T = sh.tokens;
  c.add(norm(sh, "attn.norm", false));
  gatherThenGemm(c, sh, "attn.sp.allgather", "attn.sp.allgather.overlapped", gemm("attn.qkv", T, qkvLocal(sh), sh.model.hidden));
  if (sh.model.rotary() && !rotaryInDecodeKernel(sh)) rotaryForward(c, sh);
  if (sh.layout.cp > 1 && !sh.decode) // a decode step attends over its own part of the cache
    c.add(collective(OpKind::AllGather, "attn.cp.allgather_kv", Group::CP, 2.0 * T * sh.kvLocal * sh.d));
  cacheWrite(c, sh);
  repeatKv(c, sh, false);
  attentionForward(c, sh);
  gemmThenReduce(c, sh, gemm("attn.out", T, sh.model.hidden, qLocal(sh)), "attn.tp.allreduce", "attn.sp.reducescatter",
                 "attn.sp.reducescatter.overlapped");
  residualAdd(c, sh, "attn.residual");
  c.add(norm(sh, "mlp.norm", false));
  if (sh.isMoeLayer(layer)) {
    spGather(c, sh, "mlp.sp.allgather");
    moeForward(c, sh);
    tpReduce(c, sh, "mlp.tp.allreduce", "mlp.sp.reducescatter");
  } else {
    mlpForward(c, sh);
  }
  residualAdd(c, sh, "mlp.residual");
}

void layerBackward(Chain &c, const Shard &sh, int64_t layer) {
  if (sh.recompute == Recompute::Full) { // re-run the layer's forward from its stored input
    c.phase = Phase::Recompute;
    layerForward(c, sh, layer);
    c.phase = Phase::Backward;
  }
  c.layer = int32_t(layer);
  int64_t T = sh.tokens, h = sh.model.hidden, f = sh.model.ffn / sh.t();
  residualBackward(c, sh, "mlp.dropout.bwd", "mlp.fc2.bgrad");
  if (sh.isMoeLayer(layer)) {
    spGather(c, sh, "mlp.sp.grad_allgather");
    moeBackward(c, sh);
    tpReduce(c, sh, "mlp.tp.allreduce.bwd", "mlp.sp.reducescatter.bwd");
  } else {
    gatherThenGemm(c, sh, "mlp.sp.grad_allgather", "mlp.sp.grad_allgather.overlapped", gemm("mlp.fc2.dgrad", T, f, h));
    c.add(gemm("mlp.fc2.wgrad", f, h, T));
    activation(c, sh, /*moe=*/false, double(T) * f, true);
    if (sh.model.gated()) splitGrad(c, sh, "mlp.fc1.split.bwd", double(T) * sh.ffnLocal);
    biasGrad(c, sh, "mlp.fc1.bgrad", double(T) * sh.ffnLocal);
    c.add(gemm("mlp.fc1.dgrad", T, h, sh.ffnLocal));
    dgradReduceThenWgrad(c, sh, "mlp.tp.allreduce.bwd", "mlp.sp.reducescatter.bwd", "mlp.sp.input_allgather",
                         gemm("mlp.fc1.wgrad", h, sh.ffnLocal, T));
  }
  c.add(norm(sh, "mlp.norm.bwd", true));
  c.add(residualGradAdd(sh, "mlp.residual.bwd"));
  residualBackward(c, sh, "attn.dropout.bwd", "attn.out.bgrad");
  gatherThenGemm(c, sh, "attn.sp.grad_allgather", "attn.sp.grad_allgather.overlapped",
                 gemm("attn.out.dgrad", T, qLocal(sh), h));
  c.add(gemm("attn.out.wgrad", qLocal(sh), h, T));
  attentionBackward(c, sh);
  if (sh.layout.cp > 1)
    c.add(collective(OpKind::ReduceScatter, "attn.cp.reducescatter_dkv", Group::CP,
                     2.0 * T * sh.layout.cp * sh.kvLocal * sh.d));
  repeatKv(c, sh, true);
  if (sh.model.rotary()) rotaryBackward(c, sh);
  splitGrad(c, sh, "attn.qkv.split.bwd", double(T) * qkvLocal(sh));
  biasGrad(c, sh, "attn.qkv.bgrad", double(T) * qkvLocal(sh));
  c.add(gemm("attn.qkv.dgrad", T, h, qkvLocal(sh)));
  dgradReduceThenWgrad(c, sh, "attn.tp.allreduce.bwd", "attn.sp.reducescatter.bwd", "attn.sp.input_allgather",
                       gemm("attn.qkv.wgrad", h, qkvLocal(sh), T));
  c.add(norm(sh, "attn.norm.bwd", true));
  c.add(residualGradAdd(sh, "attn.residual.bwd"));
}

/// A token lookup reads a row and writes it; learned positions also read the
/// position's row and add it (1 FLOP, 3 accesses per element). Backward
/// scatter-adds into the token rows (read dY, read and write the gradient)
/// and, with learned positions, adds into the position rows too.
void embeddingForward(Chain &c, const Shard &sh) {
  c.layer = -1;
  bool learned = sh.model.learnedPositions();
  c.add(pointwise(OpKind::Embedding, "embed", double(sh.tokens) * sh.model.hidden, learned ? 1 : 0, learned ? 3 : 2,
                  sh.d));
  tpReduce(c, sh, "embed.tp.allreduce", "embed.sp.reducescatter"); // vocabulary-parallel lookup
  if (sh.model.embeddingNorm) c.add(norm(sh, "embed.norm", false, /*layerNorm=*/true));
  if (dropout(sh)) c.add(dropoutForward(sh, "embed.dropout", sh.actElems()));
}

void embeddingBackward(Chain &c, const Shard &sh) {
  c.layer = -1;
  if (dropout(sh)) c.add(dropoutBackward(sh, "embed.dropout.bwd", sh.actElems()));
  if (sh.model.embeddingNorm) c.add(norm(sh, "embed.norm.bwd", true, /*layerNorm=*/true));
  spGather(c, sh, "embed.sp.grad_allgather");
  bool learned = sh.model.learnedPositions();
  c.add(pointwise(OpKind::Embedding, "embed.wgrad", double(sh.tokens) * sh.model.hidden, learned ? 2 : 1,
                  learned ? 5 : 3, sh.d));
}

void headForward(Chain &c, const Shard &sh) {
  c.layer = -1;
  int64_t T = sh.tokens, v = sh.model.vocab / sh.t();
  c.add(norm(sh, "head.norm", false));
  spGather(c, sh, "head.sp.allgather");
  if (!sh.training) { // generation needs the logits of each sequence's last token only
    c.add(gemm("head.logits", sh.b, v, sh.model.hidden));
    return;
  }
  c.add(gemm("head.logits", T, v, sh.model.hidden));
  c.add(pointwise(OpKind::CrossEntropy, "head.loss", double(T) * v, 5, 2, sh.d));
  if (sh.t() > 1) // max, sum of exponentials and target logit, FP32, per token
    c.add(collective(OpKind::AllReduce, "head.loss.allreduce", Group::TP, 3.0 * 4 * T));
}

void headBackward(Chain &c, const Shard &sh) {
  c.layer = -1;
  int64_t T = sh.tokens, v = sh.model.vocab / sh.t(), h = sh.model.hidden;
  c.add(pointwise(OpKind::CrossEntropy, "head.loss.bwd", double(T) * v, 2, 2, sh.d));
  c.add(gemm("head.dgrad", T, h, v));
  dgradReduceThenWgrad(c, sh, "head.tp.allreduce.bwd", "head.sp.reducescatter.bwd", "head.sp.input_allgather",
                       gemm("head.wgrad", h, v, T));
  c.add(norm(sh, "head.norm.bwd", true));
}

} // namespace rapid::lower
