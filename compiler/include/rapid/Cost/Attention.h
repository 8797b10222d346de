//===- Attention.h - FlashAttention and naive attention costs --*- C++ -*-===//
//
// Self-attention of `batch` sequences of `seq` tokens with `heads` query
// heads of `headDim` (grouped: `kvHeads` key/value heads). FlashAttention is
// one fused kernel per pass whose on-chip tiling decides its traffic; naive
// attention materialises the seq x seq scores in HBM between a batched score
// GEMM, a softmax kernel and the output GEMM (docs/model.md §3).
//===----------------------------------------------------------------------===//
#pragma once

#include "rapid/Cost/Gemm.h"

#include <string>

namespace rapid::cost {

enum class Pass { Forward, Backward };

/// A dropout mask costs a Philox-4x32-10 draw per element (ten rounds of two
/// multiplies and a few xors make four numbers: about 18 integer operations
/// per element), a compare and a scale.
constexpr double kDropoutOpsPerElement = 20;

struct AttentionShape {
  int64_t batch = 1, seq = 0, heads = 0, kvHeads = 0, headDim = 0;
  bool causal = false;
  bool dropout = false; ///< dropout on the probabilities, inside the fused kernel
  DType dtype = DType::BF16;
  AttentionKernel kernel = AttentionKernel::Flash2; ///< which fused kernel (FlashAttention only)
};

struct AttentionCost : KernelCost {
  /// FlashAttention: the query and key/value block sizes and how many of the
  /// (query block, key block) pairs per head are computed (causal skips the
  /// blocks above the diagonal).
  int64_t blockQ = 0, blockKv = 0;
  int64_t activeBlocks = 0, totalBlocks = 0;
  /// CTAs resident on an SM at once, and how much longer than an even
  /// spread of the blocks over the SMs the grid takes (its waves and, under
  /// a causal mask, its tail of long CTAs).
  int64_t ctasPerSm = 1;
  double imbalance = 1;
  Terms terms;
  /// Naive attention: the score GEMM, the softmax and the output GEMM (for
  /// the backward pass, the sums of the corresponding backward kernels).
  KernelCost scores, softmax, output;
};

/// (query block, key block) pairs of one head that a causal mask leaves
/// partly or wholly visible: row block r sees key blocks up to its last row.
int64_t causalActiveBlocks(int64_t seq, int64_t blockQ, int64_t blockKv);

/// blockQ == 0 in the result: no block of the head fits on chip (the caller
/// falls back to naive attention or reports it). Flash3 needs a GPU whose
/// tensor cores read shared memory (`flash3Runs`).
AttentionCost flashAttention(const GpuSpec &g, const AttentionShape &s, Pass pass);
bool flash3Runs(const GpuSpec &g);
/// Why `kernel` cannot run heads of `headDim` in `t` on `g` (no block fits
/// its registers and shared memory forward or backward; FlashAttention-3
/// without wgmma), or "" when it can.
std::string flashAttentionProblem(const GpuSpec &g, int64_t headDim, DType t, AttentionKernel kernel);
AttentionCost naiveAttention(const GpuSpec &g, const AttentionShape &s, Pass pass);

/// Decode attention over a KV cache of `tokens` per sequence, `blocks`
/// (sequence, query head) pairs: the cache read at HBM's rate (`memory`, the
/// op's pointwise cost) or, for a kernel of one thread block per pair
/// (`cyclesPerToken` > 0), each block's serial pass over its cache, as
/// many blocks at a time as there are SMs, plus each block's `start`
/// (docs/model.md §3.3).
KernelCost decodeAttention(const GpuSpec &g, const KernelCost &memory, int64_t blocks, int64_t tokens,
                           double cyclesPerToken, Seconds start);
/// The thread blocks `stack`'s decode kernel runs for `pairs` (sequence,
/// query head) pairs whose query heads share key/value heads in groups of
/// `group`: one a pair, or one a (sequence, key/value head) where the stack's
/// grouped kernel takes the group and fills enough SMs (docs/model.md §3.3).
int64_t decodeAttentionBlocks(const GpuSpec &g, const StackSpec &stack, int64_t pairs, int64_t group);

} // namespace rapid::cost
