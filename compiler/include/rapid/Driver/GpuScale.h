//===- GpuScale.h - A profile's device work moved to another GPU -*- C++ -*-===//
//
// `rapid-trace --gpu TO --profiled-gpu FROM`, or an experiment's `gpu` with
// `replay.profiled_gpu`: each measured kernel, copy and memset is multiplied by
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
#include "rapid/Spec/Specs.h"

#include <functional>
#include <string>
#include <vector>

namespace rapid::profile {

using DeviceScale = std::function<double(const KinetoTrace &, const Event &)>;

/// rapid's time for a shaped op (a matrix multiply, or a fused attention
/// as the GPU runs its backend's kernel) on `g`; 0 where the model has none.
double modelSeconds(const GpuSpec &g, const ShapedOp &op);

/// The factors from `from` to `to`.
DeviceScale gpuScale(const GpuSpec &from, const GpuSpec &to);

/// A gpu declaration by name (std.gpus and `imports`), or an error after the
/// front end's diagnostics on stderr.
llvm::Expected<GpuSpec> gpuByName(const std::string &name, const std::vector<std::string> &imports,
                                  const std::string &stdlibDir);

/// The same for gpu declarations by name (std.gpus and `imports`), or an
/// error after the front end's diagnostics on stderr.
llvm::Expected<DeviceScale> gpuScale(const std::string &from, const std::string &to,
                                     const std::vector<std::string> &imports, const std::string &stdlibDir);

} // namespace rapid::profile
