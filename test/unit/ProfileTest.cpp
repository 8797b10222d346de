//===- ProfileTest.cpp - What the Kineto reader takes from a collective ---===//

#include "rapid/Profile/Kineto.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

using namespace rapid::profile;

namespace {

/// A one-rank trace whose step holds a record_param_comms with `args`.
KinetoTrace withComm(const std::string &args) {
  std::string text = fmt::format(
      R"({{"traceEvents": [
  {{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": 100}},
  {{"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 1, "ts": 10, "dur": 5, "args": {{{}}}}}
]}})",
      args);
  auto t = parseKineto("t.json", text);
  EXPECT_TRUE(bool(t)) << (t ? "" : llvm::toString(t.takeError()));
  return t ? std::move(*t) : KinetoTrace{};
}

} // namespace

// PyTorch writes the first 29 ranks of a larger group, "...", and the last:
// a list that steps evenly to the last in "Group size" ranks is read whole.
TEST(Profile, CutRankListSteppingEvenly) {
  std::string head;
  for (int r = 0; r < 29; ++r) head += fmt::format("{}, ", 4 * r);
  KinetoTrace t = withComm(
      fmt::format(R"("Collective name": "allreduce", "Group size": 32, "Process Group Name": "7", "Process Group Ranks": "[{}..., 124]")",
                  head));
  ASSERT_EQ(t.groups.size(), 1u);
  ASSERT_EQ(t.groups[0].ranks.size(), 32u);
  EXPECT_EQ(t.groups[0].ranks[31], 124);
  EXPECT_EQ(t.groups[0].ranks[5], 20);
  EXPECT_EQ(t.groups[0].name, "7");
}

// Any other cut list is not guessed: the ranks stay unknown (and the replay
// matches that group's collectives by stream).
TEST(Profile, CutRankListUneven) {
  KinetoTrace t = withComm(R"("Group size": 32, "Process Group Name": "7", "Process Group Ranks": "[0, 4, 9, ..., 124]")");
  ASSERT_EQ(t.groups.size(), 1u);
  EXPECT_TRUE(t.groups[0].ranks.empty());
  t = withComm(R"("Group size": 40, "Process Group Name": "7", "Process Group Ranks": "[0, 4, 8, ..., 124]")");
  EXPECT_TRUE(t.groups[0].ranks.empty());
  // A size past any world is not expanded (nor multiplied out of range).
  t = withComm(R"("Group size": 1000000000000000, "Process Group Name": "7", "Process Group Ranks": "[0, 4, ..., 124]")");
  EXPECT_TRUE(t.groups[0].ranks.empty());
}

// Ranks as a JSON array are sorted; the size comes from the element count
// and the ScalarType name; a send's peer is its "Dst Rank".
TEST(Profile, CommSizeAndPeer) {
  KinetoTrace t = withComm(R"("Collective name": "send", "dtype": "BFloat16", "In msg nelems": 10, "Dst Rank": 5, "Src Rank": 2, "Process Group Name": "0", "Process Group Ranks": [5, 2])");
  ASSERT_EQ(t.comms.size(), 1u);
  EXPECT_EQ(t.comms[0].bytes, 20);
  EXPECT_EQ(t.comms[0].peer, 5);
  EXPECT_EQ(t.groups[0].ranks, (std::vector<int>{2, 5}));
  ASSERT_EQ(t.host.size(), 1u);
  EXPECT_EQ(t.host[0].comm, 0);
}
