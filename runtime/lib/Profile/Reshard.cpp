//===- Reshard.cpp - A profiled world at another tensor-parallel degree ---===//
//
// Which ranks a tensor-parallel what-if runs and whose profile each runs
// (TensorParallel.h, reshardWorld). The profiled world is read in
// Megatron-LM's order, rank = (stage x D + copy) x T + j: pipeline stages
// from the sends between them, data-parallel copies from the groups the
// user names, and the tensor-parallel degree from what is left. Every named
// group is then a product of the stages it holds, all copies or one, and a
// whole tensor-parallel group or one rank of it; that is what it stays in
// the new world.
//===----------------------------------------------------------------------===//
#include "WorldGroups.h"

#include "rapid/Profile/TensorParallel.h"

#include <fmt/format.h>
#include <set>

namespace rapid::profile {

static llvm::Error error(const std::string &what) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), what);
}

using GroupKey = NamedGroups::key_type;

namespace {
/// A world in Megatron-LM's order: tensor parallelism fastest, then the
/// data-parallel copies, then the pipeline stages.
struct Layout {
  int t = 1, d = 1, p = 1;
  int stage() const { return t * d; }
  int world() const { return stage() * p; }
  int rank(int pp, int dd, int j) const { return (pp * d + dd) * t + j; }
  int stageOf(int r) const { return r / stage(); }
  int copyOf(int r) const { return r % stage() / t; }
  int tensorOf(int r) const { return r % t; }
};

/// What a named group is in the layout, which it keeps at another degree.
struct GroupShape {
  std::vector<int> stages;   ///< the stages it holds
  bool world = false;        ///< every rank
  bool allCopies = false;    ///< every data-parallel copy of its stages (else the rank's own)
  bool allTensor = false;    ///< a whole tensor-parallel group (else the rank's own member)
  bool parameterShare = false; ///< its collectives move the rank's share of the sharded parameters
};
using Shapes = std::map<GroupKey, GroupShape>;
} // namespace

/// The ranks between pipeline stages: the least distance of a send to its
/// peer (the profiled world when nothing is sent), which every other send's
/// must be a multiple of (stages of equal size, slowest in the order).
static llvm::Expected<int> stageSize(const TraceSet &set) {
  int w = int(set.ranks.size()), s = w;
  const KinetoTrace *at = nullptr;
  for (const KinetoTrace &k : set.ranks)
    for (const CommInfo &c : k.comms)
      if (c.peer >= 0 && c.peer != k.rank && std::abs(c.peer - k.rank) < s) s = std::abs(c.peer - k.rank), at = &k;
  if (w % s)
    return error(fmt::format("{}: a send between ranks {} apart ({}): pipeline stages of {} ranks do not divide the "
                             "world of {}",
                             at->file, s, at->rank, s, w));
  for (const KinetoTrace &k : set.ranks)
    for (const CommInfo &c : k.comms)
      if (c.peer >= 0 && (c.peer - k.rank) % s)
        return error(fmt::format("{}: a send or receive between ranks {} and {}, where others are {} ranks apart: the "
                                 "tensor-parallel what-if takes pipeline stages of equal size in Megatron-LM's order "
                                 "(stages slowest); this layout is not derivable yet",
                                 k.file, k.rank, c.peer, s));
  return s;
}

