//===- TailProbe.cpp - Gradient buckets against the last backward ---------===//
//
// The tail probe (Hierarchical.h, tailProbeProgram): microbatch 0's
// backward blocks with the buckets a tail issues beside them, and what they
// add to each block's probed time.
//===----------------------------------------------------------------------===//
#include "Hierarchical.h"
#include "Symmetry.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace rapid::run {

using ir::Op;
using ir::OpKind;

namespace {

/// Which ops of `g` are gradient buckets: data-parallel reductions after a
/// backward block's op or after another bucket (a hybrid shard's all-reduce
/// after its reduce-scatter); not ZeRO-3's parameter gathers, which wait on
/// the layer two gathers back. With `lastOnly`, the last microbatch's only:
/// ZeRO-2/3 reduce every microbatch's gradients, each as the last one's do,
/// so the tail probe runs the last microbatch's and its delays stand for
/// every microbatch's (tailMicros).
std::vector<uint8_t> buckets(const ir::Graph &g, bool lastOnly) {
  int32_t lastMicro = 0;
  for (const Op &op : g.ops) lastMicro = std::max(lastMicro, op.micro);
  std::vector<uint8_t> out(g.ops.size(), 0);
  for (size_t i = 0; i < g.ops.size(); ++i)
    if (isDataParallel(g.ops[i]) && g.ops[i].kind != OpKind::AllGather)
      for (uint32_t d : g.ops[i].deps) {
        std::optional<BlockKey> k = blockOf(g.ops[d]);
        if (out[d] || (k && k->backward && (!lastOnly || g.ops[d].micro == lastMicro))) out[i] = 1;
      }
  return out;
}

} // namespace

std::vector<std::set<int32_t>> tailMicros(const ir::Program &prog) {
  std::vector<std::set<int32_t>> out(prog.stages.size());
  for (const ir::Graph &g : prog.stages) {
    std::vector<uint8_t> b = buckets(g, /*lastOnly=*/false);
    for (size_t i = 0; i < g.ops.size(); ++i)
      if (b[i])
        for (uint32_t d : g.ops[i].deps)
          if (!b[d]) out[g.stage].insert(g.ops[d].micro);
  }
  return out;
}

ir::Program tailProbeProgram(const ir::Program &prog, size_t maxLayers, const LayerCopies *copies) {
  ir::Program probe = emptyStages(prog);
  for (const ir::Graph &g : prog.stages) {
    ir::Graph &out = probe.stages[g.stage];
    std::vector<uint8_t> b = buckets(g, /*lastOnly=*/true);
    std::vector<uint32_t> newIdx(g.ops.size(), UINT32_MAX);
    std::map<BlockKey, uint32_t> lastOf; // microbatch 0's blocks: their last op in the probe
    auto backwardBlock = [](const Op &op, const std::optional<BlockKey> &k) {
      return k && k->backward && op.micro == 0 && op.kind != OpKind::Block;
    };
    // Layers in the order the backward runs them: a model chunk's descend
    // one by one; each chunk's first `maxLayers` are probed, and two of each
    // kind (settleTail compares them).
    std::set<int32_t> probed;
    {
      int32_t current = -1, inChunk = 0;
      std::map<int32_t, int> ofKind;
      for (const Op &op : g.ops)
        if (std::optional<BlockKey> k = blockOf(op); backwardBlock(op, k) && k->part == 0 && op.layer != current) {
          inChunk = op.layer == current - 1 ? inChunk + 1 : 1;
          current = op.layer;
          int &seen = ofKind[copies ? copies->at(g.stage).at(op.layer) : 0];
          bool probing = size_t(inChunk) <= maxLayers || (copies && seen < 2);
          seen += probing;
          if (probing) probed.insert(op.layer);
        }
    }
    // The layer probe ran the probed gathers beside the layers: so does the
    // tail, beside the backward it probes, or its buckets' delays would be
    // measured against blocks that saw contention the tail leaves out.
    auto tailGather = [&](const Op &op) {
      return op.micro == 0 && op.phase != ir::Phase::Forward && probedGather(prog, op) && probed.count(op.layer);
    };
    std::vector<uint32_t> limit = gatherLimits(g, tailGather);
    uint32_t lastOther = UINT32_MAX; // the tail's last op that is not a gather
    for (size_t i = 0; i < g.ops.size(); ++i) {
      const Op &op = g.ops[i];
      std::optional<BlockKey> k = blockOf(op);
      bool block = backwardBlock(op, k);
      if (block && k->part == 0 && !probed.count(op.layer)) continue;
      if (tailGather(op)) {
        newIdx[i] = out.add(limitedGather(op, limit[i], newIdx));
        continue;
      }
      if (!block && !b[i]) continue;
      Op copy = op;
      copy.deps.clear();
      bool cut = false;     // a bucket of a layer left out
      bool ordered = false; // after another op, not only a gather
      for (uint32_t d : op.deps) {
        uint32_t to = newIdx[d];
        if (b[i] && !b[d]) { // the block a tail finished stands for microbatch 0's
          std::optional<BlockKey> dk = blockOf(g.ops[d]);
          auto it = dk ? lastOf.find(*dk) : lastOf.end();
          to = it == lastOf.end() ? UINT32_MAX : it->second;
        }
        cut |= b[i] && to == UINT32_MAX;
        if (to != UINT32_MAX) copy.deps.push_back(to), ordered |= !tailGather(g.ops[d]);
      }
      if (cut) continue;
      if (block && !ordered && lastOther != UINT32_MAX) copy.deps.push_back(lastOther);
      newIdx[i] = lastOther = out.add(std::move(copy));
      if (block) lastOf[*k] = newIdx[i];
    }
  }
  return probe;
}

