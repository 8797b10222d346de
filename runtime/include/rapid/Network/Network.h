//===- Network.h - Link state, timing and statistics -----------*- C++ -*-===//
//
// Congestion model (docs/runtime.md): messages move hop by hop. Each directed
// link serves messages one at a time in arrival order (FIFO); a message
// occupies the link for bytes / the link's own bandwidth, even when a slower
// upstream link delivers its tail later (a switch fills those gaps with other
// messages), and reaches the far end one latency after it leaves. Switching
// is cut-through by default (the next link may start once the head has
// arrived, but the tail cannot leave before it has arrived; with a packet
// size, a hop passes the head on one packet's serialization later and the
// last packet leaves no sooner than that after it arrived),
// or store-and-forward (the next link starts when the whole message is in,
// Astra-Sim's congestion-aware backend). Times are integer picoseconds, so sums
// stay exact and ties deterministic; reports round to nanoseconds. Because the engine hands requests to a link
// in time order, the FIFO needs no queue object: a message starts at
// max(now, link free time). Analytical mode is alpha-beta with no contention:
// the sum over hops of serialization plus latency.
//===----------------------------------------------------------------------===//
#pragma once

#include "rapid/Network/Routing.h"
#include "rapid/Support/SimTime.h"

namespace rapid::net {

enum class NetMode { Congestion, Analytical };
enum class Switching { CutThrough, StoreAndForward };

/// When a message's first and last byte reach the far end of a link.
struct HopTimes {
  int64_t headPs, tailPs;
};

/// One message occupying a link, for per-link timelines: its bytes / the
/// link's bandwidth from when the link starts on it, so a link's spans never
/// overlap and add up to its busy time.
struct LinkSpan {
  uint32_t link;
  int64_t startPs, endPs;
  double bytes;
};

/// A link's state: what it carried, and when it is free. It also keeps the
/// serialisation time of the last message size it timed and the link's
/// latency, in the same cache line: every hop reads them all (a ring's
/// messages are all one size), and at thousands of ranks a second line per
/// hop (the topology's Link) was a cache miss of its own.
struct alignas(64) LinkStats {
  double bytes = 0;
  int64_t busyPs = 0;
  int64_t freeAtPs = 0;
  int64_t latencyPs = 0;  ///< the link's, as the topology had it when the Network was built
  double memoBytes = -1;  ///< the memo's key
  int64_t memoSer = 0, memoPacket = 0;
};

class Network {
public:
  /// Faults are applied to `topo` before: its links' rates and latencies
  /// are read once here and per message size, not on every hop.
  Network(Topology &topo, NetMode mode, Switching switching = Switching::CutThrough);

  NetMode mode() const { return mode_; }
  Switching switching() const { return switching_; }
  const Topology &topology() const { return topo_; }
  Router &router() { return router_; }
  const std::vector<LinkStats> &stats() const { return stats_; }
  /// Keep every link occupancy for a timeline (off by default: it grows with
  /// every hop of every message).
  void recordLinkSpans(bool on) { recordSpans_ = on; }
  const std::vector<LinkSpan> &linkSpans() const { return spans_; }

  /// Time on the wire for `bytes` on link l, in whole picoseconds rounded
  /// up (a nonzero message never takes zero time).
  int64_t serializationPs(uint32_t l, double bytes) const;
  /// Serialization of one packet of a `bytes` message on link l: of
  /// min(packet, bytes), or 0 when the link's dimension has no packet size.
  int64_t packetPs(uint32_t l, double bytes) const;
  /// Congestion mode: the message's head is at the link's near end at `now`
  /// and its tail arrives there at `tailReadyPs` (<= now unless cut-through);
  /// enqueue it on link l. Cut-through: the head reaches the far end one
  /// packet's serialization and one latency after the link starts on it.
  /// Inline: every message pays it once a hop.
  HopTimes sendHop(int64_t now, uint32_t l, double bytes, int64_t tailReadyPs);
  /// Analytical mode: arrival time over the whole route, links never busy
  /// (cut-through: every latency and packet serialization plus the rest of
  /// the message on the slowest link, as sendHop on an idle route;
  /// store-and-forward: serialization plus latency per hop).
  int64_t sendAlphaBeta(int64_t now, Route r, double bytes);

private:
  /// serializationPs and packetPs of link l, remembered per link: a
  /// collective's messages repeat one size over the same links, and the
  /// division (and the call) is a hot spot at thousands of ranks.
  std::pair<int64_t, int64_t> serialize(uint32_t l, double bytes) {
    LinkStats &m = stats_[l];
    if (m.memoBytes != bytes) retime(l, bytes);
    return {m.memoSer, m.memoPacket};
  }
  void retime(uint32_t l, double bytes);

  Topology &topo_;
  NetMode mode_;
  Switching switching_;
  Router router_;
  std::vector<LinkStats> stats_;
  bool recordSpans_ = false;
  std::vector<LinkSpan> spans_;
};

inline HopTimes Network::sendHop(int64_t now, uint32_t l, double bytes, int64_t tailReadyPs) {
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
  int64_t latency = s.latencyPs;
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

} // namespace rapid::net
