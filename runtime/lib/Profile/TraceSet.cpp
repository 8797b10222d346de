//===- TraceSet.cpp - A job's per-rank profiles, placed and scaled --------===//

#include "WorldGroups.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <iterator>
#include <map>

namespace rapid::profile {

static llvm::Error error(const std::string &what) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), what);
}

static llvm::Expected<std::vector<std::string>> listFiles(const std::string &path) {
  if (!llvm::sys::fs::exists(path)) return error(path + ": no such file or directory");
  if (!llvm::sys::fs::is_directory(path)) return std::vector<std::string>{path};
  std::vector<std::string> files;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(path, ec), end; it != end && !ec; it.increment(ec)) {
    llvm::StringRef p = it->path();
    if (p.ends_with(".json") || p.ends_with(".json.gz")) files.push_back(p.str());
  }
  if (ec) return error(path + ": cannot list: " + ec.message());
  std::sort(files.begin(), files.end());
  return files;
}

/// Ranks from distributedInfo (every file has it, or none: then file order).
static llvm::Error placeRanks(TraceSet &set, std::vector<KinetoTrace> traces) {
  size_t withRank = std::count_if(traces.begin(), traces.end(), [](auto &t) { return t.rank >= 0; });
  if (withRank == 0) {
    for (size_t i = 0; i < traces.size(); ++i) traces[i].rank = int(i), traces[i].worldSize = int(traces.size());
  } else if (withRank != traces.size()) {
    auto it = std::find_if(traces.begin(), traces.end(), [](auto &t) { return t.rank < 0; });
    return error(it->file + ": no distributedInfo.rank, where the other traces have one");
  }
  int world = traces.front().worldSize;
  std::vector<const KinetoTrace *> byRank(std::max(world, 0), nullptr);
  for (const KinetoTrace &t : traces) {
    if (t.worldSize != world)
      return error(fmt::format("{}: world_size {}, but {} says {}", t.file, t.worldSize, traces.front().file, world));
    if (t.rank >= world)
      return error(fmt::format("{}: rank {} is not below world_size {}", t.file, t.rank, world));
    if (byRank[t.rank])
      return error(fmt::format("two traces of rank {}: {} and {}", t.rank, byRank[t.rank]->file, t.file));
    byRank[t.rank] = &t;
  }
  std::vector<int> missing;
  for (int r = 0; r < world; ++r)
    if (!byRank[r]) missing.push_back(r);
  if (!missing.empty())
    return error(fmt::format("{}: missing rank{} {} of world_size {}", set.source, missing.size() > 1 ? "s" : "",
                             fmt::join(missing, ", "), world));
  for (int r = 0; r < world; ++r)
    if (byRank[r]->step != byRank[0]->step)
      return error(fmt::format("mismatched iterations: rank 0 profiled {}, rank {} {} ({}); pick one with --step",
                               byRank[0]->step, r, byRank[r]->step, byRank[r]->file));
  std::sort(traces.begin(), traces.end(), [](auto &a, auto &b) { return a.rank < b.rank; });
  set.ranks = std::move(traces);
  return llvm::Error::success();
}

namespace {
/// A directory's files by what they are.
struct Files {
  std::vector<std::pair<std::string, std::string>> kineto; ///< file, text
  std::vector<std::string> hosts;                          ///< read again when needed
  std::vector<std::string> others;
};
} // namespace

static llvm::Expected<llvm::json::Value> parseJson(const std::string &file, const std::string &text,
                                                   llvm::StringRef kind) {
  auto doc = llvm::json::parse(text);
  if (!doc) return error(file + ": invalid JSON: " + llvm::toString(doc.takeError()));
  if (!doc->getAsObject()) return error(file + ": the top level is not a JSON object: not a " + kind.str());
  return doc;
}

static llvm::Expected<Files> sortFiles(const std::vector<std::string> &paths) {
  Files out;
  for (const std::string &f : paths) {
    auto text = readMaybeGzip(f);
    if (!text) return text.takeError();
    if (text->find("\"traceEvents\"") != std::string::npos) {
      out.kineto.emplace_back(f, std::move(*text));
    } else if (text->find("\"nodes\"") != std::string::npos && text->find("\"schema\"") != std::string::npos) {
      out.hosts.push_back(f);
    } else {
      out.others.push_back(llvm::sys::path::filename(f).str());
    }
  }
  return out;
}

