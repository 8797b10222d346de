//===- Hierarchical.cpp - Layer-level timing, then the pipeline -----------===//
#include "Hierarchical.h"

#include "Symmetry.h"

#include "llvm/ADT/StringRef.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>

namespace rapid::run {

using ir::Op;
using ir::OpKind;

namespace {

/// Per (rank, block) of microbatch 0, the first start and last end of its
/// ops' spans, for the ranks `wanted` picks.
template <typename Wanted>
std::map<std::pair<int64_t, BlockKey>, std::pair<int64_t, int64_t>>
blockSpans(const ir::Program &prog, const engine::SimResult &res, const RankLayout &layout, Wanted wanted) {
  std::map<std::pair<int64_t, BlockKey>, std::pair<int64_t, int64_t>> span;
  for (const engine::Span &sp : res.spans) {
    if (!wanted(int64_t(sp.rank))) continue;
    const Op &op = prog.stages[layout.coord(sp.rank, ir::Group::PP)].ops[sp.node];
    std::optional<BlockKey> k = blockOf(op);
    if (!k || op.micro != 0) continue;
    auto [it, fresh] = span.try_emplace({int64_t(sp.rank), *k}, sp.startPs, sp.endPs);
    it->second.first = std::min(it->second.first, sp.startPs);
    it->second.second = std::max(it->second.second, sp.endPs);
  }
  return span;
}

double seconds(std::pair<int64_t, int64_t> span) { return double(span.second - span.first) * 1e-12; }

} // namespace

ir::Program emptyStages(const ir::Program &prog) {
  ir::Program out;
  out.experiment = prog.experiment;
  out.layout = prog.layout;
  for (const ir::Graph &g : prog.stages) out.stages.push_back(ir::Graph{g.stage, {}});
  return out;
}

std::optional<BlockKey> blockOf(const Op &op) {
  if (op.kind == OpKind::Send || op.kind == OpKind::Recv || op.kind == OpKind::Optimizer) return std::nullopt;
  // The pipeline transfer's TP all-gather (scatter/gather) belongs to no block.
  if (op.name.starts_with("pp.")) return std::nullopt;
  if (op.isComm() && ir::isDataParallel(op.group)) return std::nullopt;
  bool backward = op.phase == ir::Phase::Backward || op.phase == ir::Phase::Recompute;
  if (op.layer >= 0) return BlockKey{op.layer, backward, 0};
  return BlockKey{-1, backward, op.name.starts_with("embed") ? 1 : 2};
}

void appendSignature(std::string &to, const Op &op) {
  auto put = [&](const auto &v) { to.append(reinterpret_cast<const char *>(&v), sizeof v); };
  put(op.kind), put(op.phase), put(op.group), put(op.time.value()), put(op.commBytes), put(op.shape), put(op.causal), put(op.dropout);
}

LayerCopies probeLayers(const ir::Program &prog) {
  LayerCopies out(prog.stages.size());
  for (const ir::Graph &g : prog.stages) {
    std::map<int32_t, std::string> sig; // per layer: its microbatch-0 ops, as bytes
    auto put = [](std::string &to, const auto &v) { to.append(reinterpret_cast<const char *>(&v), sizeof v); };
    for (size_t i = 0; i < g.ops.size(); ++i) {
      const Op &op = g.ops[i];
      if (op.micro != 0 || op.layer < 0 || !blockOf(op)) continue;
      std::string &to = sig[op.layer];
      appendSignature(to, op);
      for (uint32_t d : op.deps) // within the layer: how far back; outside it: only that it is
        put(to, g.ops[d].layer == op.layer && g.ops[d].micro == 0 ? uint32_t(i - d) : ~0u);
      put(to, ~0u);
    }
    std::map<std::string, int32_t> first;
    for (const auto &[layer, bytes] : sig) out[g.stage][layer] = first.try_emplace(bytes, layer).first->second;
  }
  return out;
}

bool blocksInStep(const ir::Program &probe, const engine::SimResult &res, const RankLayout &layout) {
  std::map<std::pair<int64_t, BlockKey>, std::pair<int64_t, int64_t>> ends; // (stage, block) -> earliest, latest end
  for (const auto &[rk, se] : blockSpans(probe, res, layout, [](int64_t) { return true; })) {
    auto [it, fresh] = ends.try_emplace({layout.coord(rk.first, ir::Group::PP), rk.second}, se.second, se.second);
    it->second.first = std::min(it->second.first, se.second);
    it->second.second = std::max(it->second.second, se.second);
  }
  return std::all_of(ends.begin(), ends.end(), [](const auto &e) { return e.second.first == e.second.second; });
}

void copyLayers(BlockTimes &times, const LayerCopies &copies, RankBlockTimes *ranks, const RankLayout &layout) {
  auto copy = [](std::map<BlockKey, double> &blocks, const std::map<int32_t, int32_t> &layers) {
    for (auto [layer, from] : layers)
      if (layer != from)
        for (bool backward : {false, true})
          if (auto it = blocks.find(BlockKey{from, backward, 0}); it != blocks.end())
            blocks[BlockKey{layer, backward, 0}] = it->second;
  };
  if (copies.empty()) return;
  for (size_t s = 0; s < copies.size(); ++s) copy(times[s], copies[s]);
  if (ranks)
    for (auto &[rank, blocks] : *ranks) copy(blocks, copies[layout.coord(rank, ir::Group::PP)]);
}

bool probesGathers(const ir::Program &prog) {
  return prog.memory.zero >= 3 && prog.layout.shard == 1 && prog.layout.cp > 1;
}

namespace {

/// ZeRO-3's gather of one layer's parameters (SchedulePass::gatherParams).
bool layerGather(const Op &op) {
  return op.kind == OpKind::AllGather && op.layer >= 0 && ir::isDataParallel(op.group);
}

} // namespace

bool probedGather(const ir::Program &prog, const Op &op) { return layerGather(op) && probesGathers(prog); }

bool probedOp(const ir::Program &prog, const Op &op) { return blockOf(op) || probedGather(prog, op); }

std::vector<uint32_t> gatherLimits(const ir::Graph &g, llvm::function_ref<bool(const Op &)> kept) {
  std::vector<uint32_t> all, held; // every gather, in program order; the kept ones' positions in it
  for (uint32_t i = 0; i < g.ops.size(); ++i)
    if (layerGather(g.ops[i])) {
      if (kept(g.ops[i])) held.push_back(uint32_t(all.size()));
      all.push_back(i);
    }
  std::vector<uint32_t> out(g.ops.size(), UINT32_MAX);
  // The use of gather j ends with what gather j + 2 waits for.
  for (size_t k = 2; k < held.size(); ++k)
    if (size_t next = held[k - 2] + 2; next < all.size() && !g.ops[all[next]].deps.empty())
      out[all[held[k]]] = g.ops[all[next]].deps.front();
  return out;
}

Op limitedGather(const Op &gather, uint32_t limit, const std::vector<uint32_t> &newIdx) {
  Op copy = gather;
  copy.deps.clear();
  if (limit != UINT32_MAX && newIdx[limit] != UINT32_MAX) copy.deps.push_back(newIdx[limit]);
  return copy;
}

ir::Program probeProgram(const ir::Program &prog, const LayerCopies *copies) {
  ir::Program probe = emptyStages(prog);
  for (const ir::Graph &g : prog.stages) {
    ir::Graph &out = probe.stages[g.stage];
    std::vector<uint32_t> newIdx(g.ops.size(), UINT32_MAX);
    std::vector<uint32_t> limit =
        gatherLimits(g, [&](const Op &op) { return op.micro == 0 && probedGather(prog, op); });
    uint32_t lastBlockOp = UINT32_MAX; // the probe's last op that is not a gather
    for (size_t i = 0; i < g.ops.size(); ++i) {
      const Op &op = g.ops[i];
      if (op.micro != 0 || !probedOp(prog, op)) continue;
      if (copies && op.layer >= 0 && copies->at(g.stage).at(op.layer) != op.layer) continue;
      if (probedGather(prog, op)) {
        newIdx[i] = out.add(limitedGather(op, limit[i], newIdx));
        continue;
      }
      Op copy = op;
      copy.deps.clear();
      bool ordered = false; // after an op of the blocks, not only a gather
      for (uint32_t d : op.deps)
        if (newIdx[d] != UINT32_MAX) copy.deps.push_back(newIdx[d]), ordered |= !probedGather(prog, g.ops[d]);
      // What it waited for is gone (another microbatch, a receive): keep
      // program order so blocks do not overlap one another (a model chunk's
      // first layer would otherwise start beside the chunk before once its
      // gather is in).
      if (!ordered && lastBlockOp != UINT32_MAX) copy.deps.push_back(lastBlockOp);
      newIdx[i] = lastBlockOp = out.add(std::move(copy));
    }
  }
  return probe;
}

BlockTimes blockTimes(const ir::Program &prog, const engine::SimResult &res, const RankLayout &layout) {
  BlockTimes times(prog.stages.size());
  auto firstOfStage = [&](int64_t r) { return r == layout.firstRankOfStage(layout.coord(r, ir::Group::PP)); };
  for (const auto &[rk, se] : blockSpans(prog, res, layout, firstOfStage))
    times[layout.coord(rk.first, ir::Group::PP)][rk.second] = seconds(se);
  return times;
}

RankBlockTimes rankBlockTimes(const ir::Program &probe, const engine::SimResult &res, const RankLayout &layout,
                              const BlockTimes &times) {
  RankBlockTimes out;
  for (const auto &[rk, se] : blockSpans(probe, res, layout, [](int64_t) { return true; })) {
    const std::map<BlockKey, double> &stage = times[layout.coord(rk.first, ir::Group::PP)];
    auto it = stage.find(rk.second);
    double base = it == stage.end() ? 0.0 : it->second;
    if (seconds(se) != base) out[rk.first][rk.second] = seconds(se) - base;
  }
  return out;
}

std::pair<double, double> firstLayerTimes(const BlockTimes &times) {
  if (times.empty()) return {0, 0};
  const std::map<BlockKey, double> &stage0 = times.front();
  // Keys sort by layer first, so the first layer block is the lowest layer.
  auto first = std::find_if(stage0.begin(), stage0.end(), [](const auto &kt) { return kt.first.part == 0; });
  if (first == stage0.end()) return {0, 0};
  auto at = [&](bool backward) {
    auto it = stage0.find(BlockKey{first->first.layer, backward, 0});
    return it == stage0.end() ? 0.0 : it->second;
  };
  return {at(false), at(true)};
}

ir::Program pipelineProgram(const ir::Program &prog, const BlockTimes &times, const BlockTimes *tail) {
  ir::Program out = emptyStages(prog);
  out.memory = prog.memory;
  std::vector<std::set<int32_t>> tails = tail ? tailMicros(prog) : std::vector<std::set<int32_t>>(prog.stages.size());
  for (const ir::Graph &g : prog.stages) {
    ir::Graph &ng = out.stages[g.stage];
    ng.ops.reserve(g.ops.size()); // at most one op for each
    std::vector<uint32_t> newIdx(g.ops.size());
    std::map<std::pair<int32_t, BlockKey>, uint32_t> blocks; // (micro, block) -> node
    for (size_t i = 0; i < g.ops.size(); ++i) {
      const Op &op = g.ops[i];
      std::optional<BlockKey> k = blockOf(op);
      auto mapped = [&](uint32_t self) {
        llvm::SmallVector<uint32_t, 2> deps;
        for (uint32_t d : op.deps)
          if (newIdx[d] != self && std::find(deps.begin(), deps.end(), newIdx[d]) == deps.end())
            deps.push_back(newIdx[d]);
        return deps;
      };
      if (!k) {
        Op copy = op;
        copy.deps = mapped(UINT32_MAX);
        newIdx[i] = ng.add(std::move(copy));
        continue;
      }
      auto it = blocks.find({op.micro, *k});
      if (it != blocks.end()) {
        newIdx[i] = it->second;
        continue;
      }
      Op block;
      block.kind = OpKind::Block;
      block.phase = k->backward ? ir::Phase::Backward : ir::Phase::Forward;
      block.layer = k->layer;
      block.micro = op.micro;
      block.dtype = op.dtype;
      block.name = k->part == 1 ? "embed.block" : k->part == 2 ? "head.block" : "layer.block";
      auto t = times[g.stage].find(*k);
      double s = t != times[g.stage].end() ? t->second : 0;
      if (k->backward && tails[g.stage].count(op.micro))
        if (auto d = (*tail)[g.stage].find(*k); d != (*tail)[g.stage].end()) s += d->second;
      block.time = Seconds(s);
      block.bound = ir::Bound::Compute;
      block.deps = mapped(UINT32_MAX);
      uint32_t idx = ng.add(std::move(block));
      blocks[{op.micro, *k}] = idx;
      newIdx[i] = idx;
    }
  }
  return out;
}

} // namespace rapid::run
