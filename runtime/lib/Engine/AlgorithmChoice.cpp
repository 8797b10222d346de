//===- AlgorithmChoice.cpp - Which algorithm NCCL runs an all-reduce with -===//
//
// NCCL picks, per all-reduce, the algorithm (and protocol) its tuning model
// estimates fastest (src/graph/tuning.cc). rapid-sim makes two such choices
// on top of a system's per-dimension algorithms, each only where the system
// file asks: between nodes the double binary tree against the ring
// (all-reduce-auto), and inside a node whose switch reduces and multicasts
// NVLS against whatever the plan would run (nvls-bandwidth). The estimate
// is coll::estimateNs, the rule NCCL applies, on our own plans
// (docs/runtime.md, "Ring or tree" and "NVLS").
//===----------------------------------------------------------------------===//

#include "rapid/Engine/Simulator.h"
#include "rapid/Collectives/Protocol.h"

#include <bit>

namespace rapid::engine {

/// all-reduce-auto: the all-reduce's outermost dimension runs the double
/// binary tree instead of the ring where NCCL's rule (coll::estimateNs, with
/// the instance's protocol choice) finds it faster. Only on a switched
/// dimension (a switch or a fat tree: NCCL builds its trees between nodes,
/// over the fabric), whose path between two members is two links.
void Simulator::chooseAllReduceTree(Instance &inst, const std::vector<std::vector<int>> &dims, int groupSize) const {
  // The last phase's dimension, as the plan takes it: the outermost the
  // all-reduce involves (a whole-machine one involves every dimension).
  uint32_t involved = inst.involved & uint32_t((uint64_t(1) << dims.size()) - 1);
  int outer = involved ? 31 - std::countl_zero(involved) : 0;
  const net::DimSpec &spec = net_.topology().spec().dims[size_t(outer)];
  if (!(opts_.system.allReduceAuto >> outer & 1) || (spec.kind != net::DimKind::Switch && spec.kind != net::DimKind::FatTree))
    return;
  coll::AlgorithmTable tree = opts_.system.algorithms;
  std::vector<coll::Algorithm> &allReduce = tree.perKind[0];
  if (allReduce.empty()) allReduce.push_back(coll::Algorithm::Ring);
  while (int(allReduce.size()) <= outer) allReduce.push_back(allReduce.back());
  allReduce[size_t(outer)] = coll::Algorithm::DoubleBinaryTree;
  double chunkBytes = double(inst.commSize) / inst.chunks;
  coll::Plan alt = coll::planCollective(trace::CollKind::AllReduce, chunkBytes, dims, inst.involved, groupSize, tree, inst.grid);
  if (!alt.problem.empty()) return;
  double bw = slowestLink(inst), llMax = opts_.system.llMaxBytesPerNs, hop = 2 * spec.latency.value() * 1e9;
  coll::Protocol p = opts_.system.protocol;
  if (coll::estimateNs(p, alt, inst.chunks, bw, llMax, hop) < coll::estimateNs(p, inst.plan, inst.chunks, bw, llMax, hop))
    inst.plan = std::move(alt);
}

bool Simulator::isNvls(const coll::Plan &plan) {
  return !plan.phases.empty() && plan.phases.back().algo == coll::Algorithm::Nvls;
}

/// nvls-bandwidth: an all-reduce of more than two members, all inside the
/// first dimension (NCCL sets NVLS up among one NVLink domain's GPUs, and for
/// more than two), runs NVLS where NCCL's rule estimates it faster than the
/// plan it has (with NVLS's own latency, coll::nvlsCost, at its own rate,
/// against the plan's protocol choice at the link's).
void Simulator::chooseNvls(Instance &inst, const std::vector<std::vector<int>> &dims, int groupSize,
                           size_t members) const {
  const net::Topology &topo = net_.topology();
  if (members <= 2 || topo.spec().dims[0].kind != net::DimKind::Switch || !insideFirstDimension(inst.involved, topo))
    return;
  coll::AlgorithmTable nvls;
  nvls.perKind[0] = {coll::Algorithm::Nvls};
  double chunkBytes = double(inst.commSize) / inst.chunks;
  coll::Plan alt = coll::planCollective(trace::CollKind::AllReduce, chunkBytes, dims, inst.involved, groupSize, nvls, inst.grid);
  if (!alt.problem.empty() || alt.phases.size() != 1 || !isNvls(alt)) return;
  const net::DimSpec &spec = topo.spec().dims[0];
  double link = slowestLink(inst), llMax = opts_.system.llMaxBytesPerNs, hop = 2 * spec.latency.value() * 1e9;
  coll::Protocol p = opts_.system.protocol;
  coll::ProtocolCost nvlsCost = p == coll::Protocol::None ? coll::ProtocolCost{} : coll::nvlsCost();
  double rate = std::min(link, opts_.system.nvlsBytesPerNs);
  if (coll::estimateNs(nvlsCost, alt, inst.chunks, rate, hop) < coll::estimateNs(p, inst.plan, inst.chunks, link, llMax, hop))
    inst.plan = std::move(alt);
}

} // namespace rapid::engine
