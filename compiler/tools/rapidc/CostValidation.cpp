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
  CtaTile measuredTile; ///< the library's tile, when the CSV has cta_m, cta_n, cta_k
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
  // cuBLAS is column-major: it computes C^T = B^T A^T, so its CTA tile's
  // first side (cta_m) runs along our N and cta_n along our M. The grid sizes
  // in the Nsight table confirm it (8192x1024x128 with a 64x256 tile has 64
  // CTAs only when the 256 side runs along M).
  auto tileCols = std::array{column(header, "cta_n"), column(header, "cta_m"), column(header, "cta_k")};
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
      bad = f[*tileCols[0]].getAsInteger(10, r.measuredTile.m) || f[*tileCols[1]].getAsInteger(10, r.measuredTile.n) ||
            f[*tileCols[2]].getAsInteger(10, r.measuredTile.k);
    if (bad) return diags.report(DiagID::BadCsv, {}, path, l + 1, "expected whole numbers in cta_m, cta_n, cta_k"), std::nullopt;
    rows.push_back(r);
  }
  return rows;
}

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
  double median() const {
    std::vector<double> v = abs;
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n == 0 ? 0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  }
};

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
  os << fmt::format("{:>6} {:>6} {:>6} {:>12} {:>12} {:>8}  {:<14} {:<8} | {:<12} {:>12} {:>8}\n", "m", "k", "n",
                    "measured_ms", "predicted_ms", "error", "tile(model)", "bound", "tile(ncu)", "w/ncu_tile", "error");
  Errors own, given;
  for (const Row &r : *rows) {
    GemmShape shape{r.m, r.k, r.n, 1, DType::BF16};
    GemmCost c = gemmCost(*g, shape);
    double err = own.add(c.time.value(), r.measuredS);
    os << fmt::format("{:>6} {:>6} {:>6} {:>12.4f} {:>12.4f} {:>+7.1f}%  {:<14} {:<8} |", r.m, r.k, r.n,
                      r.measuredS * 1e3, c.time.value() * 1e3, err * 100,
                      fmt::format("{}x{}x{}/{}", c.tile.m, c.tile.n, c.tile.k, c.tile.stages), nameOf(c.bound));
    // The same model held to the library's tile separates the error of the
    // time model from that of the tile choice.
    GemmCost t = r.measuredTile.m ? gemmCostWithTile(*g, shape, r.measuredTile) : GemmCost{};
    if (t.ctasPerSm > 0) {
      double terr = given.add(t.time.value(), r.measuredS);
      os << fmt::format(" {:<12} {:>12.4f} {:>+7.1f}%", fmt::format("{}x{}x{}", r.measuredTile.m, r.measuredTile.n,
                                                                     r.measuredTile.k),
                        t.time.value() * 1e3, terr * 100);
    }
    os << "\n";
  }
  const Row &w = (*rows)[own.worstAt];
  os << fmt::format("summary: {} rows, median |error| {:.1f}%, worst |error| {:.1f}% (m={} k={} n={})\n",
                    rows->size(), own.median() * 100, own.worst() * 100, w.m, w.k, w.n);
  if (!given.abs.empty())
    os << fmt::format("with the measured tiles: {} rows, median |error| {:.1f}%, worst |error| {:.1f}%\n",
                      given.abs.size(), given.median() * 100, given.worst() * 100);
  bool ok = checkBound("median", o.maxMedianError, own.median(), diags);
  ok = checkBound("worst", o.maxWorstError, own.worst(), diags) && ok;
  return ok ? 0 : 1;
}

} // namespace rapid
