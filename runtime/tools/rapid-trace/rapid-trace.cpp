//===- rapid-trace.cpp - Work with profiles of real PyTorch runs ----------===//
//
// rapid-trace replay DIR|FILE [--step N] [--start profiled|together]
//                             [--kernel-scale F] [--gpu TO --profiled-gpu FROM [--import f.rapid]]
//                             [--network net.json [--faults f.json] [--system s.json]
//                              [--protocol auto|LL|LL128|Simple|none]]
//                             [--world N [--data-parallel GROUP,...]]
//                             [--tensor-parallel N --profiled-gpu FROM]
//                             [--format text|json] [--timeline out.json]
//
// rapid-trace convert DIR|FILE -o OUT [the same options but --format/--timeline]
//
// See docs/trace-replay.md.
//===----------------------------------------------------------------------===//

#include "rapid/Driver/GpuScale.h"
#include "rapid/Driver/TensorParallel.h"
#include "rapid/Network/NetworkConfig.h"
#include "rapid/Profile/Replay.h"
#include "rapid/Trace/NodeWriter.h"

#include "llvm/Support/FileSystem.h"

#include "llvm/Support/CommandLine.h"

#include <cmath>
#include <fmt/format.h>

using namespace llvm;
using namespace rapid;

static cl::SubCommand replayCmd("replay", "replay a set of per-rank Kineto traces and compare with the profile");
static cl::SubCommand convertCmd("convert", "write the replay's execution graphs as Chakra traces for rapid-sim or Astra-Sim");
static cl::opt<std::string> input(cl::Positional, cl::desc("<directory of per-rank traces, or one trace>"),
                                  cl::Required, cl::sub(replayCmd), cl::sub(convertCmd));
static cl::opt<std::string> step("step", cl::desc("which ProfilerStep (default: the first)"),
                                 cl::value_desc("N"), cl::sub(replayCmd), cl::sub(convertCmd));
static cl::opt<std::string> start("start",
                                  cl::desc("profiled (default): ranks enter the step when they did; "
                                           "together: all at time 0"),
                                  cl::init("profiled"), cl::sub(replayCmd), cl::sub(convertCmd));
static cl::opt<double> kernelScale("kernel-scale", cl::desc("scale measured kernel times (what-if)"),
                                   cl::init(1.0), cl::sub(replayCmd), cl::sub(convertCmd));
static cl::opt<std::string> gpu("gpu", cl::desc("move device work to this gpu declaration (needs --profiled-gpu)"),
                                cl::value_desc("name"), cl::sub(replayCmd), cl::sub(convertCmd));
static cl::opt<std::string> profiledGpu("profiled-gpu", cl::desc("the gpu declaration the profile ran on"),
                                        cl::value_desc("name"), cl::sub(replayCmd), cl::sub(convertCmd));
static cl::list<std::string> imports("import", cl::desc("a .rapid file with gpu declarations (std.gpus is read anyway)"),
                                     cl::value_desc("file"), cl::sub(replayCmd), cl::sub(convertCmd));
static cl::opt<std::string> stdlibDir("stdlib", cl::desc("where std.gpus is"), cl::init(RAPID_STDLIB_DIR),
                                      cl::sub(replayCmd), cl::sub(convertCmd));
static cl::opt<std::string> network("network",
                                    cl::desc("re-simulate collectives on this network (.json or Astra-Sim .yml)"),
                                    cl::value_desc("file"), cl::sub(replayCmd), cl::sub(convertCmd));
static cl::opt<std::string> faults("faults", cl::desc("link faults JSON (with --network)"), cl::value_desc("file"),
                                   cl::sub(replayCmd), cl::sub(convertCmd));
static cl::opt<std::string> system_("system", cl::desc("Astra-Sim-style system JSON (with --network)"),
                                    cl::value_desc("file"), cl::sub(replayCmd), cl::sub(convertCmd));
static cl::opt<std::string> protocol("protocol",
                                     cl::desc("NCCL protocol of the re-simulated collectives: auto (NCCL's choice, the "
                                              "default), LL, LL128, Simple, or none (the network alone); overrides "
                                              "--system's collective-protocol"),
                                     cl::value_desc("name"), cl::sub(replayCmd), cl::sub(convertCmd));
