//===- Gemm.cpp - GEMM time: SM timeline, traffic per level, tile search --===//
//
// docs/model.md §2 derives each formula. In short: the busiest SM runs
// ceil(tiles / SMs) CTAs in rounds of `ctasPerSm`; each round takes its
// k-steps at the slower of its math and the memory latency its pipeline can
// hide; the L2 and HBM terms divide the bytes each level moves by its
// achieved bandwidth; the slowest term sets the time.
//===----------------------------------------------------------------------===//
#include "rapid/Cost/Gemm.h"
#include "GemmDetail.h"

#include <algorithm>

namespace rapid::cost {
namespace {

using detail::ceilDiv;

/// What every candidate of one GEMM shares, computed once per search (the
/// search runs millions of times in sweeps).
struct Problem {
  const GpuSpec &g;
  const GemmShape &s;
  double d;                  ///< bytes per element
  double smRate;             ///< achieved FLOP/s of one SM
  BytesPerSecond port;       ///< one SM's share of L2 bandwidth
  BytesPerSecond hbmShare;   ///< one SM's share of HBM bandwidth
  double cSpill;             ///< the part of C that L2 cannot hold
  bool aligned;
  Problem(const GpuSpec &g, const GemmShape &s)
      : g(g), s(s), d(bytesOf(s.dtype)), smRate(mathRate(g, s.dtype).value() / double(g.smCount)),
        port(l2Rate(g) / double(g.smCount)), hbmShare(gemmHbmRate(g) / double(g.smCount)),
        cSpill(spill(g, s)), aligned(vectorAligned(s)) {}
  /// The fraction of C's bytes that L2 cannot hold.
  static double spill(const GpuSpec &g, const GemmShape &s) {
    double c = double(s.m * s.n * s.batch) * bytesOf(s.dtype);
    return std::clamp((c - g.l2Capacity.value()) / c, 0.0, 1.0);
  }
};

/// What one candidate (tile + stages + occupancy) needs from the GPU.
struct Candidate {
  const Problem &p;
  const GpuSpec &g;
  const GemmShape &s;
  CtaTile tile;
  Occupancy occ;
  WaveSchedule sched;
  int64_t tiles = 0;
  bool streamK = false; ///< streamK(g, s, tile)
};

/// k-steps of one CTA: its share of K (split-K) in slices of tile.k.
int64_t kSteps(const GemmShape &s, const CtaTile &tile) { return ceilDiv(ceilDiv(s.k, tile.splits), tile.k); }

/// Bytes of one FP32 partial C tile (split-K).
double partialBytes(const CtaTile &tile) { return double(tile.m * tile.n) * 4; }

/// The operand a pair of CTAs multicasts. With shared-memory operands
/// (Hopper's TMA), CTAs run in clusters of two along the longer side of the
/// tile (CUTLASS's SM90 kernels use 2x1 clusters) and share the panel of the
/// other operand: B when stacked along M, A along N; none without a second
/// tile on that side.
enum class Multicast { None, A, B };
Multicast multicast(const GpuSpec &g, const GemmShape &s, const CtaTile &tile) {
  if (g.tensorCoreOperands != TensorCoreOperands::Shared) return Multicast::None;
  bool alongM = tile.m >= tile.n;
  if ((alongM ? ceilDiv(s.m, tile.m) : ceilDiv(s.n, tile.n)) < 2) return Multicast::None;
  return alongM ? Multicast::B : Multicast::A;
}

/// Rows of A and columns of B one CTA pulls through its L2 port per k-step:
/// half of a multicast panel.
double slicePanels(const GpuSpec &g, const GemmShape &s, const CtaTile &tile) {
  switch (multicast(g, s, tile)) {
  case Multicast::A: return double(tile.m) / 2 + double(tile.n);
  case Multicast::B: return double(tile.m) + double(tile.n) / 2;
  case Multicast::None: break;
  }
  return double(tile.m + tile.n);
}

/// Hopper's GEMM kernels are persistent and split the k-steps of all tiles
/// evenly over the SMs (CUTLASS's SM90 stream-K tile scheduler; cuBLAS's
/// nvjet "coop" kernels): no SM waits on a partial last wave, and the tiles
/// cut between two SMs are fixed up through L2 (docs/model.md §2.3). A
/// skinny problem (one row or column of tiles: decode) runs the split-K
/// kernels of §2.6 instead, as cuBLAS's `splitK` kernel names show.
bool skinny(const GemmShape &s, const CtaTile &tile) {
  return ceilDiv(s.m, tile.m) == 1 || ceilDiv(s.n, tile.n) == 1;
}
bool streamK(const GpuSpec &g, const GemmShape &s, const CtaTile &tile) {
  return g.tensorCoreOperands == TensorCoreOperands::Shared && !skinny(s, tile);
}

/// One SM's k-slice through the L2 port.
Seconds sliceTime(const Candidate &c) {
  return Bytes(slicePanels(c.g, c.s, c.tile) * double(c.tile.k) * c.p.d) / c.p.port;
}

/// One k-step of `active` co-resident CTAs on one SM.
Seconds perStepTime(const Candidate &c, int64_t active) {
  Seconds step(2.0 * double(c.tile.m * c.tile.n * c.tile.k) / c.p.smRate);
  // The SM's share of L2 bandwidth feeds its CTAs' k-slices and takes their
  // C tiles; it bounds a step when the math per byte is low.
  Seconds slice = sliceTime(c);
  Seconds lat = c.g.hbmLatency;
  if (c.p.aligned) // stages-1 slices are in flight while one is consumed (Little's law).
    return std::max({step * double(active), slice * double(active), lat / double(c.occ.stages - 1)});
  // Element loads: two LSU instructions (global load, shared store) per
  // 32 elements at one warp instruction per SM clock, and every step
  // waits a full latency for them.
  double elems = double((c.tile.m + c.tile.n) * c.tile.k);
  Seconds lsu(2 * elems / detail::kWarpSize / c.g.clock.value());
  return lat + std::max({step, lsu, slice}) * double(active);
}

/// The pipeline fill of a round: stages-1 slices, the first one latency away.
Seconds fillTime(const Candidate &c, int64_t active) {
  int64_t fillSlices = std::min(c.occ.stages - 1, kSteps(c.s, c.tile));
  return sliceTime(c) * double(fillSlices * active) + c.g.hbmLatency;
}

/// The drain of a round: its C tiles out, one latency. Every SM drains at
/// once (rounds start together and take the same time), so the part of C the
/// write-back L2 cannot hold leaves at the SM's share of HBM, not overlapped
/// by a main loop (docs/model.md §2.4).
Seconds drainTime(const Candidate &c, int64_t active) {
  Seconds lat = c.g.hbmLatency;
  Bytes cTiles(double(c.tile.m * c.tile.n) * c.p.d * double(active));
  Seconds epilogue = std::max(cTiles / c.p.port, cTiles * c.p.cSpill / c.p.hbmShare);
  if (c.tile.splits > 1) // each CTA writes its FP32 partial; the last of a tile waits, reads the others' and adds
    epilogue = Bytes(partialBytes(c.tile) * double(active + c.tile.splits - 1)) / c.p.port + lat;
  return epilogue + lat;
}

/// The part of a round of `active` CTAs no k-step overlaps: the prologue
/// loads stages-1 slices (the first arrives one latency after the CTA
/// starts), and the C tiles leave through the SM's L2 port after the last
/// step and drain one latency later.
Seconds roundFixedTime(const Candidate &c, int64_t active) { return fillTime(c, active) + drainTime(c, active); }

/// Time of one round of `active` co-resident CTAs on one SM.
Seconds roundTime(const Candidate &c, int64_t active) {
  return perStepTime(c, active) * double(kSteps(c.s, c.tile)) + roundFixedTime(c, active);
}

/// What the HBM stream cannot overlap: the kernel's start (streamStart)
/// and the last C tiles' latency (their bytes are in the stream), or a
/// split-K tile's serial reduction of its partials (docs/model.md §2.5).
Seconds streamEnds(const Candidate &c) {
  return streamStart(c.g) + (c.tile.splits > 1 ? drainTime(c, c.sched.lastRoundCtas) : c.g.hbmLatency);
}

/// The busiest SM's math alone, padding included (a tile computes its whole
/// block, as the kernels do): `perSm` CTAs' worth of tiles.
Seconds mathTime(const Problem &p, const CtaTile &tile, double perSm) {
  double kPad = double(kSteps(p.s, tile) * tile.k);
  return Seconds(2.0 * double(tile.m * tile.n) * kPad * perSm / p.smRate);
}

/// CTAs' worth of tiles on the busiest SM (stream-K: an even share).
double busiestCtas(const GpuSpec &g, bool streamK, const WaveSchedule &w, int64_t tiles) {
  return streamK ? double(tiles) / double(g.smCount) : double(w.perSm);
}

/// The busiest SM's timeline: full rounds, then the partial last one. Under
/// stream-K the share of rounds runs at full occupancy, and a tile cut
/// between SMs costs one FP32 partial tile written and read back, and a
/// latency to wait for it.
Seconds smTimeline(const Candidate &c) {
  if (!c.streamK)
    return roundTime(c, c.occ.ctasPerSm) * double(c.sched.rounds - 1) + roundTime(c, c.sched.lastRoundCtas);
  // The k-steps scale with the share of full-occupancy rounds. The kernel's
  // producer warps load the next tile's slices while the consumers finish
  // and store the current one (TMA warp specialisation), so only the first
  // round fills the pipeline; every round still drains its C tiles, as the
  // cooperative kernels' consumers do the epilogue together.
  int64_t active = c.occ.ctasPerSm;
  double rounds = busiestCtas(c.g, true, c.sched, c.tiles) / double(active);
  bool cut = c.tiles % (c.g.smCount * active) != 0;
  Seconds fixup = cut ? Bytes(2 * partialBytes(c.tile)) / c.p.port + c.g.hbmLatency : Seconds(0);
  return perStepTime(c, active) * double(kSteps(c.s, c.tile)) * rounds + fillTime(c, active) +
         drainTime(c, active) * std::ceil(rounds) + fixup;
}

/// Bytes read from HBM: each operand once, plus the panels a wave re-reads
/// when A and B do not stay in L2 between waves.
Bytes hbmReads(const Candidate &c) {
  const GemmShape &s = c.s;
  double d = bytesOf(s.dtype);
  double operands = double(s.m * s.k + s.k * s.n) * d;
  // A wave of S concurrent tiles is rasterised as a near-square block of
  // r rows x S/r columns of tiles (swizzled order), which reads r A panels
  // and S/r B panels of K elements each.
  int64_t gm = ceilDiv(s.m, c.tile.m), gn = ceilDiv(s.n, c.tile.n);
  int64_t slots = std::min(c.tiles, c.g.smCount * c.occ.ctasPerSm);
  int64_t r = std::clamp<int64_t>(int64_t(std::lround(std::sqrt(double(slots)))), 1, gm);
  int64_t cols = std::min(gn, ceilDiv(slots, r));
  r = std::min(gm, ceilDiv(slots, cols));
  double perWave = double(r * std::min(c.tile.m, s.m) + cols * std::min(c.tile.n, s.n)) * double(s.k) * d;
  double waves = double(ceilDiv(ceilDiv(c.tiles, s.batch), slots));
  double restream = std::max(0.0, waves * perWave - operands);
  // Only the part of the operands that does not fit in L2 is evicted before
  // its reuse (capacity misses).
  double miss = std::clamp((operands - c.g.l2Capacity.value()) / operands, 0.0, 1.0);
  return Bytes((operands + miss * restream) * double(s.batch));
}

Traffic traffic(const Candidate &c) {
  const GemmShape &s = c.s;
  double d = bytesOf(s.dtype);
  int64_t gm = ceilDiv(s.m, c.tile.m), gn = ceilDiv(s.n, c.tile.n);
  double kPad = double(kSteps(s, c.tile) * c.tile.k);
  auto [wm, wn] = detail::warpGrid(c.tile);
  Traffic t;
  double cBytes = double(s.m * s.n) * d * double(s.batch);
  // Split-K partials are written and read back once each, through L2 (the
  // search keeps them small enough to stay there).
  double partials = c.tile.splits > 1 ? 2.0 * partialBytes(c.tile) * double(c.tiles) : 0;
  // L2: A re-streamed once per column of tiles, B once per row (a multicast
  // panel once per cluster of two, slicePanels); C written.
  double a = double(gn * s.m * s.k), b = double(gm * s.k * s.n);
  Multicast mc = multicast(c.g, s, c.tile);
  if (mc == Multicast::A) a *= 0.5;
  if (mc == Multicast::B) b *= 0.5;
  t.l2 = Bytes((a + b) * d * double(s.batch) + cBytes + partials);
  // Shared memory: every slice written once; with register operands
  // (mma.sync) A is read once per warp column and B once per warp row; with
  // shared-memory operands (wgmma) each warpgroup of four warps, stacked
  // along M, reads its rows of A and the whole B slice once.
  double perCta = kPad * double(c.tile.m * (1 + wn) + c.tile.n * (1 + wm)) * d;
  if (c.g.tensorCoreOperands == TensorCoreOperands::Shared) {
    int64_t groups = std::max<int64_t>(1, c.tile.warps / detail::kWarpsPerGroup);
    perCta = kPad * double(c.tile.m * 2 + c.tile.n * (1 + groups)) * d;
  }
  t.smem = Bytes(perCta * double(c.tiles));
  t.hbm = hbmReads(c) + Bytes(cBytes);
  return t;
}

GemmCost evaluate(const Candidate &c) {
  Traffic bytes = traffic(c);
  Seconds timeline = smTimeline(c);
  double perSm = busiestCtas(c.g, c.streamK, c.sched, c.tiles);
  Seconds math = mathTime(c.p, c.tile, perSm);
  Terms terms;
  // The timeline counts as compute while math fills most of it; once the
  // latency the pipeline cannot hide is the larger part, it is latency.
  bool latencyBound = timeline.value() > 2 * math.value();
  (latencyBound ? terms.latency : terms.compute) = timeline;
  terms.compute = std::max(terms.compute, math);
  double smemShare = perSm / double(c.tiles);
  terms.smem = Bytes(bytes.smem.value() * smemShare) / (smemRate(c.g) / double(c.g.smCount));
  terms.l2 = bytes.l2 / l2Rate(c.g);
  terms.hbm = bytes.hbm / gemmHbmRate(c.g) + streamEnds(c);
  Flops useful(2.0 * double(c.s.m) * double(c.s.n) * double(c.s.k) * double(c.s.batch));
  GemmCost r;
  static_cast<KernelCost &>(r) = combine(c.g, terms, useful, bytes, 1);
  r.tile = c.tile;
  r.streamK = c.streamK;
  r.ctasPerSm = c.occ.ctasPerSm;
  r.schedule = c.sched;
  r.tiles = c.tiles;
  r.terms = terms;
  return r;
}

/// Prefers the faster candidate, then fewer HBM bytes, then the larger tile,
/// then the shallower K step and pipeline: a total order, so the choice is
/// deterministic.
bool better(const GemmCost &a, const GemmCost &b) {
  if (a.time != b.time) return a.time < b.time;
  if (a.bytes.hbm != b.bytes.hbm) return a.bytes.hbm < b.bytes.hbm;
  if (a.tile.m * a.tile.n != b.tile.m * b.tile.n) return a.tile.m * a.tile.n > b.tile.m * b.tile.n;
  if (a.tile.m != b.tile.m) return a.tile.m > b.tile.m;
  if (a.tile.k != b.tile.k) return a.tile.k < b.tile.k;
  if (a.tile.splits != b.tile.splits) return a.tile.splits < b.tile.splits;
  return a.tile.stages < b.tile.stages;
}

/// The best pipeline depth for one tile; candidates whose math alone is
/// slower than `cutoff` are not evaluated (the search is hot in sweeps).
GemmCost searchStages(const Problem &p, CtaTile tile, Seconds cutoff) {
  const GpuSpec &g = p.g;
  const GemmShape &s = p.s;
  tile.warps = detail::warpsFor(tile.m, tile.n);
  GemmCost best;
  bool found = false;
  int64_t tiles = ceilDiv(s.m, tile.m) * ceilDiv(s.n, tile.n) * s.batch * tile.splits;
  bool sk = streamK(g, s, tile);
  // Deeper pipelines hide more latency but cost shared memory, which can
  // cost occupancy. For each occupancy the deepest pipeline that keeps it is
  // the best, so only those depths are evaluated.
  Occupancy occ[detail::kMaxStages + 2] = {};
  for (int64_t st = detail::kMinStages; st <= detail::kMaxStages; ++st)
    occ[st] = occupancy(g, tile, st, s.dtype, /*staged=*/!p.aligned);
  for (int64_t stages = detail::kMinStages; stages <= detail::kMaxStages && occ[stages].ctasPerSm > 0; ++stages) {
    if (occ[stages + 1].ctasPerSm == occ[stages].ctasPerSm)
      continue;
    tile.stages = stages;
    WaveSchedule sched = scheduleWaves(tiles, g.smCount, occ[stages].ctasPerSm);
    if (mathTime(p, tile, busiestCtas(g, sk, sched, tiles)) > cutoff) // a lower bound of its time
      continue;
    GemmCost r = evaluate(Candidate{p, g, s, tile, occ[stages], sched, tiles, sk});
    if (!found || better(r, best)) {
      best = r;
      found = true;
    }
  }
  return best; // ctasPerSm == 0 when the tile cannot run at all
}

} // namespace

/// cp.async copies 4, 8 or 16 bytes; the multistage kernels need 16-byte
/// aligned rows. When either operand's rows (A is M x K, B is K x N, both
/// row-major) are not whole 16-byte vectors, the library falls back to a
/// kernel that stages both operands through registers (docs/model.md §2.3).
bool vectorAligned(const GemmShape &s) {
  double d = bytesOf(s.dtype);
  auto ok = [&](int64_t elems) { return std::fmod(double(elems) * d, detail::kVectorBytes) == 0; };
  return ok(s.k) && ok(s.n);
}

GemmCost gemmCostWithTile(const GpuSpec &g, const GemmShape &s, CtaTile tile) {
  if (runsAsGemv(s)) return detail::gemvCost(g, s);
  return searchStages(Problem(g, s), tile, Seconds(INFINITY));
}

/// Split-K factors worth trying for `tile`: only for skinny problems (one
/// row or one column of tiles, as decode's GEMMs are) whose tiles alone
/// leave SMs idle, with aligned operands, at least kMinSplitSteps k-steps per
/// split, and FP32 partials that fit in half of L2 (CUTLASS's serial split-K;
/// cuBLAS picks split-K kernels for such shapes).
int64_t maxSplits(const Problem &p, const CtaTile &tile) {
  const GemmShape &s = p.s;
  int64_t tiles = ceilDiv(s.m, tile.m) * ceilDiv(s.n, tile.n) * s.batch;
  if (!p.aligned || !skinny(s, tile) || tiles >= p.g.smCount) return 1;
  auto fits = [&](int64_t splits) {
    return splits * tiles <= 2 * p.g.smCount &&                                // two CTAs per SM at most
           ceilDiv(s.k, splits) >= detail::kMinSplitSteps * tile.k &&          // a pipeline's worth of steps each
           2.0 * double(splits * tiles) * partialBytes(tile) <= p.g.l2Capacity.value() / 2; // partials in L2
  };
  int64_t splits = 1;
  while (fits(splits * 2)) splits *= 2;
  return splits;
}

GemmCost gemmCost(const GpuSpec &g, const GemmShape &s) {
  if (runsAsGemv(s)) return detail::gemvCost(g, s);
  static constexpr int64_t kMn[] = {64, 128, 256};
  static constexpr int64_t kK[] = {32, 64};
  Problem p(g, s);
  GemmCost best;
  bool found = false;
  for (int64_t tm : kMn)
    for (int64_t tn : kMn)
      for (int64_t tk : kK) {
        CtaTile tile{tm, tn, tk, 0, 0};
        for (int64_t splits = 1, most = maxSplits(p, tile); splits <= most; splits *= 2) {
          tile.splits = splits;
          GemmCost r = searchStages(p, tile, found ? best.time : Seconds(INFINITY));
          if (r.ctasPerSm > 0 && (!found || better(r, best))) {
            best = r;
            found = true;
          }
        }
      }
  return best;
}

} // namespace rapid::cost
