//===- CriticalPath.cpp - What the slowest rank was waiting for -----------===//
//
// Walks back from the last node to finish on the last rank to finish: at
// each node, to the dependency that finished last. Where a node started
// later than all its dependencies had finished, the gap is waiting: for a
// busy stream, for the other members of a collective, or for a peer's
// message. The sums split the step into computing, communicating and
// waiting along the one chain that set its length.
//===----------------------------------------------------------------------===//
#include "rapid/Report/Report.h"

#include "llvm/Support/JSON.h"

#include <algorithm>
#include <fmt/format.h>

namespace rapid::report {

CriticalPath criticalPath(const engine::SimResult &res, const trace::Workload &w) {
  CriticalPath cp;
  if (res.spans.empty()) return cp;
  // Each node's span, by rank and node index.
  std::vector<std::vector<const engine::Span *>> spanOf(w.ranks.size());
  for (size_t r = 0; r < w.ranks.size(); ++r) spanOf[r].assign(w.ranks[r].nodes().size(), nullptr);
  const engine::Span *last = &res.spans.front();
  for (const engine::Span &s : res.spans) {
    spanOf[s.rank][s.node] = &s;
    if (s.endPs > last->endPs) last = &s;
  }
  cp.rank = last->rank;
  const trace::RankGraph &g = w.ranks[cp.rank];
  for (const engine::Span *s = last; s;) {
    const trace::TraceNode &n = g.nodes()[s->node];
    const engine::Span *prev = nullptr;
    for (uint32_t i = 0; i < n.depCount; ++i) {
      const engine::Span *d = spanOf[cp.rank][g.deps()[n.depBegin + i]];
      if (d && (!prev || d->endPs > prev->endPs)) prev = d;
    }
    int64_t wait = s->startPs - (prev ? prev->endPs : 0);
    cp.steps.push_back({s->node, s->startPs, s->endPs, s->lane, std::max<int64_t>(0, wait)});
    s = prev;
  }
  std::reverse(cp.steps.begin(), cp.steps.end());
  for (const PathStep &st : cp.steps) {
    int64_t busy = st.endPs - st.startPs;
    (st.lane == engine::Lane::Compute || st.lane == engine::Lane::Cpu ? cp.computePs : cp.commPs) += busy;
    cp.waitPs += st.waitPs;
  }
  return cp;
}

void printCriticalPath(const CriticalPath &cp, const trace::Workload &w, bool json, size_t top,
                       llvm::raw_ostream &os) {
  if (cp.steps.empty()) return;
  const trace::RankGraph &g = w.ranks[cp.rank];
  std::vector<const PathStep *> longest;
  for (const PathStep &s : cp.steps) longest.push_back(&s);
  std::stable_sort(longest.begin(), longest.end(),
                   [](auto *a, auto *b) { return a->endPs - a->startPs > b->endPs - b->startPs; });
  longest.resize(std::min(top, longest.size()));
  auto ns = [](int64_t ps) { return (ps + 500) / 1000; };
  if (json) {
    llvm::json::OStream j(os); // indent 0: one compact line
    j.object([&] {
      j.attributeObject("critical_path", [&] {
        j.attribute("rank", int64_t(cp.rank));
        j.attribute("nodes", int64_t(cp.steps.size()));
        j.attribute("compute_ns", ns(cp.computePs));
        j.attribute("communication_ns", ns(cp.commPs));
        j.attribute("waiting_ns", ns(cp.waitPs));
        j.attributeArray("longest", [&] {
          for (const PathStep *s : longest)
            j.object([&] {
              j.attribute("node", g.nodes()[s->node].id);
              j.attribute("name", llvm::StringRef(g.name(g.nodes()[s->node])));
              j.attribute("start_ns", ns(s->startPs));
              j.attribute("duration_ns", ns(s->endPs - s->startPs));
            });
        });
      });
    });
    os << "\n";
    return;
  }
  os << fmt::format("critical path: rank {}, {} nodes: compute {} ns, communication {} ns, waiting {} ns\n", cp.rank,
                    cp.steps.size(), ns(cp.computePs), ns(cp.commPs), ns(cp.waitPs));
  for (const PathStep *s : longest)
    os << fmt::format("  node {} {} start {} ns, {} ns\n", g.nodes()[s->node].id, g.name(g.nodes()[s->node]),
                      ns(s->startPs), ns(s->endPs - s->startPs));
}

} // namespace rapid::report
