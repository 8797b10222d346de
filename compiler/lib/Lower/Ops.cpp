//===- Ops.cpp - Op builders, the chain, and shard sizes ------------------===//
#include "LowerImpl.h"

#include <cmath>

namespace rapid::lower {

uint32_t Chain::add(Op op) {
  op.phase = phase, op.layer = layer, op.micro = micro, op.dtype = dtype;
  if (lastIdx != kNone) op.deps.push_back(lastIdx);
  op.deps.insert(op.deps.end(), pending.begin(), pending.end());
  pending.clear();
  lastIdx = g.add(std::move(op));
  return lastIdx;
}

uint32_t Chain::addDetached(Op op, std::vector<uint32_t> deps) {
  op.phase = phase, op.layer = layer, op.micro = micro, op.dtype = dtype;
  op.deps = std::move(deps);
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
  // Adam: read master, m, v, grad; write master, m, v and the 16-bit copy
  // (30 B); 14 FLOPs per parameter.
  return pointwise(OpKind::Optimizer, "optimizer.adam", params, 14, 30, 1);
}

int64_t Shard::stageLayerCount(int64_t stage) const {
  int64_t n = 0;
  for (int64_t c = 0; c < layout.virtualStages; ++c) n += layerEnd(c, stage) - layerBegin(c, stage);
  return n;
}

double Shard::layerParams(int64_t layer) const {
  const ModelSpec &m = model;
  double h = double(m.hidden);
  double attn = h * (double(headsLocal) * m.headDim + 2.0 * kvLocal) + double(headsLocal) * m.headDim * h;
  double matrices = m.gated() ? 3 : 2;
  double mlp = isMoeLayer(layer)
                   ? double(m.experts / layout.ep) * matrices * h * double(m.expertFfn) / double(t()) + h * m.experts
                   : matrices * h * double(m.ffn) / double(t());
  return attn + mlp + 2 * normParams(); // two norms, replicated
}

Shard makeShard(const ExperimentPoint &p) {
  Shard sh;
  sh.model = p.model;
  const ParallelSpec &par = p.parallel;
  ir::Layout &l = sh.layout;
  l.tp = par.tp, l.cp = par.cp, l.pp = par.pp, l.dp = par.dp, l.ep = par.ep;
  l.sp = par.sp;
  sh.training = p.isTraining();
  sh.dtype = p.precision();
  sh.d = sh.kvBytes = bytesOf(sh.dtype);
  if (const TrainingSpec *t = p.training ? &*p.training : nullptr) {
    sh.flash = t->flashAttention;
    sh.b = t->microBatch;
    sh.seq = t->seq;
    l.virtualStages = t->virtualStages;
    l.microbatches = t->globalBatch / (sh.b * l.dp);
    sh.recompute = t->recompute;
    sh.optimizer = t->optimizer;
    sh.zero = t->fsdp ? 3 : t->zero;
    sh.gradBucket = t->gradBucket.value();
  } else {
    const InferenceSpec &i = *p.inference;
    sh.flash = i.flashAttention;
    sh.b = i.batch;
    sh.seq = i.prefill;
    sh.decodeTokens = i.decode;
    sh.decodeSamples = i.decodeSamples;
    sh.kvBytes = bytesOf(i.kvPrecision);
  }
  int64_t chunks = l.pp * l.virtualStages;
  int64_t first = par.firstStageLayers, last = par.lastStageLayers;
  int64_t middle = l.pp - (first > 0) - (last > 0);
  int64_t even = middle > 0 ? (sh.model.layers - first - last) / middle : 0;
  sh.chunkStart.push_back(0);
  for (int64_t i = 0; i < chunks; ++i) {
    bool uneven = first > 0 || last > 0;
    int64_t n = !uneven ? sh.model.layers / chunks : i == 0 && first > 0 ? first : i == chunks - 1 && last > 0 ? last : even;
    sh.chunkStart.push_back(sh.chunkStart.back() + n);
  }
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
