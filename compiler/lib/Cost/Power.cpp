//===- Power.cpp - The clock a GPU holds under its power limit ------------===//
#include "rapid/Cost/Power.h"

#include <algorithm>
#include <cmath>

namespace rapid::cost {

double powerSlowdown(const GpuSpec &gpu, double duty) {
  double t = gpu.powerTensor, o = gpu.powerOther, k = gpu.powerExponent;
  double d = std::clamp(duty, 0.0, 1.0);
  if (t <= 0 || d <= 0) return 1;
  // Power over the limit at slowdown f; it falls as f grows (k >= 1 makes
  // the tensor kernels' energy per step fall too).
  auto over = [&](double f) { return d * t * std::pow(f, 1 - k) + (1 - d) * o - (d * f + (1 - d)); };
  if (over(1) <= 0) return 1;
  double lo = 1, hi = 2;
  while (over(hi) > 0 && hi < 1e6) hi *= 2;
  for (int i = 0; i < 60; ++i) { // bisection: deterministic to the last bit
    double mid = (lo + hi) / 2;
    (over(mid) > 0 ? lo : hi) = mid;
  }
  return hi;
}

GpuSpec slowedBy(const GpuSpec &gpu, double slowdown) {
  GpuSpec out = gpu;
  out.calibrationCompute = gpu.calibrationCompute / slowdown;
  return out;
}

GpuSpec atDuty(const GpuSpec &gpu, double duty) { return slowedBy(gpu, powerSlowdown(gpu, duty)); }

} // namespace rapid::cost
