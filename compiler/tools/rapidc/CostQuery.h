//===- CostQuery.h - `rapidc --cost` and `--cost-csv` ----------*- C++ -*-===//
//
// The query language (docs/model.md §6):
//   gemm MxKxN [batch=B] [DTYPE]
//   attention b=B s=S heads=H head_dim=D [kv_heads=K] [causal] [flash|naive]
//             [fwd|bwd] [DTYPE]
//   pointwise bytes=N flops=N
//   pointwise OP elements=N [fwd|bwd] [DTYPE]   OP: layernorm, rmsnorm, ...
// DTYPE defaults to bf16. The hardware is a `gpu` declaration found by name
// in std.gpus (when the standard library has it) and the given files; the
// launch cost is the `stack` named by --stack (std.stacks and the files), or
// the stack table's defaults.
//===----------------------------------------------------------------------===//
#pragma once

#include "rapid/Cost/Pointwise.h"
#include "rapid/Sema/Sema.h"
#include "rapid/Support/Diagnostics.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace rapid {

struct CostOptions {
  std::string query, csv, hardware, stack;
  std::vector<std::string> files;
  bool json = false;
  std::string maxMedianError, maxWorstError; ///< "15%", empty when not asked
  SemaOptions sema;
};

/// `rapidc --cost QUERY --hardware NAME`: prints one kernel's cost.
int runCostQuery(const CostOptions &o, DiagnosticEngine &diags);
/// `rapidc --cost-csv FILE --hardware NAME`: predicts every row of a
/// measured-GEMM table and prints the errors (exit 1 past a bound).
int runCostValidation(const CostOptions &o, DiagnosticEngine &diags);
/// `rapidc --calibrate FILE --hardware NAME`: fits the GPU's calibration
/// fields to measured kernels, prints the errors before and after and the
/// fitted declaration (also to PREFIX.rapid when `outputPrefix` is set).
int runCalibration(const CostOptions &o, const std::string &outputPrefix, DiagnosticEngine &diags);

namespace costquery {

struct GemmQuery { cost::GemmShape shape; };
struct AttentionQuery {
  cost::AttentionShape shape;
  bool flash = true;
  cost::Pass pass = cost::Pass::Forward;
};
struct PointwiseQuery {
  std::optional<cost::PointwiseOp> op; ///< empty: raw bytes= and flops=
  int64_t elements = 0;
  cost::PointwiseWork work;
  DType dtype = DType::BF16;
  cost::Pass pass = cost::Pass::Forward;
};
using Query = std::variant<GemmQuery, AttentionQuery, PointwiseQuery>;

/// Parses a query; on error reports it to `diags` and returns nothing.
std::optional<Query> parseQuery(const std::string &text, DiagnosticEngine &diags);
/// The `gpu` named by `o.hardware`, from std.gpus if present and `o.files`.
std::optional<GpuSpec> resolveGpu(const CostOptions &o, DiagnosticEngine &diags);
/// The `stack` named by `o.stack`, or the defaults when none is named.
std::optional<StackSpec> resolveStack(const CostOptions &o, DiagnosticEngine &diags);

/// The index of column `name` in a CSV header.
std::optional<size_t> column(const llvm::SmallVectorImpl<llvm::StringRef> &header, llvm::StringRef name);

/// Absolute relative errors of predictions against measurements.
struct Errors {
  std::vector<double> abs;
  size_t worstAt = 0;
  /// Records one prediction; returns its signed relative error.
  double add(double predicted, double measured) {
    double e = (predicted - measured) / measured;
    if (!abs.empty() && std::fabs(e) > abs[worstAt]) worstAt = abs.size();
    abs.push_back(std::fabs(e));
    return e;
  }
  double worst() const { return abs.empty() ? 0 : abs[worstAt]; }
  double median() const;
};

void printGemm(const std::string &q, const GpuSpec &g, const cost::GemmCost &c, bool json,
               llvm::raw_ostream &os);
void printAttention(const std::string &q, const GpuSpec &g, const AttentionQuery &a,
                    const cost::AttentionCost &c, bool json, llvm::raw_ostream &os);
void printPointwise(const std::string &q, const GpuSpec &g, const cost::KernelCost &c, bool json,
                    llvm::raw_ostream &os);

} // namespace costquery
} // namespace rapid
