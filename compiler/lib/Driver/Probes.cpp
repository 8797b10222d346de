//===- Probes.cpp - The hierarchical run's probes and timed collectives ---===//
#include "Probes.h"

#include "SimMemo.h"

#include "rapid/Emit/RuntimeInputs.h"
#include "rapid/IR/RankLayout.h"
#include "rapid/Network/NetworkConfig.h"

namespace rapid::run {

llvm::Error timeCollectives(ir::Program &pipeline, const ExperimentPoint &point, bool all) {
  static SimMemo<Seconds> timed; // across the points of a run: a search's share most
  RankLayout layout(pipeline.layout);
  std::map<CollectiveKey, Seconds> known;
  std::string network = net::writeNetworkJson(networkSpec(point));
  std::string system = engine::writeSystemConfigJson(systemConfig(point));
  for (ir::Graph &g : pipeline.stages)
    for (ir::Op &op : g.ops) {
      if (!isCollective(op) || !(all || isDataParallel(op))) continue;
      auto [it, fresh] = known.try_emplace(CollectiveKey{op.kind, op.group, op.commBytes});
      if (fresh) {
        std::vector<int64_t> members = layout.members(layout.firstRankOfStage(g.stage), op.group);
        SimKey key = collectiveKey(op, members, network, system);
        if (std::optional<Seconds> t = timed.find(key)) {
          it->second = *t;
        } else {
          std::map<int, ir::Group> kinds;
          llvm::Expected<engine::SimResult> res =
              simulate(collectiveProgram(pipeline, op, g.stage), point, Spans::None, "", nullptr, kinds, &members);
          if (!res) return res.takeError();
          it->second = Seconds(std::max<double>(1, double(res->totalNs)) * 1e-9);
          timed.insert(key, it->second);
        }
      }
      op.time = it->second;
    }
  return llvm::Error::success();
}

llvm::Expected<std::optional<std::vector<uint32_t>>> softFaultedLinks(const net::Topology &clean,
                                                                      const ExperimentPoint &point,
                                                                      const std::vector<net::Fault> &extra) {
  llvm::Expected<net::Topology> faulty = faultedTopology(point, extra);
  if (!faulty) return faulty.takeError();
  std::vector<uint32_t> out;
  for (size_t i = 0; i < clean.links().size(); ++i) {
    const net::Link &a = clean.links()[i], &b = faulty->links()[i];
    if (b.failed) return std::nullopt;
    if (a.bytesPerNs != b.bytesPerNs || a.latencyPs != b.latencyPs) out.push_back(uint32_t(i));
  }
  return out;
}

llvm::Expected<Probe> runProbe(const ir::Program &prog, const ExperimentPoint &point, bool copy,
                               const std::vector<net::Fault> *faults, const std::vector<int64_t> *active,
                               std::map<int, ir::Group> &kinds) {
  Probe p;
  // With gathers in the probe every layer runs: each meets the gather of
  // the layer after the next, the steady state a copied layer would miss.
  p.copies = copy && !probesGathers(prog) ? probeLayers(prog) : LayerCopies{};
  p.prog = probeProgram(prog, p.copies.empty() ? nullptr : &p.copies);
  llvm::Expected<engine::SimResult> res = simulate(p.prog, point, Spans::All, "", faults, kinds, active);
  if (res && !p.copies.empty() && !blocksInStep(p.prog, *res, RankLayout(prog.layout))) {
    p.copies.clear();
    p.prog = probeProgram(prog);
    res = simulate(p.prog, point, Spans::All, "", faults, kinds, active);
  }
  if (!res) return res.takeError();
  p.res = std::move(*res);
  return p;
}

llvm::Expected<BlockTimes> cleanBlockTimes(const ir::Program &prog, const ExperimentPoint &point, bool reduce,
                                           const Reduction &red, std::map<int, ir::Group> &kinds,
                                           engine::RankResult *rank0) {
  llvm::Expected<Probe> probe =
      runProbe(prog, point, reduce, nullptr, red.probe.empty() ? nullptr : &red.probe, kinds);
  if (!probe) return probe.takeError();
  if (rank0 && !probe->res.ranks.empty()) *rank0 = probe->res.ranks.front();
  RankLayout layout(prog.layout);
  BlockTimes times = blockTimes(probe->prog, probe->res, layout);
  copyLayers(times, probe->copies, nullptr, layout);
  if (!red.probeStageOf.empty()) copyRepresented(times, prog, red.probeStageOf);
  return times;
}

llvm::Expected<std::optional<BlockTimes>> cleanTailDelays(const ir::Program &prog, const ExperimentPoint &point,
                                                          bool reduce, const BlockTimes *clean) {
  // First the tail's first few layers of each model chunk: where the buckets meet
  // later layers as they met these, the rest follow (settleTail).
  constexpr size_t kFirstLayers = 4;
  LayerCopies copies = probeLayers(prog);
  ir::Program tail = tailProbeProgram(prog, kFirstLayers, &copies);
  net::NetworkSpec net = networkSpec(point);
  if (!bucketsOverlapBlocks(tail) || !bucketsMeetBlocks(tail, net)) return std::nullopt;
  std::map<int, ir::Group> kinds;
  BlockTimes probed;
  if (!clean) {
    Reduction red = reduce ? run::reduce(prog, net, false) : Reduction{};
    llvm::Expected<BlockTimes> t = cleanBlockTimes(prog, point, reduce, red, kinds);
    if (!t) return t.takeError();
    probed = std::move(*t);
    clean = &probed;
  }
  // Layouts of a search share many tail probes (about half of the 64-GPU
  // case study's): what one simulated, the others read.
  static SimMemo<BlockTimes> timed;
  std::string network = net::writeNetworkJson(net), system = engine::writeSystemConfigJson(systemConfig(point));
  auto delaysOf = [&](const ir::Program &tail) -> llvm::Expected<BlockTimes> {
    TailReduction red = reduce ? run::reduceTail(tail, net) : TailReduction{};
    SimKey key = simKey(tail, network, system, true, reduce);
    std::optional<BlockTimes> measured = timed.find(key);
    if (!measured) {
      llvm::Expected<engine::SimResult> res =
          simulate(tail, point, Spans::StageFirsts, "", nullptr, kinds, red.ranks.empty() ? nullptr : &red.ranks);
      if (!res) return res.takeError();
      measured = blockTimes(tail, *res, RankLayout(prog.layout));
      timed.insert(key, *measured);
    }
    BlockTimes delays = tailDelays(std::move(*measured), *clean);
    if (!red.stageOf.empty()) copyRepresented(delays, tail, red.stageOf);
    return delays;
  };
  llvm::Expected<BlockTimes> delays = delaysOf(tail);
  if (delays && !settleTail(*delays, tail, copies, *clean))
    delays = delaysOf(tailProbeProgram(prog));
  if (!delays) return delays.takeError();
  return std::move(*delays);
}

} // namespace rapid::run
