//===- Sweep.h - Every point of a file, in parallel, resumable --*- C++ -*-===//
#pragma once

#include "rapid/Driver/Results.h"
#include "rapid/Support/Diagnostics.h"

namespace rapid {

struct SweepOptions {
  unsigned jobs = 1;       ///< points evaluated at once
  std::string output;      ///< write OUTPUT.csv and OUTPUT.jsonl, best first
  bool resume = false;     ///< skip points OUTPUT.jsonl.partial already holds
  bool progress = false;   ///< a progress line on stderr
  std::string timeline;    ///< a Perfetto timeline of point `timelinePoint`
  size_t timelinePoint = 0;
  std::vector<int64_t> timelineRanks; ///< the ranks the timeline shows; empty: every rank
  SimMode mode = SimMode::Auto;
  /// A search simulates only the layouts its best and its Pareto front can
  /// come from: each layout's step time is first bounded from below (its
  /// layer probe), then layouts run in the order of their bounds, and one
  /// whose bound a faster, no heavier layout already beats is reported with
  /// its bound and that layout instead (docs/language.md, "search"). Off:
  /// every layout that fits is simulated.
  bool boundSearches = true;
  /// Where a stale journal and files that cannot be written are reported.
  DiagnosticEngine *diags = nullptr;
};

/// What the results of `point` depend on, as a short hex string: its
/// resolved values (what the file, its imports and --set made of it), the
/// simulation mode and rapidc's build. A journal line with another
/// fingerprint is not resumed.
std::string pointFingerprint(const ExperimentPoint &point, SimMode mode);

/// Runs every point (in parallel), returning the results in point order; a
/// point whose simulation fails has its `error` set and the others still
/// run. With an output prefix, each finished point is appended to
/// OUTPUT.jsonl.partial at once, so a killed sweep loses nothing and a rerun
/// with `resume` picks up where it stopped; at the end the results are
/// written, sorted best first, to OUTPUT.csv and OUTPUT.jsonl atomically.
/// Files that cannot be written are reported to `opts.diags`; the results
/// are returned all the same. Only a journal that cannot be opened is an
/// error.
llvm::Expected<std::vector<PointResult>> runSweep(const std::vector<ExperimentPoint> &points,
                                                  const SweepOptions &opts);

/// Reports, where each is declared, what a run did not answer: points whose
/// simulation failed, experiments that do not fit, and sweeps none of whose
/// points fits (a sweep that prunes some has answered). rapidc and the C
/// interface exit 1 on them.
void reportOutcomes(const std::vector<ExperimentPoint> &points, const std::vector<PointResult> &results,
                    DiagnosticEngine &diags);

} // namespace rapid
