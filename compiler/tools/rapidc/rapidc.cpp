//===- rapidc.cpp - The rapid compiler driver -----------------------------===//
//
// `rapidc exp.rapid` runs the pipeline as far as `--emit` asks: ast, sema, or
// (by default) everything that exists. Diagnostics go to stderr, requested
// output to stdout; exit status 1 on any error.
//===----------------------------------------------------------------------===//
#include "CostQuery.h"
#include "rapid/AST/ASTPrinter.h"
#include "rapid/Emit/Chakra.h"
#include "rapid/IR/Printer.h"
#include "rapid/Parse/Parser.h"
#include "rapid/Passes/Memory.h"
#include "rapid/Passes/Pipeline.h"
#include "rapid/Driver/Distributed.h"
#include "rapid/Driver/Sweep.h"
#include "rapid/Sema/PointPrinter.h"
#include "rapid/Sema/Sema.h"
#include "rapid/Spec/Docs.h"
#include "rapid/Support/Files.h"
#include "rapid/Support/Source.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/raw_ostream.h"

using namespace rapid;
namespace cl = llvm::cl;

namespace {

enum class Emit { Ast, Sema, IR, Memory, Chakra, Run };
enum class Format { Text, Json, Csv };

cl::OptionCategory category("rapidc options");
cl::list<std::string> inputFiles(cl::Positional, cl::desc("<experiment.rapid>"), cl::cat(category));
cl::opt<Emit> emit("emit", cl::desc("how far to run the pipeline"), cl::init(Emit::Run),
                   cl::values(clEnumValN(Emit::Ast, "ast", "print the syntax tree"),
                              clEnumValN(Emit::Sema, "sema", "print every resolved experiment point"),
                              clEnumValN(Emit::IR, "ir", "print the operator IR of every feasible point"),
                              clEnumValN(Emit::Memory, "memory", "print each point's memory per rank"),
                              clEnumValN(Emit::Chakra, "chakra", "write per-rank Chakra traces to -o DIR"),
                              clEnumValN(Emit::Run, "run", "run every experiment (default)")),
                   cl::cat(category));
cl::opt<Format> format("format", cl::desc("output format"), cl::init(Format::Text),
                       cl::values(clEnumValN(Format::Text, "text", "human-readable text"),
                                  clEnumValN(Format::Json, "json", "one JSON object per line"),
                                  clEnumValN(Format::Csv, "csv", "--emit=ir: one op per row")),
                       cl::cat(category));
cl::list<std::string> includeDirs("I", cl::desc("add a directory to the import search path"), cl::Prefix,
                                  cl::cat(category));
cl::list<std::string> overrides("set", cl::desc("override a declared value: --set h100.hbm.bandwidth='2 TB/s'"),
                                cl::value_desc("NAME=VALUE"), cl::cat(category));
cl::opt<std::string> outputDir("o", cl::desc("output folder (--emit=chakra)"), cl::value_desc("DIR"),
                               cl::cat(category));
cl::opt<std::string> rankList("ranks", cl::desc("--emit=chakra: write only these ranks' traces, as '0-7,64'"),
                              cl::value_desc("LIST"), cl::cat(category));
cl::opt<bool> compact("compact",
                      cl::desc("--emit=chakra: each pipeline stage's program once and a rank map (PREFIX.ranks.json) "
                               "that rapid-sim reads, instead of a trace per rank"),
                      cl::cat(category));
cl::opt<std::string> timeline("timeline", cl::desc("write a Perfetto timeline of the simulated point (see --point)"),
                              cl::value_desc("FILE.json"), cl::cat(category));
cl::opt<std::string> timelineRanks("timeline-ranks", cl::desc("--timeline: only these ranks' events, as '0-7,64'"),
                                   cl::value_desc("LIST"), cl::cat(category));
cl::opt<unsigned> timelinePoint("point", cl::desc("which point --timeline shows, counting from 0 as listed"),
                                cl::init(0), cl::cat(category));
cl::opt<unsigned> jobs("j",
                       cl::desc("points (or a single point's fault samples) evaluated at once (default: every "
                                "core; at most 4 per core and one per point or sample)"),
                       cl::init(0), cl::Prefix, cl::cat(category));
cl::opt<std::string> runDir("out",
                           cl::desc("one folder for a run: results.csv/.jsonl, plot.*.svg, points.txt (every "
                                    "resolved point) and, with --emit=chakra, traces/"),
                           cl::value_desc("DIR"), cl::cat(category));
cl::opt<std::string> outputPrefix("output", cl::desc("also write PREFIX.csv and PREFIX.jsonl, best first"),
                                  cl::value_desc("PREFIX"), cl::cat(category));
cl::opt<std::string> plotPrefix("plot", cl::desc("write PREFIX.points.svg (and PREFIX.faults.svg, PREFIX.serving.svg)"),
                                cl::value_desc("PREFIX"), cl::cat(category));
cl::list<std::string> only("only", cl::CommaSeparated, cl::value_desc("NAME,..."),
                          cl::desc("keep only the points of these experiments or sweeps (by name)"),
                          cl::cat(category));
cl::opt<bool> resume("resume", cl::desc("skip the points a killed run with the same --output finished"),
                     cl::cat(category));
cl::opt<bool> everyLayout("every-layout",
                          cl::desc("a search simulates every layout that fits, not only those its best and its "
                                   "Pareto front can come from"),
                          cl::cat(category));
cl::opt<SimMode> simMode("mode", cl::desc("how training points are simulated"), cl::init(SimMode::Auto),
                        cl::values(clEnumValN(SimMode::Auto, "auto", "hierarchical for large runs (default)"),
                                   clEnumValN(SimMode::Flattened, "flattened", "every op of every microbatch"),
                                   clEnumValN(SimMode::Hierarchical, "hierarchical", "layers timed once, then the pipeline"),
                                   clEnumValN(SimMode::HierarchicalAll, "hierarchical-all",
                                              "hierarchical on every data-parallel replica, none standing for the rest")),
                        cl::cat(category));
cl::opt<int64_t> irStage("stage", cl::desc("--emit=ir: only this stage's ops"), cl::cat(category));
cl::opt<int64_t> irLayer("layer", cl::desc("--emit=ir: only this layer's ops (-1: embedding, head, optimizer)"),
                         cl::cat(category));
cl::opt<int64_t> irMicro("micro", cl::desc("--emit=ir: only this microbatch's ops (-1: once per step)"),
                         cl::cat(category));
cl::opt<bool> printAfterAll("print-after-all", cl::desc("print the IR after every pass"), cl::cat(category));
cl::opt<std::string> costQuery("cost", cl::desc("cost one kernel: 'gemm 4096x4096x4096 bf16' (docs/model.md)"),
                              cl::value_desc("QUERY"), cl::cat(category));
cl::opt<std::string> costCsv("cost-csv", cl::desc("predict every GEMM of a measured CSV and print the errors"),
                             cl::value_desc("FILE"), cl::cat(category));
cl::opt<std::string> calibrateCsv("calibrate",
                                  cl::desc("fit --hardware's calibration fields to measured kernels (a CSV from "
                                           "tools/calibrate) and print the errors before and after"),
                                  cl::value_desc("FILE"), cl::cat(category));
cl::opt<std::string> hardware("hardware", cl::desc("the gpu declaration --cost and --cost-csv use"),
                              cl::value_desc("NAME"), cl::cat(category));
cl::opt<std::string> stack("stack", cl::desc("the stack declaration whose launch cost --cost and --cost-csv add "
                                          "(default: the stack table's defaults)"),
                           cl::value_desc("NAME"), cl::cat(category));
cl::opt<std::string> maxMedianError("max-median-error", cl::desc("--cost-csv fails above this median error"),
                                    cl::value_desc("PERCENT"), cl::cat(category));
cl::opt<std::string> maxWorstError("max-worst-error", cl::desc("--cost-csv fails above this worst error"),
                                   cl::value_desc("PERCENT"), cl::cat(category));
cl::opt<bool> printFieldTables("print-field-tables",
                               cl::desc("print every field of the language as docs/language.md's tables"),
                               cl::cat(category));
cl::opt<std::string> modelFrom("model-from",
                              cl::desc("print the model declaration a Hugging Face config.json gives (see --name)"),
                              cl::value_desc("CONFIG.json"), cl::cat(category));
cl::opt<std::string> modelName("name", cl::desc("the declaration's name for --model-from (default: imported)"),
                               cl::init("imported"), cl::value_desc("NAME"), cl::cat(category));
cl::opt<std::string> stdlibDir("stdlib", cl::desc("where `import std.*` looks"), cl::init(RAPID_STDLIB_DIR),
                               cl::cat(category));

int emitAst(const std::string &inputFile, DiagnosticEngine &diags) {
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> buf = readSourceFile(inputFile);
  if (!buf) {
    diags.report(DiagID::CannotOpenFile, {}, inputFile, llvm::toString(buf.takeError()));
    return 1;
  }
  unsigned id = addSourceBuffer(diags.sourceMgr(), std::move(*buf), {});
  auto module = parseModule(id, diags);
  if (!module)
    return 1;
  ast::printModule(*module, diags.sourceMgr(), llvm::outs());
  return 0;
}

int emitIr(const Program &prog) {
  PipelineOptions popts;
  if (printAfterAll) popts.printAfterAll = &llvm::outs();
  ir::OpFilter filter;
  if (irStage.getNumOccurrences()) filter.stage = irStage;
  if (irLayer.getNumOccurrences()) filter.layer = irLayer;
  if (irMicro.getNumOccurrences()) filter.micro = irMicro;
  bool filtered = filter.stage || filter.layer || filter.micro;
  if (format == Format::Csv) llvm::outs() << ir::opsCsvHeader() << "\n";
  for (const ExperimentPoint &p : prog.points) {
    if (!p.feasible) continue;
    ir::Program ir = compilePoint(p, popts);
    if (format == Format::Csv || filtered) {
      std::string name = p.sweep.empty() ? p.experiment : p.experiment + " " + pointLabel(p);
      if (format != Format::Csv) llvm::outs() << "// " << name << "\n";
      ir::printOps(ir, filter, format == Format::Csv, name, llvm::outs());
      continue;
    }
    if (!printAfterAll) ir::printProgram(ir, llvm::outs());
    ir::printSummary(ir, llvm::outs());
  }
  return 0;
}

/// A rank-list option (`--ranks 0-7,64`) into `out` when given; false after
/// reporting a malformed one.
bool rankListOption(const cl::opt<std::string> &opt, const char *name, std::vector<int64_t> &out,
                    DiagnosticEngine &diags) {
  if (!opt.getNumOccurrences()) return true;
  llvm::Expected<std::vector<int64_t>> r = parseRankList(opt, name);
  if (!r) {
    diags.report(DiagID::BadOption, {}, llvm::toString(r.takeError()));
    return false;
  }
  out = std::move(*r);
  return true;
}

int emitTraces(const Program &prog, DiagnosticEngine &diags) {
  if (outputDir.empty()) {
    diags.report(DiagID::BadOption, {}, "--emit=chakra needs an output folder: -o DIR");
    return 1;
  }
  std::vector<int64_t> only;
  if (!rankListOption(rankList, "--ranks", only, diags)) return 1;
  if (compact && rankList.getNumOccurrences()) {
    diags.report(DiagID::BadOption, {}, "--compact writes every rank's program once; --ranks chooses per-rank traces");
    return 1;
  }
  size_t written = 0;
  for (const ExperimentPoint &p : prog.points) {
    if (!p.feasible) {
      diags.report(DiagID::TracesSkipped, p.where, pointName(p), p.reason);
      continue;
    }
    ir::Program ir = compilePoint(p, {});
    if (!ir.memoryReport->fits) {
      diags.report(DiagID::TracesSkipped, p.where, pointName(p), ir.memoryReport->reason);
      continue;
    }
    std::string dir = pointDirectory(outputDir, p);
    if (llvm::Error e = emitChakra(ir, p, dir, p.experiment, rankList.getNumOccurrences() ? &only : nullptr, compact)) {
      diags.report(DiagID::BadOption, {}, llvm::toString(std::move(e)));
      return 1;
    }
    llvm::outs() << "wrote " << dir << "\n";
    ++written;
  }
  if (written == 0) {
    diags.report(DiagID::NoTracesWritten, {});
    return 1;
  }
  return 0;
}

int emitMemory(const Program &prog) {
  for (const ExperimentPoint &p : prog.points) {
    if (!p.feasible) continue;
    ir::Program ir = compilePoint(p, {});
    const MemoryReport &mem = *ir.memoryReport;
    format == Format::Json ? printMemoryJson(mem, p, llvm::outs()) : printMemoryText(mem, ir.memory, p, llvm::outs());
  }
  return 0;
}

/// --only: the points of the named experiments and sweeps, in the order the
/// file runs them (experiments, then sweeps and searches); a name that picks
/// nothing is an error (a typo would otherwise run nothing).
bool keepOnly(Program &prog, DiagnosticEngine &diags) {
  if (only.empty()) return true;
  llvm::StringSet<> names, used;
  for (const std::string &name : only) names.insert(name);
  std::vector<ExperimentPoint> kept;
  for (ExperimentPoint &p : prog.points) {
    const std::string &name = p.sweep.empty() ? p.experiment : p.sweep;
    if (!names.contains(name)) continue;
    used.insert(name);
    kept.push_back(std::move(p));
  }
  for (const std::string &name : only)
    if (!used.contains(name)) {
      diags.report(DiagID::BadOption, {},
                   fmt::format("--only: no experiment or sweep named '{}' runs in this file", name));
      return false;
    }
  prog.points = std::move(kept);
  return true;
}

int emitSema(const Program &prog) {
  for (const ExperimentPoint &p : prog.points)
    format == Format::Json ? printPointJson(p, llvm::outs()) : printPointText(p, llvm::outs());
  return 0;
}

/// `rapidc exp.rapid`: every point simulated (unless pruned), one line or
/// JSON object each, in point order.
int runAll(const Program &prog, DiagnosticEngine &diags) {
  if (!timeline.empty() && timelinePoint >= prog.points.size()) {
    diags.report(DiagID::BadOption, {}, fmt::format("--point={} but the file has {} points", unsigned(timelinePoint),
                                                    prog.points.size()));
    return 1;
  }
  SweepOptions so;
  so.jobs = jobs ? unsigned(jobs) : llvm::hardware_concurrency().compute_thread_count();
  so.output = outputPrefix;
  so.resume = resume;
  so.progress = prog.points.size() > 1 && llvm::sys::Process::StandardErrIsDisplayed();
  so.timeline = timeline;
  so.timelinePoint = timelinePoint;
  if (!rankListOption(timelineRanks, "--timeline-ranks", so.timelineRanks, diags)) return 1;
  so.mode = simMode;
  so.boundSearches = !everyLayout;
  so.diags = &diags;
  if (resume && outputPrefix.empty()) {
    diags.report(DiagID::BadOption, {}, "--resume needs --output PREFIX: it continues PREFIX.jsonl.partial");
    return 1;
  }
  llvm::Expected<std::vector<PointResult>> results = runSweep(prog.points, so);
  if (!results) {
    if (mpi::isRoot()) diags.report(DiagID::BadOption, {}, llvm::toString(results.takeError()));
    return 1;
  }
  if (!mpi::isRoot()) return 0; // rank 0 prints and writes what every rank found
  if (format == Format::Text) printResultHeader(llvm::outs());
  for (const PointResult &r : *results)
    format == Format::Json ? void(llvm::outs() << resultJson(r) << "\n") : printResultRow(r, llvm::outs());
  if (format == Format::Text) printSearchSummary(*results, llvm::outs());
  if (!plotPrefix.empty())
    if (llvm::Error e = writePlots(plotPrefix, *results)) diags.report(DiagID::BadOption, {}, llvm::toString(std::move(e)));
  reportOutcomes(prog.points, *results, diags);
  return diags.hasErrors() ? 1 : 0;
}

} // namespace

