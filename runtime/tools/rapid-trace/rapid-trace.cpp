//===- rapid-trace.cpp - Work with profiles of real PyTorch runs ----------===//
//
// rapid-trace replay DIR|FILE [--step N] [--start profiled|together]
//                             [--kernel-scale F] [--format text|json] [--timeline out.json]
//
// See docs/trace-replay.md.
//===----------------------------------------------------------------------===//

#include "rapid/Profile/Replay.h"

#include "llvm/Support/CommandLine.h"

#include <cmath>
#include <fmt/format.h>

using namespace llvm;
using namespace rapid;

static cl::SubCommand replayCmd("replay", "replay a set of per-rank Kineto traces and compare with the profile");
static cl::opt<std::string> input(cl::Positional, cl::desc("<directory of per-rank traces, or one trace>"),
                                  cl::Required, cl::sub(replayCmd));
static cl::opt<std::string> step("step", cl::desc("which ProfilerStep (default: the first)"),
                                 cl::value_desc("N"), cl::sub(replayCmd));
static cl::opt<std::string> start("start",
                                  cl::desc("profiled (default): ranks enter the step when they did; "
                                           "together: all at time 0"),
                                  cl::init("profiled"), cl::sub(replayCmd));
static cl::opt<double> kernelScale("kernel-scale", cl::desc("scale measured kernel times (what-if)"),
                                   cl::init(1.0), cl::sub(replayCmd));
static cl::opt<std::string> outFormat("format", cl::desc("text (default) or json"), cl::init("text"),
                                      cl::sub(replayCmd));
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

static int runReplay() {
  if (start != "profiled" && start != "together") die("--start must be 'profiled' or 'together'");
  if (outFormat != "text" && outFormat != "json") die("--format must be 'text' or 'json'");
  if (!(std::isfinite(kernelScale) && kernelScale > 0 && kernelScale <= 1000))
    die(fmt::format("--kernel-scale must be a number above 0 and at most 1000, found {}", double(kernelScale)));
  profile::ReadOptions ro;
  ro.step = step;
  profile::TraceSet set = orDie(profile::loadTraceSet(input, ro));
  profile::ReplayOptions opts;
  opts.profiledStarts = start == "profiled";
  opts.kernelScale = kernelScale;
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
  errs() << "rapid-trace: error: name a command: replay (see --help)\n";
  return 1;
}
