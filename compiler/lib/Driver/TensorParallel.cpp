//===- TensorParallel.cpp - A profiled job at another tensor-parallel degree ===//

#include "rapid/Driver/TensorParallel.h"

#include "rapid/Cost/KernelCost.h"
#include "rapid/Cost/Power.h"
#include "rapid/Driver/GpuScale.h"
#include "rapid/Profile/TensorParallel.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <optional>

namespace rapid::profile {

static llvm::Error error(const std::string &what) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), what);
}

namespace {

/// `x` per rank of `from` ranks as a share of `to`, or nothing where it
/// does not split evenly.
std::optional<int64_t> reshare(int64_t x, int from, int to) {
  int64_t whole = x * from;
  if (whole % to) return std::nullopt;
  return whole / to;
}

/// The op at the new degree (nothing where a backward GEMM has no dimension
/// of its linear's shard: its work scales with the share), or an error
/// naming it.
llvm::Expected<std::optional<ShapedOp>> resharded(const KinetoTrace &t, const ShapedOp &op, TpRole role, int64_t shard,
                                                  int from, int to) {
  ShapedOp out = op;
  auto split = [&](int64_t &x, const char *what) -> llvm::Error {
    std::optional<int64_t> y = reshare(x, from, to);
    if (!y)
      return error(fmt::format("{}: {} of the {}: {} a rank at tensor parallel {} does not split evenly over {}",
                               t.file, what,
                               op.kind == ShapedOp::Kind::Attention
                                   ? fmt::format("attention over {} heads of {}", op.heads, op.headDim)
                                   : fmt::format("{}x{}x{} GEMM (batch {})", op.m, op.k, op.n, op.batch),
                               x, from, to));
    x = *y;
    return llvm::Error::success();
  };
  if (role == TpRole::Grad) {
    std::vector<int64_t *> dims;
    for (int64_t *d : {&out.m, &out.k, &out.n})
      if (shard > 0 && *d == shard) dims.push_back(d);
    if (dims.empty()) return std::nullopt;
    if (dims.size() > 1)
      return error(fmt::format("{}: the backward GEMM {}x{}x{} (batch {}) of a linear sharded to {} a rank has that "
                               "size in more than one dimension: which one is the shard is not derivable",
                               t.file, op.m, op.k, op.n, op.batch, shard));
    if (auto err = split(*dims[0], "the sharded dimension")) return err;
  } else if (op.kind == ShapedOp::Kind::Attention) {
    if (auto err = split(out.heads, "the heads")) return err;
    if (out.kvHeads)
      if (auto err = split(out.kvHeads, "the key/value heads")) return err;
  } else if (auto err = role == TpRole::Column ? split(out.n, "the output columns (N, column-parallel)")
                        : role == TpRole::Row  ? split(out.k, "the reduction (K, row-parallel)")
                                               : split(out.batch, "the batch of heads")) {
    return err;
  }
  return std::optional<ShapedOp>(std::move(out));
}

} // namespace

