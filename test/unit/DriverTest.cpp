//===- DriverTest.cpp - Results, their views and the journal reader -------===//
#include "rapid/Driver/Parallel.h"
#include "rapid/Driver/Results.h"
#include "rapid/Support/Json.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/Threading.h"

#include <atomic>
#include <chrono>
#include <gtest/gtest.h>
#include <map>
#include <thread>

using namespace rapid;

namespace {

PointResult trainingResult() {
  PointResult r;
  r.experiment = "train";
  r.sweep = "shapes";
  r.point = {{"tp", Value::number(4)}, {"gpu", Value::symbol("a100")}};
  r.label = "tp=4 gpu=a100";
  r.workload = Workload::Training;
  r.gpus = 16;
  r.memory = PointResult::Memory{73839304704, 85899345920};
  PointResult::Training t;
  t.stepTime = 4.257, t.mfu = 0.582, t.tokensPerSecond = 61575.5;
  t.computeTime = 3.1, t.exposedComm = 1e-05, t.bubble = 0.1, t.idle = 1.057;
  t.layerForward = 0.0125, t.layerBackward = 0.025;
  t.exposedByGroup.tp = 4e-06, t.exposedByGroup.dp = 6e-06;
  t.mode = "hierarchical", t.simulatedRanks = 4, t.replayed = "all";
  r.training = t;
  FaultStudy f;
  f.name = "flaky";
  f.baseline = 4.257;
  f.times = {4.3, 4.9, 4.4};
  r.faultStudies = {f};
  return r;
}

/// A result written, read back and written again, with the swept values put
/// back in the order the sweep gives them (as a resumed sweep does).
std::string roundTrip(const PointResult &r) {
  llvm::Expected<PointResult> back = readResult(resultJson(r));
  if (!back) return "error: " + llvm::toString(back.takeError());
  back->point = r.point;
  return resultJson(*back);
}

TEST(DriverTest, TrainingJsonKeepsKeyOrderAndNumberForms) {
  EXPECT_EQ(resultJson(trainingResult()),
            R"({"experiment":"train","sweep":"shapes","point":{"tp":4,"gpu":"a100"},"label":"tp=4 gpu=a100",)"
            R"("workload":"training","feasible":true,"reason":"","gpus":16,)"
            R"("memory":{"peak_bytes":73839304704,"capacity_bytes":85899345920},"step_time_s":4.257,"mfu":0.582,)"
            R"("tokens_per_s":61575.5,"breakdown":{"compute_s":3.1,"exposed_communication_s":1e-05,)"
            R"("pipeline_bubble_s":0.1,"idle_s":1.057,"exposed_by_group_s":{"tp":4e-06,"cp":0,"pp":0,"dp":6e-06,"ep":0},)"
            R"("layer_forward_s":0.0125,"layer_backward_s":0.025},"simulation":{"mode":"hierarchical","ranks":4,"replayed":"all"},)"
            R"("fault_studies":[{"name":"flaky","samples":3,"baseline_s":4.257,)"
            R"("mean_s":4.533333333333333,"p50_s":4.4,"p90_s":4.9,"max_s":4.9,)"
            R"("mean_slowdown":1.0649126928196697,"times_s":[4.3,4.9,4.4]}]})");
}

TEST(DriverTest, ReaderIsTheInverseOfTheWriter) {
  PointResult train = trainingResult();
  EXPECT_EQ(roundTrip(train), resultJson(train));

  PointResult infer;
  infer.experiment = "serve";
  infer.workload = Workload::Inference;
  infer.gpus = 8;
  infer.memory = PointResult::Memory{1, 2};
  infer.inference = PointResult::Inference{0.1 + 0.2, 1.0 / 3, 12.5, 1e6};
  EXPECT_EQ(roundTrip(infer), resultJson(infer));

  PointResult serving;
  serving.experiment = "chat";
  serving.workload = Workload::Serving;
  serving.gpus = 8;
  serving.memory = PointResult::Memory{3, 4};
  PointResult::Serving s;
  s.requests = 1000, s.steps = 12345, s.preemptions = 7, s.kvBlocks = 28027;
  s.duration = 99.5, s.requestsPerSecond = 1000 / 99.5, s.outputTokensPerSecond = 1.0 / 7;
  s.kvPeak = 0.25, s.kvMean = 0.1 + 0.2;
  s.ttft = {0.03, 0.025, 0.04, 0.1 / 3};
  s.itl = {0.005, 0.0051, 0.006, 0.02};
  s.tpot = {0.0055, 0.0054, 0.0062, 0.007};
  s.e2e = {0.7, 0.65, 0.9, 1.2};
  serving.serving = s;
  EXPECT_EQ(roundTrip(serving), resultJson(serving));
  EXPECT_NE(resultJson(serving).find(R"("ttft_s":{"mean":0.03,"p50":0.025,"p90":0.04,"p99":0.03333333333333333})"),
            std::string::npos);

  PointResult pruned;
  pruned.experiment = "big";
  pruned.sweep = "s";
  pruned.label = "tp=3";
  pruned.point = {{"tp", Value::number(3)}};
  pruned.feasible = false;
  pruned.reason = "tp*cp*pp*dp = 3 but network \"n\" has 32 GPUs\\";
  EXPECT_EQ(roundTrip(pruned), resultJson(pruned));
}

TEST(DriverTest, SweptValuesOfEveryKindRoundTrip) {
  PointResult r;
  Value list;
  list.kind = Value::Kind::List;
  list.items = {Value::number(1), Value::number(0.5)};
  Value dist;
  dist.kind = Value::Kind::Call;
  dist.s = "normal";
  dist.items = {Value::number(0.5), Value::number(0.1)};
  Value text;
  text.kind = Value::Kind::String;
  text.s = "a\"b\\c\nd";
  r.point = {{"on", Value::boolean(true)}, {"sizes", list}, {"derate", dist}, {"note", text}};
  std::string json = resultJson(r);
  EXPECT_NE(json.find(R"("point":{"on":true,"sizes":[1,0.5],"derate":{"dist":"normal","args":[0.5,0.1]},)"
                      R"("note":"a\"b\\c\nd"})"),
            std::string::npos)
      << json;
  EXPECT_EQ(roundTrip(r), json);
}

