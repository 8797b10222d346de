//===- ReshardTest.cpp - A profiled world laid out at another TP degree ---===//

#include "rapid/Profile/TensorParallel.h"

#include <gtest/gtest.h>

using namespace rapid::profile;

namespace {

/// TP 2 x DP 2 x PP 2 on eight ranks in Megatron-LM's order (rank 4 p +
/// 2 d + j), each rank naming the groups Megatron-LM makes: its
/// tensor-parallel pair, data-parallel pair, pipeline pair (here also the
/// shared embeddings' pair) and model-parallel group (tensor x pipeline);
/// stage 0 sends to stage 1.
TraceSet pipelined() {
  std::vector<KinetoTrace> ranks;
  for (int r = 0; r < 8; ++r) {
    int p = r / 4, d = r % 4 / 2, j = r % 2;
    KinetoTrace k;
    k.file = "t" + std::to_string(r);
    k.rank = r, k.worldSize = 8;
    k.groups = {{"tp", "TENSOR_MODEL_PARALLEL_GROUP", {4 * p + 2 * d, 4 * p + 2 * d + 1}},
                {"dp", "DATA_PARALLEL_GROUP", {4 * p + j, 4 * p + 2 + j}},
                {"pp", "PIPELINE_MODEL_PARALLEL_GROUP", {2 * d + j, 4 + 2 * d + j}},
                {"mp", "MODEL_PARALLEL_GROUP", {2 * d, 2 * d + 1, 4 + 2 * d, 5 + 2 * d}}};
    k.comms.push_back({2, "send", 1 << 20, p == 0 ? r + 4 : r - 4});
    ranks.push_back(std::move(k));
  }
  return llvm::cantFail(makeTraceSet("pp", std::move(ranks)));
}

std::string reshardError(TraceSet set, std::vector<std::string> dataParallel) {
  llvm::Error err = reshardWorld(set, 4, dataParallel);
  return err ? llvm::toString(std::move(err)) : "";
}

const ProcessGroup &group(const KinetoTrace &k, const char *name) {
  for (const ProcessGroup &g : k.groups)
    if (g.name == name) return g;
  throw std::runtime_error("no group");
}

} // namespace

TEST(Reshard, PipelineStagesKeepTheirGroupsShape) {
  TraceSet set = pipelined();
  ASSERT_FALSE(bool(reshardWorld(set, 4, {"DATA_PARALLEL_GROUP"})));
  ASSERT_EQ(set.ranks.size(), 16u);
  EXPECT_EQ(set.pipelineStages, 2);
  EXPECT_EQ(set.profiledTensorParallel, 2);
  // Rank 9: stage 1, copy 0, the second of its tensor-parallel group.
  const KinetoTrace &k = set.ranks[9];
  EXPECT_EQ(set.origin[9], 5);
  EXPECT_EQ(group(k, "tp").ranks, (std::vector<int>{8, 9, 10, 11}));
  EXPECT_EQ(group(k, "dp").ranks, (std::vector<int>{9, 13}));
  EXPECT_EQ(group(k, "pp").ranks, (std::vector<int>{1, 9}));
  EXPECT_EQ(group(k, "mp").ranks, (std::vector<int>{0, 1, 2, 3, 8, 9, 10, 11}));
  EXPECT_EQ(k.comms[0].peer, 1);
  // Data-parallel and one-rank-a-stage groups hold the rank's share of the
  // parameters; groups spanning the tensor-parallel group do not.
  EXPECT_TRUE(group(k, "dp").parameterShare);
  EXPECT_TRUE(group(k, "pp").parameterShare);
  EXPECT_FALSE(group(k, "mp").parameterShare);
  EXPECT_FALSE(group(k, "tp").parameterShare);
}

TEST(Reshard, WeakScalingSetsTheCopiesPerStage) {
  TraceSet set = pipelined();
  ASSERT_FALSE(bool(reshardWorld(set, 1, {"DATA_PARALLEL_GROUP"}, 8)));
  ASSERT_EQ(set.ranks.size(), 8u);
  // TP 1 x DP 4 x PP 2: rank 6 is stage 1, copy 2, running copy 0's profile.
  EXPECT_EQ(set.origin[6], 4);
  EXPECT_EQ(group(set.ranks[6], "dp").ranks, (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(group(set.ranks[6], "tp").ranks, (std::vector<int>{6}));
  EXPECT_EQ(group(set.ranks[6], "pp").ranks, (std::vector<int>{2, 6}));
  EXPECT_EQ(set.ranks[6].comms[0].peer, 2);
}

TEST(Reshard, GroupsOutsideTheLayoutAreErrors) {
  TraceSet set = pipelined();
  for (KinetoTrace &k : set.ranks) k.groups[3].ranks = {0, 1, 4}; // not a product of stages, copies and TP ranks
  llvm::Error err = reshardWorld(set, 4, {"DATA_PARALLEL_GROUP"});
  ASSERT_TRUE(bool(err));
  EXPECT_NE(llvm::toString(std::move(err)).find("is not whole stages, copies and tensor-parallel groups"),
            std::string::npos);
}

TEST(Reshard, LayoutErrorsSayWhatDoesNotFit) {
  // A send three ranks on: stages of three do not divide eight ranks.
  TraceSet uneven = pipelined();
  uneven.ranks[0].comms[0].peer = 3;
  EXPECT_NE(reshardError(uneven, {"DATA_PARALLEL_GROUP"}).find("pipeline stages of 3 ranks do not divide the world of 8"),
            std::string::npos);
  // Data-parallel groups of two sizes.
  EXPECT_NE(reshardError(pipelined(), {"DATA_PARALLEL_GROUP", "MODEL_PARALLEL_GROUP"})
                .find("(ranks 0, 1, 4, 5) has 4 ranks where 'dp' DATA_PARALLEL_GROUP (ranks 0, 2) has 2"),
            std::string::npos);
  // Stages and copies, but the tensor-parallel groups unnamed (the
  // model-parallel group spans them with the stages: not one of them).
  TraceSet untold = pipelined();
  for (KinetoTrace &k : untold.ranks) k.groups.erase(k.groups.begin());
  EXPECT_NE(reshardError(untold, {"DATA_PARALLEL_GROUP"}).find("but the profile names no tensor-parallel group (2 ranks each)"),
            std::string::npos);
  // Stages alone (one copy), the tensor-parallel groups unnamed.
  TraceSet stagesOnly = pipelined();
  for (KinetoTrace &k : stagesOnly.ranks) k.groups = {k.groups[2]};
  EXPECT_NE(reshardError(stagesOnly, {}).find("pipeline stages of 4 ranks, but the profile names no tensor-parallel group"),
            std::string::npos);
}
