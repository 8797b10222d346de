//===- Network.cpp - Link timing ------------------------------------------===//

#include "rapid/Network/Network.h"

#include "rapid/Support/SimTime.h"

#include <algorithm>
#include <cmath>

namespace rapid::net {

Network::Network(Topology &topo, NetMode mode, Switching switching)
    : topo_(topo), mode_(mode), switching_(switching), router_(topo),
      stats_(topo.links().size()) {
  for (size_t l = 0; l < stats_.size(); ++l)
    stats_[l].latencyPs = topo.links()[l].latencyPs;
}

void Network::retime(uint32_t l, double bytes) {
  LinkStats &m = stats_[l];
  m.memoBytes = bytes;
  m.memoSer = serializationPs(l, bytes);
  m.memoPacket = packetPs(l, bytes);
}

int64_t Network::serializationPs(uint32_t l, double bytes) const {
  if (bytes <= 0)
    return 0;
  // The small slack keeps exact quotients (1000 B at 1 B/ns) from rounding up
  // through floating-point noise.
  double ps = bytes * 1000.0 / topo_.links()[l].bytesPerNs;
  return std::max<int64_t>(1, timeFromPs(ps - 1e-6));
}

int64_t Network::packetPs(uint32_t l, double bytes) const {
  double packet = topo_.links()[l].packetBytes;
  return packet > 0 ? serializationPs(l, std::min(packet, bytes)) : 0;
}

int64_t Network::sendAlphaBeta(int64_t now, Route r, double bytes) {
  int64_t latency = 0, serSum = 0, packetSum = 0, restMax = 0;
  for (uint32_t hop = 0; hop < r.length; ++hop) {
    uint32_t l = router_.link(r, hop);
    auto [ser, packet] = serialize(l, bytes);
    stats_[l].busyPs = addTime(stats_[l].busyPs, ser);
    stats_[l].bytes += bytes;
    if (recordSpans_) spans_.push_back({l, now, addTime(now, ser), bytes}); // contention-free: starts at once
    latency = addTime(latency, topo_.links()[l].latencyPs);
    serSum = addTime(serSum, ser);
    packetSum = addTime(packetSum, packet);
    restMax = std::max(restMax, ser - packet);
  }
  // Cut-through on an idle route, as sendHop times it: every hop's latency
  // and first packet, and the rest of the message on the slowest hop.
  int64_t transfer = switching_ == Switching::CutThrough ? addTime(packetSum, restMax) : serSum;
  return addTime(addTime(now, latency), transfer);
}

} // namespace rapid::net
