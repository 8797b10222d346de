//===- CompactWorkload.cpp - One program per stage, and a rank map --------===//
//
// `rapidc --emit=chakra --compact` writes each pipeline stage's program once
// (every rank of a stage runs the same ops) and a rank map, PREFIX.ranks.json:
//   {"format": "rapid-compact-chakra", "version": 1,
//    "programs": [{"file": "e.stage0.et", "slots": ["tp", "dp"]}, ...],
//    "involved": {"1": [true, false], ...},
//    "ranks": [{"program": 0, "groups": [1, 9], "pipeline": [0, 8]}, ...]}
// In a program, what differs per rank is a placeholder: a collective's
// pg_name is a slot (1-based; 0 is every rank) that the rank's "groups"
// turns into a communicator group id, whose network dimensions are
// "involved"; a send's comm_dst and a receive's comm_src are pipeline
// stages that the rank's "pipeline" turns into ranks. Loading gives every
// rank the graph a full trace set gives (docs/chakra.md).
//===----------------------------------------------------------------------===//

#include "rapid/Trace/Workload.h"
#include "rapid/Support/Files.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <fmt/format.h>

namespace rapid::trace {

namespace {

/// A list of whole numbers from 0 to `hi`, or an error naming `what`.
llvm::Expected<std::vector<int64_t>> integers(const std::string &file, const llvm::json::Value *v, const std::string &what,
                                              int64_t hi) {
  const llvm::json::Array *a = v ? v->getAsArray() : nullptr;
  if (!a) return fileError(file, fmt::format("{} must be a list of whole numbers", what));
  std::vector<int64_t> out;
  for (const llvm::json::Value &x : *a) {
    std::optional<int64_t> n = x.getAsInteger();
    if (!n || *n < 0 || *n > hi)
      return fileError(file, fmt::format("{} must hold whole numbers from 0 to {}", what, hi));
    out.push_back(*n);
  }
  return out;
}

struct Program {
  RankGraph graph;
  size_t slots = 0;
};

/// `rank`'s graph: the program's body, shared, and the tables that fill its
/// placeholders (RankGraph::group, src, dst), checked against every node.
llvm::Expected<RankGraph> instantiate(const Program &p, int rank, const std::vector<int64_t> &groups,
                                      const std::vector<int64_t> &pipeline,
                                      const std::map<int64_t, uint32_t> &involved) {
  RankGraph g = p.graph;
  g.rank = rank;
  g.file = fmt::format("{} (rank {})", p.graph.file, rank);
  g.shared = true;
  g.rankOfStage = pipeline;
  for (int64_t group : groups) {
    g.groupOfSlot.push_back(uint32_t(group));
    auto it = involved.find(group);
    g.involvedOfSlot.push_back(it != involved.end() ? it->second : ~0u);
  }
  for (const TraceNode &n : g.nodes()) {
    auto stage = [&](int64_t field, const char *name) -> llvm::Error {
      if (field == kAbsent) return llvm::Error::success(); // checkWorkload names what is missing
      if (field < 0 || size_t(field) >= pipeline.size())
        return fileError(g.file, fmt::format("node {}: {} names stage {} but the rank's pipeline has {}", n.id, name,
                                             field, pipeline.size()));
      return llvm::Error::success();
    };
    if (n.kind == NodeKind::Send) {
      if (llvm::Error e = stage(n.commDst, "comm_dst")) return e;
    } else if (n.kind == NodeKind::Recv) {
      if (llvm::Error e = stage(n.commSrc, "comm_src")) return e;
    } else if (n.kind == NodeKind::Coll && n.pgName != 0) {
      if (n.pgName > groups.size())
        return fileError(g.file, fmt::format("node {}: pg_name is slot {} but the program has {}", n.id, n.pgName,
                                             groups.size()));
      if (!involved.count(groups[n.pgName - 1]))
        return fileError(g.file, fmt::format("node {}: group {} has no entry in \"involved\"", n.id,
                                             groups[n.pgName - 1]));
    }
  }
  return g;
}

} // namespace

bool isCompactMap(const std::string &path) { return llvm::StringRef(path).ends_with(".ranks.json"); }

llvm::Expected<Workload> loadCompactWorkload(const std::string &map, int numRanks, const ReadOptions &opts) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> text = llvm::MemoryBuffer::getFile(map);
  if (!text) return fileError(map, "cannot read: " + text.getError().message());
  llvm::Expected<llvm::json::Value> doc = llvm::json::parse((*text)->getBuffer());
  if (!doc) return fileError(map, "not JSON: " + llvm::toString(doc.takeError()));
  const llvm::json::Object *o = doc->getAsObject();
  if (!o || o->getString("format") != "rapid-compact-chakra" || o->getInteger("version") != 1)
    return fileError(map, "not a compact trace map: expected {\"format\": \"rapid-compact-chakra\", \"version\": 1, ...}");
  const llvm::json::Array *programs = o->getArray("programs");
  const llvm::json::Array *ranks = o->getArray("ranks");
  const llvm::json::Object *inv = o->getObject("involved");
  if (!programs || programs->empty() || !ranks || !inv)
    return fileError(map, "needs \"programs\" (a non-empty list), \"involved\" (an object) and \"ranks\" (a list)");
  if (int64_t(ranks->size()) != numRanks)
    return fileError(map, fmt::format("maps {} ranks but the network has {}", ranks->size(), numRanks));
  std::map<int64_t, uint32_t> involved; // group id -> bit per network dimension
  for (const auto &[id, dims] : *inv) {
    int64_t g = 0;
    const llvm::json::Array *a = dims.getAsArray();
    if (llvm::StringRef(id.str()).getAsInteger(10, g) || g <= 0 || !a || a->size() > 32)
      return fileError(map, fmt::format("\"involved\": '{}' must be a group id with a list of at most 32 true/false",
                                        id.str()));
    uint32_t bits = 0;
    for (size_t d = 0; d < a->size(); ++d) bits |= uint32_t((*a)[d].getAsBoolean().value_or(false)) << d;
    involved[g] = bits;
  }
  std::vector<Program> progs;
  llvm::StringRef dir = llvm::sys::path::parent_path(map);
  for (const llvm::json::Value &v : *programs) {
    const llvm::json::Object *p = v.getAsObject();
    std::optional<llvm::StringRef> file = p ? p->getString("file") : std::nullopt;
    const llvm::json::Array *slots = p ? p->getArray("slots") : nullptr;
    if (!file || !slots || file->contains('/'))
      return fileError(map, "each program needs \"file\" (a name in the map's folder) and \"slots\" (a list)");
    std::string path = dir.empty() ? file->str() : (dir + "/" + *file).str();
    GraphBuilder builder(path, 0, opts.lenient);
    ChakraProtoMsg::GlobalMetadata meta;
    if (llvm::Error e = readEtFile(path, opts, meta, [&](ChakraProtoMsg::Node &n) { return builder.add(n); })) return e;
    llvm::Expected<RankGraph> g = builder.finish();
    if (!g) return g.takeError();
    progs.push_back({std::move(*g), slots->size()});
  }
  Workload w;
  w.prefix = map;
  w.ranks.reserve(ranks->size());
  for (size_t r = 0; r < ranks->size(); ++r) {
    const llvm::json::Object *e = (*ranks)[r].getAsObject();
    std::string what = fmt::format("rank {}", r);
    std::optional<int64_t> program = e ? e->getInteger("program") : std::nullopt;
    if (!program || *program < 0 || size_t(*program) >= progs.size())
      return fileError(map, fmt::format("{}: \"program\" must be an index below {}", what, progs.size()));
    const Program &p = progs[size_t(*program)];
    llvm::Expected<std::vector<int64_t>> groups = integers(map, e->get("groups"), what + ": \"groups\"", UINT32_MAX);
    if (!groups) return groups.takeError();
    if (groups->size() != p.slots)
      return fileError(map, fmt::format("{}: {} groups for the {} slots of its program", what, groups->size(), p.slots));
    llvm::Expected<std::vector<int64_t>> pipeline = integers(map, e->get("pipeline"), what + ": \"pipeline\"", numRanks - 1);
    if (!pipeline) return pipeline.takeError();
    llvm::Expected<RankGraph> g = instantiate(p, int(r), *groups, *pipeline, involved);
    if (!g) return g.takeError();
    w.ranks.push_back(std::move(*g));
  }
  return w;
}

} // namespace rapid::trace
