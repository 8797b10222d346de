//===- Reshard.cpp - A profiled world at another tensor-parallel degree ---===//
//
// Which ranks a tensor-parallel what-if runs and whose profile each runs
// (TensorParallel.h, reshardWorld): the profiled degree is read from the
// process groups the profile names, with the data-parallel ones the user
// names, and the new world is laid out in Megatron-LM's order.
//===----------------------------------------------------------------------===//
#include "WorldGroups.h"

#include "rapid/Profile/TensorParallel.h"

#include <fmt/format.h>

namespace rapid::profile {

static llvm::Error error(const std::string &what) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), what);
}

using GroupKey = NamedGroups::key_type;

/// The tensor-parallel degree the profiled job ran at: the size of its
/// named groups that are neither data parallel nor world-wide, each T
/// consecutive ranks from a multiple of T, with the data-parallel groups
/// every T-th rank (Megatron-LM's order, tensor parallelism fastest); the
/// world when it names no smaller group. Marks the data-parallel groups.
static llvm::Expected<int> profiledDegree(TraceSet &set, llvm::ArrayRef<std::string> dataParallel) {
  int w = int(set.ranks.size()), t = w;
  NamedGroups groups = namedGroups(set);
  auto isData = [&](const std::string &name, const std::string &desc) {
    return llvm::is_contained(dataParallel, name) || llvm::is_contained(dataParallel, desc);
  };
  if (auto err = dataParallelNamed(set, dataParallel)) return err;
  auto layout = [&](const GroupKey &key, const std::string &desc, const char *why) {
    if (dataParallel.empty())
      return error(fmt::format("{}: process group {} has {} of the {} ranks and {}: say which groups are data "
                               "parallel (--data-parallel, replay.data_parallel); the tensor-parallel what-if takes "
                               "the others smaller than the world as tensor-parallel groups of consecutive ranks",
                               set.source, describeGroup(key, desc), key.second.size(), w, why));
    return error(fmt::format("{}: process group {} {}: the tensor-parallel what-if takes tensor-parallel groups of "
                             "consecutive ranks and data-parallel groups of every so many (Megatron-LM's order); "
                             "this layout is not derivable yet",
                             set.source, describeGroup(key, desc), why));
  };
  for (const auto &[key, desc] : groups) {
    if (int(key.second.size()) == w || isData(key.first, desc)) continue;
    if (t != w && int(key.second.size()) != t) return layout(key, desc, "is not the size of the other groups");
    t = int(key.second.size());
    if (w % t || key.second.front() % t) return layout(key, desc, "does not start at a multiple of its size");
    for (int i = 0; i < t; ++i)
      if (key.second[size_t(i)] != key.second.front() + i) return layout(key, desc, "is not consecutive ranks");
  }
  // A job whose profile names only its data-parallel groups: tensor-parallel
  // groups of one rank each (a data-parallel job), or unnamed ones, which
  // the replay could not tell from the world's.
  if (t == w)
    for (const auto &[key, desc] : groups)
      if (isData(key.first, desc) && w % int(key.second.size()) == 0) {
        t = w / int(key.second.size());
        if (t > 1)
          return error(fmt::format("{}: process group {} is data parallel over {} of the {} ranks, but the profile "
                                   "names no tensor-parallel group ({} ranks each) beside it: their collectives cannot "
                                   "be told from the world's",
                                   set.source, describeGroup(key, desc), key.second.size(), w, t));
        break;
      }
  for (const auto &[key, desc] : groups) {
    if (!isData(key.first, desc)) continue;
    bool strided = int(key.second.size()) == w / t && key.second.front() < t;
    for (size_t i = 1; strided && i < key.second.size(); ++i) strided = key.second[i] == key.second[i - 1] + t;
    if (!strided) return layout(key, desc, fmt::format("is not every {}-th rank", t).c_str());
  }
  for (KinetoTrace &k : set.ranks)
    for (ProcessGroup &g : k.groups) g.dataParallel = !g.ranks.empty() && isData(g.name, g.desc);
  return t;
}

llvm::Error reshardWorld(TraceSet &set, int tp, llvm::ArrayRef<std::string> dataParallel, int world) {
  int w = int(set.ranks.size());
  if (w != set.profiledWorld || set.tensorParallel)
    return error("a tensor-parallel what-if of a job scaled or re-sharded already");
  if (tp < 1 || tp > kMaxScaledWorld)
    return error(fmt::format("tensor-parallel degree {}: it must be 1 to {}", tp, kMaxScaledWorld));
  if (auto err = unnamedSpanWorld(set)) return err;
  auto degree = profiledDegree(set, dataParallel);
  if (!degree) return degree.takeError();
  int t = *degree, profiledCopies = w / t;
  if (world) {
    bool named = llvm::any_of(set.ranks.front().groups, [](const ProcessGroup &g) { return g.dataParallel; });
    if (!named)
      return error(fmt::format("{}: a world of {} ranks at tensor-parallel degree {} adds data-parallel copies of the "
                               "job, but the profile names no data-parallel group to grow (--data-parallel, "
                               "replay.data_parallel)",
                               set.source, world, tp));
    if (world % tp || world > kMaxScaledWorld)
      return error(fmt::format("a world of {} ranks at tensor-parallel degree {}: it must be a multiple of the degree, "
                               "at most {}",
                               world, tp, kMaxScaledWorld));
  }
  int copies = world ? world / tp : profiledCopies;
  if (int64_t(tp) * copies > kMaxScaledWorld)
    return error(fmt::format("tensor-parallel degree {} with {} data-parallel copies: {} ranks, past {}", tp, copies,
                             int64_t(tp) * copies, kMaxScaledWorld));
  for (const KinetoTrace &k : set.ranks)
    for (const CommInfo &c : k.comms)
      if (c.peer >= 0)
        return error(fmt::format("{}: a send or receive between ranks {} and {}: pipeline stages, which the "
                                 "tensor-parallel what-if does not re-shard",
                                 k.file, k.rank, c.peer));
  world = tp * copies;
  std::vector<KinetoTrace> ranks;
  ranks.reserve(size_t(world));
  set.origin.assign(size_t(world), 0);
  for (int r = 0; r < world; ++r) {
    int d = r / tp, j = r % tp, o = d % profiledCopies * t + j % t;
    set.origin[size_t(r)] = o;
    KinetoTrace k = set.ranks[size_t(o)];
    k.rank = r;
    k.worldSize = world;
    for (ProcessGroup &g : k.groups) {
      if (g.ranks.empty()) continue;
      std::vector<int> members;
      if (g.dataParallel) {
        for (int c = 0; c < copies; ++c) members.push_back(c * tp + j);
      } else if (int(g.ranks.size()) == w) {
        for (int m = 0; m < world; ++m) members.push_back(m);
      } else {
        for (int m = 0; m < tp; ++m) members.push_back(d * tp + m);
      }
      g.ranks = std::move(members);
    }
    ranks.push_back(std::move(k));
  }
  set.ranks = std::move(ranks);
  set.tensorParallel = tp;
  set.profiledTensorParallel = t;
  return llvm::Error::success();
}

} // namespace rapid::profile
