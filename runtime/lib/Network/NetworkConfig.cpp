//===- NetworkConfig.cpp - Our network JSON, read and written -------------===//

#include "rapid/Network/NetworkConfig.h"
#include "rapid/Network/FatTree.h"
#include "rapid/Network/TopologyKinds.h"

#include "DimChecks.h"

#include "llvm/Support/MemoryBuffer.h"

#include <climits>
#include <cmath>
#include <fmt/format.h>

namespace rapid::net {

/// Ranks are numbered in an int and simulated one state each: 2^20 is ten
/// times the largest clusters built to date, and bounds what a file makes us build.
constexpr int64_t kMaxRanks = int64_t(1) << 20;
/// The language's limit::kPacket: 1 MiB is over 100 times a 9000 B jumbo
/// frame and 16 times an IP datagram; a packet that large is a message.
constexpr double kMaxPacketBytes = double(1 << 20);

llvm::Expected<NetworkSpec> loadNetworkSpec(const std::string &path) {
  auto buf = readInputFile(path);
  if (!buf)
    return buf.takeError();
  llvm::StringRef p(path), text = (*buf)->getBuffer();
  if (p.ends_with(".yml") || p.ends_with(".yaml"))
    return parseNetworkYaml(path, text);
  return parseNetworkJson(path, text);
}

llvm::Expected<double> parseQuantity(llvm::StringRef text, Dim expected) {
  text = text.trim();
  size_t split = text.find_first_not_of("0123456789.eE+-");
  double value;
  if (split == 0 || text.substr(0, split).getAsDouble(value))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   fmt::format("'{}' is not a number with a unit", text.str()));
  std::string unit = text.substr(split).trim().str();
  auto info = lookupUnit(unit);
  if (!info || info->dim != expected)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        fmt::format("'{}' is not {}", text.str(), describeDim(expected)));
  return value * info->scale;
}

llvm::Error setShape(const std::string &path, int index, llvm::ArrayRef<int64_t> extents, DimSpec &d) {
  const TopologyKind &kind = topologyKind(d.kind);
  if (std::string problem = kind.checkExtents(extents); !problem.empty())
    return fileError(path, fmt::format("dimension {}: {}", index, problem));
  d.shape = kind.axes(extents);
  return llvm::Error::success();
}

llvm::Error checkDim(const std::string &path, int index, const DimSpec &d) {
  auto bad = [&](const std::string &what) {
    return fileError(path, fmt::format("dimension {} ({}): {}", index, dimKindName(d.kind), what));
  };
  if (d.kind == DimKind::FatTree)
    if (std::string problem = fatTreeProblem(d); !problem.empty())
      return bad(problem);
  // Finite and within what the picosecond clock can time: a byte on the
  // slowest link, a hop on the longest.
  if (!(d.bandwidth.value() >= 1 && d.bandwidth.value() <= 1e18))
    return bad(fmt::format("bandwidth must be from 1 B/s to 1 EB/s, not {} B/s", d.bandwidth.value()));
  if (!(d.latency.value() >= 0 && d.latency.value() <= 3600))
    return bad(fmt::format("latency must be from 0 to 1 hour, not {} s", d.latency.value()));
  if (!(d.packet.value() >= 0 && d.packet.value() <= kMaxPacketBytes))
    return bad(fmt::format("packet must be from 0 B (bit-level forwarding) to 1 MiB, not {} B",
                           d.packet.value()));
  return llvm::Error::success();
}

llvm::Error checkSize(const std::string &path, const NetworkSpec &spec) {
  double ranks = 1, links = estimatedLinks(spec);
  for (const DimSpec &d : spec.dims) ranks *= double(d.size());
  if (ranks > kMaxRanks)
    return fileError(path, fmt::format("{} ranks; at most {} are simulated", ranks, kMaxRanks));
  if (links > kMaxLinks)
    return fileError(path, fmt::format("about {} links; at most {} are built", links, kMaxLinks));
  return llvm::Error::success();
}

/// An optional quantity such as "packet": "9000 B"; 0 when absent.
static llvm::Expected<double> parseOptional(const llvm::json::Object &o, llvm::StringRef key, Dim dim,
                                            llvm::StringRef example) {
  const llvm::json::Value *v = o.get(key);
  if (!v)
    return 0.0;
  std::optional<llvm::StringRef> text = v->getAsString();
  if (!text)
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "'%s' is a string with a unit, e.g. \"%s\"",
                                   key.str().c_str(), example.str().c_str());
  return parseQuantity(*text, dim);
}