/// The profiled layout and each named group's shape in it. The data-parallel
/// degree is the size of the groups `dataParallel` names; without them, the
/// tensor-parallel groups are the smallest named groups of consecutive ranks
/// inside a stage (the stage when there are none).
static llvm::Expected<std::pair<Layout, Shapes>> profiledLayout(const TraceSet &set,
                                                              llvm::ArrayRef<std::string> dataParallel) {
  NamedGroups groups = namedGroups(set);
  if (auto err = dataParallelNamed(set, groups, dataParallel)) return err;
  auto s = stageSize(set);
  if (!s) return s.takeError();
  int w = int(set.ranks.size());
  auto isData = [&](const GroupKey &key, const std::string &desc) {
    return llvm::is_contained(dataParallel, key.first) || llvm::is_contained(dataParallel, desc);
  };
  auto layoutError = [&](const GroupKey &key, const std::string &desc, const std::string &why) {
    return error(fmt::format("{}: process group {} {}: the tensor-parallel what-if takes tensor-parallel groups of "
                             "consecutive ranks, data-parallel groups of every so many and pipeline stages "
                             "(Megatron-LM's order); this layout is not derivable yet",
                             set.source, describeGroup(key, desc), why));
  };
  Layout l;
  l.p = w / *s;
  int t = *s;
  const GroupKey *dataGroup = nullptr;
  for (const auto &[key, desc] : groups) {
    int n = int(key.second.size());
    if (isData(key, desc)) {
      if (dataGroup && int(dataGroup->second.size()) != n)
        return layoutError(key, desc, fmt::format("has {} ranks where {} has {}", n,
                                                  describeGroup(*dataGroup, groups[*dataGroup]),
                                                  dataGroup->second.size()));
      if (*s % n) return layoutError(key, desc, fmt::format("has {} ranks, which do not divide a stage of {}", n, *s));
      if (!dataGroup) dataGroup = &key;
      t = *s / n;
    } else if (dataParallel.empty() && n < t && *s % n == 0 && key.second.front() % n == 0 &&
               key.second.back() - key.second.front() == n - 1) {
      t = n; // consecutive ranks from a multiple of their number: a tensor-parallel group
    }
  }
  l.t = t, l.d = *s / t;
  Shapes shapes;
  bool tensorGroup = false;
  for (const auto &[key, desc] : groups) {
    std::set<int> stages, copies, members;
    for (int r : key.second) stages.insert(l.stageOf(r)), copies.insert(l.copyOf(r)), members.insert(l.tensorOf(r));
    size_t n = key.second.size();
    if (n != stages.size() * copies.size() * members.size())
      return layoutError(key, desc, "is not whole stages, copies and tensor-parallel groups");
    GroupShape g;
    g.stages.assign(stages.begin(), stages.end());
    bool data = isData(key, desc);
    g.world = int(n) == w && !data;
    if (data) {
      if (int(copies.size()) != l.d || members.size() != 1 || stages.size() != 1)
        return layoutError(key, desc, fmt::format("is not every {}-th rank of a stage", l.t));
    } else if (!g.world) {
      bool oddMembers = members.size() != 1 && int(members.size()) != l.t;
      if (dataParallel.empty() && (oddMembers || copies.size() > 1))
        return error(fmt::format("{}: process group {} has {} of the {} ranks and is not consecutive ranks: say which "
                                 "groups are data parallel (--data-parallel, replay.data_parallel); the "
                                 "tensor-parallel what-if takes the others smaller than the world as tensor-parallel "
                                 "groups of consecutive ranks",
                                 set.source, describeGroup(key, desc), n, w));
      if (oddMembers)
        return layoutError(key, desc, fmt::format("holds {} of a tensor-parallel group's {} ranks", members.size(), l.t));
      if (copies.size() != 1 && int(copies.size()) != l.d)
        return layoutError(key, desc, fmt::format("holds {} of the {} data-parallel copies", copies.size(), l.d));
    }
    g.allCopies = data || (!g.world && l.d > 1 && int(copies.size()) == l.d);
    // A whole tensor-parallel group; at degree 1, where every group holds
    // one rank of it, the groups within one copy of one stage are taken so.
    g.allTensor = g.world || (!data && (l.t > 1 ? int(members.size()) == l.t : stages.size() == 1 && copies.size() == 1));
    g.parameterShare = data || (!g.world && !g.allTensor && n > 1);
    tensorGroup |= l.t > 1 && !g.world && g.allTensor && stages.size() == 1 && copies.size() == 1;
    shapes[key] = std::move(g);
  }
  if (l.t > 1 && l.t < w && !tensorGroup) {
    if (dataGroup)
      return error(fmt::format("{}: process group {} is data parallel over {} of the {} ranks, but the profile names "
                               "no tensor-parallel group ({} ranks each) beside it: their collectives cannot be told "
                               "from the world's",
                               set.source, describeGroup(*dataGroup, groups[*dataGroup]), dataGroup->second.size(), w,
                               l.t));
    return error(fmt::format("{}: pipeline stages of {} ranks, but the profile names no tensor-parallel group ({} ranks "
                             "each): their collectives cannot be told from the world's",
                             set.source, l.t, l.t));
  }
  return std::pair{l, std::move(shapes)};
}

