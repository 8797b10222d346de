//===- GpuScale.cpp - Per-kernel factors from rapid's compute model --------===//

#include "rapid/Driver/GpuScale.h"

#include "rapid/Cost/Attention.h"
#include "rapid/Cost/Gemm.h"
#include "rapid/Cost/Power.h"
#include "rapid/Profile/ExecGraph.h"
#include "rapid/Sema/Sema.h"
#include "rapid/Support/Diagnostics.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/SourceMgr.h"

#include <cmath>
#include <fmt/format.h>

namespace rapid::profile {

namespace {

DType dtypeOf(llvm::StringRef type) {
  if (type == "c10::BFloat16") return DType::BF16;
  if (type == "c10::Half") return DType::FP16;
  if (type == "float") return DType::FP32;
  if (type.starts_with("c10::Float8")) return DType::FP8;
  return DType::BF16;
}

/// Kernels bound by the tensor cores: GEMMs by their library's names
/// (cuBLAS's Hopper kernels are `nvjet_sm90_*` in PyTorch 2.11 profiles) and
/// fused attention (FlashAttention's `flash_*`, cuDNN's `*_sdpa_*`, `fmha`).
bool tensorCoreLike(llvm::StringRef kernel) {
  for (const char *k : {"gemm", "xmma", "cutlass", "s16816", "s1688", "cublas", "Gemm", "nvjet", "flash", "fmha",
                        "sdpa"})
    if (kernel.contains(k)) return true;
  return false;
}

double seconds(const GpuSpec &g, const cost::GemmShape &s) { return cost::gemmCost(g, s).time.value(); }

/// A fused attention on `g`: cuDNN's kernel is the model's `flash3` class
/// where a GPU runs it (wgmma), FlashAttention-2's elsewhere and for the
/// other backends (docs/model.md §3.1).
double seconds(const GpuSpec &g, const ShapedOp &op) {
  cost::AttentionShape s;
  s.batch = op.batch, s.seq = op.seq, s.heads = op.heads, s.kvHeads = op.kvHeads, s.headDim = op.headDim;
  s.causal = op.causal;
  s.dtype = dtypeOf(op.type);
  s.kernel = op.backend == "cudnn" && cost::flashAttentionProblem(g, s.headDim, s.dtype, AttentionKernel::Flash3).empty()
                 ? AttentionKernel::Flash3
                 : AttentionKernel::Flash2;
  if (!cost::flashAttentionProblem(g, s.headDim, s.dtype, s.kernel).empty()) return 0;
  return cost::flashAttention(g, s, op.backward ? cost::Pass::Backward : cost::Pass::Forward).time.value();
}

} // namespace

double modelSeconds(const GpuSpec &g, const ShapedOp &op) {
  double t = op.kind == ShapedOp::Kind::Attention
                 ? seconds(g, op)
                 : seconds(g, cost::GemmShape{op.m, op.k, op.n, op.batch, dtypeOf(op.type)});
  return t > 0 && std::isfinite(t) ? t : 0;
}

DeviceScale gpuScale(const GpuSpec &fromGpu, const GpuSpec &toGpu) {
  // A profiled iteration keeps the tensor cores busy: both GPUs at the clock
  // their power limits hold there (Cost/Power.h), as kernel tables are costed.
  GpuSpec f = cost::atDuty(fromGpu, 1.0), t = cost::atDuty(toGpu, 1.0);
  cost::GemmShape typical{4096, 4096, 4096, 1, DType::BF16};
  double hbm = cost::hbmRate(f).value() / cost::hbmRate(t).value();
  double gemmRatio = seconds(t, typical) / seconds(f, typical);
  if (!(gemmRatio > 0 && std::isfinite(gemmRatio))) gemmRatio = hbm; // no tile fits one of them
  double host = f.hostBandwidth.value() / t.hostBandwidth.value();
  return [=](const KinetoTrace &trace, const Event &e) {
    llvm::StringRef name = trace.name(e);
    switch (e.kind) {
    case EventKind::Memcpy: return name.contains("HtoD") || name.contains("DtoH") ? host : hbm;
    case EventKind::Memset: return hbm;
    case EventKind::Kernel: break;
    default: return 1.0;
    }
    if (isNcclKernel(name)) return 1.0;
    if (e.op >= 0)
      if (double a = modelSeconds(f, trace.ops[e.op]), b = modelSeconds(t, trace.ops[e.op]); a > 0 && b > 0)
        return b / a;
    return tensorCoreLike(name) ? gemmRatio : hbm;
  };
}

llvm::Expected<GpuSpec> gpuByName(const std::string &name, const std::vector<std::string> &imports,
                                  const std::string &stdlibDir) {
  llvm::SourceMgr sm;
  DiagnosticEngine diags(sm);
  diags.setToolName("rapid-trace");
  SemaOptions so;
  so.stdlibDir = stdlibDir;
  std::vector<std::string> all;
  if (llvm::sys::fs::exists(stdlibDir + "/gpus.rapid")) all.push_back("std.gpus");
  all.insert(all.end(), imports.begin(), imports.end());
  std::optional<GpuSpec> g = resolveGpu(name, all, so, diags);
  if (!g || diags.hasErrors())
    return llvm::createStringError(llvm::inconvertibleErrorCode(), fmt::format("cannot resolve gpu '{}' (see above)", name));
  return *g;
}

llvm::Expected<DeviceScale> gpuScale(const std::string &from, const std::string &to,
                                     const std::vector<std::string> &imports, const std::string &stdlibDir) {
  auto f = gpuByName(from, imports, stdlibDir);
  if (!f) return f.takeError();
  auto t = gpuByName(to, imports, stdlibDir);
  if (!t) return t.takeError();
  return gpuScale(*f, *t);
}

} // namespace rapid::profile
