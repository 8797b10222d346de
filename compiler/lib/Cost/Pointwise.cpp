//===- Pointwise.cpp - Work of norms, activations, softmax and Adam -------===//
//
// Per-element bytes and FLOPs of each op, counted from the operations the
// fused kernels do (docs/model.md §4 lists the derivations). Bytes count one
// read or write of an element of the activation type; Adam's state is FP32.
//===----------------------------------------------------------------------===//
#include "rapid/Cost/Pointwise.h"

#include <algorithm>
#include <array>

namespace rapid::cost {
namespace {

/// Element reads+writes, FLOPs per element and kernel launches of one pass.
struct PassWork {
  double accesses, flops;
  int64_t kernels;
};
struct OpRow {
  PointwiseOp op;
  std::string_view name;
  PassWork fwd, bwd;
};

// fwd: read x, write y; bwd: read x (or y) and dy, write dx. A norm's
// backward is two kernels, each reading x and dy: the input gradient, and
// the scale (and bias) gradient reduced over tokens (PyTorch's
// layer_norm_backward and GammaBetaBackward; apex's FusedLayerNorm splits
// the same reads over three launches). SwiGLU counts
// per output element: it reads gate and up (2) and writes 1; its backward
// reads gate, up, dy and writes both input gradients.
constexpr std::array<OpRow, 6> kOps = {{
    {PointwiseOp::LayerNorm, "layernorm", {2, 7, 1}, {5, 14, 2}},
    {PointwiseOp::RmsNorm, "rmsnorm", {2, 4, 1}, {5, 9, 2}},
    {PointwiseOp::Softmax, "softmax", {2, 5, 1}, {3, 4, 1}},
    {PointwiseOp::Gelu, "gelu", {2, 10, 1}, {3, 20, 1}},
    {PointwiseOp::SwiGlu, "swiglu", {3, 5, 1}, {5, 12, 1}},
    {PointwiseOp::Residual, "residual", {3, 1, 1}, {3, 1, 1}},
}};

// Adam with FP32 master weights: read master, grad, m, v (4 B each), write
// master, m, v, and the model-dtype copy of the weight; 14 FLOPs a parameter
// (two moment updates, bias corrections, sqrt, divide, decay, update).
constexpr double kAdamFp32Bytes = 7 * 4, kAdamFlops = 14;

} // namespace

std::string_view nameOf(PointwiseOp op) {
  if (op == PointwiseOp::Adam) return "adam";
  for (const OpRow &r : kOps)
    if (r.op == op) return r.name;
  return "?";
}

std::optional<PointwiseOp> parsePointwiseOp(std::string_view name) {
  if (name == "adam") return PointwiseOp::Adam;
  for (const OpRow &r : kOps)
    if (r.name == name) return r.op;
  return std::nullopt;
}

std::string_view pointwiseOpList() { return "layernorm, rmsnorm, softmax, gelu, swiglu, residual, adam"; }

PointwiseWork pointwiseWork(PointwiseOp op, int64_t elements, DType t, Pass pass) {
  double e = double(elements), d = bytesOf(t);
  if (op == PointwiseOp::Adam)
    return {Bytes(e * (kAdamFp32Bytes + d)), Flops(e * kAdamFlops), 1};
  const OpRow &r = *std::find_if(kOps.begin(), kOps.end(), [&](const OpRow &x) { return x.op == op; });
  const PassWork &w = pass == Pass::Forward ? r.fwd : r.bwd;
  return {Bytes(e * w.accesses * d), Flops(e * w.flops), w.kernels};
}

RowReduction rowReduction(const StackSpec &stack, PointwiseOp op) {
  switch (op) {
  case PointwiseOp::LayerNorm: case PointwiseOp::RmsNorm:
    return {stack.reductionHbm, stack.reductionNormInstructions, stack.reductionNormLatency};
  case PointwiseOp::Softmax: return {stack.reductionHbm, stack.reductionSoftmaxInstructions};
  default: return {};
  }
}

KernelCost pointwiseCost(const GpuSpec &g, const PointwiseWork &w, const RowReduction &r) {
  Terms terms;
  // Elementwise math runs on the FP32 vector units, not the tensor cores (a
  // mask's random numbers on the integer units); a reduction kernel issues
  // many instructions besides its FLOPs, at four warp instructions a clock
  // per SM.
  Seconds math = w.integer ? Seconds(w.flops.value() / intOpsRate(g)) : w.flops / mathRate(g, DType::FP32);
  // Each kernel starts as a GEMM's does, its own start and its first loads'
  // latency, and whichever bound its body meets comes after: the SMs issue
  // nothing of the body before its operands arrive.
  Seconds start = streamStart(g) * double(w.kernels);
  terms.compute = start + std::max({math, Seconds(w.flops.value() * r.instructionsPerFlop / issueRate(g)),
                                    Seconds(w.indexInstructions / issueRate(g))});
  terms.hbm = start + w.bytes / (hbmRate(g) * r.hbm);
  // With few rows the kernel is one thread block's load, reduce, write.
  terms.latency = std::max(r.latency, w.latency) * double(w.kernels);
  Traffic bytes;
  bytes.hbm = w.bytes;
  bytes.l2 = w.bytes;
  return combine(g, terms, w.flops, bytes, w.kernels);
}

} // namespace rapid::cost
