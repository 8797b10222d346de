//===- HostTraceTest.cpp - Pairing Kineto operators with host nodes -------===//

#include "rapid/Profile/HostTrace.h"

#include <gtest/gtest.h>

using namespace rapid::profile;

namespace {

llvm::json::Value parse(llvm::StringRef text) {
  auto v = llvm::json::parse(text);
  EXPECT_TRUE(bool(v)) << (v ? "" : llvm::toString(v.takeError()));
  return v ? std::move(*v) : llvm::json::Value(nullptr);
}

/// A Kineto operator event of process 7.
std::string op(const char *name, int tid, int ts, int dur) {
  return "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"" + std::string(name) + "\", \"pid\": 7, \"tid\": " +
         std::to_string(tid) + ", \"ts\": " + std::to_string(ts) + ", \"dur\": " + std::to_string(dur) + "}";
}

} // namespace

// Two Kineto threads meet the host threads they share most operators with,
// whatever the ids; on each, a name only one side has is skipped, and the
// parent of two events starting together (the longer) comes first.
TEST(HostTrace, PairsThreadsAndSkipsWhatOneSideLacks) {
  llvm::json::Value host = parse(R"json({"schema": "1.0.1", "pid": 7, "nodes": [
    {"name": "thread", "id": 1},
    {"name": "aten::linear", "id": 2, "rf_id": 10, "tid": 1},
    {"name": "aten::mm", "id": 3, "rf_id": 11, "tid": 1, "inputs": [[1, 2, 0, 8, 2, "cuda:0"], [3, 4, 0, 8, 2, "cuda:0"]],
     "input_shapes": [[2, 4], [4, 2]], "input_types": ["Tensor(c10::BFloat16)", "Tensor(c10::BFloat16)"]},
    {"name": "aten::relu", "id": 4, "rf_id": 12, "tid": 1},
    {"name": "MulBackward0", "id": 5, "rf_id": 500, "tid": 2},
    {"name": "aten::mul", "id": 6, "rf_id": 501, "tid": 2}]})json");
  auto h = readHostTrace("et.json", *host.getAsObject());
  ASSERT_TRUE(bool(h)) << llvm::toString(h.takeError());
  EXPECT_EQ(h->nodes.size(), 6u);
  // Kineto: the autograd thread (tid 20) listed first, an annotation the
  // host trace lacks on the main thread (tid 10), aten::linear and aten::mm
  // starting together.
  llvm::json::Value kineto = parse("{\"traceEvents\": [" + op("MulBackward0", 20, 50, 9) + "," +
                                   op("aten::mul", 20, 51, 2) + "," + op("aten::mm", 10, 5, 3) + "," +
                                   op("## forward ##", 10, 4, 30) + "," + op("aten::linear", 10, 5, 8) + "," +
                                   op("aten::relu", 10, 14, 1) + "]}");
  HostLink score = linkHostTrace(*h, *kineto.getAsObject(), /*fill=*/false);
  EXPECT_EQ(score.operators, 6u);
  EXPECT_EQ(score.nodes, 5u); // the thread node has no rf_id
  EXPECT_EQ(score.linked, 5u);
  EXPECT_EQ(score.threads, 2u);
  EXPECT_EQ(score.filled, 0u);
  HostLink link = linkHostTrace(*h, *kineto.getAsObject(), /*fill=*/true);
  EXPECT_EQ(link.filled, 1u); // aten::mm: the only shaped operator
  const llvm::json::Object *mm = (*kineto.getAsObject()->getArray("traceEvents"))[2].getAsObject();
  const llvm::json::Object *args = mm->getObject("args");
  ASSERT_NE(args, nullptr);
  EXPECT_EQ(*args->getArray("Input type"), llvm::json::Array({"c10::BFloat16", "c10::BFloat16"}));
  EXPECT_EQ(*args->getArray("Input Dims"), llvm::json::Array({llvm::json::Array({2, 4}), llvm::json::Array({4, 2})}));
}

// Operators of another process are not paired.
TEST(HostTrace, OtherProcessPairsNothing) {
  llvm::json::Value host = parse(R"({"schema": "1.0.1", "pid": 8, "nodes": [{"name": "aten::mm", "id": 1, "rf_id": 1}]})");
  auto h = readHostTrace("et.json", *host.getAsObject());
  ASSERT_TRUE(bool(h));
  llvm::json::Value kineto = parse("{\"traceEvents\": [" + op("aten::mm", 1, 0, 1) + "]}");
  HostLink l = linkHostTrace(*h, *kineto.getAsObject(), /*fill=*/true);
  EXPECT_EQ(l.operators, 0u);
  EXPECT_EQ(l.linked, 0u);
}
