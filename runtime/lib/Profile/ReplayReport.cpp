//===- ReplayReport.cpp - A replay beside its profile: table, JSON, timeline ===//

#include "rapid/Profile/Replay.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"

#include <fmt/format.h>
#include <map>

namespace rapid::profile {

static double ms(int64_t ns) { return double(ns) / 1e6; }
static double err(int64_t replayed, int64_t profiled) {
  return profiled ? 100.0 * (double(replayed) / double(profiled) - 1.0) : 0.0;
}

/// The slowest rank's step, profiled and replayed (each its own slowest).
static std::pair<int64_t, int64_t> iteration(const ReplayResult &r) {
  int64_t p = 0, q = 0;
  for (const RankReplay &k : r.ranks) p = std::max(p, k.profiledNs), q = std::max(q, k.replayedNs);
  return {p, q};
}

/// Collectives of one kind, size and group size: how many, and the median
/// of their profiled and replayed times.
struct CollectiveGroup {
  trace::CollKind kind;
  int64_t bytes;
  uint32_t members;
  size_t count = 0;
  int64_t profiledNs = 0, replayedNs = 0;
};

static std::vector<CollectiveGroup> collectiveGroups(const ReplayResult &r) {
  std::map<std::tuple<int, int64_t, uint32_t>, std::pair<std::vector<int64_t>, std::vector<int64_t>>> by;
  for (const ReplayResult::Instance &i : r.instances) {
    auto &[p, q] = by[{int(i.kind), i.bytes, i.members}];
    p.push_back(i.profiledNs);
    q.push_back(i.replayedNs);
  }
  auto median = [](std::vector<int64_t> v) {
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
  };
  std::vector<CollectiveGroup> out;
  for (const auto &[key, times] : by)
    out.push_back({trace::CollKind(std::get<0>(key)), std::get<1>(key), std::get<2>(key), times.first.size(),
                   median(times.first), median(times.second)});
  return out;
}

/// Over the profiled ranks (copies of them would count them again).
static std::map<std::string, uint64_t> skipped(const TraceSet &set) {
  std::map<std::string, uint64_t> all;
  for (size_t r = 0; r < std::min(size_t(set.profiledWorld), set.ranks.size()); ++r)
    for (const auto &[what, n] : set.ranks[r].skipped) all[what] += n;
  return all;
}

static void printJson(const TraceSet &set, const ReplayResult &r, llvm::raw_ostream &os) {
  llvm::json::OStream j(os);
  auto split = [&](const char *key, const Breakdown &b) {
    j.attributeObject(key, [&] {
      j.attribute("compute_s", double(b.computeNs) / 1e9);
      j.attribute("exposed_comm_s", double(b.exposedCommNs) / 1e9);
      j.attribute("idle_s", double(b.idleNs) / 1e9);
    });
  };
  auto [p, q] = iteration(r);
  j.object([&] {
    j.attribute("source", set.source);
    j.attribute("step", set.ranks.front().step);
    j.attribute("ranks", int64_t(set.ranks.size()));
    j.attribute("profiled_ranks", int64_t(set.profiledWorld));
    if (set.tensorParallel) j.attribute("tensor_parallel", int64_t(set.tensorParallel));
    if (!set.whatIfs.empty())
      j.attributeArray("what_if", [&] {
        for (const std::string &w : set.whatIfs) j.value(w);
      });
    j.attribute("collectives", int64_t(r.collectives));
    j.attribute("collectives_simulated", r.simulatedCollectives);
    j.attribute("collectives_profiled_s", double(r.collectiveProfiledNs) / 1e9);
    j.attribute("collectives_replayed_s", double(r.collectiveReplayedNs) / 1e9);
    j.attribute("p2p_kernels", int64_t(r.peerToPeer));
    j.attribute("p2p_pairs", int64_t(r.peersMatched));
    j.attribute("profiled_s", double(p) / 1e9);
    j.attribute("replayed_s", double(q) / 1e9);
    j.attribute("error", err(q, p) / 100.0);
    j.attributeArray("per_rank", [&] {
      for (const RankReplay &k : r.ranks)
        j.object([&] {
          j.attribute("rank", int64_t(k.rank));
          j.attribute("start_s", double(k.startNs) / 1e9);
          j.attribute("profiled_s", double(k.profiledNs) / 1e9);
          j.attribute("replayed_s", double(k.replayedNs) / 1e9);
          j.attribute("error", err(k.replayedNs, k.profiledNs) / 100.0);
          j.attribute("profiled_device_s", double(k.profiledDeviceNs) / 1e9);
          j.attribute("replayed_device_s", double(k.replayedDeviceNs) / 1e9);
          split("profiled_breakdown", k.profiled);
          split("replayed_breakdown", k.replayed);
        });
    });
    j.attributeArray("collective_groups", [&] {
      for (const CollectiveGroup &g : collectiveGroups(r))
        j.object([&] {
          j.attribute("kind", trace::collKindName(g.kind));
          j.attribute("bytes", g.bytes);
          j.attribute("ranks", int64_t(g.members));
          j.attribute("count", int64_t(g.count));
          j.attribute("profiled_median_s", double(g.profiledNs) / 1e9);
          j.attribute("replayed_median_s", double(g.replayedNs) / 1e9);
        });
    });
    j.attributeArray("process_groups", [&] {
      for (const auto &[key, desc] : namedGroups(set))
        j.object([&] {
          j.attribute("name", key.first);
          j.attribute("description", desc);
          j.attributeArray("ranks", [&] {
            for (int m : key.second) j.value(int64_t(m));
          });
        });
    });
    j.attributeObject("not_used", [&] {
      for (const auto &[what, n] : skipped(set)) j.attribute(what, int64_t(n));
    });
    j.attribute("host_trace_files", int64_t(set.hostFiles));
    j.attributeArray("host_traces", [&] {
      for (const KinetoTrace &t : set.ranks)
        if (!t.hostTrace.file.empty() && t.rank < set.profiledWorld)
          j.object([&] {
            const HostLink &h = t.hostTrace;
            j.attribute("rank", int64_t(t.rank));
            j.attribute("unshaped", int64_t(h.unshaped));
            j.attribute("file", llvm::sys::path::filename(h.file));
            j.attribute("threads", int64_t(h.threads));
            j.attribute("nodes", int64_t(h.nodes));
            j.attribute("operators", int64_t(h.operators));
            j.attribute("linked", int64_t(h.linked));
            j.attribute("shapes_filled", int64_t(h.filled));
          });
    });
    j.attributeArray("other_files", [&] {
      for (const std::string &f : set.others) j.value(f);
    });
  });
  os << "\n";
}

/// Whether the directory's host execution traces were needed (a device
/// trace lacked shapes the replay reads), how the needy ranks' operators
/// met their nodes, and how many took their shapes from them.
static void printHostTraces(const TraceSet &set, llvm::raw_ostream &os) {
  if (set.hostFiles == 0) return;
  uint64_t needy = 0, unshaped = 0, ranks = 0, operators = 0, linked = 0, filled = 0;
  for (const KinetoTrace &t : set.ranks) {
    const HostLink &h = t.hostTrace;
    if (t.rank >= set.profiledWorld || h.unshaped == 0) continue;
    ++needy, unshaped += h.unshaped;
    if (h.file.empty()) continue;
    ++ranks, operators += h.operators, linked += h.linked, filled += h.filled;
  }
  auto count = [](uint64_t n, const char *what) { return fmt::format("{} {}{}", n, what, n == 1 ? "" : "s"); };
  if (needy == 0) {
    os << fmt::format("host execution traces: {}, not read: the device traces record every shape the replay uses\n",
                      count(set.hostFiles, "file"));
    return;
  }
  os << fmt::format("host execution traces: {}; the device traces of {} lack the shapes of {}; {} linked, {} of "
                    "their {} paired with nodes, {} given their shapes\n",
                    count(set.hostFiles, "file"), count(needy, "rank"), count(unshaped, "operator"),
                    count(ranks, "rank"), linked, count(operators, "operator"), filled);
}

void printReplay(const TraceSet &set, const ReplayResult &r, bool json, llvm::raw_ostream &os) {
  if (json) return printJson(set, r, os);
  const KinetoTrace &t0 = set.ranks.front();
  uint64_t kernels = 0, copies = 0, memsets = 0, nodes = 0;
  for (const ExecGraph &g : r.graphs)
    kernels += g.kernels, copies += g.copies, memsets += g.memsets, nodes += g.nodes.size();
  os << fmt::format("replay of {}: {} ranks ({}{}{}), {}{}\n", set.source, set.ranks.size(),
                    t0.backend.empty() ? "no backend" : t0.backend, t0.gpu.empty() ? "" : ", ", t0.gpu, t0.step,
                    set.tensorParallel ? fmt::format("; the tensor-parallel group{} of {} re-sharded to {}{}",
                                                     set.profiledTensorParallel < set.profiledWorld ? "s" : "",
                                                     set.profiledTensorParallel, set.tensorParallel,
                                                     set.profiledTensorParallel < set.profiledWorld
                                                         ? fmt::format(" ({} data-parallel copies{})",
                                                                       set.ranks.size() / size_t(set.tensorParallel *
                                                                                                 set.pipelineStages),
                                                                       set.pipelineStages > 1
                                                                           ? fmt::format(" x {} pipeline stages",
                                                                                         set.pipelineStages)
                                                                           : "")
                                                         : "")
                    : int(set.ranks.size()) > set.profiledWorld
                        ? fmt::format("; the {} profiled ranks scaled to {}, rank r running rank r mod {}",
                                      set.profiledWorld, set.ranks.size(), set.profiledWorld)
                        : "");
  for (const std::string &w : set.whatIfs) os << "what-if: " << w << "\n";
  os << fmt::format("graph: {} nodes; {} kernels, {} copies, {} memsets; {} collectives matched across ranks "
                    "({}), {} point-to-point kernels replayed as measured{}\n",
                    nodes, kernels, copies, memsets, r.collectives,
                    r.simulatedCollectives ? "re-simulated on the network" : "measured times", r.peerToPeer,
                    r.peersMatched ? fmt::format(", {} sends paired with their receives", r.peersMatched) : "");
  // Which groups the profile names, by description and size: what
  // --data-parallel picks from.
  std::map<std::pair<std::string, size_t>, size_t> kinds;
  for (const auto &[key, desc] : namedGroups(set)) ++kinds[{desc.empty() ? "'" + key.first + "'" : desc, key.second.size()}];
  std::vector<std::string> kindText;
  for (const auto &[k, n] : kinds) kindText.push_back(fmt::format("{} x{} of {} ranks", k.first, n, k.second));
  if (!kindText.empty()) os << fmt::format("process groups named by the profile: {}\n", fmt::join(kindText, ", "));
  os << fmt::format("{:>4}  {:>9}  {:>11}  {:>11}  {:>8}  {:>21}  {:>21}  {:>21}\n", "rank", "start",
                    "profiled", "replayed", "error", "compute prof/repl", "exp. comm prof/repl", "idle prof/repl");
  for (const RankReplay &k : r.ranks)
    os << fmt::format("{:>4}  {:>6.3f} ms  {:>8.3f} ms  {:>8.3f} ms  {:>+6.2f} %  {:>9.3f} / {:>8.3f}  "
                      "{:>9.3f} / {:>8.3f}  {:>9.3f} / {:>8.3f}\n",
                      k.rank, ms(k.startNs), ms(k.profiledNs), ms(k.replayedNs), err(k.replayedNs, k.profiledNs),
                      ms(k.profiled.computeNs), ms(k.replayed.computeNs), ms(k.profiled.exposedCommNs),
                      ms(k.replayed.exposedCommNs), ms(k.profiled.idleNs), ms(k.replayed.idleNs));
  os << fmt::format("collectives, summed: profiled {:.3f} ms (each the last member's kernel), replayed {:.3f} ms\n",
                    ms(r.collectiveProfiledNs), ms(r.collectiveReplayedNs));
  for (const CollectiveGroup &g : collectiveGroups(r))
    os << fmt::format("  {} of {} on {} ranks, x{}: median profiled {:.1f} us, replayed {:.1f} us\n",
                      trace::collKindName(g.kind), g.bytes < 0 ? std::string("unknown size") : fmt::format("{} B", g.bytes),
                      g.members, g.count, double(g.profiledNs) / 1e3, double(g.replayedNs) / 1e3);
  auto [p, q] = iteration(r);
  os << fmt::format("step (slowest rank): profiled {:.3f} ms, replayed {:.3f} ms ({:+.2f} %)\n", ms(p), ms(q),
                    err(q, p));
  std::vector<std::string> parts;
  for (const auto &[what, n] : skipped(set)) parts.push_back(fmt::format("{} {}", what, n));
  os << "not used (all ranks): " << fmt::format("{}", fmt::join(parts, ", ")) << "\n";
  printHostTraces(set, os);
  if (!set.others.empty())
    os << fmt::format("not Kineto traces, not read: {}\n", fmt::join(set.others, ", "));
}

llvm::Error writeReplayTimeline(const std::string &path, const TraceSet &set, const ReplayResult &r) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec) return llvm::createStringError(ec, fmt::format("{}: cannot write timeline: {}", path, ec.message()));
  // Rows: host threads first, then streams, as the profiler orders them.
  auto row = [&](size_t rank, const GraphNode &n) {
    const ExecGraph &g = r.graphs[rank];
    const auto &lanes = onDevice(n.role) ? g.streams : g.threads;
    int64_t at = std::lower_bound(lanes.begin(), lanes.end(), n.lane) - lanes.begin();
    return onDevice(n.role) ? int64_t(g.threads.size()) + at : at;
  };
  llvm::json::OStream j(os);
  j.object([&] {
    j.attribute("displayTimeUnit", "ns");
    j.attributeArray("traceEvents", [&] {
      for (size_t k = 0; k < r.graphs.size(); ++k) {
        const ExecGraph &g = r.graphs[k];
        auto name = [&](int64_t tid, std::string what) {
          j.object([&] {
            j.attribute("ph", "M");
            j.attribute("name", "thread_name");
            j.attribute("pid", int64_t(k));
            j.attribute("tid", tid);
            j.attributeObject("args", [&] { j.attribute("name", what); });
          });
        };
        for (size_t i = 0; i < g.threads.size(); ++i) name(int64_t(i), fmt::format("thread {}", g.threads[i]));
        for (size_t i = 0; i < g.streams.size(); ++i)
          name(int64_t(g.threads.size() + i), fmt::format("stream {}", g.streams[i]));
      }
      for (const engine::Span &s : r.sim.spans) {
        const GraphNode &n = r.graphs[s.rank].nodes[s.node];
        if (n.role == Role::Gap || n.role == Role::Start || n.role == Role::Launch) continue;
        j.object([&] {
          j.attribute("name", set.ranks[s.rank].names[n.name]);
          j.attribute("cat", roleName(n.role));
          j.attribute("ph", "X");
          j.attribute("pid", int64_t(s.rank));
          j.attribute("tid", row(s.rank, n));
          j.attribute("ts", double(s.startPs) / 1e6);
          j.attribute("dur", double(s.endPs - s.startPs) / 1e6);
        });
      }
    });
  });
  os << "\n";
  return llvm::Error::success();
}

} // namespace rapid::profile
