//===- EtReader.cpp - Read varint-framed Chakra .et files -----------------===//

#include "rapid/Trace/EtReader.h"

#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/stubs/logging.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/util/delimited_message_util.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include <fmt/format.h>

namespace rapid::trace {

using google::protobuf::io::CodedInputStream;

static llvm::Error fail(const std::string &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

/// A GlobalMetadata has only string/message fields; a Node read as one leaves
/// unknown fields behind (its id is a varint where `version` is a string).
static bool looksLikeMetadata(const std::string &bytes, ChakraProtoMsg::GlobalMetadata &meta) {
  if (!meta.ParseFromString(bytes))
    return false;
  return meta.GetReflection()->GetUnknownFields(meta).empty();
}

llvm::Error readEtFile(const std::string &path, const ReadOptions &opts,
                       ChakraProtoMsg::GlobalMetadata &meta, const NodeSink &sink) {
  // A FIFO or a device would block or never end.
  llvm::sys::fs::file_status st;
  if (std::error_code ec = llvm::sys::fs::status(path, st))
    return fail(fmt::format("{}: cannot read trace file: {}", path, ec.message()));
  if (st.type() != llvm::sys::fs::file_type::regular_file)
    return fail(fmt::format("{}: not a regular file", path));
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buf)
    return fail(fmt::format("{}: cannot read trace file: {}", path, buf.getError().message()));
  const auto &data = (*buf)->getBuffer();
  if (data.size() >= 2 && uint8_t(data[0]) == 0x1f && uint8_t(data[1]) == 0x8b)
    return fail(fmt::format("{}: gzip-compressed traces are not supported; gunzip it first", path));
  if (data.empty())
    return fail(fmt::format("{}: empty trace file (no GlobalMetadata record)", path));
  if (data.size() > size_t(INT32_MAX))
    return fail(fmt::format("{}: trace files over 2 GiB are not supported", path));
  // protobuf logs to stderr why a record does not parse (a string field
  // with invalid UTF-8, say); the error below names the file and record.
  google::protobuf::LogSilencer quiet;
  CodedInputStream in(reinterpret_cast<const uint8_t *>(data.data()), int(data.size()));
  in.SetTotalBytesLimit(INT32_MAX);
  std::string record;
  ChakraProtoMsg::Node node;
  for (size_t index = 0; in.CurrentPosition() < int(data.size()); ++index) {
    uint32_t len = 0;
    if (!in.ReadVarint32(&len) || !in.ReadString(&record, int(len)))
      return fail(fmt::format("{}: record {}: truncated record at byte {}", path, index,
                              in.CurrentPosition()));
    if (index == 0 && looksLikeMetadata(record, meta))
      continue;
    if (index == 0 && !opts.lenient)
      return fail(fmt::format("{}: record 0: the first record is not a GlobalMetadata (a Chakra "
                              "trace from before 2023-10?); use --lenient to read it as a node",
                              path));
    node.Clear();
    if (!node.ParseFromString(record))
      return fail(fmt::format("{}: record {}: not a valid Chakra Node (malformed, or a string field such as "
                              "its name holds invalid UTF-8)", path, index));
    if (auto err = sink(node))
      return err;
  }
  return llvm::Error::success();
}

void appendFramed(std::string &out, const google::protobuf::MessageLite &msg) {
  google::protobuf::io::StringOutputStream stream(&out);
  // Fails only for messages over 2 GiB, which no node or metadata reaches.
  google::protobuf::util::SerializeDelimitedToZeroCopyStream(msg, &stream);
}

} // namespace rapid::trace