namespace {
/// The directory's host execution traces, read the first time a Kineto
/// trace needs one (reading them costs more than the replay they feed).
struct Hosts {
  std::vector<std::string> files;
  std::vector<HostTrace> traces;
  std::vector<int> linkedBy; ///< the Kineto trace each is linked to; -1: none
  bool read = false;

  llvm::Error readAll() {
    if (read) return llvm::Error::success();
    read = true;
    for (const std::string &file : files) {
      auto text = readMaybeGzip(file);
      if (!text) return text.takeError();
      auto doc = parseJson(file, *text, "PyTorch execution trace");
      if (!doc) return doc.takeError();
      auto h = readHostTrace(file, *doc->getAsObject());
      if (!h) return h.takeError();
      traces.push_back(std::move(*h));
    }
    linkedBy.assign(traces.size(), -1);
    return llvm::Error::success();
  }
};
} // namespace

/// Reads one Kineto trace; where it records operators without the shapes
/// the replay reads, with the host trace of its process (the one pairing
/// most of its operators) filling them in.
static llvm::Expected<KinetoTrace> readLinked(const std::string &file, const std::string &text, Hosts &hosts,
                                              int self, const ReadOptions &opts) {
  auto doc = parseJson(file, text, "Chrome/Kineto trace");
  if (!doc) return doc.takeError();
  llvm::json::Object &top = *doc->getAsObject();
  HostLink best;
  best.unshaped = hosts.files.empty() ? 0 : unshapedOperators(top);
  if (best.unshaped > 0) {
    if (auto err = hosts.readAll()) return err;
    int which = -1;
    for (size_t i = 0; i < hosts.traces.size(); ++i) {
      HostLink l = linkHostTrace(hosts.traces[i], top, /*fill=*/false);
      if (l.linked > best.linked) l.unshaped = best.unshaped, best = l, which = int(i);
    }
    if (which >= 0) {
      if (best.linked * 2 < std::min(best.operators, best.nodes))
        return error(fmt::format("{}: its process's host execution trace {} pairs only {} of its {} operators with "
                                 "its nodes: not the same iteration",
                                 file, best.file, best.linked, best.operators));
      if (hosts.linkedBy[size_t(which)] >= 0)
        return error(fmt::format("{}: two Kineto traces link to the host execution trace {}", file, best.file));
      hosts.linkedBy[size_t(which)] = self;
      uint64_t unshaped = best.unshaped;
      best = linkHostTrace(hosts.traces[size_t(which)], top, /*fill=*/true);
      best.unshaped = unshaped;
    }
  }
  auto t = readKinetoDocument(file, top, opts);
  if (!t) return t.takeError();
  t->hostTrace = std::move(best);
  return t;
}

llvm::Expected<TraceSet> loadTraceSet(const std::string &path, const ReadOptions &opts) {
  auto paths = listFiles(path);
  if (!paths) return paths.takeError();
  auto files = sortFiles(*paths);
  if (!files) return files.takeError();
  if (files->kineto.empty())
    return error(path + ": no Kineto traces (.json or .json.gz files with \"traceEvents\")");
  Hosts hosts;
  hosts.files = std::move(files->hosts);
  std::vector<KinetoTrace> traces;
  for (auto &[file, text] : files->kineto) {
    auto t = readLinked(file, text, hosts, int(traces.size()), opts);
    if (!t) return t.takeError();
    traces.push_back(std::move(*t));
    std::string().swap(text); // read: its text is not needed again
  }
  auto placed = makeTraceSet(path, std::move(traces));
  if (!placed) return placed.takeError();
  placed->others = std::move(files->others);
  placed->hostFiles = hosts.files.size();
  return placed;
}

llvm::Expected<TraceSet> makeTraceSet(std::string source, std::vector<KinetoTrace> traces) {
  TraceSet set;
  set.source = std::move(source);
  if (traces.empty()) return error(set.source + ": no traces");
  if (auto err = placeRanks(set, std::move(traces))) return err;
  set.profiledWorld = int(set.ranks.size());
  return set;
}