TEST(DriverTest, ReaderRejectsWhatTheWriterNeverWrites) {
  std::string good = resultJson(trainingResult());
  EXPECT_TRUE(bool(readResult(good)));
  auto error = [](llvm::StringRef line) {
    llvm::Expected<PointResult> r = readResult(line);
    return r ? std::string("read") : llvm::toString(r.takeError());
  };
  EXPECT_NE(error(good.substr(0, good.size() / 2)), "read"); // cut short by a kill
  std::string noBreakdown = good;
  noBreakdown.replace(noBreakdown.find(",\"breakdown\""), noBreakdown.find(",\"fault_studies\"") -
                                                             noBreakdown.find(",\"breakdown\""), "");
  EXPECT_NE(error(noBreakdown).find("breakdown"), std::string::npos) << error(noBreakdown);
  std::string badWorkload = good;
  badWorkload.replace(badWorkload.find("\"training\""), 10, "\"teaching\"");
  EXPECT_NE(error(badWorkload).find("workload"), std::string::npos) << error(badWorkload);
  EXPECT_NE(error("[1,2]"), "read");
}

TEST(DriverTest, TableAndCsvRows) {
  PointResult r = trainingResult();
  EXPECT_EQ(csvRow(r), R"("train","shapes","tp=4 gpu=a100","training",true,"",16,73839304704,85899345920,)"
                       R"(4.257,0.582,61575.5,3.1,1e-05,0.1,1.057,,,,,,,,,,,,,,)");
  std::string row;
  llvm::raw_string_ostream os(row);
  printResultRow(r, os);
  EXPECT_EQ(row, "train                tp=4 gpu=a100                     16  68.77 GiB               4.257 s  58.2% "
                 "      61576  ok\n"
                 "    faults flaky: 3 samples, slowdown mean 1.065x, p50 1.034x, p90 1.151x, worst 1.151x\n");
  r.training.reset();
  r.memory.reset();
  r.feasible = false;
  r.reason = "say \"no\"";
  EXPECT_EQ(csvRow(r), R"("train","shapes","tp=4 gpu=a100","training",false,"say 'no'",16,,,,,,,,,,,,,,,,,,,,,,,)");
  // A search's layout left out: its bound, and the layout that beat it.
  r = trainingResult();
  r.training.reset();
  r.faultStudies.clear();
  r.bound = 4.5;
  r.dominatedBy = "tp=8";
  EXPECT_EQ(csvRow(r), R"("train","shapes","tp=4 gpu=a100","training",true,"",16,73839304704,85899345920,)"
                       R"(,,,,,,,,,,,,,,,,,,,4.5,"tp=8")");
  row.clear();
  printResultRow(r, os);
  EXPECT_EQ(row, "train                tp=4 gpu=a100                     16  68.77 GiB              >= 4.5 s      -"
                 "           -  skipped: tp=8 ran faster and no heavier\n");
}

