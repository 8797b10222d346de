//===- Serving.cpp - One engine step of a serving run ---------------------===//
//
// A continuous-batching engine runs steps over a changing mix of requests:
// prefill chunks of some, one decode token of others. Everything but
// attention sees only the step's tokens stacked together (the GEMMs, norms,
// TP all-reduces and stage sends of `tokens` rows), so that part is lowered
// and simulated once per token count; attention depends on each request's
// context and is costed per step from the ops below, as Vidur splits a step
// (Agrawal et al., MLSys 2024). The LM head samples only the sequences that
// finish a prompt or decode a token.
//===----------------------------------------------------------------------===//
#include "rapid/Lower/Lower.h"

#include <cmath>

namespace rapid::lower {

void buildServeBody(const Shard &sh, ir::Graph &g, int64_t stage, const ir::ServeStep &step) {
  Chain c(g);
  c.dtype = sh.dtype;
  c.phase = Phase::Forward;
  c.micro = step.decodeOnly ? 1 : 0; // decode steps are units >= 1, as in an inference program
  Shard body = sh;
  body.attention = false;
  body.decodeOnly = step.decodeOnly;
  int64_t P = sh.layout.pp;
  double act = body.actElems() * sh.d;
  if (stage > 0) c.after(c.addDetached(p2p(OpKind::Recv, "pp.recv.act", stage - 1, int32_t(stage * 3), act), {}));
  if (stage == 0) embeddingForward(c, body);
  for (int64_t l = sh.layerBegin(0, stage); l < sh.layerEnd(0, stage); ++l) layerForward(c, body, l);
  c.layer = -1;
  if (stage + 1 < P)
    c.addDetached(p2p(OpKind::Send, "pp.send.act", stage + 1, int32_t((stage + 1) * 3), act), {c.last()});
}

std::vector<Op> serveAttention(const Shard &sh, const std::vector<PrefillChunk> &chunks, int64_t decodeSeqs,
                               int64_t decodeKv, int64_t decodeQueries) {
  std::vector<Op> out;
  for (const PrefillChunk &ch : chunks) {
    Shard one = sh;
    one.b = 1;
    one.s = one.tokens = ch.q;
    one.kvTokens = ch.context + ch.q;
    Op op = flashAttention(one, false);
    if (ch.context > 0) {
      // The chunk's rows see the whole cached context and a causal triangle
      // of their own: as many keys each as ctx + q/2 without a mask.
      int64_t keys = ch.context + (ch.q + 1) / 2;
      op.causal = false;
      op.shape.n = keys;
      op.flops = 4.0 * double(ch.q) * double(keys) * sh.model.headDim * double(op.shape.batch);
    }
    out.push_back(op);
  }
  if (decodeSeqs > 0) {
    Shard dec = sh;
    dec.decode = true;
    dec.b = decodeSeqs;
    dec.s = 1;
    dec.tokens = decodeSeqs;
    dec.kvTokens = std::max<int64_t>(1, std::llround(double(decodeKv) / double(decodeSeqs)));
    Op op = decodeAttention(dec);
    if (decodeQueries > decodeSeqs) { // drafts checked too: each row's products over the same cache, read once
      double rows = double(decodeQueries) / double(decodeSeqs);
      op.shape.m = std::llround(rows);
      op.flops *= rows;
    }
    out.push_back(op);
  }
  return out;
}

std::vector<Op> serveHead(const Shard &sh, int64_t sampled) {
  if (sampled == 0) return {}; // a step of prompt chunks that end no prompt
  Shard head = sh;
  head.b = head.tokens = sampled;
  head.s = 1;
  head.training = false;
  ir::Graph g;
  Chain c(g);
  c.dtype = sh.dtype;
  headForward(c, head);
  std::vector<Op> out;
  for (Op &op : g.ops)
    if (!op.isComm()) out.push_back(std::move(op));
  return out;
}

} // namespace rapid::lower
