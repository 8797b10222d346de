//===- TensorParallel.cpp - Which profiled work a tensor-parallel degree shards ===//

#include "rapid/Profile/TensorParallel.h"

#include "rapid/Profile/ExecGraph.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <tuple>
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
  std::vector<int64_t> shard; ///< each linear GEMM's sharded dimension (N or K) a rank; 0: no shaped GEMM
  std::vector<Span> sharded;  ///< ascending, disjoint
  std::vector<Span> optimizer;
  /// Sequence parallelism: when the activations between the linears became
  /// sequence shards (a scatter, or a reduce-scatter) and whole again (a
  /// gather), by time.
  std::vector<std::pair<int64_t, bool>> sequence;
  bool sequenceSharded(int64_t at) const {
    auto it = std::upper_bound(sequence.begin(), sequence.end(), std::pair{at, true});
    return it != sequence.begin() && std::prev(it)->second;
  }
};

/// The role of a linear's (or a node's) work and the size it is sharded to.
struct NodeRole {
  TpRole role = TpRole::Replicated;
  int64_t shard = 0;
};

bool inside(const std::vector<Span> &spans, int64_t at, size_t *which = nullptr) {
  auto it = std::upper_bound(spans.begin(), spans.end(), at, [](int64_t t, const Span &s) { return t < s.lo; });
  if (it == spans.begin() || at >= std::prev(it)->hi) return false;
  if (which) *which = size_t(std::prev(it) - spans.begin());
  return true;
}

/// The first matrix multiply `t` recorded on `lane` within [lo, hi).
const ShapedOp *gemmIn(const KinetoTrace &t, int64_t lane, int64_t lo, int64_t hi) {
  auto it = std::lower_bound(t.ops.begin(), t.ops.end(), std::pair{lane, lo}, [](const ShapedOp &o, auto key) {
    return std::pair{o.lane, o.startNs} < key;
  });
  for (; it != t.ops.end() && it->lane == lane && it->startNs < hi; ++it)
    if (it->kind == ShapedOp::Kind::Matmul) return &*it;
  return nullptr;
}

std::unordered_map<int64_t, Lane> lanes(const KinetoTrace &t) {
  using K = TpMarker::Kind;
  std::unordered_map<int64_t, std::vector<const TpMarker *>> by;
  for (const TpMarker &m : t.tpMarkers) by[m.lane].push_back(&m); // sorted by start already
  std::unordered_map<int64_t, Lane> out;
  for (const auto &[lane, marks] : by) {
    Lane &l = out[lane];
    std::vector<int64_t> reduces; // starts, ascending
    std::vector<Span> losses;
    for (const TpMarker *m : marks) {
      if (m->kind == K::Linear) l.linears.push_back({m->startNs, m->endNs});
      if (m->kind == K::Optimizer) l.optimizer.push_back({m->startNs, m->endNs});
      if (m->kind == K::Reduce || m->kind == K::ReduceScatter) reduces.push_back(m->startNs);
      if (m->kind == K::VocabCrossEntropy) losses.push_back({m->startNs, m->endNs});
      if (m->kind == K::SequenceScatter || m->kind == K::ReduceScatter || m->kind == K::SequenceGather)
        l.sequence.emplace_back(m->startNs, m->kind != K::SequenceGather);
    }
    // The first of `starts` at or after `from`.
    auto firstFrom = [](const auto &starts, int64_t from, auto startOf) {
      return std::lower_bound(starts.begin(), starts.end(), from,
                              [&](const auto &x, int64_t t) { return startOf(x) < t; });
    };
    // A linear is row-parallel when a tensor-parallel reduction starts
    // after it and before the next linear (and before a loss: the next
    // microbatch's embeddings reduce too).
    for (size_t i = 0; i < l.linears.size(); ++i) {
      int64_t until = i + 1 < l.linears.size() ? l.linears[i + 1].lo : INT64_MAX;
      if (auto loss = firstFrom(losses, l.linears[i].hi, [](const Span &x) { return x.lo; }); loss != losses.end())
        until = std::min(until, loss->lo);
      auto r = firstFrom(reduces, l.linears[i].hi, [](int64_t x) { return x; });
      l.row.push_back(r != reduces.end() && *r < until);
      const ShapedOp *g = gemmIn(t, lane, l.linears[i].lo, l.linears[i].hi);
      l.shard.push_back(g ? (l.row[i] ? g->k : g->n) : 0);
    }
    // A column-parallel linear's output is worked on until the row-parallel
    // linear that takes it; the output layer's (no row-parallel linear next:
    // the last of a forward pass, or one before the next microbatch's
    // linears) by the loss alone.
    for (size_t i = 0; i < l.linears.size(); ++i) {
      if (l.row[i]) continue;
      int64_t until = i + 1 < l.linears.size() ? l.linears[i + 1].lo : INT64_MAX;
      if (i + 1 < l.linears.size() && l.row[i + 1]) {
        l.sharded.push_back({l.linears[i].hi, until});
        continue;
      }
      for (auto it = firstFrom(losses, l.linears[i].hi, [](const Span &x) { return x.lo; });
           it != losses.end() && it->lo < until; ++it)
        l.sharded.push_back(*it);
    }
  }
  return out;
}

