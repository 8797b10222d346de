//===- Chakra.cpp - A trace set and its side files ------------------------===//
#include "rapid/Emit/Chakra.h"

#include "rapid/Emit/ChakraNodes.h"
#include "rapid/Emit/RuntimeInputs.h"
#include "rapid/Network/NetworkConfig.h"
#include "rapid/Support/Files.h"
#include "rapid/Trace/NodeWriter.h"

#include "et_def.pb.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <fmt/format.h>

namespace rapid {

namespace {

using namespace ChakraProtoMsg;

llvm::Error writeRankTrace(const std::string &path, const ir::Graph &g, int64_t rank, const RankLayout &layout,
                           const emit::Groups &groups) {
  return trace::writeEtFile(path, g.ops.size(),
                            [&](size_t i, Node &n) { emit::fillNode(n, g.ops[i], i, rank, layout, groups); });
}

/// `--compact`: each stage's program once, its rank-dependent fields as
/// placeholders (runtime/lib/Trace/CompactWorkload.cpp reads them back):
/// a collective's pg_name is the slot of its group kind among the stage's,
/// a send's comm_dst and a receive's comm_src the peer's stage.
llvm::Error writeCompact(const ir::Program &prog, const std::string &dir, const std::string &prefix,
                         const RankLayout &layout, const emit::Groups &groups) {
  llvm::json::Array programs;
  for (const ir::Graph &g : prog.stages) {
    const std::vector<ir::Group> &kinds = groups.kindsOfStage(g.stage);
    std::string file = fmt::format("{}.stage{}.et", prefix, g.stage);
    llvm::Error e = trace::writeEtFile(dir + "/" + file, g.ops.size(), [&](size_t i, Node &n) {
      trace::writeNode(emit::programNode(g.ops[i], i, g, layout.firstRankOfStage(g.stage), layout, groups),
                       g.ops[i].name, g.ops[i].deps, n);
    });
    if (e) return e;
    llvm::json::Array names;
    for (ir::Group k : kinds) names.push_back(ir::groupName(k));
    programs.push_back(llvm::json::Object{{"file", file}, {"slots", std::move(names)}});
  }
  llvm::json::Object involved;
  for (const emit::Groups::Entry &e : groups.all()) {
    llvm::json::Array dims;
    for (bool b : e.involved) dims.push_back(b);
    involved[std::to_string(e.id)] = std::move(dims);
  }
  llvm::json::Array ranks;
  for (int64_t r = 0; r < layout.ranks(); ++r) {
    int64_t stage = layout.coord(r, ir::Group::PP);
    llvm::json::Array ids, pipeline;
    for (ir::Group k : groups.kindsOfStage(stage)) ids.push_back(groups.of(r, k).id);
    for (int64_t s = 0; s < int64_t(prog.stages.size()); ++s) pipeline.push_back(layout.with(r, ir::Group::PP, s));
    ranks.push_back(llvm::json::Object{{"program", stage}, {"groups", std::move(ids)}, {"pipeline", std::move(pipeline)}});
  }
  llvm::json::Object map{{"format", "rapid-compact-chakra"}, {"version", 1}, {"programs", std::move(programs)},
                         {"involved", std::move(involved)}, {"ranks", std::move(ranks)}};
  return writeFile(fmt::format("{}/{}.ranks.json", dir, prefix), llvm::formatv("{0}", llvm::json::Value(std::move(map))).str() + "\n");
}

std::string sanitize(std::string s) {
  for (char &c : s)
    if (!llvm::isAlnum(c) && c != '.' && c != '-' && c != '_') c = '_';
  return s;
}

} // namespace

std::string pointDirectory(const std::string &root, const ExperimentPoint &p) {
  llvm::SmallString<256> dir(root);
  if (p.sweep.empty()) {
    llvm::sys::path::append(dir, p.experiment);
    return std::string(dir);
  }
  std::vector<std::string> parts;
  for (const auto &[name, v] : p.point) parts.push_back(sanitize(name + "-" + v.str()));
  llvm::sys::path::append(dir, p.sweep, llvm::join(parts, "_"));
  return std::string(dir);
}

llvm::Expected<std::vector<int64_t>> parseRankList(llvm::StringRef spec, llvm::StringRef option) {
  std::vector<int64_t> out;
  llvm::SmallVector<llvm::StringRef, 8> items;
  spec.split(items, ',');
  for (llvm::StringRef item : items) {
    auto [lo, hi] = item.trim().split('-');
    int64_t a = 0, b = 0;
    if (lo.getAsInteger(10, a) || a < 0 || (hi.empty() ? (b = a, false) : hi.getAsInteger(10, b)) || b < a ||
        b - a > (int64_t(1) << 24))
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "%s: expected ranks and ranges such as '0-7,64', found '%s'",
                                     option.str().c_str(), item.str().c_str());
    for (int64_t r = a; r <= b; ++r) out.push_back(r);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

llvm::Error emitChakra(const ir::Program &prog, const ExperimentPoint &point, const std::string &dir,
                       const std::string &prefix, const std::vector<int64_t> *ranks, bool compact) {
  RankLayout layout(prog.layout);
  if (ranks && !ranks->empty() && ranks->back() >= layout.ranks())
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "--ranks names rank %lld but %s has %lld ranks",
                                   (long long)ranks->back(), point.experiment.c_str(), (long long)layout.ranks());
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return llvm::createStringError(ec, "cannot create '%s': %s", dir.c_str(), ec.message().c_str());
  emit::Groups groups(prog, layout);
  if (compact) {
    if (llvm::Error e = writeCompact(prog, dir, prefix, layout, groups)) return e;
  } else {
    for (int64_t r = 0; r < layout.ranks(); ++r) {
      if (ranks && !std::binary_search(ranks->begin(), ranks->end(), r)) continue;
      std::string path = fmt::format("{}/{}.{}.et", dir, prefix, r);
      if (llvm::Error e = writeRankTrace(path, prog.stages[layout.coord(r, ir::Group::PP)], r, layout, groups))
        return e;
    }
  }
  if (llvm::Error e = writeFile(dir + "/comm_groups.json", coll::writeCommGroupsJson(groups.runtimeGroups()))) return e;
  net::NetworkSpec network = networkSpec(point);
  if (llvm::Error e = writeFile(dir + "/network.json", net::writeNetworkJson(network))) return e;
  if (llvm::Error e = writeFile(dir + "/system.json", engine::writeSystemConfigJson(systemConfig(point)))) return e;
  if (point.faults && !point.faults->links.empty()) {
    net::Topology topo(std::move(network));
    if (llvm::Error e = writeFile(dir + "/faults.json", net::writeFaultsJson(pointFaults(point, topo), topo)))
      return e;
  }
  return llvm::Error::success();
}

} // namespace rapid
