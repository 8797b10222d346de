//===- NetworkYaml.cpp - Astra-Sim's network YAML -------------------------===//

#include "rapid/Network/NetworkConfig.h"
#include "rapid/Network/TopologyKinds.h"

#include "DimChecks.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/YAMLParser.h"

#include <climits>
#include <cmath>
#include <fmt/format.h>
#include <map>

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
      return fileError(path, fmt::format("line {}: expected 'key: value' lines", lineOf(root)));
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
    return fileError(path, syntaxError);
  return out;
}

llvm::Expected<NetworkSpec> parseNetworkYaml(const std::string &path, llvm::StringRef text) {
  auto lists = readYamlLists(path, text);
  if (!lists)
    return lists.takeError();
  for (const char *key : {"topology", "npus_count", "bandwidth", "latency"}) {
    if (!lists->count(key))
      return fileError(path, fmt::format("missing '{}'", key));
    if (!(*lists)[key].problem.empty())
      return fileError(path, (*lists)[key].problem);
  }
  const auto &kinds = (*lists)["topology"].items;
  size_t n = kinds.size();
  for (const char *key : {"npus_count", "bandwidth", "latency"})
    if ((*lists)[key].items.size() != n)
      return fileError(path, fmt::format("line {}: '{}' needs {} entries, one per dimension",
                                         (*lists)[key].line, key, n));
  auto number = [&](const char *key, size_t i, double &out) {
    return !llvm::StringRef((*lists)[key].items[i].second).getAsDouble(out);
  };
  NetworkSpec spec;
  for (size_t i = 0; i < n; ++i) {
    DimSpec d;
    if (!parseDimKind(kinds[i].second, d.kind))
      return fileError(path, fmt::format("line {}: unknown topology '{}'", kinds[i].first,
                                         kinds[i].second));
    double size, bw, lat;
    if (!number("npus_count", i, size) || !number("bandwidth", i, bw) ||
        !number("latency", i, lat))
      return fileError(path, fmt::format("dimension {}: npus_count, bandwidth and latency "
                                         "must be numbers",
                                         i));
    if (!(size >= 1 && size <= double(INT_MAX) && size == std::floor(size)))
      return fileError(path, fmt::format("dimension {}: npus_count must be a whole number of ranks", i));
    d.bandwidth = BytesPerSecond(bw * double(1ull << 30));
    d.latency = Seconds(lat * 1e-9);
    if (auto err = setShape(path, int(i), {int64_t(size)}, d))
      return err;
    d.leafSize = d.podSize = d.size(); // a fat tree of one leaf
    if (auto err = checkDim(path, int(i), d))
      return err;
    spec.dims.push_back(d);
  }
  if (auto err = checkSize(path, spec))
    return err;
  return spec;
}

} // namespace rapid::net
