//===- LayoutPass.cpp - Degrees, stages and ranks of a point --------------===//
//
// The first pass: how the point's parallel degrees split the work. Layers
// go to pipeline stages evenly, or with Megatron-LM's first/last stage
// counts; with interleaving each stage holds `virtual_stages` chunks (chunk
// c of stage s is model chunk c*pp + s) that split the stage's layers.
// Ranks are numbered over the network with dimension 0 fastest, and the degrees lie over that numbering
// in the order the experiment's `map` statements give (the dimensions'
// order, and inside one `map` the degrees as written, first fastest);
// without maps, Megatron-LM's order: tp fastest, then cp, dp, pp.
//===----------------------------------------------------------------------===//
#include "rapid/Passes/Pipeline.h"

#include <algorithm>

namespace rapid {
namespace {

using ir::Group;

/// Layers of each stage: an even share, or Megatron-LM's first/last stage
/// counts with an even share of the rest on the others.
int64_t stageLayerCount(const ir::Layout &l, const ExperimentPoint &p, int64_t stage) {
  int64_t layers = p.model.layers, first = p.parallel.firstStageLayers, last = p.parallel.lastStageLayers;
  if (first == 0 && last == 0) return layers / l.pp;
  if (stage == 0 && first > 0) return first;
  if (stage == l.pp - 1 && last > 0) return last;
  int64_t middle = l.pp - (first > 0) - (last > 0);
  return (layers - first - last) / middle;
}

/// A stage's layers over its chunks: an even share each; when they do not
/// divide, the first stage's short chunks are its earliest (the first holds
/// the embedding) and every other stage's its latest (the last stage's last
/// chunk holds the LM head and the loss). Llama 3 405B's 126 layers on 16
/// stages of 8 chunks, one layer short on each end stage, so leave the
/// embedding and the head alone in a chunk.
int64_t chunkLayerCount(const ir::Layout &l, int64_t stageLayers, int64_t stage, int64_t chunk) {
  int64_t v = l.virtualStages, base = stageLayers / v, longer = stageLayers % v;
  bool isLonger = stage == 0 ? chunk >= v - longer : chunk < longer;
  return base + (isLonger ? 1 : 0);
}

std::vector<int64_t> chunkStarts(const ir::Layout &l, const ExperimentPoint &p) {
  std::vector<int64_t> starts{0};
  for (int64_t i = 0; i < l.pp * l.virtualStages; ++i) {
    int64_t stage = i % l.pp, chunk = i / l.pp; // model chunk i is chunk i/pp of stage i%pp
    starts.push_back(starts.back() + chunkLayerCount(l, stageLayerCount(l, p, stage), stage, chunk));
  }
  return starts;
}

Group groupNamed(const std::string &n) {
  return n == "tp" ? Group::TP : n == "cp" ? Group::CP : n == "dp" ? Group::DP : Group::PP;
}

std::vector<Group> rankOrder(const ExperimentPoint &p) {
  std::vector<Group> order;
  // Maps in the order of their first dimension in the network.
  auto dimIndex = [&](const std::string &d) {
    for (size_t i = 0; i < p.network.dims.size(); ++i)
      if (p.network.dims[i].name == d) return i;
    return p.network.dims.size();
  };
  std::vector<const DegreeMapping *> maps;
  for (const DegreeMapping &m : p.mapping) maps.push_back(&m);
  std::stable_sort(maps.begin(), maps.end(),
                   [&](auto *a, auto *b) { return dimIndex(a->dims.front()) < dimIndex(b->dims.front()); });
  for (const DegreeMapping *m : maps)
    for (const std::string &d : m->degrees) order.push_back(groupNamed(d));
  // The degrees no map places follow in rank_order's order.
  bool ppFirst = p.parallel.rankOrder == RankOrder::PpFirst;
  for (Group g : {Group::TP, Group::CP, ppFirst ? Group::PP : Group::DP, ppFirst ? Group::DP : Group::PP})
    if (std::find(order.begin(), order.end(), g) == order.end()) order.push_back(g);
  return order;
}

} // namespace

void layoutPass(ir::Program &prog, const ExperimentPoint &p) {
  prog.experiment = p.experiment;
  ir::Layout &l = prog.layout;
  const ParallelSpec &par = p.parallel;
  l.tp = par.tp, l.cp = par.cp, l.pp = par.pp, l.dp = par.dp, l.ep = par.ep;
  l.sp = par.sp;
  l.shard = l.dp;
  if (p.training) {
    if (p.training->shardGroup > 0) l.shard = p.training->shardGroup;
    l.virtualStages = p.training->virtualStages;
    l.microbatches = p.training->globalBatch / (p.training->microBatch * l.dp);
  }
  l.chunkStart = chunkStarts(l, p);
  l.rankOrder = rankOrder(p);
  l.dimSizes.clear();
  for (const DimensionSpec &d : p.network.dims) l.dimSizes.push_back(d.size);
}

} // namespace rapid
