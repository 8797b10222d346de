//===- Symmetry.cpp - Which ranks stand for all the others ----------------===//
//
// A set S of simulated ranks runs as the whole machine would when no link
// carries both S's traffic and traffic S does not simulate. That holds when
//  - no link is faulted (the caller checks: faults break the symmetry;
//    under soft faults, faultedProbe and pipelineClasses below find what
//    the faults reach from the router's paths instead);
//  - every network dimension S's simulated traffic takes, whose lines hold
//    ranks both in and out of S, gives each rank ports of its own: a switch,
//    a fat tree of one leaf, or a link per pair (fully connected). Rings,
//    meshes, tori and multi-level trees carry traffic through links that
//    other ranks use too;
//  - every pipeline peer of S's ranks differs in one dimension at most (a
//    route through a second dimension passes other ranks' ports), and every
//    group too unless it is a grid (the runtime then runs its collectives one
//    phase per axis, each phase's routes in one dimension);
//  - what S simulates as collectives stays inside S, and what it replays is
//    timed exactly by one group alone: that group lies on one line whose
//    ports are private or that holds no other group.
// The probe's S is the first replica's stages that probe differently from
// every earlier one, or else the whole first replica (data-parallel
// collectives are not in blocks); the pipeline's is one rank per stage,
// replaying every collective, or else a slab (pipelineSlab: whole axes of
// the network, simulating every collective) or the first replica, whichever
// is smaller, or else every rank (sends through other ranks' ports are then
// all simulated), the last two replaying the data-parallel ones. What a
// reduction leaves out: a replayed collective and sends sharing a port, the
// rank's own or, with every rank, one a send passes (docs/simulation.md,
// "Ranks that stand for the others").
//===----------------------------------------------------------------------===//
#include "Symmetry.h"

#include "Hierarchical.h"
#include "rapid/IR/RankLayout.h"
#include "rapid/Collectives/GroupGrid.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <optional>
#include <set>

