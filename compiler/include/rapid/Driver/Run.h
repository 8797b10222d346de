//===- Run.h - Simulate an experiment point ---------------------*- C++ -*-===//
//
// The whole pipeline for one point: lower, cost, check memory, build every
// rank's Chakra graph in memory (no files), and execute it on the runtime's
// network with its faults. Results.h makes its figures what `rapidc` reports.
//===----------------------------------------------------------------------===//
#pragma once

#include "rapid/IR/IR.h"
#include "rapid/Network/Faults.h"
#include "rapid/Passes/Memory.h"
#include "rapid/Sema/Sema.h"
#include "rapid/Serve/Serve.h"

#include "llvm/Support/Error.h"

#include <functional>
#include <optional>

namespace rapid {

/// A Monte Carlo fault study: the reported time (step time, or total
/// latency for inference) of `samples` runs, each under faults drawn from
/// one `random` section of the point's fault set.
struct FaultStudy {
  std::string name;
  double baseline = 0; ///< without the random faults
  std::vector<double> times; ///< one per sample, in sample order
  double quantile(double q) const;
  double mean() const;
};

/// Rank 0's exposed communication by the kind of group it ran in; the
/// gradient reduction over DP and CP ranks together counts as dp. Time with
/// several groups communicating is split evenly among them.
struct ExposedByGroup {
  double tp = 0, cp = 0, pp = 0, dp = 0, ep = 0;
};

struct RunResult {
  MemoryReport memory;
  bool simulated = false;
  // Training.
  double stepTime = 0;      ///< seconds per step (slowest rank)
  double computeTime = 0;   ///< rank 0: busy computing
  double exposedComm = 0;   ///< rank 0: communicating with nothing to overlap
  ExposedByGroup exposedByGroup; ///< exposedComm by group kind
  double bubble = 0;        ///< rank 0: waiting on a peer stage's send (the pipeline bubble)
  double idle = 0;          ///< rank 0: the rest (nothing ready, or a collective's peers)
  /// Rank 0's first layer, microbatch 0: its forward, and its backward with
  /// any recompute (TP/SP/CP communication included), as Korthikanti et al.
  /// Table 4 time a layer.
  double layerForward = 0, layerBackward = 0;
  double mfu = 0;           ///< model FLOPs / (step time x GPUs x dense peak)
  double tokensPerSecond = 0;
  // Inference.
  double ttft = 0, itl = 0, total = 0;
  std::optional<serve::Result> serving; ///< a serving point's requests and their latencies
  int64_t kvBlocks = 0;                  ///< serving: KV-cache blocks of one replica
  uint64_t events = 0;      ///< simulator events, for throughput figures
  bool hierarchical = false; ///< which mode ran
  int64_t simulatedRanks = 0; ///< ranks the (pipeline) simulation ran; the others repeat them
  /// Which pipeline-level collectives ran at the time one group takes alone:
  /// "none", "data_parallel" or "all" (docs/simulation.md).
  std::string replayed = "none";
  std::vector<FaultStudy> faultStudies;
  /// A search's training point without faults: a lower bound on its step
  /// time (Bound.h), from its blocks' probed times (hierarchical) or their
  /// compute ops (flattened).
  std::optional<double> lowerBound;
};

/// How a training point is simulated (RAPID-LLM's two modes). Flattened:
/// every op of every layer and microbatch on every rank. Hierarchical: each
/// layer's forward and backward simulated once (microbatch 0, all ranks, so
/// TP/SP/CP collectives see the real network), then the pipeline and DP
/// level with each layer one node of that measured time; on a fault-free
/// network, where it is exact, only the ranks that stand for the others
/// (Symmetry.h). HierarchicalAll: the same on every rank. Auto picks
/// hierarchical for large runs. Inference is always flattened.
enum class SimMode { Auto, Flattened, Hierarchical, HierarchicalAll };

struct RunOptions {
  std::string timeline; ///< write a Perfetto trace of the simulation here
  std::vector<int64_t> timelineRanks; ///< only these ranks' events in it (empty: every rank's)
  SimMode mode = SimMode::Auto;
  unsigned jobs = 1;    ///< fault-study samples simulated at once
  /// Stop at the lower bound (a search's training point): compile, check
  /// memory and probe the layers, but do not simulate the step.
  bool boundOnly = false;
};

/// Draws the faults of every sample of every `random` section of the point's
/// fault set (deterministic in the seed) and times each with `timeOf`.
llvm::Expected<std::vector<FaultStudy>>
faultStudies(const ExperimentPoint &point, unsigned jobs,
             const std::function<llvm::Expected<double>(std::vector<net::Fault>)> &timeOf);

/// Compiles and, when it fits in memory, simulates one feasible point.
llvm::Expected<RunResult> runPoint(const ExperimentPoint &point, const RunOptions &opts = {});

} // namespace rapid
