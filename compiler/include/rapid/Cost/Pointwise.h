//===- Pointwise.h - Bandwidth-bound kernels --------------------*- C++ -*-===//
//
// Norms, softmax, activations, residual adds and the optimizer step move
// every element through HBM a fixed number of times and do a few FLOPs on
// the vector (non-tensor) units; a roofline over those two resources plus
// the launches is their time (docs/model.md §4).
//===----------------------------------------------------------------------===//
#pragma once

#include "rapid/Cost/Attention.h"

#include <optional>
#include <string_view>

namespace rapid::cost {

enum class PointwiseOp { LayerNorm, RmsNorm, Softmax, Gelu, SwiGlu, Residual, Adam };

std::string_view nameOf(PointwiseOp op);
std::optional<PointwiseOp> parsePointwiseOp(std::string_view name);
/// "layernorm, rmsnorm, ...": for diagnostics.
std::string_view pointwiseOpList();

/// What a kernel moves and computes.
struct PointwiseWork {
  Bytes bytes;
  Flops flops;
  int64_t kernels = 1;
  /// The operations are integer ones (a dropout mask's Philox draws), which
  /// run on the integer units at `int32_rate`, not on the FP32 lanes.
  bool integer = false;
  /// Instructions spent on operands' offsets (a kernel over strided views
  /// computes each element's from the strides): a floor at the issue rate.
  double indexInstructions = 0;
  /// The least time of each kernel (a strided kernel's dependent chain).
  Seconds latency{0};
};

/// The work of `op` over `elements` elements of `t` (Adam: parameters, with
/// FP32 master weights and moments as mixed-precision training keeps them).
PointwiseWork pointwiseWork(PointwiseOp op, int64_t elements, DType t, Pass pass);

/// How far a stack's row-reduction kernels (norms, softmax: a thread block
/// reads a row, reduces it, then writes it) fall short of the roofline
/// (docs/model.md §4.1). The defaults are the roofline itself.
struct RowReduction {
  double hbm = 1;                 ///< share of the calibrated HBM rate reached
  double instructionsPerFlop = 0; ///< issued per counted FLOP; 0: no issue floor
  Seconds latency{0};             ///< the least time of each kernel: a block's chain over one row
};

/// The stack's row-reduction kernel for `op`: its norm or softmax figures;
/// the roofline for every other op.
RowReduction rowReduction(const StackSpec &stack, PointwiseOp op);

/// Roofline over HBM bandwidth and the FP32 vector peak, plus launches; a
/// row reduction also waits on its memory-level parallelism and its issue.
KernelCost pointwiseCost(const GpuSpec &g, const PointwiseWork &w, const RowReduction &r = {});

} // namespace rapid::cost
