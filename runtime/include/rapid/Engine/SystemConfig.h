//===- SystemConfig.h - Collective and compute settings --------*- C++ -*-===//
//
// Reads the keys of Astra-Sim's system JSON that rapid models; other keys are
// ignored so the same file serves both simulators:
//   "preferred-dataset-splits": chunks per collective (default 4)
//   "active-chunks-per-dimension": chunks of a collective a member works on
//       at once in each network dimension (default 0: no limit; 4096, what
//       the writer puts for Astra-Sim, reads as 0)
//   "endpoint-delay": ns a member's endpoint spends before a collective
//       phase's first send and after each step's receives (default 0)
//   "local-mem-bw" also times reductions: 3 x bytes / local-mem-bw per
//       reduced message (read two operands, write one), as Astra-Sim does
//   "model-shared-bus": 0/1, "local-reduction-delay": with the shared bus
//       on, a reduction takes local-reduction-delay ns per 100 B + 50 ns
//       more (default 1, Astra-Sim's), and the bus replaces endpoint-delay
//   "all-reduce-implementation", "all-gather-implementation",
//   "reduce-scatter-implementation", "all-to-all-implementation":
//       per-dimension lists of "ring" | "direct" | "halvingDoubling"
//   "roofline-enabled": 0/1, "peak-perf": TFLOP/s, "local-mem-bw": GB/s
//   "collective-protocol" (rapid's own): "none" (default), "LL", "LL128",
//       "Simple" or "auto": NCCL's protocol costs on every collective
//       (Protocol.h); "ll-max-bandwidth" (GB/s, rapid's own): the most bus
//       bandwidth the LL protocol reaches (NCCL's per-architecture cap)
//   "nvls-bandwidth" (GB/s, rapid's own): the first dimension's switch
//       reduces and multicasts, and an all-reduce of more than two members
//       inside it runs NCCL's NVLS algorithm where NCCL's rule estimates it
//       faster, each member's data moving at this rate (docs/runtime.md)
//===----------------------------------------------------------------------===//
#pragma once

#include "rapid/Collectives/Plan.h"
#include "rapid/Collectives/Protocol.h"

namespace rapid::engine {

/// The most chunks a collective is split into (`preferred-dataset-splits`,
/// `--splits`).
inline constexpr int kMaxSplits = 4096;

struct SystemConfig {
  int splits = 4;
  int activeChunks = 0; ///< per member and dimension; 0: no limit
  int64_t endpointDelayNs = 0;
  bool sharedBus = false;           ///< model-shared-bus
  int64_t reductionNsPer100B = 1;   ///< local-reduction-delay (shared bus only)
  coll::AlgorithmTable algorithms;
  coll::Protocol protocol = coll::Protocol::None;
  /// all-reduce-auto: dimensions (bits) whose all-reduces run the ring or
  /// the double binary tree, whichever NCCL's rule estimates faster; the
  /// tree is a candidate on switched dimensions only (docs/runtime.md).
  uint32_t allReduceAuto = 0;
  double llMaxBytesPerNs = 0; ///< ll-max-bandwidth; 0: LL's half of the link only
  coll::CustomAllReduce customAllReduce; ///< custom-all-reduce-*: the engine's kernels, by size
  double nvlsBytesPerNs = 0; ///< nvls-bandwidth; 0: no NVLS
  bool roofline = false;
  double peakFlopsPerNs = 0; ///< from peak-perf
  double memBytesPerNs = 0;  ///< from local-mem-bw, for the roofline
  /// local-mem-bw as the system file gives it, for reductions (0: free);
  /// --local-mem-bw sets the roofline's only.
  double reduceMemBytesPerNs = 0;
};

llvm::Expected<SystemConfig> loadSystemConfig(const std::string &path);
llvm::Expected<SystemConfig> parseSystemConfig(const std::string &path, llvm::StringRef text);
/// The inverse of parseSystemConfig: the keys above, pretty-printed.
std::string writeSystemConfigJson(const SystemConfig &cfg);

} // namespace rapid::engine