int rapidc(int argc, char **argv) {
  cl::SetVersionPrinter([](llvm::raw_ostream &os) { os << "rapidc " << RAPID_VERSION << "\n"; });
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv,
                              "rapid: predicts LLM training and inference time on GPU clusters\n");
  llvm::SourceMgr sm;
  DiagnosticEngine diags(sm);
  SemaOptions opts;
  opts.includeDirs.assign(includeDirs.begin(), includeDirs.end());
  opts.stdlibDir = stdlibDir;
  opts.overrides.assign(overrides.begin(), overrides.end());
  if (printFieldTables) {
    llvm::outs() << fieldTablesMarkdown();
    return 0;
  }
  if (modelFrom.getNumOccurrences()) {
    std::string decl = modelDeclarationFrom(modelFrom, modelName, diags);
    llvm::outs() << decl;
    return decl.empty() ? 1 : 0;
  }
  if (calibrateCsv.getNumOccurrences()) {
    CostOptions co{"", calibrateCsv, hardware, stack, {inputFiles.begin(), inputFiles.end()}, false, "", "", opts};
    return runCalibration(co, outputPrefix, diags);
  }
  if (costQuery.getNumOccurrences() || costCsv.getNumOccurrences()) {
    CostOptions co{costQuery, costCsv, hardware, stack, {inputFiles.begin(), inputFiles.end()}, format == Format::Json,
                   maxMedianError, maxWorstError, opts};
    return costQuery.getNumOccurrences() ? runCostQuery(co, diags) : runCostValidation(co, diags);
  }
  if (inputFiles.size() != 1) {
    diags.report(DiagID::BadOption, {}, inputFiles.empty() ? "no input file; usage: rapidc [options] <experiment.rapid>"
                                                           : "expected one input file");
    return 1;
  }
  const std::string &inputFile = inputFiles.front();
  if (emit == Emit::Ast)
    return emitAst(inputFile, diags);
  if (!runDir.empty()) { // the run folder's names, where no flag names another
    if (std::error_code ec = llvm::sys::fs::create_directories(runDir)) {
      diags.report(DiagID::CannotWrite, {}, runDir, ec.message());
      return 1;
    }
    if (outputPrefix.empty()) outputPrefix = runDir + "/results";
    if (plotPrefix.empty()) plotPrefix = runDir + "/plot";
    if (outputDir.empty()) outputDir = runDir + "/traces";
  }
  std::optional<Program> prog = analyze(inputFile, opts, diags);
  if (!prog || !keepOnly(*prog, diags))
    return 1;
  if (!runDir.empty() && mpi::isRoot()) { // what every point resolved to, for reproducing the run
    std::string text;
    llvm::raw_string_ostream os(text);
    for (const ExperimentPoint &p : prog->points) printPointText(p, os);
    if (llvm::Error e = writeFileAtomically(runDir + "/points.txt", text)) {
      diags.report(DiagID::CannotWrite, {}, runDir + "/points.txt", llvm::toString(std::move(e)));
      return 1;
    }
  }
  if (format == Format::Csv && emit != Emit::IR) {
    diags.report(DiagID::BadOption, {}, "--format=csv is for --emit=ir; results go to CSV with --output PREFIX");
    return 1;
  }
  if (emit == Emit::IR || emit == Emit::Chakra || emit == Emit::Memory)
    for (const ExperimentPoint &p : prog->points)
      if (p.replay) {
        diags.report(DiagID::BadOption, p.where,
                     fmt::format("experiment '{}' replays a profile: it has no operator IR, memory model or Chakra "
                                 "traces of its own (`rapid-trace convert DIR -o OUT` writes its graph as Chakra)",
                                 p.experiment));
        return 1;
      }
  switch (emit) {
  case Emit::IR: return emitIr(*prog);
  case Emit::Chakra: return emitTraces(*prog, diags);
  case Emit::Memory: return emitMemory(*prog);
  case Emit::Sema: return emitSema(*prog);
  case Emit::Ast:
  case Emit::Run: break;
  }
  return runAll(*prog, diags);
}

int main(int argc, char **argv) {
  mpi::Session session(argc, argv);
  if (!session.error().empty()) {
    llvm::errs() << "rapidc: error: " << session.error() << "\n";
    return 1;
  }
  int status = rapidc(argc, argv);
  // A full disk or a closed pipe under stdout is an error the user must see,
  // not LLVM's "IO failure on output stream" abort at exit.
  llvm::outs().flush();
  if (llvm::outs().has_error()) {
    llvm::errs() << "rapidc: error: cannot write the standard output: " << llvm::outs().error().message() << "\n";
    llvm::outs().clear_error();
    status = 1;
  }
  // An error that other ranks cannot know of (a file one node cannot read)
  // would leave them waiting for this one: end the job.
  if (status != 0 && !mpi::inLockstep()) session.abort(status);
  return status;
}
