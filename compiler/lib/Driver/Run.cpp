//===- Run.cpp - Simulate one point and read off its figures --------------===//
//
// Training: the step time is the slowest rank's finish; rank 0's compute,
// exposed communication, pipeline bubble (waiting on a receive whose send
// the peer stage has not issued) and idle time make the breakdown. MFU
// counts model FLOPs the way Megatron-LM and Korthikanti et al. do (every
// matmul once, the full attention score matrix, no recompute) against the
// GPUs' dense peak.
// Inference: the timeline of the last stage's first rank gives when the
// prefill's token is out (TTFT) and how long each sampled decode step took;
// weighted by the steps they stand for they give the total and the mean
// inter-token latency.
//===----------------------------------------------------------------------===//
#include "rapid/Driver/Run.h"

#include "Hierarchical.h"
#include "Workload.h"

#include "rapid/Emit/RuntimeInputs.h"
#include "rapid/Engine/Simulator.h"
#include "rapid/IR/Printer.h"
#include "rapid/Network/Network.h"
#include "rapid/Passes/Pipeline.h"
#include "rapid/IR/RankLayout.h"
#include "rapid/Report/Report.h"
#include "rapid/Spec/Specs.h"

namespace rapid {
namespace {

ExposedByGroup exposedByGroup(const engine::RankResult &r0, const std::map<int, ir::Group> &kinds) {
  ExposedByGroup out;
  for (auto [id, ns] : r0.exposedByGroupNs) {
    auto it = kinds.find(int(id));
    ir::Group kind = id == engine::kP2pGroup ? ir::Group::PP : it != kinds.end() ? it->second : ir::Group::None;
    double s = double(ns) * 1e-9;
    switch (kind) {
    case ir::Group::TP: out.tp += s; break;
    case ir::Group::CP: out.cp += s; break;
    case ir::Group::PP: out.pp += s; break;
    case ir::Group::DP:
    case ir::Group::DPCP: out.dp += s; break;
    case ir::Group::EP: out.ep += s; break;
    case ir::Group::None: break;
    }
  }
  return out;
}

void trainingFigures(RunResult &r, const engine::SimResult &sim, const std::map<int, ir::Group> &kinds,
                     const ir::Program &prog, const ExperimentPoint &p) {
  r.stepTime = double(sim.totalNs) * 1e-9;
  const engine::RankResult &r0 = sim.ranks.front();
  r.computeTime = double(r0.computeNs) * 1e-9;
  r.exposedComm = double(r0.exposedCommNs) * 1e-9;
  r.exposedByGroup = exposedByGroup(r0, kinds);
  r.bubble = double(r0.peerWaitNs) * 1e-9;
  r.idle = double(r0.idleNs) * 1e-9;
  const GpuSpec &gpu = p.gpu;
  DType t = p.training->precision;
  double gpus = double(p.network.gpus);
  r.mfu = ir::totalFlops(prog, /*withRecompute=*/false, /*fullCausal=*/true) / (r.stepTime * gpus * gpu.peak(t).value());
  double tokens = double(p.training->globalBatch) * double(p.training->seq);
  r.tokensPerSecond = tokens / r.stepTime;
}

void inferenceFigures(RunResult &r, const engine::SimResult &sim, const ir::Program &prog, const ExperimentPoint &p) {
  RankLayout layout(prog.layout);
  int64_t lastStage = prog.layout.pp - 1, rank = layout.firstRankOfStage(lastStage);
  const ir::Graph &g = prog.stages[lastStage];
  std::vector<int64_t> endPs(prog.decode.size() + 1, 0); // per unit: last op's end
  for (const engine::Span &s : sim.spans)
    if (int64_t(s.rank) == rank) {
      int32_t unit = g.ops[s.node].micro;
      endPs[unit] = std::max(endPs[unit], s.endPs);
    }
  r.ttft = double(endPs[0]) * 1e-12;
  double decode = 0, steps = 0;
  for (size_t i = 0; i < prog.decode.size(); ++i) {
    decode += prog.decode[i].weight * double(endPs[i + 1] - endPs[i]) * 1e-12;
    steps += prog.decode[i].weight;
  }
  r.total = r.ttft + decode;
  r.itl = steps > 0 ? decode / steps : 0;
  r.tokensPerSecond = steps > 0 ? double(p.inference->batch) * steps / decode : 0;
}

} // namespace

namespace {

/// Ops of all ranks: what the flattened simulation would execute.
double flattenedNodes(const ir::Program &prog) {
  double ops = 0;
  for (const ir::Graph &g : prog.stages) ops += double(g.ops.size());
  const ir::Layout &l = prog.layout;
  return ops * double(l.ranksPerStage());
}

/// Above this many rank-ops (over all the runs of a point, fault samples
/// included) Auto simulates hierarchically: a few seconds of flattened
/// simulation on one core.
constexpr double kFlattenedLimit = 2e6;

/// Which spans a simulation keeps: none, rank 0's (the first layer's times)
/// or every rank's (inference figures, the hierarchical probe).
enum class Spans { None, Rank0, All };

/// Simulates `prog` on the point's network with its faults and `extra` ones.
/// `kinds` receives what rank 0's communicator groups are.
llvm::Expected<engine::SimResult> simulate(const ir::Program &prog, const ExperimentPoint &point, Spans spans,
                                           const std::string &timeline, const std::vector<net::Fault> &extra,
                                           std::map<int, ir::Group> &kinds) {
  net::Topology topo(networkSpec(point));
  if (llvm::Error e = run::applyPointFaults(point, topo)) return e;
  if (!extra.empty())
    if (llvm::Error e = net::applyFaults("random faults", extra, topo)) return e;
  llvm::Expected<run::Simulation> sim = run::buildSimulation(prog, point);
  if (!sim) return sim.takeError();
  kinds = sim->rank0Kinds;
  net::Network network(topo, net::NetMode::Congestion);
  engine::SimOptions so;
  so.recordTimeline = spans == Spans::All || !timeline.empty();
  so.recordRank = spans == Spans::Rank0 ? 0 : -1;
  so.system = systemConfig(point);
  engine::Simulator simulator(sim->workload, network, sim->groups, so);
  llvm::Expected<engine::SimResult> res = simulator.run();
  if (!res) return res.takeError();
  if (!timeline.empty())
    if (llvm::Error e = report::writeTimeline(timeline, *res, sim->workload)) return e;
  return res;
}

/// One simulation of the point, in the chosen mode, under `extra` faults;
/// for training also the first layer's times (`layer`).
llvm::Expected<engine::SimResult> simulatePoint(const ir::Program &prog, const ExperimentPoint &point,
                                                bool hierarchical, const std::string &timeline,
                                                const std::vector<net::Fault> &extra, std::pair<double, double> &layer,
                                                std::map<int, ir::Group> &kinds) {
  RankLayout layout(prog.layout);
  if (!point.isTraining()) return simulate(prog, point, Spans::All, timeline, extra, kinds);
  if (!hierarchical) {
    llvm::Expected<engine::SimResult> res = simulate(prog, point, Spans::Rank0, timeline, extra, kinds);
    if (res) layer = run::firstLayerTimes(run::blockTimes(prog, *res, layout));
    return res;
  }
  ir::Program probe = run::probeProgram(prog);
  llvm::Expected<engine::SimResult> layers = simulate(probe, point, Spans::All, "", extra, kinds);
  if (!layers) return layers.takeError();
  run::BlockTimes times = run::blockTimes(probe, *layers, layout);
  layer = run::firstLayerTimes(times);
  return simulate(run::pipelineProgram(prog, times), point, Spans::None, timeline, extra, kinds);
}

/// The time a run reports: step time for training, total latency for inference.
double headline(const RunResult &r, bool training) { return training ? r.stepTime : r.total; }

} // namespace

llvm::Expected<RunResult> runPoint(const ExperimentPoint &point, const RunOptions &opts) {
  ir::Program prog = compilePoint(point, {});
  RunResult r;
  r.memory = *prog.memoryReport;
  if (!r.memory.fits) return r;
  bool training = point.isTraining();
  double runs = 1; // fault studies repeat the simulation per sample
  if (point.faults)
    for (const RandomFaultSpec &rf : point.faults->random) runs += double(rf.samples);
  r.hierarchical = training && (opts.mode == SimMode::Hierarchical ||
                                (opts.mode == SimMode::Auto && flattenedNodes(prog) * runs > kFlattenedLimit));
  auto figures = [&](std::vector<net::Fault> extra, const std::string &timeline) -> llvm::Expected<RunResult> {
    std::pair<double, double> layer{0, 0};
    std::map<int, ir::Group> kinds;
    llvm::Expected<engine::SimResult> res = simulatePoint(prog, point, r.hierarchical, timeline, extra, layer, kinds);
    if (!res) return res.takeError();
    RunResult out = r;
    out.simulated = true;
    out.events = res->events;
    std::tie(out.layerForward, out.layerBackward) = layer;
    training ? trainingFigures(out, *res, kinds, prog, point) : inferenceFigures(out, *res, prog, point);
    return out;
  };
  llvm::Expected<RunResult> base = figures({}, opts.timeline);
  if (!base) return base.takeError();
  r = std::move(*base);
  // Monte Carlo over each random fault distribution, against this baseline.
  llvm::Expected<std::vector<FaultStudy>> studies = faultStudies(point, opts.jobs, [&](std::vector<net::Fault> f) {
    llvm::Expected<RunResult> s = figures(std::move(f), "");
    if (!s) return llvm::Expected<double>(s.takeError());
    return llvm::Expected<double>(headline(*s, training));
  });
  if (!studies) return studies.takeError();
  r.faultStudies = std::move(*studies);
  for (FaultStudy &s : r.faultStudies) s.baseline = headline(r, training);
  return r;
}

} // namespace rapid
