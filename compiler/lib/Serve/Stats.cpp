//===- Stats.cpp - Means and percentiles ----------------------------------===//
#include "Stats.h"

#include <algorithm>
#include <cmath>

namespace rapid::serve {
namespace {

constexpr double kLow = 1e-9, kRatio = 1.001;
const double kLogRatio = std::log(kRatio);
constexpr size_t kBins = 34540; // log(1e15) / log(1.001): up to 10^6 s

/// numpy.percentile's default: linear between the order statistics around
/// rank q (n - 1).
double percentile(const std::vector<double> &sorted, double q) {
  double rank = q * double(sorted.size() - 1);
  size_t lo = size_t(rank), hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - double(lo));
}

} // namespace

Summary summarize(std::vector<double> &values) {
  Summary s;
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  double sum = 0;
  for (double v : values) sum += v;
  s.mean = sum / double(values.size());
  s.p50 = percentile(values, 0.5);
  s.p90 = percentile(values, 0.9);
  s.p99 = percentile(values, 0.99);
  return s;
}

void LogHistogram::add(double seconds) {
  if (counts.empty()) counts.assign(kBins, 0);
  double x = std::max(seconds, kLow);
  size_t bin = std::min(kBins - 1, size_t(std::log(x / kLow) / kLogRatio));
  ++counts[bin];
  ++n;
  sum += seconds;
}

Summary LogHistogram::summary() const {
  Summary s;
  if (n == 0) return s;
  s.mean = sum / double(n);
  auto at = [&](double q) {
    // The bin holding order statistic round(q (n - 1)), 0-based.
    uint64_t target = uint64_t(std::llround(q * double(n - 1))), seen = 0;
    for (size_t b = 0; b < counts.size(); ++b) {
      seen += counts[b];
      if (seen > target) return kLow * std::pow(kRatio, double(b) + 0.5);
    }
    return kLow * std::pow(kRatio, double(kBins));
  };
  s.p50 = at(0.5);
  s.p90 = at(0.9);
  s.p99 = at(0.99);
  return s;
}

} // namespace rapid::serve
