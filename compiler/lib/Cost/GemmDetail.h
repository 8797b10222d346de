//===- GemmDetail.h - Constants and helpers shared by the GEMM files ------===//
#pragma once

#include "rapid/Cost/Gemm.h"

#include <cmath>
#include <utility>

namespace rapid::cost::detail {

constexpr int64_t kWarpSize = 32;            // threads per warp, every CUDA GPU
constexpr int64_t kWarpsPerGroup = 4;        // a wgmma warpgroup: four consecutive warps (PTX ISA)
constexpr double kRegisterBytes = 4;         // one 32-bit register
constexpr double kMaxRegsPerThread = 255;    // CUDA ISA limit since Kepler
constexpr double kOverheadRegsPerThread = 40; // fragments + addresses, §2.2
constexpr double kVectorBytes = 16;          // widest global load / cp.async
constexpr int64_t kMinStages = 2, kMaxStages = 6; // double buffering .. CUTLASS's deepest
constexpr int64_t kMinSplitSteps = 4;        // k-steps per split-K share: enough to fill a pipeline

// cuBLAS's GEMV kernel, as Nsight profiles it on the A100 (all six N = 1
// rows of test/data/validation/gemm_ncu_a100.csv: grid = rows / 64, 128
// threads, no cp.async and no ldmatrix): 64 rows of the matrix per CTA.
constexpr int64_t kGemvRowsPerCta = 64, kGemvThreads = 128;
constexpr int64_t kMaxThreadsPerSm = 2048; // resident threads per SM, compute capability 8.0 and 9.0

/// The GEMV kernel's cost (Gemv.cpp).
GemmCost gemvCost(const GpuSpec &g, const GemmShape &s);

int64_t warpsFor(int64_t tileM, int64_t tileN);
/// Warps along M and along N.
std::pair<int64_t, int64_t> warpGrid(const CtaTile &tile);

inline int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

} // namespace rapid::cost::detail
