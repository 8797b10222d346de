//===- KvTransfer.cpp - Disaggregated serving's KV-cache moves ------------===//
#include "KvTransfer.h"

#include "rapid/Emit/RuntimeInputs.h"
#include "rapid/Lower/Lower.h"
#include "rapid/Network/Network.h"

#include <cmath>
#include <fmt/format.h>

namespace rapid::run {

TransferCosts::TransferCosts(const ExperimentPoint &point, const ir::Program &probe, net::Topology topo)
    : point(point), probe(probe), layout(probe.layout), topo(std::move(topo)) {
  perTokenLayer = lower::makeShard(probe.layout, point).kvBytesPerToken();
}

llvm::Expected<std::pair<double, double>> TransferCosts::operator()(int64_t from, int64_t to) {
  constexpr int64_t kTokens = 4096;
  llvm::Expected<double> one = seconds(from, to, kTokens);
  if (!one) return one.takeError();
  llvm::Expected<double> two = seconds(from, to, 2 * kTokens);
  if (!two) return two.takeError();
  double perToken = (*two - *one) / double(kTokens);
  return std::pair{std::max(0.0, *one - perToken * double(kTokens)), perToken};
}

std::vector<int64_t> TransferCosts::ranksOf(int64_t d) const {
  std::vector<int64_t> out;
  for (int64_t r = 0; r < layout.ranks(); ++r)
    if (layout.coord(r, ir::Group::DP) == d) out.push_back(r);
  return out;
}

/// Each rank of one replica sends its part of `tokens` tokens' cache to the
/// same rank of the other, all at once; when the last arrives.
llvm::Expected<double> TransferCosts::seconds(int64_t fromReplica, int64_t toReplica, int64_t tokens) {
  std::vector<int64_t> from = ranksOf(fromReplica), to = ranksOf(toReplica);
  trace::Workload w;
  for (int64_t r = 0; r < layout.ranks(); ++r) {
    trace::RankGraph g;
    g.rank = int(r);
    g.file = fmt::format("{}.kv-transfer.{}", point.experiment, r);
    w.ranks.push_back(std::move(g));
  }
  for (size_t k = 0; k < from.size(); ++k) {
    int64_t layers = probe.memory.stageLayers[size_t(layout.coord(from[k], ir::Group::PP))];
    trace::TraceNode n;
    n.commSize = int64_t(std::ceil(perTokenLayer * double(layers) * double(tokens)));
    n.commTag = 0;
    n.kind = trace::NodeKind::Send;
    n.commDst = to[k];
    w.ranks[size_t(from[k])].own().nodes.push_back(n);
    n.kind = trace::NodeKind::Recv;
    n.commDst = trace::kAbsent;
    n.commSrc = from[k];
    w.ranks[size_t(to[k])].own().nodes.push_back(n);
  }
  net::Network network(topo, net::NetMode::Congestion);
  coll::CommGroups groups;
  engine::SimOptions so;
  so.system = systemConfig(point);
  engine::Simulator sim(w, network, groups, so);
  llvm::Expected<engine::SimResult> res = sim.run();
  if (!res) return res.takeError();
  return double(res->totalNs) * 1e-9;
}

} // namespace rapid::run
