//===- Ops.cpp - Op builders, the chain, and shard sizes ------------------===//
#include "rapid/Lower/Lower.h"

#include <cmath>

namespace rapid::lower {

namespace {
/// FP8 recipes quantise what enters a GEMM and nothing else (Transformer
/// Engine; TensorRT-LLM's and vLLM's FP8 linear layers): attention, norms
/// and the activations between kernels stay 16-bit.
DType activationType(DType t) { return t == DType::FP8 ? DType::BF16 : t; }
DType typeOf(const Op &op, DType chain) { return op.kind == OpKind::Gemm ? chain : activationType(chain); }
} // namespace

uint32_t Chain::add(Op op) {
  op.phase = phase, op.layer = layer, op.micro = micro, op.dtype = typeOf(op, dtype);
  if (lastIdx != kNone) op.deps.push_back(lastIdx);
  op.deps.insert(op.deps.end(), pending.begin(), pending.end());
  pending.clear();
  lastIdx = g.add(std::move(op));
  return lastIdx;
}

uint32_t Chain::addDetached(Op op, std::vector<uint32_t> deps) {
  op.phase = phase, op.layer = layer, op.micro = micro, op.dtype = typeOf(op, dtype);
  op.deps.assign(deps.begin(), deps.end());
  return g.add(std::move(op));
}

Op gemm(const char *name, int64_t m, int64_t n, int64_t k, int64_t batch) {
  Op op;
  op.kind = OpKind::Gemm;
  op.name = name;
  op.shape = {m, n, k, batch};
  op.flops = 2.0 * double(m) * double(n) * double(k) * double(batch); // Megatron counts 2mnk
  return op;
}

Op pointwise(OpKind kind, const char *name, double elems, double flopsPerElem, double bytesPerElem, double d) {
  Op op;
  op.kind = kind;
  op.name = name;
  op.flops = elems * flopsPerElem;
  op.bytes = elems * bytesPerElem * d;
  return op;
}

Op pointwise(OpKind kind, const char *name, cost::PointwiseOp op, double elems, DType t, bool backward) {
  cost::PointwiseWork w = cost::pointwiseWork(op, int64_t(elems), t, backward ? cost::Pass::Backward : cost::Pass::Forward);
  Op o;
  o.kind = kind;
  o.name = name;
  o.flops = w.flops.value();
  o.bytes = w.bytes.value();
  o.kernels = int32_t(w.kernels);
  return o;
}

Op p2p(OpKind kind, const char *name, int64_t peerStage, int32_t tag, double bytes) {
  Op op = collective(kind, name, Group::PP, bytes);
  op.peer = int32_t(peerStage);
  op.tag = tag;
  return op;
}

Op collective(OpKind kind, const char *name, Group g, double commBytes) {
  Op op;
  op.kind = kind;
  op.name = name;
  op.group = g;
  op.commBytes = commBytes;
  return op;
}

Op optimizerStep(const Shard &sh, double params) {
  // SGD with momentum: read master, momentum, grad; write master, momentum
  // and the 16-bit copy (22 B); v = mu*v + g, w -= lr*v (4 FLOPs).
  if (sh.optimizer == Optimizer::Sgd) return pointwise(OpKind::Optimizer, "optimizer.sgd", params, 4, 22, 1);
  // Adam: read master, m, v, grad; write master, m, v and the 16-bit copy.
  return pointwise(OpKind::Optimizer, "optimizer.adam", cost::PointwiseOp::Adam, params, sh.dtype, false);
}

Shard::ExpertWork Shard::expertWork() const {
  int64_t local = model.experts / layout.ep;
  double routed = double(tokens) * model.topK * model.capacityFactor;
  if (routed >= double(local)) return {routed, local, int64_t(routed * layout.ep / model.experts + 0.5)};
  int64_t active = std::max<int64_t>(1, int64_t(std::ceil(routed)));
  return {routed, active, std::max<int64_t>(1, int64_t(routed / double(active) + 0.5))};
}

double Shard::layerParams(int64_t layer) const {
  const ModelSpec &m = model;
  double h = double(m.hidden);
  double attn = h * (double(headsLocal) * m.headDim + 2.0 * kvLocal) + double(headsLocal) * m.headDim * h;
  double matrices = m.gated() ? 3 : 2;
  double mlp = isMoeLayer(layer)
                   ? double(m.experts / layout.ep) * matrices * h * double(m.expertFfn) / double(t()) + h * m.experts
                   : matrices * h * double(m.ffn) / double(t());
  // Biases: column-parallel ones (QKV, FC1) split over TP, row-parallel
  // ones (output projection, FC2) whole on every rank. Experts carry none.
  double bias = 0;
  if (m.bias) bias = double(headsLocal) * m.headDim + 2.0 * kvLocal + h + (isMoeLayer(layer) ? 0 : ffnLocal + h);
  return attn + mlp + bias + 2 * normParams(); // two norms, replicated
}

Shard makeShard(const ir::Layout &layout, const ExperimentPoint &p) {
  Shard sh;
  sh.model = p.model;
  sh.layout = layout;
  sh.training = p.isTraining();
  sh.dtype = p.precision();
  sh.paramBytes = sh.kvBytes = bytesOf(sh.dtype);
  sh.d = bytesOf(activationType(sh.dtype));
  sh.fused = p.stack.fusedKernels;
  sh.gpu = &p.gpu;
  sh.stack = &p.stack;
  if (const TrainingSpec *t = p.training ? &*p.training : nullptr) {
    sh.flash = t->flashAttention;
    sh.b = t->microBatch;
    sh.seq = t->seq;
    sh.recompute = t->recompute;
    sh.optimizer = t->optimizer;
    sh.zero = t->fsdp ? 3 : t->zero;
    sh.gradBucket = t->gradBucket.value();
    sh.gradBytes = bytesOf(p.stack.gradPrecision);
    sh.gradReduceOverlap = p.stack.gradReduceOverlap;
    sh.ppScatterGather = p.stack.ppScatterGather;
    sh.paramGatherOverlap = p.stack.paramGatherOverlap;
    sh.tpCommOverlap = p.stack.tpCommOverlap;
  } else if (const ServingSpec *sv = p.serving ? &*p.serving : nullptr) {
    sh.seq = 1; // a step's shapes are set per step (buildServeBody, serveAttention)
    sh.kvBytes = bytesOf(sv->kvPrecision);
  } else {
    const InferenceSpec &i = *p.inference;
    sh.flash = i.flashAttention;
    sh.b = i.batch;
    sh.seq = i.prefill;
    sh.decodeTokens = i.decode;
    sh.decodeSamples = i.decodeSamples;
    sh.kvBytes = bytesOf(i.kvPrecision);
  }
  const ir::Layout &l = sh.layout;
  sh.s = sh.seq / l.cp;
  sh.tokens = sh.b * sh.s;
  sh.kvTokens = sh.s * l.cp;
  const ModelSpec &m = sh.model;
  sh.headsLocal = m.heads / l.tp;
  // Fewer KV heads than TP ranks: each rank keeps one replicated KV head.
  sh.kvLocal = std::max<int64_t>(1, m.kvHeads / l.tp) * m.headDim;
  sh.ffnLocal = m.ffn * (m.gated() ? 2 : 1) / l.tp;
  return sh;
}

} // namespace rapid::lower
