//===- CostTest.cpp - Wave, occupancy and tile arithmetic of the cost model ===//
#include "rapid/Cost/Attention.h"
#include "rapid/Cost/Gemm.h"
#include "rapid/Cost/Pointwise.h"
#include "rapid/Cost/Power.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace rapid;
using namespace rapid::cost;

namespace {

/// A100-like numbers, written out so these tests do not depend on Sema.
GpuSpec testGpu() {
  GpuSpec g;
  g.name = "test";
  g.smCount = 108;
  g.clock = Hertz(1.41e9);
  g.peakBf16 = g.peakFp16 = FlopsPerSecond(312e12);
  g.peakFp32 = FlopsPerSecond(19.5e12);
  g.registersPerSm = Bytes(256 * 1024);
  g.smemPerSm = Bytes(164 * 1024);
  g.smemBandwidth = BytesPerSecond(108 * 1.41e9 * 128);
  g.l2Capacity = Bytes(40 * 1024 * 1024);
  g.l2Bandwidth = BytesPerSecond(5120 * 1.41e9);
  g.hbmBandwidth = BytesPerSecond(2039e9);
  g.hbmLatency = Seconds(500e-9);
  g.calibrationCompute = g.calibrationHbm = g.calibrationGemmHbm = g.calibrationL2 = g.calibrationNetwork = 1;
  return g;
}

void expectSchedule(const WaveSchedule &w, int64_t fullWaves, int64_t perSm, int64_t rounds, int64_t last) {
  EXPECT_EQ(w.fullWaves, fullWaves);
  EXPECT_EQ(w.perSm, perSm);
  EXPECT_EQ(w.rounds, rounds);
  EXPECT_EQ(w.lastRoundCtas, last);
}

CtaTile tile(int64_t m, int64_t n, int64_t k) { return CtaTile{m, n, k, 0, std::max<int64_t>(4, m * n / 4096)}; }

} // namespace

TEST(Waves, FullWavesDivideEvenly) {
  WaveSchedule w = scheduleWaves(/*tiles=*/648, /*sms=*/108, /*ctasPerSm=*/3);
  EXPECT_DOUBLE_EQ(w.waves, 2.0);
  expectSchedule(w, /*fullWaves=*/2, /*perSm=*/6, /*rounds=*/2, /*last=*/3);
}

TEST(Waves, PartialLastWave) {
  // 1024 tiles on 108 SMs x 3: the busiest SM gets ceil(1024/108) = 10.
  WaveSchedule w = scheduleWaves(1024, 108, 3);
  EXPECT_NEAR(w.waves, 1024.0 / 324.0, 1e-12);
  expectSchedule(w, 4, 10, 4, 1);
}

TEST(Waves, FewerTilesThanSms) {
  expectSchedule(scheduleWaves(16, 108, 4), 1, 1, 1, 1);
}

TEST(Waves, NothingToSchedule) {
  expectSchedule(scheduleWaves(0, 108, 3), 0, 0, 0, 0);
}

TEST(Occupancy, RegistersLimit128x128) {
  // 128 threads x (128 accumulators + 40) registers = 84 KiB: 3 per SM,
  // as Nsight reports for cuBLAS's 128x128x32 kernels (12 warps).
  GpuSpec g = testGpu();
  EXPECT_DOUBLE_EQ(registersPerCta(tile(128, 128, 32)).value(), 128 * 168 * 4);
  Occupancy o = occupancy(g, tile(128, 128, 32), 3, DType::BF16);
  EXPECT_EQ(o.ctasPerSm, 3);
  EXPECT_EQ(o.limit, Occupancy::Registers);
}

