//===- Topology.cpp - Build every link of every dimension -----------------===//

#include "rapid/Network/Topology.h"

#include <cassert>
#include <cctype>
#include <cmath>
#include <fmt/format.h>

namespace rapid::net {

static const char *kDimNames[] = {"Ring",    "FullyConnected", "Switch",    "Mesh",
                                  "Mesh2D",  "Torus2D",        "Torus3D",   "HyperCube",
                                  "KingMesh", "FatTree"};

const char *dimKindName(DimKind k) { return kDimNames[int(k)]; }

bool parseDimKind(const std::string &name, DimKind &out) {
  auto lower = [](std::string s) {
    for (auto &c : s)
      c = char(std::tolower(c));
    return s;
  };
  for (int i = 0; i < 10; ++i)
    if (lower(kDimNames[i]) == lower(name)) {
      out = DimKind(i);
      return true;
    }
  return false;
}

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

Topology::Topology(NetworkSpec spec) : spec_(std::move(spec)) {
  for (const auto &d : spec_.dims) {
    strides_.push_back(numRanks_);
    sizes_.push_back(d.size());
    numRanks_ *= d.size();
  }
  numNodes_ = numRanks_;
  for (int d = 0; d < numDims(); ++d) {
    switchBase_.push_back(uint32_t(numNodes_));
    const auto &ds = spec_.dims[d];
    int lines = numRanks_ / ds.size();
    if (ds.kind == DimKind::Switch)
      numNodes_ += lines;
    else if (ds.kind == DimKind::FatTree)
      numNodes_ += lines * ((ds.size() + ds.leafSize - 1) / ds.leafSize + 1);
  }
  for (int d = 0; d < numDims(); ++d)
    buildDim(d);
  buildAdjacency();
}

int Topology::lineOf(int rank, int d) const {
  int s = strides_[d];
  return rank / (s * dimSize(d)) * s + rank % s;
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
  linkIndex_[uint64_t(a) << 32 | b] = uint32_t(links_.size());
  links_.push_back(l);
  if (both)
    addLink(b, a, d, bw, false);
}

void Topology::buildDim(int d) {
  const auto &ds = spec_.dims[d];
  for (int line = 0, lines = numRanks_ / ds.size(); line < lines; ++line) {
    switch (ds.kind) {
    case DimKind::Ring:
    case DimKind::Torus2D:
    case DimKind::Torus3D: buildGrid(d, line, true, false); break;
    case DimKind::Mesh:
    case DimKind::Mesh2D: buildGrid(d, line, false, false); break;
    case DimKind::KingMesh: buildGrid(d, line, false, true); break;
    case DimKind::Switch: buildSwitched(d, line); break;
    case DimKind::FatTree: buildFatTree(d, line); break;
    case DimKind::FullyConnected:
    case DimKind::HyperCube: {
      int s = strides_[d], k = ds.size();
      int base = line / s * s * k + line % s;
      for (int a = 0; a < k; ++a)
        for (int b = a + 1; b < k; ++b)
          if (ds.kind == DimKind::FullyConnected || std::has_single_bit(unsigned(a ^ b)))
            addLink(base + a * s, base + b * s, d, ds.bandwidth);
      break;
    }
    }
  }
}

/// Grids cover rings, meshes and tori of 1-3 axes: a link to the next
/// position along each axis (wrapping for tori), plus both diagonals for
/// king meshes.
void Topology::buildGrid(int d, int line, bool wrap, bool diagonal) {
  const auto &ds = spec_.dims[d];
  int s = strides_[d], k = ds.size();
  int base = line / s * s * k + line % s;
  auto rankAt = [&](int local) { return uint32_t(base + local * s); };
  for (int local = 0; local < k; ++local) {
    int axisStride = 1;
    for (int extent : ds.shape) {
      int c = local / axisStride % extent;
      if (c + 1 < extent || (wrap && extent > 2))
        addLink(rankAt(local), rankAt(local + ((c + 1) % extent - c) * axisStride), d,
                ds.bandwidth);
      axisStride *= extent;
    }
    if (diagonal && ds.shape.size() == 2) {
      int w = ds.shape[0], x = local % w, y = local / w;
      if (x + 1 < w && y + 1 < ds.shape[1])
        addLink(rankAt(local), rankAt(local + 1 + w), d, ds.bandwidth);
      if (x > 0 && y + 1 < ds.shape[1])
        addLink(rankAt(local), rankAt(local - 1 + w), d, ds.bandwidth);
    }
  }
}

void Topology::buildSwitched(int d, int line) {
  const auto &ds = spec_.dims[d];
  int s = strides_[d], k = ds.size();
  int base = line / s * s * k + line % s;
  for (int local = 0; local < k; ++local)
    addLink(uint32_t(base + local * s), switchBase_[d] + line, d, ds.bandwidth);
}

/// Two levels: ranks hang off leaf switches, each leaf has one trunk to the
/// line's spine whose bandwidth is the leaf's down-capacity divided by the
/// oversubscription. One aggregated trunk stands for the ECMP uplinks.
void Topology::buildFatTree(int d, int line) {
  const auto &ds = spec_.dims[d];
  int s = strides_[d], k = ds.size();
  int base = line / s * s * k + line % s;
  int leaves = (k + ds.leafSize - 1) / ds.leafSize;
  uint32_t first = switchBase_[d] + uint32_t(line * (leaves + 1));
  uint32_t spine = first + uint32_t(leaves);
  for (int local = 0; local < k; ++local)
    addLink(uint32_t(base + local * s), first + local / ds.leafSize, d, ds.bandwidth);
  BytesPerSecond trunk = ds.bandwidth * (ds.leafSize / ds.oversubscription);
  for (int leaf = 0; leaf < leaves; ++leaf)
    addLink(first + leaf, spine, d, trunk);
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