TEST(DriverTest, NumberForms) {
  EXPECT_EQ(jsonNumberText(0.1), "0.1");
  EXPECT_EQ(jsonNumberText(4), "4");
  EXPECT_EQ(jsonNumberText(1e-5), "1e-05");
  EXPECT_EQ(jsonNumberText(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(jsonNumberText(2.5, JsonNumber::Whole), "2");
  EXPECT_EQ(jsonNumberText(1e20, JsonNumber::Whole), "100000000000000000000");
  EXPECT_EQ(jsonNumberText(1.1 * 1e15, JsonNumber::Stable), "1100000000000000");
  EXPECT_EQ(jsonNumberText(0.000483404123, JsonNumber::SixDigits), "0.000483404");
  EXPECT_EQ(jsonNumberText(3.16049, JsonNumber::FourDecimals), "3.1605");
  std::string out;
  llvm::raw_string_ostream os(out);
  llvm::json::OStream j(os);
  j.object([&] { writeNumber(j, "x", 0.1); });
  EXPECT_EQ(out, R"({"x":0.1})");
}

TEST(DriverTest, JobsAreClamped) {
  unsigned hardware = llvm::hardware_concurrency().compute_thread_count();
  EXPECT_EQ(clampJobs(100000, 2), 2u);
  EXPECT_EQ(clampJobs(100000, 1000000), 4 * hardware);
  EXPECT_EQ(clampJobs(0, 5), 1u);
  EXPECT_EQ(clampJobs(8, 0), 1u);
  EXPECT_EQ(clampJobs(3, 100), std::min(3u, 4 * hardware));
}

TEST(DriverTest, ParallelForFillsSlotsInOrder) {
  for (unsigned jobs : {1u, 2u, 7u, 100000u}) {
    std::vector<size_t> out(200);
    llvm::Error e = parallelFor(out.size(), jobs, [&](size_t i) {
      out[i] = i * i;
      return llvm::Error::success();
    });
    EXPECT_FALSE(bool(e));
    for (size_t i = 0; i < out.size(); ++i) ASSERT_EQ(out[i], i * i) << "jobs " << jobs;
  }
}

TEST(DriverTest, LowestFailingIndexWins) {
  // Task 3 fails last (it waits until the later failures are in), yet its
  // error is the one returned; every task still runs.
  for (unsigned jobs : {1u, 4u}) {
    std::atomic<int> ran{0}, laterFailures{0};
    llvm::Error e = parallelFor(64, jobs, [&](size_t i) -> llvm::Error {
      ++ran;
      if (i == 3) {
        for (int spin = 0; jobs > 1 && laterFailures < 2 && spin < 2000; ++spin)
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        return llvm::createStringError(std::errc::invalid_argument, "task 3");
      }
      if (i == 10 || i == 60) {
        ++laterFailures;
        return llvm::createStringError(std::errc::invalid_argument, "task %zu", i);
      }
      return llvm::Error::success();
    });
    EXPECT_EQ(llvm::toString(std::move(e)), "task 3") << "jobs " << jobs;
    EXPECT_EQ(ran, 64);
  }
}

// A task that throws (a bug) fails the run with a message, on one thread or
// many: a thread pool would otherwise drop the exception and the point's
// result with it.
TEST(DriverTest, AnExceptionBecomesAnError) {
  for (unsigned jobs : {1u, 2u}) {
    std::vector<int> out(8, 0);
    llvm::Error e = parallelFor(out.size(), jobs, [&](size_t i) -> llvm::Error {
      if (i == 5) (void)std::map<int, int>{}.at(1);
      out[i] = 1;
      return llvm::Error::success();
    });
    std::string msg = llvm::toString(std::move(e));
    EXPECT_NE(msg.find("internal error"), std::string::npos) << msg;
    EXPECT_EQ(out[4], 1);
  }
}

} // namespace
