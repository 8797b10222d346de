//===- rapid-bench.cpp - Ring all-reduce scaling benchmark ----------------===//
//
// Not a test. One 1 MiB all-reduce per rank on a 1-D ring (50 GB/s, 500 ns,
// 4 chunks) for 8, 64, 256 and 1024 ranks, built in memory so only the
// simulator is timed. Prints wall time, peak RSS and events per second.
//===----------------------------------------------------------------------===//

#include "rapid/Engine/Simulator.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sys/resource.h>

using namespace rapid;

static trace::Workload ringWorkload(int ranks) {
  trace::Workload w;
  for (int r = 0; r < ranks; ++r) {
    trace::RankGraph g;
    g.rank = r;
    g.file = "bench." + std::to_string(r) + ".et";
    trace::TraceNode n;
    n.kind = trace::NodeKind::Coll;
    n.commType = int64_t(trace::CollKind::AllReduce);
    n.commSize = 1 << 20;
    g.own().nodes.push_back(n);
    w.ranks.push_back(std::move(g));
  }
  return w;
}

static long peakRssMiB() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024;
}

int main(int argc, char **argv) {
  std::vector<int> sizes = {8, 64, 256, 1024};
  if (argc > 1)
    sizes = {std::atoi(argv[1])};
  std::printf("ranks simulated_ns wall_s events events_per_s peak_rss_mib\n");
  for (int p : sizes) {
    auto start = std::chrono::steady_clock::now();
    net::DimSpec dim;
    dim.kind = net::DimKind::Ring;
    dim.shape = {p};
    dim.bandwidth = BytesPerSecond(50e9);
    dim.latency = Seconds(500e-9);
    net::Topology topo(net::NetworkSpec{{dim}});
    net::Network network(topo, net::NetMode::Congestion);
    trace::Workload w = ringWorkload(p);
    coll::CommGroups groups;
    engine::SimOptions opts;
    opts.system.splits = 4;
    engine::Simulator sim(w, network, groups, opts);
    auto res = sim.run();
    if (!res) {
      std::fprintf(stderr, "%s\n", llvm::toString(res.takeError()).c_str());
      return 1;
    }
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("%d %lld %.3f %llu %.3g %ld\n", p, (long long)res->totalNs, wall,
                (unsigned long long)res->events, double(res->events) / wall, peakRssMiB());
  }
  return 0;
}
