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

#include "Bound.h"
#include "Hierarchical.h"
#include "Probes.h"
#include "SimMemo.h"
#include "Symmetry.h"
#include "Workload.h"

#include "rapid/Emit/RuntimeInputs.h"
#include "rapid/Engine/Simulator.h"
#include "rapid/IR/Printer.h"
#include "rapid/Network/NetworkConfig.h"
#include "rapid/Passes/Pipeline.h"
#include "rapid/IR/RankLayout.h"
#include "rapid/Spec/Specs.h"

namespace rapid {
namespace {

using run::Clean;
using run::Probe;
using run::Spans;
using run::cleanBlockTimes;
using run::cleanTailDelays;
using run::runProbe;
using run::simulate;
using run::softFaultedLinks;
using run::timeCollectives;

/// What one simulation of a point gives besides its result: rank 0's first
/// layer (training), what rank 0's communicator groups are, and how many
/// ranks the main run simulated.
struct PointSim {
  /// Asked for: only the step time (a fault sample's); the result then
  /// holds `totalNs` alone.
  bool stepOnly = false;
  /// Asked for: the ranks a timeline shows (null: every rank).
  const std::vector<int64_t> *timelineRanks = nullptr;
  std::pair<double, double> layer{0, 0};
  std::map<int, ir::Group> kinds;
  int64_t ranks = 0;
  std::string replayed = "none"; ///< the pipeline level's collectives replayed at their time alone
  /// Hierarchical runs: rank 0's blocks in the layer probe, which the
  /// pipeline level runs as single ops (trainingFigures splits them).
  std::optional<run::BlockShares> blocks;
  /// Asked for: the step's lower bound (Bound.h); filled where it is known.
  bool wantBound = false;
  std::optional<double> bound;
};

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
    case ir::Group::DPCP:
    case ir::Group::Shard:
    case ir::Group::Replica: out.dp += s; break;
    case ir::Group::EP: out.ep += s; break;
    case ir::Group::None: break;
    }
  }
  return out;
}

/// Rank 0's figures in the layer probe (`kinds`: the probe's groups).
run::BlockShares blockShares(const engine::RankResult &probe, const std::map<int, ir::Group> &kinds) {
  return {double(probe.computeNs + probe.exposedCommNs) * 1e-9, exposedByGroup(probe, kinds)};
}

/// A hierarchical run's pipeline level runs each layer block as one op, so
/// rank 0's compute there holds the blocks' own TP, CP and EP waits: moved to
/// those groups in the shares rank 0's blocks had in the layer probe.
void splitBlocks(RunResult &r, const run::BlockShares &blocks) {
  if (blocks.busy <= 0) return;
  const ExposedByGroup &in = blocks.exposed;
  double compute = r.computeTime; // the blocks', with the few ops outside them (the optimizer step)
  for (auto [share, to] : {std::pair{in.tp, &r.exposedByGroup.tp}, {in.cp, &r.exposedByGroup.cp},
                           {in.ep, &r.exposedByGroup.ep}}) {
    double moved = compute * share / blocks.busy;
    *to += moved;
    r.computeTime -= moved;
    r.exposedComm += moved;
  }
}

void trainingFigures(RunResult &r, const engine::SimResult &sim, const PointSim &ps, const ir::Program &prog,
                     const ExperimentPoint &p) {
  r.stepTime = double(sim.totalNs) * 1e-9;
  const engine::RankResult &r0 = sim.ranks.front();
  r.computeTime = double(r0.computeNs) * 1e-9;
  r.exposedComm = double(r0.exposedCommNs) * 1e-9;
  r.exposedByGroup = exposedByGroup(r0, ps.kinds);
  if (ps.blocks) splitBlocks(r, *ps.blocks);
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
  // Each of the dp replicas generates its own batch at the same pace.
  r.tokensPerSecond = steps > 0 ? double(p.inference->batch * p.parallel.dp) * steps / decode : 0;
}

} // namespace

