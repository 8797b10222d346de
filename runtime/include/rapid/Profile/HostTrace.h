//===- HostTrace.h - PyTorch host execution traces --------------*- C++ -*-===//
//
// A host execution trace (torch.profiler's ExecutionTraceObserver, JSON with
// "schema" and "nodes") lists every operator the host ran, with its parent,
// its record-function id (rf_id) and its inputs: shapes, types and the
// values of non-tensor arguments. The Kineto trace of the same iteration
// records the same operators as `cpu_op` events; both come from one
// RecordFunction (as are annotations: `user_annotation` events, c10d's
// "nccl:*" among them). We pair each Kineto operator with its host node and
// take what the device trace lacks from the host trace: an operator's
// shapes, types and argument values where the profile ran without
// record_shapes.
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <cstdint>
#include <string>
#include <vector>

namespace rapid::profile {

struct HostNode {
  int64_t id = 0, parent = 0, rfId = -1, tid = 0;
  std::string name;
  /// Kineto's names for what the node records ("Input Dims", "Input type",
  /// "Concrete Inputs"), built from input_shapes, input_types and inputs,
  /// for the operators whose shapes the replay reads (matrix multiplies,
  /// fused attention, collectives); empty for the others.
  llvm::json::Object args;
};

struct HostTrace {
  std::string file, schema;
  std::string pid; ///< the process, as text: it is the Kineto trace's pid
  std::vector<HostNode> nodes;
};

/// Whether a JSON document is a host execution trace.
bool isHostTrace(const llvm::json::Object &top);
/// Reads one; errors name the file and, where one is at fault, the node's
/// index in "nodes".
llvm::Expected<HostTrace> readHostTrace(const std::string &file, const llvm::json::Object &top);

/// How a Kineto trace's operators meet a host trace's nodes.
struct HostLink {
  uint64_t unshaped = 0;  ///< operators whose shapes the replay reads that the Kineto trace records without
  std::string file;       ///< the host trace; empty: none linked
  uint64_t operators = 0; ///< the Kineto trace's operators and annotations of the host trace's process
  uint64_t linked = 0;    ///< of those, paired with a host node of the same name
  uint64_t filled = 0;    ///< of those, given the host node's shapes (they had none)
  uint64_t nodes = 0;     ///< the host trace's operator nodes (those with an rf_id)
  uint64_t threads = 0;   ///< host threads paired with the Kineto trace's
};

/// The Kineto document's operators whose shapes the replay reads (matrix
/// multiplies, fused attention, collectives) that record none ("Input
/// Dims"): the profile ran without record_shapes.
uint64_t unshapedOperators(const llvm::json::Object &kineto);

/// Pairs each thread of the Kineto document's process with a thread of the
/// host trace and, along each pair, the operators in the order they started
/// with the nodes in rf_id order, by name (a greedy alignment that skips
/// what one side has and the other has not). The ids themselves are not
/// compared: how Kineto's "External id" and "Ev Idx" relate to rf_id
/// differs between releases and, in some, between threads. With `fill`,
/// every paired operator that records no "Input Dims" takes the node's.
HostLink linkHostTrace(const HostTrace &host, llvm::json::Object &kineto, bool fill);

} // namespace rapid::profile
