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
#include "rapid/Support/Diagnostics.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace rapid {

/// Resolved fields of one declaration, by dotted path, in sorted order.
using FieldValues = std::map<std::string, Value>;

struct ResolvedDim {
  std::string name;
  std::string kind;            ///< Ring, Torus2D, FatTree, ...
  std::vector<int64_t> shape;  ///< extents; the dimension has their product of ranks
  int64_t size = 1;
  FieldValues fields;          ///< bandwidth, latency, oversubscription, algorithm
};

struct ResolvedTopology {
  std::string name;
  std::vector<ResolvedDim> dims; ///< dimension 0 varies fastest over ranks
  int64_t gpus = 1;
};

struct ResolvedLinkFault {
  bool hard = false;
  std::string dim;
  int64_t a = 0, b = 0; ///< endpoints, as indices within the dimension
  FieldValues fields;   ///< derate, extra_latency
};

struct ResolvedRandomFault {
  std::string name;
  FieldValues fields; ///< samples, seed, links, count, kind, derate, extra_latency
};

struct ResolvedFaults {
  std::string name;
  std::vector<ResolvedLinkFault> links;
  std::vector<ResolvedRandomFault> random;
};

/// `map tp, cp -> fast;`
struct DegreeMapping {
  std::vector<std::string> degrees; ///< "tp", "cp", ...
  std::vector<std::string> dims;
};

struct ExperimentPoint {
  std::string experiment;
  std::string sweep; ///< "" unless the point comes from a sweep
  std::vector<std::pair<std::string, Value>> point; ///< swept values, in axis order
  bool feasible = true;
  std::string reason; ///< why a sweep point was pruned
  std::string workload; ///< "training" or "inference"
  FieldValues fields;   ///< the experiment's own fields
  std::string modelName, gpuName;
  FieldValues model, gpu;
  ResolvedTopology network;
  std::optional<ResolvedFaults> faults;
  std::vector<DegreeMapping> mapping;

  /// Typed access for later stages; the schema guarantees presence and unit.
  double num(const FieldValues &f, const std::string &path) const { return f.at(path).num(); }
  int64_t integer(const std::string &path) const { return (int64_t)fields.at(path).num(); }
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

} // namespace rapid
