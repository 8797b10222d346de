//===- RankLayout.h - Which rank runs which shard --------------*- C++ -*-===//
//
// A view of the layout pass's result (ir::Layout::rankOrder): rank numbers
// as mixed-radix numbers whose digits are the TP, CP, DP and PP coordinates,
// fastest first. EP groups are blocks of ep consecutive DP ranks.
//===----------------------------------------------------------------------===//
#pragma once

#include "rapid/IR/IR.h"

namespace rapid {

class RankLayout {
public:
  explicit RankLayout(const ir::Layout &layout);

  int64_t ranks() const { return total; }
  /// The rank's index along a parallel degree (its stage for PP).
  int64_t coord(int64_t rank, ir::Group g) const;
  /// The rank that differs from `rank` only in degree `g`, at index `value`.
  int64_t with(int64_t rank, ir::Group g, int64_t value) const;
  /// Every rank of `rank`'s communicator for `g`, ascending.
  std::vector<int64_t> members(int64_t rank, ir::Group g) const;
  /// Which network dimensions a group's members differ in.
  std::vector<bool> involvedDims(const std::vector<int64_t> &members) const;
  int64_t firstRankOfStage(int64_t stage) const { return with(0, ir::Group::PP, stage); }

private:
  struct Digit {
    ir::Group group; ///< TP, CP, DP or PP
    int64_t size, stride;
  };
  const Digit *digit(ir::Group g) const;
  std::vector<Digit> digits;       ///< fastest first
  std::vector<int64_t> dimSizes;   ///< network dimensions, fastest first
  int64_t total = 1, ep = 1, shard = 1;
};

} // namespace rapid
