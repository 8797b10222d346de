//===- TensorParallelTest.cpp - Which profiled work a TP degree shards ----===//

#include "rapid/Profile/TensorParallel.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fmt/format.h>
#include <map>

using namespace rapid::profile;

namespace {

/// Kineto events of one step as the profiler writes them, each call's
/// kernel with the next correlation id.
struct Events {
  std::string text;
  int corr = 0;

  void op(const std::string &name, int tid, int ts, int dur, const std::string &args = "") {
    text += fmt::format(R"({{"ph": "X", "cat": "cpu_op", "name": "{}", "pid": 1, "tid": {}, "ts": {}, "dur": {}{}}},)",
                        name, tid, ts, dur, args.empty() ? "" : ", \"args\": {" + args + "}");
  }
  /// A forward op autograd numbered, or (`backward`) its evaluate_function.
  void node(const std::string &name, int tid, int seq, int ts, int dur, bool backward = false) {
    op(backward ? "autograd::engine::evaluate_function: " + name : name, tid, ts, dur,
       fmt::format(R"("Sequence number": {}, "Fwd thread id": 0)", seq));
  }
  void mm(int tid, int ts, int m, int k, int n) {
    op("aten::mm", tid, ts, 8,
       fmt::format(R"("Input Dims": [[{}, {}], [{}, {}]], "Input type": ["c10::Half", "c10::Half"])", m, k, k, n));
  }
  void launch(const char *kernel, int tid, int ts, int stream = 7, const char *cat = "kernel") {
    ++corr;
    text += fmt::format(R"({{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": {}, "ts": {}, "dur": 1, "args": {{"correlation": {}}}}},)",
                        tid, ts, corr);
    text += fmt::format(R"({{"ph": "X", "cat": "{}", "name": "{}", "pid": 0, "tid": {}, "ts": {}, "dur": 3, "args": {{"correlation": {}, "stream": {}}}}},)",
                        cat, kernel, stream, ts + 2, corr, stream);
  }
};

/// One forward pass in Megatron-LM's pattern on host thread 1: a
/// column-parallel linear (a GEMM and a memset of its output), the work on
/// its output, a row-parallel linear and its all-reduce, a norm, the output
/// layer, a copy before the loss, the vocabulary-parallel loss and a mean
/// after it. `extra` adds events.
std::string forwardPass(const std::string &extra = "") {
  Events e;
  e.node("LinearWithGradAccumulationAndAsyncCommunication", 1, 10, 10, 20);
  e.mm(1, 12, 8, 16, 4);
  e.launch("Memset (Device)", 1, 13, 7, "gpu_memset");
  e.launch("gemm_column", 1, 15);
  e.launch("softmax", 1, 40);
  e.node("LinearWithGradAccumulationAndAsyncCommunication", 1, 12, 60, 20);
  e.mm(1, 62, 8, 4, 16);
  e.launch("gemm_row", 1, 64);
  e.op("_ReduceFromModelParallelRegion", 1, 85, 10);
  e.launch("ncclDevKernel_AllReduce_Sum_f16_RING_LL", 1, 87, 9);
  e.launch("layernorm", 1, 100);
  e.op("LinearWithGradAccumulationAndAsyncCommunication", 1, 120, 20);
  e.mm(1, 122, 8, 16, 32);
  e.launch("gemm_head", 1, 124);
  e.launch("copy", 1, 150);
  e.op("_VocabParallelCrossEntropy", 1, 160, 30);
  e.launch("cross_entropy", 1, 165);
  e.launch("mean", 1, 200);
  return R"({"traceEvents": [)" + e.text + extra +
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
// stays replicated. The next microbatch's embeddings reduce across the
// ranks after the loss: that does not make the output layer row-parallel.
TEST(TensorParallel, OutputLayerBeforeTheNextMicrobatch) {
  auto t = parseKineto("t.json", forwardPass(R"({"ph": "X", "cat": "cpu_op", "name": "_ReduceFromModelParallelRegion", "pid": 1, "tid": 1, "ts": 300, "dur": 5},)"
                                             R"({"ph": "X", "cat": "cpu_op", "name": "LinearWithGradAccumulationAndAsyncCommunication", "pid": 1, "tid": 1, "ts": 400, "dur": 5},)"));
  ASSERT_TRUE(bool(t)) << llvm::toString(t.takeError());
  auto r = tensorParallelRoles(*t);
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  EXPECT_EQ(r->columns, 3u);
  EXPECT_EQ(r->rows, 1u);
  auto roles = rolesByName(*t, *r);
  EXPECT_EQ(roles.at("gemm_head"), TpRole::Column);
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
  Events e;
  e.corr = 100; // after forwardPass's
  e.node("ScaledSoftmax", 1, 11, 38, 5);
  e.node("aten::native_layer_norm", 1, 13, 98, 5);
  e.node("NativeLayerNormBackward0", 2, 13, 300, 10, true);
  e.launch("layernorm_backward", 2, 302);
  e.node("LinearWithGradAccumulationAndAsyncCommunicationBackward", 2, 12, 320, 20, true);
  e.mm(2, 321, 8, 16, 4);
  e.launch("row_input_grad", 2, 322);
  e.mm(2, 331, 4, 8, 16);
  e.launch("row_weight_grad", 2, 332);
  e.node("ScaledSoftmaxBackward", 2, 11, 350, 10, true);
  e.launch("softmax_backward", 2, 352);
  e.node("LinearWithGradAccumulationAndAsyncCommunicationBackward", 2, 10, 370, 25, true);
  e.mm(2, 371, 8, 4, 16);
  e.launch("column_input_grad", 2, 372);
  e.launch("ncclDevKernel_AllReduce_Sum_f16_RING_LL", 2, 380, 9);
  e.launch("column_other", 2, 390);
  e.node("UnknownBackward", 2, 99, 400, 5, true);
  e.launch("orphan", 2, 401);
  e.text += R"({"ph": "X", "cat": "user_annotation", "name": "Optimizer.step#FusedAdam.step", "pid": 1, "tid": 1, "ts": 500, "dur": 20},)";
  e.launch("adam", 1, 505);
  auto t = parseKineto("t.json", forwardPass(e.text));
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
    if (name.starts_with("row_") || name.starts_with("column_input")) { // the row-parallel GEMM's K, the column's N
      EXPECT_EQ(r->shard[i], 4) << name.str();
    }
  }
}