/// NCCL kernels the profile does not say the process group of (with its
/// ranks): their communicator is their stream.
static bool unnamed(const KinetoTrace &t, const Event &d) {
  if (d.kind != EventKind::Kernel || !isNcclKernel(t.name(d))) return false;
  int32_t g = d.comm >= 0 ? t.comms[size_t(d.comm)].group : -1;
  return g < 0 || t.groups[size_t(g)].ranks.empty();
}

/// The streams a rank ran unnamed NCCL kernels on (one a communicator).
static std::vector<int64_t> ncclStreams(const KinetoTrace &t) {
  std::vector<int64_t> lanes;
  for (const Event &d : t.device)
    if (unnamed(t, d)) lanes.push_back(d.lane);
  std::sort(lanes.begin(), lanes.end());
  lanes.erase(std::unique(lanes.begin(), lanes.end()), lanes.end());
  return lanes;
}

llvm::Error unnamedSpanWorld(const TraceSet &set) {
  std::vector<int64_t> streams = ncclStreams(set.ranks[0]);
  for (size_t r = 1; r < set.ranks.size(); ++r) {
    std::vector<int64_t> mine = ncclStreams(set.ranks[r]);
    if (mine == streams) continue;
    std::vector<int64_t> odd;
    std::set_symmetric_difference(streams.begin(), streams.end(), mine.begin(), mine.end(), std::back_inserter(odd));
    bool onR = std::binary_search(mine.begin(), mine.end(), odd.front());
    return error(fmt::format("{}: stream {} holds NCCL kernels on rank {} but not on rank {}: a communicator that "
                             "does not span the profiled world (tensor or pipeline parallel) has no rule to grow by "
                             "unless the profile names its process group; scaling the world needs the others "
                             "world-wide",
                             set.source, odd.front(), onR ? r : 0, onR ? 0 : r));
  }
  return llvm::Error::success();
}

NamedGroups namedGroups(const TraceSet &set) {
  NamedGroups out;
  for (const KinetoTrace &t : set.ranks)
    for (const ProcessGroup &g : t.groups)
      if (!g.ranks.empty()) out[{g.name, g.ranks}] = g.desc;
  return out;
}

namespace {
/// A process group the profile names with its ranks, and what weak scaling
/// does to it: a data-parallel group gains the same member of every copy of
/// the job; any other is copied with the job.
struct GroupRule {
  std::string desc;
  bool grows = false;
};
using GroupKey = NamedGroups::key_type;
} // namespace

std::string describeGroup(const GroupKey &k, const std::string &desc) {
  return fmt::format("'{}'{} (ranks {})", k.first, desc.empty() ? "" : " " + desc, fmt::join(k.second, ", "));
}

llvm::Error dataParallelNamed(const TraceSet &set, const NamedGroups &groups,
                              llvm::ArrayRef<std::string> dataParallel) {
  for (const std::string &d : dataParallel)
    if (llvm::none_of(groups, [&](const auto &g) { return g.first.first == d || g.second == d; })) {
      std::vector<std::string> all;
      for (const auto &[key, desc] : groups) all.push_back(describeGroup(key, desc));
      return error(fmt::format("{}: data-parallel group '{}' is neither the description nor the name of a process "
                               "group the profile names{}{}",
                               set.source, d, all.empty() ? "" : ": it has ", fmt::join(all, ", ")));
    }
  return llvm::Error::success();
}

/// Decides which named groups grow: those spanning the profiled world, and
/// those `dataParallel` names (by description or name).
static llvm::Expected<std::map<GroupKey, GroupRule>> groupRules(const TraceSet &set,
                                                                llvm::ArrayRef<std::string> dataParallel) {
  NamedGroups groups = namedGroups(set);
  if (auto err = dataParallelNamed(set, groups, dataParallel)) return err;
  int w = int(set.ranks.size());
  std::map<GroupKey, GroupRule> rules;
  for (const auto &[key, desc] : groups) rules[key].desc = desc;
  std::vector<std::string> unsaid;
  for (auto &[key, rule] : rules) {
    rule.grows = int(key.second.size()) == w || llvm::is_contained(dataParallel, rule.desc) ||
                 llvm::is_contained(dataParallel, key.first);
    if (!rule.grows) unsaid.push_back(describeGroup(key, rule.desc));
  }
  if (dataParallel.empty() && !unsaid.empty())
    return error(fmt::format("{}: process group{} {} do{} not span the profiled world: say which are data parallel "
                             "(they grow with the world; the others are copied with the job) by description or "
                             "name: rapid-trace --data-parallel, or replay.data_parallel",
                             set.source, unsaid.size() > 1 ? "s" : "", fmt::join(unsaid, ", "),
                             unsaid.size() > 1 ? "" : "es"));
  return rules;
}

