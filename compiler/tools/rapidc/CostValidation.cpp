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
using rapid::costquery::column;
using rapid::costquery::Errors;

namespace rapid {
namespace {

struct Row {
  int64_t m = 0, k = 0, n = 0;
  double measuredS = 0;
  CtaTile measuredTile; ///< the library's tile, when the CSV has cta_m, cta_n, cta_k
  /// Nsight's occupancy of that kernel (stages, block_size and
  /// theoretical_warps_per_sm columns); 0 when absent.
  double theoreticalWarps = 0;
};

/// Where the columns the validation reads are in the header.
struct Columns {
  size_t m, k, n, latency;
  std::optional<size_t> tile[3]; ///< our M, N, K sides of the library's tile
  std::optional<size_t> stages, blockSize, warps;
};

/// Reads the optional occupancy columns of a row into `r`; "" or the error.
std::string parseOccupancy(const llvm::SmallVectorImpl<llvm::StringRef> &f, const Columns &c, Row &r) {
  if (!c.stages || !c.blockSize || !c.warps) return "";
  int64_t threads = 0;
  if (f[*c.stages].getAsInteger(10, r.measuredTile.stages) || f[*c.blockSize].getAsInteger(10, threads) ||
      f[*c.warps].trim().getAsDouble(r.theoreticalWarps))
    return "expected numbers in stages, block_size and theoretical_warps_per_sm";
  r.measuredTile.warps = threads / 32;
  return "";
}

/// One data line; "" on success, else what is wrong with it.
std::string parseRow(llvm::StringRef line, size_t fields, const Columns &c, Row &r) {
  llvm::SmallVector<llvm::StringRef> f;
  line.trim().split(f, ',');
  if (f.size() != fields) return fmt::format("expected {} fields but found {}", fields, f.size());
  const std::pair<size_t, int64_t *> ints[] = {{c.m, &r.m}, {c.k, &r.k}, {c.n, &r.n}};
  for (auto [at, out] : ints)
    if (f[at].getAsInteger(10, *out) || *out <= 0)
      return fmt::format("expected positive whole numbers for m, k, n but found '{}'", f[at].str());
  if (f[c.latency].getAsDouble(r.measuredS) || r.measuredS <= 0)
    return fmt::format("expected a positive latency_ms but found '{}'", f[c.latency].str());
  r.measuredS *= 1e-3;
  int64_t *sides[] = {&r.measuredTile.m, &r.measuredTile.n, &r.measuredTile.k};
  for (int i = 0; i < 3 && c.tile[0] && c.tile[1] && c.tile[2]; ++i)
    if (f[*c.tile[i]].getAsInteger(10, *sides[i]))
      return fmt::format("expected whole numbers for cta_m, cta_n, cta_k but found '{}'", f[*c.tile[i]].str());
  return parseOccupancy(f, c, r);
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
  lines[0].trim().split(header, ',');
  Columns c;
  const std::pair<const char *, size_t *> needed[] = {{"m", &c.m}, {"k", &c.k}, {"n", &c.n}, {"latency_ms", &c.latency}};
  for (auto [name, at] : needed) {
    auto i = column(header, name);
    if (!i) return diags.report(DiagID::BadCsv, {}, path, 1, fmt::format("no column '{}'", name)), std::nullopt;
    *at = *i;
  }
  // cuBLAS is column-major: it computes C^T = B^T A^T, so its CTA tile's
  // first side (cta_m) runs along our N and cta_n along our M. The grid sizes
  // in the Nsight table confirm it (8192x1024x128 with a 64x256 tile has 64
  // CTAs only when the 256 side runs along M).
  c.tile[0] = column(header, "cta_n"), c.tile[1] = column(header, "cta_m"), c.tile[2] = column(header, "cta_k");
  c.stages = column(header, "stages"), c.blockSize = column(header, "block_size");
  c.warps = column(header, "theoretical_warps_per_sm");
  std::vector<Row> rows(lines.size() - 1);
  for (size_t l = 1; l < lines.size(); ++l)
    if (std::string err = parseRow(lines[l], header.size(), c, rows[l - 1]); !err.empty())
      return diags.report(DiagID::BadCsv, {}, path, l + 1, err), std::nullopt;
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


/// What the rows add up to.
struct Tally {
  Errors own, given; ///< the model's own tile; the library's tile
  int occupancyRows = 0, occupancyMatches = 0;
};

/// Predicts one row, prints it and adds it to `t`.
void validateRow(const GpuSpec &g, Seconds launch, const Row &r, Tally &t, llvm::raw_ostream &os) {
  GemmShape shape{r.m, r.k, r.n, 1, DType::BF16};
  GemmCost c = gemmCost(g, shape);
  static_cast<KernelCost &>(c) = launched(c, launch);
  double err = t.own.add(c.time.value(), r.measuredS);
  os << fmt::format("{:>6} {:>6} {:>6} {:>12.4f} {:>12.4f} {:>+7.1f}%  {:<14} {:<8} |", r.m, r.k, r.n,
                    r.measuredS * 1e3, c.time.value() * 1e3, err * 100,
                    c.gemv ? std::string("gemv")
                           : fmt::format("{}x{}x{}/{}{}", c.tile.m, c.tile.n, c.tile.k, c.tile.stages,
                                         c.tile.splits > 1 ? fmt::format("/s{}", c.tile.splits) : ""),
                    nameOf(c.bound));
  if (r.measuredTile.m) {
    // The same model held to the library's tile separates the error of the
    // time model from that of the tile choice.
    GemmCost lib = gemmCostWithTile(g, shape, r.measuredTile);
    static_cast<KernelCost &>(lib) = launched(lib, launch);
    if (lib.ctasPerSm > 0)
      os << fmt::format(" {:<12} {:>12.4f} {:>+7.1f}%",
                        fmt::format("{}x{}x{}", r.measuredTile.m, r.measuredTile.n, r.measuredTile.k),
                        lib.time.value() * 1e3, t.given.add(lib.time.value(), r.measuredS) * 100);
  }
  os << "\n";
  if (r.theoreticalWarps > 0 && r.measuredTile.m) {
    // Our occupancy arithmetic on the library's own kernel, against Nsight.
    Occupancy occ = occupancy(g, r.measuredTile, r.measuredTile.stages, shape.dtype, !vectorAligned(shape));
    ++t.occupancyRows;
    t.occupancyMatches += double(occ.ctasPerSm * r.measuredTile.warps) == r.theoreticalWarps;
  }
}

} // namespace

int runCostValidation(const CostOptions &o, DiagnosticEngine &diags) {
  auto rows = readRows(o.csv, diags);
  if (!rows) return 1;
  auto g = costquery::resolveGpu(o, diags);
  if (!g) return 1;
  auto stack = costquery::resolveStack(o, diags);
  if (!stack) return 1;
  llvm::raw_ostream &os = llvm::outs();
  os << fmt::format("{:>6} {:>6} {:>6} {:>12} {:>12} {:>8}  {:<14} {:<8} | {:<12} {:>12} {:>8}\n", "m", "k", "n",
                    "measured_ms", "predicted_ms", "error", "tile(model)", "bound", "tile(ncu)", "w/ncu_tile", "error");
  Tally t;
  for (const Row &r : *rows) validateRow(*g, cost::launchCost(*stack, /*decodeStep=*/false), r, t, os);
  const Row &w = (*rows)[t.own.worstAt];
  os << fmt::format("summary: {} rows, median |error| {:.1f}%, worst |error| {:.1f}% (m={} k={} n={})\n",
                    rows->size(), t.own.median() * 100, t.own.worst() * 100, w.m, w.k, w.n);
  if (!t.given.abs.empty())
    os << fmt::format("with the measured tiles: {} rows, median |error| {:.1f}%, worst |error| {:.1f}%\n",
                      t.given.abs.size(), t.given.median() * 100, t.given.worst() * 100);
  if (t.occupancyRows)
    os << fmt::format("occupancy of the measured kernels: {} of {} rows match Nsight's theoretical warps per SM\n",
                      t.occupancyMatches, t.occupancyRows);
  bool ok = checkBound("median", o.maxMedianError, t.own.median(), diags);
  ok = checkBound("worst", o.maxWorstError, t.own.worst(), diags) && ok;
  return ok ? 0 : 1;
}

} // namespace rapid
