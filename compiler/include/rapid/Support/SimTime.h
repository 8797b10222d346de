//===- SimTime.h - Simulated time that cannot wrap -------------*- C++ -*-===//
//
// The runtime keeps time as int64 picoseconds. Every duration and every sum
// of times saturates at kMaxTimePs (2^62 ps, about 53 days), far below where
// int64 wraps; a run in which anything reaches the ceiling fails, naming the
// node, instead of reporting a time that wrapped around.
//===----------------------------------------------------------------------===//
#pragma once

#include <algorithm>
#include <cstdint>

namespace rapid {

inline constexpr int64_t kMaxTimePs = int64_t(1) << 62;

/// a + b for times in [0, kMaxTimePs], saturating.
constexpr int64_t addTime(int64_t a, int64_t b) { return std::min(a + b, kMaxTimePs); }

/// A duration of `ps` picoseconds (any double, NaN included), rounded up,
/// clamped to [0, kMaxTimePs].
constexpr int64_t timeFromPs(double ps) {
  if (!(ps > 0)) return 0;
  if (!(ps < double(kMaxTimePs))) return kMaxTimePs;
  int64_t whole = int64_t(ps);
  return whole < ps ? whole + 1 : whole;
}

/// `count` units of `unitPs` picoseconds each (ns: 1000), saturating.
constexpr int64_t timeFromUnits(int64_t count, int64_t unitPs) {
  if (count <= 0) return 0;
  return count >= kMaxTimePs / unitPs ? kMaxTimePs : count * unitPs;
}

} // namespace rapid
