//===- FuzzChakra.cpp - libFuzzer target: Chakra reader + simulator -------===//
//
// The input is a trace set: an options byte, then the ranks' .et files
// separated by "\n--RANK--\n" (1 to 8 ranks; test/fuzz/seeds.py packs real
// trace sets this way). It goes through what `rapid-sim` runs: the files are
// read and checked (loadWorkload, checkWorkload) and, if they pass, simulated
// on a small network of as many ranks, then reported (text, JSON, critical
// path). Every failure must be an llvm::Error, and one of the reader or the
// checks must name its file; anything else is a finding.
//
// The options byte: bits 0-1 the network (Ring, Switch, FullyConnected,
// Ring x Ring), bit 2 analytical mode, bit 3 --astra-compat, bit 4
// --lenient, bit 5 two comm streams, bit 6 store-and-forward, bit 7 record
// the timeline and the critical path.
//===----------------------------------------------------------------------===//
#include "FuzzCommon.h"

#include "rapid/Engine/Simulator.h"
#include "rapid/Network/NetworkConfig.h"
#include "rapid/Report/Report.h"
#include "rapid/Trace/Workload.h"

#include "llvm/ADT/SmallVector.h"

using namespace rapid;

namespace {

std::string networkJson(unsigned kind, size_t ranks) {
  auto dim = [](const char *k, size_t n, const char *bw) {
    return "{\"kind\": \"" + std::string(k) + "\", \"size\": " + std::to_string(n) + ", \"bandwidth\": \"" + bw +
           "\", \"latency\": \"100 ns\"}";
  };
  std::string dims;
  switch (kind) {
  case 0: dims = dim("Ring", ranks, "10 GB/s"); break;
  case 1: dims = dim("Switch", ranks, "50 GB/s"); break;
  case 2: dims = dim("FullyConnected", ranks, "25 GB/s"); break;
  default:
    dims = ranks % 2 ? dim("Ring", ranks, "10 GB/s")
                     : dim("Ring", 2, "100 GB/s") + ", " + dim("Ring", ranks / 2, "10 GB/s");
  }
  return "{\"dimensions\": [" + dims + "]}";
}

void consume(llvm::Error e) { llvm::consumeError(std::move(e)); }

/// A trace error must name its file (`rapid-sim: error: <file>: ...`).
void consumeLocated(llvm::Error e, const std::string &prefix) {
  std::string msg = llvm::toString(std::move(e));
  if (!llvm::StringRef(msg).starts_with(prefix + "."))
    fuzz::fail("a trace error that does not name its file", msg);
}

void simulate(uint8_t flags, const trace::Workload &w, net::Topology &topo) {
  engine::SimOptions o;
  o.astraCompat = flags & 8;
  o.commStreams = flags & 32 ? 2 : 1;
  o.recordTimeline = flags & 128;
  bool storeAndForward = o.astraCompat || (flags & 64);
  net::Network net(topo, flags & 4 ? net::NetMode::Analytical : net::NetMode::Congestion,
                   storeAndForward ? net::Switching::StoreAndForward : net::Switching::CutThrough);
  coll::CommGroups groups;
  engine::Simulator sim(w, net, groups, o);
  llvm::Expected<engine::SimResult> res = sim.run();
  if (!res)
    return consume(res.takeError());
  report::printReport(*res, net, report::ReportOptions{bool(flags & 16), true}, llvm::nulls());
  if (o.recordTimeline)
    report::printCriticalPath(report::criticalPath(*res, w), w, flags & 1, 5, llvm::nulls());
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint8_t flags = 0;
  llvm::SmallVector<llvm::StringRef, 8> parts;
  if (!fuzz::splitRanks(data, size, 8, flags, parts))
    return -1;
  static const std::string prefix = fuzz::workDir() + "/trace";
  for (size_t r = 0; r < parts.size(); ++r)
    fuzz::writeFile(prefix + "." + std::to_string(r) + ".et", parts[r]);
  // A rank file left by a larger input would make this trace set larger
  // than its network.
  static size_t written = 0;
  for (size_t r = parts.size(); r < written; ++r)
    llvm::sys::fs::remove(prefix + "." + std::to_string(r) + ".et");
  written = parts.size();

  llvm::Expected<net::NetworkSpec> spec =
      net::parseNetworkJson("fuzz-network.json", networkJson(flags & 3, parts.size()));
  if (!spec) // a one-rank Switch, say
    return consume(spec.takeError()), 0;
  net::Topology topo(std::move(*spec));
  trace::ReadOptions ro;
  ro.lenient = flags & 16;
  llvm::Expected<trace::Workload> w = trace::loadWorkload(prefix, topo.numRanks(), ro);
  if (!w)
    return consumeLocated(w.takeError(), prefix), 0;
  if (llvm::Error e = trace::checkWorkload(*w, trace::CheckOptions{}))
    return consumeLocated(std::move(e), prefix), 0;
  simulate(flags, *w, topo);
  return 0;
}
