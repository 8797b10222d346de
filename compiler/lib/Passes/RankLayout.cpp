//===- RankLayout.cpp -----------------------------------------------------===//
#include "rapid/Passes/RankLayout.h"

#include <algorithm>

namespace rapid {
namespace {

ir::Group groupNamed(const std::string &n) {
  return n == "tp" ? ir::Group::TP : n == "cp" ? ir::Group::CP : n == "dp" ? ir::Group::DP : ir::Group::PP;
}

} // namespace

RankLayout::RankLayout(const ir::Layout &l, const ExperimentPoint &p) : ep(l.ep) {
  auto size = [&](ir::Group g) {
    return g == ir::Group::TP ? l.tp : g == ir::Group::CP ? l.cp : g == ir::Group::DP ? l.dp : l.pp;
  };
  std::vector<ir::Group> order;
  if (p.mapping.empty()) {
    order = {ir::Group::TP, ir::Group::CP, ir::Group::DP, ir::Group::PP};
  } else {
    // Maps in the order of their first dimension in the network.
    auto dimIndex = [&](const std::string &d) {
      for (size_t i = 0; i < p.network.dims.size(); ++i)
        if (p.network.dims[i].name == d) return i;
      return p.network.dims.size();
    };
    std::vector<const DegreeMapping *> maps;
    for (const DegreeMapping &m : p.mapping) maps.push_back(&m);
    std::stable_sort(maps.begin(), maps.end(), [&](auto *a, auto *b) {
      return dimIndex(a->dims.front()) < dimIndex(b->dims.front());
    });
    for (const DegreeMapping *m : maps)
      for (const std::string &d : m->degrees) order.push_back(groupNamed(d));
    for (ir::Group g : {ir::Group::TP, ir::Group::CP, ir::Group::DP, ir::Group::PP}) // unmapped ones are 1
      if (std::find(order.begin(), order.end(), g) == order.end()) order.push_back(g);
  }
  for (ir::Group g : order) {
    digits.push_back({g, size(g), total});
    total *= size(g);
  }
  for (const DimensionSpec &d : p.network.dims) dimSizes.push_back(d.size);
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
