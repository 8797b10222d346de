//===- KernelCost.cpp - Roofline combination of resource times ------------===//
#include "rapid/Cost/KernelCost.h"

#include <algorithm>

namespace rapid::cost {

std::string_view nameOf(Bound b) {
  switch (b) {
  case Bound::Compute: return "compute";
  case Bound::Latency: return "latency";
  case Bound::Smem: return "smem";
  case Bound::L2: return "l2";
  case Bound::Hbm: return "hbm";
  case Bound::Launch: return "launch";
  }
  return "?";
}

// The calibration fields are what a user fits (achieved / peak); they scale
// the declared peaks here and nowhere else.
BytesPerSecond hbmRate(const GpuSpec &g) { return g.hbmBandwidth * g.calibrationHbm; }
BytesPerSecond gemmHbmRate(const GpuSpec &g) { return g.hbmBandwidth * g.calibrationGemmHbm; }
BytesPerSecond l2Rate(const GpuSpec &g) { return g.l2Bandwidth * g.calibrationL2; }
// Shared memory sits in the SM beside the tensor cores; it is derated with
// them (calibration.compute), since no separate field describes it.
BytesPerSecond smemRate(const GpuSpec &g) { return g.smemBandwidth * g.calibrationCompute; }
FlopsPerSecond mathRate(const GpuSpec &g, DType t) { return g.peak(t) * g.calibrationCompute; }
// Four warp schedulers per SM issue one 32-thread instruction a clock each
// (Volta to Blackwell, CUDA C++ Programming Guide); derated like the SM's other terms.
double issueRate(const GpuSpec &g) { return double(g.smCount) * g.clock.value() * 128 * g.calibrationCompute; }
// peak.fp32 counts an FMA as two FLOPs; integer operations are one each.
double intOpsRate(const GpuSpec &g) { return g.peakFp32.value() / 2 * g.int32Rate * g.calibrationCompute; }

Seconds streamStart(const GpuSpec &g) {
  return std::max(Seconds(0), g.kernelFloor - g.kernelGap) + g.hbmLatency;
}

KernelCost combine(const GpuSpec &g, const Terms &terms, Flops flops, const Traffic &bytes, int64_t kernels) {
  // No kernel is shorter than the GPU's floor: a fixed latency of each launch.
  Seconds latency = std::max(terms.latency, g.kernelFloor * double(kernels));
  // Ties go to the earlier entry, so the order is part of the output.
  const std::pair<Seconds, Bound> all[] = {{terms.compute, Bound::Compute},
                                           {latency, Bound::Latency},
                                           {terms.smem, Bound::Smem},
                                           {terms.l2, Bound::L2},
                                           {terms.hbm, Bound::Hbm}};
  auto worst = *std::max_element(std::begin(all), std::end(all),
                                 [](const auto &a, const auto &b) { return a.first < b.first; });
  KernelCost c;
  c.time = worst.first;
  c.bound = worst.second;
  c.flops = flops;
  c.bytes = bytes;
  c.kernels = kernels;
  return c;
}

KernelCost launched(KernelCost c, Seconds perKernel) {
  Seconds launch = perKernel * double(c.kernels);
  if (launch > c.time) c.bound = Bound::Launch;
  c.time += launch;
  return c;
}

bool graphed(const StackSpec &stack, bool decodeStep) {
  return stack.cudaGraphs == CudaGraphs::All || (stack.cudaGraphs == CudaGraphs::Decode && decodeStep);
}

Seconds launchCost(const StackSpec &stack, bool decodeStep) {
  return graphed(stack, decodeStep) ? Seconds(0) : stack.launchOverhead;
}

KernelCost sequence(const KernelCost &a, const KernelCost &b) {
  KernelCost c;
  c.time = a.time + b.time;
  c.bound = a.time >= b.time ? a.bound : b.bound;
  c.flops = a.flops + b.flops;
  c.bytes = a.bytes;
  c.bytes += b.bytes;
  c.kernels = a.kernels + b.kernels;
  return c;
}

} // namespace rapid::cost
