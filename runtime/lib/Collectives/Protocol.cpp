//===- Protocol.cpp - NCCL's protocols as costs on a plan -----------------===//
//
// The figures are NCCL's own model of its ring (src/graph/tuning.cc, NCCL
// 2.19 to 2.28, unchanged across those releases): base latencies 6.6 / 14.0
// / 8.4 us for LL / LL128 / Simple, and per-step latencies over NVLink of
// 0.6 / 1.9 / 3.4 us. NVLink's is the fastest fabric NCCL tables, so its
// per-step figure is the protocol's own handshake; a slower fabric's extra
// latency is the simulated path's (the step cost is a floor, not an
// addition). Bandwidth: NCCL models LL at half the bus bandwidth and LL128
// at 0.92 of it (120 of every 128 bytes, plus flag polling), and caps LL
// per GPU architecture (llMaxBws: 39 GB/s of bus bandwidth on Volta, 87.7
// on Ampere, 141 on Hopper in one node), which the system's
// ll-max-bandwidth carries; NCCL's per-channel LL128 caps are not modelled.
// NVLS (NVLink SHARP) has one protocol, Simple, and its own latency in that
// model: 25 us over NVLink for the whole operation, no base (hwLat's NVLS
// entry; nvlsCost).
//===----------------------------------------------------------------------===//

#include "rapid/Collectives/Protocol.h"

#include "llvm/ADT/StringRef.h"

#include <algorithm>
#include <utility>

namespace rapid::coll {

static const char *const kNames[] = {"none", "LL", "LL128", "Simple", "auto"};

std::optional<Protocol> parseProtocol(std::string_view name) {
  for (int i = 0; i < 5; ++i)
    if (llvm::StringRef(kNames[i]).equals_insensitive(llvm::StringRef(name.data(), name.size()))) return Protocol(i);
  return std::nullopt;
}

const char *protocolName(Protocol p) { return kNames[int(p)]; }

ProtocolCost protocolCost(Protocol p, double bytesPerNs, double llMaxBytesPerNs) {
  switch (p) {
  case Protocol::LL:
    return {6600, 600, llMaxBytesPerNs > 0 && bytesPerNs > 0 ? std::max(2.0, bytesPerNs / llMaxBytesPerNs) : 2.0};
  case Protocol::LL128: return {14000, 1900, 1 / 0.92};
  case Protocol::Simple: return {8400, 3400, 1.0};
  case Protocol::None:
  case Protocol::Auto: break;
  }
  return {};
}

/// Messages a member sends in step `st` of a phase of p positions (a tree
/// member sends to its parent or its children: at most two).
static double messagesPerStep(const Step &st, int p) {
  switch (st.pattern) {
  case Pattern::All: return p - 1;
  case Pattern::TreeGather: return 0;
  case Pattern::TreeDown: return 2;
  default: return 1;
  }
}

/// Bytes a member sends over the plan's steps, all chunks.
static double wireBytes(const Plan &plan, uint32_t chunks) {
  double bytes = 0;
  for (const Step &st : plan.steps)
    bytes += st.bytes * messagesPerStep(st, plan.phases[st.phase].size) * chunks;
  return bytes;
}

/// The protocol `ns` estimates least (ties to the first: LL, LL128,
/// Simple), with its estimate.
template <class F> static std::pair<Protocol, double> cheapest(F ns) {
  std::pair<Protocol, double> best{Protocol::LL, ns(Protocol::LL)};
  for (Protocol q : {Protocol::LL128, Protocol::Simple})
    if (double t = ns(q); t < best.second) best = {q, t};
  return best;
}

Protocol chooseProtocol(Protocol p, const Plan &plan, uint32_t chunks, double bytesPerNs, double llMaxBytesPerNs) {
  if (p != Protocol::Auto) return p;
  double wire = wireBytes(plan, chunks), steps = double(plan.steps.size());
  return cheapest([&](Protocol q) {
           ProtocolCost c = protocolCost(q, bytesPerNs, llMaxBytesPerNs);
           return c.baseNs + steps * c.stepNs + (bytesPerNs > 0 ? wire * c.wireScale / bytesPerNs : 0);
         })
      .first;
}

/// Levels from a tree's root to its deepest leaf over p positions (heap
/// layout: the parent of i is (i - 1) / 2).
static int treeDepth(int p) {
  int depth = 0;
  for (int last = p - 1; last > 0; last = (last - 1) / 2) ++depth;
  return depth;
}

ProtocolCost nvlsCost() { return {0, 25000, 1.0}; }

double estimateNs(Protocol p, const Plan &plan, uint32_t chunks, double bytesPerNs, double llMaxBytesPerNs,
                  double hopNs) {
  if (p == Protocol::Auto)
    return cheapest([&](Protocol q) { return estimateNs(q, plan, chunks, bytesPerNs, llMaxBytesPerNs, hopNs); })
        .second;
  return estimateNs(protocolCost(p, bytesPerNs, llMaxBytesPerNs), plan, chunks, bytesPerNs, hopNs);
}

double estimateNs(const ProtocolCost &c, const Plan &plan, uint32_t chunks, double bytesPerNs, double hopNs) {
  double perByte = bytesPerNs > 0 ? c.wireScale / bytesPerNs : 0;
  double step = std::max(c.stepNs, hopNs), ns = c.baseNs;
  for (const Step &st : plan.steps) {
    int size = plan.phases[st.phase].size;
    if (st.pattern == Pattern::TreeGather) continue;
    bool tree = st.pattern == Pattern::TreeUp || st.pattern == Pattern::TreeDown;
    // A level passes its whole chunk on before the next level starts.
    ns += tree ? treeDepth(size) * (step + st.bytes * messagesPerStep(st, size) * perByte) : step;
  }
  return ns + wireBytes(plan, chunks) * perByte;
}

} // namespace rapid::coll
