//===- Report.h - Simulation results as text, JSON, timelines --*- C++ -*-===//
//
// Everything printed is in a fixed order (ranks, then link ids) and in whole
// nanoseconds, so the same input gives the same bytes.
//===----------------------------------------------------------------------===//
#pragma once

#include "rapid/Engine/Simulator.h"

#include "llvm/Support/raw_ostream.h"

namespace rapid::report {

struct ReportOptions {
  bool json = false;
  bool links = false; ///< per-link bytes, busy time and utilisation
};

void printReport(const engine::SimResult &res, const net::Network &net, const ReportOptions &opts,
                 llvm::raw_ostream &os);

/// Chrome / Perfetto trace-event JSON: one process per rank, one thread per
/// resource lane, one complete event per node.
llvm::Error writeTimeline(const std::string &path, const engine::SimResult &res,
                          const trace::Workload &w);

} // namespace rapid::report
