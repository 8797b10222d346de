//===- MemoryPass.cpp - Per-rank memory over the schedule -----------------===//
//
// Static bytes per parameter (mixed precision, Megatron-LM's layout): the
// 16-bit weights, the gradients in the stack's grad_precision (FP32
// main_grad by default), FP32 master weights and two FP32 Adam moments,
// i.e. 2 + 4 + 4 + 8 = 18 B; ZeRO-1 shards master and
// moments over DP, ZeRO-2 also gradients, ZeRO-3/FSDP also weights (plus two
// gathered layers). Activations are allocated when a layer's forward starts
// and freed when its backward ends, in the order the schedule runs them.
// Communication buffers: NCCL's NVLS buffers on every communicator a stage
// runs collectives on (docs/memory.md).
//===----------------------------------------------------------------------===//
#include "rapid/Passes/Memory.h"
#include "rapid/Passes/Pipeline.h"
#include "rapid/IR/RankLayout.h"

#include "rapid/Sema/PointPrinter.h"
#include "rapid/Spec/Specs.h"

#include <fmt/format.h>
#include <algorithm>
#include <map>
#include <set>

namespace rapid {
namespace {

using ir::OpKind;
using ir::Phase;

/// Peak activation bytes of one stage's program.
double activationPeak(const ir::Graph &g, const ir::MemoryFacts &mf) {
  std::map<std::pair<int32_t, int32_t>, size_t> lastBackward; // (layer, micro) -> op index
  for (size_t i = 0; i < g.ops.size(); ++i)
    if (g.ops[i].layer >= 0 && !g.ops[i].isComm() && g.ops[i].phase == Phase::Backward) lastBackward[{g.ops[i].layer, g.ops[i].micro}] = i;
  std::map<std::pair<int32_t, int32_t>, int> state; // 1 forward seen, 2 backward seen
  double live = 0, peak = 0;
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const ir::Op &op = g.ops[i];
    if (op.kind == OpKind::CrossEntropy) { // the logits live from the loss to its backward
      live += op.phase == Phase::Forward ? mf.storedHead : -mf.storedHead;
      peak = std::max(peak, live);
    }
    if (op.layer < 0 || op.isComm()) continue;
    auto key = std::make_pair(op.layer, op.micro);
    int &st = state[key];
    if (op.phase == Phase::Forward && st == 0) {
      st = 1;
      live += mf.stored[op.layer];
    } else if (op.phase != Phase::Forward && st == 1) {
      st = 2; // the backward (or its recompute) materialises what it recomputes
      peak = std::max(peak, live + mf.recompute[op.layer]);
    }
    peak = std::max(peak, live);
    if (st == 2 && lastBackward.count(key) && lastBackward[key] == i) live -= mf.stored[op.layer];
  }
  return peak;
}

/// NCCL's NVLS buffers on `rank`: for each communicator the graph runs a
/// collective on (point-to-point sends set up none), the stack's
/// nvls_buffers once per member inside the rank's node, where the first
/// network dimension multicasts and the node holds more than two members
/// (NCCL sets up NVLS for more than two GPUs of one NVLink domain).
double nvlsBuffers(const ir::Graph &g, const RankLayout &ranks, int64_t rank, const ExperimentPoint &p) {
  const std::vector<DimensionSpec> &dims = p.network.dims;
  if (dims.empty() || dims.front().multicast.value() == 0 || p.stack.nvlsBuffers.value() == 0) return 0;
  int64_t node = rank / dims.front().size;
  std::set<ir::Group> groups;
  for (const ir::Op &op : g.ops)
    if (op.isComm() && op.kind != OpKind::Send && op.kind != OpKind::Recv && op.group != ir::Group::None)
      groups.insert(op.group);
  double bytes = 0;
  for (ir::Group grp : groups) {
    std::vector<int64_t> members = ranks.members(rank, grp);
    auto local = std::count_if(members.begin(), members.end(), [&](int64_t m) { return m / dims.front().size == node; });
    if (local > 2) bytes += p.stack.nvlsBuffers.value() * double(local);
  }
  return bytes;
}

} // namespace

void memoryPass(ir::Program &prog, const ExperimentPoint &point) {
  const GpuSpec &gpu = point.gpu;
  const ir::MemoryFacts &mf = prog.memory;
  const ir::Layout &L = prog.layout;
  double dp = double(L.shard * L.cp); // ZeRO shards over every rank holding the same weights (or a block of them)
  RankLayout ranks(L);
  MemoryReport r;
  for (const ir::Graph &g : prog.stages) {
    StageMemory m;
    m.stage = g.stage;
    m.rank = ranks.firstRankOfStage(g.stage);
    double p = mf.stageParams[g.stage];
    m.weights = p * mf.paramBytes / (mf.zero >= 3 ? dp : 1);
    if (mf.zero >= 3 && dp > 1 && mf.stageLayers[g.stage] > 0) // the layer running and the one gathered next (SchedulePass)
      m.weights += p / double(mf.stageLayers[g.stage]) * mf.paramBytes * double(std::min<int64_t>(2, mf.stageLayers[g.stage]));
    if (mf.training) {
      m.gradients = p * mf.gradBytes / (mf.zero >= 2 ? dp : 1);
      m.optimizer = p * (mf.masterBytes + mf.optimizerBytes) / (mf.zero >= 1 ? dp : 1);
      m.activations = activationPeak(g, mf);
    } else {
      m.activations = mf.transient + (g.stage == L.pp - 1 ? mf.logits : 0);
      m.kvCache = mf.kvCache[g.stage];
    }
    m.reserve = gpu.memoryReserve.value();
    m.commBuffers = nvlsBuffers(g, ranks, m.rank, point);
    m.peak = m.weights + m.gradients + m.optimizer + m.activations + m.kvCache + m.reserve + m.commBuffers;
    m.capacity = gpu.hbmCapacity.value();
    r.stages.push_back(m);
  }
  const StageMemory &w = r.worst();
  if (w.peak > w.capacity) {
    r.fits = false;
    r.reason = fmt::format("needs {} on rank {} (stage {}) but '{}' has {}", formatBytes(Bytes(w.peak)), w.rank, w.stage,
                           point.gpu.name, formatBytes(Bytes(w.capacity)));
  }
  prog.memoryReport = std::move(r);
}

} // namespace rapid
