//===- Inference.cpp - Prefill and sampled decode steps -------------------===//
//
// Serving runs the prompt through every stage (prefill), then one step per
// generated token: each sequence's newest token through every layer,
// attending over its KV cache, and back from the last stage to the first.
// Decode steps differ only in the cache length, which grows by one per
// step, so their cost is smooth in the step: we lower a few sample steps
// (first and last included, evenly spaced) and weight each by the steps it
// stands for, rather than thousands of near-identical ones.
//===----------------------------------------------------------------------===//
#include "rapid/Lower/Lower.h"

#include <cmath>

namespace rapid::lower {

std::vector<ir::DecodeSample> decodeSamples(int64_t prefill, int64_t decode, int64_t samples) {
  int64_t k = std::min(decode, samples);
  std::vector<int64_t> steps;
  for (int64_t i = 0; i < k; ++i)
    steps.push_back(k == 1 ? 1 : 1 + int64_t(std::llround(double(i) * double(decode - 1) / double(k - 1))));
  std::vector<ir::DecodeSample> out;
  for (size_t i = 0; i < steps.size(); ++i) {
    // Each sample covers the steps up to halfway to its neighbours.
    double lo = i == 0 ? 0.5 : (steps[i - 1] + steps[i]) / 2.0;
    double hi = i + 1 == steps.size() ? double(decode) + 0.5 : (steps[i] + steps[i + 1]) / 2.0;
    out.push_back({steps[i], prefill + steps[i], hi - lo});
  }
  return out;
}

void buildInferenceStage(const Shard &sh, ir::Graph &g, int64_t stage, const std::vector<ir::DecodeSample> &samples) {
  const ir::Layout &L = sh.layout;
  Chain c(g);
  c.dtype = sh.dtype;
  c.phase = Phase::Forward;
  int64_t P = L.pp;
  auto tag = [&](int kind, int64_t micro) { return int32_t((micro * P + stage) * 3 + kind); };
  for (size_t unit = 0; unit <= samples.size(); ++unit) {
    Shard step = sh;
    if (unit > 0) { // one token per sequence against `kvLength` cached ones
      step.decode = true;
      step.s = 1;
      step.tokens = sh.b;
      step.kvTokens = samples[unit - 1].kvLength / L.cp;
    }
    c.micro = int32_t(unit);
    double act = step.actElems() * sh.d;
    if (stage > 0)
      c.after(c.addDetached(p2p(OpKind::Recv, "pp.recv.act", stage - 1, tag(0, int64_t(unit)), act), {}));
    else if (unit > 0 && P > 1) // the token sampled on the last stage
      c.after(c.addDetached(p2p(OpKind::Recv, "pp.recv.token", P - 1, int32_t(unit * P * 3 + 2), 4.0 * sh.b), {}));
    if (stage == 0) embeddingForward(c, step);
    for (int64_t l = sh.layerBegin(0, stage); l < sh.layerEnd(0, stage); ++l) layerForward(c, step, l);
    c.layer = -1;
    if (stage + 1 < P) {
      c.addDetached(p2p(OpKind::Send, "pp.send.act", stage + 1, int32_t((int64_t(unit) * P + stage + 1) * 3), act),
                    {c.last()});
      continue;
    }
    headForward(c, step);
    if (P > 1 && unit < samples.size())
      c.addDetached(p2p(OpKind::Send, "pp.send.token", 0, int32_t((unit + 1) * P * 3 + 2), 4.0 * sh.b), {c.last()});
  }
}

} // namespace rapid::lower
