#include "rapid/IR/RankLayout.h"
#include "rapid/IR/Verifier.h"

#include <gtest/gtest.h>

#include <cmath>

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
