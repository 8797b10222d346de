//===- Stats.h - Latency distributions of a serving run (private) -*- C++ -*-===//
#pragma once

#include "rapid/Serve/Serve.h"

#include <cstdint>
#include <vector>

namespace rapid::serve {

/// Inter-token gaps: one per generated token, too many to keep (a million
/// requests of a thousand tokens), so counted in bins 0.1 % wide on a log
/// scale from 1 ns to 10^6 s; a percentile is its bin's geometric middle,
/// within 0.05 % of the exact order statistic. The mean is exact.
class LogHistogram {
public:
  void add(double seconds);
  Summary summary() const;

private:
  std::vector<uint64_t> counts;
  uint64_t n = 0;
  double sum = 0;
};

} // namespace rapid::serve
