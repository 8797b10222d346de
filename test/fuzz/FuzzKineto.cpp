//===- FuzzKineto.cpp - libFuzzer target: Kineto reader + replay ----------===//
//
// The input is a trace set: an options byte, then the ranks' Kineto JSON
// texts separated by "\n--RANK--\n" (1 to 4 ranks; test/fuzz/seeds.py packs
// test/Profile's inputs this way). It goes through what `rapid-trace replay`
// runs: each text is read (parseKineto), the set is checked (makeTraceSet),
// replayed and reported (text, JSON, timeline). Every failure must be an
// llvm::Error; anything else is a finding.
//
// The options byte: bit 0 ranks start together, bit 1 kernels at half time,
// bit 2 JSON, bit 3 write the timeline, bit 4 the job weak-scaled to twice
// its ranks with the collectives on a network of them, bit 5 the last text is
// a host execution trace that fills in rank 0's shapes (HostTrace.h), bit 6
// (where bit 4 is clear) the job re-sharded to twice its ranks as a
// tensor-parallel what-if reads it (TensorParallel.h: every rank's roles,
// the world resized) with the collectives on a network of them.
//===----------------------------------------------------------------------===//
#include "FuzzCommon.h"

#include "rapid/Profile/Replay.h"
#include "rapid/Profile/TensorParallel.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/JSON.h"

#include <optional>

using namespace rapid;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint8_t flags = 0;
  llvm::SmallVector<llvm::StringRef, 4> parts;
  if (!fuzz::splitRanks(data, size, 4, flags, parts))
    return -1;
  std::optional<profile::HostTrace> host;
  if ((flags & 32) && parts.size() >= 2) {
    auto doc = llvm::json::parse(parts.pop_back_val());
    if (!doc)
      return llvm::consumeError(doc.takeError()), 0;
    if (!doc->getAsObject() || !profile::isHostTrace(*doc->getAsObject()))
      return 0;
    auto h = profile::readHostTrace("host.json", *doc->getAsObject());
    if (!h)
      return llvm::consumeError(h.takeError()), 0;
    host = std::move(*h);
  }
  std::vector<profile::KinetoTrace> traces;
  for (size_t r = 0; r < parts.size(); ++r) {
    if (r == 0 && host) {
      auto doc = llvm::json::parse(parts[r]);
      if (!doc)
        return llvm::consumeError(doc.takeError()), 0;
      if (!doc->getAsObject())
        return 0;
      profile::linkHostTrace(*host, *doc->getAsObject(), /*fill=*/true);
      auto t = profile::readKinetoDocument("rank0.json", *doc->getAsObject());
      if (!t)
        return llvm::consumeError(t.takeError()), 0;
      traces.push_back(std::move(*t));
      continue;
    }
    auto t = profile::parseKineto("rank" + std::to_string(r) + ".json", parts[r]);
    if (!t)
      return llvm::consumeError(t.takeError()), 0;
    traces.push_back(std::move(*t));
  }
  auto set = profile::makeTraceSet("fuzz", std::move(traces));
  if (!set)
    return llvm::consumeError(set.takeError()), 0;
  profile::ReplayOptions opts;
  opts.profiledStarts = !(flags & 1);
  opts.kernelScale = flags & 2 ? 0.5 : 1.0;
  if (flags & 16) {
    if (llvm::Error e = profile::scaleWorld(*set, 2 * int(set->ranks.size())))
      return llvm::consumeError(std::move(e)), 0;
  } else if (flags & 64) {
    // Alongside the data-parallel groups, where the profile names them so.
    std::vector<std::string> dataParallel;
    for (const auto &[key, desc] : profile::namedGroups(*set))
      if (desc == "DATA_PARALLEL_GROUP" && dataParallel.empty()) dataParallel.push_back(desc);
    int tp = 2 * int(set->ranks.size());
    if (llvm::Error e = profile::reshardWorld(*set, tp, dataParallel))
      return llvm::consumeError(std::move(e)), 0;
    for (profile::KinetoTrace &t : set->ranks) {
      if (auto resized = profile::reshardCollectives(t, set->profiledTensorParallel, tp); !resized)
        return llvm::consumeError(resized.takeError()), 0;
      auto roles = profile::tensorParallelRoles(t);
      if (!roles)
        return llvm::consumeError(roles.takeError()), 0;
      if (roles->device.size() != t.device.size() || roles->shard.size() != t.device.size())
        fuzz::fail("tensorParallelRoles", "not one role per device event");
    }
  }
  if (flags & (16 | 64)) {
    net::DimSpec dim;
    dim.kind = net::DimKind::FullyConnected;
    dim.shape = {int(set->ranks.size())};
    dim.bandwidth = BytesPerSecond(1e11);
    opts.network = net::NetworkSpec{{dim}};
  }
  auto r = profile::replay(*set, opts);
  if (!r)
    return llvm::consumeError(r.takeError()), 0;
  profile::printReplay(*set, *r, flags & 4, llvm::nulls());
  if (flags & 8)
    if (llvm::Error e = profile::writeReplayTimeline(fuzz::workDir() + "/timeline.json", *set, *r))
      fuzz::fail("the timeline could not be written", llvm::toString(std::move(e)));
  return 0;
}
