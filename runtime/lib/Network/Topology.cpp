//===- Topology.cpp - Build every link of every dimension -----------------===//

#include "rapid/Network/Topology.h"
#include "rapid/Network/TopologyKinds.h"

#include <cmath>
#include <fmt/format.h>

namespace rapid::net {

int DimSpec::size() const {
  int n = 1;
  for (int s : shape)
    n *= s;
  return n;
}

int NetworkSpec::numRanks() const {
  int n = 1;
  for (const auto &d : dims)
    n *= d.size();
  return n;
}

uint32_t NetworkSpec::betweenNodes() const {
  uint32_t bits = 0;
  for (size_t d = 1; d < dims.size() && d < 32; ++d)
    if (!dims[d].sameNode) bits |= 1u << d;
  return bits;
}

Topology::Topology(NetworkSpec spec) : spec_(std::move(spec)) {
  for (const auto &d : spec_.dims) {
    strides_.push_back(numRanks_);
    sizes_.push_back(d.size());
    numRanks_ *= d.size();
  }
  coords_.resize(size_t(numRanks_) * sizes_.size());
  for (int r = 0; r < numRanks_; ++r)
    for (size_t d = 0; d < sizes_.size(); ++d)
      coords_[size_t(r) * sizes_.size() + d] = r / strides_[d] % sizes_[d];
  numNodes_ = numRanks_;
  for (int d = 0; d < numDims(); ++d) {
    const auto &ds = spec_.dims[d];
    switchBase_.push_back(uint32_t(numNodes_));
    switchesPerLine_.push_back(uint32_t(topologyKind(ds.kind).switchesPerLine(ds)));
    numNodes_ += numRanks_ / ds.size() * int(switchesPerLine_.back());
  }
  for (int d = 0; d < numDims(); ++d)
    buildDim(d);
  buildAdjacency();
}

int Topology::lineOf(int rank, int d) const {
  int s = strides_[d];
  return rank / (s * dimSize(d)) * s + rank % s;
}

DimLine Topology::line(int d, int index) const {
  int s = strides_[d];
  return DimLine{spec_.dims[d], uint32_t(index / s * s * dimSize(d) + index % s), uint32_t(s),
                 switchBase_[d] + uint32_t(index) * switchesPerLine_[d]};
}

uint32_t Topology::linkBetween(uint32_t a, uint32_t b) const {
  auto it = linkIndex_.find(uint64_t(a) << 32 | b);
  return it == linkIndex_.end() ? kNoLink : it->second;
}

std::string Topology::nodeName(uint32_t node) const {
  return node < uint32_t(numRanks_) ? fmt::format("{}", node) : fmt::format("sw{}", node);
}

void Topology::addLink(uint32_t a, uint32_t b, int d, BytesPerSecond bw, bool both) {
  if (a == b || linkBetween(a, b) != kNoLink)
    return;
  Link l;
  l.src = a;
  l.dst = b;
  l.dim = uint16_t(d);
  l.bytesPerNs = bw.value() / 1e9;
  l.latencyPs = std::llround(spec_.dims[d].latency.value() * 1e12);
  l.packetBytes = spec_.dims[d].packet.value();
  linkIndex_[uint64_t(a) << 32 | b] = uint32_t(links_.size());
  links_.push_back(l);
  if (both)
    addLink(b, a, d, bw, false);
}

void Topology::buildDim(int d) {
  const TopologyKind &kind = topologyKind(spec_.dims[d].kind);
  auto add = [&](uint32_t a, uint32_t b, BytesPerSecond bw) { addLink(a, b, d, bw); };
  for (int index = 0, lines = numRanks_ / dimSize(d); index < lines; ++index)
    kind.build(line(d, index), add);
}

void Topology::buildAdjacency() {
  outStart_.assign(numNodes_ + 1, 0);
  for (const auto &l : links_)
    ++outStart_[l.src + 1];
  for (int n = 0; n < numNodes_; ++n)
    outStart_[n + 1] += outStart_[n];
  outLinks_.resize(links_.size());
  std::vector<uint32_t> fill(outStart_.begin(), outStart_.end() - 1);
  for (uint32_t i = 0; i < links_.size(); ++i)
    outLinks_[fill[links_[i].src]++] = i;
}

} // namespace rapid::net
