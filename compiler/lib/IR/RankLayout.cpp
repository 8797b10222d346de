//===- RankLayout.cpp -----------------------------------------------------===//
#include "rapid/IR/RankLayout.h"

#include <algorithm>

namespace rapid {

RankLayout::RankLayout(const ir::Layout &l) : dimSizes(l.dimSizes), ep(l.ep), shard(l.shard) {
  for (ir::Group g : l.rankOrder) {
    digits.push_back({g, l.degree(g), total});
    total *= l.degree(g);
  }
}

const RankLayout::Digit *RankLayout::digit(ir::Group g) const {
  for (const Digit &d : digits)
    if (d.group == g) return &d;
  return nullptr;
}

int64_t RankLayout::coord(int64_t rank, ir::Group g) const {
  const Digit *d = digit(g);
  return d ? (rank / d->stride) % d->size : 0;
}

int64_t RankLayout::with(int64_t rank, ir::Group g, int64_t value) const {
  const Digit *d = digit(g);
  return d ? rank + (value - coord(rank, g)) * d->stride : rank;
}

std::vector<int64_t> RankLayout::members(int64_t rank, ir::Group g) const {
  std::vector<int64_t> out{rank};
  auto expand = [&](ir::Group along, int64_t from, int64_t count) {
    std::vector<int64_t> next;
    for (int64_t r : out)
      for (int64_t i = from; i < from + count; ++i) next.push_back(with(r, along, i));
    out = std::move(next);
  };
  switch (g) {
  case ir::Group::TP: expand(ir::Group::TP, 0, digit(ir::Group::TP)->size); break;
  case ir::Group::CP: expand(ir::Group::CP, 0, digit(ir::Group::CP)->size); break;
  case ir::Group::DP: expand(ir::Group::DP, 0, digit(ir::Group::DP)->size); break;
  case ir::Group::PP: expand(ir::Group::PP, 0, digit(ir::Group::PP)->size); break;
  case ir::Group::EP: expand(ir::Group::DP, coord(rank, ir::Group::DP) / ep * ep, ep); break;
  case ir::Group::DPCP:
    expand(ir::Group::DP, 0, digit(ir::Group::DP)->size);
    expand(ir::Group::CP, 0, digit(ir::Group::CP)->size);
    break;
  case ir::Group::Shard:
    expand(ir::Group::DP, coord(rank, ir::Group::DP) / shard * shard, shard);
    expand(ir::Group::CP, 0, digit(ir::Group::CP)->size);
    break;
  case ir::Group::Replica: {
    std::vector<int64_t> next;
    for (int64_t i = coord(rank, ir::Group::DP) % shard; i < digit(ir::Group::DP)->size; i += shard)
      next.push_back(with(rank, ir::Group::DP, i));
    out = std::move(next);
    break;
  }
  case ir::Group::None: break;
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<bool> RankLayout::involvedDims(const std::vector<int64_t> &members) const {
  std::vector<bool> out(dimSizes.size(), false);
  int64_t stride = 1;
  for (size_t d = 0; d < dimSizes.size(); ++d) {
    for (int64_t m : members)
      if ((m / stride) % dimSizes[d] != (members.front() / stride) % dimSizes[d]) out[d] = true;
    stride *= dimSizes[d];
  }
  return out;
}

} // namespace rapid