namespace rapid::run {
namespace {

bool portPrivate(const net::DimSpec &d) {
  switch (d.kind) {
  case net::DimKind::Switch:
  case net::DimKind::FullyConnected: return true;
  case net::DimKind::FatTree: return d.leafSize >= d.size();
  default: return false;
  }
}

/// The network seen as lines: which ranks a line holds and whose ports are private.
class Lines {
public:
  Lines(const net::NetworkSpec &net, int64_t ranks) : ranks(ranks), net(net) {
    int64_t stride = 1;
    for (const net::DimSpec &d : net.dims) {
      dims.push_back({stride, int64_t(d.size()), portPrivate(d), d.shape});
      stride *= d.size();
    }
  }
  /// Whether every line of a dimension in `used` through a rank of `set`
  /// that holds a rank outside it has private ports.
  bool closed(const std::vector<int64_t> &set, const std::set<int> &used) const {
    std::vector<uint8_t> in(size_t(ranks), 0);
    for (int64_t r : set) in[r] = 1;
    for (int64_t r : set)
      for (int d : used)
        if (!dims[d].private_ && !lineWithin(in, r, dims[d])) return false;
    return true;
  }
  /// The dimensions `members` differ in, ascending.
  std::vector<int> crossed(const std::vector<int64_t> &members) const {
    std::vector<int> out;
    for (size_t i = 0; i < dims.size(); ++i)
      if (std::any_of(members.begin(), members.end(),
                      [&](int64_t m) { return coord(m, dims[i]) != coord(members[0], dims[i]); }))
        out.push_back(int(i));
    return out;
  }
  /// Whether `members` take every combination of the coordinates they take
  /// on the network's axes: the runtime then runs their collectives one
  /// phase per axis (coll::groupGrid), each phase's routes in one dimension.
  bool grid(const std::vector<int64_t> &members) const {
    if (coll::withinOneNode(net, crossed(members))) return false; // one ring over the node (same_node)
    int64_t cells = 1;
    for (const Dim &d : dims) {
      int64_t axisStride = 1;
      for (int extent : d.shape) {
        std::set<int64_t> seen;
        for (int64_t m : members) seen.insert(coord(m, d) / axisStride % extent);
        axisStride *= extent;
        if ((cells *= int64_t(seen.size())) > int64_t(members.size())) return false;
      }
    }
    return cells == int64_t(members.size());
  }
  /// Whether a collective of `members` alone takes the time it takes among
  /// all its like: each dimension it crosses gives each rank ports of its
  /// own or holds its members only, and it crosses several as a grid.
  bool alone(const std::vector<int64_t> &members) const {
    std::vector<int> through = crossed(members);
    if (through.empty()) return true;
    if (through.size() > 1 && !grid(members)) return false;
    std::vector<uint8_t> in(size_t(ranks), 0);
    for (int64_t m : members) in[m] = 1;
    for (int d : through)
      if (!dims[d].private_)
        for (int64_t m : members)
          if (!lineWithin(in, m, dims[d])) return false;
    return true;
  }

private:
  struct Dim {
    int64_t stride, size;
    bool private_;
    std::vector<int> shape; ///< the dimension's axes
  };
  static int64_t coord(int64_t r, const Dim &d) { return r / d.stride % d.size; }
  static bool lineWithin(const std::vector<uint8_t> &in, int64_t r, const Dim &d) {
    int64_t base = r - coord(r, d) * d.stride;
    for (int64_t c = 0; c < d.size; ++c)
      if (!in[base + c * d.stride]) return false;
    return true;
  }
  std::vector<Dim> dims;
  int64_t ranks;
  const net::NetworkSpec &net;
};

std::vector<int64_t> everyRank(const RankLayout &layout) {
  std::vector<int64_t> out(size_t(layout.ranks()));
  std::iota(out.begin(), out.end(), 0);
  return out;
}


/// Whether simulating `set` on the ops of `prog` that `kept` picks is
/// exact, replaying the collectives `replayed` picks and simulating the rest.
template <typename Kept, typename Replayed>
bool exact(const ir::Program &prog, const RankLayout &layout, const Lines &lines, const std::vector<int64_t> &set,
           Kept kept, Replayed replayed) {
  struct Traffic {
    std::set<std::pair<ir::Group, bool>> kinds; ///< (group, replayed)
    std::set<int32_t> peers;
  };
  std::vector<Traffic> byStage(prog.stages.size());
  for (const ir::Graph &g : prog.stages)
    for (const ir::Op &op : g.ops) {
      if (!kept(op)) continue;
      if (op.kind == ir::OpKind::Send || op.kind == ir::OpKind::Recv) byStage[g.stage].peers.insert(op.peer);
      else if (op.isComm()) byStage[g.stage].kinds.insert({op.group, replayed(op)});
    }
  std::set<int> used; // dimensions the simulated traffic takes
  std::vector<uint8_t> in(size_t(layout.ranks()), 0);
  for (int64_t r : set) in[r] = 1;
  for (int64_t r : set) {
    const Traffic &t = byStage[layout.coord(r, ir::Group::PP)];
    for (int32_t p : t.peers) {
      int64_t peer = layout.with(r, ir::Group::PP, p);
      std::vector<int> through = lines.crossed({r, peer});
      if ((through.size() > 1 && int64_t(set.size()) < layout.ranks()) || !in[peer]) return false;
      used.insert(through.begin(), through.end());
    }
    for (auto [kind, replay] : t.kinds) {
      std::vector<int64_t> m = layout.members(r, kind);
      if (replay) {
        if (!lines.alone(m)) return false;
        continue;
      }
      // A group across dimensions runs as a grid (Lines::grid), each phase in one.
      std::vector<int> through = lines.crossed(m);
      if ((through.size() > 1 && !lines.grid(m)) || !std::all_of(m.begin(), m.end(), [&](int64_t x) { return in[x]; }))
        return false;
      used.insert(through.begin(), through.end());
    }
  }
  return lines.closed(set, used);
}

/// What a stage's probe simulates, op for op, without the layer numbers:
/// stages with equal signatures time their blocks alike. With `buckets`,
/// the data-parallel collectives too (of a tail probe, tailProbeProgram).
std::string probeSignature(const ir::Program &prog, const ir::Graph &g, bool buckets = false) {
  std::string sig;
  int32_t firstLayer = -1;
  auto put = [&](const auto &v) { sig.append(reinterpret_cast<const char *>(&v), sizeof v); };
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const ir::Op &op = g.ops[i];
    std::optional<BlockKey> k = blockOf(op);
    bool probed = op.micro == 0 && probedOp(prog, op);
    if (!probed && !(buckets && isDataParallel(op))) continue;
    if (firstLayer < 0 && op.layer >= 0) firstLayer = op.layer;
    appendSignature(sig, op);
    put(k ? k->part : -1), put(op.layer < 0 ? -1 : op.layer - firstLayer);
    for (uint32_t d : op.deps) put(uint32_t(i - d));
    put(uint32_t(~0u));
  }
  return sig;
}

} // namespace

std::vector<int32_t> probeStages(const ir::Program &prog) {
  std::map<std::string, int32_t> first;
  std::vector<int32_t> out;
  for (const ir::Graph &g : prog.stages) out.push_back(first.try_emplace(probeSignature(prog, g), g.stage).first->second);
  return out;
}

void copyRepresented(BlockTimes &times, const ir::Program &prog, const std::vector<int32_t> &stageOf) {
  for (const ir::Graph &g : prog.stages) {
    int32_t rep = stageOf[g.stage];
    if (rep == g.stage) continue;
    std::set<BlockKey> keys; // this stage's blocks in key order, as the representative's
    for (const ir::Op &op : g.ops)
      if (std::optional<BlockKey> k = blockOf(op); k && op.micro == 0) keys.insert(*k);
    auto from = times[rep].begin();
    for (const BlockKey &k : keys) times[g.stage][k] = (from++)->second;
  }
}