namespace {

/// Ops of all ranks: what the flattened simulation would execute (a layer
/// block counts as the ops of microbatch 0 it stands for).
double flattenedNodes(const ir::Program &prog) {
  double ops = 0;
  for (const ir::Graph &g : prog.stages) ops = ir::sumExpanded(g, [](const ir::Op &) { return 1.0; }, ops);
  const ir::Layout &l = prog.layout;
  return ops * double(l.ranksPerStage());
}

/// Above this many rank-ops (over all the runs of a point, fault samples
/// included) Auto simulates hierarchically: about a quarter of a CPU second
/// of flattened simulation.
constexpr double kFlattenedLimit = 2e5;

} // namespace

namespace {

/// One simulation of the point, in the chosen mode, under `extra` faults.
/// Hierarchical runs simulate the ranks that stand for all the others
/// (`reduce`) where that is exact (Symmetry.h). Under faults the pipeline
/// runs on every rank, each with its own block times: the blocks of the
/// ranks a fault can reach are probed again under it (every rank's when
/// that cannot be told exactly), the others keep their fault-free times
/// (`clean` when given: they are the same for every sample of a point).
llvm::Expected<engine::SimResult> simulatePoint(const ir::Program &prog, const ExperimentPoint &point,
                                                bool hierarchical, bool reduce, const std::string &timeline,
                                                const std::vector<net::Fault> &extra, PointSim &out,
                                                const Clean *clean = nullptr) {
  RankLayout layout(prog.layout);
  out.ranks = layout.ranks();
  if (!point.isTraining())
    return simulate(prog, point, Spans::All, timeline, &extra, out.kinds, nullptr, nullptr, out.timelineRanks);
  if (!hierarchical) {
    llvm::Expected<engine::SimResult> res =
        simulate(prog, point, Spans::Rank0, timeline, &extra, out.kinds, nullptr, nullptr, out.timelineRanks);
    if (res) out.layer = run::firstLayerTimes(run::blockTimes(prog, *res, layout));
    if (out.wantBound) out.bound = run::stepLowerBound(prog, run::computeBlockTimes(prog));
    return res;
  }
  bool faulted = !extra.empty() || (point.faults && !point.faults->links.empty());
  std::optional<std::vector<int64_t>> touched; // ranks probed again under the faults
  std::optional<net::Topology> fresh;       // fault-free
  std::optional<std::vector<uint32_t>> links; // the soft-faulted ones
  if (faulted && reduce) {
    fresh.emplace(networkSpec(point));
    llvm::Expected<std::optional<std::vector<uint32_t>>> l = softFaultedLinks(*fresh, point, extra);
    if (!l) return l.takeError();
    links = std::move(*l);
    if (links) touched = run::faultedProbe(prog, *fresh, *links);
  }
  bool everyRank = faulted && !touched; // the probe itself runs under the faults
  run::Reduction red = reduce && !everyRank ? run::reduce(prog, networkSpec(point), false) : run::Reduction{};
  auto ranks = [](const std::vector<int64_t> &set) { return set.empty() ? nullptr : &set; };
  // A fault slows the blocks of the ranks whose groups cross it: those
  // ranks keep their own times (without faults every rank of a stage runs
  // its blocks alike).
  run::BlockTimes times;
  run::RankBlockTimes own;
  if (everyRank) {
    llvm::Expected<Probe> probe = runProbe(prog, point, reduce, &extra, nullptr, out.kinds);
    if (!probe) return probe.takeError();
    if (!probe->res.ranks.empty()) out.blocks = blockShares(probe->res.ranks.front(), out.kinds);
    times = run::blockTimes(probe->prog, probe->res, layout);
    own = run::rankBlockTimes(probe->prog, probe->res, layout, times);
    run::copyLayers(times, probe->copies, &own, layout);
  } else if (clean) {
    times = clean->times;
    out.blocks = clean->blocks;
  } else {
    engine::RankResult rank0;
    llvm::Expected<run::BlockTimes> t = cleanBlockTimes(prog, point, reduce, red, out.kinds, &rank0);
    if (!t) return t.takeError();
    times = std::move(*t);
    out.blocks = blockShares(rank0, out.kinds);
    if (out.wantBound && !faulted) out.bound = run::stepLowerBound(prog, times);
  }
  if (touched && !touched->empty()) {
    llvm::Expected<Probe> hit = runProbe(prog, point, true, &extra, &*touched, out.kinds);
    if (!hit) return hit.takeError();
    own = run::rankBlockTimes(hit->prog, hit->res, layout, times);
    run::BlockTimes scratch = times;
    run::copyLayers(scratch, hit->copies, &own, layout);
  }
  run::BlockTimes shown = times; // rank 0's, as its probe timed them
  if (auto it = own.find(0); it != own.end())
    for (const auto &[k, t] : it->second) shown[0][k] += t;
  out.layer = run::firstLayerTimes(shown);
  std::optional<run::BlockTimes> tail;
  if (clean) {
    tail = clean->tail;
  } else {
    llvm::Expected<std::optional<run::BlockTimes>> t = cleanTailDelays(prog, point, reduce, everyRank ? nullptr : &times);
    if (!t) return t.takeError();
    tail = std::move(*t);
  }
  ir::Program pipeline = run::pipelineProgram(prog, times, tail ? &*tail : nullptr);
  if (!faulted && !red.pipeline.empty()) {
    using Replay = run::Reduction::Replay;
    if (red.replay != Replay::None)
      if (llvm::Error e = timeCollectives(pipeline, point, red.replay == Replay::All)) return e;
    out.ranks = int64_t(red.pipeline.size());
    out.replayed = red.replay == Replay::All ? "all" : red.replay == Replay::DataParallel ? "data_parallel" : "none";
  }
  if (links && out.stepOnly && timeline.empty())
    if (std::optional<run::PipelineClasses> classes = run::pipelineClasses(pipeline, *fresh, *links, own)) {
      engine::SimResult slowest; // the step ends with the slowest unit
      for (const std::vector<int64_t> &unit : classes->units) {
        llvm::Expected<engine::SimResult> res =
            simulate(pipeline, point, Spans::None, "", &extra, out.kinds, &unit, &own);
        if (!res) return res.takeError();
        slowest.totalNs = std::max(slowest.totalNs, res->totalNs);
      }
      return slowest;
    }
  return simulate(pipeline, point, Spans::None, timeline, &extra, out.kinds, faulted ? nullptr : ranks(red.pipeline),
                  faulted ? &own : nullptr, out.timelineRanks);
}

/// A simulation and what it gave besides, as SimMemo keeps them.
struct Simulated {
  engine::SimResult res;
  PointSim sim;
};

run::SimMemo<Simulated> &memo() {
  static run::SimMemo<Simulated> m;
  return m;
}

/// The lower bound alone (Bound.h): a flattened run's from its blocks'
/// compute ops, a hierarchical run's from its layer probe.
llvm::Expected<double> lowerBound(const ir::Program &prog, const ExperimentPoint &point, bool hierarchical,
                                  bool reduce) {
  if (!hierarchical) return run::stepLowerBound(prog, run::computeBlockTimes(prog));
  std::map<int, ir::Group> kinds;
  run::Reduction red = reduce ? run::reduce(prog, networkSpec(point), false) : run::Reduction{};
  llvm::Expected<run::BlockTimes> times = cleanBlockTimes(prog, point, reduce, red, kinds, nullptr);
  if (!times) return times.takeError();
  return run::stepLowerBound(prog, *times);
}

/// The time a run reports: step time for training, total latency for inference.
double headline(const RunResult &r, bool training) { return training ? r.stepTime : r.total; }

} // namespace

