//===- SystemConfig.cpp - Read and write the system JSON ------------------===//

#include "rapid/Engine/SystemConfig.h"
#include "rapid/Network/ConfigInput.h"
#include "rapid/Network/NetworkConfig.h"

#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>

namespace rapid::engine {

namespace {

const char *const kAlgorithmKeys[] = {"all-reduce-implementation", "all-gather-implementation",
                                      "reduce-scatter-implementation", "all-to-all-implementation"};

llvm::Error readAlgorithms(const std::string &path, const llvm::json::Object &o, const char *key,
                           std::vector<coll::Algorithm> &out) {
  if (!o.get(key))
    return llvm::Error::success();
  const auto *list = o.getArray(key);
  if (!list)
    return fileError(path, fmt::format("'{}' must be a list of algorithm names, one per dimension", key));
  for (const auto &v : *list) {
    coll::Algorithm a;
    auto name = v.getAsString();
    if (!name || !coll::parseAlgorithm(name->str(), a))
      return fileError(path, fmt::format("'{}': unsupported algorithm '{}' (use ring, direct, "
                                         "halvingDoubling, doubleBinaryTree or oneShot)",
                                         key, name ? name->str() : std::string("?")));
    // Astra-Sim builds trees for all-reduce only and has no halving-doubling
    // or tree all-to-all: say so rather than run something else.
    llvm::StringRef k(key);
    bool allReduce = k == "all-reduce-implementation", allToAll = k == "all-to-all-implementation";
    if (((a == coll::Algorithm::DoubleBinaryTree || a == coll::Algorithm::OneShot) && !allReduce) ||
        (a == coll::Algorithm::HalvingDoubling && allToAll))
      return fileError(path, fmt::format("'{}': {} does not make {}s; use {}", key, coll::algorithmName(a),
                                         k.drop_back(strlen("-implementation")).str(),
                                         allToAll ? "ring or direct" : "ring, direct or halvingDoubling"));
    out.push_back(a);
  }
  return llvm::Error::success();
}

/// Astra-Sim system keys rapid-sim does not model: accepted and ignored, so
/// a stock Astra-Sim file reads; any other key is a typo and an error.
const llvm::StringRef kKnownKeys[] = {
    "preferred-dataset-splits", "active-chunks-per-dimension", "all-reduce-implementation",
    "all-gather-implementation", "reduce-scatter-implementation", "all-to-all-implementation",
    "roofline-enabled", "peak-perf", "local-mem-bw", "endpoint-delay", "local-reduction-delay",
    "model-shared-bus", "collective-protocol", "all-reduce-auto", "ll-max-bandwidth", "custom-all-reduce-max",
    "custom-all-reduce-max-two-ranks", "custom-all-reduce-one-shot-four-ranks", "custom-all-reduce-one-shot",
    "custom-all-reduce-start", "custom-all-reduce-start-per-peer", "custom-all-reduce-bandwidth",
    "nvls-bandwidth",
    // read by Astra-Sim, not by us (docs/runtime.md)
    "scheduling-policy", "collective-optimization", "intra-dimension-scheduling",
    "inter-dimension-scheduling", "boost-mode", "trace-enabled", "replay-only", "track-local-mem",
    "local-mem-trace-filename", "L", "o", "g", "G"};

/// The custom all-reduce's limits, in CustomAllReduce's order.
const char *const kCustomKeys[] = {"custom-all-reduce-max", "custom-all-reduce-max-two-ranks",
                                   "custom-all-reduce-one-shot-four-ranks", "custom-all-reduce-one-shot"};

/// The longest endpoint or reduction delay accepted, in ns: an hour, as for
/// link latencies; a finite value whose sums still fit the clock.
constexpr int64_t kMaxDelayNs = 3'600'000'000'000;

/// `key` as an integer from `lo` to `hi`, or `dflt` when absent.
llvm::Expected<int64_t> integer(const std::string &path, const llvm::json::Object &o, llvm::StringRef key,
                                int64_t dflt, int64_t lo, int64_t hi) {
  const llvm::json::Value *v = o.get(key);
  if (!v) return dflt;
  std::optional<int64_t> n = v->getAsInteger();
  if (!n || *n < lo || *n > hi)
    return fileError(path, fmt::format("'{}' must be a whole number from {} to {}", key.str(), lo, hi));
  return *n;
}

/// `key` as a finite number above 0 and below `hi`, or 0 when absent.
llvm::Expected<double> positive(const std::string &path, const llvm::json::Object &o, llvm::StringRef key,
                                double hi) {
  const llvm::json::Value *v = o.get(key);
  if (!v) return 0.0;
  std::optional<double> x = v->getAsNumber();
  if (!x || !(*x > 0 && *x <= hi))
    return fileError(path, fmt::format("'{}' must be a number above 0 and at most {:g}", key.str(), hi));
  return *x;
}

llvm::Expected<SystemConfig> fromJson(const std::string &path, const llvm::json::Value &doc) {
  const auto *o = doc.getAsObject();
  if (!o)
    return fileError(path, "expected a JSON object");
  if (auto err = net::checkKeys(path, "the system", *o, kKnownKeys))
    return err;
  SystemConfig cfg;
  // Every chunk of a collective is walked on its own: a million of them is
  // hours of simulation for nothing a few hundred would not show.
  auto splits = integer(path, *o, "preferred-dataset-splits", cfg.splits, 1, kMaxSplits);
  if (!splits) return splits.takeError();
  auto active = integer(path, *o, "active-chunks-per-dimension", 0, 0, kMaxSplits);
  if (!active) return active.takeError();
  // Astra-Sim's cycles are its CLOCK_PERIOD of 1 ns (system/Common.hh).
  auto endpoint = integer(path, *o, "endpoint-delay", 0, 0, kMaxDelayNs);
  if (!endpoint) return endpoint.takeError();
  auto sharedBus = integer(path, *o, "model-shared-bus", 0, 0, 1);
  if (!sharedBus) return sharedBus.takeError();
  auto per100B = integer(path, *o, "local-reduction-delay", cfg.reductionNsPer100B, 0, kMaxDelayNs / 100);
  if (!per100B) return per100B.takeError();
  auto roofline = integer(path, *o, "roofline-enabled", 0, 0, 1);
  if (!roofline) return roofline.takeError();
  // TFLOP/s and GB/s, finite and not absurd: 1e6 of either is 1000x any GPU.
  auto peak = positive(path, *o, "peak-perf", 1e6);
  if (!peak) return peak.takeError();
  auto memBw = positive(path, *o, "local-mem-bw", 1e6);
  if (!memBw) return memBw.takeError();
  auto llMax = positive(path, *o, "ll-max-bandwidth", 1e6);
  if (!llMax) return llMax.takeError();
  // Buffer sizes in bytes, at most 1 EiB as the language's sizes.
  double *custom[] = {&cfg.customAllReduce.max, &cfg.customAllReduce.maxTwoRanks,
                      &cfg.customAllReduce.oneShotFourRanks, &cfg.customAllReduce.oneShot};
  for (int k = 0; k < 4; ++k) {
    auto v = positive(path, *o, kCustomKeys[k], 0x1p60);
    if (!v) return v.takeError();
    *custom[k] = *v;
  }
  auto start = integer(path, *o, "custom-all-reduce-start", 0, 0, kMaxDelayNs);
  if (!start) return start.takeError();
  cfg.customAllReduce.startNs = double(*start);
  auto perPeer = integer(path, *o, "custom-all-reduce-start-per-peer", 0, 0, kMaxDelayNs);
  if (!perPeer) return perPeer.takeError();
  cfg.customAllReduce.startPerPeerNs = double(*perPeer);
  auto rate = positive(path, *o, "custom-all-reduce-bandwidth", 1e6); // GB/s, as ll-max-bandwidth
  if (!rate) return rate.takeError();
  cfg.customAllReduce.bytesPerNs = *rate;
  auto nvls = positive(path, *o, "nvls-bandwidth", 1e6); // GB/s, as ll-max-bandwidth
  if (!nvls) return nvls.takeError();
  cfg.nvlsBytesPerNs = *nvls;
  cfg.splits = int(*splits);
  // As many slots as a collective can have chunks is no limit (how the
  // writer says it to Astra-Sim).
  cfg.activeChunks = *active == kMaxSplits ? 0 : int(*active);
  cfg.endpointDelayNs = *endpoint;
  cfg.sharedBus = *sharedBus != 0;
  cfg.reductionNsPer100B = *per100B;
  cfg.roofline = *roofline != 0;
  cfg.peakFlopsPerNs = *peak * 1e12 / 1e9;
  cfg.memBytesPerNs = *memBw * 1e9 / 1e9;
  cfg.reduceMemBytesPerNs = cfg.memBytesPerNs; // Astra-Sim's GB here is 10^9 B (Sys.cc)
  cfg.llMaxBytesPerNs = *llMax;
  if (cfg.roofline && !(cfg.peakFlopsPerNs > 0 && cfg.memBytesPerNs > 0))
    return fileError(path, "roofline needs 'peak-perf' and 'local-mem-bw'");
  for (int k = 0; k < 4; ++k)
    if (auto err = readAlgorithms(path, *o, kAlgorithmKeys[k], cfg.algorithms.perKind[k]))
      return err;
  if (const llvm::json::Value *v = o->get("collective-protocol")) {
    std::optional<llvm::StringRef> name = v->getAsString();
    std::optional<coll::Protocol> p = name ? coll::parseProtocol(*name) : std::nullopt;
    if (!p)
      return fileError(path, fmt::format("'collective-protocol': expected none, LL, LL128, Simple or auto, found {}",
                                         name ? "'" + name->str() + "'" : std::string("a non-string")));
    cfg.protocol = *p;
  }
  if (const llvm::json::Value *v = o->get("all-reduce-auto")) {
    const llvm::json::Array *dims = v->getAsArray();
    if (!dims) return fileError(path, "'all-reduce-auto' must be a list of dimension indices");
    for (const llvm::json::Value &d : *dims) {
      std::optional<int64_t> i = d.getAsInteger();
      if (!i || *i < 0 || *i >= 32)
        return fileError(path, "'all-reduce-auto': each entry is a dimension index from 0 to 31");
      cfg.allReduceAuto |= 1u << *i;
    }
  }
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
  auto doc = net::parseJsonText(path, text);
  if (!doc)
    return doc.takeError();
  return fromJson(path, *doc);
}

std::string writeSystemConfigJson(const SystemConfig &cfg) {
  std::string out;
  llvm::raw_string_ostream os(out);
  llvm::json::OStream j(os, 2);
  j.object([&] {
    j.attribute("preferred-dataset-splits", cfg.splits);
    // No limit is written as the most chunks there can be: Astra-Sim starts
    // ceil(value / queues) chunks per queue, so 0 would start none.
    j.attribute("active-chunks-per-dimension", cfg.activeChunks ? cfg.activeChunks : kMaxSplits);
    j.attribute("endpoint-delay", cfg.endpointDelayNs);
    if (cfg.sharedBus) {
      j.attribute("model-shared-bus", 1);
      j.attribute("local-reduction-delay", cfg.reductionNsPer100B);
    }
    for (int k = 0; k < 4; ++k)
      if (!cfg.algorithms.perKind[k].empty())
        j.attributeArray(kAlgorithmKeys[k], [&] {
          for (coll::Algorithm a : cfg.algorithms.perKind[k]) j.value(coll::algorithmName(a));
        });
    if (cfg.protocol != coll::Protocol::None)
      j.attribute("collective-protocol", coll::protocolName(cfg.protocol));
    if (cfg.allReduceAuto)
      j.attributeArray("all-reduce-auto", [&] {
        for (int d = 0; d < 32; ++d)
          if (cfg.allReduceAuto >> d & 1) j.value(d);
      });
    if (cfg.llMaxBytesPerNs > 0)
      j.attribute("ll-max-bandwidth", cfg.llMaxBytesPerNs);
    const coll::CustomAllReduce &c = cfg.customAllReduce;
    const double custom[] = {c.max, c.maxTwoRanks, c.oneShotFourRanks, c.oneShot};
    for (int k = 0; k < 4; ++k)
      if (c.any() && custom[k] > 0) j.attribute(kCustomKeys[k], custom[k]);
    if (c.any() && c.startNs > 0) j.attribute("custom-all-reduce-start", int64_t(c.startNs));
    if (c.any() && c.startPerPeerNs > 0) j.attribute("custom-all-reduce-start-per-peer", int64_t(c.startPerPeerNs));
    if (c.any() && c.bytesPerNs > 0) j.attribute("custom-all-reduce-bandwidth", c.bytesPerNs);
    if (cfg.nvlsBytesPerNs > 0) j.attribute("nvls-bandwidth", cfg.nvlsBytesPerNs);
    j.attribute("roofline-enabled", cfg.roofline ? 1 : 0);
    if (cfg.roofline)
      j.attribute("peak-perf", cfg.peakFlopsPerNs * 1e9 / 1e12);
    // One key for both uses, as in Astra-Sim: written when either needs it.
    if (cfg.roofline || cfg.reduceMemBytesPerNs > 0)
      j.attribute("local-mem-bw", cfg.reduceMemBytesPerNs > 0 ? cfg.reduceMemBytesPerNs : cfg.memBytesPerNs);
  });
  return out + "\n";
}

} // namespace rapid::engine
