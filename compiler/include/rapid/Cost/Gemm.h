//===- Gemm.h - GEMM cost from a CTA tiling search -------------*- C++ -*-===//
//
// C[M,N] = A[M,K] * B[K,N], `batch` times. The model enumerates CUTLASS-style
// CTA tiles, derives each one's occupancy from the GPU's registers and shared
// memory, schedules the tiles on the SMs in waves, and takes the slowest of
// the SM timeline and the smem, L2 and HBM transfer times (docs/model.md §2).
//===----------------------------------------------------------------------===//
#pragma once

#include "rapid/Cost/KernelCost.h"

namespace rapid::cost {

struct GemmShape {
  int64_t m = 0, k = 0, n = 0;
  int64_t batch = 1;
  DType dtype = DType::BF16;
};

/// One CTA's share of C and its main-loop step.
struct CtaTile {
  int64_t m = 0, n = 0, k = 0;
  int64_t stages = 0; ///< shared-memory pipeline depth (k-slices in flight)
  int64_t warps = 0;
  /// Split-K: CTAs that share one C tile, each over K / splits; the last to
  /// finish adds the others' FP32 partial tiles (serial split-K, one kernel).
  int64_t splits = 1;
};

/// How many CTAs of a tile fit on one SM, and what stopped more.
struct Occupancy {
  int64_t ctasPerSm = 0;
  int64_t stages = 0;
  enum Limit { Registers, SharedMemory, None } limit = None;
};

/// The busiest SM's share of a grid, in rounds of co-resident CTAs.
struct WaveSchedule {
  double waves = 0;         ///< tiles / (SMs x CTAs per SM), as Nsight reports it
  int64_t fullWaves = 0;    ///< ceil(waves): what the GPU really runs
  int64_t perSm = 0;        ///< CTAs the busiest SM runs in total
  int64_t rounds = 0;       ///< rounds of up to ctasPerSm CTAs on that SM
  int64_t lastRoundCtas = 0; ///< CTAs in that SM's last (possibly partial) round
};

struct GemmCost : KernelCost {
  bool gemv = false; ///< a GEMV kernel (runsAsGemv): `tile.m` rows of the matrix per CTA, no tensor cores
  bool streamK = false; ///< the k-steps of all tiles dealt evenly over the SMs (Hopper, docs/model.md §2.3)
  CtaTile tile;
  int64_t ctasPerSm = 0;
  WaveSchedule schedule;
  int64_t tiles = 0;
  Terms terms;
};

/// Registers one CTA of `tile` holds: FP32 accumulators for its C tile plus
/// a fixed per-thread share for operand fragments and addresses; kernels
/// that stage loads through registers (`staged`, unaligned operands) also
/// hold one k-slice of A and B of element type `t`.
Bytes registersPerCta(const CtaTile &tile, bool staged = false, DType t = DType::BF16);
/// Shared memory one CTA of `tile` holds with `stages` A and B slices.
Bytes smemPerCta(const CtaTile &tile, int64_t stages, DType t);
/// Occupancy of `tile` with a pipeline `stages` deep; 0 CTAs if it cannot run.
Occupancy occupancy(const GpuSpec &g, const CtaTile &tile, int64_t stages, DType t, bool staged = false);
/// Round-robin distribution of `tiles` CTAs on `sms` SMs, `ctasPerSm` at once.
WaveSchedule scheduleWaves(int64_t tiles, int64_t sms, int64_t ctasPerSm);

/// Whether the rows of A (K elements) and B (N elements) are whole 16-byte
/// vectors, as the asynchronous multistage kernels need.
bool vectorAligned(const GemmShape &s);

/// Whether `s` runs as a GEMV kernel rather than a tiled GEMM: one side is
/// a single row or column and the operands are not 16-byte vectors, so no
/// tensor-core kernel can take them (docs/model.md §2.7).
bool runsAsGemv(const GemmShape &s);

/// The fastest tiling of `s` on `g` (the GEMV kernel when runsAsGemv). The shape must have positive sizes.
/// ctasPerSm == 0 in the result: no candidate tile fits on the GPU.
GemmCost gemmCost(const GpuSpec &g, const GemmShape &s);
/// The cost of `s` with one given tile (stages chosen by the model); a GEMV
/// shape keeps its kernel.
GemmCost gemmCostWithTile(const GpuSpec &g, const GemmShape &s, CtaTile tile);

} // namespace rapid::cost
