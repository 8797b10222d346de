//===- Activations.cpp - What each layer keeps for its backward -----------===//
//
// Korthikanti et al. 2022 (arXiv 2205.05198), Sec. 4 and Table 2, tensor by
// tensor, generalised to GQA, gated MLPs, FlashAttention and no dropout:
//   attention: LN input, QKV input, Q/K/V, the score path (softmax output,
//   dropout mask and output: 5as^2b for MHA with dropout), the output
//   projection's input and the dropout mask;  MLP: LN input, FC1 input, the
//   activation's input, FC2 input and the dropout mask.
// Tensors of shape [tokens, hidden] are split by SP; the others by TP.
// Selective recompute and FlashAttention drop the score path; full
// recompute keeps only the layer input. For GPT (MHA, GELU 4h, dropout) this
// reproduces sbh(34 + 5as/h) / t-terms of Table 2 exactly; test/Passes
// checks every recompute/SP combination against the table.
//===----------------------------------------------------------------------===//
#include "rapid/Lower/Lower.h"

#include <algorithm>

namespace rapid::lower {
namespace {

/// The score path: softmax output (and with dropout its mask and output).
double scorePath(const Shard &sh) {
  return sh.scoreElems() * (sh.model.dropout ? 2 * sh.d + 1 : sh.d);
}

double mlpStored(const Shard &sh, int64_t layer) {
  const ModelSpec &m = sh.model;
  double T = double(sh.tokens), d = sh.d;
  if (!sh.isMoeLayer(layer))
    return d * T * (sh.ffnLocal + double(m.ffn) / sh.t());
  double routed = T * m.topK * m.capacityFactor;
  double f1 = double(m.expertFfn) * (m.gated() ? 2 : 1) / sh.t(), f2 = double(m.expertFfn) / sh.t();
  return d * T * m.experts + d * routed * (m.hidden + f1 + f2); // router logits, then per routed token
}

/// What one layer's forward holds at once, nothing kept for a backward:
/// the residual stream, and the larger of attention's Q, K, V with its
/// output (and the score path without FlashAttention) and the MLP's
/// up-projection with its activation's output.
double forwardPeak(const Shard &sh) {
  double T = double(sh.tokens), d = sh.d;
  double q = double(sh.headsLocal) * sh.model.headDim;
  double attention = d * T * (2 * q + 2 * sh.kvLocal);
  attention += sh.flash ? 4.0 * sh.b * sh.headsLocal * sh.s : scorePath(sh);
  double mlp = 0;
  for (int64_t l = 0; l < sh.model.layers; ++l) mlp = std::max(mlp, mlpStored(sh, l));
  return d * sh.actElems() + std::max(attention, mlp);
}

} // namespace

double stageEndParams(const Shard &sh, int64_t stage) {
  const ir::Layout &L = sh.layout;
  double embedding = double(sh.model.vocab) * sh.model.hidden / sh.t(), p = 0;
  if (stage == 0) p += embedding + sh.embeddingSideParams();
  // A tied LM head is the embedding itself unless it lives on another stage.
  if (stage == L.pp - 1 && !(sh.model.tiedEmbeddings && L.pp == 1)) p += embedding;
  return p;
}

double stageParams(const Shard &sh, int64_t stage) {
  const ir::Layout &L = sh.layout;
  double p = stageEndParams(sh, stage);
  for (int64_t chunk = 0; chunk < L.virtualStages; ++chunk)
    for (int64_t l = sh.layerBegin(chunk, stage), e = sh.layerEnd(chunk, stage); l < e; ++l) p += sh.layerParams(l);
  return p;
}

/// Bytes one rank keeps for `layer`'s backward per microbatch, with no recompute.
double storedAll(const Shard &sh, int64_t layer) {
  double T = double(sh.tokens), d = sh.d, act = sh.actElems();
  double q = double(sh.headsLocal) * sh.model.headDim;
  double mask = sh.model.dropout ? 1 : 0;
  double attn = 2 * d * act + d * T * (q + 2 * sh.kvLocal) + d * T * q + mask * act;
  if (sh.flash) attn += 4.0 * sh.b * sh.headsLocal * sh.s; // FP32 log-sum-exp per row
  else attn += scorePath(sh);
  return attn + 2 * d * act + mask * act + mlpStored(sh, layer);
}

void memoryFacts(const Shard &sh, ir::Program &prog) {
  ir::MemoryFacts &mf = prog.memory;
  mf.training = sh.training;
  mf.paramBytes = sh.paramBytes;
  mf.gradBytes = sh.gradBytes;
  mf.masterBytes = sh.dtype == DType::FP32 ? 0 : 4;
  mf.optimizerBytes = sh.optimizer == Optimizer::Sgd ? 4 : 8; // momentum, or Adam's two moments (FP32)
  mf.zero = sh.zero;
  for (int64_t l = 0; l < sh.model.layers; ++l) {
    double all = storedAll(sh, l);
    double score = sh.flash ? 0 : scorePath(sh);
    if (sh.recompute == Recompute::Full) {
      mf.stored.push_back(sh.d * sh.actElems()); // the layer input only
      mf.recompute.push_back(all);
    } else if (sh.recompute == Recompute::Selective) {
      mf.stored.push_back(all - score);
      mf.recompute.push_back(score);
    } else {
      mf.stored.push_back(all);
      mf.recompute.push_back(0);
    }
  }
  // Megatron's vocabulary-parallel cross entropy keeps FP32 softmax values.
  mf.storedHead = 4.0 * sh.tokens * double(sh.model.vocab) / sh.t();
  if (!sh.training) {
    // K and V of every prompt and generated token, on this rank's heads and tokens.
    double tokens = double(sh.seq + sh.decodeTokens) / sh.layout.cp;
    double kvPerLayer = 2.0 * sh.b * tokens * sh.kvLocal * sh.kvBytes;
    // Generation samples each sequence's last token: its FP32 logits over
    // the whole vocabulary (gathered from the TP ranks for sampling).
    mf.logits = 4.0 * double(sh.b) * double(sh.model.vocab);
    mf.transient = forwardPeak(sh);
    for (int64_t s = 0; s < sh.layout.pp; ++s) mf.kvCache.push_back(kvPerLayer * sh.stageLayerCount(s));
  }
}

} // namespace rapid::lower