TEST(Occupancy, SharedMemoryLimitsDeepPipelines) {
  GpuSpec g = testGpu();
  // 6 stages x (128 + 128) x 64 x 2 B = 192 KiB > 164 KiB: does not fit.
  EXPECT_DOUBLE_EQ(smemPerCta(tile(128, 128, 64), 6, DType::BF16).value(), 6 * 256 * 64 * 2);
  EXPECT_EQ(occupancy(g, tile(128, 128, 64), 6, DType::BF16).ctasPerSm, 0);
  Occupancy o = occupancy(g, tile(128, 128, 64), 4, DType::BF16);
  EXPECT_EQ(o.ctasPerSm, 1);
  EXPECT_EQ(o.limit, Occupancy::SharedMemory);
}

TEST(Occupancy, AccumulatorsThatWouldSpillAreRejected) {
  // 256x256 on 16 warps is 128 accumulators per thread: fits; but on
  // 4 warps it would need 512 per thread, beyond the 255-register limit.
  GpuSpec g = testGpu();
  CtaTile t{256, 256, 32, 0, 4};
  EXPECT_EQ(occupancy(g, t, 2, DType::BF16).ctasPerSm, 0);
}

TEST(Gemm, PartialWaveCostsAWholeRound) {
  // One tile more than the GPU holds at once adds a round to the busiest SM.
  GpuSpec g = testGpu();
  GemmShape full{128 * 108, 4096, 128 * 3, 1, DType::BF16};
  GemmShape plus{128 * 108 + 128, 4096, 128 * 3, 1, DType::BF16};
  GemmCost a = gemmCostWithTile(g, full, tile(128, 128, 32));
  GemmCost b = gemmCostWithTile(g, plus, tile(128, 128, 32));
  EXPECT_EQ(a.schedule.rounds, 1);
  EXPECT_EQ(b.schedule.rounds, 2);
  EXPECT_GT(b.time.value(), 1.2 * a.time.value());
}

TEST(Gemm, TimeIsMonotoneInWork) {
  GpuSpec g = testGpu();
  double last = 0;
  for (int64_t n : {1024, 2048, 4096, 8192}) {
    double t = gemmCost(g, GemmShape{n, n, n, 1, DType::BF16}).time.value();
    EXPECT_GT(t, last);
    last = t;
  }
}

TEST(Gemm, NeverFasterThanPeak) {
  GpuSpec g = testGpu();
  GemmCost c = gemmCost(g, GemmShape{8192, 8192, 8192, 1, DType::BF16});
  EXPECT_GE(c.time.value(), c.flops.value() / g.peakBf16.value());
  EXPECT_EQ(c.bound, Bound::Compute);
}

TEST(Gemm, WeightStreamsAtTheLibrarysRateNotTheElementwiseOne) {
  // calibration.gemm_hbm is what a GEMM's HBM stream runs at; the elementwise
  // kernels' calibration.hbm does not touch it (docs/model.md §1).
  GpuSpec g = testGpu();
  GemmShape decode{1, 14336, 4096, 1, DType::BF16};
  double at100 = gemmCost(g, decode).terms.hbm.value();
  g.calibrationHbm = 0.5;
  EXPECT_DOUBLE_EQ(gemmCost(g, decode).terms.hbm.value(), at100);
  g.calibrationGemmHbm = 0.5;
  double stream = 14336.0 * 4096 * 2 / 2039e9;
  EXPECT_NEAR(gemmCost(g, decode).terms.hbm.value() - at100, stream, 0.05 * stream);
}

TEST(Gemm, SkinnyGemmsSplitKAndStreamTheWeight) {
  // Decode's 1 x 14336 x 4096: 32 tiles of 128 columns leave most SMs idle,
  // so the search splits K and the weight streams at the HBM rate.
  GpuSpec g = testGpu();
  GemmShape decode{1, 14336, 4096, 1, DType::BF16};
  GemmCost c = gemmCost(g, decode);
  EXPECT_GT(c.tile.splits, 1);
  EXPECT_EQ(c.bound, Bound::Hbm);
  double weight = 14336.0 * 4096 * 2 / 2039e9;
  EXPECT_LT(c.time.value(), 1.1 * weight);
  // Without splitting, the same tiles are slower.
  CtaTile whole = c.tile;
  whole.splits = 1;
  EXPECT_GT(gemmCostWithTile(g, decode, whole).time.value(), c.time.value());
  // A shape with many tiles both ways fills the GPU without splitting.
  EXPECT_EQ(gemmCost(g, GemmShape{4096, 4096, 4096, 1, DType::BF16}).tile.splits, 1);
  // Unaligned operands (N = 1) have no multistage kernel: a GEMV runs them.
  EXPECT_TRUE(gemmCost(g, GemmShape{1024, 4096, 1, 1, DType::BF16}).gemv);
  EXPECT_FALSE(c.gemv); // decode's aligned 1 x K x N keeps its tensor-core split-K kernel
}

