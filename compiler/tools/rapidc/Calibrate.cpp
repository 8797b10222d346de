//===- Calibrate.cpp - `rapidc --calibrate`: fit a GPU to measured kernels -===//
//
// Reads kernel timings (what tools/calibrate/calibrate.py writes on a real
// GPU, or any CSV with m, k, n, latency_ms such as the Nsight table), costs
// every row with the named `gpu`, fits its calibration fields, and prints the
// errors before and after, per row and per kind, and the fitted declaration
// (also to PREFIX.rapid with --output).
//
// The fit is one achieved/peak ratio per resource, as docs/model.md defines
// them: calibration.compute over the rows the tensor cores (or the latency
// and shared memory that scale with them) bound, calibration.hbm over the
// rows HBM bounds. Each is a 1-D search minimising the mean |log(predicted /
// measured)| of its rows; two rounds, since a new factor can move a row to
// another bound. Nothing else is tuned: the model's shape effects stay the
// model's, so what remains after the fit is what the model gets wrong.
//===----------------------------------------------------------------------===//
#include "CostQuery.h"

#include "rapid/Cost/Gemm.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

using namespace rapid::cost;

namespace rapid {
namespace {

struct Measurement {
  enum Kind { Gemm, Pointwise } kind = Gemm;
  GemmShape gemm;
  PointwiseWork work;
  double seconds = 0;
  std::string label() const {
    return kind == Gemm ? fmt::format("gemm {}x{}x{}{}", gemm.m, gemm.k, gemm.n,
                                      gemm.batch > 1 ? fmt::format(" batch={}", gemm.batch) : "")
                        : fmt::format("pointwise {:.4g} B", work.bytes.value());
  }
};

/// One CSV field by column name; "" when the column is absent.
struct Fields {
  const llvm::SmallVectorImpl<llvm::StringRef> &header, &values;
  llvm::StringRef get(llvm::StringRef name) const {
    std::optional<size_t> i = costquery::column(header, name);
    return i ? values[*i].trim() : "";
  }
};

/// One data line; "" on success, else what is wrong with it.
std::string parse(const Fields &f, Measurement &m) {
  llvm::StringRef kind = f.get("kind");
  if (kind.empty() || kind == "gemm") {
    m.kind = Measurement::Gemm;
    const std::pair<const char *, int64_t *> sizes[] = {{"m", &m.gemm.m}, {"k", &m.gemm.k}, {"n", &m.gemm.n}};
    for (auto [name, out] : sizes)
      if (f.get(name).getAsInteger(10, *out) || *out <= 0)
        return fmt::format("expected a positive whole number for {} but found '{}'", name, f.get(name).str());
    if (!f.get("batch").empty() && (f.get("batch").getAsInteger(10, m.gemm.batch) || m.gemm.batch <= 0))
      return fmt::format("expected a positive whole number for batch but found '{}'", f.get("batch").str());
    if (llvm::StringRef t = f.get("dtype"); !t.empty()) {
      std::optional<DType> d = parseEnum<DType>(t);
      if (!d) return fmt::format("expected a dtype (fp32, tf32, bf16, fp16, fp8) but found '{}'", t.str());
      m.gemm.dtype = *d;
    }
  } else if (kind == "pointwise") {
    m.kind = Measurement::Pointwise;
    double bytes = 0, flops = 0;
    if (f.get("bytes").getAsDouble(bytes) || bytes <= 0 || (!f.get("flops").empty() && f.get("flops").getAsDouble(flops)))
      return "expected a positive number of bytes (and a number of flops) for a pointwise row";
    m.work = PointwiseWork{Bytes(bytes), Flops(flops), 1};
  } else {
    return fmt::format("expected kind 'gemm' or 'pointwise' but found '{}'", kind.str());
  }
  if (f.get("latency_ms").getAsDouble(m.seconds) || m.seconds <= 0)
    return fmt::format("expected a positive latency_ms but found '{}'", f.get("latency_ms").str());
  m.seconds *= 1e-3;
  return "";
}

std::optional<std::vector<Measurement>> readMeasurements(const std::string &path, DiagnosticEngine &diags) {
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buf) return diags.report(DiagID::CannotOpenFile, {}, path, buf.getError().message()), std::nullopt;
  llvm::SmallVector<llvm::StringRef> lines, header;
  (*buf)->getBuffer().split(lines, '\n', -1, /*KeepEmpty=*/true);
  std::vector<Measurement> out;
  for (size_t l = 0; l < lines.size(); ++l) {
    llvm::StringRef line = lines[l].trim();
    if (line.empty() || line.starts_with("#")) continue; // the script's provenance lines
    llvm::SmallVector<llvm::StringRef> values;
    line.split(values, ',');
    if (header.empty()) {
      header = values;
      if (!llvm::is_contained(header, "latency_ms"))
        return diags.report(DiagID::BadCsv, {}, path, l + 1, "no column 'latency_ms'"), std::nullopt;
      continue;
    }
    if (values.size() != header.size())
      return diags.report(DiagID::BadCsv, {}, path, l + 1,
                          fmt::format("expected {} fields but found {}", header.size(), values.size())),
             std::nullopt;
    Measurement m;
    if (std::string err = parse(Fields{header, values}, m); !err.empty())
      return diags.report(DiagID::BadCsv, {}, path, l + 1, err), std::nullopt;
    out.push_back(m);
  }
  if (out.empty()) return diags.report(DiagID::BadCsv, {}, path, 1, "no measurements"), std::nullopt;
  return out;
}

KernelCost predict(const GpuSpec &g, Seconds launch, const Measurement &m) {
  KernelCost c = m.kind == Measurement::Gemm ? KernelCost(gemmCost(g, m.gemm)) : pointwiseCost(g, m.work);
  return launched(c, launch);
}

/// The calibration field a row's prediction depends on: latency and shared
/// memory scale with calibration.compute too (docs/model.md §1).
enum class Field { Compute, Hbm, None };
Field governs(Bound b) {
  switch (b) {
  case Bound::Compute: case Bound::Latency: case Bound::Smem: return Field::Compute;
  case Bound::Hbm: return Field::Hbm;
  default: return Field::None; // L2 has no measured rows to fit here; launch is the stack's
  }
}

double logError(const GpuSpec &g, Seconds launch, const Measurement &m) {
  return std::fabs(std::log(predict(g, launch, m).time.value() / m.seconds));
}

/// The value of `member` in [0.2, 1.5] that minimises the mean |log error|
/// of `rows` (a grid of 0.5 % steps: the search is cheap and has no local
/// minima to fall into); nothing when there are no rows.
std::optional<double> fit(GpuSpec g, double GpuSpec::*member, Seconds launch, const std::vector<const Measurement *> &rows) {
  if (rows.empty()) return std::nullopt;
  double best = g.*member, bestCost = INFINITY;
  for (int step = 40; step <= 300; ++step) {
    g.*member = step * 0.005;
    double cost = 0;
    for (const Measurement *m : rows) cost += logError(g, launch, *m);
    if (cost < bestCost) bestCost = cost, best = g.*member;
  }
  return best;
}

std::string summary(const costquery::Errors &e) {
  return fmt::format("{} rows, median |error| {:.1f}%, worst {:.1f}%", e.abs.size(), e.median() * 100, e.worst() * 100);
}

std::string declaration(const GpuSpec &fitted, const std::string &base, const std::string &csv) {
  return fmt::format("// Fitted by `rapidc --calibrate {} --hardware {}`: calibration only, the\n"
                     "// rest of '{}' unchanged (docs/model.md, calibration workflow).\n"
                     "gpu {}_calibrated : {} {{\n  calibration {{\n    compute = {:.1f} %;\n    hbm = {:.1f} %;\n  }}\n}}\n",
                     csv, base, base, base, base, fitted.calibrationCompute * 100, fitted.calibrationHbm * 100);
}

} // namespace

