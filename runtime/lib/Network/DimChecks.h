//===- DimChecks.h - Checks both network readers share ---------*- C++ -*-===//
//
// Private to the Network library: the JSON and the YAML reader turn written
// extents into axes and check a dimension and a whole network the same way,
// so both report the same errors for the same mistakes.
//===----------------------------------------------------------------------===//
#pragma once

#include "rapid/Network/Topology.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace rapid::net {

/// The axes from what the file wrote, once the kind accepts it.
llvm::Error setShape(const std::string &path, int index, llvm::ArrayRef<int64_t> extents, DimSpec &d);
/// Bandwidth, latency, packet and the fat-tree shape are in range.
llvm::Error checkDim(const std::string &path, int index, const DimSpec &d);
/// What a whole network may hold: ranks numbered in an int, and few enough
/// links to build (a FullyConnected dimension has n^2 of them).
llvm::Error checkSize(const std::string &path, const NetworkSpec &spec);

} // namespace rapid::net
