//===- FuzzConfig.cpp - libFuzzer target: rapid-sim's config readers ------===//
//
// The input is one file, read as each of rapid-sim's inputs in turn: a
// network (JSON and Astra-Sim YAML; a network that reads is built into a
// topology), a system config and a faults file (faults that read are applied
// to a small fixed topology) and communicator groups for 8 ranks. Every failure must be an llvm::Error.
//===----------------------------------------------------------------------===//
#include "FuzzCommon.h"

#include "rapid/Collectives/CommGroups.h"
#include "rapid/Engine/SystemConfig.h"
#include "rapid/Network/Faults.h"
#include "rapid/Network/NetworkConfig.h"
#include "rapid/Network/TopologyKinds.h"

using namespace rapid;

namespace {

void consume(llvm::Error e) { llvm::consumeError(std::move(e)); }

/// Building a topology is linear in its links, and the readers accept up to
/// net::kMaxLinks: 415,863 ranks on two rings build in 0.9 s in a release
/// rapid-sim but about 10 s under the sanitizers, past libFuzzer's -timeout
/// (the first hour-long runs found it, and a FullyConnected(2418)). Larger
/// networks are read and checked, not built.
constexpr double kMaxBuiltLinks = 1 << 19;

void topology(llvm::Expected<net::NetworkSpec> spec) {
  if (!spec)
    return consume(spec.takeError());
  if (net::estimatedLinks(*spec) > kMaxBuiltLinks)
    return;
  net::Topology topo(std::move(*spec));
  (void)topo.numRanks();
}

net::Topology smallTopology() {
  llvm::Expected<net::NetworkSpec> spec = net::parseNetworkJson(
      "fixed.json", R"({"dimensions": [{"kind": "Ring", "size": 4, "bandwidth": "10 GB/s", "latency": "1 us"},
                                      {"kind": "Switch", "size": 2, "bandwidth": "5 GB/s", "latency": "2 us"}]})");
  if (!spec)
    fuzz::fail("the fixed topology does not read", llvm::toString(spec.takeError()));
  return net::Topology(std::move(*spec));
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  topology(net::parseNetworkJson("fuzz.json", text));
  topology(net::parseNetworkYaml("fuzz.yml", text));
  if (llvm::Expected<engine::SystemConfig> sys = engine::parseSystemConfig("fuzz.json", text); !sys)
    consume(sys.takeError());
  static const std::string path = fuzz::workDir() + "/groups.json";
  fuzz::writeFile(path, text);
  if (llvm::Expected<coll::CommGroups> groups = coll::loadCommGroups(path, 8); !groups)
    consume(groups.takeError());
  llvm::Expected<std::vector<net::Fault>> faults = net::parseFaults("fuzz.json", text);
  if (!faults)
    return consume(faults.takeError()), 0;
  net::Topology topo = smallTopology();
  consume(net::applyFaults("fuzz.json", *faults, topo));
  return 0;
}
