//===- Units.cpp - Unit spellings and conversions -------------------------===//
#include "rapid/Support/Units.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <array>
#include <cmath>
#include <cstdlib>
#include <fmt/format.h>

namespace rapid {
namespace {

struct NamedUnit {
  std::string_view name;
  double scale;
  Dim dim;
};

// Every atomic spelling. Composite units are "atom/atom" (GB/s, TFLOP/s).
constexpr std::array<NamedUnit, 30> kUnits{{
    {"B", 1, Dim::size()},          {"KB", 1e3, Dim::size()},
    {"MB", 1e6, Dim::size()},       {"GB", 1e9, Dim::size()},
    {"TB", 1e12, Dim::size()},      {"PB", 1e15, Dim::size()},
    {"KiB", 1024.0, Dim::size()},   {"MiB", 1048576.0, Dim::size()},
    {"GiB", 1073741824.0, Dim::size()}, {"TiB", 1099511627776.0, Dim::size()},
    {"b", 0.125, Dim::size()},      {"Kb", 125.0, Dim::size()},
    {"Mb", 1.25e5, Dim::size()},    {"Gb", 1.25e8, Dim::size()},
    {"Tb", 1.25e11, Dim::size()},
    {"s", 1, Dim::time()},          {"ms", 1e-3, Dim::time()},
    {"us", 1e-6, Dim::time()},      {"ns", 1e-9, Dim::time()},
    {"ps", 1e-12, Dim::time()},
    {"Hz", 1, Dim::frequency()},    {"kHz", 1e3, Dim::frequency()},
    {"MHz", 1e6, Dim::frequency()}, {"GHz", 1e9, Dim::frequency()},
    {"FLOP", 1, Dim::work()},       {"GFLOP", 1e9, Dim::work()},
    {"TFLOP", 1e12, Dim::work()},   {"PFLOP", 1e15, Dim::work()},
    {"%", 0.01, Dim::number()},
    {"req", 1, Dim::number()}, // a count of requests: `8 req/s` is a rate
}};

const NamedUnit *findAtom(std::string_view s) {
  for (const NamedUnit &u : kUnits)
    if (u.name == s)
      return &u;
  return nullptr;
}

/// 1e6 for a scale of 1e-6: dividing by it rounds once, multiplying by the
/// inexact 1e-6 would round twice.
double divisorOf(double scale) { return scale >= 1 ? 1 : std::round(1 / scale); }
double mulOf(double scale) { return scale >= 1 ? scale : 1; }

} // namespace

std::optional<UnitInfo> lookupUnit(std::string_view spelling) {
  size_t slash = spelling.find('/');
  if (slash == std::string_view::npos) {
    if (const NamedUnit *u = findAtom(spelling))
      return UnitInfo{u->scale, u->dim, mulOf(u->scale), divisorOf(u->scale)};
    return std::nullopt;
  }
  const NamedUnit *num = findAtom(spelling.substr(0, slash));
  const NamedUnit *den = findAtom(spelling.substr(slash + 1));
  if (!num || !den || den->name == "%")
    return std::nullopt;
  double mul = mulOf(num->scale) * divisorOf(den->scale);
  double div = divisorOf(num->scale) * mulOf(den->scale);
  return UnitInfo{mul / div, num->dim / den->dim, mul, div};
}

std::string baseUnitName(Dim d) {
  if (d == Dim::number()) return "number";
  if (d == Dim::size()) return "B";
  if (d == Dim::time()) return "s";
  if (d == Dim::frequency()) return "Hz";
  if (d == Dim::bandwidth()) return "B/s";
  if (d == Dim::work()) return "FLOP";
  if (d == Dim::compute()) return "FLOP/s";
  std::string num, den;
  auto add = [](std::string &s, const char *name, int e) {
    if (e == 0) return;
    if (!s.empty()) s += "*";
    s += name;
    if (std::abs(e) != 1) s += "^" + std::to_string(std::abs(e));
  };
  for (auto [name, e] : {std::pair{"B", d.bytes}, {"s", d.seconds}, {"FLOP", d.flops}})
    add(e > 0 ? num : den, name, e);
  if (num.empty()) num = "1";
  return den.empty() ? num : num + "/" + den;
}

std::string describeDim(Dim d) {
  const char *what = d == Dim::number()      ? "a plain number"
                     : d == Dim::size()      ? "a size"
                     : d == Dim::time()      ? "a time"
                     : d == Dim::frequency() ? "a frequency"
                     : d == Dim::bandwidth() ? "a bandwidth"
                     : d == Dim::work()      ? "an amount of work"
                     : d == Dim::compute()   ? "a compute rate"
                                             : "a quantity";
  if (d == Dim::number())
    return what;
  return fmt::format("{} ({})", what, baseUnitName(d));
}

std::string suggestUnit(std::string_view spelling, Dim expected) {
  std::string s(spelling);
  // A rate written without "/s", or an amount written with it.
  for (std::string candidate : {s + "/s", s.substr(0, s.find('/'))}) {
    if (candidate == s) continue;
    if (auto u = lookupUnit(candidate); u && u->dim == expected)
      return candidate;
  }
  return "";
}

std::vector<std::string> closestUnits(std::string_view spelling) {
  std::string s(spelling);
  // Network speak: Gbps, GBps, Mbps.
  if (s.size() > 2 && llvm::StringRef(s).ends_with("ps"))
    if (std::string rate = s.substr(0, s.size() - 2) + "/s"; lookupUnit(rate)) return {rate};
  // The right letters in the wrong case: every unit they spell (gb/s is
  // GB/s or Gb/s, a factor of 8 apart, so both are named).
  llvm::SmallVector<llvm::StringRef, 2> parts;
  llvm::StringRef(s).split(parts, '/');
  std::vector<std::string> cased{""};
  for (size_t i = 0; i < parts.size() && parts.size() <= 2; ++i) {
    std::vector<std::string> longer;
    for (const std::string &prefix : cased)
      for (const NamedUnit &u : kUnits)
        if (llvm::StringRef(u.name).equals_insensitive(parts[i]))
          longer.push_back(prefix + (i ? "/" : "") + std::string(u.name));
    cased = std::move(longer);
  }
  llvm::erase_if(cased, [&](const std::string &c) { return c == s || !lookupUnit(c); });
  if (!cased.empty()) return cased;
  std::string near = closestUnit(spelling);
  return near.empty() ? std::vector<std::string>{} : std::vector<std::string>{near};
}

std::string closestUnit(std::string_view spelling) {
  std::string best;
  unsigned bestDist = 3;
  for (const NamedUnit &u : kUnits) {
    unsigned d = llvm::StringRef(u.name).edit_distance(spelling, true, bestDist);
    if (d < bestDist) { bestDist = d; best = std::string(u.name); }
  }
  // A composite spelling: mend its numerator and keep the denominator.
  if (size_t slash = spelling.find('/'); best.empty() && slash != std::string_view::npos) {
    std::string num = closestUnit(spelling.substr(0, slash));
    if (!num.empty()) return num + std::string(spelling.substr(slash));
  }
  return best;
}

std::string formatNumber(double v) {
  // Round to 15 significant digits first: `1.1 PFLOP/s` is 1.1 * 1e15, which
  // is 1100000000000000.1 in binary floating point.
  // strtod, not stod: near the largest double the rounded text is out of
  // range (1.79769313486232e+308), and then the value is printed as it is.
  double rounded = std::strtod(fmt::format("{:.15g}", v).c_str(), nullptr);
  if (std::isfinite(rounded) || !std::isfinite(v)) v = rounded;
  if (std::floor(v) == v && std::fabs(v) < 1e18)
    return fmt::format("{}", (long long)v);
  return fmt::format("{}", v); // shortest round-trip form
}

static std::string scaled(double v, const char *const *names, double step, int count) {
  int i = 0;
  while (i + 1 < count && std::fabs(v) >= step) { v /= step; ++i; }
  return fmt::format("{:.4g} {}", v, names[i]);
}

std::string formatBytes(Bytes b) {
  static const char *const names[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  return scaled(b.value(), names, 1024.0, 6);
}

std::string formatBandwidth(BytesPerSecond bw) {
  static const char *const names[] = {"B/s", "KB/s", "MB/s", "GB/s", "TB/s", "PB/s"};
  return scaled(bw.value(), names, 1000.0, 6);
}

std::string formatSeconds(Seconds t) {
  double v = t.value();
  if (std::fabs(v) >= 1 || v == 0) return fmt::format("{:.4g} s", v);
  if (std::fabs(v) >= 1e-3) return fmt::format("{:.4g} ms", v * 1e3);
  if (std::fabs(v) >= 1e-6) return fmt::format("{:.4g} us", v * 1e6);
  return fmt::format("{:.4g} ns", v * 1e9);
}

} // namespace rapid