static cl::opt<int> world("world",
                          cl::desc("weak-scale the job to this many ranks, a multiple of the profiled: rank r runs "
                                   "rank r mod the profiled's, every world-wide communicator spans them all (needs --network; "
                                   "smaller groups: --data-parallel); with --tensor-parallel: the re-sharded job's ranks, "
                                   "a multiple of the degree, its data-parallel groups growing"),
                          cl::value_desc("ranks"), cl::init(0), cl::sub(replayCmd), cl::sub(convertCmd));
static cl::list<std::string> dataParallel(
    "data-parallel",
    cl::desc("with --world: the process groups (by description or name, comma-separated) that are data parallel "
             "and grow with the world; the profile's other groups smaller than its world are copied with the job; "
             "with --tensor-parallel: the data-parallel groups, the others smaller than the world being "
             "tensor-parallel"),
    cl::value_desc("group,..."), cl::CommaSeparated, cl::sub(replayCmd), cl::sub(convertCmd));
static cl::opt<int> tensorParallel(
    "tensor-parallel",
    cl::desc("run a Megatron-LM step at this tensor-parallel degree, profiled as one tensor-parallel group (or as "
             "several beside the groups --data-parallel names): sharded kernels re-costed on --profiled-gpu, "
             "collectives re-simulated (needs --network)"),
    cl::value_desc("ranks"), cl::init(0), cl::sub(replayCmd), cl::sub(convertCmd));
static cl::opt<std::string> outFormat("format", cl::desc("text (default) or json"), cl::init("text"),
                                      cl::sub(replayCmd));
static cl::opt<std::string> outDir("o", cl::desc("folder for the Chakra traces"), cl::value_desc("dir"),
                                   cl::Required, cl::sub(convertCmd));
static cl::opt<std::string> timeline("timeline", cl::desc("write a Perfetto timeline of the replay"),
                                     cl::value_desc("file"), cl::sub(replayCmd));

[[noreturn]] static void die(const std::string &msg) {
  errs() << "rapid-trace: error: " << msg << "\n";
  exit(1);
}

template <class T> static T orDie(Expected<T> v) {
  if (!v) die(toString(v.takeError()));
  return std::move(*v);
}

/// The options replay and convert share, checked, and the trace set.
static std::pair<profile::TraceSet, profile::ReplayOptions> load() {
  if (start != "profiled" && start != "together") die("--start must be 'profiled' or 'together'");
  if (!(std::isfinite(kernelScale) && kernelScale > 0 && kernelScale <= 1000))
    die(fmt::format("--kernel-scale must be a number above 0 and at most 1000, found {}", double(kernelScale)));
  profile::ReadOptions ro;
  ro.step = step;
  profile::TraceSet set = orDie(profile::loadTraceSet(input, ro));
  if (!dataParallel.empty() && !world.getNumOccurrences() && !tensorParallel.getNumOccurrences())
    die("--data-parallel goes with --world or --tensor-parallel");
  if (world.getNumOccurrences() && !tensorParallel.getNumOccurrences())
    if (Error e = profile::scaleWorld(set, world, std::vector<std::string>(dataParallel.begin(), dataParallel.end())))
      die(toString(std::move(e)));
  if (tensorParallel.getNumOccurrences()) {
    if (profiledGpu.empty()) die("--tensor-parallel needs --profiled-gpu: the sharded kernels are re-costed there");
    std::vector<std::string> groups(dataParallel.begin(), dataParallel.end());
    if (Error e = profile::reshardTensorParallel(set, tensorParallel, profiledGpu, {imports.begin(), imports.end()},
                                                 stdlibDir, groups, world.getNumOccurrences() ? int(world) : 0))
      die(toString(std::move(e)));
  }
  if (network.empty() && (!faults.empty() || !system_.empty() || !protocol.empty()))
    die("--faults, --system and --protocol need --network");
  if (gpu.empty() != profiledGpu.empty() && !tensorParallel.getNumOccurrences())
    die("--gpu and --profiled-gpu go together");
  profile::ReplayOptions opts;
  opts.profiledStarts = start == "profiled";
  opts.kernelScale = kernelScale;
  if (!network.empty()) opts.network = orDie(net::loadNetworkSpec(network));
  if (!faults.empty()) opts.faults = orDie(net::loadFaults(faults)), opts.faultsFile = faults;
  if (!system_.empty()) opts.system = orDie(engine::loadSystemConfig(system_));
  // NCCL ran these collectives: its protocols by default, unless the
  // system file or --protocol says otherwise.
  if (!protocol.empty()) {
    std::optional<coll::Protocol> p = coll::parseProtocol(protocol);
    if (!p) die(fmt::format("--protocol must be auto, LL, LL128, Simple or none, found '{}'", std::string(protocol)));
    opts.system.protocol = *p;
  } else if (system_.empty()) {
    opts.system.protocol = coll::Protocol::Auto;
  }
  // And NCCL's choice of ring or tree for all-reduces between nodes, as
  // rapidc's `auto`.
  if (system_.empty() && opts.network) opts.system.allReduceAuto = opts.network->betweenNodes();
  if (!gpu.empty())
    opts.deviceScale = orDie(profile::gpuScale(profiledGpu, gpu, {imports.begin(), imports.end()}, stdlibDir));
  return {std::move(set), std::move(opts)};
}

