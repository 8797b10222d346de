//===- EtReader.h - Read varint-framed Chakra .et files ---------*- C++ -*-===//
//
// A Chakra file is `varint32(len) || message` repeated: one GlobalMetadata,
// then Nodes until EOF (chakra-format.md 1.2). The reader hands out protobuf
// objects one at a time; only the graph builder keeps anything, and it keeps
// flat arrays, not these messages.
//===----------------------------------------------------------------------===//
#pragma once

#include "et_def.pb.h"
#include "llvm/Support/Error.h"

#include <functional>
#include <string>

namespace rapid::trace {

struct ReadOptions {
  /// Accept what real-world writers get wrong, where a sensible reading
  /// exists (off by default; Astra-Sim rejects all of these):
  ///  * no GlobalMetadata (traces from before 2023-10): the first record is
  ///    read as a Node;
  ///  * dependencies on nodes that do not exist (PyTorch converters point
  ///    thread roots at a node 0) are dropped;
  ///  * COMM_COLL nodes without comm_type (CPU-side c10d ops whose GPU kernel
  ///    is a separate node) run as empty nodes.
  bool lenient = false;
};

/// Called once per Node in file order; returning an Error stops the read.
using NodeSink = std::function<llvm::Error(ChakraProtoMsg::Node &)>;

/// Reads `path`, fills `meta` and calls `sink` for each Node. Errors name the
/// file and the record.
llvm::Error readEtFile(const std::string &path, const ReadOptions &opts,
                       ChakraProtoMsg::GlobalMetadata &meta, const NodeSink &sink);

/// Appends one varint32-framed message to `out` (the writer side of the
/// format; protobuf's delimited-message framing).
void appendFramed(std::string &out, const google::protobuf::MessageLite &msg);

} // namespace rapid::trace