/// What forward work started at `at` on `lane` is: a linear's (Column or
/// Row, with its shard), sharded with one or along the sequence, or
/// replicated.
NodeRole forwardRole(const std::unordered_map<int64_t, Lane> &lanes, int64_t lane, int64_t at) {
  auto it = lanes.find(lane);
  if (it == lanes.end()) return {};
  const Lane &l = it->second;
  size_t j = 0;
  if (inside(l.linears, at, &j)) return {l.row[j] ? TpRole::Row : TpRole::Column, l.shard[j]};
  if (inside(l.sharded, at) || l.sequenceSharded(at)) return {TpRole::Sharded, 0};
  return {};
}

/// The backward pass's evaluate_function spans on one thread, each with the
/// role of the forward node it differentiates.
struct BackwardLane {
  std::vector<Span> spans; ///< by start; they may nest
  std::vector<NodeRole> roles;
  /// The innermost span holding `at`, if any.
  const NodeRole *at(int64_t at) const {
    auto it = std::upper_bound(spans.begin(), spans.end(), at, [](int64_t t, const Span &s) { return t < s.lo; });
    for (int back = 0; it != spans.begin() && back < 64; ++back) {
      --it;
      if (at < it->hi) return &roles[size_t(it - spans.begin())];
    }
    return nullptr;
  }
};

} // namespace

/// Megatron-LM's sequence parallelism: the embeddings scattered along the
/// sequence, or a row-parallel output reduce-scattered along it.
static bool sequenceParallel(const KinetoTrace &t) {
  return llvm::any_of(t.tpMarkers, [](const TpMarker &m) {
    return m.kind == TpMarker::Kind::SequenceScatter || m.kind == TpMarker::Kind::ReduceScatter;
  });
}

llvm::Expected<TpRoles> tensorParallelRoles(const KinetoTrace &t) {
  using K = TpMarker::Kind;
  auto has = [&](K k) {
    return std::find_if(t.tpMarkers.begin(), t.tpMarkers.end(), [&](const TpMarker &m) { return m.kind == k; });
  };
  if (auto it = has(K::SequenceParallel); it != t.tpMarkers.end())
    return error(fmt::format("{}: a sequence-parallel region of another kind than Megatron-LM's scatter, gather and "
                             "reduce-scatter (a *SequenceParallelRegion at {:.3f} ms into the step): what it shards "
                             "is not known",
                             t.file, double(it->startNs) / 1e6));
  if (has(K::Linear) == t.tpMarkers.end())
    return error(t.file + ": no Megatron-LM tensor-parallel linears (cpu_ops named "
                          "LinearWithGradAccumulationAndAsyncCommunication): nothing says which work is sharded");
  std::unordered_map<int64_t, Lane> byLane = lanes(t);
  TpRoles out;
  out.sequenceParallel = sequenceParallel(t);
  for (const auto &[lane, l] : byLane)
    for (bool r : l.row) ++(r ? out.rows : out.columns);
  // Each backward node does the work of its forward node's kind.
  std::map<std::pair<int64_t, int64_t>, NodeRole> nodes; // (forward thread, sequence number)
  for (const AutogradOp &a : t.autograd)
    if (!a.backward) nodes[{a.forwardThread, a.seq}] = forwardRole(byLane, a.lane, a.startNs);
  std::unordered_map<int64_t, BackwardLane> backward;
  for (const AutogradOp &a : t.autograd) {
    if (!a.backward) continue;
    auto node = nodes.find({a.forwardThread, a.seq});
    BackwardLane &b = backward[a.lane];
    b.spans.push_back({a.startNs, a.endNs});
    b.roles.push_back(node == nodes.end() ? NodeRole{} : node->second);
    ++(node == nodes.end() ? out.unmatchedBackward : out.backward);
  }
  std::unordered_map<int64_t, const Event *> callOf;
  for (const Event &e : t.host)
    if (e.kind == EventKind::Runtime) callOf[e.correlation] = &e;
  out.device.reserve(t.device.size());
  out.shard.assign(t.device.size(), 0);
  for (size_t i = 0; i < t.device.size(); ++i) {
    const Event &d = t.device[i];
    auto call = callOf.find(d.correlation);
    // A memset inside a matrix multiply (cuBLAS zeroing a split-K output) is
    // work on its output, not the GEMM.
    bool gemm = d.kind == EventKind::Kernel && d.op >= 0 && t.ops[size_t(d.op)].kind == ShapedOp::Kind::Matmul;
    TpRole role = TpRole::Replicated;
    if (d.kind == EventKind::Kernel && isNcclKernel(t.name(d))) {
      role = TpRole::Collective;
    } else if (call != callOf.end()) {
      int64_t lane = call->second->lane, at = call->second->startNs;
      auto b = backward.find(lane);
      auto l = byLane.find(lane);
      if (const NodeRole *n = b == backward.end() ? nullptr : b->second.at(at)) {
        // A linear's backward is all sharded work: its input and weight
        // gradients each have the shard as one dimension.
        bool linear = n->role == TpRole::Column || n->role == TpRole::Row;
        role = linear ? (gemm ? TpRole::Grad : TpRole::Sharded) : n->role;
        if (role == TpRole::Grad) out.shard[i] = n->shard;
      } else if (l != byLane.end() && inside(l->second.optimizer, at)) {
        role = TpRole::Sharded;
      } else {
        NodeRole f = forwardRole(byLane, lane, at);
        // A row-parallel linear's other work (bias, copies) is on its full output.
        role = f.role == TpRole::Column ? (gemm ? TpRole::Column : TpRole::Sharded)
               : f.role == TpRole::Row  ? (gemm ? TpRole::Row : TpRole::Replicated)
                                        : f.role;
      }
    }
    out.device.push_back(role);
  }
  return out;
}

