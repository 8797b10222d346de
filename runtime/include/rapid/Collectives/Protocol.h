//===- Protocol.h - NCCL's protocols as costs on a plan --------*- C++ -*-===//
//
// NCCL moves a collective's data with one of three protocols, a trade of
// latency against bandwidth (NCCL's tuning model, src/graph/tuning.cc):
//   LL      8-byte stores carrying 4 bytes of data and a 4-byte flag: the
//           receiver sees data as it lands (lowest latency), half the
//           bandwidth;
//   LL128   128-byte lines carrying 120 bytes, flagged per line: near full
//           bandwidth, a little more latency;
//   Simple  plain copies with a fence and a flag per step: full bandwidth,
//           the most latency per step.
// A protocol adds three things to a collective the runtime simulates
// (docs/runtime.md, "Protocols"):
//   base    once per collective: its kernel's start and setup;
//   step    each step's message reaches its receiver no sooner than this
//           after it was sent (the flag handshake); the network's own path
//           latency counts where it is longer, serialisation on top;
//   wire    bytes on the wire per byte of data.
// `Auto` chooses per collective as NCCL does, by the smallest
// base + steps x step + wire bytes / bandwidth. None is the network alone.
//===----------------------------------------------------------------------===//
#pragma once

#include "rapid/Collectives/Plan.h"

#include <optional>
#include <string_view>

namespace rapid::coll {

enum class Protocol : uint8_t { None, LL, LL128, Simple, Auto };

/// "none", "LL", "LL128", "Simple", "auto" (NCCL_PROTO's spelling; any case).
std::optional<Protocol> parseProtocol(std::string_view name);
const char *protocolName(Protocol p);

struct ProtocolCost {
  double baseNs = 0;     ///< once per collective
  double stepNs = 0;     ///< least time from a step's send to its receipt
  double wireScale = 1;  ///< wire bytes per data byte
};

/// The costs of a concrete protocol (None: all zero, wire 1) on links of
/// `bytesPerNs` when LL reaches at most `llMaxBytesPerNs` of bus bandwidth
/// (0: no cap): LL's wire scale is then at least link / cap.
ProtocolCost protocolCost(Protocol p, double bytesPerNs = 0, double llMaxBytesPerNs = 0);

/// What `Auto` picks for `plan` run in `chunks` chunks when its slowest
/// link moves `bytesPerNs`; a concrete protocol is returned as it is.
Protocol chooseProtocol(Protocol p, const Plan &plan, uint32_t chunks, double bytesPerNs, double llMaxBytesPerNs = 0);

/// NVLS's costs in NCCL's tuning model: no base, one latency of 25 us over
/// NVLink for the whole operation (tuning.cc hwLat, NVLS with Simple, its
/// only protocol), plain bytes on the wire.
ProtocolCost nvlsCost();

/// estimateNs (below) with a protocol's costs given.
double estimateNs(const ProtocolCost &c, const Plan &plan, uint32_t chunks, double bytesPerNs, double hopNs);

/// NCCL's rule for choosing an algorithm (the least estimated latency plus
/// bytes over bandwidth, tuning.cc) applied to one of our plans: base, then
/// each step's latency (the protocol's handshake or the path's `hopNs`,
/// whichever is longer; a tree step is `depth` levels, each also forwarding
/// its whole chunk), then the wire bytes a member sends over the bandwidth.
/// `p` Auto takes the best protocol, as NCCL picks both together.
double estimateNs(Protocol p, const Plan &plan, uint32_t chunks, double bytesPerNs, double llMaxBytesPerNs,
                  double hopNs);

} // namespace rapid::coll
