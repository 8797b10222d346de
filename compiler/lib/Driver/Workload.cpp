//===- Workload.cpp - The runtime's inputs, built in memory ---------------===//
#include "Workload.h"

#include "rapid/Emit/ChakraNodes.h"
#include "rapid/Emit/RuntimeInputs.h"
#include "rapid/Network/Faults.h"
#include "rapid/IR/RankLayout.h"

#include <cmath>
#include <fmt/format.h>

namespace rapid::run {

llvm::Expected<Simulation> buildSimulation(const ir::Program &prog, const ExperimentPoint &point,
                                           const std::vector<int64_t> *active, const RankBlockTimes *blockTimes) {
  RankLayout layout(prog.layout);
  emit::Groups groups(prog, layout, active);
  std::vector<uint8_t> runs(size_t(layout.ranks()), active ? 0 : 1);
  if (active)
    for (int64_t r : *active) runs[r] = 1;
  Simulation sim;
  sim.groups = groups.runtimeGroups();
  sim.rank0Kinds = groups.kindsOf(0);
  for (int64_t r = 0; r < layout.ranks(); ++r) {
    const ir::Graph &g = prog.stages[layout.coord(r, ir::Group::PP)];
    trace::GraphBuilder builder(fmt::format("{}.{}", point.experiment, r), int(r));
    auto own = blockTimes ? blockTimes->find(r) : RankBlockTimes::const_iterator{};
    for (size_t i = 0; runs[r] && i < g.ops.size(); ++i) {
      trace::TraceNode n = emit::traceNode(g.ops[i], i, r, layout, groups);
      if (blockTimes && own != blockTimes->end() && g.ops[i].kind == ir::OpKind::Block)
        if (auto t = own->second.find(*blockOf(g.ops[i])); t != own->second.end()) {
          double s = std::max(0.0, g.ops[i].time.value() + t->second);
          n.rapidTimeNs = std::max<int64_t>(1, std::llround(s * 1e9));
          n.durationMicros = uint64_t(std::llround(s * 1e6));
        }
      builder.add(n, g.ops[i].name, g.ops[i].deps);
    }
    llvm::Expected<trace::RankGraph> rg = builder.finish();
    if (!rg) return rg.takeError();
    sim.workload.ranks.push_back(std::move(*rg));
  }
  sim.workload.prefix = point.experiment;
  return sim;
}

llvm::Error applyPointFaults(const ExperimentPoint &point, net::Topology &topo) {
  std::vector<net::Fault> faults = pointFaults(point, topo);
  if (faults.empty()) return llvm::Error::success();
  return net::applyFaults("faults " + point.faults->name, faults, topo);
}

} // namespace rapid::run
