//===- CostValidation.cpp - `rapidc --cost-csv`: model vs measured GEMMs --===//
//
// Reads a CSV of measured GEMM kernels (columns m, k, n, latency_ms; the
// Nsight Compute table in test/data/validation has them), predicts each row
// on the given GPU and prints the relative errors, then one summary line.
// `--max-median-error` / `--max-worst-error` turn the summary into a check.
//===----------------------------------------------------------------------===//
#include "CostQuery.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

using namespace rapid::cost;

namespace rapid {
namespace {

struct Row {
  int64_t m = 0, k = 0, n = 0;
  double measuredS = 0;
  std::string measuredTile;
};

std::optional<size_t> column(const llvm::SmallVectorImpl<llvm::StringRef> &header, llvm::StringRef name) {
  for (size_t i = 0; i < header.size(); ++i)
    if (header[i].trim() == name) return i;
  return std::nullopt;
}

std::optional<std::vector<Row>> readRows(const std::string &path, DiagnosticEngine &diags) {
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buf) {
    diags.report(DiagID::CannotOpenFile, {}, path, buf.getError().message());
    return std::nullopt;
  }
  llvm::SmallVector<llvm::StringRef> lines, header;
  (*buf)->getBuffer().split(lines, '\n', -1, /*KeepEmpty=*/false);
  if (lines.empty()) return diags.report(DiagID::BadCsv, {}, path, 1, "empty file"), std::nullopt;
  lines[0].split(header, ',');
  const char *names[] = {"m", "k", "n", "latency_ms"};
  size_t at[4];
  for (int i = 0; i < 4; ++i) {
    auto c = column(header, names[i]);
    if (!c) return diags.report(DiagID::BadCsv, {}, path, 1, fmt::format("no column '{}'", names[i])), std::nullopt;
    at[i] = *c;
  }
  auto tileCols = std::array{column(header, "cta_m"), column(header, "cta_n"), column(header, "cta_k")};
  std::vector<Row> rows;
  for (size_t l = 1; l < lines.size(); ++l) {
    llvm::SmallVector<llvm::StringRef> f;
    lines[l].trim().split(f, ',');
    Row r;
    int64_t *ints[] = {&r.m, &r.k, &r.n};
    bool bad = f.size() != header.size();
    for (int i = 0; i < 3 && !bad; ++i) bad = f[at[i]].getAsInteger(10, *ints[i]) || *ints[i] <= 0;
    if (!bad) bad = f[at[3]].getAsDouble(r.measuredS) || r.measuredS <= 0;
    if (bad) return diags.report(DiagID::BadCsv, {}, path, l + 1, "expected positive m, k, n and latency_ms"), std::nullopt;
    r.measuredS *= 1e-3;
    if (tileCols[0] && tileCols[1] && tileCols[2])
      r.measuredTile = fmt::format("{}x{}x{}", f[*tileCols[0]].str(), f[*tileCols[1]].str(), f[*tileCols[2]].str());
    rows.push_back(r);
  }
  return rows;
}

/// "15%" or "15" -> 0.15; nothing when the text is not a percentage.
std::optional<double> parsePercent(llvm::StringRef s) {
  s.consume_back("%");
  double v = 0;
  if (s.trim().getAsDouble(v) || v < 0) return std::nullopt;
  return v / 100;
}

bool checkBound(const char *what, const std::string &bound, double value, DiagnosticEngine &diags) {
  if (bound.empty()) return true;
  auto b = parsePercent(bound);
  if (!b) {
    diags.report(DiagID::BadOption, {}, fmt::format("--max-{}-error expects a percentage such as '15%' but got '{}'", what, bound));
    return false;
  }
  if (value <= *b) return true;
  diags.report(DiagID::ValidationBound, {}, what, fmt::format("{:.1f}%", value * 100), fmt::format("{:.1f}%", *b * 100));
  return false;
}

} // namespace

int runCostValidation(const CostOptions &o, DiagnosticEngine &diags) {
  auto rows = readRows(o.csv, diags);
  if (!rows) return 1;
  auto g = costquery::resolveGpu(o, diags);
  if (!g) return 1;
  llvm::raw_ostream &os = llvm::outs();
  os << fmt::format("{:>6} {:>6} {:>6} {:>12} {:>12} {:>8}  {:<16} {:<12} {}\n", "m", "k", "n", "measured_ms",
                    "predicted_ms", "error", "tile(model)", "tile(ncu)", "bound");
  std::vector<double> errors;
  size_t worstAt = 0;
  for (const Row &r : *rows) {
    GemmCost c = gemmCost(*g, GemmShape{r.m, r.k, r.n, 1, DType::BF16});
    double err = (c.time.value() - r.measuredS) / r.measuredS;
    if (!errors.empty() && std::fabs(err) > errors[worstAt]) worstAt = errors.size();
    errors.push_back(std::fabs(err));
    os << fmt::format("{:>6} {:>6} {:>6} {:>12.4f} {:>12.4f} {:>+7.1f}%  {:<16} {:<12} {}\n", r.m, r.k, r.n,
                      r.measuredS * 1e3, c.time.value() * 1e3, err * 100,
                      fmt::format("{}x{}x{}/{}", c.tile.m, c.tile.n, c.tile.k, c.tile.stages), r.measuredTile,
                      nameOf(c.bound));
  }
  std::vector<double> sorted = errors;
  std::sort(sorted.begin(), sorted.end());
  size_t n = sorted.size();
  double median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  const Row &w = (*rows)[worstAt];
  os << fmt::format("summary: {} rows, median |error| {:.1f}%, worst |error| {:.1f}% (m={} k={} n={})\n", n,
                    median * 100, errors[worstAt] * 100, w.m, w.k, w.n);
  bool ok = checkBound("median", o.maxMedianError, median, diags);
  ok = checkBound("worst", o.maxWorstError, errors[worstAt], diags) && ok;
  return ok ? 0 : 1;
}

} // namespace rapid