/// The keys that shape a FatTree. Leaf and pod sizes default to the whole
/// line (one leaf, one pod); a trunk not written is derived (0).
static llvm::Error parseFatTreeKeys(const llvm::json::Object &o, DimSpec &d) {
  auto error = [](std::string what) { return llvm::createStringError(llvm::inconvertibleErrorCode(), what); };
  for (llvm::StringRef key : {"leaf_size", "pod_size"})
    if (const auto *v = o.get(key); v && !v->getAsInteger())
      return error(fmt::format("'{}' must be a whole number", key.str()));
  for (llvm::StringRef key : {"oversubscription", "pod_oversubscription"})
    if (const auto *v = o.get(key); v && !v->getAsNumber())
      return error(fmt::format("'{}' must be a number", key.str()));
  auto trunk = parseOptional(o, "trunk", Dim::bandwidth(), "800 GB/s");
  if (!trunk)
    return trunk.takeError();
  auto podTrunk = parseOptional(o, "pod_trunk", Dim::bandwidth(), "800 GB/s");
  if (!podTrunk)
    return podTrunk.takeError();
  auto count = [&](llvm::StringRef key) {
    return int(std::clamp<int64_t>(o.getInteger(key).value_or(d.size()), INT_MIN, INT_MAX));
  };
  d.leafSize = count("leaf_size");
  d.podSize = count("pod_size");
  d.oversubscription = o.getNumber("oversubscription").value_or(1.0);
  d.podOversubscription = o.getNumber("pod_oversubscription").value_or(1.0);
  d.trunk = BytesPerSecond(*trunk);
  d.podTrunk = BytesPerSecond(*podTrunk);
  return llvm::Error::success();
}

/// Pods and trunks are a FatTree's; leaf_size and oversubscription have
/// always been read (and ignored) on any kind, so they still are.
static std::string misplacedFatTreeKey(const llvm::json::Object &o, DimKind kind) {
  if (kind != DimKind::FatTree)
    for (llvm::StringRef key : {"trunk", "pod_size", "pod_oversubscription", "pod_trunk"})
      if (o.get(key))
        return fmt::format("'{}' shapes a FatTree, not a {}", key.str(), dimKindName(kind));
  return "";
}

static llvm::Expected<DimSpec> parseJsonDim(const std::string &path, int index,
                                            const llvm::json::Object &o) {
  DimSpec d;
  auto bad = [&](const std::string &what) {
    return fileError(path, fmt::format("dimension {}: {}", index, what));
  };
  if (auto err = checkKeys(path, fmt::format("dimension {}", index), o,
                           {"name", "kind", "size", "shape", "bandwidth", "latency", "oversubscription", "leaf_size",
                            "trunk", "pod_size", "pod_oversubscription", "pod_trunk", "packet", "same_node"}))
    return err;
  auto kind = o.getString("kind");
  if (!kind || !parseDimKind(*kind, d.kind))
    return bad("'kind' must be one of " + topologyKindList());
  if (auto name = o.getString("name"))
    d.name = name->str();
  // Extents are whole numbers of ranks; each within the network's rank limit,
  // and so is their product, before anything is built from them.
  std::vector<const llvm::json::Value *> written;
  if (const auto *size = o.get("size"))
    written = {size};
  if (const auto *shape = o.getArray("shape")) {
    written.clear();
    for (const auto &v : *shape)
      written.push_back(&v);
  }
  std::vector<int64_t> extents;
  int64_t product = 1;
  for (const llvm::json::Value *v : written) {
    std::optional<int64_t> n = v->getAsInteger();
    if (!n || *n < 1 || *n > kMaxRanks || (product *= *n) > kMaxRanks)
      return bad(fmt::format("'size' and 'shape' are whole numbers of ranks from 1 to {} in all", kMaxRanks));
    extents.push_back(*n);
  }
  if (std::string problem = misplacedFatTreeKey(o, d.kind); !problem.empty())
    return bad(problem);
  auto bw = o.getString("bandwidth");
  auto lat = o.getString("latency");
  if (!bw || !lat)
    return bad("'bandwidth' and 'latency' are strings with units, e.g. \"50 GB/s\", \"500 ns\"");
  auto bwValue = parseQuantity(*bw, Dim::bandwidth());
  if (!bwValue)
    return bad(llvm::toString(bwValue.takeError()));
  auto latValue = parseQuantity(*lat, Dim::time());
  if (!latValue)
    return bad(llvm::toString(latValue.takeError()));
  d.bandwidth = BytesPerSecond(*bwValue);
  d.latency = Seconds(*latValue);
  auto packet = parseOptional(o, "packet", Dim::size(), "9000 B");
  if (!packet)
    return bad(llvm::toString(packet.takeError()));
  d.packet = Bytes(*packet);
  if (const llvm::json::Value *v = o.get("same_node")) {
    std::optional<bool> b = v->getAsBoolean();
    if (!b)
      return bad("'same_node' is true or false");
    if (*b && index == 0)
      return bad("'same_node' joins a dimension to the node of the ones before it; dimension 0 has none");
    d.sameNode = *b;
  }
  if (auto err = setShape(path, index, extents, d))
    return err;
  if (auto err = parseFatTreeKeys(o, d))
    return bad(llvm::toString(std::move(err)));
  if (auto err = checkDim(path, index, d))
    return err;
  return d;
}