TEST(Gemm, GemvIsLatencyBoundUntilEnoughRowsAreInFlight) {
  GpuSpec g = testGpu();
  // 1024 rows: 16 CTAs of 128 threads keep 32 KiB in flight. Each CTA's
  // 64 x 4096 x 2 B = 512 KiB take 256 rounds of one latency plus 32 KiB
  // at the HBM rate.
  GemmCost few = gemmCost(g, GemmShape{1024, 4096, 1, 1, DType::BF16});
  double round = 500e-9 + 32768 / 2039e9;
  EXPECT_EQ(few.bound, Bound::Latency);
  EXPECT_EQ(few.tiles, 16);
  EXPECT_NEAR(few.time.value(), 256 * 500e-9 + (1024.0 * 4096 + 4096 + 1024) * 2 / 2039e9, 1e-9);
  EXPECT_GT(few.time.value(), 256 * round * 0.99);
  // 2^20 rows: 16,384 CTAs, more than the 1,728 resident ones; the rounds
  // overlap enough loads that HBM sets the time.
  GemmCost many = gemmCost(g, GemmShape{1 << 20, 4096, 1, 1, DType::BF16});
  EXPECT_EQ(many.bound, Bound::Hbm);
  double matrix = double(1 << 20) * 4096 * 2;
  EXPECT_GT(many.time.value(), matrix / 2039e9);
  EXPECT_LT(many.time.value(), 2 * matrix / 2039e9);
}

TEST(Attention, CausalBlocksCountTheLowerTriangle) {
  EXPECT_EQ(causalActiveBlocks(4096, 128, 128), 32 * 33 / 2);
  // Query blocks twice as tall as key blocks see two more key blocks each.
  EXPECT_EQ(causalActiveBlocks(256, 128, 64), 2 + 4);
  // A ragged last block still counts.
  EXPECT_EQ(causalActiveBlocks(100, 64, 64), 1 + 2);
}

TEST(Pointwise, BytesAndFlopsPerElement) {
  PointwiseWork ln = pointwiseWork(PointwiseOp::LayerNorm, 1000, DType::BF16, Pass::Forward);
  EXPECT_DOUBLE_EQ(ln.bytes.value(), 1000 * 2 * 2); // read x, write y
  EXPECT_DOUBLE_EQ(ln.flops.value(), 7000);
  PointwiseWork adam = pointwiseWork(PointwiseOp::Adam, 10, DType::BF16, Pass::Forward);
  EXPECT_DOUBLE_EQ(adam.bytes.value(), 10 * (7 * 4 + 2));
}

TEST(Pointwise, RooflineOverHbmAndVectorMath) {
  GpuSpec g = testGpu();
  g.calibrationHbm = 0.5; // half the bandwidth: twice the time
  KernelCost c = pointwiseCost(g, PointwiseWork{Bytes(2039e9), Flops(1), 1});
  // The GPU's time, the stream's start (its first load's latency) included:
  // launching is the stack's.
  EXPECT_NEAR(c.time.value(), 2.0 + g.hbmLatency.value(), 1e-9);
  EXPECT_EQ(c.bound, Bound::Hbm);
  KernelCost math = pointwiseCost(g, PointwiseWork{Bytes(1), Flops(19.5e12), 2});
  EXPECT_NEAR(math.time.value(), 1.0 + 2 * g.hbmLatency.value(), 1e-9); // each kernel's start first
  EXPECT_EQ(math.bound, Bound::Compute);
}