/// An all-gather moves each member's share of a whole (its input, as
/// PyTorch records it): in a group that grows with the world (FSDP's and
/// ZeRO-3's parameter gathers over data parallelism) the shares, and so its
/// bytes, shrink by the copies, to the byte. Returns the kernels resized.
static size_t shrinkGrowingGathers(KinetoTrace &t, const std::map<GroupKey, GroupRule> &rules, int copies) {
  std::vector<int32_t> noteOf = launchAnnotations(t);
  std::vector<bool> comm(t.comms.size(), false), note(t.host.size(), false);
  size_t kernels = 0;
  for (size_t i = 0; i < t.device.size(); ++i) {
    const Event &d = t.device[i];
    if (d.kind != EventKind::Kernel || !isNcclKernel(t.name(d)) || !llvm::StringRef(t.name(d)).contains("_AllGather")) continue;
    const CommInfo *c = d.comm >= 0 ? &t.comms[size_t(d.comm)] : nullptr;
    const ProcessGroup *g = c && c->group >= 0 ? &t.groups[size_t(c->group)] : nullptr;
    // Unnamed communicators span the world (unnamedSpanWorld), which grows.
    if (g && !g->ranks.empty() && !rules.at({g->name, g->ranks}).grows) continue;
    ++kernels;
    if (c) comm[size_t(d.comm)] = true;
    if (noteOf[i] >= 0) note[size_t(noteOf[i])] = true;
  }
  auto shrink = [&](int64_t &bytes) {
    if (bytes > 0) bytes = std::max<int64_t>(1, std::llround(double(bytes) / copies));
  };
  for (size_t c = 0; c < comm.size(); ++c)
    if (comm[c]) shrink(t.comms[c].bytes);
  for (size_t h = 0; h < note.size(); ++h)
    if (note[h]) shrink(t.host[h].bytes);
  return kernels;
}

llvm::Error scaleWorld(TraceSet &set, int world, llvm::ArrayRef<std::string> dataParallel) {
  int w = int(set.ranks.size());
  if (w != set.profiledWorld) return error("scaleWorld: the set is scaled already");
  if (world == w) return llvm::Error::success();
  if (world < w || world % w != 0 || world > kMaxScaledWorld)
    return error(fmt::format("a world of {} ranks: it must be a multiple of the {} profiled, at most {}", world, w,
                             kMaxScaledWorld));
  if (auto err = unnamedSpanWorld(set)) return err;
  auto rules = groupRules(set, dataParallel);
  if (!rules) return rules.takeError();
  size_t gathers = 0;
  for (KinetoTrace &t : set.ranks) gathers += shrinkGrowingGathers(t, *rules, world / w);
  if (gathers)
    set.whatIfs.push_back(fmt::format("{} all-gathers over groups that grow with the world (of the {} profiled ranks) "
                                      "gather each member's share, x1/{}",
                                      gathers, w, world / w));
  set.ranks.reserve(size_t(world));
  for (int r = w; r < world; ++r) { // rank r runs a copy of rank r mod w's profile
    KinetoTrace copy = set.ranks[size_t(r % w)];
    copy.rank = r;
    set.ranks.push_back(std::move(copy));
  }
  int copies = world / w;
  for (KinetoTrace &t : set.ranks) {
    t.worldSize = world;
    // A send's peer is in the sender's copy of the job (pipeline stages).
    for (CommInfo &c : t.comms)
      if (c.peer >= 0) c.peer += t.rank / w * w;
    for (ProcessGroup &g : t.groups) {
      if (g.ranks.empty()) continue;
      const GroupRule &rule = rules->at({g.name, g.ranks});
      std::vector<int> ranks;
      int first = rule.grows ? 0 : t.rank / w, last = rule.grows ? copies : first + 1;
      for (int c = first; c < last; ++c)
        for (int m : g.ranks) ranks.push_back(m + c * w);
      g.ranks = std::move(ranks);
    }
  }
  return llvm::Error::success();
}

} // namespace rapid::profile
