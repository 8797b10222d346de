//===- Replay.cpp - A profiled job on the experiment's GPU and network -----===//
//
// `replay { trace = "dir"; }`: the per-rank Kineto traces replayed as
// `rapid-trace replay` does (docs/trace-replay.md), with what the experiment
// changes: its gpu (device work moved by the compute model when the profile
// names the gpu it ran on), its network and explicit link faults (with
// `collectives = network`). The step is the slowest rank's; the breakdown is
// rank 0's. A fault set's `random` sections are Monte Carlo studies over
// the same profile: each distinct draw replays it again with those faults
// on top of the explicit ones (the traces are read once).
//===----------------------------------------------------------------------===//

#include "Workload.h"

#include "rapid/Driver/GpuScale.h"
#include "rapid/Driver/TensorParallel.h"
#include "rapid/Emit/RuntimeInputs.h"
#include "rapid/Profile/Replay.h"

#include <fmt/format.h>

namespace rapid::run {

llvm::Expected<RunResult> runReplay(const ExperimentPoint &point, unsigned jobs) {
  const ReplaySpec &spec = *point.replay;
  profile::ReadOptions ro;
  ro.step = spec.step;
  llvm::Expected<profile::TraceSet> set = profile::loadTraceSet(spec.trace, ro);
  if (!set) return set.takeError();
  profile::ReplayOptions opts;
  opts.profiledStarts = spec.start == ReplayStart::Profiled;
  if (point.profiledGpu && point.profiledGpu->name != point.gpu.name)
    opts.deviceScale = profile::gpuScale(*point.profiledGpu, point.gpu);
  std::vector<std::string> dataParallel;
  for (llvm::StringRef rest = spec.dataParallel; !rest.empty();) {
    auto [item, tail] = rest.split(',');
    if (!item.trim().empty()) dataParallel.push_back(item.trim().str());
    rest = tail;
  }
  if (spec.tensorParallel && point.profiledGpu)
    if (llvm::Error e = profile::reshardTensorParallel(
            *set, int(spec.tensorParallel), *point.profiledGpu, dataParallel,
            spec.weakScaling ? int(std::min<int64_t>(point.network.gpus, INT32_MAX)) : 0))
      return e;
  if (spec.weakScaling && !spec.tensorParallel && int64_t(set->ranks.size()) != point.network.gpus)
    if (llvm::Error e =
            profile::scaleWorld(*set, int(std::min<int64_t>(point.network.gpus, INT32_MAX)), dataParallel))
      return llvm::createStringError(fmt::format("network '{}' has {} GPUs for a trace of {} ranks: {}",
                                                 point.network.name, point.network.gpus, set->profiledWorld,
                                                 llvm::toString(std::move(e))));
  if (spec.tensorParallel && int64_t(set->ranks.size()) != point.network.gpus)
    return llvm::createStringError(fmt::format("replay.tensor_parallel = {} runs the job on {} ranks, but network '{}' "
                                               "has {} GPUs",
                                               spec.tensorParallel, set->ranks.size(), point.network.name,
                                               point.network.gpus));
  if (int64_t(set->ranks.size()) != point.network.gpus)
    return llvm::createStringError(fmt::format("the trace has {} ranks but network '{}' has {} GPUs{}",
                                               set->ranks.size(), point.network.name, point.network.gpus,
                                               spec.weakScaling ? "" : " (replay.weak_scaling = on runs the job "
                                                                       "weak-scaled to a multiple of its ranks)"));
  if (spec.collectives == ReplayCollectives::Network) {
    opts.network = networkSpec(point);
    opts.system = systemConfig(point);
    net::Topology topo(*opts.network);
    opts.faults = pointFaults(point, topo);
  }
  llvm::Expected<profile::ReplayResult> r = profile::replay(*set, opts);
  if (!r) return r.takeError();
  auto slowest = [](const profile::ReplayResult &res) {
    double t = 0;
    for (const profile::RankReplay &k : res.ranks) t = std::max(t, double(k.replayedNs) / 1e9);
    return t;
  };
  RunResult out;
  out.simulated = true;
  out.stepTime = slowest(*r);
  const profile::Breakdown &b = r->ranks.front().replayed;
  out.computeTime = double(b.computeNs) / 1e9;
  out.exposedComm = double(b.exposedCommNs) / 1e9;
  out.idle = double(b.idleNs) / 1e9;
  out.events = r->sim.events;
  out.simulatedRanks = int64_t(r->ranks.size());
  llvm::Expected<std::vector<FaultStudy>> studies = faultStudies(point, jobs, [&](std::vector<net::Fault> f) {
    profile::ReplayOptions sample = opts;
    sample.faults.insert(sample.faults.end(), f.begin(), f.end());
    llvm::Expected<profile::ReplayResult> s = profile::replay(*set, sample);
    if (!s) return llvm::Expected<double>(s.takeError());
    return llvm::Expected<double>(slowest(*s));
  });
  if (!studies) return studies.takeError();
  out.faultStudies = std::move(*studies);
  for (FaultStudy &f : out.faultStudies) f.baseline = out.stepTime;
  return out;
}

} // namespace rapid::run
