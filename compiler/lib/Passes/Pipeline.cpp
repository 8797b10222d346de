//===- Pipeline.cpp - One readable pipeline -------------------------------===//
#include "rapid/Passes/Pipeline.h"

#include "rapid/IR/Printer.h"
#include "rapid/IR/Verifier.h"

#include "llvm/Support/ErrorHandling.h"

namespace rapid {
namespace {

void verifyOrDie(const ir::Program &prog, const char *after) {
  std::string problem = ir::verify(prog);
  if (!problem.empty()) // our bug, never the user's: stop loudly
    llvm::report_fatal_error(llvm::Twine("IR verification failed after ") + after + ": " + problem);
}

void dump(const ir::Program &prog, const char *after, const PipelineOptions &opts) {
  if (!opts.printAfterAll) return;
  *opts.printAfterAll << "// ----- IR after " << after << " -----\n";
  ir::printProgram(prog, *opts.printAfterAll);
}

} // namespace

std::span<const Pass> passes() {
  static const Pass list[] = {
      {"layout", layoutPass},
      {"schedule", schedulePass},
      {"cost", costPass},
      {"memory", memoryPass},
  };
  return list;
}

ir::Program compilePoint(const ExperimentPoint &point, const PipelineOptions &opts) {
  ir::Program prog;
  prog.layerBlocks = opts.layerBlocks;
  prog.serveStep = opts.serveStep;
  for (const Pass &pass : passes()) {
    pass.run(prog, point);
    verifyOrDie(prog, pass.name);
    dump(prog, pass.name, opts);
  }
  return prog;
}

} // namespace rapid
