//===- Verifier.cpp -------------------------------------------------------===//
#include "rapid/IR/Verifier.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <tuple>
#include <vector>

namespace rapid::ir {
namespace {

using Message = std::tuple<int, int, int>; ///< (from stage, to stage, tag)

/// splitmix64's finaliser: a bijection on 64 bits that spreads every bit.
uint64_t splitmix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/// A 64-bit hash of one message, summed over a program's sends and over its
/// receives: equal multisets give equal sums, and unequal ones agree only by
/// chance (no two keys hash alike by construction, as a plain shift-and-xor
/// of the three fields would let a large tag reach the stages' bits).
uint64_t mix(const Message &m) {
  uint64_t stages = (uint64_t(uint32_t(std::get<0>(m))) << 32) | uint32_t(std::get<1>(m));
  return splitmix(splitmix(stages) ^ uint32_t(std::get<2>(m)));
}

/// The smallest message whose sends and receives differ in number: both
/// lists sorted, where they first differ the smaller key is it.
std::string unpaired(const Program &p) {
  std::vector<Message> sends, recvs;
  for (const Graph &g : p.stages)
    for (const Op &op : g.ops) {
      if (op.kind == OpKind::Send) sends.emplace_back(g.stage, op.peer, op.tag);
      if (op.kind == OpKind::Recv) recvs.emplace_back(op.peer, g.stage, op.tag);
    }
  std::sort(sends.begin(), sends.end());
  std::sort(recvs.begin(), recvs.end());
  auto [s, r] = std::mismatch(sends.begin(), sends.end(), recvs.begin(), recvs.end());
  if (s == sends.end() && r == recvs.end()) return "";
  const Message &key = r == recvs.end() || (s != sends.end() && *s < *r) ? *s : *r;
  return fmt::format("send/recv from stage {} to stage {} with tag {} do not pair", std::get<0>(key),
                     std::get<1>(key), std::get<2>(key));
}

} // namespace

std::string verify(const Program &p) {
  // Sends and receives pair when their multisets of (from, to, tag) are
  // equal: checked by count and sum of a hash in one pass (a program has
  // hundreds of thousands of them), and spelled out by sorting only when
  // they are not.
  uint64_t sendSum = 0, recvSum = 0;
  size_t sendCount = 0, recvCount = 0;
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
      if (op.kind == OpKind::Send) sendSum += mix({g.stage, op.peer, op.tag}), ++sendCount;
      if (op.kind == OpKind::Recv) recvSum += mix({op.peer, g.stage, op.tag}), ++recvCount;
    }
  }
  if (sendCount == recvCount && sendSum == recvSum) return "";
  return unpaired(p);
}

} // namespace rapid::ir