// With sequence parallelism (the embeddings scattered along the sequence
// before the first linear) the work between the linears that would be
// replicated is on sequence shards, until a gather makes the sequence whole
// again; a reduce-scatter after a linear makes it row-parallel as an
// all-reduce does. A sequence-parallel region of another kind is an error
// naming the file, as is a profile without Megatron-LM's linears.
TEST(TensorParallel, SequenceParallelism) {
  auto op = [](const char *name, int ts) {
    return fmt::format(R"({{"ph": "X", "cat": "cpu_op", "name": "{}", "pid": 1, "tid": 1, "ts": {}, "dur": 2}},)", name, ts);
  };
  auto sp = parseKineto("s.json", forwardPass(op("_ScatterToSequenceParallelRegion", 5) +
                                              op("_GatherFromSequenceParallelRegion", 110)));
  ASSERT_TRUE(bool(sp)) << llvm::toString(sp.takeError());
  auto r = tensorParallelRoles(*sp);
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  EXPECT_TRUE(r->sequenceParallel);
  auto roles = rolesByName(*sp, *r);
  EXPECT_EQ(roles.at("layernorm"), TpRole::Sharded); // between the scatter and the gather
  EXPECT_EQ(roles.at("gemm_row"), TpRole::Row);
  EXPECT_EQ(roles.at("copy"), TpRole::Replicated); // after the gather
  EXPECT_EQ(roles.at("cross_entropy"), TpRole::Sharded);
  std::string text = forwardPass(op("_ScatterToSequenceParallelRegion", 5));
  text.replace(text.find("_ReduceFromModelParallelRegion"), strlen("_ReduceFromModelParallelRegion"),
               "_ReduceScatterToSequenceParallelRegion");
  auto scattered = parseKineto("r.json", text);
  ASSERT_TRUE(bool(scattered));
  r = tensorParallelRoles(*scattered);
  ASSERT_TRUE(bool(r));
  EXPECT_EQ(r->rows, 1u);
  roles = rolesByName(*scattered, *r);
  EXPECT_EQ(roles.at("gemm_row"), TpRole::Row);
  EXPECT_EQ(roles.at("copy"), TpRole::Sharded);
  EXPECT_EQ(roles.at("mean"), TpRole::Sharded);
  auto other = parseKineto("o.json", forwardPass(op("_SplitToSequenceParallelRegion", 300)));
  ASSERT_TRUE(bool(other));
  r = tensorParallelRoles(*other);
  ASSERT_FALSE(bool(r));
  EXPECT_NE(llvm::toString(r.takeError()).find("o.json: a sequence-parallel region of another kind"), std::string::npos);
  auto none = parseKineto("n.json", R"({"traceEvents": [{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": 10}]})");
  ASSERT_TRUE(bool(none));
  r = tensorParallelRoles(*none);
  ASSERT_FALSE(bool(r));
  EXPECT_NE(llvm::toString(r.takeError()).find("n.json: no Megatron-LM tensor-parallel linears"), std::string::npos);
}
