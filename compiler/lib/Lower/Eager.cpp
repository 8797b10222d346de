//===- Eager.cpp - The small kernels of a plain PyTorch module ------------===//
//
// Under `fused_kernels = off` a layer runs as a plain PyTorch module does
// (Hugging Face's Llama; tools/calibrate/steps.py): rotary embedding as
// rotate-half arithmetic on q and k, grouped K and V repeated for every
// query head before attention (repeat_kv), the new token's K and V copied
// into the cache, and in backward the autograd kernels of each of those and
// of splitting one projection's output into views. Most of these kernels
// index views that are not contiguous (transposed heads, a broadcast cos
// table, expanded or split tensors), so ATen runs them without vectorised
// loads and they are bound by the offsets they compute (`strided`, costed
// with the stack's `strided_instructions`). Kernel counts are per layer and
// from the profiles of steps_h*_kernels.csv (docs/lowering.md, "Eager
// modules").
//===----------------------------------------------------------------------===//
#include "rapid/Lower/Lower.h"

namespace rapid::lower {

Op overStridedViews(Op op, double elems) {
  op.strided = true;
  op.shape.m = int64_t(elems);
  return op;
}

namespace {

/// `elems` elements in `kernels` launches (one piece for q and k each, ...).
Op piece(OpKind kind, const char *name, double elems, double flopsPerElem, double accessesPerElem, const Shard &sh,
         int32_t kernels) {
  Op op = pointwise(kind, name, elems, flopsPerElem, accessesPerElem, sh.d);
  op.kernels = kernels;
  return op;
}

/// The same over strided views.
Op strided(OpKind kind, const char *name, double elems, double flopsPerElem, double accessesPerElem, const Shard &sh,
           int32_t kernels) {
  return overStridedViews(piece(kind, name, elems, flopsPerElem, accessesPerElem, sh, kernels), elems);
}

/// Elements of q and of k on this rank: rotary turns both.
double qElems(const Shard &sh) { return double(sh.tokens) * double(sh.headsLocal) * double(sh.model.headDim); }
double kElems(const Shard &sh) { return double(sh.tokens) * double(sh.kvLocal); }

/// Query heads per key/value head on this rank.
bool grouped(const Shard &sh) { return sh.kvLocal < sh.headsLocal * sh.model.headDim; }

} // namespace

void rotaryForward(Chain &c, const Shard &sh) {
  double n = qElems(sh) + kElems(sh);
  if (sh.fused) { // one kernel reads q and k and writes them turned
    c.add(pointwise(OpKind::Rotary, "attn.rotary", n, 3, 2, sh.d));
    return;
  }
  // x * cos + cat(-x2, x1) * sin, for q and for k: five kernels each.
  c.add(strided(OpKind::Rotary, "attn.rotary.cos", n, 1, 2, sh, 2));
  c.add(strided(OpKind::Rotary, "attn.rotary.neg", n / 2, 1, 2, sh, 2));
  c.add(strided(OpKind::Rotary, "attn.rotary.cat", n, 0, 2, sh, 2));
  c.add(strided(OpKind::Rotary, "attn.rotary.sin", n, 1, 2, sh, 2));
  c.add(strided(OpKind::Rotary, "attn.rotary.add", n, 1, 3, sh, 2));
}

void rotaryBackward(Chain &c, const Shard &sh) {
  double n = qElems(sh) + kElems(sh);
  if (sh.fused) {
    c.add(pointwise(OpKind::Rotary, "attn.rotary.bwd", n, 3, 2, sh.d));
    return;
  }
  // Autograd, for q and for k: the gradient times cos and times sin; the
  // cat's halves, one negated; each half scattered into a zeroed full-size
  // tensor (slice backward: a fill and a copy); the three parts added.
  c.add(strided(OpKind::Rotary, "attn.rotary.cos.bwd", n, 1, 2, sh, 2));
  c.add(strided(OpKind::Rotary, "attn.rotary.sin.bwd", n, 1, 2, sh, 2));
  c.add(strided(OpKind::Rotary, "attn.rotary.neg.bwd", n / 2, 1, 2, sh, 2));
  c.add(piece(OpKind::Rotary, "attn.rotary.zero.bwd", 2 * n, 0, 1, sh, 4));
  c.add(strided(OpKind::Rotary, "attn.rotary.slice.bwd", n, 0, 2, sh, 4));
  c.add(strided(OpKind::Rotary, "attn.rotary.sum.bwd", n, 1, 3, sh, 2));
  c.add(piece(OpKind::Rotary, "attn.rotary.accumulate.bwd", n, 1, 3, sh, 2));
}

void repeatKv(Chain &c, const Shard &sh, bool backward) {
  if (sh.fused || sh.decode || !sh.attention || !grouped(sh)) return;
  // K and V expanded to every query head and copied, or their gradients
  // summed back over each group (a reduction over contiguous rows).
  double q = qElems(sh) * double(sh.kvTokens) / double(sh.s), k = kElems(sh) * double(sh.kvTokens) / double(sh.s);
  Op op = backward ? piece(OpKind::Copy, "attn.repeat_kv.bwd", 2 * q, 1, 1, sh, 2)
                   : strided(OpKind::Copy, "attn.repeat_kv", 2 * q, 0, 1, sh, 2);
  op.bytes = 2 * (q + k) * sh.d;
  c.add(op);
}

void cacheWrite(Chain &c, const Shard &sh) {
  if (sh.fused || !sh.decode || !sh.attention) return;
  // The new token's K and V copied into their slots of the cache tensors.
  c.add(strided(OpKind::Copy, "attn.kv.write", 2 * kElems(sh), 0, 2, sh, 2));
}

void splitGrad(Chain &c, const Shard &sh, const char *name, double elems) {
  if (sh.fused) return;
  // The views' gradients gathered into the projection's whole output
  // gradient (split's and chunk's backward: one cat, contiguous).
  c.add(pointwise(OpKind::Copy, name, elems, 0, 2, sh.d));
}

} // namespace rapid::lower