llvm::Error reshardTensorParallel(TraceSet &set, int tp, const GpuSpec &profiledGpu,
                                  llvm::ArrayRef<std::string> dataParallel, int world) {
  if (auto err = reshardWorld(set, tp, dataParallel, world)) return err;
  int from = set.profiledTensorParallel;
  // A profiled step keeps the tensor cores busy: the clock its power limit
  // holds there (Cost/Power.h), as gpuScale costs it.
  GpuSpec g = cost::atDuty(profiledGpu, 1.0);
  double startNs = cost::streamStart(g).value() * 1e9, share = double(from) / tp;
  size_t shapes = 0, kernels = 0, streamed = 0, replicated = 0;
  ResizedCollectives resized;
  int64_t shapedNs = 0, streamedNs = 0, replicatedNs = 0; // rank 0's profiled device time of each
  TpRoles first;
  std::vector<int> done(size_t(set.profiledWorld), -1); // the rank that re-sharded each profiled rank's profile
  for (size_t k = 0; k < set.ranks.size(); ++k) {
    KinetoTrace &t = set.ranks[k];
    auto collectives = reshardCollectives(t, from, tp);
    if (!collectives) return collectives.takeError();
    if (k == 0) resized = *collectives;
    int &by = done[size_t(set.origin[k])];
    if (by >= 0) { // a copy of a profile re-sharded already
      const KinetoTrace &of = set.ranks[size_t(by)];
      t.ops = of.ops, t.deviceFactor = of.deviceFactor;
      continue;
    }
    by = int(k);
    auto roles = tensorParallelRoles(t);
    if (!roles) return roles.takeError();
    std::vector<std::optional<ShapedOp>> ops(t.ops.size());
    std::vector<double> opFactor(t.ops.size(), 1.0);
    std::vector<bool> done(t.ops.size(), false);
    t.deviceFactor.assign(t.device.size(), 1.0);
    for (size_t i = 0; i < t.device.size(); ++i) {
      const Event &d = t.device[i];
      TpRole role = roles->device[i];
      bool shaped = d.kind == EventKind::Kernel && d.op >= 0 &&
                    (role == TpRole::Column || role == TpRole::Row || role == TpRole::Grad || role == TpRole::Sharded);
      if (k == 0) {
        kernels += shaped;
        if (shaped && !done[size_t(d.op)]) ++shapes;
        streamed += !shaped && role == TpRole::Sharded;
        replicated += role == TpRole::Replicated;
        if (shaped) shapedNs += d.durNs;
        else if (role == TpRole::Sharded) streamedNs += d.durNs;
        else if (role == TpRole::Replicated) replicatedNs += d.durNs;
      }
      if (shaped) {
        size_t o = size_t(d.op);
        if (!done[o]) {
          auto next = resharded(t, t.ops[o], role, roles->shard[i], from, tp);
          if (!next) return next.takeError();
          double a = modelSeconds(g, t.ops[o]), b = *next ? modelSeconds(g, **next) : 0;
          opFactor[o] = a > 0 && b > 0 ? b / a : share; // no model for it: its work's share
          ops[o] = std::move(*next);
          done[o] = true;
        }
        t.deviceFactor[i] = opFactor[o];
      } else if (role == TpRole::Sharded && d.durNs > 0) {
        double ns = double(d.durNs), fixed = std::min(ns, startNs);
        t.deviceFactor[i] = (fixed + (ns - fixed) * share) / ns;
      }
    }
    // The new shapes stand in for the profiled ones from here on (another
    // GPU's factors, gpuScale, are new shape against new shape).
    for (size_t o = 0; o < ops.size(); ++o)
      if (ops[o]) t.ops[o] = std::move(*ops[o]);
    if (k == 0) first = std::move(*roles);
  }
  set.whatIfs.push_back(fmt::format(
      "tensor parallel {} -> {} (rank 0): {} column- and {} row-parallel linears{}; {} matrix multiplies and "
      "attentions ({} kernels, {:.3f} ms profiled) re-costed at their new shapes on {}, {} other kernels, copies "
      "and memsets on sharded activations ({:.3f} ms{}) x{:.3g} past a {:.2f} us start, {} replicated as profiled "
      "({:.3f} ms); collectives keep their bytes{}{}{}",
      from, tp, first.columns, first.rows,
      first.backward + first.unmatchedBackward
          ? fmt::format(", {} backward nodes of the step's forward ops ({} others replicated)", first.backward,
                        first.unmatchedBackward)
          : "",
      shapes, kernels, double(shapedNs) / 1e6, profiledGpu.name, streamed,
      double(streamedNs) / 1e6, first.sequenceParallel ? "; sequence parallel: the norms and residual adds too" : "",
      share, startNs / 1e3, replicated, double(replicatedNs) / 1e6,
      resized.allGathers ? fmt::format(" but {} all-gathers, whose rank's share x{:.3g}", resized.allGathers, share)
                         : "",
      resized.parameterShare
          ? fmt::format("; {} data-parallel collective{} over {} copies of the job, the rank's share of the "
                        "parameters x{:.3g}",
                        resized.parameterShare, resized.parameterShare == 1 ? "" : "s",
                        set.ranks.size() / size_t(tp * set.pipelineStages), share)
          : "",
      resized.sends ? fmt::format("; {} pipeline sends and receives of sequence shards x{:.3g}", resized.sends, share)
                    : ""));
  return llvm::Error::success();
}

llvm::Error reshardTensorParallel(TraceSet &set, int tp, const std::string &profiledGpu,
                                  const std::vector<std::string> &imports, const std::string &stdlibDir,
                                  llvm::ArrayRef<std::string> dataParallel, int world) {
  auto g = gpuByName(profiledGpu, imports, stdlibDir);
  if (!g) return g.takeError();
  return reshardTensorParallel(set, tp, *g, dataParallel, world);
}

} // namespace rapid::profile
