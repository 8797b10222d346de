//===- Symmetry.h - Which ranks stand for all the others (private) -*- C++ -*-===//
//
// Every rank of a stage runs the same program, and every data-parallel
// replica the same stages; on a symmetric network they run alike. A
// hierarchical run then simulates
//  - the layer probe on the first replica only (the first `ep` replicas with
//    expert parallelism: an EP group spans them), and
//  - the pipeline on one rank per stage (the first replica's ranks when
//    that is not exact), with every collective left at the pipeline level
//    timed once per distinct collective on one group of the full network
//    and replayed at that time.
// Symmetry.cpp says when each is exact under the network model.
//===----------------------------------------------------------------------===//
#pragma once

#include "rapid/IR/IR.h"
#include "rapid/Network/Topology.h"

namespace rapid::run {

struct Reduction {
  std::vector<int64_t> probe;    ///< ranks of the layer probe, ascending; empty: every rank
  std::vector<int64_t> pipeline; ///< ranks of the pipeline run, ascending; empty: every rank
  bool timeAll = false;          ///< the pipeline run replays every collective, not only data-parallel ones
};

/// The largest exact reduction of a fault-free point (the caller checks the faults).
Reduction reduce(const ir::Program &prog, const net::NetworkSpec &net);

/// Whether `op` is a collective between replicas (DP or DP x CP).
bool isDataParallel(const ir::Op &op);

/// A collective's signature: ops with equal keys take equal time.
struct CollectiveKey {
  ir::OpKind kind;
  ir::Group group;
  double bytes;
  auto operator<=>(const CollectiveKey &) const = default;
};

/// A program of one op: `op` alone in stage `stage`'s graph, every other
/// stage empty; simulated on its group's members only, it times the op.
ir::Program collectiveProgram(const ir::Program &prog, const ir::Op &op, int32_t stage);

} // namespace rapid::run
