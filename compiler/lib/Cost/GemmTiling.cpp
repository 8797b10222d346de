//===- GemmTiling.cpp - Occupancy and wave arithmetic of CTA tiles --------===//
//
// The resource limits come from GpuSpec; the constants here are properties
// of the CUDA programming model and of CUTLASS-style kernels, not of one GPU
// (docs/model.md §2.2 names their sources).
//===----------------------------------------------------------------------===//
#include "rapid/Cost/Gemm.h"
#include "GemmDetail.h"

#include <algorithm>

namespace rapid::cost {

Bytes registersPerCta(const CtaTile &tile, bool staged, DType t) {
  // FP32 accumulators for the whole C tile, spread over the CTA's threads,
  // plus fragments of A and B and addresses for each thread.
  double threads = double(tile.warps * detail::kWarpSize);
  double perThread = double(tile.m * tile.n) / threads + detail::kOverheadRegsPerThread;
  if (staged) // the next k-slice waits in registers before its shared store
    perThread += double((tile.m + tile.n) * tile.k) * bytesOf(t) / detail::kRegisterBytes / threads;
  // Registers are allocated per warp in units of 8 per thread (CUDA
  // occupancy calculator); round up so occupancy is not overstated.
  perThread = 8 * std::ceil(perThread / 8);
  return Bytes(perThread * threads * detail::kRegisterBytes);
}

Bytes smemPerCta(const CtaTile &tile, int64_t stages, DType t) {
  // Each stage holds one k-slice of the A panel (m x k) and of B (k x n).
  return Bytes(double(stages * (tile.m + tile.n) * tile.k) * bytesOf(t));
}

Occupancy occupancy(const GpuSpec &g, const CtaTile &tile, int64_t stages, DType t, bool staged) {
  Occupancy o;
  o.stages = stages;
  Bytes regs = registersPerCta(tile, staged, t);
  double perThread = regs.value() / double(tile.warps * detail::kWarpSize) / detail::kRegisterBytes;
  if (perThread > detail::kMaxRegsPerThread)
    return o; // the accumulators alone would spill: not a real kernel
  int64_t byRegs = int64_t(g.registersPerSm / regs);
  int64_t bySmem = int64_t(g.smemPerSm / smemPerCta(tile, stages, t));
  o.ctasPerSm = std::min(byRegs, bySmem);
  o.limit = byRegs <= bySmem ? Occupancy::Registers : Occupancy::SharedMemory;
  return o;
}

WaveSchedule scheduleWaves(int64_t tiles, int64_t sms, int64_t ctasPerSm) {
  WaveSchedule w;
  if (tiles <= 0 || sms <= 0 || ctasPerSm <= 0)
    return w;
  int64_t slots = sms * ctasPerSm;
  w.waves = double(tiles) / double(slots);
  w.fullWaves = (tiles + slots - 1) / slots;
  // The block scheduler hands CTAs to SMs in turn, so the busiest SM gets
  // ceil(tiles / SMs) of them and runs them ctasPerSm at a time.
  w.perSm = (tiles + sms - 1) / sms;
  w.rounds = (w.perSm + ctasPerSm - 1) / ctasPerSm;
  w.lastRoundCtas = w.perSm - (w.rounds - 1) * ctasPerSm;
  return w;
}

namespace detail {

int64_t warpsFor(int64_t tileM, int64_t tileN) {
  // One warp per 64x64 of C (the CUTLASS SM80 warp tile), at least four so
  // every SM sub-partition's tensor core has a warp to issue from.
  return std::max<int64_t>(4, tileM * tileN / (64 * 64));
}

std::pair<int64_t, int64_t> warpGrid(const CtaTile &tile) {
  // Two warps along the shorter side of the tile, the rest along the longer.
  int64_t two = std::min<int64_t>(2, tile.warps);
  int64_t rest = tile.warps / two;
  return tile.m >= tile.n ? std::pair{rest, two} : std::pair{two, rest};
}

} // namespace detail
} // namespace rapid::cost
