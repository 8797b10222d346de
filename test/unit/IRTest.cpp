#include "rapid/IR/RankLayout.h"
#include "rapid/IR/Verifier.h"

#include <gtest/gtest.h>

#include <cmath>
#include <tuple>
#include <vector>

using namespace rapid;
using namespace rapid::ir;

namespace {

Program oneGemm(Shape s) {
  Program p;
  Graph g;
  Op op;
  op.kind = OpKind::Gemm;
  op.name = "mlp.fc1";
  op.shape = s;
  g.add(op);
  p.stages.push_back(g);
  return p;
}

} // namespace

TEST(Verifier, RejectsEmptyGemms) {
  EXPECT_EQ(verify(oneGemm({4, 8, 16, 1})), "");
  EXPECT_EQ(verify(oneGemm({0, 8, 16, 2})), "stage 0 op %0 \"mlp.fc1\" is empty: m=0 n=8 k=16 batch=2");
  EXPECT_NE(verify(oneGemm({4, 8, 16, 0})), "");
}

TEST(Verifier, RejectsUndefinedTimes) {
  Program p = oneGemm({4, 8, 16, 1});
  p.stages[0].ops[0].time = Seconds(NAN);
  EXPECT_EQ(verify(p), "stage 0 op %0 \"mlp.fc1\" has no finite time");
}

// Sends and receives pair by (from stage, to stage, tag); the message names
// the smallest key whose counts differ, whichever side has the extra one.
TEST(Verifier, NamesTheFirstUnpairedTransfer) {
  auto transfers = [](std::vector<std::tuple<int32_t, OpKind, int32_t, int32_t>> ops) {
    Program p;
    for (int32_t s = 0; s < 2; ++s) {
      Graph g;
      g.stage = s;
      p.stages.push_back(g);
    }
    for (auto [stage, kind, peer, tag] : ops) {
      Op op;
      op.kind = kind, op.peer = peer, op.tag = tag, op.group = Group::PP, op.commBytes = 1;
      p.stages[size_t(stage)].add(op);
    }
    return p;
  };
  EXPECT_EQ(verify(transfers({{0, OpKind::Send, 1, 3}, {1, OpKind::Recv, 0, 3}})), "");
  // A receive at tag 2 with no send, a send at tag 5 with no receive.
  EXPECT_EQ(verify(transfers({{0, OpKind::Send, 1, 3}, {0, OpKind::Send, 1, 5}, {1, OpKind::Recv, 0, 2},
                              {1, OpKind::Recv, 0, 3}})),
            "send/recv from stage 0 to stage 1 with tag 2 do not pair");
  EXPECT_EQ(verify(transfers({{0, OpKind::Send, 1, 3}, {0, OpKind::Send, 1, 5}, {1, OpKind::Recv, 0, 3}})),
            "send/recv from stage 0 to stage 1 with tag 5 do not pair");
  // Two sends on one key against one receive.
  EXPECT_EQ(verify(transfers({{0, OpKind::Send, 1, 3}, {0, OpKind::Send, 1, 3}, {1, OpKind::Recv, 0, 3}})),
            "send/recv from stage 0 to stage 1 with tag 3 do not pair");
  // As many sends as receives on keys that a shift-and-xor of the fields
  // would hash alike (a tag of 2^20 reaching the stages' bits).
  EXPECT_EQ(verify(transfers({{0, OpKind::Send, 1, 0}, {0, OpKind::Recv, 0, 1 << 20}})),
            "send/recv from stage 0 to stage 0 with tag 1048576 do not pair");
}

TEST(RankLayout, FollowsTheLayoutPassOrder) {
  Layout l;
  l.tp = 2, l.dp = 2, l.pp = 2;
  l.rankOrder = {Group::TP, Group::PP, Group::DP, Group::CP}; // pp inside dp
  l.dimSizes = {8};
  RankLayout r(l);
  EXPECT_EQ(r.ranks(), 8);
  EXPECT_EQ(r.coord(5, Group::TP), 1);
  EXPECT_EQ(r.coord(5, Group::PP), 0);
  EXPECT_EQ(r.coord(5, Group::DP), 1);
  EXPECT_EQ(r.members(5, Group::DP), (std::vector<int64_t>{1, 5}));
  EXPECT_EQ(r.firstRankOfStage(1), 2);
}
