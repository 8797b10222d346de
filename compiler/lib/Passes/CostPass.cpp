//===- CostPass.cpp - A time for every compute op -------------------------===//
//
// A roofline per op: the larger of its math time at the GPU's peak for the
// op's type and its HBM time, both derated by the GPU's named calibration
// factors, plus one kernel launch. GEMMs move at least their operands and
// result once (the tiled model refines this). Collectives get no time here:
// the network simulator decides them.
//===----------------------------------------------------------------------===//
#include "rapid/Passes/Pipeline.h"
#include "rapid/Sema/Specs.h"

namespace rapid {
namespace {

using ir::Bound;
using ir::Op;
using ir::OpKind;

double hbmBytes(const Op &op) {
  if (op.kind != OpKind::Gemm) return op.bytes;
  const ir::Shape &s = op.shape;
  double elems = double(s.m) * s.k + double(s.k) * s.n + double(s.m) * s.n;
  return elems * double(s.batch) * bytesOf(op.dtype);
}

void costOp(Op &op, const GpuSpec &gpu) {
  bool tensor = op.kind == OpKind::Gemm || op.kind == OpKind::FlashAttention || op.kind == OpKind::DecodeAttention;
  FlopsPerSecond peak = (tensor ? gpu.peak(op.dtype) : gpu.peakFp32) * gpu.calibration.compute;
  Seconds math = Flops(op.flops) / peak;
  op.bytes = hbmBytes(op);
  Seconds memory = Bytes(op.bytes) / (gpu.hbmBandwidth * gpu.calibration.hbm);
  op.time = std::max(math, memory) + gpu.launchOverhead;
  op.bound = gpu.launchOverhead > std::max(math, memory) ? Bound::Launch
             : math >= memory                             ? Bound::Compute
                                                          : Bound::HBM;
}

} // namespace

void costPass(ir::Program &prog, const ExperimentPoint &point) {
  GpuSpec gpu = gpuSpecFrom(point.gpuName, point.gpu);
  for (ir::Graph &g : prog.stages)
    for (Op &op : g.ops) {
      if (op.isComm()) {
        op.bound = Bound::Network;
        continue;
      }
      costOp(op, gpu);
    }
}

} // namespace rapid
