//===- Network.cpp - Link timing ------------------------------------------===//

#include "rapid/Network/Network.h"

#include "rapid/Support/SimTime.h"

#include <algorithm>
#include <cmath>

namespace rapid::net {

Network::Network(Topology &topo, NetMode mode, Switching switching)
    : topo_(topo), mode_(mode), switching_(switching), router_(topo),
      stats_(topo.links().size()), memo_(topo.links().size()) {}

std::pair<int64_t, int64_t> Network::serialize(uint32_t l, double bytes) {
  SerMemo &m = memo_[l];
  double rate = topo_.links()[l].bytesPerNs;
  if (m.bytes != bytes || m.bytesPerNs != rate)
    m = SerMemo{bytes, rate, serializationPs(l, bytes), packetPs(l, bytes)};
  return {m.ser, m.packet};
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

HopTimes Network::sendHop(int64_t now, uint32_t l, double bytes, int64_t tailReadyPs) {
  LinkStats &s = stats_[l];
  int64_t start = std::max(now, s.freeAtPs);
  auto [ser, packetSer] = serialize(l, bytes);
  // The link reserves only its own serialisation time: while a slower
  // upstream link trickles this message in, a switch fills the gaps with
  // other messages' packets, so holding the link until the tail arrives
  // would charge a fast trunk the slow link's time. FIFO reservations of
  // `ser` each keep its throughput at or below its bandwidth.
  s.freeAtPs = addTime(start, ser);
  s.busyPs = addTime(s.busyPs, ser);
  s.bytes += bytes;
  if (recordSpans_) spans_.push_back({l, start, s.freeAtPs, bytes});
  int64_t latency = topo_.links()[l].latencyPs;
  // Cut-through forwards whole packets: the next node can pass the head on
  // once the first packet is in, and the last packet, once in, still has to
  // be serialised here. (Store-and-forward already waits for all of it.)
  int64_t packet = switching_ == Switching::CutThrough ? packetSer : 0;
  // The link cannot send the last byte before it has received it.
  int64_t end = std::max(addTime(start, ser), addTime(tailReadyPs, packet));
  if (switching_ == Switching::StoreAndForward)
    return HopTimes{addTime(end, latency), addTime(end, latency)};
  return HopTimes{addTime(addTime(start, packet), latency), addTime(end, latency)};
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
