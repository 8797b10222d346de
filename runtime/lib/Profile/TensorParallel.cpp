//===- TensorParallel.cpp - Which profiled work a tensor-parallel degree shards ===//

#include "rapid/Profile/TensorParallel.h"

#include <algorithm>
#include <fmt/format.h>
#include <unordered_map>

namespace rapid::profile {

static llvm::Error error(const std::string &what) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), what);
}

namespace {

struct Span {
  int64_t lo, hi;
};

/// One host thread's linears and the spans of work sharded with them.
struct Lane {
  std::vector<Span> linears;
  std::vector<bool> row;
  std::vector<Span> sharded; ///< ascending, disjoint
};

bool inside(const std::vector<Span> &spans, int64_t at, size_t *which = nullptr) {
  auto it = std::upper_bound(spans.begin(), spans.end(), at, [](int64_t t, const Span &s) { return t < s.lo; });
  if (it == spans.begin() || at >= std::prev(it)->hi) return false;
  if (which) *which = size_t(std::prev(it) - spans.begin());
  return true;
}

std::unordered_map<int64_t, Lane> lanes(const KinetoTrace &t) {
  using K = TpMarker::Kind;
  std::unordered_map<int64_t, std::vector<const TpMarker *>> by;
  for (const TpMarker &m : t.tpMarkers) by[m.lane].push_back(&m); // sorted by start already
  std::unordered_map<int64_t, Lane> out;
  for (const auto &[lane, marks] : by) {
    Lane &l = out[lane];
    for (const TpMarker *m : marks)
      if (m->kind == K::Linear) l.linears.push_back({m->startNs, m->endNs});
    // A linear is row-parallel when a tensor-parallel reduction starts
    // after it and before the next linear.
    for (size_t i = 0; i < l.linears.size(); ++i) {
      int64_t until = i + 1 < l.linears.size() ? l.linears[i + 1].lo : INT64_MAX;
      l.row.push_back(std::any_of(marks.begin(), marks.end(), [&](const TpMarker *m) {
        return m->kind == K::Reduce && m->startNs >= l.linears[i].hi && m->startNs < until;
      }));
    }
    for (size_t i = 0; i < l.linears.size(); ++i) {
      if (l.row[i]) continue;
      if (i + 1 < l.linears.size()) {
        l.sharded.push_back({l.linears[i].hi, l.linears[i + 1].lo});
        continue;
      }
      for (const TpMarker *m : marks) // the output layer's loss
        if (m->kind == K::VocabCrossEntropy && m->startNs >= l.linears[i].hi) l.sharded.push_back({m->startNs, m->endNs});
    }
  }
  return out;
}

} // namespace

llvm::Expected<TpRoles> tensorParallelRoles(const KinetoTrace &t) {
  using K = TpMarker::Kind;
  auto has = [&](K k) {
    return std::find_if(t.tpMarkers.begin(), t.tpMarkers.end(), [&](const TpMarker &m) { return m.kind == k; });
  };
  if (auto it = has(K::Backward); it != t.tpMarkers.end())
    return error(fmt::format("{}: a backward pass (autograd::engine::evaluate_function at {:.3f} ms into the step): "
                             "the tensor-parallel what-if reads forward passes only",
                             t.file, double(it->startNs) / 1e6));
  if (auto it = has(K::SequenceParallel); it != t.tpMarkers.end())
    return error(fmt::format("{}: sequence parallelism (a *SequenceParallelRegion at {:.3f} ms into the step): its "
                             "replicated work and collectives change with the degree in ways the what-if does not "
                             "derive yet",
                             t.file, double(it->startNs) / 1e6));
  if (has(K::Linear) == t.tpMarkers.end())
    return error(t.file + ": no Megatron-LM tensor-parallel linears (cpu_ops named "
                          "LinearWithGradAccumulationAndAsyncCommunication): nothing says which work is sharded");
  std::unordered_map<int64_t, Lane> byLane = lanes(t);
  std::unordered_map<int64_t, const Event *> callOf;
  for (const Event &e : t.host)
    if (e.kind == EventKind::Runtime) callOf[e.correlation] = &e;
  TpRoles out;
  for (const auto &[lane, l] : byLane)
    for (bool r : l.row) ++(r ? out.rows : out.columns);
  out.device.reserve(t.device.size());
  for (const Event &d : t.device) {
    TpRole role = TpRole::Replicated;
    auto call = callOf.find(d.correlation);
    auto lane = call == callOf.end() ? byLane.end() : byLane.find(call->second->lane);
    // A memset inside a matrix multiply (cuBLAS zeroing a split-K output) is
    // work on its output, not the GEMM.
    bool gemm = d.kind == EventKind::Kernel && d.op >= 0 && t.ops[size_t(d.op)].kind == ShapedOp::Kind::Matmul;
    size_t which = 0;
    if (d.kind == EventKind::Kernel && isNcclKernel(t.name(d))) {
      role = TpRole::Collective;
    } else if (lane != byLane.end()) {
      const Lane &l = lane->second;
      int64_t at = call->second->startNs;
      if (inside(l.linears, at, &which)) // a row-parallel linear's other work (bias, copies) is on its full output
        role = l.row[which] ? (gemm ? TpRole::Row : TpRole::Replicated) : (gemm ? TpRole::Column : TpRole::Sharded);
      else if (inside(l.sharded, at))
        role = TpRole::Sharded;
    }
    out.device.push_back(role);
  }
  return out;
}

} // namespace rapid::profile
