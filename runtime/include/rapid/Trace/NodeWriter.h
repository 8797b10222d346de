//===- NodeWriter.h - A decoded node written back as Chakra -----*- C++ -*-===//
//
// The inverse of GraphBuilder::add for the fields the simulator reads, so
// that every writer of Chakra traces (rapidc's --emit=chakra, rapid-trace
// convert) emits a node one way.
//===----------------------------------------------------------------------===//
#pragma once

#include "rapid/Trace/Graph.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <string>

namespace rapid::trace {

/// Writes id, name, is_cpu_op, the node type and the attributes of its kind:
/// compute: duration_micros, rapid_time_ns, num_ops and tensor_size (each
/// when set); metadata: rapid_time_ns when set (a delay); send/receive: comm_src, comm_dst, comm_tag (int32) and
/// comm_size; collective: comm_type, comm_size, rapid_time_ns and
/// rapid_measured_ns (when set) and pg_name. Dependencies are `deps` (data
/// dependencies, node ids); involved_dim is the caller's to add.
void writeNode(const TraceNode &t, std::string_view name, llvm::ArrayRef<uint32_t> deps,
               ChakraProtoMsg::Node &n);

/// Writes a .et file: a GlobalMetadata record, then `count` nodes, node i
/// filled by `fill(i, node)` (one Node reused: one allocation set per file).
llvm::Error writeEtFile(const std::string &path, size_t count,
                        llvm::function_ref<void(size_t, ChakraProtoMsg::Node &)> fill);

/// Writes a whole rank: every node (with its dependencies as ids) in index
/// order.
llvm::Error writeRankGraph(const std::string &path, const RankGraph &g);

} // namespace rapid::trace
