//===- Results.h - What `rapidc exp.rapid` reports per point ----*- C++ -*-===//
//
// A point's result is a struct; the JSON line, the CSV row, the text table
// row and the plots are views of it. The JSON line is also the journal a
// killed sweep resumes from, so it has a reader, the inverse of its writer:
// a resumed point prints the same bytes as a freshly run one.
//===----------------------------------------------------------------------===//
#pragma once

#include "rapid/Driver/Run.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

namespace rapid {

struct PointResult {
  std::string experiment, sweep;
  /// The swept values, in the sweep's order. A JSON object has no order, so
  /// readResult gives them sorted by name; a resumed sweep takes them from
  /// the point it matched.
  std::vector<std::pair<std::string, Value>> point;
  std::string label = "-"; ///< `tp=4 pp=2`, or `-` outside sweeps
  Workload workload = Workload::None;
  bool feasible = true;
  std::string reason; ///< why the point was pruned (structure or memory)
  std::string error;  ///< why its simulation failed (a disconnected network, ...)
  int64_t gpus = 0;

  /// The worst rank's peak and its GPU's memory, in whole bytes; absent
  /// when the point was pruned before it was compiled.
  struct Memory {
    double peak = 0, capacity = 0;
  };
  std::optional<Memory> memory;

  /// Present when a training point was simulated (docs/simulation.md).
  struct Training {
    double stepTime = 0, mfu = 0, tokensPerSecond = 0;
    double computeTime = 0, exposedComm = 0, bubble = 0, idle = 0; ///< rank 0's breakdown
    double layerForward = 0, layerBackward = 0;         ///< rank 0's first layer, microbatch 0
    ExposedByGroup exposedByGroup;                      ///< exposedComm by group kind
    std::string mode;                                   ///< "flattened" or "hierarchical"
    int64_t simulatedRanks = 0;                         ///< ranks the simulation ran; the others repeat them
    std::string replayed;                               ///< RunResult::replayed
  };
  std::optional<Training> training;

  /// Present when an inference point was simulated.
  struct Inference {
    double ttft = 0, itl = 0, total = 0, tokensPerSecond = 0;
  };
  std::optional<Inference> inference;

  /// Present when a serving point was simulated (docs/serving.md).
  struct Serving {
    int64_t requests = 0, steps = 0, preemptions = 0, kvBlocks = 0;
    double duration = 0, requestsPerSecond = 0, outputTokensPerSecond = 0, kvPeak = 0, kvMean = 0;
    double prefixHitRate = 0;
    std::optional<serve::Summary> kvTransfer; ///< disaggregated serving: prompt caches moved to decode replicas
    serve::Summary ttft, tpot, itl, e2e;
    double sloAttainment = 1, goodput = 0; ///< requests within the SLO targets: share, per second
    std::string sloMissed; ///< why the point misses its SLO ("" when it meets it or sets none)
    /// Per request and per step; kept for PREFIX.requests.csv and
    /// PREFIX.kv.csv, not in the JSON line (a resumed point has none).
    std::vector<serve::RequestRecord> records;
    std::vector<serve::Occupancy> occupancy;
  };
  std::optional<Serving> serving;

  std::vector<FaultStudy> faultStudies;

  /// From a `search`: whether no other layout of it is both faster and
  /// lighter (markPareto).
  bool search = false, pareto = false;
  /// A search's training layout: a lower bound on its step time (seconds,
  /// docs/language.md "search"); and, when it was not simulated because a
  /// layout that ran is faster than that bound and no heavier, that layout.
  std::optional<double> bound;
  std::string dominatedBy;

  /// The time points are ranked by: step time, total latency, or a served
  /// request's mean end-to-end latency.
  std::optional<double> headline() const;
  /// Identifies the point across runs: experiment, sweep and swept values.
  std::string key() const;
};

/// The result of point `p`; `run` is null when Sema pruned it.
PointResult makeResult(const ExperimentPoint &p, const RunResult *run);
/// Marks the Pareto front of every search among `results`: the points that
/// ran and fit for which no other point of the same search takes less time
/// and no more peak memory per GPU, or less memory and no more time.
void markPareto(std::vector<PointResult> &results);
/// After the table: for every search, how many layouts fit, the best, and
/// the Pareto front of time against peak memory.
void printSearchSummary(const std::vector<PointResult> &results, llvm::raw_ostream &os);

/// The result of point `p` whose simulation failed with `error`.
PointResult failedResult(const ExperimentPoint &p, std::string error);

/// One JSON object on one line, no newline; keys in a fixed order
/// (docs/simulation.md lists them). A journal line leads with the
/// fingerprint of the inputs it was computed from.
std::string resultJson(const PointResult &r, llvm::StringRef fingerprint = "");
/// The inverse of resultJson; an error for a line cut short, or for one that
/// misses a key rapidc writes.
llvm::Expected<PointResult> readResult(llvm::StringRef line, std::string *fingerprint = nullptr);

/// The CSV file of `--output`: a header line, then one row per result
/// (neither with its newline).
std::string csvHeader();
std::string csvRow(const PointResult &r);

/// Serving points' files of `--output`: PREFIX.requests.csv (and .jsonl), one row per
/// request (its replica, when it was sent, its lengths and latencies), and
/// PREFIX.kv.csv, the KV blocks each replica used at each step. Empty
/// when no result has them.
std::string requestsCsv(const std::vector<PointResult> &results);
/// The same rows as PREFIX.requests.jsonl: one JSON object per request.
std::string requestsJsonl(const std::vector<PointResult> &results);
std::string kvCsv(const std::vector<PointResult> &results);

/// The table of `rapidc exp.rapid`: GPUs, peak memory, step time or
/// TTFT/ITL, MFU, tokens per second, and ok or why it was pruned; a line
/// per fault study under the point's row.
void printResultHeader(llvm::raw_ostream &os);
void printResultRow(const PointResult &r, llvm::raw_ostream &os);

/// SVG charts: PREFIX.points.svg, the time of every point;
/// PREFIX.faults.svg, the slowdown samples of every fault study.
llvm::Error writePlots(const std::string &prefix, const std::vector<PointResult> &results);

} // namespace rapid
