//===- rapidc.cpp - The rapid compiler driver -----------------------------===//
//
// `rapidc exp.rapid` runs the pipeline as far as `--emit` asks: ast, sema, or
// (by default) everything that exists. Diagnostics go to stderr, requested
// output to stdout; exit status 1 on any error.
//===----------------------------------------------------------------------===//
#include "CostQuery.h"
#include "rapid/AST/ASTPrinter.h"
#include "rapid/Parse/Parser.h"
#include "rapid/Sema/PointPrinter.h"
#include "rapid/Sema/Sema.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

using namespace rapid;
namespace cl = llvm::cl;

namespace {

enum class Emit { Ast, Sema, Run };
enum class Format { Text, Json };

cl::OptionCategory category("rapidc options");
cl::list<std::string> inputFiles(cl::Positional, cl::desc("<experiment.rapid>"), cl::cat(category));
cl::opt<Emit> emit("emit", cl::desc("how far to run the pipeline"), cl::init(Emit::Run),
                   cl::values(clEnumValN(Emit::Ast, "ast", "print the syntax tree"),
                              clEnumValN(Emit::Sema, "sema", "print every resolved experiment point"),
                              clEnumValN(Emit::Run, "run", "run every experiment (default)")),
                   cl::cat(category));
cl::opt<Format> format("format", cl::desc("output format"), cl::init(Format::Text),
                       cl::values(clEnumValN(Format::Text, "text", "human-readable text"),
                                  clEnumValN(Format::Json, "json", "one JSON object per line")),
                       cl::cat(category));
cl::list<std::string> includeDirs("I", cl::desc("add a directory to the import search path"), cl::Prefix,
                                  cl::cat(category));
cl::list<std::string> overrides("set", cl::desc("override a declared value: --set h100.hbm.bandwidth='2 TB/s'"),
                                cl::value_desc("NAME=VALUE"), cl::cat(category));
cl::opt<std::string> costQuery("cost", cl::desc("cost one kernel: 'gemm 4096x4096x4096 bf16' (docs/model.md)"),
                              cl::value_desc("QUERY"), cl::cat(category));
cl::opt<std::string> costCsv("cost-csv", cl::desc("predict every GEMM of a measured CSV and print the errors"),
                             cl::value_desc("FILE"), cl::cat(category));
cl::opt<std::string> hardware("hardware", cl::desc("the gpu declaration --cost and --cost-csv use"),
                              cl::value_desc("NAME"), cl::cat(category));
cl::opt<std::string> maxMedianError("max-median-error", cl::desc("--cost-csv fails above this median error"),
                                    cl::value_desc("PERCENT"), cl::cat(category));
cl::opt<std::string> maxWorstError("max-worst-error", cl::desc("--cost-csv fails above this worst error"),
                                   cl::value_desc("PERCENT"), cl::cat(category));
cl::opt<std::string> stdlibDir("stdlib", cl::desc("where `import std.*` looks"), cl::init(RAPID_STDLIB_DIR),
                               cl::cat(category));

int emitAst(const std::string &inputFile, DiagnosticEngine &diags) {
  auto buf = llvm::MemoryBuffer::getFile(inputFile, /*IsText=*/true);
  if (!buf) {
    diags.report(DiagID::CannotOpenFile, {}, inputFile, buf.getError().message());
    return 1;
  }
  unsigned id = diags.sourceMgr().AddNewSourceBuffer(std::move(*buf), {});
  auto module = parseModule(id, diags);
  if (!module)
    return 1;
  ast::printModule(*module, diags.sourceMgr(), llvm::outs());
  return 0;
}

/// The summary table of `rapidc exp.rapid` until the later stages exist.
void printTable(const Program &prog, llvm::raw_ostream &os) {
  os << llvm::formatv("{0,-24} {1,-32} {2,-10} {3,6}  {4}\n", "experiment", "point", "workload", "GPUs", "status");
  for (const ExperimentPoint &p : prog.points) {
    std::string label = p.sweep.empty() ? "-" : pointLabel(p);
    os << llvm::formatv("{0,-24} {1,-32} {2,-10} {3,6}  {4}\n", p.experiment, label, p.workload, p.network.gpus,
                        p.feasible ? std::string("ok") : "pruned: " + p.reason);
  }
}

} // namespace

int main(int argc, char **argv) {
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
  if (costQuery.getNumOccurrences() || costCsv.getNumOccurrences()) {
    CostOptions co{costQuery, costCsv, hardware, {inputFiles.begin(), inputFiles.end()}, format == Format::Json,
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
  std::optional<Program> prog = analyze(inputFile, opts, diags);
  if (!prog)
    return 1;
  if (format == Format::Json) {
    for (const ExperimentPoint &p : prog->points) printPointJson(p, llvm::outs());
  } else if (emit == Emit::Sema) {
    for (const ExperimentPoint &p : prog->points) printPointText(p, llvm::outs());
  } else {
    printTable(*prog, llvm::outs());
  }
  return 0;
}
