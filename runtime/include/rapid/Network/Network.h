//===- Network.h - Link state, timing and statistics -----------*- C++ -*-===//
//
// Congestion model (docs/runtime.md): messages move hop by hop, store and
// forward. Each directed link serves messages one at a time in arrival order
// (FIFO); a message occupies the link for bytes/bandwidth and reaches the far
// end one latency after it leaves. Times are integer picoseconds, so sums
// stay exact and ties deterministic; reports round to nanoseconds. Because the engine hands requests to a link
// in time order, the FIFO needs no queue object: a message starts at
// max(now, link free time). Analytical mode is alpha-beta with no contention:
// the sum over hops of serialization plus latency.
//===----------------------------------------------------------------------===//
#pragma once

#include "rapid/Network/Routing.h"

namespace rapid::net {

enum class NetMode { Congestion, Analytical };

struct LinkStats {
  double bytes = 0;
  int64_t busyPs = 0;
  int64_t freeAtPs = 0;
};

class Network {
public:
  Network(Topology &topo, NetMode mode);

  NetMode mode() const { return mode_; }
  const Topology &topology() const { return topo_; }
  Router &router() { return router_; }
  const std::vector<LinkStats> &stats() const { return stats_; }

  /// Time on the wire for `bytes` on link l, in whole picoseconds rounded
  /// up (a nonzero message never takes zero time).
  int64_t serializationPs(uint32_t l, double bytes) const;
  /// Congestion mode: enqueue on link l at `now`; returns the arrival time at
  /// the link's far end.
  int64_t sendHop(int64_t now, uint32_t l, double bytes);
  /// Analytical mode: arrival time over the whole route, links never busy.
  int64_t sendAlphaBeta(int64_t now, Route r, double bytes);

private:
  Topology &topo_;
  NetMode mode_;
  Router router_;
  std::vector<LinkStats> stats_;
};

} // namespace rapid::net