TEST(KernelCost, LaunchesAddPerKernelAndCanBound) {
  KernelCost c;
  c.time = Seconds(10e-6);
  c.bound = Bound::Hbm;
  c.kernels = 3;
  KernelCost eager = launched(c, Seconds(5e-6));
  EXPECT_NEAR(eager.time.value(), 25e-6, 1e-12);
  EXPECT_EQ(eager.bound, Bound::Launch); // 15 us of launches against 10 us of work
  KernelCost graphed = launched(c, Seconds(0));
  EXPECT_NEAR(graphed.time.value(), 10e-6, 1e-12);
  EXPECT_EQ(graphed.bound, Bound::Hbm);
}

// Causal FlashAttention-2 computes about half the blocks, but its grid
// dispatches each head's heaviest query block last: a tail of long CTAs.
TEST(Attention, FlashCausalHalvesTheWorkNotTheTime) {
  GpuSpec g = testGpu();
  AttentionShape full{1, 4096, 32, 32, 128, false, false, DType::BF16};
  AttentionShape causal = full;
  causal.causal = true;
  AttentionCost f = flashAttention(g, full, Pass::Forward), c = flashAttention(g, causal, Pass::Forward);
  double work = double(c.activeBlocks) / double(f.activeBlocks);
  EXPECT_GT(work, 0.5);
  EXPECT_LT(work, 0.53);
  double ratio = c.time / f.time;
  EXPECT_GT(ratio, 0.55);
  EXPECT_LT(ratio, 0.7);
}

TEST(Attention, NaiveMovesTheScoreMatrix) {
  GpuSpec g = testGpu();
  AttentionShape s{1, 4096, 32, 32, 128, false, false, DType::BF16};
  AttentionCost naive = naiveAttention(g, s, Pass::Forward);
  double scores = 32.0 * 4096 * 4096 * 2; // one pass over the bf16 scores
  EXPECT_DOUBLE_EQ(naive.softmax.bytes.hbm.value(), 2 * scores);
  EXPECT_GE(naive.bytes.hbm.value(), 4 * scores);
  EXPECT_LT(flashAttention(g, s, Pass::Forward).bytes.hbm.value(), scores);
}

// The power balance of Cost/Power.h with the H100 figures of
// power_h100_mix.csv (tensor cores 1,000 W and the rest 420 W at boost, a
// 700 W limit, power as speed^2.15) reproduces the mix table of
// docs/validation.md: the product's slowdown at tensor duties 0.39, 0.60,
// 0.75, 0.88 and 1.00 was measured 1.00, 1.07, 1.14, 1.18, 1.18.
TEST(Power, TheMixTableOfAnH100) {
  GpuSpec g = testGpu();
  g.powerTensor = 1000.0 / 700, g.powerOther = 420.0 / 700, g.powerExponent = 2.15;
  EXPECT_EQ(powerSlowdown(g, 0.39), 1.0); // within the limit: the boost clock
  EXPECT_NEAR(powerSlowdown(g, 0.60), 1.06, 0.01);
  EXPECT_NEAR(powerSlowdown(g, 0.75), 1.12, 0.01);
  EXPECT_NEAR(powerSlowdown(g, 0.88), 1.15, 0.01);
  EXPECT_NEAR(powerSlowdown(g, 1.00), std::pow(1000.0 / 700, 1 / 2.15), 1e-12); // the full-duty row: 1.18
  // The GPU at a duty: its clock-bound rates divided by the slowdown.
  EXPECT_DOUBLE_EQ(atDuty(g, 1.0).calibrationCompute, 1 / powerSlowdown(g, 1.0));
}

TEST(Power, WithoutAPowerModelTheClockHolds) {
  GpuSpec g = testGpu();
  EXPECT_EQ(powerSlowdown(g, 1.0), 1.0);
  g.powerTensor = 2;
  EXPECT_EQ(powerSlowdown(g, 0.0), 1.0); // no tensor-core work
  EXPECT_TRUE(atDuty(testGpu(), 1.0) == testGpu());
}

