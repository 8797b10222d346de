//===- NetworkConfig.cpp - Our JSON and Astra-Sim's YAML ------------------===//

#include "rapid/Network/NetworkConfig.h"
#include "rapid/Network/TopologyKinds.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/YAMLParser.h"

#include <fmt/format.h>
#include <cmath>
#include <map>

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

/// The axes from what the file wrote, once the kind accepts it.
static llvm::Error setShape(const std::string &path, int index, llvm::ArrayRef<int64_t> extents,
                            DimSpec &d) {
  const TopologyKind &kind = topologyKind(d.kind);
  if (std::string problem = kind.checkExtents(extents); !problem.empty())
    return configError(path, fmt::format("dimension {}: {}", index, problem));
  d.shape = kind.axes(extents);
  return llvm::Error::success();
}

static llvm::Error checkDim(const std::string &path, int index, const DimSpec &d) {
  auto bad = [&](const std::string &what) {
    return configError(path, fmt::format("dimension {} ({}): {}", index, dimKindName(d.kind), what));
  };
  if (d.kind == DimKind::FatTree && !(d.leafSize >= 1 && d.leafSize <= d.size() && d.oversubscription > 0 &&
                                       d.oversubscription <= 1e6))
    return bad("needs leaf_size from 1 to the dimension's size and oversubscription above 0 and at most 1e6");
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

/// What a whole network may hold: ranks numbered in an int, and few enough
/// links to build (a FullyConnected dimension has n^2 of them).
static llvm::Error checkSize(const std::string &path, const NetworkSpec &spec) {
  double ranks = 1, links = estimatedLinks(spec);
  for (const DimSpec &d : spec.dims) ranks *= double(d.size());
  if (ranks > kMaxRanks)
    return configError(path, fmt::format("{} ranks; at most {} are simulated", ranks, kMaxRanks));
  if (links > kMaxLinks)
    return configError(path, fmt::format("about {} links; at most {} are built", links, kMaxLinks));
  return llvm::Error::success();
}

/// A dimension's optional "packet": "9000 B"; 0 when absent.
static llvm::Expected<Bytes> parsePacket(const llvm::json::Object &o) {
  const llvm::json::Value *packet = o.get("packet");
  if (!packet)
    return Bytes(0);
  std::optional<llvm::StringRef> text = packet->getAsString();
  if (!text)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "'packet' is a string with a unit, e.g. \"9000 B\"");
  auto bytes = parseQuantity(*text, Dim::size());
  if (!bytes)
    return bytes.takeError();
  return Bytes(*bytes);
}

static llvm::Expected<DimSpec> parseJsonDim(const std::string &path, int index,
                                            const llvm::json::Object &o) {
  DimSpec d;
  auto bad = [&](const std::string &what) {
    return configError(path, fmt::format("dimension {}: {}", index, what));
  };
  if (auto err = checkKeys(path, fmt::format("dimension {}", index), o,
                           {"name", "kind", "size", "shape", "bandwidth", "latency", "oversubscription",
                            "leaf_size", "packet"}))
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
  for (llvm::StringRef key : {"leaf_size", "oversubscription"})
    if (const auto *v = o.get(key); v && !v->getAsNumber())
      return bad(fmt::format("'{}' must be a number", key.str()));
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
  auto packet = parsePacket(o);
  if (!packet)
    return bad(llvm::toString(packet.takeError()));
  d.packet = *packet;
  if (auto err = setShape(path, index, extents, d))
    return err;
  d.leafSize = int(std::clamp<int64_t>(o.getInteger("leaf_size").value_or(d.size()), 0, INT_MAX));
  d.oversubscription = o.getNumber("oversubscription").value_or(1.0);
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
    return configError(path, "expected {\"dimensions\": [ ... ]} with at least one dimension");
  NetworkSpec spec;
  for (size_t i = 0; i < dims->size(); ++i) {
    const auto *o = (*dims)[i].getAsObject();
    if (!o)
      return configError(path, fmt::format("dimension {}: expected an object", i));
    auto d = parseJsonDim(path, int(i), *o);
    if (!d)
      return d.takeError();
    spec.dims.push_back(std::move(*d));
  }
  if (auto err = checkSize(path, spec))
    return err;
  return spec;
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
          if (d.packet.value() > 0)
            j.attribute("packet", formatNumber(d.packet.value()) + " B");
        });
      }
    });
  });
  os << "\n";
  return out;
}

} // namespace rapid::net

