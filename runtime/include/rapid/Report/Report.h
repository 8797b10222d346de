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

/// A Chrome/Perfetto trace: one process per rank (compute, CPU, comm and
/// receive lanes), one complete event per node with its name, kind and, where
/// the node has them, bytes, FLOPs and communicator group; and, when `net`
/// recorded link spans, a "links" process with one row per link. `ranks`
/// (ascending) keeps only those ranks' events.
llvm::Error writeTimeline(const std::string &path, const engine::SimResult &res,
                          const trace::Workload &w, const net::Network *net = nullptr,
                          const std::vector<int64_t> *ranks = nullptr);

/// One node of the critical path and the time it waited after its last
/// dependency finished (for a stream, a collective's members or a peer).
struct PathStep {
  uint32_t node;
  int64_t startPs, endPs;
  engine::Lane lane;
  int64_t waitPs;
};

struct CriticalPath {
  uint32_t rank = 0; ///< the last rank to finish
  std::vector<PathStep> steps;
  int64_t computePs = 0, commPs = 0, waitPs = 0;
};

/// The chain of dependencies that set the last rank's finish time (needs the
/// spans of a simulation run with SimOptions::recordTimeline).
CriticalPath criticalPath(const engine::SimResult &res, const trace::Workload &w);
void printCriticalPath(const CriticalPath &cp, const trace::Workload &w, bool json, size_t top,
                       llvm::raw_ostream &os);

} // namespace rapid::report
