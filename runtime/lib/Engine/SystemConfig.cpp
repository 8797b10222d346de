//===- SystemConfig.cpp - Read the system JSON ----------------------------===//

#include "rapid/Engine/SystemConfig.h"
#include "rapid/Network/NetworkConfig.h"

#include <fmt/format.h>

namespace rapid::engine {

using net::configError;

static llvm::Error readAlgorithms(const std::string &path, const llvm::json::Object &o,
                                  const char *key, std::vector<coll::Algorithm> &out) {
  const auto *list = o.getArray(key);
  if (!list)
    return llvm::Error::success();
  for (const auto &v : *list) {
    coll::Algorithm a;
    auto name = v.getAsString();
    if (!name || !coll::parseAlgorithm(name->str(), a))
      return configError(path, fmt::format("'{}': unsupported algorithm '{}' (use ring, direct or "
                                           "halvingDoubling)",
                                           key, name ? name->str() : std::string("?")));
    out.push_back(a);
  }
  return llvm::Error::success();
}

llvm::Expected<SystemConfig> loadSystemConfig(const std::string &path) {
  auto doc = net::readJsonFile(path);
  if (!doc)
    return doc.takeError();
  const auto *o = doc->getAsObject();
  if (!o)
    return configError(path, "expected a JSON object");
  SystemConfig cfg;
  cfg.splits = int(o->getInteger("preferred-dataset-splits").value_or(cfg.splits));
  cfg.activeChunks = int(o->getInteger("active-chunks-per-dimension").value_or(0));
  if (cfg.activeChunks < 0)
    return configError(path, "'active-chunks-per-dimension' must be >= 0");
  if (cfg.splits < 1)
    return configError(path, "'preferred-dataset-splits' must be >= 1");
  const char *keys[] = {"all-reduce-implementation", "all-gather-implementation",
                        "reduce-scatter-implementation", "all-to-all-implementation"};
  for (int k = 0; k < 4; ++k)
    if (auto err = readAlgorithms(path, *o, keys[k], cfg.algorithms.perKind[k]))
      return err;
  cfg.roofline = o->getInteger("roofline-enabled").value_or(0) != 0;
  cfg.peakFlopsPerNs = o->getNumber("peak-perf").value_or(0) * 1e12 / 1e9;
  cfg.memBytesPerNs = o->getNumber("local-mem-bw").value_or(0) * 1e9 / 1e9;
  if (cfg.roofline && (cfg.peakFlopsPerNs <= 0 || cfg.memBytesPerNs <= 0))
    return configError(path, "roofline needs positive 'peak-perf' and 'local-mem-bw'");
  return cfg;
}

} // namespace rapid::engine