namespace rapid::net {

namespace yaml = llvm::yaml;

/// A key's items, each with its line; `key: a` is a list of one. Values that
/// are neither (nested maps) are kept as a problem, reported only if the key
/// is read, so keys we do not model may hold anything.
struct YamlList {
  unsigned line = 0;
  std::vector<std::pair<unsigned, std::string>> items;
  std::string problem;
};
using YamlMap = std::map<std::string, YamlList>;

/// The top-level `key: value` and `key: [list]` entries of every document;
/// what Astra-Sim's network files hold. Syntax errors name their line.
static llvm::Expected<YamlMap> readYamlLists(const std::string &path, llvm::StringRef text) {
  llvm::SourceMgr sm;
  std::string syntaxError; // the parser reports through the SourceMgr; the first one wins
  sm.setDiagHandler(
      [](const llvm::SMDiagnostic &d, void *context) {
        auto &out = *static_cast<std::string *>(context);
        if (out.empty())
          out = fmt::format("line {}: {}", d.getLineNo(), d.getMessage().str());
      },
      &syntaxError);
  yaml::Stream stream(text, sm);
  // A node the YAML parser gave up on may have no position (found by
  // fuzz-config); SourceMgr must not be asked for it. Its syntax error,
  // which has a line, is what gets reported then.
  auto lineOf = [&](yaml::Node *n) {
    llvm::SMLoc at = n->getSourceRange().Start;
    return at.isValid() && sm.FindBufferContainingLoc(at) ? unsigned(sm.getLineAndColumn(at).first) : 0u;
  };
  auto scalar = [](yaml::Node *n) {
    llvm::SmallString<32> storage;
    return llvm::cast<yaml::ScalarNode>(n)->getValue(storage).str();
  };
  YamlMap out;
  for (yaml::Document &doc : stream) {
    yaml::Node *root = doc.getRoot();
    auto *map = llvm::dyn_cast_or_null<yaml::MappingNode>(root);
    if (!map && root && !llvm::isa<yaml::NullNode>(root) && syntaxError.empty())
      return configError(path, fmt::format("line {}: expected 'key: value' lines", lineOf(root)));
    if (!map)
      continue;
    for (yaml::KeyValueNode &kv : *map) {
      auto *key = llvm::dyn_cast_or_null<yaml::ScalarNode>(kv.getKey());
      yaml::Node *value = kv.getValue();
      if (!key || !value)
        continue; // a syntax error, already reported
      YamlList list{lineOf(key), {}, {}};
      if (llvm::isa<yaml::ScalarNode>(value)) {
        list.items.push_back({lineOf(value), scalar(value)});
      } else if (auto *seq = llvm::dyn_cast<yaml::SequenceNode>(value)) {
        for (yaml::Node &item : *seq)
          if (llvm::isa<yaml::ScalarNode>(item))
            list.items.push_back({lineOf(&item), scalar(&item)});
          else if (list.problem.empty())
            list.problem = fmt::format("line {}: '{}' must list plain values", lineOf(&item),
                                       scalar(key));
      } else if (!llvm::isa<yaml::NullNode>(value)) {
        list.problem = fmt::format("line {}: '{}' must be a value or a list of values",
                                   lineOf(value), scalar(key));
      }
      out[scalar(key)] = std::move(list);
    }
  }
  if (!syntaxError.empty())
    return configError(path, syntaxError);
  return out;
}

llvm::Expected<NetworkSpec> parseNetworkYaml(const std::string &path, llvm::StringRef text) {
  auto lists = readYamlLists(path, text);
  if (!lists)
    return lists.takeError();
  for (const char *key : {"topology", "npus_count", "bandwidth", "latency"}) {
    if (!lists->count(key))
      return configError(path, fmt::format("missing '{}'", key));
    if (!(*lists)[key].problem.empty())
      return configError(path, (*lists)[key].problem);
  }
  const auto &kinds = (*lists)["topology"].items;
  size_t n = kinds.size();
  for (const char *key : {"npus_count", "bandwidth", "latency"})
    if ((*lists)[key].items.size() != n)
      return configError(path, fmt::format("line {}: '{}' needs {} entries, one per dimension",
                                           (*lists)[key].line, key, n));
  auto number = [&](const char *key, size_t i, double &out) {
    return !llvm::StringRef((*lists)[key].items[i].second).getAsDouble(out);
  };
  NetworkSpec spec;
  for (size_t i = 0; i < n; ++i) {
    DimSpec d;
    if (!parseDimKind(kinds[i].second, d.kind))
      return configError(path, fmt::format("line {}: unknown topology '{}'", kinds[i].first,
                                           kinds[i].second));
    double size, bw, lat;
    if (!number("npus_count", i, size) || !number("bandwidth", i, bw) ||
        !number("latency", i, lat))
      return configError(path, fmt::format("dimension {}: npus_count, bandwidth and latency "
                                           "must be numbers",
                                           i));
    if (!(size >= 1 && size <= double(INT_MAX) && size == std::floor(size)))
      return configError(path, fmt::format("dimension {}: npus_count must be a whole number of ranks", i));
    d.bandwidth = BytesPerSecond(bw * double(1ull << 30));
    d.latency = Seconds(lat * 1e-9);
    if (auto err = setShape(path, int(i), {int64_t(size)}, d))
      return err;
    d.leafSize = d.size();
    if (auto err = checkDim(path, int(i), d))
      return err;
    spec.dims.push_back(d);
  }
  if (auto err = checkSize(path, spec))
    return err;
  return spec;
}

} // namespace rapid::net
