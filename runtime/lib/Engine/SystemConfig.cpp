//===- SystemConfig.cpp - Read and write the system JSON ------------------===//

#include "rapid/Engine/SystemConfig.h"
#include "rapid/Network/NetworkConfig.h"

#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>

namespace rapid::engine {

using net::configError;

namespace {

const char *const kAlgorithmKeys[] = {"all-reduce-implementation", "all-gather-implementation",
                                      "reduce-scatter-implementation", "all-to-all-implementation"};

llvm::Error readAlgorithms(const std::string &path, const llvm::json::Object &o, const char *key,
                           std::vector<coll::Algorithm> &out) {
  const auto *list = o.getArray(key);
  if (!list)
    return llvm::Error::success();
  for (const auto &v : *list) {
    coll::Algorithm a;
    auto name = v.getAsString();
    if (!name || !coll::parseAlgorithm(name->str(), a))
      return configError(path, fmt::format("'{}': unsupported algorithm '{}' (use ring, direct, "
                                           "halvingDoubling or doubleBinaryTree)",
                                           key, name ? name->str() : std::string("?")));
    out.push_back(a);
  }
  return llvm::Error::success();
}

llvm::Expected<SystemConfig> fromJson(const std::string &path, const llvm::json::Value &doc) {
  const auto *o = doc.getAsObject();
  if (!o)
    return configError(path, "expected a JSON object");
  SystemConfig cfg;
  cfg.splits = int(o->getInteger("preferred-dataset-splits").value_or(cfg.splits));
  cfg.activeChunks = int(o->getInteger("active-chunks-per-dimension").value_or(0));
  if (cfg.activeChunks < 0)
    return configError(path, "'active-chunks-per-dimension' must be >= 0");
  if (cfg.splits < 1)
    return configError(path, "'preferred-dataset-splits' must be >= 1");
  for (int k = 0; k < 4; ++k)
    if (auto err = readAlgorithms(path, *o, kAlgorithmKeys[k], cfg.algorithms.perKind[k]))
      return err;
  cfg.roofline = o->getInteger("roofline-enabled").value_or(0) != 0;
  cfg.peakFlopsPerNs = o->getNumber("peak-perf").value_or(0) * 1e12 / 1e9;
  cfg.memBytesPerNs = o->getNumber("local-mem-bw").value_or(0) * 1e9 / 1e9;
  if (cfg.roofline && (cfg.peakFlopsPerNs <= 0 || cfg.memBytesPerNs <= 0))
    return configError(path, "roofline needs positive 'peak-perf' and 'local-mem-bw'");
  return cfg;
}

} // namespace

llvm::Expected<SystemConfig> loadSystemConfig(const std::string &path) {
  auto doc = net::readJsonFile(path);
  if (!doc)
    return doc.takeError();
  return fromJson(path, *doc);
}

llvm::Expected<SystemConfig> parseSystemConfig(const std::string &path, llvm::StringRef text) {
  auto doc = llvm::json::parse(text);
  if (!doc)
    return configError(path, "invalid JSON: " + llvm::toString(doc.takeError()));
  return fromJson(path, *doc);
}

std::string writeSystemConfigJson(const SystemConfig &cfg) {
  std::string out;
  llvm::raw_string_ostream os(out);
  llvm::json::OStream j(os, 2);
  j.object([&] {
    j.attribute("preferred-dataset-splits", cfg.splits);
    j.attribute("active-chunks-per-dimension", cfg.activeChunks);
    for (int k = 0; k < 4; ++k)
      if (!cfg.algorithms.perKind[k].empty())
        j.attributeArray(kAlgorithmKeys[k], [&] {
          for (coll::Algorithm a : cfg.algorithms.perKind[k]) j.value(coll::algorithmName(a));
        });
    j.attribute("roofline-enabled", cfg.roofline ? 1 : 0);
    if (cfg.roofline) {
      j.attribute("peak-perf", cfg.peakFlopsPerNs * 1e9 / 1e12);
      j.attribute("local-mem-bw", cfg.memBytesPerNs);
    }
  });
  return out + "\n";
}

} // namespace rapid::engine
