//===- GpuScale.h - A profile's device work moved to another GPU -*- C++ -*-===//
//
// `--gpu TO --profiled-gpu FROM` (gpu declarations from std.gpus or
// --import files): each measured kernel, copy and memset is multiplied by
// what rapid's compute model says the change of GPU does to work of its
// kind (docs/trace-replay.md, "Another GPU"):
//  * a matrix multiply whose host op recorded its shapes (aten::mm, addmm,
//    bmm, baddbmm around the launch): gemmCost on TO over gemmCost on FROM;
//  * another kernel named like a GEMM (gemm, xmma, cutlass, s16816, s1688,
//    cublas): the same ratio for a 4096 x 4096 x 4096 BF16 GEMM;
//  * any other kernel, device-to-device copies and memsets: the ratio of the
//    two GPUs' achieved HBM bandwidths (memory-bound, as elementwise,
//    normalisation, softmax and reduction kernels are);
//  * host-to-device and device-to-host copies: the ratio of host bandwidths;
//  * NCCL kernels are not touched (the network's, see --network).
//===----------------------------------------------------------------------===//
#pragma once

#include "rapid/Profile/Kineto.h"

#include <functional>
#include <string>
#include <vector>

namespace rapid::profile {

using DeviceScale = std::function<double(const KinetoTrace &, const Event &)>;

/// The scale from `from` to `to`, or an error naming the GPU not found
/// (diagnostics go to stderr as rapidc prints them).
llvm::Expected<DeviceScale> gpuScale(const std::string &from, const std::string &to,
                                     const std::vector<std::string> &imports, const std::string &stdlibDir);

} // namespace rapid::profile
