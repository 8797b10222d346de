//===- RuntimeInputs.cpp - A point's network, settings and faults ---------===//
#include "rapid/Emit/RuntimeInputs.h"

#include "rapid/Network/TopologyKinds.h"

namespace rapid {

net::NetworkSpec networkSpec(const ExperimentPoint &p) {
  net::NetworkSpec spec;
  for (const DimensionSpec &d : p.network.dims) {
    net::DimSpec ds;
    ds.name = d.name;
    ds.kind = d.kind;
    ds.shape = net::topologyKind(d.kind).axes(d.extents);
    ds.bandwidth = d.bandwidth * p.gpu.calibrationNetwork;
    ds.latency = d.latency;
    // 0 in the language is "the whole dimension", as the readers write it.
    ds.leafSize = int(d.leafSize > 0 ? d.leafSize : d.size);
    ds.oversubscription = d.oversubscription;
    ds.trunk = d.trunk * p.gpu.calibrationNetwork;
    ds.podSize = int(d.podSize > 0 ? d.podSize : d.size);
    ds.podOversubscription = d.podOversubscription;
    ds.podTrunk = d.podTrunk * p.gpu.calibrationNetwork;
    ds.packet = d.packet;
    ds.sameNode = d.sameNode;
    spec.dims.push_back(std::move(ds));
  }
  return spec;
}

engine::SystemConfig systemConfig(const ExperimentPoint &p) {
  engine::SystemConfig cfg;
  static_assert(int(CollectiveProtocol::Auto) == int(coll::Protocol::Auto), "the two enums list the same protocols");
  cfg.protocol = coll::Protocol(p.stack.collectiveProtocol);
  cfg.llMaxBytesPerNs = p.gpu.llBandwidth.value() / 1e9; // a bus bandwidth NCCL measured: no calibration on top
  cfg.customAllReduce = {p.stack.customAllReduceMax.value(), p.stack.customAllReduceMaxTwoRanks.value(),
                         p.stack.customAllReduceOneShotFourRanks.value(), p.stack.customAllReduceOneShot.value(),
                         p.stack.customAllReduceStart.value() * 1e9,
                         p.stack.customAllReduceStartPerPeer.value() * 1e9,
                         p.stack.customAllReduceBandwidth.value() / 1e9};
  // NVLS where the node's switch multicasts and the stack's NCCL runs it
  // (nvls_buffers, its memory, is 0 where NVLS is off): a measured rate, so
  // no calibration on top.
  if (!p.network.dims.empty() && p.stack.nvlsBuffers.value() > 0)
    cfg.nvlsBytesPerNs = p.network.dims.front().multicast.value() / 1e9;
  std::vector<coll::Algorithm> perDim;
  bool chosen = false;
  for (const DimensionSpec &d : p.network.dims) {
    using A = coll::Algorithm;
    switch (d.algorithm) {
    case CollectiveAlgorithm::Auto:
    case CollectiveAlgorithm::Ring: perDim.push_back(A::Ring); break;
    case CollectiveAlgorithm::Direct: perDim.push_back(A::Direct); break;
    case CollectiveAlgorithm::HalvingDoubling: perDim.push_back(A::HalvingDoubling); break;
    case CollectiveAlgorithm::DoubleBinaryTree: perDim.push_back(A::DoubleBinaryTree); break;
    case CollectiveAlgorithm::OneShot: perDim.push_back(A::OneShot); break;
    }
    chosen |= d.algorithm != CollectiveAlgorithm::Auto;
  }
  // `auto` is NCCL's choice between the ring and, between nodes, the tree:
  // within a node NCCL chains its GPUs, which gains nothing over the ring.
  uint32_t betweenNodes = networkSpec(p).betweenNodes();
  for (size_t d = 0; d < p.network.dims.size() && d < 32; ++d)
    if (p.network.dims[d].algorithm == CollectiveAlgorithm::Auto && (betweenNodes >> d & 1))
      cfg.allReduceAuto |= 1u << d;
  if (!chosen) return cfg; // the runtime's default, as Astra-Sim files without the keys
  // A dimension's algorithm is NCCL's choice for it: trees (and the custom
  // one-shot kernels) make only all-reduces (all-gather and reduce-scatter
  // stay rings), and all-to-all is always direct (every peer sent to at once).
  auto [allReduce, allGather, reduceScatter, allToAll] = std::tie(
      cfg.algorithms.perKind[0], cfg.algorithms.perKind[1], cfg.algorithms.perKind[2], cfg.algorithms.perKind[3]);
  allReduce = perDim;
  for (coll::Algorithm a : perDim) {
    bool allReduceOnly = a == coll::Algorithm::DoubleBinaryTree || a == coll::Algorithm::OneShot;
    coll::Algorithm notTree = allReduceOnly ? coll::Algorithm::Ring : a;
    allGather.push_back(notTree);
    reduceScatter.push_back(notTree);
    allToAll.push_back(coll::Algorithm::Direct);
  }
  return cfg;
}

std::vector<net::Fault> pointFaults(const ExperimentPoint &p, const net::Topology &topo) {
  std::vector<net::Fault> out;
  if (!p.faults) return out;
  for (const LinkFaultSpec &f : p.faults->links) {
    int d = 0;
    while (d < int(p.network.dims.size()) && p.network.dims[d].name != f.dim) ++d;
    net::Fault nf;
    nf.hard = f.hard;
    if (!f.hard) {
      nf.derate = f.derate;
      nf.extraLatencyPs = int64_t(f.extraLatency.value() * 1e12 + 0.5);
    }
    uint32_t a = uint32_t(f.a * topo.stride(d)), b = uint32_t(f.b * topo.stride(d));
    if (!net::topologyKind(p.network.dims[d].kind).switched) {
      nf.src = a, nf.dst = b;
      out.push_back(nf);
      continue;
    }
    for (uint32_t r : {a, b}) // each end's link up to its switch
      for (const uint32_t *l = topo.outBegin(r); l != topo.outEnd(r); ++l)
        if (topo.links()[*l].dim == d) {
          nf.src = r, nf.dst = topo.links()[*l].dst;
          out.push_back(nf);
        }
  }
  return out;
}

} // namespace rapid
