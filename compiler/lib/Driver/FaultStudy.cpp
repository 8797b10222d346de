//===- FaultStudy.cpp - Monte Carlo over random link faults ---------------===//
//
// A `random` section draws, per sample, `count` distinct links of one
// dimension (or of all) and derates each by a draw from its distribution
// (clamped to [1 %, 100 %]), or removes it. The generator (Support/Random.h)
// gives the same faults for the same seed on every platform and library. Samples that draw the same faults
// (a constant derate over a few hundred links repeats links often) take the
// same time: each distinct draw is simulated once.
//===----------------------------------------------------------------------===//
#include "rapid/Driver/Run.h"

#include "rapid/Driver/Distributed.h"
#include "rapid/Emit/RuntimeInputs.h"
#include "rapid/Support/Random.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fmt/format.h>
#include <map>
#include <numeric>
#include <tuple>

namespace rapid {
namespace {

double draw(const Distribution &dist, Random &rng) { return std::clamp(sample(dist, rng), 0.01, 1.0); }

/// Undirected links a section draws from: each pair of nodes once.
std::vector<std::pair<uint32_t, uint32_t>> candidates(const net::Topology &topo, int dim) {
  std::vector<std::pair<uint32_t, uint32_t>> out;
  for (const net::Link &l : topo.links())
    if (l.src < l.dst && (dim < 0 || l.dim == dim)) out.push_back({l.src, l.dst});
  return out;
}

std::vector<net::Fault> drawSample(const RandomFaultSpec &rf, const std::vector<std::pair<uint32_t, uint32_t>> &links,
                                   uint64_t seed, uint64_t sample) {
  Random rng(seed * 0x100000001B3ull + sample);
  std::vector<size_t> idx(links.size());
  std::iota(idx.begin(), idx.end(), 0);
  size_t count = std::min<size_t>(size_t(rf.count), links.size());
  std::vector<net::Fault> out;
  for (size_t i = 0; i < count; ++i) { // a partial Fisher-Yates shuffle picks distinct links
    std::swap(idx[i], idx[i + rng.next() % (idx.size() - i)]);
    net::Fault f;
    f.src = links[idx[i]].first;
    f.dst = links[idx[i]].second;
    f.hard = rf.mode == FaultMode::Remove;
    if (!f.hard) {
      f.derate = draw(rf.derate, rng);
      f.extraLatencyPs = int64_t(rf.extraLatency.value() * 1e12 + 0.5);
    }
    out.push_back(f);
  }
  return out;
}

/// The faults of a draw as one value, independent of the order they were drawn in.
using DrawKey = std::vector<std::tuple<uint32_t, uint32_t, bool, bool, double, int64_t>>;
DrawKey drawKey(const std::vector<net::Fault> &faults) {
  DrawKey key;
  for (const net::Fault &f : faults) key.emplace_back(f.src, f.dst, f.directed, f.hard, f.derate, f.extraLatencyPs);
  std::sort(key.begin(), key.end());
  return key;
}

} // namespace

double FaultStudy::mean() const {
  if (times.empty()) return 0;
  // Deviations from the first sample: exact when every sample is the same.
  double deviation = 0;
  for (double t : times) deviation += t - times.front();
  return times.front() + deviation / double(times.size());
}

double FaultStudy::quantile(double q) const {
  if (times.empty()) return 0;
  std::vector<double> s = times;
  std::sort(s.begin(), s.end());
  return s[std::min(s.size() - 1, size_t(q * double(s.size() - 1) + 0.5))];
}

llvm::Expected<std::vector<FaultStudy>>
faultStudies(const ExperimentPoint &point, unsigned jobs,
             const std::function<llvm::Expected<double>(std::vector<net::Fault>)> &timeOf) {
  std::vector<FaultStudy> out;
  if (!point.faults || point.faults->random.empty()) return out;
  net::Topology topo(networkSpec(point));
  for (const RandomFaultSpec &rf : point.faults->random) {
    int dim = -1;
    for (size_t d = 0; d < point.network.dims.size(); ++d)
      if (point.network.dims[d].name == rf.links.name) dim = int(d);
    auto links = candidates(topo, dim);
    FaultStudy study;
    study.name = rf.name;
    size_t samples = size_t(rf.samples);
    study.times.assign(samples, 0);
    uint64_t seed = uint64_t(rf.seed);
    std::vector<std::vector<net::Fault>> draws;
    std::vector<size_t> firstOf(samples); // the first sample with the same draw
    std::map<DrawKey, size_t> seen;
    std::vector<size_t> distinct;
    for (size_t i = 0; i < samples; ++i) {
      draws.push_back(drawSample(rf, links, seed, i));
      auto [it, fresh] = seen.try_emplace(drawKey(draws.back()), i);
      firstOf[i] = it->second;
      if (fresh) distinct.push_back(i);
    }
    auto sample = [&](size_t k) -> llvm::Expected<std::string> {
      size_t i = distinct[k];
      llvm::Expected<double> t = timeOf(draws[i]);
      if (!t)
        return llvm::createStringError(llvm::inconvertibleErrorCode(), "random fault '%s', sample %zu: %s",
                                       rf.name.c_str(), i, llvm::toString(t.takeError()).c_str());
      study.times[i] = *t;
      return fmt::format("{:a}", *t); // hexadecimal: the same double on every rank
    };
    auto adopt = [&](size_t k, std::string time) { study.times[distinct[k]] = std::strtod(time.c_str(), nullptr); };
    if (llvm::Error e = mpi::distributedFor(distinct.size(), jobs, sample, adopt)) return e;
    for (size_t i = 0; i < samples; ++i) study.times[i] = study.times[firstOf[i]];
    out.push_back(std::move(study));
  }
  return out;
}

} // namespace rapid
