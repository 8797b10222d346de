//===- FuzzRapid.cpp - libFuzzer target: the .rapid front end -------------===//
//
// The input is an experiment file. It goes through what `rapidc` runs:
// analyze() (parse, imports from the real stdlib, Sema, sweep expansion),
// then, for the first few feasible points small enough to lower in well
// under a second, compilePoint() (lowering, layout, schedule, cost, memory).
//
// Besides sanitizer reports, crashes, timeouts and running out of memory,
// it fails on an error with no place (`rapidc: error: ...`) and on a failed
// analysis that reported no error.
//===----------------------------------------------------------------------===//
#include "FuzzCommon.h"

#include "rapid/Passes/Pipeline.h"
#include "rapid/Sema/Sema.h"

#include "llvm/Support/Regex.h"
#include "llvm/Support/SourceMgr.h"


using namespace rapid;
using rapid::fuzz::fail;

namespace {

/// A rough count of the ops lowering makes, to keep each input well inside
/// libFuzzer's -timeout under the sanitizers: large models and batches are
/// the tools' job (and the lit suites'), not the fuzzer's.
bool smallEnough(const ExperimentPoint &p) {
  int64_t layers = p.model.layers, gpus = p.network.gpus;
  int64_t steps = 1;
  if (p.training) {
    int64_t perMicro = std::max<int64_t>(1, p.training->microBatch) * std::max<int64_t>(1, p.parallel.dp);
    steps = p.training->globalBatch / perMicro;
  } else if (p.inference) {
    steps = p.inference->decodeSamples + 1;
  }
  return layers > 0 && layers <= 128 && gpus <= 1024 && steps <= 64 && layers * steps <= 2048;
}

void checkDiagnostics(llvm::StringRef text, bool ok, const DiagnosticEngine &diags) {
  if (!ok && !diags.hasErrors())
    fail("analyze() failed without reporting an error", text);
  // An error with a place is printed as `file:line:col: error: ...`, the
  // source line, and a caret line; one without, as `rapidc: error: ...`
  // alone. The source line may itself read `rapidc: error:` (libFuzzer
  // learns the string from this very check), but only it is followed by a
  // caret line.
  llvm::SmallVector<llvm::StringRef> lines;
  text.split(lines, '\n');
  auto isCaretLine = [](llvm::StringRef l) {
    return l.contains('^') && l.find_first_not_of(" \t~^") == llvm::StringRef::npos;
  };
  // (SourceMgr leaves the caret out under a line it cannot show, such as
  // one with invalid UTF-8, so an echoed line is also told by the located
  // header above it.)
  static const llvm::Regex header(":[0-9]+:[0-9]+: (error|warning|note): ");
  for (size_t i = 0; i < lines.size(); ++i)
    if (lines[i].starts_with("rapidc: error:") && !(i + 1 < lines.size() && isCaretLine(lines[i + 1])) &&
        !(i > 0 && header.match(lines[i - 1])))
      fail("an error without a place", text);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef input(reinterpret_cast<const char *>(data), size);
  static const std::string path = fuzz::workDir() + "/input.rapid";
  fuzz::writeFile(path, input);

  llvm::SourceMgr sm;
  std::string text;
  llvm::raw_string_ostream os(text);
  DiagnosticEngine diags(sm, os);
  SemaOptions opts;
  opts.stdlibDir = RAPID_STDLIB_DIR;
  // No exception is caught: one that escapes is a finding.
  std::optional<Program> prog = analyze(path, opts, diags);
  checkDiagnostics(text, prog.has_value(), diags);
  if (!prog)
    return 0;
  unsigned lowered = 0;
  for (const ExperimentPoint &p : prog->points) {
    if (!p.feasible || !smallEnough(p))
      continue;
    ir::Program ir = compilePoint(p, {});
    if (++lowered == 2)
      break;
  }
  return 0;
}
