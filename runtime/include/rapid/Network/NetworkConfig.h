//===- NetworkConfig.h - Read and write network descriptions --*- C++ -*-===//
//
// Two inputs map to one NetworkSpec, and the first can be written back:
//  * our JSON: {"dimensions": [{"kind": "Torus2D", "shape": [4, 4],
//    "bandwidth": "100 GB/s", "latency": "500 ns"}, ...]} with units spelled
//    as in the language (GB = 10^9 B, GiB = 2^30 B);
//  * Astra-Sim's analytical YAML (topology / npus_count / bandwidth / latency
//    lists). Its bandwidth is "GB/s" as Astra-Sim computes it, 2^30 B/s per
//    unit (64 KiB over 50 GB/s takes 1220.7 ns there), latency in ns.
// The YAML is read with LLVM's YAML parser; only the four top-level lists
// are interpreted.
//===----------------------------------------------------------------------===//
#pragma once

#include "rapid/Network/ConfigInput.h"
#include "rapid/Network/Topology.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

namespace rapid::net {

/// Reads a .json or .yml/.yaml network file (by extension).
llvm::Expected<NetworkSpec> loadNetworkSpec(const std::string &path);
llvm::Expected<NetworkSpec> parseNetworkJson(const std::string &path, llvm::StringRef text);
llvm::Expected<NetworkSpec> parseNetworkYaml(const std::string &path, llvm::StringRef text);

/// The inverse of parseNetworkJson, pretty-printed: the kind's written
/// extents ("size" for kinds written with one, else "shape"), bandwidth in
/// B/s and latency in ns as formatNumber writes them, leaf_size only when it
/// is not the default (all ranks on one leaf), packet in B only when it is
/// set. formatNumber keeps at most 15
/// significant digits, so reading the text back gives the same spec when its
/// bandwidths and latencies are what reading such numbers of B/s and ns gives.
std::string writeNetworkJson(const NetworkSpec &spec);

/// "50 GB/s", "1.5 us": a number and a unit of the expected dimension.
llvm::Expected<double> parseQuantity(llvm::StringRef text, Dim expected);


} // namespace rapid::net