llvm::Expected<ResizedCollectives> reshardCollectives(KinetoTrace &t, int from, int to) {
  std::vector<int32_t> noteOf = launchAnnotations(t);
  // What each collective's bytes become: exactly from/to (a tensor-parallel
  // all-gather, a sequence-parallel job's pipeline send) or to the byte (a
  // collective over the rank's share of the parameters: from/to, and for
  // an all-gather, whose input is a member's share, over the group's growth).
  enum class Resize : uint8_t { Keep, Gather, Send, Rounded };
  bool sequence = sequenceParallel(t);
  std::vector<Resize> comm(t.comms.size(), Resize::Keep);
  std::vector<double> roundedBy(t.comms.size(), 1.0);
  std::vector<std::tuple<Event *, Resize, double>> annotations;
  ResizedCollectives out;
  for (size_t i = 0; i < t.device.size(); ++i) {
    const Event &d = t.device[i];
    llvm::StringRef name = t.name(d);
    if (d.kind != EventKind::Kernel || !isNcclKernel(name)) continue;
    const CommInfo *c = d.comm >= 0 ? &t.comms[size_t(d.comm)] : nullptr;
    if (c && c->peer >= 0) continue; // a send or receive: below
    const ProcessGroup *g = c && c->group >= 0 ? &t.groups[size_t(c->group)] : nullptr;
    bool gather = name.contains("_AllGather");
    Resize how = g && g->parameterShare ? Resize::Rounded : gather ? Resize::Gather : Resize::Keep;
    if (how == Resize::Keep) continue;
    ++(how == Resize::Rounded ? out.parameterShare : out.allGathers);
    double by = double(from) / to;
    if (how == Resize::Rounded && gather && g->profiledSize > 0 && !g->ranks.empty())
      by *= double(g->profiledSize) / double(g->ranks.size());
    if (d.comm >= 0) comm[size_t(d.comm)] = how, roundedBy[size_t(d.comm)] = by;
    if (noteOf[i] >= 0) annotations.emplace_back(&t.host[size_t(noteOf[i])], how, by);
  }
  auto scale = [&](int64_t &bytes, Resize how, double by) -> llvm::Error {
    if (bytes < 0 || how == Resize::Keep) return llvm::Error::success();
    if (how == Resize::Rounded) {
      bytes = std::max<int64_t>(bytes > 0, std::llround(double(bytes) * by));
      return llvm::Error::success();
    }
    if ((bytes * from) % to)
      return error(fmt::format("{}: {} of {} B a rank at tensor parallel {} does not split evenly over {}", t.file,
                               how == Resize::Send ? "a pipeline send" : "an all-gather", bytes, from, to));
    bytes = bytes * from / to;
    return llvm::Error::success();
  };
  std::sort(annotations.begin(), annotations.end());
  annotations.erase(std::unique(annotations.begin(), annotations.end(),
                                [](const auto &a, const auto &b) { return std::get<0>(a) == std::get<0>(b); }),
                    annotations.end());
  for (auto [a, how, by] : annotations)
    if (auto err = scale(a->bytes, how, by)) return err;
  // A pipeline send carries the activations at a stage's end: the whole
  // sequence on every tensor-parallel rank, or with sequence parallelism
  // the rank's share of it (Megatron-LM's p2p tensor shape). Each send and
  // receive is its own record, batched into one kernel or not.
  for (size_t c = 0; c < comm.size(); ++c) {
    if (sequence && t.comms[c].peer >= 0) comm[c] = Resize::Send, ++out.sends;
    if (auto err = scale(t.comms[c].bytes, comm[c], roundedBy[c])) return err;
  }
  return out;
}

} // namespace rapid::profile
