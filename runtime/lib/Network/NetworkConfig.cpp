//===- NetworkConfig.cpp - Our JSON and Astra-Sim's YAML ------------------===//

#include "rapid/Network/NetworkConfig.h"
#include "rapid/Network/TopologyKinds.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"

#include <fmt/format.h>
#include <map>

namespace rapid::net {

llvm::Error configError(const std::string &path, const std::string &what) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), fmt::format("{}: {}", path, what));
}

static llvm::Expected<std::string> readText(const std::string &path) {
  auto buf = llvm::MemoryBuffer::getFile(path);
  if (!buf)
    return configError(path, "cannot read: " + buf.getError().message());
  return (*buf)->getBuffer().str();
}

llvm::Expected<llvm::json::Value> readJsonFile(const std::string &path) {
  auto text = readText(path);
  if (!text)
    return text.takeError();
  auto value = llvm::json::parse(*text);
  if (!value)
    return configError(path, "invalid JSON: " + llvm::toString(value.takeError()));
  return std::move(*value);
}

llvm::Expected<NetworkSpec> loadNetworkSpec(const std::string &path) {
  auto text = readText(path);
  if (!text)
    return text.takeError();
  llvm::StringRef p(path);
  if (p.ends_with(".yml") || p.ends_with(".yaml"))
    return parseNetworkYaml(path, *text);
  return parseNetworkJson(path, *text);
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
  if (d.kind == DimKind::FatTree && (d.leafSize < 1 || d.oversubscription <= 0))
    return bad("needs leaf_size >= 1 and oversubscription > 0");
  if (d.bandwidth.value() <= 0)
    return bad("bandwidth must be positive");
  if (d.latency.value() < 0)
    return bad("latency must not be negative");
  return llvm::Error::success();
}

static llvm::Expected<DimSpec> parseJsonDim(const std::string &path, int index,
                                            const llvm::json::Object &o) {
  DimSpec d;
  auto bad = [&](const std::string &what) {
    return configError(path, fmt::format("dimension {}: {}", index, what));
  };
  auto kind = o.getString("kind");
  if (!kind || !parseDimKind(*kind, d.kind))
    return bad("'kind' must be one of " + topologyKindList());
  if (auto name = o.getString("name"))
    d.name = name->str();
  std::vector<int64_t> extents;
  if (auto size = o.getInteger("size"))
    extents = {*size};
  if (const auto *shape = o.getArray("shape")) {
    extents.clear();
    for (const auto &v : *shape)
      extents.push_back(v.getAsInteger().value_or(0));
  }
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
  if (auto err = setShape(path, index, extents, d))
    return err;
  d.leafSize = int(o.getInteger("leaf_size").value_or(d.size()));
  d.oversubscription = o.getNumber("oversubscription").value_or(1.0);
  if (auto err = checkDim(path, index, d))
    return err;
  return d;
}

llvm::Expected<NetworkSpec> parseNetworkJson(const std::string &path, llvm::StringRef text) {
  auto value = llvm::json::parse(text);
  if (!value)
    return configError(path, "invalid JSON: " + llvm::toString(value.takeError()));
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
        });
      }
    });
  });
  os << "\n";
  return out;
}

} // namespace rapid::net

namespace rapid::net {

/// `key: [a, b]`, `key: a`, or `key:` followed by `- a` lines, '#'
/// comments; the subset Astra-Sim's network files use. Returns key -> items
/// with their line numbers.
using YamlMap = std::map<std::string, std::pair<unsigned, std::vector<std::string>>>;

static llvm::Expected<YamlMap> parseFlatYaml(const std::string &path, llvm::StringRef text) {
  YamlMap out;
  llvm::SmallVector<llvm::StringRef> lines;
  text.split(lines, '\n');
  std::vector<std::string> *block = nullptr; // the key a `- item` line extends
  for (unsigned i = 0; i < lines.size(); ++i) {
    llvm::StringRef line = lines[i].split('#').first.trim();
    if (line.empty() || line == "---")
      continue;
    if (line.consume_front("- ") && block) {
      block->push_back(line.trim().trim('"').trim('\'').str());
      continue;
    }
    auto [key, value] = line.split(':');
    value = value.trim();
    if (key == line)
      return configError(path, fmt::format("line {}: expected 'key: value'", i + 1));
    if (value.consume_front("[") && !value.consume_back("]"))
      return configError(path, fmt::format("line {}: unterminated '['", i + 1));
    llvm::SmallVector<llvm::StringRef> items;
    value.split(items, ',', -1, false);
    auto &entry = out[key.trim().str()];
    entry.first = i + 1;
    block = value.empty() ? &entry.second : nullptr;
    for (auto item : items)
      if (!item.trim().empty())
        entry.second.push_back(item.trim().trim('"').trim('\'').str());
  }
  return out;
}

llvm::Expected<NetworkSpec> parseNetworkYaml(const std::string &path, llvm::StringRef text) {
  auto yaml = parseFlatYaml(path, text);
  if (!yaml)
    return yaml.takeError();
  for (const char *key : {"topology", "npus_count", "bandwidth", "latency"})
    if (!yaml->count(key))
      return configError(path, fmt::format("missing '{}'", key));
  auto &[topoLine, kinds] = (*yaml)["topology"];
  size_t n = kinds.size();
  for (const char *key : {"npus_count", "bandwidth", "latency"})
    if ((*yaml)[key].second.size() != n)
      return configError(path, fmt::format("line {}: '{}' needs {} entries, one per dimension",
                                           (*yaml)[key].first, key, n));
  NetworkSpec spec;
  for (size_t i = 0; i < n; ++i) {
    DimSpec d;
    if (!parseDimKind(kinds[i], d.kind))
      return configError(path, fmt::format("line {}: unknown topology '{}'", topoLine, kinds[i]));
    double size, bw, lat;
    if (llvm::StringRef((*yaml)["npus_count"].second[i]).getAsDouble(size) ||
        llvm::StringRef((*yaml)["bandwidth"].second[i]).getAsDouble(bw) ||
        llvm::StringRef((*yaml)["latency"].second[i]).getAsDouble(lat))
      return configError(path, fmt::format("dimension {}: npus_count, bandwidth and latency "
                                           "must be numbers",
                                           i));
    d.bandwidth = BytesPerSecond(bw * double(1ull << 30));
    d.latency = Seconds(lat * 1e-9);
    if (auto err = setShape(path, int(i), {int64_t(size)}, d))
      return err;
    d.leafSize = d.size();
    if (auto err = checkDim(path, int(i), d))
      return err;
    spec.dims.push_back(d);
  }
  return spec;
}

} // namespace rapid::net
