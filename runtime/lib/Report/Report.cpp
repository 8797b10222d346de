//===- Report.cpp - Text and JSON summaries -------------------------------===//

#include "rapid/Report/Report.h"

#include "llvm/Support/JSON.h"

#include <fmt/format.h>

namespace rapid::report {

using engine::SimResult;

static double utilisation(const net::LinkStats &s, int64_t totalNs) {
  return totalNs > 0 ? double(s.busyPs) / 1000.0 / double(totalNs) : 0.0;
}

static int64_t busyNs(const net::LinkStats &s) { return (s.busyPs + 500) / 1000; }

static void printText(const SimResult &res, const net::Network &net, const ReportOptions &opts,
                      llvm::raw_ostream &os) {
  os << fmt::format("total_ns: {}\n", res.totalNs);
  os << "rank finish_ns compute_ns exposed_comm_ns peer_wait_ns idle_ns\n";
  for (size_t r = 0; r < res.ranks.size(); ++r) {
    const auto &x = res.ranks[r];
    os << fmt::format("{} {} {} {} {} {}\n", r, x.finishNs, x.computeNs, x.exposedCommNs, x.peerWaitNs, x.idleNs);
  }
  if (!opts.links)
    return;
  const auto &topo = net.topology();
  os << "link src dst dim bytes busy_ns utilisation\n";
  for (size_t l = 0; l < net.stats().size(); ++l) {
    const auto &s = net.stats()[l];
    if (s.bytes <= 0)
      continue;
    const auto &link = topo.links()[l];
    os << fmt::format("{} {} {} {} {:.0f} {} {:.4f}\n", l, topo.nodeName(link.src),
                      topo.nodeName(link.dst), link.dim, s.bytes, busyNs(s),
                      utilisation(s, res.totalNs));
  }
}

static llvm::json::Value toJson(const SimResult &res, const net::Network &net,
                                const ReportOptions &opts) {
  llvm::json::Array ranks;
  for (size_t r = 0; r < res.ranks.size(); ++r) {
    const auto &x = res.ranks[r];
    ranks.push_back(llvm::json::Object{{"rank", int64_t(r)},
                                       {"finish_ns", x.finishNs},
                                       {"compute_ns", x.computeNs},
                                       {"exposed_comm_ns", x.exposedCommNs},
                                       {"peer_wait_ns", x.peerWaitNs},
                                       {"idle_ns", x.idleNs}});
  }
  llvm::json::Object doc{{"total_ns", res.totalNs}, {"ranks", std::move(ranks)}};
  if (opts.links) {
    llvm::json::Array links;
    const auto &topo = net.topology();
    for (size_t l = 0; l < net.stats().size(); ++l) {
      const auto &s = net.stats()[l];
      const auto &link = topo.links()[l];
      if (s.bytes > 0)
        links.push_back(llvm::json::Object{{"id", int64_t(l)},
                                           {"src", topo.nodeName(link.src)},
                                           {"dst", topo.nodeName(link.dst)},
                                           {"dim", int64_t(link.dim)},
                                           {"bytes", int64_t(s.bytes + 0.5)},
                                           {"busy_ns", busyNs(s)},
                                           {"utilisation", utilisation(s, res.totalNs)}});
    }
    doc["links"] = std::move(links);
  }
  return doc;
}

void printReport(const SimResult &res, const net::Network &net, const ReportOptions &opts,
                 llvm::raw_ostream &os) {
  if (opts.json)
    os << llvm::formatv("{0:2}", toJson(res, net, opts)) << "\n";
  else
    printText(res, net, opts, os);
}

} // namespace rapid::report
