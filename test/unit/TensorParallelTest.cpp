//===- TensorParallelTest.cpp - Which profiled work a TP degree shards ----===//

#include "rapid/Profile/TensorParallel.h"

#include <gtest/gtest.h>

#include <fmt/format.h>
#include <map>

using namespace rapid::profile;

namespace {

/// One forward pass in Megatron-LM's pattern on one host thread: a
/// column-parallel linear (a GEMM and a memset of its output), the work on
/// its output, a row-parallel linear and its all-reduce, a norm, the output
/// layer, a copy before the loss, the vocabulary-parallel loss and a mean
/// after it. `extra` adds events.
std::string forwardPass(const std::string &extra = "") {
  std::string events;
  int corr = 0;
  auto op = [&](const char *name, int ts, int dur, const std::string &args = "") {
    events += fmt::format(R"({{"ph": "X", "cat": "cpu_op", "name": "{}", "pid": 1, "tid": 1, "ts": {}, "dur": {}{}}},)",
                          name, ts, dur, args.empty() ? "" : ", \"args\": {" + args + "}");
  };
  auto launch = [&](const char *kernel, int ts, const char *cat = "kernel", int stream = 7) {
    ++corr;
    events += fmt::format(R"({{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": {}, "dur": 1, "args": {{"correlation": {}}}}},)",
                          ts, corr);
    events += fmt::format(R"({{"ph": "X", "cat": "{}", "name": "{}", "pid": 0, "tid": {}, "ts": {}, "dur": 3, "args": {{"correlation": {}, "stream": {}}}}},)",
                          cat, kernel, stream, ts + 2, corr, stream);
  };
  auto mm = [&](int ts, int m, int k, int n) {
    op("aten::mm", ts, 8,
       fmt::format(R"("Input Dims": [[{}, {}], [{}, {}]], "Input type": ["c10::Half", "c10::Half"])", m, k, k, n));
  };
  op("LinearWithGradAccumulationAndAsyncCommunication", 10, 20, R"("Sequence number": 10, "Fwd thread id": 0)");
  mm(12, 8, 16, 4);
  launch("Memset (Device)", 13, "gpu_memset");
  launch("gemm_column", 15);
  launch("softmax", 40);
  op("LinearWithGradAccumulationAndAsyncCommunication", 60, 20, R"("Sequence number": 12, "Fwd thread id": 0)");
  mm(62, 8, 4, 16);
  launch("gemm_row", 64);
  op("_ReduceFromModelParallelRegion", 85, 10);
  launch("ncclDevKernel_AllReduce_Sum_f16_RING_LL", 87, "kernel", 9);
  launch("layernorm", 100);
  op("LinearWithGradAccumulationAndAsyncCommunication", 120, 20);
  mm(122, 8, 16, 32);
  launch("gemm_head", 124);
  launch("copy", 150);
  op("_VocabParallelCrossEntropy", 160, 30);
  launch("cross_entropy", 165);
  launch("mean", 200);
  events += extra;
  return R"({"traceEvents": [)" + events +
         R"({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": 1000}]})";
}

std::map<std::string, TpRole> rolesByName(const KinetoTrace &t, const TpRoles &r) {
  std::map<std::string, TpRole> out;
  for (size_t i = 0; i < t.device.size(); ++i) out[t.name(t.device[i])] = r.device[i];
  return out;
}

} // namespace

