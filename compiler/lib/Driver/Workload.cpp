//===- Workload.cpp - The runtime's inputs, built in memory, and one run of them ===//
#include "Workload.h"

#include "rapid/Emit/ChakraNodes.h"
#include "rapid/Emit/RuntimeInputs.h"
#include "rapid/Network/Network.h"
#include "rapid/Report/Report.h"
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
  // Every rank of a stage runs one program: its nodes are built once and
  // shared, each rank reading the placeholders through its own tables
  // (trace::RankGraph). A rank with block times of its own (a faulted
  // probe) gets a copy with them.
  std::vector<std::shared_ptr<trace::GraphBody>> programs(prog.stages.size());
  int64_t stages = int64_t(prog.stages.size());
  for (int64_t r = 0; r < layout.ranks(); ++r) {
    trace::RankGraph rg;
    rg.file = fmt::format("{}.{}", point.experiment, r);
    rg.rank = int(r);
    if (!runs[r]) {
      sim.workload.ranks.push_back(std::move(rg));
      continue;
    }
    int64_t stage = layout.coord(r, ir::Group::PP);
    const ir::Graph &g = prog.stages[stage];
    if (!programs[stage]) {
      trace::GraphBuilder builder(rg.file, int(r));
      size_t deps = 0;
      for (const ir::Op &op : g.ops) deps += op.deps.size();
      builder.reserve(g.ops.size(), deps);
      for (size_t i = 0; i < g.ops.size(); ++i)
        builder.add(emit::programNode(g.ops[i], i, g, r, layout, groups), g.ops[i].name, g.ops[i].deps);
      llvm::Expected<trace::RankGraph> built = builder.finish();
      if (!built) return built.takeError();
      programs[stage] = built->body;
    }
    rg.body = programs[stage];
    emit::fillRankTables(rg, r, stages, layout, groups);
    auto own = blockTimes ? blockTimes->find(r) : RankBlockTimes::const_iterator{};
    if (blockTimes && own != blockTimes->end()) {
      std::vector<trace::TraceNode> &nodes = rg.own().nodes; // node i is op i (ids are op indices)
      for (size_t i = 0; i < g.ops.size(); ++i)
        if (g.ops[i].kind == ir::OpKind::Block)
          if (auto t = own->second.find(*blockOf(g.ops[i])); t != own->second.end()) {
            double s = std::max(0.0, g.ops[i].time.value() + t->second);
            nodes[i].rapidTimeNs = std::max<int64_t>(1, std::llround(s * 1e9));
            nodes[i].durationMicros = uint64_t(std::llround(s * 1e6));
          }
    }
    sim.workload.ranks.push_back(std::move(rg));
  }
  sim.workload.prefix = point.experiment;
  return sim;
}

llvm::Expected<net::Topology> faultedTopology(const ExperimentPoint &point, const std::vector<net::Fault> &extra) {
  net::Topology topo(networkSpec(point));
  if (llvm::Error e = applyPointFaults(point, topo)) return e;
  if (!extra.empty())
    if (llvm::Error e = net::applyFaults("random faults", extra, topo)) return e;
  return topo;
}

llvm::Expected<engine::SimResult> simulate(const ir::Program &prog, const ExperimentPoint &point, Spans spans,
                                           const std::string &timeline, const std::vector<net::Fault> *extra,
                                           std::map<int, ir::Group> &kinds,
                                           const std::vector<int64_t> *active, const RankBlockTimes *blockTimes,
                                           const std::vector<int64_t> *timelineRanks) {
  llvm::Expected<net::Topology> topo = extra ? faultedTopology(point, *extra) : net::Topology(networkSpec(point));
  if (!topo) return topo.takeError();
  llvm::Expected<Simulation> sim = buildSimulation(prog, point, active, blockTimes);
  if (!sim) return sim.takeError();
  kinds = sim->rank0Kinds;
  net::Network network(*topo, net::NetMode::Congestion);
  engine::SimOptions so;
  so.recordTimeline = spans == Spans::All || !timeline.empty();
  if (spans == Spans::Rank0 || spans == Spans::StageFirsts) {
    RankLayout layout(prog.layout);
    so.recordRanks.assign(size_t(layout.ranks()), 0);
    for (int64_t s = 0; s < (spans == Spans::Rank0 ? 1 : prog.layout.pp); ++s) so.recordRanks[layout.firstRankOfStage(s)] = 1;
  }
  so.system = systemConfig(point);
  engine::Simulator simulator(sim->workload, network, sim->groups, so);
  llvm::Expected<engine::SimResult> res = simulator.run();
  if (!res) return res.takeError();
  if (!timeline.empty())
    if (llvm::Error e = report::writeTimeline(timeline, *res, sim->workload, nullptr, timelineRanks)) return e;
  return res;
}

llvm::Expected<double> finishSeconds(const ir::Program &prog, const ExperimentPoint &point,
                                     const std::vector<int64_t> &active) {
  std::map<int, ir::Group> kinds;
  std::vector<net::Fault> none;
  llvm::Expected<engine::SimResult> res = simulate(prog, point, Spans::None, "", &none, kinds, &active);
  if (!res) return res.takeError();
  return double(res->totalNs) * 1e-9;
}

llvm::Error applyPointFaults(const ExperimentPoint &point, net::Topology &topo) {
  std::vector<net::Fault> faults = pointFaults(point, topo);
  if (faults.empty()) return llvm::Error::success();
  return net::applyFaults("faults " + point.faults->name, faults, topo);
}

} // namespace rapid::run
