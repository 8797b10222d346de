//===- IR.cpp - Names of IR enums -----------------------------------------===//
#include "rapid/IR/IR.h"

#include <map>

namespace rapid::ir {

int64_t Layout::degree(Group g) const {
  switch (g) {
  case Group::TP: return tp;
  case Group::CP: return cp;
  case Group::DP: return dp;
  case Group::PP: return pp;
  case Group::EP: return ep;
  case Group::DPCP: return dp * cp;
  case Group::Shard: return shard * cp;
  case Group::Replica: return dp / shard;
  case Group::None: break;
  }
  return 1;
}

double sumExpanded(const Graph &g, llvm::function_ref<double(const Op &)> f, double total) {
  std::map<std::pair<int32_t, bool>, double> block; // (layer, backward) -> f over microbatch 0's ops
  for (const Op &op : g.ops)
    if (op.micro == 0 && op.layer >= 0) block[{op.layer, op.phase != Phase::Forward}] += f(op);
  for (const Op &op : g.ops) total += op.kind == OpKind::Block ? block[{op.layer, op.phase != Phase::Forward}] : f(op);
  return total;
}

int64_t Layout::stageLayers(int64_t stage) const {
  int64_t n = 0;
  for (int64_t c = 0; c < virtualStages; ++c) n += layerEnd(c, stage) - layerBegin(c, stage);
  return n;
}

const StageMemory &MemoryReport::worst() const {
  const StageMemory *w = &stages.front();
  for (const StageMemory &s : stages)
    if (s.peak > w->peak) w = &s;
  return *w;
}

const char *kindName(OpKind k) {
  switch (k) {
  case OpKind::Gemm: return "gemm";
  case OpKind::FlashAttention: return "flash_attention";
  case OpKind::DecodeAttention: return "decode_attention";
  case OpKind::Softmax: return "softmax";
  case OpKind::Norm: return "norm";
  case OpKind::Activation: return "activation";
  case OpKind::Residual: return "residual";
  case OpKind::Dropout: return "dropout";
  case OpKind::BiasGrad: return "bias_grad";
  case OpKind::Rotary: return "rotary";
  case OpKind::Copy: return "copy";
  case OpKind::Embedding: return "embedding";
  case OpKind::CrossEntropy: return "cross_entropy";
  case OpKind::Router: return "router";
  case OpKind::Optimizer: return "optimizer";
  case OpKind::Block: return "block";
  case OpKind::AllReduce: return "all_reduce";
  case OpKind::AllGather: return "all_gather";
  case OpKind::ReduceScatter: return "reduce_scatter";
  case OpKind::AllToAll: return "all_to_all";
  case OpKind::Send: return "send";
  case OpKind::Recv: return "recv";
  }
  return "?";
}

const char *phaseName(Phase p) {
  switch (p) {
  case Phase::Forward: return "fwd";
  case Phase::Backward: return "bwd";
  case Phase::Recompute: return "recompute";
  case Phase::Update: return "update";
  }
  return "?";
}

const char *groupName(Group g) {
  switch (g) {
  case Group::None: return "none";
  case Group::TP: return "tp";
  case Group::CP: return "cp";
  case Group::DP: return "dp";
  case Group::EP: return "ep";
  case Group::PP: return "pp";
  case Group::DPCP: return "dpcp";
  case Group::Shard: return "shard";
  case Group::Replica: return "replica";
  }
  return "?";
}

const char *boundName(Bound b) {
  switch (b) {
  case Bound::None: return "none";
  case Bound::Compute: return "compute";
  case Bound::Latency: return "latency";
  case Bound::SharedMemory: return "smem";
  case Bound::L2: return "l2";
  case Bound::HBM: return "hbm";
  case Bound::Launch: return "launch";
  case Bound::Network: return "network";
  }
  return "?";
}

} // namespace rapid::ir
