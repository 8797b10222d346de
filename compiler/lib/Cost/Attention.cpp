//===- Attention.cpp - FlashAttention composite and naive attention -------===//
//
// FlashAttention (Dao 2022; FlashAttention-2, Dao 2023): one CTA per query
// block of one head streams the key/value blocks through shared memory and
// keeps the scores on chip; HBM sees Q, K, V and O once (plus dO, dQ, dK, dV
// and the FP32 dQ accumulator backward). Its time is a timeline of tensor
// math and softmax (vector) math per visited block, scheduled on the SMs,
// against the smem, L2 and HBM terms. docs/model.md §3.
//===----------------------------------------------------------------------===//
#include "rapid/Cost/Attention.h"
#include "rapid/Cost/Pointwise.h"
#include "GemmDetail.h"

#include <algorithm>
#include <fmt/format.h>
#include <functional>
#include <queue>
#include <vector>

namespace rapid::cost {
namespace {

using detail::ceilDiv;

/// Per-score vector FLOPs: online softmax forward (scale, running max,
/// subtract, exp, running sum, convert, amortised rescale of O); backward
/// (recompute exp(S - lse), dP - D, multiply by P, two conversions).
constexpr double kFwdVectorFlops = 7, kBwdVectorFlops = 7;
/// Matrix products per visited block: S = QK^T, O += PV forward; S, dP,
/// dV, dK, dQ backward.
constexpr double kFwdGemms = 2, kBwdGemms = 5;
/// mma.sync's share of the wgmma peak on Hopper [FA3 §2.2].
constexpr double kMmaSyncShareOnWgmma = 2.0 / 3.0;
/// Special-function results (exp2, rcp, ...) per clock and SM on compute
/// capability 8.0-9.0 (CUDA C++ Programming Guide, throughput table).
constexpr double kSfuPerClock = 16;
/// Query rows per warp where a CTA's warps split its query block (the
/// FlashAttention-2 backward, FlashAttention-3's warpgroups of four).
constexpr int64_t kRowsPerWarp = 16;
/// FlashAttention-2's forward runs 4 warps a CTA [FA2 §3.3], each thread
/// with up to 255 registers: two CTAs share an SM's 64K registers.
constexpr int64_t kFlash2FwdWarps = 4, kFlash2FwdCtasPerSm = 2;
/// The share of a CTA's registers FlashAttention-2 gives its accumulators.
constexpr double kFlash2AccumulatorShare = 0.75;

struct Blocks {
  int64_t q = 0, kv = 0;
  int64_t ctasPerSm = 1; ///< CTAs resident on one SM at once
  int64_t warps = 0;     ///< warps a CTA (each reads the K/V tiles from smem)
};

/// The largest blocks whose on-chip state fits `ctas` CTAs per SM: the FP32
/// accumulators in at most `regShare` of the register file (the rest holds
/// fragments and addresses), the operand tiles in its share of shared
/// memory. Forward keeps S and O in registers and Q, K, V in smem; backward
/// keeps S, dP, dK and dV in registers and Q, dO, K, V and dS in smem.
Blocks fitBlocks(const GpuSpec &g, const AttentionShape &s, Pass pass, int64_t ctas, double regShare) {
  double d = bytesOf(s.dtype), dh = double(s.headDim);
  bool fwd = pass == Pass::Forward;
  for (int64_t q : {128, 64, 32})
    for (int64_t kv : {128, 64, 32}) {
      double scores = double(q * kv);
      double regs = fwd ? (scores + double(q) * dh) * 4 : (2 * scores + 2 * double(kv) * dh) * 4;
      double smem = fwd ? double(q + 2 * kv) * dh * d : (double(2 * q + 2 * kv) * dh + scores) * d;
      if (regs <= g.registersPerSm.value() * regShare && smem * double(ctas) <= g.smemPerSm.value())
        return {std::min(q, s.seq), std::min(kv, s.seq), ctas, std::max<int64_t>(1, q / kRowsPerWarp)};
    }
  return {}; // no block fits: FlashAttention cannot run this head size
}

/// FlashAttention-2's forward keeps two 4-warp CTAs on an SM where their
/// accumulators fit: each CTA's take three quarters of its half of the
/// register file (Br = 128, Bc = 64 for dh = 128, the kernel's own choice on
/// A100 and H100). Its backward (8 warps) and FlashAttention-3 (warpgroups)
/// run one CTA per SM, accumulators in half the register file.
Blocks chooseBlocks(const GpuSpec &g, const AttentionShape &s, Pass pass) {
  if (s.kernel == AttentionKernel::Flash2 && pass == Pass::Forward) {
    Blocks b = fitBlocks(g, s, pass, kFlash2FwdCtasPerSm, kFlash2AccumulatorShare / double(kFlash2FwdCtasPerSm));
    if (b.q != 0) {
      b.warps = kFlash2FwdWarps;
      return b;
    }
  }
  return fitBlocks(g, s, pass, 1, 0.5);
}

/// Key blocks that query block `r` visits.
int64_t visited(const AttentionShape &s, Blocks b, int64_t r) {
  int64_t tc = ceilDiv(s.seq, b.kv);
  if (!s.causal) return tc;
  int64_t lastRow = std::min((r + 1) * b.q, s.seq) - 1;
  return std::min(lastRow / b.kv + 1, tc);
}

struct FlashWork {
  Blocks b;
  int64_t active = 0, total = 0, longest = 0;
};

FlashWork flashWork(const GpuSpec &g, const AttentionShape &s, Pass pass) {
  FlashWork w;
  w.b = chooseBlocks(g, s, pass);
  int64_t tr = ceilDiv(s.seq, w.b.q);
  w.total = tr * ceilDiv(s.seq, w.b.kv);
  w.active = s.causal ? causalActiveBlocks(s.seq, w.b.q, w.b.kv) : w.total;
  w.longest = visited(s, w.b, tr - 1);
  return w;
}

/// When the last CTA of a FlashAttention-2 grid finishes, in units of one
/// block's time on a whole SM: CTAs are dispatched in grid order to the first
/// free of `ctasPerSm` slots per SM, and co-resident CTAs share their SM's
/// pipes. The forward's CTA is a query block (query block fastest, then
/// batch and head), so under a causal mask each head's heaviest CTA comes
/// last and the grid ends in a tail the mean misses; the backward's is a key
/// block, whose causal work shrinks along the grid (heaviest first).
double dispatchGrid(const GpuSpec &g, const AttentionShape &s, const Blocks &b, Pass pass) {
  bool fwd = pass == Pass::Forward;
  int64_t tq = ceilDiv(s.seq, b.q), tkv = ceilDiv(s.seq, b.kv);
  int64_t perHead = fwd ? tq : tkv, inner = fwd ? tkv : tq, heads = s.batch * s.heads;
  int64_t slots = g.smCount * b.ctasPerSm;
  double share = double(b.ctasPerSm);
  if (!s.causal) // equal CTAs: whole waves
    return double(ceilDiv(perHead * heads, slots)) * double(inner) * share;
  auto work = [&](int64_t i) { return fwd ? visited(s, b, i) : tq - i * b.kv / b.q; };
  // Only the last waves shape the tail: the heads before the last `replay`
  // (64 waves of CTAs, enough for the slots to fall out of step as they do
  // in a long grid) are spread evenly, which keeps a long grid cheap.
  int64_t replay = std::min(heads, ceilDiv(64 * slots, perHead));
  double headWork = 0;
  for (int64_t i = 0; i < perHead; ++i) headWork += double(work(i));
  double start = double(heads - replay) * headWork * share / double(slots);
  std::priority_queue<double, std::vector<double>, std::greater<>> free;
  for (int64_t i = 0; i < slots; ++i) free.push(start);
  double end = start;
  for (int64_t h = 0; h < replay; ++h)
    for (int64_t i = 0; i < perHead; ++i) {
      double done = free.top() + double(work(i)) * share;
      free.pop();
      free.push(done);
      end = std::max(end, done);
    }
  return end;
}

Seconds flashTimeline(const GpuSpec &g, const AttentionShape &s, const FlashWork &w, Pass pass) {
  double sms = double(g.smCount);
  double tensorPerSm = mathRate(g, s.dtype).value() / sms, vectorPerSm = mathRate(g, DType::FP32).value() / sms;
  double intPerSm = intOpsRate(g) / sms;
  double scores = double(w.b.q * w.b.kv);
  double gemms = pass == Pass::Forward ? kFwdGemms : kBwdGemms;
  double vector = pass == Pass::Forward ? kFwdVectorFlops : kBwdVectorFlops;
  // A block's softmax runs between its matrix products and their times add.
  // FlashAttention-3's ping-pong of two warpgroups [FA3 §3.1-3.2] would hide
  // some of it; cuDNN's kernel, the one measured (docs/model.md §3.1), does
  // not. FlashAttention-2 issues Ampere's mma.sync, which reaches about 2/3
  // of the peak of tensor cores built for wgmma [FA3 §2.2].
  if (s.kernel == AttentionKernel::Flash2 && flash3Runs(g)) tensorPerSm *= kMmaSyncShareOnWgmma;
  Seconds matrix(gemms * 2 * scores * double(s.headDim) / tensorPerSm);
  // The softmax's FP32 math, its exponentials on the special-function units
  // (16 a clock per SM [CUDA]) and dropout's random numbers on the integer
  // units (the same numbers again backward: the kernels keep the generator's
  // seed and offset, not the mask) run on separate pipes.
  double sfuPerSm = kSfuPerClock * g.clock.value() * g.calibrationCompute;
  Seconds softmax = std::max(Seconds(vector * scores / vectorPerSm), Seconds(scores / sfuPerSm));
  if (s.dropout) softmax = std::max(softmax, Seconds(kDropoutOpsPerElement * scores / intPerSm));
  return (matrix + softmax) * (double(w.active * s.batch * s.heads) / sms);
}

/// How much longer than a perfectly balanced spread of the blocks over the
/// SMs the grid takes: FlashAttention-2's grid dispatched CTA by CTA, or
/// FlashAttention-3's persistent scheduler, which hands out whole waves of
/// equal shares, never shorter than the longest CTA. It stretches every
/// resource an SM owns (its pipes and shared memory), not L2 or HBM.
double imbalance(const GpuSpec &g, const AttentionShape &s, const FlashWork &w, Pass pass) {
  double sms = double(g.smCount), blocksAll = double(w.active * s.batch * s.heads);
  if (s.kernel == AttentionKernel::Flash2) return dispatchGrid(g, s, w.b, pass) / (blocksAll / sms);
  double ctas = double(s.batch * s.heads * ceilDiv(s.seq, w.b.q));
  double perSm = std::ceil(ctas / sms) * (blocksAll / ctas);
  return std::max(perSm, double(w.longest)) / (blocksAll / sms);
}

Traffic flashTraffic(const GpuSpec &g, const AttentionShape &s, const FlashWork &w, Pass pass) {
  double d = bytesOf(s.dtype), dh = double(s.headDim), bh = double(s.batch * s.heads);
  double qBytes = bh * double(s.seq) * dh * d;                    // Q, O, dO, dQ: one each
  double kvBytes = double(s.batch * s.kvHeads * s.seq) * dh * d;  // K or V
  double lse = bh * double(s.seq) * 4;                            // FP32 row statistics
  double visits = double(w.active) * bh;
  double kvTile = double(w.b.kv) * dh * d, qTile = double(w.b.q) * dh * d;
  Traffic t;
  // Operand tiles are read from shared memory once per warp (mma.sync,
  // FlashAttention-2) or once per warpgroup of four (wgmma, FlashAttention-3).
  int64_t warps = w.b.warps;
  if (s.kernel == AttentionKernel::Flash3) warps = std::max<int64_t>(1, warps / detail::kWarpsPerGroup);
  if (pass == Pass::Forward) {
    t.hbm = Bytes(2 * qBytes + 2 * kvBytes + lse);
    t.l2 = Bytes(visits * 2 * kvTile + 2 * qBytes + lse);
    t.smem = Bytes(visits * 2 * kvTile * double(1 + warps));
  } else {
    // The main kernel reads Q, K, V, dO, lse and D and writes dK and dV; it
    // accumulates dQ in FP32 with atomics in L2 (read + write per visited
    // block), which reach HBM once. Its neighbours are bwdSideBytes.
    double dqAccum = bh * double(s.seq) * dh * 4;
    t.hbm = Bytes(2 * qBytes + 4 * kvBytes + 2 * lse + dqAccum);
    t.l2 = Bytes(visits * (2 * qTile + 2 * double(w.b.q) * dh * 4) + t.hbm.value());
    t.smem = Bytes(visits * (2 * qTile + 2 * kvTile) * double(1 + warps));
  }
  // K and V are re-read by every query block; only the heads in flight at
  // once must stay in L2, and what exceeds it is fetched again.
  double inFlightHeads = std::max(1.0, double(g.smCount) / double(ceilDiv(s.seq, w.b.q)));
  double workingSet = inFlightHeads * 2 * double(s.seq) * dh * d;
  double miss = std::clamp((workingSet - g.l2Capacity.value()) / workingSet, 0.0, 1.0);
  t.hbm += Bytes(miss * visits * 2 * kvTile);
  return t;
}

/// The backward's two kernels around the main one [FA2, FA3]: the first
/// computes D = rowsum(dO * O) and zeroes the FP32 dQ accumulator, the last
/// converts it to dQ. Each streams HBM, and neither overlaps the main
/// kernel (one stream, one after the other).
std::pair<Bytes, Bytes> bwdSideBytes(const AttentionShape &s) {
  double elems = double(s.batch * s.heads * s.seq * s.headDim), d = bytesOf(s.dtype);
  double rows = double(s.batch * s.heads * s.seq) * 4;
  return {Bytes(elems * (2 * d + 4) + rows), Bytes(elems * (4 + d))};
}

KernelCost streamKernel(const GpuSpec &g, Bytes bytes) {
  Terms t;
  t.hbm = bytes / hbmRate(g);
  Traffic traffic;
  traffic.hbm = bytes;
  return combine(g, t, Flops(0), traffic, 1);
}

GemmShape batched(const AttentionShape &s, int64_t m, int64_t k, int64_t n) {
  return GemmShape{m, k, n, s.batch * s.heads, s.dtype};
}

} // namespace

int64_t causalActiveBlocks(int64_t seq, int64_t blockQ, int64_t blockKv) {
  int64_t tr = ceilDiv(seq, blockQ), tc = ceilDiv(seq, blockKv), n = 0;
  for (int64_t r = 0; r < tr; ++r)
    n += std::min((std::min((r + 1) * blockQ, seq) - 1) / blockKv + 1, tc);
  return n;
}

bool flash3Runs(const GpuSpec &g) { return g.tensorCoreOperands == TensorCoreOperands::Shared; }

std::string flashAttentionProblem(const GpuSpec &g, int64_t headDim, DType t, AttentionKernel kernel) {
  if (kernel == AttentionKernel::Flash3 && !flash3Runs(g))
    return fmt::format("FlashAttention-3 (attention = flash3) runs on wgmma, but gpu '{}' has tensor_core.operands = "
                       "registers (Hopper and Blackwell have shared)",
                       g.name);
  AttentionShape s{1, 128, 1, 1, headDim, false, false, t, kernel};
  for (Pass pass : {Pass::Forward, Pass::Backward})
    if (chooseBlocks(g, s, pass).q == 0)
      return fmt::format("FlashAttention cannot hold a head of head_dim {} on gpu '{}': no query and key block fits "
                         "its registers and shared memory ({} pass); turn flash_attention off",
                         headDim, g.name, pass == Pass::Forward ? "forward" : "backward");
  return "";
}

AttentionCost flashAttention(const GpuSpec &g, const AttentionShape &s, Pass pass) {
  if (chooseBlocks(g, s, pass).q == 0 || (s.kernel == AttentionKernel::Flash3 && !flash3Runs(g)))
    return AttentionCost{};
  FlashWork w = flashWork(g, s, pass);
  Traffic bytes = flashTraffic(g, s, w, pass);
  Terms terms;
  double stretch = imbalance(g, s, w, pass);
  terms.compute = flashTimeline(g, s, w, pass) * stretch;
  terms.smem = bytes.smem / smemRate(g) * stretch;
  terms.l2 = bytes.l2 / l2Rate(g);
  terms.hbm = bytes.hbm / hbmRate(g);
  // Useful FLOPs: the unmasked half of the diagonal blocks is not counted.
  double visible = s.causal ? 0.5 * double(s.seq) * double(s.seq + 1) : double(s.seq) * double(s.seq);
  double gemms = pass == Pass::Forward ? kFwdGemms : kBwdGemms;
  Flops flops(gemms * 2 * visible * double(s.headDim) * double(s.batch * s.heads));
  AttentionCost c;
  static_cast<KernelCost &>(c) = combine(g, terms, flops, bytes, 1);
  if (pass == Pass::Backward) {
    auto [pre, post] = bwdSideBytes(s);
    static_cast<KernelCost &>(c) = sequence(sequence(streamKernel(g, pre), c), streamKernel(g, post));
  }
  c.blockQ = w.b.q;
  c.blockKv = w.b.kv;
  c.ctasPerSm = w.b.ctasPerSm;
  c.imbalance = stretch;
  c.activeBlocks = w.active;
  c.totalBlocks = w.total;
  c.terms = terms;
  return c;
}

AttentionCost naiveAttention(const GpuSpec &g, const AttentionShape &s, Pass pass) {
  int64_t sq = s.seq, dh = s.headDim;
  // The scores are materialised in full; a causal mask is applied by the
  // softmax kernel, which still reads and writes every score.
  int64_t scores = s.batch * s.heads * sq * sq;
  AttentionCost c;
  if (pass == Pass::Forward) {
    c.scores = gemmCost(g, batched(s, sq, dh, sq));                                    // S = Q K^T
    c.softmax = pointwiseCost(g, pointwiseWork(PointwiseOp::Softmax, scores, s.dtype, pass));
    c.output = gemmCost(g, batched(s, sq, sq, dh));                                    // O = P V
  } else {
    c.output = sequence(gemmCost(g, batched(s, sq, sq, dh)),                           // dV = P^T dO
                        gemmCost(g, batched(s, sq, dh, sq)));                          // dP = dO V^T
    c.softmax = pointwiseCost(g, pointwiseWork(PointwiseOp::Softmax, scores, s.dtype, pass));
    c.scores = sequence(gemmCost(g, batched(s, sq, sq, dh)),                           // dQ = dS K
                        gemmCost(g, batched(s, sq, sq, dh)));                          // dK = dS^T Q
  }
  static_cast<KernelCost &>(c) = sequence(sequence(c.scores, c.softmax), c.output);
  return c;
}

KernelCost decodeAttention(const GpuSpec &g, const KernelCost &memory, int64_t blocks, int64_t tokens,
                           double cyclesPerToken, Seconds start) {
  if (cyclesPerToken <= 0 || blocks <= 0) return memory;
  // A block cannot split its cache, so one sequence uses only as many SMs as
  // it has heads; past one block per SM the SMs share the blocks' passes.
  double passes = std::max(1.0, double(blocks) / double(g.smCount));
  Seconds serial(double(tokens) * cyclesPerToken * passes / g.clock.value());
  // The block's query loads, pipeline fill and epilogue do not overlap its
  // own stream, whichever bound that stream meets.
  KernelCost c = memory;
  c.time = std::max(serial, memory.time) + start;
  if (serial > memory.time) c.bound = Bound::Latency;
  return c;
}

int64_t decodeAttentionBlocks(const GpuSpec &g, const StackSpec &stack, int64_t pairs, int64_t group) {
  int64_t lo = stack.decodeAttentionGroupedMin, hi = stack.decodeAttentionGroupedMax;
  if (lo <= 0 || group < lo || (hi > 0 && group > hi)) return pairs;
  // TensorRT-LLM's heuristic: a grouped block does a group's work, so with
  // few of them the per-head kernel spreads the same work over more SMs.
  int64_t grouped = pairs / group;
  return double(grouped) >= stack.decodeAttentionGroupedFill * double(g.smCount) ? grouped : pairs;
}

} // namespace rapid::cost