int runCalibration(const CostOptions &o, const std::string &outputPrefix, DiagnosticEngine &diags) {
  auto rows = readMeasurements(o.csv, diags);
  if (!rows) return 1;
  auto g = costquery::resolveGpu(o, diags);
  if (!g) return 1;
  // Timings taken in CUDA graphs (as the script takes them) hold no launch
  // cost: without --stack, none is added.
  Seconds launch(0);
  if (!o.stack.empty()) {
    std::optional<StackSpec> stack = costquery::resolveStack(o, diags);
    if (!stack) return 1;
    launch = cost::launchCost(*stack, /*decodeStep=*/false);
  }
  GpuSpec fitted = *g;
  std::vector<std::string> notes;
  for (int round = 0; round < 2; ++round) {
    std::vector<const Measurement *> compute, hbm;
    for (const Measurement &m : *rows) {
      Field f = governs(predict(fitted, launch, m).bound);
      if (f != Field::None) (f == Field::Compute ? compute : hbm).push_back(&m);
    }
    notes.clear();
    if (auto v = fit(fitted, &GpuSpec::calibrationCompute, launch, compute)) fitted.calibrationCompute = *v;
    else notes.push_back("no row is bound by the tensor cores: calibration.compute kept");
    if (auto v = fit(fitted, &GpuSpec::calibrationHbm, launch, hbm)) fitted.calibrationHbm = *v;
    else notes.push_back("no row is bound by HBM: calibration.hbm kept");
  }
  llvm::raw_ostream &os = llvm::outs();
  os << fmt::format("{:<32} {:>12} {:>12} {:>8} {:>12} {:>8}  {}\n", "kernel", "measured_ms", "before_ms", "error",
                    "after_ms", "error", "bound after");
  costquery::Errors before[2], after[2];
  for (const Measurement &m : *rows) {
    KernelCost b = predict(*g, launch, m), a = predict(fitted, launch, m);
    double eb = before[m.kind].add(b.time.value(), m.seconds), ea = after[m.kind].add(a.time.value(), m.seconds);
    os << fmt::format("{:<32} {:>12.4f} {:>12.4f} {:>+7.1f}% {:>12.4f} {:>+7.1f}%  {}\n", m.label(), m.seconds * 1e3,
                      b.time.value() * 1e3, eb * 100, a.time.value() * 1e3, ea * 100, nameOf(a.bound));
  }
  const char *kinds[] = {"gemm", "pointwise"};
  for (int k = 0; k < 2; ++k)
    if (!before[k].abs.empty())
      os << fmt::format("{}: before {}; after {}\n", kinds[k], summary(before[k]), summary(after[k]));
  os << fmt::format("calibration.compute {:.1f}% -> {:.1f}%, calibration.hbm {:.1f}% -> {:.1f}%\n",
                    g->calibrationCompute * 100, fitted.calibrationCompute * 100, g->calibrationHbm * 100,
                    fitted.calibrationHbm * 100);
  for (const std::string &n : notes) os << "note: " << n << "\n";
  std::string decl = declaration(fitted, g->name, o.csv);
  os << "\n" << decl;
  if (outputPrefix.empty()) return 0;
  std::error_code ec;
  llvm::raw_fd_ostream file(outputPrefix + ".rapid", ec);
  if (ec) return diags.report(DiagID::CannotOpenFile, {}, outputPrefix + ".rapid", ec.message()), 1;
  file << decl;
  return 0;
}

} // namespace rapid
