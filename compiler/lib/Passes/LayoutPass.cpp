//===- LayoutPass.cpp - Degrees, stages and ranks of a point --------------===//
//
// The first pass: how the point's parallel degrees split the work. Layers
// go to pipeline stages evenly, or with Megatron-LM's first/last stage
// counts; with interleaving each stage holds `virtual_stages` chunks, chunk
// c of stage s being model chunk c*pp + s. Ranks are numbered over the
// network with dimension 0 fastest, and the degrees lie over that numbering
// in the order the experiment's `map` statements give (the dimensions'
// order, and inside one `map` the degrees as written, first fastest);
// without maps, Megatron-LM's order: tp fastest, then cp, dp, pp.
//===----------------------------------------------------------------------===//
#include "rapid/Passes/Pipeline.h"

#include <algorithm>

namespace rapid {
namespace {

using ir::Group;

std::vector<int64_t> chunkStarts(const ir::Layout &l, const ExperimentPoint &p) {
  int64_t layers = p.model.layers, chunks = l.pp * l.virtualStages;
  int64_t first = p.parallel.firstStageLayers, last = p.parallel.lastStageLayers;
  bool uneven = first > 0 || last > 0;
  int64_t middle = l.pp - (first > 0) - (last > 0);
  int64_t even = middle > 0 ? (layers - first - last) / middle : 0;
  std::vector<int64_t> starts{0};
  for (int64_t i = 0; i < chunks; ++i) {
    int64_t n = !uneven ? layers / chunks : i == 0 && first > 0 ? first : i == chunks - 1 && last > 0 ? last : even;
    starts.push_back(starts.back() + n);
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
  for (Group g : {Group::TP, Group::CP, Group::DP, Group::PP}) // unmapped ones are 1
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
  if (p.training) {
    l.virtualStages = p.training->virtualStages;
    l.microbatches = p.training->globalBatch / (p.training->microBatch * l.dp);
  }
  l.chunkStart = chunkStarts(l, p);
  l.rankOrder = rankOrder(p);
  l.dimSizes.clear();
  for (const DimensionSpec &d : p.network.dims) l.dimSizes.push_back(d.size);
}

} // namespace rapid
