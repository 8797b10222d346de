//===- Network.cpp - Link timing ------------------------------------------===//

#include "rapid/Network/Network.h"

#include <algorithm>
#include <cmath>

namespace rapid::net {

Network::Network(Topology &topo, NetMode mode)
    : topo_(topo), mode_(mode), router_(topo), stats_(topo.links().size()) {}

int64_t Network::serializationPs(uint32_t l, double bytes) const {
  if (bytes <= 0)
    return 0;
  // The small slack keeps exact quotients (1000 B at 1 B/ns) from rounding up
  // through floating-point noise.
  double ps = bytes * 1000.0 / topo_.links()[l].bytesPerNs;
  return std::max<int64_t>(1, int64_t(std::ceil(ps - 1e-6)));
}

int64_t Network::sendHop(int64_t now, uint32_t l, double bytes) {
  LinkStats &s = stats_[l];
  int64_t start = std::max(now, s.freeAtPs);
  int64_t ser = serializationPs(l, bytes);
  s.freeAtPs = start + ser;
  s.busyPs += ser;
  s.bytes += bytes;
  return start + ser + topo_.links()[l].latencyPs;
}

int64_t Network::sendAlphaBeta(int64_t now, Route r, double bytes) {
  int64_t t = now;
  for (uint32_t hop = 0; hop < r.length; ++hop) {
    uint32_t l = router_.link(r, hop);
    int64_t ser = serializationPs(l, bytes);
    stats_[l].busyPs += ser;
    stats_[l].bytes += bytes;
    t += ser + topo_.links()[l].latencyPs;
  }
  return t;
}

} // namespace rapid::net
