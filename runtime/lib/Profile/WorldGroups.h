//===- WorldGroups.h - What scaling and re-sharding a world share -*- C++ -*-===//
//
// Internal to the profile library: the checks and messages weak scaling
// (TraceSet.cpp, scaleWorld) and tensor-parallel re-sharding (Reshard.cpp)
// make of a profile's communicators.
//===----------------------------------------------------------------------===//
#pragma once

#include "rapid/Profile/Replay.h"

#include <string>

namespace rapid::profile {

/// Collectives the profile does not name need a communicator spanning the
/// profiled world: their streams must be the same on every rank.
llvm::Error unnamedSpanWorld(const TraceSet &set);

/// A named group for messages: "'3' DATA_PARALLEL_GROUP (ranks 0, 2)".
std::string describeGroup(const NamedGroups::key_type &k, const std::string &desc);

/// An error for the first of `dataParallel` that is neither the description
/// nor the name of one of the profile's `groups` (namedGroups), listing them.
llvm::Error dataParallelNamed(const TraceSet &set, const NamedGroups &groups,
                              llvm::ArrayRef<std::string> dataParallel);

} // namespace rapid::profile
