//===- KvTransfer.h - Disaggregated serving's KV-cache moves (private) -*- C++ -*-===//
#pragma once

#include "Workload.h"

#include "rapid/IR/RankLayout.h"

namespace rapid::run {

/// Disaggregated serving: moving a prompt's KV cache between two replicas,
/// each rank to its counterpart at once (a rank holds its heads of its
/// stage's layers), on the point's network with its explicit faults.
/// Simulated at two sizes per pair: an idle path's time is a fixed part
/// plus one linear in the bytes.
class TransferCosts {
public:
  TransferCosts(const ExperimentPoint &point, const ir::Program &probe, net::Topology topo);
  /// (fixed, per token) seconds from replica `from` to replica `to`.
  llvm::Expected<std::pair<double, double>> operator()(int64_t from, int64_t to);

private:
  /// Replica d's ranks, ascending: the same order of the other degrees in each.
  std::vector<int64_t> ranksOf(int64_t d) const;
  llvm::Expected<double> seconds(int64_t fromReplica, int64_t toReplica, int64_t tokens);

  const ExperimentPoint &point;
  const ir::Program &probe;
  RankLayout layout;
  net::Topology topo;
  double perTokenLayer = 0; ///< K and V of one token in one layer, on one rank
};

} // namespace rapid::run
