//===- rapid-sim.cpp - Run Chakra traces on a simulated network -----------===//
//
// rapid-sim --workload PREFIX --network net.json|net.yml [--comm-group g.json]
//           [--faults f.json] [--system sys.json] [--mode congestion|analytical]
//           [--astra-compat] [--format text|json] [--links] [--critical-path] [--timeline out.json]
//
// See docs/runtime.md for the model and the file formats.
//===----------------------------------------------------------------------===//

#include "rapid/Network/Faults.h"
#include "rapid/Network/NetworkConfig.h"
#include "rapid/Report/Report.h"

#include "llvm/Support/CommandLine.h"

#include <fmt/format.h>

using namespace llvm;
using namespace rapid;

static cl::OptionCategory cat("rapid-sim options");
static cl::opt<std::string> workload("workload", cl::desc("trace prefix: <prefix>.<rank>.et, or a compact set's <prefix>.ranks.json"),
                                     cl::value_desc("prefix"), cl::Required, cl::cat(cat));
static cl::opt<std::string> network("network", cl::desc("network .json or Astra-Sim .yml"),
                                    cl::value_desc("file"), cl::Required, cl::cat(cat));
static cl::opt<std::string> commGroup("comm-group", cl::desc("communicator groups JSON"),
                                      cl::value_desc("file"), cl::cat(cat));
static cl::opt<std::string> faults("faults", cl::desc("link faults JSON"), cl::value_desc("file"),
                                   cl::cat(cat));
static cl::opt<std::string> system_("system", cl::desc("Astra-Sim-style system JSON"),
                                    cl::value_desc("file"), cl::cat(cat));
// Astra-Sim's flag names, so its users can switch by changing the binary name.
static cl::alias workloadAstra("workload-configuration", cl::desc("Astra-Sim name of --workload"),
                               cl::aliasopt(workload), cl::cat(cat));
static cl::alias networkAstra("network-configuration", cl::desc("Astra-Sim name of --network"),
                              cl::aliasopt(network), cl::cat(cat));
static cl::alias systemAstra("system-configuration", cl::desc("Astra-Sim name of --system"),
                             cl::aliasopt(system_), cl::cat(cat));
static cl::alias commGroupAstra("comm-group-configuration", cl::desc("Astra-Sim name of --comm-group ('empty': none)"),
                                cl::aliasopt(commGroup), cl::cat(cat));
static cl::opt<std::string> remoteMemory("remote-memory-configuration",
                                         cl::desc("accepted for Astra-Sim compatibility; no memory model"),
                                         cl::value_desc("file"), cl::cat(cat));
static cl::opt<std::string> logging("logging-configuration", cl::desc("accepted for Astra-Sim compatibility"),
                                    cl::value_desc("file"), cl::cat(cat));
static cl::opt<std::string> mode("mode", cl::desc("congestion (default) or analytical"),
                                 cl::init("congestion"), cl::cat(cat));
static cl::opt<std::string> switching("switching",
                                     cl::desc("cut-through (default) or store-and-forward"),
                                     cl::init("cut-through"), cl::cat(cat));
static cl::opt<bool> astraCompat("astra-compat",
                                 cl::desc("Astra-Sim semantics: 1 compute + 1 comm in flight, "
                                          "store-and-forward"),
                                 cl::cat(cat));
static cl::opt<std::string> outFormat("format", cl::desc("text (default) or json"),
                                   cl::init("text"), cl::cat(cat));
static cl::opt<bool> links("links", cl::desc("report per-link traffic"), cl::cat(cat));
static cl::opt<bool> timelineLinks("timeline-links", cl::desc("add one timeline row per link"), cl::cat(cat));
static cl::opt<bool> critical("critical-path", cl::desc("report the chain that set the finish time"), cl::cat(cat));
static cl::opt<std::string> timeline("timeline", cl::desc("write a Chrome/Perfetto trace"),
                                     cl::value_desc("file"), cl::cat(cat));
static cl::opt<int> computeStreams("compute-streams", cl::desc("concurrent compute ops per rank"),
                                   cl::init(1), cl::cat(cat));
static cl::opt<int> commStreams("comm-streams", cl::desc("concurrent comm ops per rank and communicator group"),
                                cl::init(1), cl::cat(cat));
static cl::opt<int> cpuThreads("cpu-threads", cl::desc("concurrent is_cpu_op nodes per rank (host threads)"),
                               cl::init(1), cl::cat(cat));
static cl::opt<int> splits("splits", cl::desc("chunks per collective (overrides --system)"),
                           cl::init(0), cl::cat(cat));
static cl::opt<bool> roofline("roofline", cl::desc("time COMP nodes by num_ops/tensor_size"),
                              cl::cat(cat));
static cl::opt<double> peakPerf("peak-perf", cl::desc("roofline peak, TFLOP/s"), cl::init(0),
                                cl::cat(cat));
static cl::opt<double> memBw("local-mem-bw", cl::desc("roofline memory bandwidth, GB/s"),
                             cl::init(0), cl::cat(cat));
