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
  /// Traces from before 2023-10 have no GlobalMetadata: the first record is
  /// already a Node. Off by default, as in Astra-Sim, which rejects them.
  bool allowMissingMetadata = false;
};

/// Called once per Node in file order; returning an Error stops the read.
using NodeSink = std::function<llvm::Error(ChakraProtoMsg::Node &)>;

/// Reads `path`, fills `meta` and calls `sink` for each Node. Errors name the
/// file and the record.
llvm::Error readEtFile(const std::string &path, const ReadOptions &opts,
                       ChakraProtoMsg::GlobalMetadata &meta, const NodeSink &sink);

/// Appends one varint32-framed message to `out` (the writer side of the format).
void appendFramed(std::string &out, const google::protobuf::MessageLite &msg);

} // namespace rapid::trace
