//===- Dump.cpp - Print a Chakra trace as stable text or JSON -------------===//

#include "rapid/Trace/Dump.h"
#include "rapid/Trace/Attr.h"

#include "llvm/Support/JSON.h"

#include <algorithm>
#include <fmt/format.h>

namespace rapid::trace {

using ChakraProtoMsg::Node;
using AttrList = google::protobuf::RepeatedPtrField<AttributeProto>;

static std::vector<const AttributeProto *> sortedAttrs(const AttrList &attrs) {
  std::vector<const AttributeProto *> out;
  for (const auto &a : attrs)
    out.push_back(&a);
  std::stable_sort(out.begin(), out.end(),
                   [](auto *a, auto *b) { return a->name() < b->name(); });
  return out;
}

template <class Ids> static std::string idList(const Ids &ids) {
  std::string s = "[";
  for (int i = 0; i < ids.size(); ++i)
    s += fmt::format("{}{}", i ? "," : "", ids[i]);
  return s + "]";
}

static std::string attrsText(const AttrList &attrs) {
  std::string s;
  for (const auto *a : sortedAttrs(attrs))
    s += fmt::format(" {}:{}={}", a->name(), attrTypeName(*a), attrValueText(*a));
  return s;
}

static void printNodeText(const Node &n, llvm::raw_ostream &os) {
  os << fmt::format("node {} name=\"{}\" type={} data_deps={} ctrl_deps={}", n.id(), n.name(),
                    ChakraProtoMsg::NodeType_Name(n.type()), idList(n.data_deps()),
                    idList(n.ctrl_deps()));
  if (n.duration_micros())
    os << fmt::format(" duration_micros={}", n.duration_micros());
  os << attrsText(n.attr()) << "\n";
}

static llvm::json::Object attrsJson(const AttrList &attrs) {
  llvm::json::Object o;
  for (const auto *a : sortedAttrs(attrs))
    o[a->name()] = llvm::json::Object{{"type", attrTypeName(*a)}, {"value", attrValueJson(*a)}};
  return o;
}

template <class Ids> static llvm::json::Array idArray(const Ids &ids) {
  llvm::json::Array a;
  for (auto id : ids)
    a.push_back(uint64_t(id));
  return a;
}

static llvm::json::Value nodeJson(const Node &n) {
  return llvm::json::Object{{"id", uint64_t(n.id())},
                            {"name", n.name()},
                            {"type", ChakraProtoMsg::NodeType_Name(n.type())},
                            {"data_deps", idArray(n.data_deps())},
                            {"ctrl_deps", idArray(n.ctrl_deps())},
                            {"duration_micros", uint64_t(n.duration_micros())},
                            {"attr", attrsJson(n.attr())}};
}

llvm::Error dumpEtFile(const std::string &path, DumpFormat format, const ReadOptions &opts,
                       llvm::raw_ostream &os) {
  ChakraProtoMsg::GlobalMetadata meta;
  std::vector<Node> nodes;
  auto err = readEtFile(path, opts, meta, [&](Node &n) {
    nodes.push_back(n);
    return llvm::Error::success();
  });
  if (err)
    return err;
  if (format == DumpFormat::Text) {
    os << fmt::format("metadata version=\"{}\"", meta.version()) << attrsText(meta.attr()) << "\n";
    for (const auto &n : nodes)
      printNodeText(n, os);
    return llvm::Error::success();
  }
  llvm::json::Array arr;
  for (const auto &n : nodes)
    arr.push_back(nodeJson(n));
  llvm::json::Value doc = llvm::json::Object{
      {"metadata", llvm::json::Object{{"version", meta.version()}, {"attr", attrsJson(meta.attr())}}},
      {"nodes", std::move(arr)}};
  os << llvm::formatv("{0:2}", doc) << "\n";
  return llvm::Error::success();
}

} // namespace rapid::trace
