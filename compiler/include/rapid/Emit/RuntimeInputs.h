//===- RuntimeInputs.h - A point's network, settings and faults -*- C++ -*-===//
//
// The typed hand-off from the compiler to the runtime: the network the
// runtime builds, its collective settings and the point's explicit link
// faults. The in-process run uses these directly; `--emit=chakra` writes
// the first two through the runtime's own writers (network.json,
// system.json), the inverses of what rapid-sim reads.
//===----------------------------------------------------------------------===//
#pragma once

#include "rapid/Engine/SystemConfig.h"
#include "rapid/Network/Faults.h"
#include "rapid/Network/Topology.h"
#include "rapid/Sema/Sema.h"

namespace rapid {

/// The point's network: each dimension's kind and axes from the registry,
/// the declared link bandwidth times the GPU's `calibration.network`.
net::NetworkSpec networkSpec(const ExperimentPoint &point);

/// The runtime's collective settings for the point: each dimension's
/// `algorithm` (auto: the runtime's ring) for every collective kind.
engine::SystemConfig systemConfig(const ExperimentPoint &point);

/// The point's explicit link faults on the runtime's topology. A fault
/// `dim(a, b)` names the link between positions a and b of that dimension in
/// the copy of the dimension that holds rank 0; in a switched dimension
/// (Switch, FatTree), the links of a and of b to their switch.
std::vector<net::Fault> pointFaults(const ExperimentPoint &point, const net::Topology &topo);

} // namespace rapid
