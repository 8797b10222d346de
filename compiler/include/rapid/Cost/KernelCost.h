//===- KernelCost.h - What the cost model says about one kernel -*- C++ -*-===//
//
// Every cost function of the compute model returns a KernelCost: the time, the
// work and bytes per memory level behind it, and which resource set the time.
// Formulas and sources: docs/model.md.
//===----------------------------------------------------------------------===//
#pragma once

#include "rapid/Spec/Specs.h"
#include "rapid/Support/Units.h"

#include <string_view>

namespace rapid::cost {

/// The resource whose time is the largest term of the roofline.
enum class Bound { Compute, Latency, Smem, L2, Hbm, Launch };

std::string_view nameOf(Bound b);

/// Bytes that cross each level of the memory hierarchy.
struct Traffic {
  Bytes smem, l2, hbm;
  Traffic &operator+=(const Traffic &o) {
    smem += o.smem;
    l2 += o.l2;
    hbm += o.hbm;
    return *this;
  }
};

/// The time of each resource if it alone limited the kernel.
struct Terms {
  Seconds compute, latency, smem, l2, hbm;
};

struct KernelCost {
  Seconds time;
  Bound bound = Bound::Launch;
  Flops flops;   ///< useful math (padding excluded)
  Traffic bytes;
  int64_t kernels = 1; ///< launches the time includes
};

/// Achieved bandwidths: the declared peaks times the declared calibration.
BytesPerSecond hbmRate(const GpuSpec &g);
/// What a GEMM's operands stream at (calibration.gemm_hbm): the library's
/// kernels, measured apart from the elementwise ones of hbmRate.
BytesPerSecond gemmHbmRate(const GpuSpec &g);
BytesPerSecond l2Rate(const GpuSpec &g);
BytesPerSecond smemRate(const GpuSpec &g);
/// Achieved math rate of the whole GPU for `t` (calibration.compute applied).
FlopsPerSecond mathRate(const GpuSpec &g, DType t);
/// Achieved 32-bit integer operations per second (`int32_rate` of the FP32 lanes).
double intOpsRate(const GpuSpec &g);
/// Achieved thread-instructions issued per second (128 a clock per SM).
double issueRate(const GpuSpec &g);
/// What no bound of a kernel's body overlaps: its own start and end
/// (kernel_floor less the gap a graph adds after it) and its first loads'
/// latency (docs/model.md §2.5, §4): a GEMM's stream and a pointwise
/// kernel's every bound come after it.
Seconds streamStart(const GpuSpec &g);

/// The roofline: the slowest resource sets the time of the `kernels`
/// kernels on the GPU, never below the GPU's `kernel_floor` each (a
/// latency). Launching them is the software's cost: `launched`.
KernelCost combine(const GpuSpec &g, const Terms &terms, Flops flops, const Traffic &bytes, int64_t kernels);

/// `c` with the host's launches added, `perKernel` each (a stack's
/// launch_overhead; 0 in CUDA graphs): serial with the kernel body, as
/// RAPID-LLM's O. The bound becomes `launch` when they outweigh the body.
KernelCost launched(KernelCost c, Seconds perKernel);
/// Whether `stack` replays a kernel from a CUDA graph (in a decode step or not).
bool graphed(const StackSpec &stack, bool decodeStep);

/// What `stack` pays to launch one kernel: its launch_overhead, or nothing
/// for a kernel it replays from a CUDA graph (every kernel with `all`; those
/// of decode steps with `decode`).
Seconds launchCost(const StackSpec &stack, bool decodeStep);

/// The sum of two kernels run one after the other; the bound is the one of
/// the longer part.
KernelCost sequence(const KernelCost &a, const KernelCost &b);

} // namespace rapid::cost
