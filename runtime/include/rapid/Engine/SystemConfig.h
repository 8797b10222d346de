//===- SystemConfig.h - Collective and compute settings --------*- C++ -*-===//
//
// Reads the keys of Astra-Sim's system JSON that rapid models; other keys are
// ignored so the same file serves both simulators:
//   "preferred-dataset-splits": chunks per collective (default 4)
//   "active-chunks-per-dimension": chunks of one collective in flight at
//       once per member (default 0: all of them)
//   "all-reduce-implementation", "all-gather-implementation",
//   "reduce-scatter-implementation", "all-to-all-implementation":
//       per-dimension lists of "ring" | "direct" | "halvingDoubling"
//   "roofline-enabled": 0/1, "peak-perf": TFLOP/s, "local-mem-bw": GB/s
//===----------------------------------------------------------------------===//
#pragma once

#include "rapid/Collectives/Plan.h"

namespace rapid::engine {

/// The most chunks a collective is split into (`preferred-dataset-splits`,
/// `--splits`).
inline constexpr int kMaxSplits = 4096;

struct SystemConfig {
  int splits = 4;
  int activeChunks = 0; ///< 0: no limit
  coll::AlgorithmTable algorithms;
  bool roofline = false;
  double peakFlopsPerNs = 0; ///< from peak-perf
  double memBytesPerNs = 0;  ///< from local-mem-bw
};

llvm::Expected<SystemConfig> loadSystemConfig(const std::string &path);
llvm::Expected<SystemConfig> parseSystemConfig(const std::string &path, llvm::StringRef text);
/// The inverse of parseSystemConfig: the keys above, pretty-printed.
std::string writeSystemConfigJson(const SystemConfig &cfg);

} // namespace rapid::engine