static cl::opt<bool> lenient("lenient",
                             cl::desc("accept missing GlobalMetadata, dangling deps, "
                                      "collectives without comm_type"),
                             cl::cat(cat));

[[noreturn]] static void die(const std::string &msg) {
  errs() << "rapid-sim: error: " << msg << "\n";
  exit(1);
}

template <class T> static T orDie(Expected<T> v) {
  if (!v)
    die(toString(v.takeError()));
  return std::move(*v);
}

static void orDie(Error e) {
  if (e)
    die(toString(std::move(e)));
}

/// Says what --lenient changed, so a lenient result is never silent.
static void warnLenient(const trace::Workload &w) {
  uint64_t deps = 0, colls = 0;
  for (const auto &g : w.ranks) {
    deps += g.droppedDeps;
    colls += g.emptiedColls;
  }
  if (deps || colls)
    errs() << "rapid-sim: warning: --lenient dropped " << deps
           << " dependencies on missing nodes and ran " << colls
           << " collectives without comm_type as empty nodes\n";
}

static engine::SimOptions simOptions() {
  engine::SimOptions o;
  if (!system_.empty())
    o.system = orDie(engine::loadSystemConfig(system_));
  if (splits.getNumOccurrences() && !(splits >= 1 && splits <= engine::kMaxSplits))
    die(fmt::format("--splits must be from 1 to {}", engine::kMaxSplits));
  if (splits > 0)
    o.system.splits = splits;
  if (roofline) {
    o.system.roofline = true;
    if (peakPerf > 0)
      o.system.peakFlopsPerNs = peakPerf * 1e3;
    if (memBw > 0)
      o.system.memBytesPerNs = memBw;
    if (o.system.peakFlopsPerNs <= 0 || o.system.memBytesPerNs <= 0)
      die("--roofline needs --peak-perf and --local-mem-bw (or a --system file with them)");
  }
  if (!(computeStreams >= 1 && computeStreams <= 1024 && commStreams >= 1 && commStreams <= 1024 &&
        cpuThreads >= 1 && cpuThreads <= 1024))
    die("--compute-streams, --comm-streams and --cpu-threads must be from 1 to 1024");
  if (roofline && !(o.system.peakFlopsPerNs < 1e15 && o.system.memBytesPerNs < 1e15))
    die("--peak-perf and --local-mem-bw must be finite");
  o.astraCompat = astraCompat;
  o.computeStreams = computeStreams;
  o.commStreams = commStreams;
  o.cpuThreads = cpuThreads;
  o.recordTimeline = !timeline.empty() || critical;
  return o;
}

int main(int argc, char **argv) {
  cl::HideUnrelatedOptions(cat);
  cl::ParseCommandLineOptions(argc, argv, "execute Chakra traces on a simulated network\n");
  if (mode != "congestion" && mode != "analytical")
    die("--mode must be 'congestion' or 'analytical'");
  if (outFormat != "text" && outFormat != "json")
    die("--format must be 'text' or 'json'");
  if (switching != "cut-through" && switching != "store-and-forward")
    die("--switching must be 'cut-through' or 'store-and-forward'");
  engine::SimOptions opts = simOptions();
  net::Topology topo(orDie(net::loadNetworkSpec(network)));
  if (!faults.empty())
    orDie(net::applyFaults(faults, orDie(net::loadFaults(faults)), topo));
  coll::CommGroups groups;
  if (!commGroup.empty() && commGroup != "empty") // Astra-Sim's default value means none
    groups = orDie(coll::loadCommGroups(commGroup, topo.numRanks()));
  trace::ReadOptions ro;
  ro.lenient = lenient;
  trace::Workload w = orDie(trace::isCompactMap(workload) ? trace::loadCompactWorkload(workload, topo.numRanks(), ro)
                                                          : trace::loadWorkload(workload, topo.numRanks(), ro));
  orDie(trace::checkWorkload(w, trace::CheckOptions{opts.system.roofline}));
  if (lenient)
    warnLenient(w);
  bool storeAndForward = astraCompat || switching == "store-and-forward";
  net::Network net(topo, mode == "analytical" ? net::NetMode::Analytical : net::NetMode::Congestion,
                   storeAndForward ? net::Switching::StoreAndForward : net::Switching::CutThrough);
  net.recordLinkSpans(timelineLinks && !timeline.empty());
  engine::Simulator sim(w, net, groups, opts);
  engine::SimResult res = orDie(sim.run());
  if (!timeline.empty())
    orDie(report::writeTimeline(timeline, res, w, timelineLinks ? &net : nullptr));
  report::printReport(res, net, report::ReportOptions{outFormat == "json", links}, outs());
  if (critical)
    report::printCriticalPath(report::criticalPath(res, w), w, outFormat == "json", 5, outs());
  outs().flush();
  if (outs().has_error()) { // a full disk or a closed pipe, not an abort at exit
    std::string why = outs().error().message();
    outs().clear_error();
    die("cannot write the standard output: " + why);
  }
  return 0;
}
