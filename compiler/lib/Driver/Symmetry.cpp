//===- Symmetry.cpp - Which ranks stand for all the others ----------------===//
//
// A set S of simulated ranks runs as the whole machine would when no link
// carries both S's traffic and traffic S does not simulate. That holds when
//  - no link is faulted (the caller checks: faults break the symmetry);
//  - every network dimension S's simulated traffic takes, whose lines hold
//    ranks both in and out of S, gives each rank ports of its own: a switch,
//    a fat tree of one leaf, or a link per pair (fully connected). Rings,
//    meshes, tori and multi-level trees carry traffic through links that
//    other ranks use too;
//  - every group and pipeline peer of S's ranks differs in one dimension at
//    most (a route through a second dimension passes other ranks' ports);
//  - what S simulates as collectives stays inside S, and what it replays is
//    timed exactly by one group alone: that group lies on one line whose
//    ports are private or that holds no other group.
// The probe's S is the first replica (data-parallel collectives are not in
// blocks); the pipeline's is one rank per stage, replaying every collective,
// or else the first replica, replaying the data-parallel ones.
// What a reduction leaves out: a replayed collective and the rank's sends
// sharing the rank's port (docs/runtime.md, "Hierarchical mode").
//===----------------------------------------------------------------------===//
#include "Symmetry.h"

#include "Hierarchical.h"
#include "rapid/IR/RankLayout.h"

#include <algorithm>
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
  Lines(const net::NetworkSpec &net, int64_t ranks) : ranks(ranks) {
    int64_t stride = 1;
    for (const net::DimSpec &d : net.dims) {
      dims.push_back({stride, int64_t(d.size()), portPrivate(d)});
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
  /// The one dimension `members` differ in; -1 for none, -2 for several.
  int dimOf(const std::vector<int64_t> &members) const {
    int found = -1;
    for (size_t i = 0; i < dims.size(); ++i) {
      const Dim &d = dims[i];
      bool differ = std::any_of(members.begin(), members.end(), [&](int64_t m) { return coord(m, d) != coord(members[0], d); });
      if (differ) found = found == -1 ? int(i) : -2;
    }
    return found;
  }
  /// Whether a collective of `members` alone takes the time it takes among all its like.
  bool alone(const std::vector<int64_t> &members) const {
    int d = dimOf(members);
    if (d == -1) return true;
    if (d == -2) return false;
    std::vector<uint8_t> in(size_t(ranks), 0);
    for (int64_t m : members) in[m] = 1;
    return dims[d].private_ || lineWithin(in, members[0], dims[d]);
  }

private:
  struct Dim {
    int64_t stride, size;
    bool private_;
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
};

/// Whether simulating `set` on the ops of `prog` that `kept` picks is
/// exact, replaying the collectives `replayed` picks and simulating the rest.
template <typename Kept, typename Replayed>
bool exact(const ir::Program &prog, const RankLayout &layout, const Lines &lines, const std::vector<int64_t> &set,
           Kept kept, Replayed replayed) {
  std::set<int> used; // dimensions the simulated traffic takes
  std::vector<uint8_t> in(size_t(layout.ranks()), 0);
  for (int64_t r : set) in[r] = 1;
  for (int64_t r : set) {
    const ir::Graph &g = prog.stages[layout.coord(r, ir::Group::PP)];
    std::set<std::pair<ir::Group, bool>> kinds;
    std::set<int32_t> peers;
    for (const ir::Op &op : g.ops) {
      if (!kept(op)) continue;
      if (op.kind == ir::OpKind::Send || op.kind == ir::OpKind::Recv) peers.insert(op.peer);
      else if (op.isComm()) kinds.insert({op.group, replayed(op)});
    }
    for (int32_t p : peers) {
      int d = lines.dimOf({r, layout.with(r, ir::Group::PP, p)});
      if (d == -2) return false;
      if (d >= 0) used.insert(d);
    }
    for (auto [kind, replay] : kinds) {
      std::vector<int64_t> m = layout.members(r, kind);
      if (replay) {
        if (!lines.alone(m)) return false;
        continue;
      }
      int d = lines.dimOf(m);
      if (d == -2 || !std::all_of(m.begin(), m.end(), [&](int64_t x) { return in[x]; })) return false;
      if (d >= 0) used.insert(d);
    }
  }
  return lines.closed(set, used);
}

} // namespace

bool isDataParallel(const ir::Op &op) {
  return op.isComm() && op.kind != ir::OpKind::Send && op.kind != ir::OpKind::Recv &&
         (op.group == ir::Group::DP || op.group == ir::Group::DPCP);
}

Reduction reduce(const ir::Program &prog, const net::NetworkSpec &net) {
  const ir::Layout &l = prog.layout;
  RankLayout layout(l);
  Lines lines(net, layout.ranks());
  Reduction out;
  std::vector<int64_t> replica;
  if (l.dp / l.ep >= 2)
    for (int64_t r = 0; r < layout.ranks(); ++r)
      if (layout.coord(r, ir::Group::DP) < l.ep) replica.push_back(r);
  auto inBlock = [](const ir::Op &op) { return blockOf(op).has_value(); };
  auto outsideBlocks = [&](const ir::Op &op) { return !inBlock(op); };
  // The probe runs the blocks alone; the pipeline what blocks leave out.
  if (!replica.empty() && exact(prog, layout, lines, replica, inBlock, [](const ir::Op &) { return false; }))
    out.probe = replica;
  std::vector<int64_t> firsts;
  for (int64_t s = 0; s < l.pp; ++s) firsts.push_back(layout.firstRankOfStage(s));
  if (int64_t(firsts.size()) < layout.ranks() &&
      exact(prog, layout, lines, firsts, outsideBlocks, [](const ir::Op &) { return true; })) {
    out.pipeline = firsts;
    out.timeAll = true;
  } else if (!replica.empty() && exact(prog, layout, lines, replica, outsideBlocks, isDataParallel)) {
    out.pipeline = replica;
  }
  return out;
}

ir::Program collectiveProgram(const ir::Program &prog, const ir::Op &op, int32_t stage) {
  ir::Program out;
  out.experiment = prog.experiment;
  out.layout = prog.layout;
  for (const ir::Graph &g : prog.stages) {
    ir::Graph ng;
    ng.stage = g.stage;
    if (g.stage == stage) {
      ir::Op c = op;
      c.deps.clear();
      c.time = Seconds(0);
      ng.add(std::move(c));
    }
    out.stages.push_back(std::move(ng));
  }
  return out;
}

} // namespace rapid::run
