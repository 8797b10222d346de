//===- Sema.h - From AST to checked experiment points ----------*- C++ -*-===//
//
// Sema loads a file and its imports, declares every name, merges each
// declaration with the one it derives from, evaluates fields with units,
// fills defaults, checks feasibility and expands sweeps. Its product is one
// ExperimentPoint per experiment (or sweep point) in the root file, with every
// value resolved in base units: the input of lowering.
//===----------------------------------------------------------------------===//
#pragma once

#include "rapid/Sema/Value.h"
#include "rapid/Spec/Specs.h"
#include "rapid/Support/Diagnostics.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace rapid {
namespace ast {
struct Module;
}

/// `map tp, cp -> fast;`
struct DegreeMapping {
  std::vector<std::string> degrees; ///< "tp", "cp", ...
  std::vector<std::string> dims;
};

/// One experiment, or one point of a sweep over it, fully resolved: every
/// field defaulted, checked and in base units, in typed specs.
struct ExperimentPoint {
  std::string experiment;
  std::string sweep; ///< "" unless the point comes from a sweep (or a search)
  bool search = false; ///< from a `search`: its results mark their Pareto front
  std::vector<std::pair<std::string, Value>> point; ///< swept values, in axis order, as labels
  bool feasible = true;
  std::string reason; ///< why a sweep point was pruned
  bool resolved = false; ///< false for a sweep point pruned before resolution (`dp = 8 / 16`)
  llvm::SMRange where;   ///< the experiment's or the sweep's name: where run-time failures are reported
  ExperimentRefs refs;
  std::optional<TrainingSpec> training;   ///< `training { ... }` was written
  std::optional<InferenceSpec> inference; ///< `inference { ... }` was written
  std::optional<ServingSpec> serving;     ///< `serving { ... }` was written
  std::optional<ReplaySpec> replay;       ///< `replay { ... }` was written
  std::optional<GpuSpec> profiledGpu;     ///< replay.profiled_gpu, resolved
  std::optional<ModelSpec> draftModel;    ///< serving.draft, resolved
  ParallelSpec parallel;
  std::vector<DegreeMapping> mapping;
  ModelSpec model;
  GpuSpec gpu;
  StackSpec stack; ///< the named stack, or the table's defaults
  TopologySpec network;
  std::optional<FaultsSpec> faults;

  /// Training, inference or serving; None unless exactly one of the
  /// sections is written (Sema reports that, so a point that reaches
  /// lowering has one).
  Workload workload() const {
    if (int(training.has_value()) + int(inference.has_value()) + int(serving.has_value()) + int(replay.has_value()) != 1)
      return Workload::None;
    return training ? Workload::Training : inference ? Workload::Inference : serving ? Workload::Serving : Workload::Replay;
  }
  bool isTraining() const { return workload() == Workload::Training; }
  /// The math precision of the workload.
  DType precision() const {
    return training ? training->precision : inference ? inference->precision : serving ? serving->precision : DType::BF16;
  }
};

struct SemaOptions {
  std::vector<std::string> includeDirs;
  std::string stdlibDir;
  std::vector<std::string> overrides; ///< `--set NAME=VALUE`
};

struct Program {
  std::vector<ExperimentPoint> points;
};

/// Analyses `file`; reports every problem it finds and returns nothing if any
/// of them is an error.
std::optional<Program> analyze(const std::string &file, const SemaOptions &opts, DiagnosticEngine &diags);

/// Turns every `model m = hf("config.json")` of `m` into the assignments
/// the file gives, ahead of the block's own (ModelImport.cpp); false after
/// reporting an error.
bool importModelSources(ast::Module &m, DiagnosticEngine &diags);

/// `rapidc --model-from config.json`: the model declaration `name` a
/// Hugging Face config gives, as .rapid text; "" after reporting an error.
std::string modelDeclarationFrom(const std::string &configPath, const std::string &name, DiagnosticEngine &diags);

/// Resolves the `gpu` declaration `name` alone, from the files or modules
/// `imports` (`std.gpus`, `my.rapid`): for queries such as
/// `rapidc --cost ... --hardware a100_sxm_80gb`. Reports problems to `diags`.
std::optional<GpuSpec> resolveGpu(const std::string &name, const std::vector<std::string> &imports,
                                  const SemaOptions &opts, DiagnosticEngine &diags);

/// Resolves the `stack` declaration `name` the same way; an empty name gives
/// the defaults of the stack table (what an experiment without `stack` runs on).
std::optional<StackSpec> resolveStack(const std::string &name, const std::vector<std::string> &imports,
                                      const SemaOptions &opts, DiagnosticEngine &diags);

} // namespace rapid