bool isCollective(const ir::Op &op) {
  return op.isComm() && op.kind != ir::OpKind::Send && op.kind != ir::OpKind::Recv;
}

bool isDataParallel(const ir::Op &op) {
  return isCollective(op) && ir::isDataParallel(op.group);
}

bool outsideBlocks(const ir::Op &op) { return !blockOf(op); }

std::vector<StageTalk> stageTalk(const ir::Program &prog, llvm::function_ref<bool(const ir::Op &)> kept) {
  std::vector<StageTalk> out(prog.stages.size());
  for (const ir::Graph &g : prog.stages)
    for (const ir::Op &op : g.ops)
      if (op.isComm() && kept(op))
        isCollective(op) ? (void)out[g.stage].groups.insert(op.group) : (void)out[g.stage].peers.insert(op.peer);
  return out;
}

bool bucketsMeetBlocks(const ir::Program &tailProbe, const net::NetworkSpec &net) {
  RankLayout layout(tailProbe.layout);
  Lines lines(net, layout.ranks());
  std::set<int> blocks, buckets;
  for (const ir::Graph &g : tailProbe.stages)
    for (const ir::Op &op : g.ops)
      if (isCollective(op)) { // every rank of a stage has its groups along the same dimensions
        std::vector<int> through = lines.crossed(layout.members(layout.firstRankOfStage(g.stage), op.group));
        (isDataParallel(op) ? buckets : blocks).insert(through.begin(), through.end());
      }
  return std::any_of(buckets.begin(), buckets.end(), [&](int d) { return blocks.count(d) > 0; });
}

TailReduction reduceTail(const ir::Program &tailProbe, const net::NetworkSpec &net) {
  RankLayout layout(tailProbe.layout);
  Lines lines(net, layout.ranks());
  std::map<std::string, int32_t> first;
  std::vector<int32_t> stageOf;
  for (const ir::Graph &g : tailProbe.stages)
    stageOf.push_back(first.try_emplace(probeSignature(tailProbe, g, true), g.stage).first->second);
  std::vector<int64_t> distinct; // every replica of the stages that differ: the buckets cross them
  for (int64_t r = 0; r < layout.ranks(); ++r)
    if (int64_t s = layout.coord(r, ir::Group::PP); stageOf[s] == s) distinct.push_back(r);
  auto every = [](const ir::Op &) { return true; };
  auto none = [](const ir::Op &) { return false; };
  if (int64_t(distinct.size()) < layout.ranks() && exact(tailProbe, layout, lines, distinct, every, none))
    return {distinct, stageOf};
  return {};
}

/// Whether routes inside a dimension of this kind stay on the axes their
/// ends differ in (grids route axis by axis, without diagonals), so that
/// ranks set apart by another axis share no link in it.
bool axisSeparable(const net::DimSpec &d) {
  switch (d.kind) {
  case net::DimKind::Ring:
  case net::DimKind::Mesh:
  case net::DimKind::Mesh2D:
  case net::DimKind::Torus2D:
  case net::DimKind::Torus3D: return true;
  default: return false;
  }
}