// A linear followed by a tensor-parallel all-reduce before the next linear
// is row-parallel; every other linear is column-parallel, and the work
// between it and the next linear, or in the loss after the last, is
// sharded with it. A memset inside a GEMM is work on its output.
TEST(TensorParallel, RolesFollowMegatronsPattern) {
  auto t = parseKineto("t.json", forwardPass());
  ASSERT_TRUE(bool(t)) << llvm::toString(t.takeError());
  auto r = tensorParallelRoles(*t);
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  EXPECT_EQ(r->columns, 2u);
  EXPECT_EQ(r->rows, 1u);
  auto roles = rolesByName(*t, *r);
  EXPECT_EQ(roles.at("gemm_column"), TpRole::Column);
  EXPECT_EQ(roles.at("Memset (Device)"), TpRole::Sharded);
  EXPECT_EQ(roles.at("softmax"), TpRole::Sharded);
  EXPECT_EQ(roles.at("gemm_row"), TpRole::Row);
  EXPECT_EQ(roles.at("ncclDevKernel_AllReduce_Sum_f16_RING_LL"), TpRole::Collective);
  EXPECT_EQ(roles.at("layernorm"), TpRole::Replicated);
  EXPECT_EQ(roles.at("gemm_head"), TpRole::Column);
  EXPECT_EQ(roles.at("copy"), TpRole::Replicated);
  EXPECT_EQ(roles.at("cross_entropy"), TpRole::Sharded);
  EXPECT_EQ(roles.at("mean"), TpRole::Replicated);
}

// With a next microbatch's column-parallel linear after the output layer,
// the work between them is still the loss's alone: the mean after the loss
// stays replicated.
TEST(TensorParallel, OutputLayerBeforeTheNextMicrobatch) {
  auto t = parseKineto("t.json", forwardPass(R"({"ph": "X", "cat": "cpu_op", "name": "LinearWithGradAccumulationAndAsyncCommunication", "pid": 1, "tid": 1, "ts": 400, "dur": 5},)"));
  ASSERT_TRUE(bool(t)) << llvm::toString(t.takeError());
  auto r = tensorParallelRoles(*t);
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  EXPECT_EQ(r->columns, 3u);
  auto roles = rolesByName(*t, *r);
  EXPECT_EQ(roles.at("cross_entropy"), TpRole::Sharded);
  EXPECT_EQ(roles.at("copy"), TpRole::Replicated);
  EXPECT_EQ(roles.at("mean"), TpRole::Replicated);
}