llvm::Expected<NetworkSpec> parseNetworkJson(const std::string &path, llvm::StringRef text) {
  auto value = parseJsonText(path, text);
  if (!value)
    return value.takeError();
  if (const auto *top = value->getAsObject())
    if (auto err = checkKeys(path, "the network", *top, {"dimensions"}))
      return err;
  const auto *dims = value->getAsObject() ? value->getAsObject()->getArray("dimensions") : nullptr;
  if (!dims || dims->empty())
    return fileError(path, "expected {\"dimensions\": [ ... ]} with at least one dimension");
  NetworkSpec spec;
  for (size_t i = 0; i < dims->size(); ++i) {
    const auto *o = (*dims)[i].getAsObject();
    if (!o)
      return fileError(path, fmt::format("dimension {}: expected an object", i));
    auto d = parseJsonDim(path, int(i), *o);
    if (!d)
      return d.takeError();
    spec.dims.push_back(std::move(*d));
  }
  if (auto err = checkSize(path, spec))
    return err;
  return spec;
}

/// A fat tree's pods and given trunks, only where the tree has them, so a
/// two-level tree is written as before they existed.
static void writeFatTreeKeys(llvm::json::OStream &j, const DimSpec &d) {
  auto rawNumber = [&](llvm::StringRef key, double v) {
    j.attributeBegin(key);
    j.rawValue(formatNumber(v));
    j.attributeEnd();
  };
  if (d.trunk.value() > 0)
    j.attribute("trunk", formatNumber(d.trunk.value()) + " B/s");
  if (hasPods(d)) {
    j.attribute("pod_size", int64_t(d.podSize));
    rawNumber("pod_oversubscription", d.podOversubscription);
  }
  if (d.podTrunk.value() > 0)
    j.attribute("pod_trunk", formatNumber(d.podTrunk.value()) + " B/s");
}

std::string writeNetworkJson(const NetworkSpec &spec) {
  std::string out;
  llvm::raw_string_ostream os(out);
  llvm::json::OStream j(os, 2);
  j.object([&] {
    j.attributeArray("dimensions", [&] {
      for (const DimSpec &d : spec.dims) {
        const TopologyKind &kind = topologyKind(d.kind);
        std::vector<int64_t> extents = kind.written(d.shape);
        j.object([&] {
          if (!d.name.empty())
            j.attribute("name", d.name);
          j.attribute("kind", kind.name);
          if (kind.extents == 1)
            j.attribute("size", extents[0]);
          else
            j.attributeArray("shape", [&] {
              for (int64_t e : extents)
                j.value(e);
            });
          j.attribute("bandwidth", formatNumber(d.bandwidth.value()) + " B/s");
          j.attribute("latency", formatNumber(d.latency.value() * 1e9) + " ns");
          // json::Value prints 17 digits; the shortest form reads back the same.
          j.attributeBegin("oversubscription");
          j.rawValue(formatNumber(d.oversubscription));
          j.attributeEnd();
          if (d.leafSize != d.size())
            j.attribute("leaf_size", int64_t(d.leafSize));
          writeFatTreeKeys(j, d);
          if (d.packet.value() > 0)
            j.attribute("packet", formatNumber(d.packet.value()) + " B");
          if (d.sameNode)
            j.attribute("same_node", true);
        });
      }
    });
  });
  os << "\n";
  return out;
}

} // namespace rapid::net
