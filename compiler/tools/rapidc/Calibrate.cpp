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
// another bound. Norm and softmax rows are the stack's: its `reduction`
// figures are fitted to them (docs/model.md §4.1). Nothing else is tuned:
// the model's shape effects stay the model's, so what remains after the fit
// is what the model gets wrong.
//===----------------------------------------------------------------------===//
#include "CostQuery.h"

#include "rapid/Cost/Gemm.h"
#include "rapid/Cost/Pointwise.h"
#include "rapid/Cost/Power.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

using namespace rapid::cost;

namespace rapid {
namespace {

struct Measurement {
  enum Kind { Gemm, Pointwise, Attention } kind = Gemm;
  GemmShape gemm;
  PointwiseWork work;
  std::string op; ///< a pointwise row's op, when it names one
  std::optional<PointwiseOp> named; ///< the same, parsed
  AttentionShape attention;
  Pass pass = Pass::Forward;
  double seconds = 0;
  std::string label() const {
    const char *dir = pass == Pass::Forward ? "fwd" : "bwd";
    switch (kind) {
    case Gemm:
      return fmt::format("gemm {}x{}x{}{}", gemm.m, gemm.k, gemm.n,
                         gemm.batch > 1 ? fmt::format(" batch={}", gemm.batch) : "");
    case Pointwise:
      return op.empty() ? fmt::format("pointwise {:.4g} B", work.bytes.value())
                        : fmt::format("{} {} {:.4g} B", op, dir, double(work.bytes.value()));
    case Attention:
      return fmt::format("attention {} {}x{}x{}x{}", dir, attention.batch, attention.heads, attention.seq,
                         attention.headDim);
    }
    return "";
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

/// A whole positive number from column `name` into `out`; "" or the problem.
std::string positive(const Fields &f, const char *name, int64_t &out) {
  if (f.get(name).getAsInteger(10, out) || out <= 0)
    return fmt::format("expected a positive whole number for {} but found '{}'", name, f.get(name).str());
  return "";
}

/// The `pass` column: fwd (or empty) / bwd.
std::string passOf(const Fields &f, Pass &out) {
  llvm::StringRef p = f.get("pass");
  if (p.empty() || p == "fwd") return out = Pass::Forward, "";
  if (p == "bwd") return out = Pass::Backward, "";
  return fmt::format("expected pass 'fwd' or 'bwd' but found '{}'", p.str());
}

std::string parseDtype(const Fields &f, DType &out) {
  if (llvm::StringRef t = f.get("dtype"); !t.empty()) {
    std::optional<DType> d = parseEnum<DType>(t);
    if (!d) return fmt::format("expected a dtype (fp32, tf32, bf16, fp16, fp8) but found '{}'", t.str());
    out = *d;
  }
  return "";
}

/// A pointwise row that names its op (`op`, `elements`, `pass`): bytes and
/// FLOPs from the model's own per-element counts.
std::string parseNamedPointwise(const Fields &f, Measurement &m) {
  std::optional<PointwiseOp> op = parsePointwiseOp(f.get("op"));
  if (!op) return fmt::format("expected a pointwise op ({}) but found '{}'", pointwiseOpList(), f.get("op").str());
  int64_t elements = 0;
  DType t = DType::BF16;
  for (const std::string &err : {positive(f, "elements", elements), passOf(f, m.pass), parseDtype(f, t)})
    if (!err.empty()) return err;
  m.op = f.get("op").str();
  m.named = op;
  m.work = pointwiseWork(*op, elements, t, m.pass);
  return "";
}

/// A FlashAttention row: batch, heads, seq, head_dim, pass, causal (0/1).
std::string parseAttention(const Fields &f, Measurement &m) {
  AttentionShape &a = m.attention;
  for (auto [name, out] : {std::pair{"batch", &a.batch}, {"heads", &a.heads}, {"seq", &a.seq}, {"head_dim", &a.headDim}})
    if (std::string err = positive(f, name, *out); !err.empty()) return err;
  a.kvHeads = a.heads;
  a.causal = f.get("causal") == "1";
  if (std::string err = passOf(f, m.pass); !err.empty()) return err;
  return parseDtype(f, a.dtype);
}

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
  } else if (kind == "pointwise" && !f.get("op").empty()) {
    m.kind = Measurement::Pointwise;
    if (std::string err = parseNamedPointwise(f, m); !err.empty()) return err;
  } else if (kind == "attention") {
    m.kind = Measurement::Attention;
    if (std::string err = parseAttention(f, m); !err.empty()) return err;
  } else if (kind == "pointwise") {
    m.kind = Measurement::Pointwise;
    double bytes = 0, flops = 0;
    if (f.get("bytes").getAsDouble(bytes) || bytes <= 0 || (!f.get("flops").empty() && f.get("flops").getAsDouble(flops)))
      return "expected a positive number of bytes (and a number of flops) for a pointwise row";
    m.work = PointwiseWork{Bytes(bytes), Flops(flops), 1};
  } else {
    return fmt::format("expected kind 'gemm', 'pointwise' or 'attention' but found '{}'", kind.str());
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

/// What the stack adds to a kernel: its launch (none without --stack: the
/// script times in CUDA graphs), which fused attention kernel it runs and
/// how its norm and softmax kernels fall short of the roofline.
struct Software {
  Seconds launch{0};
  AttentionKernel attention = AttentionKernel::Flash2;
  RowReduction norm, softmax;
};

/// The row-reduction group a measurement belongs to, if any.
RowReduction Software::*reductionOf(const Measurement &m) {
  if (m.kind != Measurement::Pointwise || !m.named) return nullptr;
  if (*m.named == PointwiseOp::Softmax) return &Software::softmax;
  if (*m.named == PointwiseOp::LayerNorm || *m.named == PointwiseOp::RmsNorm) return &Software::norm;
  return nullptr;
}

KernelCost predict(const GpuSpec &g, const Software &sw, const Measurement &m) {
  switch (m.kind) {
  case Measurement::Gemm: return launched(gemmCost(g, m.gemm), sw.launch);
  case Measurement::Pointwise: {
    RowReduction Software::*group = reductionOf(m);
    return launched(pointwiseCost(g, m.work, group ? sw.*group : RowReduction{}), sw.launch);
  }
  case Measurement::Attention: {
    AttentionShape a = m.attention;
    a.kernel = sw.attention;
    return launched(flashAttention(g, a, m.pass), sw.launch);
  }
  }
  return {};
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

double logError(const GpuSpec &g, const Software &sw, const Measurement &m) {
  return std::fabs(std::log(predict(g, sw, m).time.value() / m.seconds));
}

/// The value of `member` in [0.2, 1.5] that minimises the mean |log error|
/// of `rows` (a grid of 0.5 % steps: the search is cheap and has no local
/// minima to fall into); nothing when there are no rows.
std::optional<double> fit(GpuSpec g, double GpuSpec::*member, const Software &sw, const std::vector<const Measurement *> &rows) {
  if (rows.empty()) return std::nullopt;
  double best = g.*member, bestCost = INFINITY;
  for (int step = 40; step <= 300; ++step) {
    g.*member = step * 0.005;
    double cost = 0;
    for (const Measurement *m : rows) cost += logError(g, sw, *m);
    if (cost < bestCost) bestCost = cost, best = g.*member;
  }
  return best;
}

std::string summary(const costquery::Errors &e) {
  return fmt::format("{} rows, median |error| {:.1f}%, worst {:.1f}%", e.abs.size(), e.median() * 100, e.worst() * 100);
}

std::string declaration(const GpuSpec &fitted, const std::string &base, const std::string &csv) {
  std::string gemm = fitted.calibrationGemmHbm == fitted.calibrationHbm
                         ? std::string()
                         : fmt::format("    gemm_hbm = {:.1f} %;\n", fitted.calibrationGemmHbm * 100);
  return fmt::format("// Fitted by `rapidc --calibrate {} --hardware {}`: calibration only, the\n"
                     "// rest of '{}' unchanged (docs/model.md, calibration workflow).\n"
                     "gpu {}_calibrated : {} {{\n  calibration {{\n    compute = {:.1f} %;\n    hbm = {:.1f} %;\n{}  }}\n}}\n",
                     csv, base, base, base, base, fitted.calibrationCompute * 100, fitted.calibrationHbm * 100, gemm);
}

/// Fits calibration.compute to the rows the tensor cores bound, .hbm to the
/// pointwise rows HBM bounds and .gemm_hbm to the GEMM rows it bounds (a GPU
/// whose two agree keeps them tied where one has no rows). Attention rows are
/// reported, not fitted: FlashAttention's rate is its kernel's (docs/model.md
/// §3), and they would pull the tensor-core figure away from the GEMMs it
/// describes. Norm and softmax rows are the stack's (fitReductions).
GpuSpec fitCalibration(const GpuSpec &g, const Software &sw, const std::vector<Measurement> &rows,
                       std::vector<std::string> &notes) {
  GpuSpec fitted = g;
  bool tied = g.calibrationGemmHbm == g.calibrationHbm;
  for (int round = 0; round < 2; ++round) {
    std::vector<const Measurement *> compute, hbm, gemmHbm;
    for (const Measurement &m : rows) {
      Field f = m.kind == Measurement::Attention || reductionOf(m) ? Field::None : governs(predict(fitted, sw, m).bound);
      if (f == Field::Compute) compute.push_back(&m);
      if (f == Field::Hbm) (m.kind == Measurement::Gemm ? gemmHbm : hbm).push_back(&m);
    }
    notes.clear();
    if (auto v = fit(fitted, &GpuSpec::calibrationCompute, sw, compute)) fitted.calibrationCompute = *v;
    else notes.push_back("no row is bound by the tensor cores: calibration.compute kept");
    if (auto v = fit(fitted, &GpuSpec::calibrationHbm, sw, hbm)) fitted.calibrationHbm = *v;
    else notes.push_back("no pointwise row is bound by HBM: calibration.hbm kept");
    if (auto v = fit(fitted, &GpuSpec::calibrationGemmHbm, sw, gemmHbm)) fitted.calibrationGemmHbm = *v;
    else if (tied) fitted.calibrationGemmHbm = fitted.calibrationHbm;
    else notes.push_back("no GEMM row is bound by HBM: calibration.gemm_hbm kept");
  }
  return fitted;
}

/// Fits the stack's row-reduction figures to its norm and softmax rows on
/// the fitted GPU: a grid over reduction.hbm (0.2-1.5, as the GPU's fields)
/// and, for each point, the instructions per FLOP (0-40 by 0.25) that fit
/// the norm rows and the softmax rows best (given the HBM share the two do
/// not interact). Mean |log error| as everywhere here.
Software fitReductions(const GpuSpec &g, Software sw, const std::vector<Measurement> &rows) {
  std::vector<const Measurement *> group[2];
  RowReduction Software::*members[2] = {&Software::norm, &Software::softmax};
  for (const Measurement &m : rows)
    for (int i = 0; i < 2; ++i)
      if (reductionOf(m) == members[i]) group[i].push_back(&m);
  if (group[0].empty() && group[1].empty()) return sw;
  auto cost = [&](int i, RowReduction r) {
    Software trial = sw;
    trial.*members[i] = r;
    double sum = 0;
    for (const Measurement *m : group[i]) sum += logError(g, trial, *m);
    return sum;
  };
  Software best = sw;
  double bestCost = INFINITY;
  for (int step = 40; step <= 300; ++step) {
    double hbm = step * 0.005;
    Software trial = sw;
    trial.norm.hbm = trial.softmax.hbm = hbm; // one field: a group without rows follows the other
    double total = 0;
    for (int i = 0; i < 2; ++i) {
      if (group[i].empty()) continue;
      RowReduction pick = sw.*members[i]; // its least time as the stack says: not fitted here
      pick.hbm = hbm;
      pick.instructionsPerFlop = 0;
      double pickCost = INFINITY;
      for (int q = 0; q <= 160; ++q) {
        RowReduction r = pick;
        r.instructionsPerFlop = q * 0.25;
        if (double c = cost(i, r); c < pickCost) pickCost = c, pick = r;
      }
      trial.*members[i] = pick;
      total += pickCost;
    }
    if (total < bestCost) bestCost = total, best = trial;
  }
  return best;
}

std::string stackDeclaration(const Software &fitted, const std::string &base, const std::string &csv,
                             const std::string &gpu) {
  return fmt::format("// Fitted by `rapidc --calibrate {} --hardware {}{}`: the norm and softmax\n"
                     "// kernels only (docs/model.md §4.1).\n"
                     "stack {} {{\n  reduction {{\n    hbm = {:.1f} %;\n    norm_instructions = {:.2f};\n"
                     "    softmax_instructions = {:.2f};\n  }}\n}}\n",
                     csv, gpu, base.empty() ? "" : " --stack " + base,
                     base.empty() ? "calibrated" : base + "_calibrated : " + base, fitted.norm.hbm * 100,
                     fitted.norm.instructionsPerFlop, fitted.softmax.instructionsPerFlop);
}

/// Every row before and after, then each kind's median and worst.
void printErrors(const GpuSpec &g, const GpuSpec &fitted, const Software &sw, const Software &swFitted,
                 const std::vector<Measurement> &rows, llvm::raw_ostream &os) {
  os << fmt::format("{:<32} {:>12} {:>12} {:>8} {:>12} {:>8}  {}\n", "kernel", "measured_ms", "before_ms", "error",
                    "after_ms", "error", "bound after");
  costquery::Errors before[3], after[3];
  for (const Measurement &m : rows) {
    KernelCost b = predict(g, sw, m), a = predict(fitted, swFitted, m);
    double eb = before[m.kind].add(b.time.value(), m.seconds), ea = after[m.kind].add(a.time.value(), m.seconds);
    os << fmt::format("{:<32} {:>12.4f} {:>12.4f} {:>+7.1f}% {:>12.4f} {:>+7.1f}%  {}\n", m.label(), m.seconds * 1e3,
                      b.time.value() * 1e3, eb * 100, a.time.value() * 1e3, ea * 100, nameOf(a.bound));
  }
  const char *kinds[] = {"gemm", "pointwise", "attention"};
  for (int k = 0; k < 3; ++k)
    if (!before[k].abs.empty())
      os << fmt::format("{}: before {}; after {}\n", kinds[k], summary(before[k]), summary(after[k]));
}

} // namespace

int runCalibration(const CostOptions &o, const std::string &outputPrefix, DiagnosticEngine &diags) {
  auto rows = readMeasurements(o.csv, diags);
  if (!rows) return 1;
  auto g = costquery::resolveGpu(o, diags);
  if (!g) return 1;
  // Timings taken in CUDA graphs (as the script takes them) hold no launch
  // cost: without --stack, none is added (and FlashAttention-2 runs).
  Software sw;
  if (!o.stack.empty()) {
    std::optional<StackSpec> stack = costquery::resolveStack(o, diags);
    if (!stack) return 1;
    sw = Software{cost::launchCost(*stack, /*decodeStep=*/false), stack->attention,
                  rowReduction(*stack, PointwiseOp::LayerNorm), rowReduction(*stack, PointwiseOp::Softmax)};
  }
  std::vector<std::string> notes;
  GpuSpec fitted = fitCalibration(*g, sw, *rows, notes);
  Software swFitted = fitReductions(fitted, sw, *rows);
  llvm::raw_ostream &os = llvm::outs();
  printErrors(*g, fitted, sw, swFitted, *rows, os);
  // The rows ran at the clock the power limit holds at full duty
  // (costquery::resolveGpu); the declaration says the boost clock's.
  double held = cost::powerSlowdown(*g, 1.0);
  if (held > 1) os << fmt::format("power: the rows' clock is the boost clock / {:.3f} (power.tensor at full duty)\n", held);
  os << fmt::format("calibration.compute {:.1f}% -> {:.1f}%, calibration.hbm {:.1f}% -> {:.1f}%, "
                    "calibration.gemm_hbm {:.1f}% -> {:.1f}%\n",
                    g->calibrationCompute * held * 100, fitted.calibrationCompute * held * 100,
                    g->calibrationHbm * 100, fitted.calibrationHbm * 100, g->calibrationGemmHbm * 100,
                    fitted.calibrationGemmHbm * 100);
  bool reductions = llvm::any_of(*rows, [](const Measurement &m) { return reductionOf(m) != nullptr; });
  if (reductions)
    os << fmt::format("reduction.hbm {:.1f}% -> {:.1f}%, reduction.norm_instructions {:.2f} -> {:.2f}, "
                      "reduction.softmax_instructions {:.2f} -> {:.2f}\n",
                      sw.norm.hbm * 100, swFitted.norm.hbm * 100, sw.norm.instructionsPerFlop,
                      swFitted.norm.instructionsPerFlop, sw.softmax.instructionsPerFlop,
                      swFitted.softmax.instructionsPerFlop);
  for (const std::string &n : notes) os << "note: " << n << "\n";
  GpuSpec declared = fitted;
  declared.calibrationCompute *= held;
  std::string decl = declaration(declared, g->name, o.csv);
  if (reductions) decl += "\n" + stackDeclaration(swFitted, o.stack, o.csv, g->name);
  os << "\n" << decl;
  if (outputPrefix.empty()) return 0;
  std::error_code ec;
  llvm::raw_fd_ostream file(outputPrefix + ".rapid", ec);
  if (ec) return diags.report(DiagID::CannotOpenFile, {}, outputPrefix + ".rapid", ec.message()), 1;
  file << decl;
  return 0;
}

} // namespace rapid
