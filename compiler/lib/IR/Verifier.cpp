//===- Verifier.cpp -------------------------------------------------------===//
#include "rapid/IR/Verifier.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <tuple>
#include <vector>

namespace rapid::ir {

std::string verify(const Program &p) {
  // (from stage, to stage, tag) of every send and every receive: sorted,
  // the two lists must be equal (a map of counts allocated per message).
  std::vector<std::tuple<int, int, int>> sends, recvs;
  for (const Graph &g : p.stages) {
    for (size_t i = 0; i < g.ops.size(); ++i) {
      const Op &op = g.ops[i];
      auto where = [&] { return fmt::format("stage {} op %{} \"{}\"", g.stage, i, op.name); };
      for (uint32_t d : op.deps)
        if (d >= i) return fmt::format("{} depends on %{}, which does not come before it", where(), d);
      if (!(op.flops >= 0) || !(op.bytes >= 0)) return fmt::format("{} has negative or undefined work", where());
      bool shaped = op.kind == OpKind::Gemm || op.kind == OpKind::FlashAttention || op.kind == OpKind::DecodeAttention;
      const Shape &s = op.shape;
      if (shaped && (s.m <= 0 || s.n <= 0 || s.k <= 0 || s.batch <= 0))
        return fmt::format("{} is empty: m={} n={} k={} batch={}", where(), s.m, s.n, s.k, s.batch);
      if (!op.isComm() && !(op.time.value() >= 0 && op.time.value() < INFINITY))
        return fmt::format("{} has no finite time", where());
      if (op.isComm() && (op.group == Group::None || op.commBytes <= 0))
        return fmt::format("{} is a collective without a group or a size", where());
      if (op.kind == OpKind::Send) sends.emplace_back(g.stage, op.peer, op.tag);
      if (op.kind == OpKind::Recv) recvs.emplace_back(op.peer, g.stage, op.tag);
    }
  }
  std::sort(sends.begin(), sends.end());
  std::sort(recvs.begin(), recvs.end());
  // Where the sorted lists first differ, the smaller of the two keys is the
  // smallest whose sends and receives differ in number.
  auto [s, r] = std::mismatch(sends.begin(), sends.end(), recvs.begin(), recvs.end());
  if (s == sends.end() && r == recvs.end()) return "";
  const auto &key = r == recvs.end() || (s != sends.end() && *s < *r) ? *s : *r;
  return fmt::format("send/recv from stage {} to stage {} with tag {} do not pair", std::get<0>(key),
                     std::get<1>(key), std::get<2>(key));
}

} // namespace rapid::ir
