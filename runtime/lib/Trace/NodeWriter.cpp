//===- NodeWriter.cpp - TraceNode to Chakra protobuf ----------------------===//

#include "rapid/Trace/NodeWriter.h"

#include <fmt/format.h>
#include <fstream>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/util/delimited_message_util.h>

namespace rapid::trace {

using namespace ChakraProtoMsg;

static void attrInt(Node &n, const char *name, int64_t v) {
  AttributeProto *a = n.add_attr();
  a->set_name(name);
  a->set_int64_val(v);
}

static void attrInt32(Node &n, const char *name, int32_t v) {
  AttributeProto *a = n.add_attr();
  a->set_name(name);
  a->set_int32_val(v);
}

void writeNode(const TraceNode &t, std::string_view name, llvm::ArrayRef<uint32_t> deps, Node &n) {
  n.set_id(t.id);
  n.set_name(std::string(name));
  for (uint32_t d : deps) n.add_data_deps(d);
  AttributeProto *cpu = n.add_attr();
  cpu->set_name("is_cpu_op");
  cpu->set_bool_val(t.isCpuOp);
  switch (t.kind) {
  case NodeKind::Comp:
    n.set_type(COMP_NODE);
    n.set_duration_micros(t.durationMicros);
    for (auto [key, v] : {std::pair{"rapid_time_ns", t.rapidTimeNs}, {"num_ops", t.numOps}, {"tensor_size", t.tensorSize}})
      if (v != kAbsent) attrInt(n, key, v);
    return;
  case NodeKind::Metadata: // a delay
    n.set_type(METADATA_NODE);
    if (t.rapidTimeNs != kAbsent) attrInt(n, "rapid_time_ns", t.rapidTimeNs);
    return;
  case NodeKind::Send:
  case NodeKind::Recv:
    n.set_type(t.kind == NodeKind::Send ? COMM_SEND_NODE : COMM_RECV_NODE);
    attrInt32(n, "comm_src", int32_t(t.commSrc));
    attrInt32(n, "comm_dst", int32_t(t.commDst));
    attrInt32(n, "comm_tag", int32_t(t.commTag));
    attrInt(n, "comm_size", t.commSize);
    if (t.launchNs != kAbsent) attrInt(n, "rapid_launch_ns", t.launchNs);
    return;
  default:
    break;
  }
  n.set_type(COMM_COLL_NODE);
  attrInt(n, "comm_type", t.commType);
  attrInt(n, "comm_size", t.commSize);
  if (t.rapidTimeNs != kAbsent) attrInt(n, "rapid_time_ns", t.rapidTimeNs);
  if (t.measuredNs != kAbsent) attrInt(n, "rapid_measured_ns", t.measuredNs);
  if (t.launchNs != kAbsent) attrInt(n, "rapid_launch_ns", t.launchNs);
  AttributeProto *pg = n.add_attr();
  pg->set_name("pg_name");
  pg->set_string_val(std::to_string(t.pgName));
}

llvm::Error writeEtFile(const std::string &path, size_t count, llvm::function_ref<void(size_t, Node &)> fill) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) return llvm::createStringError(std::make_error_code(std::errc::io_error), fmt::format("cannot write '{}'", path));
  bool ok;
  {
    google::protobuf::io::OstreamOutputStream out(&file);
    GlobalMetadata meta;
    meta.set_version("0.0.4");
    ok = google::protobuf::util::SerializeDelimitedToZeroCopyStream(meta, &out);
    Node n;
    for (size_t i = 0; i < count && ok; ++i) {
      n.Clear();
      fill(i, n);
      ok = google::protobuf::util::SerializeDelimitedToZeroCopyStream(n, &out);
    }
  } // the stream flushes into `file` here
  file.flush();
  if (!ok || !file) return llvm::createStringError(std::make_error_code(std::errc::io_error), fmt::format("cannot write '{}'", path));
  return llvm::Error::success();
}

llvm::Error writeRankGraph(const std::string &path, const RankGraph &g) {
  std::vector<uint32_t> deps;
  return writeEtFile(path, g.nodes().size(), [&](size_t i, Node &n) {
    TraceNode t = g.nodes()[i]; // a shared program's placeholders filled with this rank's values
    t.commSrc = g.src(t), t.commDst = g.dst(t), t.involvedDims = g.involved(t), t.pgName = g.group(t);
    deps.clear();
    for (uint32_t k = 0; k < t.depCount; ++k) deps.push_back(uint32_t(g.nodes()[g.deps()[t.depBegin + k]].id));
    writeNode(t, g.name(t), deps, n);
  });
}

} // namespace rapid::trace