/// The pipeline level's slab: the ranks that share rank 0's coordinate on
/// every network axis its traffic (sends and the collectives blocks leave
/// out) does not vary. Every route between two of them passes only through
/// ranks of the slab, and on axes of grids (axisSeparable) or private ports
/// other slabs take none of its links; elsewhere the slab holds whole lines
/// of a dimension. Every slab runs the same stages alike, so one stands for
/// all, simulating every collective. None when the slab is every rank or a
/// dimension would be cut.
std::optional<std::vector<int64_t>> pipelineSlab(const ir::Program &prog, const RankLayout &layout,
                                                 const net::NetworkSpec &net) {
  struct Axis {
    size_t dim;
    int64_t stride, extent;
  };
  std::vector<Axis> axes;
  int64_t stride = 1;
  for (size_t d = 0; d < net.dims.size(); ++d)
    for (int e : net.dims[d].shape) axes.push_back({d, stride, e}), stride *= e;
  auto coord = [](int64_t r, const Axis &a) { return r / a.stride % a.extent; };
  // Every rank of a stage has its peers and groups along the same axes.
  std::vector<uint8_t> varied(axes.size(), 0);
  auto vary = [&](int64_t r, int64_t other) {
    for (size_t a = 0; a < axes.size(); ++a) varied[a] |= coord(r, axes[a]) != coord(other, axes[a]);
  };
  std::vector<StageTalk> talk = stageTalk(prog, outsideBlocks);
  for (const ir::Graph &g : prog.stages) {
    int64_t r = layout.firstRankOfStage(g.stage);
    for (int32_t p : talk[g.stage].peers) vary(r, layout.with(r, ir::Group::PP, p));
    for (ir::Group k : talk[g.stage].groups)
      for (int64_t m : layout.members(r, k)) vary(r, m);
  }
  for (size_t a = 0; a < axes.size(); ++a) {
    const net::DimSpec &d = net.dims[axes[a].dim];
    if (axisSeparable(d) || portPrivate(d)) continue;
    for (size_t b = 0; b < axes.size(); ++b) // a dimension whose routes cross axes: all of it or none
      if (axes[b].dim == axes[a].dim && varied[b] != varied[a]) return std::nullopt;
  }
  std::vector<int64_t> slab;
  std::vector<uint8_t> in(size_t(layout.ranks()), 0);
  for (int64_t r = 0; r < layout.ranks(); ++r) {
    bool inside = true;
    for (size_t a = 0; a < axes.size() && inside; ++a) inside = varied[a] || coord(r, axes[a]) == 0;
    if (inside) slab.push_back(r), in[r] = 1;
  }
  if (int64_t(slab.size()) == layout.ranks()) return std::nullopt;
  for (int64_t r : slab) { // what the slab's ranks talk to stays in it
    const StageTalk &t = talk[layout.coord(r, ir::Group::PP)];
    for (int32_t p : t.peers)
      if (!in[layout.with(r, ir::Group::PP, p)]) return std::nullopt;
    for (ir::Group k : t.groups)
      for (int64_t m : layout.members(r, k))
        if (!in[m]) return std::nullopt;
  }
  return slab;
}

Reduction reduce(const ir::Program &prog, const net::NetworkSpec &net, bool faulted) {
  const ir::Layout &l = prog.layout;
  RankLayout layout(l);
  Lines lines(net, layout.ranks());
  Reduction out;
  std::vector<int64_t> replica;
  if (l.dp / l.ep >= 2)
    for (int64_t r = 0; r < layout.ranks(); ++r)
      if (layout.coord(r, ir::Group::DP) < l.ep) replica.push_back(r);
  auto none = [](const ir::Op &) { return false; };
  // The probe runs the blocks alone: on the first replica's stages that
  // differ (every stage whose probe is another's is copied from it), or on
  // the whole first replica; the pipeline runs what blocks leave out.
  // With faults stages and replicas may differ: every rank is simulated,
  // each with its own block times.
  if (faulted) return out;
  auto probed = [&](const ir::Op &op) { return probedOp(prog, op); };
  std::vector<int32_t> stageOf = probeStages(prog);
  std::vector<int64_t> distinct;
  for (int64_t r = 0; r < layout.ranks(); ++r)
    if (layout.coord(r, ir::Group::DP) < l.ep) {
      int64_t s = layout.coord(r, ir::Group::PP);
      if (stageOf[s] == s) distinct.push_back(r);
    }
  if (int64_t(distinct.size()) < layout.ranks() && exact(prog, layout, lines, distinct, probed, none)) {
    out.probe = distinct;
    out.probeStageOf = stageOf;
  } else if (!replica.empty() && exact(prog, layout, lines, replica, probed, none)) {
    out.probe = replica;
  }
  std::vector<int64_t> firsts;
  for (int64_t s = 0; s < l.pp; ++s) firsts.push_back(layout.firstRankOfStage(s));
  using Replay = Reduction::Replay;
  if (int64_t(firsts.size()) < layout.ranks() &&
      exact(prog, layout, lines, firsts, outsideBlocks, [](const ir::Op &) { return true; })) {
    out.pipeline = firsts;
    out.replay = Replay::All;
    return out;
  }
  // The slab simulates every collective; the replica, if smaller, replays
  // the data-parallel ones.
  std::optional<std::vector<int64_t>> slab = pipelineSlab(prog, layout, net);
  if (!replica.empty() && (!slab || replica.size() < slab->size()) &&
      exact(prog, layout, lines, replica, outsideBlocks, isDataParallel)) {
    out.pipeline = replica;
    out.replay = Replay::DataParallel;
  } else if (slab) {
    out.pipeline = std::move(*slab);
  } else if (std::vector<int64_t> all = everyRank(layout); exact(prog, layout, lines, all, outsideBlocks, isDataParallel)) {
    out.pipeline = all; // sends through other ranks' ports: every rank's, the DP collectives replayed
    out.replay = Replay::DataParallel;
  }
  return out;
}

ir::Program collectiveProgram(const ir::Program &prog, const ir::Op &op, int32_t stage) {
  ir::Program out = emptyStages(prog);
  ir::Op c = op;
  c.deps.clear();
  c.time = Seconds(0);
  out.stages[stage].add(std::move(c));
  return out;
}

} // namespace rapid::run
