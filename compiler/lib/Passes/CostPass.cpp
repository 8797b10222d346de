//===- CostPass.cpp - A time for every compute op -------------------------===//
//
// Each compute op is costed by the hardware-aware kernel model of
// compiler/lib/Cost (docs/model.md): GEMMs by their best CTA tiling, waves
// and per-level traffic; FlashAttention by its block schedule; everything
// else as a bandwidth/vector-math kernel from its bytes and FLOPs. Layers
// and the points of a sweep repeat the same shapes, so results are memoised
// per GPU and stack. The stack adds its launch cost per kernel, except for
// kernels it replays from CUDA graphs. Collectives get no time here: the
// network simulator decides them.
//===----------------------------------------------------------------------===//
#include "rapid/Passes/Pipeline.h"

#include "rapid/Cost/Pointwise.h"
#include "rapid/Cost/Power.h"
#include "rapid/Spec/Specs.h"

#include <cmath>
#include <deque>
#include <map>
#include <optional>
#include <tuple>

namespace rapid {
namespace {

using ir::Op;
using ir::OpKind;

ir::Bound boundOf(cost::Bound b) {
  switch (b) {
  case cost::Bound::Compute: return ir::Bound::Compute;
  case cost::Bound::Latency: return ir::Bound::Latency;
  case cost::Bound::Smem: return ir::Bound::SharedMemory;
  case cost::Bound::L2: return ir::Bound::L2;
  case cost::Bound::Hbm: return ir::Bound::HBM;
  case cost::Bound::Launch: return ir::Bound::Launch;
  }
  return ir::Bound::None;
}

/// Attention of m query rows against n keys per head: the kernel model's
/// square case (n x n) scaled to m of its rows, which is exact when m = n
/// and is context parallelism's share otherwise.
cost::KernelCost attention(const GpuSpec &gpu, const StackSpec &stack, const Op &op) {
  cost::AttentionShape s;
  s.kernel = stack.attention;
  s.batch = 1;
  s.seq = op.shape.n;
  s.heads = s.kvHeads = op.shape.batch;
  s.headDim = op.shape.k;
  s.causal = op.causal;
  s.dropout = op.dropout;
  s.dtype = op.dtype;
  cost::KernelCost c = cost::flashAttention(gpu, s, op.phase == ir::Phase::Backward ? cost::Pass::Backward
                                                                                     : cost::Pass::Forward);
  if (op.shape.m != op.shape.n) {
    double share = double(op.shape.m) / double(op.shape.n);
    c.time = c.time * share;
    c.bytes.hbm = c.bytes.hbm * share;
  }
  // The forward kernel is the one decode runs (cuDNN's on Hopper): its
  // blocks' start is the stack's, whatever the rows (docs/model.md §3.3).
  if (op.phase != ir::Phase::Backward) c.time += stack.decodeAttentionStart;
  return c;
}

/// A pointwise op's work; one that draws a dropout mask (`op.dropout`) is
/// integer work, the Philox draws being nearly all of it; one over strided
/// views issues the stack's instructions per element for their offsets and
/// takes at least the stack's least time for such a kernel.
cost::PointwiseWork work(const StackSpec &stack, const Op &op) {
  if (!op.strided) return {Bytes(op.bytes), Flops(op.flops), op.kernels, op.dropout};
  return {Bytes(op.bytes), Flops(op.flops), op.kernels, op.dropout, double(op.shape.m) * stack.stridedInstructions,
          stack.stridedLatency};
}

cost::KernelCost costOf(const GpuSpec &gpu, const StackSpec &stack, const Op &op) {
  switch (op.kind) {
  case OpKind::Gemm:
    return cost::gemmCost(gpu, {op.shape.m, op.shape.k, op.shape.n, op.shape.batch, op.dtype});
  case OpKind::FlashAttention:
    return attention(gpu, stack, op);
  case OpKind::Norm: // the stack's row-reduction kernels: LayerNorm and RMSNorm share its figures
    return cost::pointwiseCost(gpu, work(stack, op), cost::rowReduction(stack, cost::PointwiseOp::LayerNorm));
  case OpKind::Softmax:
    return cost::pointwiseCost(gpu, work(stack, op), cost::rowReduction(stack, cost::PointwiseOp::Softmax));
  case OpKind::DecodeAttention: // shape: (rows, cached tokens, head_dim, sequences x query heads)
    return cost::decodeAttention(gpu, cost::pointwiseCost(gpu, work(stack, op)),
                                 cost::decodeAttentionBlocks(gpu, stack, op.shape.batch, op.kvGroup), op.shape.n,
                                 stack.decodeAttentionCycles, stack.decodeAttentionStart);
  default: // bandwidth and vector math from the op's own bytes and FLOPs
    return cost::pointwiseCost(gpu, work(stack, op));
  }
}

/// A kernel a CUDA graph replays: its time plus the GPU's gap before the
/// next, never under the floor, which is the shortest launch-to-launch
/// time of such kernels: max(t, floor - gap) + gap = max(t + gap, floor).
/// The kernel alone is costed on a GPU whose floor is its own part of that
/// time and whose gap is none (the gap is added here, once).
cost::KernelCost graphedCost(const GpuSpec &gpu, const StackSpec &stack, const Op &op) {
  GpuSpec g = gpu;
  g.kernelFloor = std::max(Seconds(0), gpu.kernelFloor - gpu.kernelGap);
  g.kernelGap = Seconds(0);
  cost::KernelCost c = costOf(g, stack, op);
  c.time += gpu.kernelGap * double(c.kernels);
  return c;
}

/// Decode steps are units 1.. of an inference program (unit 0 is the prefill).
bool inDecodeStep(const Op &op, bool training) { return !training && op.micro >= 1; }

/// Gives `op` its time on `gpu`.
void costOn(Op &op, const GpuSpec &gpu, const ExperimentPoint &point, CostMemo &memo) {
  if (op.isComm()) { // a kernel the host launches too, NCCL's or the engine's own
    op.bound = ir::Bound::Network;
    op.launch = cost::launchCost(point.stack, inDecodeStep(op, point.isTraining()));
    return;
  }
  if (op.kind == OpKind::Block) return; // timed by the driver's probe
  bool decodeStep = inDecodeStep(op, point.isTraining());
  bool gap = gpu.kernelGap.value() > 0 && cost::graphed(point.stack, decodeStep);
  CostMemo::Key key{op.kind, op.shape.m, op.shape.n, op.shape.k, op.shape.batch, op.dtype,
                    op.causal, op.dropout, op.phase == ir::Phase::Backward, op.bytes, op.flops, op.kernels,
                    op.kvGroup, op.strided, gap};
  auto it = memo.costs.find(key);
  if (it == memo.costs.end())
    it = memo.costs.emplace(key, gap ? graphedCost(gpu, point.stack, op) : costOf(gpu, point.stack, op)).first;
  cost::KernelCost c = cost::launched(it->second, cost::launchCost(point.stack, decodeStep));
  op.time = c.time;
  op.bound = boundOf(c.bound);
  const cost::Traffic &t = c.bytes;
  if (op.kind == OpKind::Gemm || op.kind == OpKind::FlashAttention) op.bytes = t.hbm.value();
  op.l2Bytes = t.l2.value();
  op.smemBytes = t.smem.value();
}

/// The GPU's costs at one clock: each thread keeps the last GPU and
/// stack's. The points of a sweep or search mostly share them, and with
/// them most shapes; a power state is another GPU to it.
CostMemo &memoFor(const GpuSpec &gpu, const StackSpec &stack) {
  struct Shared {
    GpuSpec gpu;
    StackSpec stack;
    CostMemo memo;
  };
  thread_local std::deque<Shared> shared; // the last few: the boost clock and the clocks stages held
  for (Shared &s : shared)
    if (s.gpu == gpu && s.stack == stack) return s.memo;
  if (shared.size() == 16) shared.pop_front();
  return shared.emplace_back(Shared{gpu, stack, {}}).memo;
}

/// Of a training stage's kernels, the share of time tensor-core kernels run
/// at the boost clock: GEMMs and attention bound by the clock (math or
/// shared memory). Once-per-step ops (the optimizer) do not count: the
/// clock settles within a second (power_h100.csv) and holds over the
/// microbatches, which make nearly all of a real step; the optimizer is
/// bound by HBM, whatever the clock.
double tensorDuty(const ir::Graph &g) {
  double tensor = 0, all = 0;
  for (const Op &op : g.ops) {
    if (op.isComm() || op.kind == OpKind::Block || op.micro < 0) continue;
    double t = op.time.value();
    all += t;
    if (onTensorCores(op)) tensor += t;
  }
  return all > 0 ? tensor / all : 0;
}

} // namespace

bool onTensorCores(const Op &op) {
  return (op.kind == OpKind::Gemm || op.kind == OpKind::FlashAttention) &&
         (op.bound == ir::Bound::Compute || op.bound == ir::Bound::SharedMemory);
}

void costOp(Op &op, const ExperimentPoint &point, CostMemo &memo) { costOn(op, point.gpu, point, memo); }

void costPass(ir::Program &prog, const ExperimentPoint &point) {
  for (ir::Graph &g : prog.stages) {
    CostMemo &boost = memoFor(point.gpu, point.stack);
    for (Op &op : g.ops) costOn(op, point.gpu, point, boost);
    // Under a power limit a training loop's GPUs each hold the clock their
    // stage's mix allows (Cost/Power.h). Inference runs at the boost
    // clock: a prefill burst, then decode steps bound by HBM (the serving
    // mixes of power_h100_mix.csv held 1980 MHz); the serving driver
    // follows each replica's clock step by step.
    if (!point.isTraining()) continue;
    // To 1/256 (at most 0.2 %): the layouts of a search hold a few dozen
    // clocks instead of one each, and share their costs.
    double f = std::round(cost::powerSlowdown(point.gpu, tensorDuty(g)) * 256) / 256;
    if (f <= 1) continue;
    GpuSpec held = cost::slowedBy(point.gpu, f);
    CostMemo &memo = memoFor(held, point.stack);
    for (Op &op : g.ops) costOn(op, held, point, memo);
  }
}

} // namespace rapid