TEST(DecodeAttention, OneBlockPerHeadPassesOverItsCacheAndSharesTheSmsPastOneEach) {
  GpuSpec g = testGpu(); // 108 SMs at 1.41 GHz
  KernelCost memory;
  memory.time = Seconds(10e-6);
  memory.bound = Bound::Hbm;
  // A split-KV kernel (0 cycles) is the memory time.
  EXPECT_DOUBLE_EQ(decodeAttention(g, memory, 32, 7000, 0, Seconds(0)).time.value(), 10e-6);
  // 32 blocks fit on the SMs: one block's pass over 7,000 tokens.
  KernelCost one = decodeAttention(g, memory, 32, 7000, 20, Seconds(0));
  EXPECT_NEAR(one.time.value(), 7000 * 20 / 1.41e9, 1e-12);
  EXPECT_EQ(one.bound, Bound::Latency);
  // 216 blocks on 108 SMs: each SM runs two passes' worth.
  EXPECT_NEAR(decodeAttention(g, memory, 216, 7000, 20, Seconds(0)).time.value(), 2 * 7000 * 20 / 1.41e9, 1e-12);
  // A short cache is still bound by the bytes.
  EXPECT_EQ(decodeAttention(g, memory, 32, 100, 20, Seconds(0)).bound, Bound::Hbm);
}

TEST(DecodeAttention, EachBlocksStartAddsToWhicheverBoundItsStreamMeets) {
  GpuSpec g = testGpu(); // 108 SMs at 1.41 GHz
  KernelCost memory;
  memory.time = Seconds(10e-6);
  memory.bound = Bound::Hbm;
  // The pass (7,000 tokens at 20 clocks) is longer than the bytes: start + pass.
  KernelCost pass = decodeAttention(g, memory, 32, 7000, 20, Seconds(4e-6));
  EXPECT_NEAR(pass.time.value(), 4e-6 + 7000 * 20 / 1.41e9, 1e-12);
  EXPECT_EQ(pass.bound, Bound::Latency);
  // A short cache: start + the bytes at HBM's rate, still bound by them.
  KernelCost bytes = decodeAttention(g, memory, 32, 100, 20, Seconds(4e-6));
  EXPECT_NEAR(bytes.time.value(), 14e-6, 1e-12);
  EXPECT_EQ(bytes.bound, Bound::Hbm);
  // The split-KV kernel (no cycles) has no such block: the bytes alone.
  EXPECT_DOUBLE_EQ(decodeAttention(g, memory, 32, 100, 0, Seconds(4e-6)).time.value(), 10e-6);
}

TEST(Cost, DecodeAttentionGroupedBlocks) {
  GpuSpec g = testGpu(); // 108 SMs
  StackSpec s;
  // No grouped kernel: a block per (sequence, query head).
  EXPECT_EQ(decodeAttentionBlocks(g, s, 7 * 32, 8), 7 * 32);
  s.decodeAttentionGroupedMin = 8;
  s.decodeAttentionGroupedMax = 16;
  s.decodeAttentionGroupedFill = 0.25;
  // 7 sequences x 4 KV heads = 28 blocks >= 27 (a quarter of the SMs).
  EXPECT_EQ(decodeAttentionBlocks(g, s, 7 * 32, 8), 28);
  // 6 x 4 = 24 < 27: the per-head kernel.
  EXPECT_EQ(decodeAttentionBlocks(g, s, 6 * 32, 8), 6 * 32);
  // Groups outside 8..16 never group; no upper limit takes 32.
  EXPECT_EQ(decodeAttentionBlocks(g, s, 64 * 32, 4), 64 * 32);
  EXPECT_EQ(decodeAttentionBlocks(g, s, 64 * 32, 32), 64 * 32);
  s.decodeAttentionGroupedMax = 0;
  EXPECT_EQ(decodeAttentionBlocks(g, s, 64 * 32, 32), 64);
}

