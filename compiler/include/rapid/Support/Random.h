//===- Random.h - The one random generator of the compiler -----*- C++ -*-===//
//
// Our own SplitMix64 (Steele, Lea, Flood 2014) with Box-Muller normals,
// not <random>'s distributions, whose algorithms differ between standard
// libraries: the same seed draws the same fault samples and the same
// serving requests on every platform.
//===----------------------------------------------------------------------===//
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace rapid {

class Random {
public:
  explicit Random(uint64_t seed) : state(seed) {}
  uint64_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, 1), 53 bits.
  double uniform() { return double(next() >> 11) * 0x1.0p-53; }
  double normal() { // Box-Muller
    double u = std::max(uniform(), 1e-300), v = uniform();
    return std::sqrt(-2 * std::log(u)) * std::cos(2 * M_PI * v);
  }
  /// Exponential with the given rate (Poisson inter-arrival times).
  double exponential(double rate) { return -std::log1p(-uniform()) / rate; }

private:
  uint64_t state;
};

} // namespace rapid
