//===- Chakra.cpp - A trace set and its side files ------------------------===//
#include "rapid/Emit/Chakra.h"

#include "ChakraImpl.h"

#include "rapid/Sema/PointPrinter.h"
#include "rapid/Network/NetworkConfig.h"
#include "rapid/Spec/Specs.h"
#include "rapid/Support/Files.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>
#include <set>

namespace rapid {
namespace emit {

Groups::Groups(const ir::Program &prog, const RankLayout &layout) {
  std::map<std::vector<int64_t>, size_t> known;
  for (int64_t r = 0; r < layout.ranks(); ++r) {
    const ir::Graph &g = prog.stages[layout.coord(r, ir::Group::PP)];
    std::set<ir::Group> used;
    for (const ir::Op &op : g.ops)
      if (op.isComm() && op.group != ir::Group::PP) used.insert(op.group);
    for (ir::Group kind : used) {
      std::vector<int64_t> m = layout.members(r, kind);
      auto [it, fresh] = known.emplace(m, entries.size());
      if (fresh) entries.push_back({int(entries.size()) + 1, m, layout.involvedDims(m)});
      byRank[{r, kind}] = it->second;
    }
  }
}

} // namespace emit

namespace {

std::string groupsJson(const emit::Groups &groups) {
  std::vector<std::string> items;
  for (const emit::Groups::Entry &e : groups.all()) {
    std::vector<std::string> ranks;
    for (int64_t r : e.members) ranks.push_back(std::to_string(r));
    items.push_back(fmt::format("  \"{}\": [{}]", e.id, llvm::join(ranks, ", ")));
  }
  return "{\n" + llvm::join(items, ",\n") + "\n}\n";
}

std::string sanitize(std::string s) {
  for (char &c : s)
    if (!llvm::isAlnum(c) && c != '.' && c != '-' && c != '_') c = '_';
  return s;
}

std::string faultsJson(const ExperimentPoint &p) {
  llvm::Expected<net::NetworkSpec> spec = net::parseNetworkJson("<network>", networkJson(p));
  if (!spec) { llvm::consumeError(spec.takeError()); return "{\"faults\": []}\n"; }
  net::Topology topo(std::move(*spec));
  std::vector<std::string> items;
  for (const net::Fault &f : pointFaults(p, topo)) {
    auto node = [&](uint32_t n) { return n < uint32_t(topo.numRanks()) ? std::to_string(n) : jsonQuote(topo.nodeName(n)); };
    std::string link = fmt::format("[{}, {}]", node(f.src), node(f.dst));
    if (f.hard)
      items.push_back(fmt::format("  {{\"kind\": \"hard\", \"link\": {}}}", link));
    else
      items.push_back(fmt::format("  {{\"kind\": \"soft\", \"link\": {}, \"derate\": {}, \"extra_latency\": \"{} ns\"}}",
                                  link, formatNumber(f.derate), formatNumber(double(f.extraLatencyPs) / 1000)));
  }
  return "{\"faults\": [\n" + llvm::join(items, ",\n") + "\n]}\n";
}

} // namespace

std::string networkJson(const ExperimentPoint &p) {
  double cal = p.gpu.calibrationNetwork;
  std::vector<std::string> dims;
  for (const DimensionSpec &d : p.network.dims) {
    std::vector<std::string> shape;
    for (int64_t e : d.extents) shape.push_back(std::to_string(e));
    std::string extent = d.extents.size() > 1 ? fmt::format("\"shape\": [{}]", llvm::join(shape, ", "))
                                            : fmt::format("\"size\": {}", d.size);
    dims.push_back(fmt::format("    {{\"name\": {}, \"kind\": \"{}\", {}, \"bandwidth\": \"{} B/s\", "
                               "\"latency\": \"{} ns\", \"oversubscription\": {}}}",
                               jsonQuote(d.name), d.kind, extent, formatNumber(d.bandwidth.value() * cal),
                               formatNumber(d.latency.value() * 1e9),
                               formatNumber(d.oversubscription)));
  }
  return "{\"dimensions\": [\n" + llvm::join(dims, ",\n") + "\n]}\n";
}

engine::SystemConfig systemConfig(const ExperimentPoint &p) {
  engine::SystemConfig cfg;
  std::vector<coll::Algorithm> perDim;
  bool chosen = false;
  for (const DimensionSpec &d : p.network.dims) {
    using A = coll::Algorithm;
    switch (d.algorithm) {
    case CollectiveAlgorithm::Auto:
    case CollectiveAlgorithm::Ring: perDim.push_back(A::Ring); break;
    case CollectiveAlgorithm::Direct: perDim.push_back(A::Direct); break;
    case CollectiveAlgorithm::HalvingDoubling: perDim.push_back(A::HalvingDoubling); break;
    case CollectiveAlgorithm::DoubleBinaryTree: perDim.push_back(A::DoubleBinaryTree); break;
    }
    chosen |= d.algorithm != CollectiveAlgorithm::Auto;
  }
  if (chosen) // otherwise the runtime's default, as Astra-Sim files without the keys
    for (auto &kind : cfg.algorithms.perKind) kind = perDim;
  return cfg;
}

std::vector<net::Fault> pointFaults(const ExperimentPoint &p, const net::Topology &topo) {
  std::vector<net::Fault> out;
  if (!p.faults) return out;
  for (const LinkFaultSpec &f : p.faults->links) {
    int d = 0;
    while (d < int(p.network.dims.size()) && p.network.dims[d].name != f.dim) ++d;
    net::Fault nf;
    nf.hard = f.hard;
    if (!f.hard) {
      nf.derate = f.derate;
      nf.extraLatencyPs = int64_t(f.extraLatency.value() * 1e12 + 0.5);
    }
    uint32_t a = uint32_t(f.a * topo.stride(d)), b = uint32_t(f.b * topo.stride(d));
    const std::string &kind = p.network.dims[d].kind;
    if (kind != "Switch" && kind != "FatTree") {
      nf.src = a, nf.dst = b;
      out.push_back(nf);
      continue;
    }
    for (uint32_t r : {a, b}) // each end's link up to its switch
      for (const uint32_t *l = topo.outBegin(r); l != topo.outEnd(r); ++l)
        if (topo.links()[*l].dim == d) {
          nf.src = r, nf.dst = topo.links()[*l].dst;
          out.push_back(nf);
        }
  }
  return out;
}

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

llvm::Error emitChakra(const ir::Program &prog, const ExperimentPoint &point, const std::string &dir,
                       const std::string &prefix) {
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return llvm::createStringError(ec, "cannot create '%s': %s", dir.c_str(), ec.message().c_str());
  RankLayout layout(prog.layout, point);
  emit::Groups groups(prog, layout);
  for (int64_t r = 0; r < layout.ranks(); ++r) {
    std::string path = fmt::format("{}/{}.{}.et", dir, prefix, r);
    if (llvm::Error e = emit::writeRankTrace(path, prog.stages[layout.coord(r, ir::Group::PP)], r, layout, groups))
      return e;
  }
  if (llvm::Error e = writeFile(dir + "/comm_groups.json", groupsJson(groups))) return e;
  if (llvm::Error e = writeFile(dir + "/network.json", networkJson(point))) return e;
  if (llvm::Error e = writeFile(dir + "/system.json", engine::writeSystemConfigJson(systemConfig(point)))) return e;
  if (point.faults && !point.faults->links.empty())
    if (llvm::Error e = writeFile(dir + "/faults.json", faultsJson(point))) return e;
  return llvm::Error::success();
}

} // namespace rapid
