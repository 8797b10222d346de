//===- FaultUnits.cpp - What a soft-fault sample reaches ------------------===//
//
// Ranks joined by traffic form units; a unit whose traffic shares no link
// with another's runs as if alone, so a fault sample probes again only the
// units with a faulted link and, at the pipeline level, runs one unit of
// each kind besides (Symmetry.h). Routes are the fault-free router's, both
// ways, between every two ranks that talk.
//===----------------------------------------------------------------------===//
#include "Symmetry.h"

#include "Hierarchical.h"
#include "rapid/IR/RankLayout.h"
#include "rapid/Network/Routing.h"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <numeric>
#include <optional>
#include <set>

namespace rapid::run {

namespace {

/// Ranks joined by the traffic of the ops `kept` picks (collective groups
/// and send/receive peers), with the links that traffic can take: every
/// route, both ways, between two ranks that talk (a collective sends only
/// between its members, along the router's fault-free paths). Units whose
/// links meet would slow each other: none then.
struct Units {
  std::vector<std::vector<int64_t>> sets;    ///< ranks, ascending
  std::vector<std::vector<uint32_t>> routes; ///< per unit, its traffic's routes, link ids in a fixed order
  std::vector<int32_t> owner;                ///< per link, the unit whose traffic takes it, or -1
  /// Whether a link in `faulted` carries unit `u`'s traffic.
  bool hit(size_t u, const std::vector<uint32_t> &faulted) const {
    return std::any_of(faulted.begin(), faulted.end(), [&](uint32_t l) { return owner[l] == int32_t(u); });
  }
};

/// Routes computed at most (all pairs of every group): past this a fault
/// sample simulates every rank instead.
constexpr size_t kMaxPairs = 1 << 20;

std::optional<Units> units(const ir::Program &prog, const net::Topology &topo,
                           llvm::function_ref<bool(const ir::Op &)> kept) {
  RankLayout layout(prog.layout);
  int64_t n = layout.ranks();
  std::vector<StageTalk> talk = stageTalk(prog, kept);
  std::vector<int64_t> parent(static_cast<size_t>(n));
  std::iota(parent.begin(), parent.end(), 0);
  auto root = [&](int64_t r) {
    while (parent[r] != r) r = parent[r] = parent[parent[r]];
    return r;
  };
  // Each rank's talk, in a fixed order: its groups it leads (lowest
  // member), then its peers; a pair of ranks, both ways.
  std::vector<std::vector<std::pair<int64_t, int64_t>>> pairs(static_cast<size_t>(n));
  size_t total = 0;
  for (int64_t r = 0; r < n; ++r) {
    const StageTalk &t = talk[layout.coord(r, ir::Group::PP)];
    for (ir::Group kind : t.groups) {
      std::vector<int64_t> m = layout.members(r, kind);
      if (m.front() != r) continue; // the group's lowest member joins and lists it
      for (int64_t x : m) parent[root(x)] = root(r);
      for (int64_t a : m)
        for (int64_t b : m)
          if (a != b) pairs[r].push_back({a, b});
    }
    for (int32_t p : t.peers) {
      int64_t q = layout.with(r, ir::Group::PP, p);
      parent[root(q)] = root(r);
      pairs[r].push_back({r, q});
      pairs[r].push_back({q, r});
    }
    if ((total += pairs[r].size()) > kMaxPairs) return std::nullopt;
  }
  Units out;
  std::map<int64_t, size_t> index;
  std::vector<size_t> unitOf(static_cast<size_t>(n));
  for (int64_t r = 0; r < n; ++r) {
    auto [it, fresh] = index.try_emplace(root(r), out.sets.size());
    if (fresh) out.sets.emplace_back(), out.routes.emplace_back();
    out.sets[it->second].push_back(r);
    unitOf[r] = it->second;
  }
  net::Router router(topo);
  out.owner.assign(topo.links().size(), -1);
  for (int64_t r = 0; r < n; ++r)
    for (auto [a, b] : pairs[r]) {
      llvm::Expected<net::Route> route = router.route(int(a), int(b));
      if (!route) {
        llvm::consumeError(route.takeError());
        return std::nullopt;
      }
      size_t u = unitOf[r];
      for (uint32_t h = 0; h < route->length; ++h) {
        uint32_t l = router.link(*route, h);
        if (out.owner[l] >= 0 && size_t(out.owner[l]) != u) return std::nullopt;
        out.owner[l] = int32_t(u);
        out.routes[u].push_back(l);
      }
      out.routes[u].push_back(net::kNoLink); // the end of a route
    }
  return out;
}

} // namespace

std::optional<std::vector<int64_t>> faultedProbe(const ir::Program &prog, const net::Topology &topo,
                                                 const std::vector<uint32_t> &faulted) {
  std::optional<Units> u = units(prog, topo, [&](const ir::Op &op) { return probedOp(prog, op); });
  if (!u) return std::nullopt;
  std::vector<int64_t> touched;
  for (size_t i = 0; i < u->sets.size(); ++i)
    if (u->hit(i, faulted)) touched.insert(touched.end(), u->sets[i].begin(), u->sets[i].end());
  std::sort(touched.begin(), touched.end());
  return touched;
}

std::optional<PipelineClasses> pipelineClasses(const ir::Program &pipeline, const net::Topology &topo,
                                               const std::vector<uint32_t> &faulted, const RankBlockTimes &own) {
  std::optional<Units> u = units(pipeline, topo, outsideBlocks);
  if (!u || u->sets.size() < 2) return std::nullopt;
  RankLayout layout(pipeline.layout);
  PipelineClasses out;
  std::set<std::string> seen;
  for (size_t i = 0; i < u->sets.size(); ++i) {
    const std::vector<int64_t> &set = u->sets[i];
    if (!u->hit(i, faulted)) {
      // Units no fault reaches run alike when their ranks run the same
      // programs at the same block times over links alike, shared alike.
      std::string sig;
      for (int64_t r : set) {
        sig += fmt::format("|{}@{}:", r - set[0], layout.coord(r, ir::Group::PP));
        if (auto it = own.find(r); it != own.end())
          for (const auto &[k, t] : it->second) sig += fmt::format("{},{},{}={:a};", k.layer, k.backward, k.part, t);
      }
      std::map<uint32_t, size_t> local; // links numbered as the unit's routes first take them
      for (uint32_t l : u->routes[i]) {
        if (l == net::kNoLink) {
          sig += '/';
          continue;
        }
        const net::Link &link = topo.links()[l];
        sig += fmt::format("{}:{:a},{},{:a};", local.try_emplace(l, local.size()).first->second, link.bytesPerNs,
                           link.latencyPs, link.packetBytes);
      }
      if (!seen.insert(sig).second) continue;
    }
    out.units.push_back(set);
  }
  return out;
}

} // namespace rapid::run