llvm::Error reshardWorld(TraceSet &set, int tp, llvm::ArrayRef<std::string> dataParallel, int world) {
  int w = int(set.ranks.size());
  if (w != set.profiledWorld || set.tensorParallel)
    return error("a tensor-parallel what-if of a job scaled or re-sharded already");
  if (tp < 1 || tp > kMaxScaledWorld)
    return error(fmt::format("tensor-parallel degree {}: it must be 1 to {}", tp, kMaxScaledWorld));
  if (auto err = unnamedSpanWorld(set)) return err;
  auto profiled = profiledLayout(set, dataParallel);
  if (!profiled) return profiled.takeError();
  const auto &[from, shapes] = *profiled;
  std::string stages = from.p > 1 ? fmt::format(" x {} pipeline stages", from.p) : "";
  if (world) {
    bool named = llvm::any_of(shapes, [&](const auto &g) { return g.second.allCopies && !g.second.world; });
    if (!named)
      return error(fmt::format("{}: a world of {} ranks at tensor-parallel degree {} adds data-parallel copies of the "
                               "job, but the profile names no data-parallel group to grow (--data-parallel, "
                               "replay.data_parallel)",
                               set.source, world, tp));
    if (world % (tp * from.p) || world > kMaxScaledWorld)
      return error(fmt::format("a world of {} ranks at tensor-parallel degree {}{}: it must be a multiple of the "
                               "degree{}, at most {}",
                               world, tp, stages, stages.empty() ? "" : " times the stages", kMaxScaledWorld));
  }
  Layout to{tp, world ? world / (tp * from.p) : from.d, from.p};
  if (int64_t(to.t) * to.d * to.p > kMaxScaledWorld)
    return error(fmt::format("tensor-parallel degree {} with {} data-parallel copies{}: {} ranks, past {}", tp, to.d,
                             stages, int64_t(to.t) * to.d * to.p, kMaxScaledWorld));
  world = to.world();
  std::vector<KinetoTrace> ranks;
  ranks.reserve(size_t(world));
  set.origin.assign(size_t(world), 0);
  for (int r = 0; r < world; ++r) {
    int p = to.stageOf(r), d = to.copyOf(r), j = to.tensorOf(r);
    int o = from.rank(p, d % from.d, j % from.t);
    set.origin[size_t(r)] = o;
    KinetoTrace k = set.ranks[size_t(o)];
    k.rank = r;
    k.worldSize = world;
    // A send's peer is the rank's own place in the peer's stage.
    for (CommInfo &c : k.comms)
      if (c.peer >= 0) c.peer = to.rank(from.stageOf(c.peer), d, j);
    for (ProcessGroup &g : k.groups) {
      if (g.ranks.empty()) continue;
      const GroupShape &shape = shapes.at({g.name, g.ranks});
      // Along each axis: all of it, or the rank's own place.
      auto span = [](bool all, int own, int n) { return all ? std::pair{0, n - 1} : std::pair{own, own}; };
      auto [d0, d1] = span(shape.allCopies || shape.world, d, to.d);
      auto [j0, j1] = span(shape.allTensor, j, to.t);
      std::vector<int> members;
      for (int pp = 0; pp < to.p; ++pp)
        if (shape.world || llvm::is_contained(shape.stages, pp))
          for (int dd = d0; dd <= d1; ++dd)
            for (int m = j0; m <= j1; ++m) members.push_back(to.rank(pp, dd, m));
      g.profiledSize = int(g.ranks.size());
      g.ranks = std::move(members);
      g.parameterShare = shape.parameterShare;
    }
    ranks.push_back(std::move(k));
  }
  set.ranks = std::move(ranks);
  set.tensorParallel = tp;
  set.profiledTensorParallel = from.t;
  set.pipelineStages = from.p;
  return llvm::Error::success();
}

} // namespace rapid::profile