static void writeText(const std::string &path, const std::string &text) {
  std::error_code ec;
  raw_fd_ostream os(path, ec);
  if (!ec) os << text;
  if (ec || os.has_error()) die(fmt::format("{}: cannot write: {}", path, ec ? ec.message() : os.error().message()));
}

/// Chakra files rapid-sim (and Astra-Sim) can run, and the command that
/// replays them as `replay` does.
static int runConvert() {
  auto [set, opts] = load();
  profile::ReplayResult r = orDie(profile::buildReplay(set, opts));
  if (std::error_code ec = sys::fs::create_directories(outDir))
    die(fmt::format("{}: cannot create the folder: {}", std::string(outDir), ec.message()));
  std::string prefix = outDir + "/trace";
  for (size_t k = 0; k < r.workload.ranks.size(); ++k)
    if (Error e = trace::writeRankGraph(fmt::format("{}.{}.et", prefix, k), r.workload.ranks[k]))
      die(toString(std::move(e)));
  writeText(outDir + "/network.json", net::writeNetworkJson(profile::replayNetwork(set, opts)));
  std::string groups;
  if (!r.groups.members.empty()) {
    writeText(outDir + "/comm_group.json", coll::writeCommGroupsJson(r.groups));
    groups = fmt::format(" --comm-group {}/comm_group.json", std::string(outDir));
  }
  std::string system;
  if (opts.network) { // the collectives' settings, the protocol among them
    writeText(outDir + "/system.json", engine::writeSystemConfigJson(opts.system));
    system = fmt::format(" --system {}/system.json", std::string(outDir));
  }
  engine::SimOptions so = profile::replaySimOptions(r, opts);
  outs() << fmt::format("wrote {} ranks ({} nodes) to {}.<rank>.et\n", r.workload.ranks.size(),
                        [&] { size_t n = 0; for (auto &g : r.workload.ranks) n += g.nodes().size(); return n; }(), prefix);
  outs() << fmt::format("run: rapid-sim --workload {} --network {}/network.json{} --compute-streams {} "
                        "--comm-streams {} --cpu-threads {}{}{}\n",
                        prefix, std::string(outDir), groups, so.computeStreams, so.commStreams, so.cpuThreads,
                        opts.network ? "" : " --mode analytical", system);
  return 0;
}

static int runReplay() {
  if (outFormat != "text" && outFormat != "json") die("--format must be 'text' or 'json'");
  auto [set, opts] = load();
  profile::ReplayResult r = orDie(profile::replay(set, opts));
  if (!timeline.empty())
    if (Error e = profile::writeReplayTimeline(timeline, set, r)) die(toString(std::move(e)));
  profile::printReplay(set, r, outFormat == "json", outs());
  outs().flush();
  if (outs().has_error()) {
    std::string why = outs().error().message();
    outs().clear_error();
    die("cannot write the standard output: " + why);
  }
  return 0;
}

int main(int argc, char **argv) {
  cl::ParseCommandLineOptions(argc, argv, "replay and convert profiles of real PyTorch runs\n");
  if (replayCmd) return runReplay();
  if (convertCmd) return runConvert();
  errs() << "rapid-trace: error: name a command: replay or convert (see --help)\n";
  return 1;
}