llvm::Expected<RunResult> runPoint(const ExperimentPoint &point, const RunOptions &opts) {
  if (point.serving) {
    if (!opts.timeline.empty())
      return llvm::createStringError("--timeline shows one simulated step or batch; a serving point runs thousands "
                                     "(its requests are in --output PREFIX.requests.csv)");
    return run::runServing(point);
  }
  if (point.replay) {
    if (!opts.timeline.empty())
      return llvm::createStringError("--timeline is rapid-trace's for a replay: rapid-trace replay DIR --timeline FILE");
    return run::runReplay(point, opts.jobs);
  }
  bool training = point.isTraining();
  PipelineOptions po;
  po.layerBlocks = training && opts.mode != SimMode::Flattened; // whole again below if it runs flattened
  ir::Program prog = compilePoint(point, po);
  RunResult r;
  r.memory = *prog.memoryReport;
  if (!r.memory.fits) return r;
  double runs = 1; // fault studies repeat the simulation per sample
  if (point.faults)
    for (const RandomFaultSpec &rf : point.faults->random) runs += double(rf.samples);
  r.hierarchical = training && (opts.mode == SimMode::Hierarchical || opts.mode == SimMode::HierarchicalAll ||
                                (opts.mode == SimMode::Auto && flattenedNodes(prog) * runs > kFlattenedLimit));
  bool reduce = opts.mode != SimMode::HierarchicalAll;
  bool bounded = training && point.search && !point.faults;
  if (opts.boundOnly && bounded) {
    // Microbatch 0's ops are whole in either program: no second compile.
    llvm::Expected<double> b = lowerBound(prog, point, r.hierarchical, reduce);
    if (!b) return b.takeError();
    r.lowerBound = *b;
    return r;
  }
  if (prog.layerBlocks && !r.hierarchical) prog = compilePoint(point, {});
  std::optional<Clean> clean; // what fault samples do not reach
  // Points that simulate alike share one simulation (SimMemo.h); faults and
  // timelines are a point's own.
  std::optional<run::SimKey> key;
  if (training && !point.faults && opts.timeline.empty())
    key = run::simKey(prog, net::writeNetworkJson(networkSpec(point)),
                      engine::writeSystemConfigJson(systemConfig(point)), r.hierarchical, reduce);
  auto figures = [&](std::vector<net::Fault> extra, const std::string &timeline) -> llvm::Expected<RunResult> {
    PointSim sim;
    sim.timelineRanks = opts.timelineRanks.empty() ? nullptr : &opts.timelineRanks;
    sim.wantBound = bounded;
    std::optional<Simulated> known = key ? memo().find(*key) : std::nullopt;
    llvm::Expected<engine::SimResult> res =
        known ? llvm::Expected<engine::SimResult>(std::move(known->res))
              : simulatePoint(prog, point, r.hierarchical, reduce, timeline, extra, sim, clean ? &*clean : nullptr);
    if (!res) return res.takeError();
    if (known) {
      sim = known->sim;
    } else if (key) {
      Simulated keep{*res, sim};
      keep.res.spans.clear(); // the figures read none
      memo().insert(*key, std::move(keep));
    }
    RunResult out = r;
    out.simulated = true;
    out.events = res->events;
    out.simulatedRanks = sim.ranks;
    out.replayed = sim.replayed;
    out.lowerBound = sim.bound;
    std::tie(out.layerForward, out.layerBackward) = sim.layer;
    training ? trainingFigures(out, *res, sim, prog, point) : inferenceFigures(out, *res, prog, point);
    return out;
  };
  if (r.hierarchical && point.faults && !point.faults->random.empty()) {
    std::map<int, ir::Group> kinds;
    run::Reduction red = reduce ? run::reduce(prog, networkSpec(point), false) : run::Reduction{};
    engine::RankResult rank0;
    llvm::Expected<run::BlockTimes> t = cleanBlockTimes(prog, point, reduce, red, kinds, &rank0);
    if (!t) return t.takeError();
    llvm::Expected<std::optional<run::BlockTimes>> tail = cleanTailDelays(prog, point, reduce, &*t);
    if (!tail) return tail.takeError();
    clean = Clean{std::move(*t), std::move(*tail), blockShares(rank0, kinds)};
  }
  llvm::Expected<RunResult> base = figures({}, opts.timeline);
  if (!base) return base.takeError();
  r = std::move(*base);
  // Monte Carlo over each random fault distribution, against this baseline.
  llvm::Expected<std::vector<FaultStudy>> studies = faultStudies(point, opts.jobs, [&](std::vector<net::Fault> f) {
    if (r.hierarchical) { // the step time alone: the pipeline may split into units (Symmetry.h)
      PointSim sim;
      sim.stepOnly = true;
      llvm::Expected<engine::SimResult> res = simulatePoint(prog, point, true, reduce, "", f, sim, &*clean);
      if (!res) return llvm::Expected<double>(res.takeError());
      return llvm::Expected<double>(double(res->totalNs) * 1e-9);
    }
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