bool bucketsOverlapBlocks(const ir::Program &tailProbe) {
  for (const ir::Graph &g : tailProbe.stages) {
    uint32_t lastBlock = 0;
    for (uint32_t i = 0; i < g.ops.size(); ++i)
      if (!isDataParallel(g.ops[i])) lastBlock = i;
    for (const Op &op : g.ops)
      if (isDataParallel(op))
        for (uint32_t d : op.deps)
          if (!isDataParallel(g.ops[d]) && d < lastBlock) return true; // blocks run after it
  }
  return false;
}

BlockTimes tailDelays(BlockTimes measured, const BlockTimes &times) {
  for (size_t s = 0; s < measured.size(); ++s)
    for (auto &[k, t] : measured[s])
      if (auto it = times[s].find(k); it != times[s].end()) t -= it->second;
  return measured;
}

bool settleTail(BlockTimes &delays, const ir::Program &tailProbe, const LayerCopies &copies,
                const BlockTimes &times) {
  for (const ir::Graph &g : tailProbe.stages) {
    std::map<BlockKey, double> &d = delays[g.stage];
    const std::map<int32_t, int32_t> &alike = copies[g.stage];
    std::map<int32_t, std::vector<int32_t>> probed; // per kind of layer, in the order the probe ran them
    for (const Op &op : g.ops)
      if (std::optional<BlockKey> k = blockOf(op); k && k->part == 0) {
        std::vector<int32_t> &seen = probed[alike.at(op.layer)];
        if (seen.empty() || seen.back() != op.layer) seen.push_back(op.layer);
      }
    for (auto [layer, kind] : alike) {
      BlockKey key{layer, true, 0};
      if (d.count(key)) continue;
      auto it = probed.find(kind);
      if (it == probed.end() || it->second.size() < 2) return false;
      double last = d[BlockKey{it->second.back(), true, 0}];
      double before = d[BlockKey{it->second[it->second.size() - 2], true, 0}];
      auto t = times[g.stage].find(key);
      double tol = 1e-4 * (t == times[g.stage].end() ? 0 : t->second);
      if (std::abs(last - before) > tol) return false;
      d[key] = last;
    }
  }
  return true;
}

} // namespace rapid::run
