//===- Timeline.cpp - Chrome/Perfetto trace-event output ------------------===//

#include "rapid/Report/Report.h"

#include "llvm/Support/JSON.h"

#include <algorithm>
#include <fmt/format.h>

namespace rapid::report {

static const char *laneName(engine::Lane l) {
  static const char *names[] = {"compute", "cpu", "comm", "recv/other"};
  return names[int(l)];
}

/// Names every (rank, lane) thread once so the viewer labels the rows.
static void writeThreadNames(llvm::json::OStream &j, size_t numRanks) {
  for (size_t r = 0; r < numRanks; ++r)
    for (int lane = 0; lane < 4; ++lane)
      j.object([&] {
        j.attribute("ph", "M");
        j.attribute("name", "thread_name");
        j.attribute("pid", int64_t(r));
        j.attribute("tid", int64_t(lane));
        j.attributeObject("args", [&] { j.attribute("name", laneName(engine::Lane(lane))); });
      });
}

/// Link rows live in one extra process after the ranks, a row per link.
static void writeLinks(llvm::json::OStream &j, const net::Network &net, int64_t pid) {
  const net::Topology &topo = net.topology();
  std::vector<bool> named(topo.links().size(), false);
  for (const net::LinkSpan &s : net.linkSpans()) {
    const net::Link &l = topo.links()[s.link];
    if (!named[s.link]) {
      named[s.link] = true;
      j.object([&] {
        j.attribute("ph", "M");
        j.attribute("name", "thread_name");
        j.attribute("pid", pid);
        j.attribute("tid", int64_t(s.link));
        j.attributeObject("args", [&] {
          j.attribute("name", fmt::format("{} -> {}", topo.nodeName(l.src), topo.nodeName(l.dst)));
        });
      });
    }
    j.object([&] {
      j.attribute("name", fmt::format("{:.0f} B", s.bytes));
      j.attribute("ph", "X");
      j.attribute("pid", pid);
      j.attribute("tid", int64_t(s.link));
      j.attribute("ts", double(s.startPs) / 1e6);
      j.attribute("dur", double(s.endPs - s.startPs) / 1e6);
    });
  }
}

llvm::Error writeTimeline(const std::string &path, const engine::SimResult &res,
                          const trace::Workload &w, const net::Network *net, const std::vector<int64_t> *ranks) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec)
    return llvm::createStringError(ec, fmt::format("{}: cannot write timeline: {}", path,
                                                   ec.message()));
  llvm::json::OStream j(os);
  j.object([&] {
    j.attribute("displayTimeUnit", "ns");
    j.attributeArray("traceEvents", [&] {
      writeThreadNames(j, w.ranks.size());
      for (const auto &s : res.spans) {
        if (ranks && !std::binary_search(ranks->begin(), ranks->end(), int64_t(s.rank))) continue;
        const auto &g = w.ranks[s.rank];
        const auto &n = g.nodes()[s.node];
        j.object([&] {
          j.attribute("name", g.name(n).empty() ? fmt::format("node {}", n.id)
                                                : std::string(g.name(n)));
          j.attribute("ph", "X");
          j.attribute("pid", int64_t(s.rank));
          j.attribute("tid", int64_t(s.lane));
          j.attribute("ts", double(s.startPs) / 1e6); // trace events count in us
          j.attribute("dur", double(s.endPs - s.startPs) / 1e6);
          j.attributeObject("args", [&] {
            j.attribute("id", int64_t(n.id));
            j.attribute("kind", trace::nodeKindName(n.kind));
            if (n.kind == trace::NodeKind::Coll) j.attribute("collective", trace::collKindName(n.coll()));
            if (n.commSize != trace::kAbsent) j.attribute("bytes", n.commSize);
            if (n.numOps != trace::kAbsent) j.attribute("flops", n.numOps);
            if (uint32_t group = g.group(n)) j.attribute("group", int64_t(group));
          });
        });
      }
      if (net) writeLinks(j, *net, int64_t(w.ranks.size()));
    });
  });
  os << "\n";
  return llvm::Error::success();
}

} // namespace rapid::report