// A backward node does the work of its forward node's kind, matched by
// (forward thread, sequence number): a linear's gradient GEMMs carry the
// linear's shard (a row-parallel linear's K, 4 here; a column-parallel's N)
// and its other backward work is sharded; a node whose forward op is not in
// the step is replicated; the optimizer step is sharded.
TEST(TensorParallel, BackwardNodesFollowTheirForwardOps) {
  std::string forwardSeq =
      R"({"ph": "X", "cat": "cpu_op", "name": "ScaledSoftmax", "pid": 1, "tid": 1, "ts": 38, "dur": 5, "args": {"Sequence number": 11, "Fwd thread id": 0}},)"
      R"({"ph": "X", "cat": "cpu_op", "name": "aten::native_layer_norm", "pid": 1, "tid": 1, "ts": 98, "dur": 5, "args": {"Sequence number": 13, "Fwd thread id": 0}},)";
  std::string events;
  int corr = 100;
  auto node = [&](const char *name, int seq, int ts, int dur) {
    events += fmt::format(R"({{"ph": "X", "cat": "cpu_op", "name": "autograd::engine::evaluate_function: {}", "pid": 1, "tid": 2, "ts": {}, "dur": {}, "args": {{"Sequence number": {}, "Fwd thread id": 0}}}},)",
                          name, ts, dur, seq);
  };
  auto mm = [&](int ts, int m, int k, int n) {
    events += fmt::format(R"({{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 2, "ts": {}, "dur": 4, "args": {{"Input Dims": [[{}, {}], [{}, {}]], "Input type": ["c10::Half", "c10::Half"]}}}},)",
                          ts, m, k, k, n);
  };
  auto launch = [&](const char *kernel, int ts, int tid = 2, int stream = 7) {
    ++corr;
    events += fmt::format(R"({{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": {}, "ts": {}, "dur": 1, "args": {{"correlation": {}}}}},)",
                          tid, ts, corr);
    events += fmt::format(R"({{"ph": "X", "cat": "kernel", "name": "{}", "pid": 0, "tid": {}, "ts": {}, "dur": 3, "args": {{"correlation": {}, "stream": {}}}}},)",
                          kernel, stream, ts + 2, corr, stream);
  };
  node("NativeLayerNormBackward0", 13, 300, 10);
  launch("layernorm_backward", 302);
  node("LinearWithGradAccumulationAndAsyncCommunicationBackward", 12, 320, 20);
  mm(321, 8, 16, 4);
  launch("row_input_grad", 322);
  mm(331, 4, 8, 16);
  launch("row_weight_grad", 332);
  node("ScaledSoftmaxBackward", 11, 350, 10);
  launch("softmax_backward", 352);
  node("LinearWithGradAccumulationAndAsyncCommunicationBackward", 10, 370, 25);
  mm(371, 8, 4, 16);
  launch("column_input_grad", 372);
  launch("ncclDevKernel_AllReduce_Sum_f16_RING_LL", 380, 2, 9);
  launch("column_other", 390);
  node("UnknownBackward", 99, 400, 5);
  launch("orphan", 401);
  events += R"({"ph": "X", "cat": "user_annotation", "name": "Optimizer.step#FusedAdam.step", "pid": 1, "tid": 1, "ts": 500, "dur": 20},)";
  launch("adam", 505, 1);
  auto t = parseKineto("t.json", forwardPass(forwardSeq + events));
  ASSERT_TRUE(bool(t)) << llvm::toString(t.takeError());
  auto r = tensorParallelRoles(*t);
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  EXPECT_EQ(r->backward, 4u);
  EXPECT_EQ(r->unmatchedBackward, 1u);
  auto roles = rolesByName(*t, *r);
  EXPECT_EQ(roles.at("gemm_column"), TpRole::Column); // the forward pass as before
  EXPECT_EQ(roles.at("softmax"), TpRole::Sharded);
  EXPECT_EQ(roles.at("layernorm_backward"), TpRole::Replicated);
  EXPECT_EQ(roles.at("row_input_grad"), TpRole::Grad);
  EXPECT_EQ(roles.at("row_weight_grad"), TpRole::Grad);
  EXPECT_EQ(roles.at("softmax_backward"), TpRole::Sharded);
  EXPECT_EQ(roles.at("column_input_grad"), TpRole::Grad);
  EXPECT_EQ(roles.at("ncclDevKernel_AllReduce_Sum_f16_RING_LL"), TpRole::Collective);
  EXPECT_EQ(roles.at("column_other"), TpRole::Sharded);
  EXPECT_EQ(roles.at("orphan"), TpRole::Replicated);
  EXPECT_EQ(roles.at("adam"), TpRole::Sharded);
  for (size_t i = 0; i < t->device.size(); ++i) {
    llvm::StringRef name = t->name(t->device[i]);
    if (name.starts_with("row_")) EXPECT_EQ(r->shard[i], 4) << name.str(); // the row-parallel GEMM's K
    if (name.starts_with("column_input")) EXPECT_EQ(r->shard[i], 4) << name.str(); // the column-parallel GEMM's N
  }
}

// Sequence parallelism changes what is replicated: an error naming the
// file, as is a profile without Megatron-LM's linears.
TEST(TensorParallel, MegatronWithoutSequenceParallelismOnly) {
  auto sp = parseKineto(
      "s.json", forwardPass(R"({"ph": "X", "cat": "cpu_op", "name": "_GatherFromSequenceParallelRegion", "pid": 1, "tid": 1, "ts": 300, "dur": 5},)"));
  ASSERT_TRUE(bool(sp));
  auto r = tensorParallelRoles(*sp);
  ASSERT_FALSE(bool(r));
  EXPECT_NE(llvm::toString(r.takeError()).find("s.json: sequence parallelism"), std::string::npos);
  auto none = parseKineto("n.json", R"({"traceEvents": [{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": 10}]})");
  ASSERT_TRUE(bool(none));
  r = tensorParallelRoles(*none);
  ASSERT_FALSE(bool(r));
  EXPECT_NE(llvm::toString(r.takeError()).find("n.json: no Megatron-LM tensor-parallel linears"), std::string::npos);
}
