//===- Sweep.h - Every point of a file, in parallel, resumable --*- C++ -*-===//
#pragma once

#include "rapid/Driver/Results.h"

namespace rapid {

struct SweepOptions {
  unsigned jobs = 1;       ///< points evaluated at once
  std::string output;      ///< write OUTPUT.csv and OUTPUT.jsonl, best first
  bool resume = false;     ///< skip points OUTPUT.jsonl.partial already holds
  bool progress = false;   ///< a progress line on stderr
  std::string timeline;    ///< a Perfetto timeline of point `timelinePoint`
  size_t timelinePoint = 0;
  SimMode mode = SimMode::Auto;
};

/// Runs every point (in parallel), returning the results in point order.
/// With an output prefix, each finished point is appended to
/// OUTPUT.jsonl.partial at once, so a killed sweep loses nothing and a rerun
/// with `resume` picks up where it stopped; at the end the results are
/// written, sorted best first, to OUTPUT.csv and OUTPUT.jsonl atomically.
llvm::Expected<std::vector<PointResult>> runSweep(const std::vector<ExperimentPoint> &points,
                                                  const SweepOptions &opts);

} // namespace rapid
