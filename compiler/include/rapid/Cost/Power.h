//===- Power.h - The clock a GPU holds under its power limit ----*- C++ -*-===//
//
// A Hopper board at its 700 W limit cannot run tensor-core kernels back to
// back at the boost clock: a training loop settles at 1,390-1,580 MHz, a
// serving mix whose products are a small share of the time keeps 1,980 MHz
// (test/data/validation/power_h100_mix.csv, docs/model.md "Power"). The
// balance that reads those runs: at the boost clock tensor-core kernels
// draw `power.tensor` of the limit and the rest `power.other`; where the mix
// draws more than the limit the clock falls until it draws the limit, the
// tensor-core kernels' power going as their speed to `power.exponent` and
// their time as its inverse, the rest (bound by memory) unchanged:
//   d t f^(1-k) + (1 - d) o = d f + (1 - d)
// with d the tensor-core kernels' share of the time at the boost clock and
// f the slowdown. A GPU without `power.tensor` holds its clock.
//===----------------------------------------------------------------------===//
#pragma once

#include "rapid/Spec/Specs.h"

namespace rapid::cost {

/// How many times longer clock-bound kernels take than at the boost clock
/// when tensor-core kernels run `duty` of the time (0-1): 1 where the mix
/// stays within the limit.
double powerSlowdown(const GpuSpec &gpu, double duty);

/// The GPU with its clock-bound rates (calibration.compute: math, shared
/// memory, issue) `slowdown` times slower than at the boost clock.
GpuSpec slowedBy(const GpuSpec &gpu, double slowdown);

/// The GPU at the clock it holds under `duty`.
GpuSpec atDuty(const GpuSpec &gpu, double duty);

} // namespace rapid::cost
