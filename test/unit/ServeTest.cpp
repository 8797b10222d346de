//===- ServeTest.cpp - The serving scheduler on steps of known cost -------===//
//
// Every step costs 10 ms here, whatever it runs, so each expected time is
// a count of steps: what a policy schedules is visible in the latencies and
// in the shapes it asks the cost of.
//===----------------------------------------------------------------------===//
#include "rapid/Serve/Serve.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace rapid;
using namespace rapid::serve;

namespace {

constexpr double kStep = 0.01;

struct Recorder {
  std::vector<StepShape> shapes;
  StepCost cost() {
    return [this](const StepShape &s) -> llvm::Expected<double> {
      shapes.push_back(s);
      return kStep;
    };
  }
};

Engine engine(ServeScheduler s, int64_t blocks = 1000) {
  Engine e;
  e.scheduler = s;
  e.kvBlocks = blocks;
  return e;
}

Result run(const std::vector<Request> &reqs, const Engine &e, Recorder &rec) {
  llvm::Expected<Result> r = simulate(reqs, e, rec.cost());
  if (!r) ADD_FAILURE() << llvm::toString(r.takeError());
  return r ? std::move(*r) : Result{};
}

TEST(Serve, OneRequestIsAPrefillStepThenADecodeStepPerToken) {
  Recorder rec;
  Result r = run({{0, 0, 100, 5}}, engine(ServeScheduler::Chunked), rec);
  ASSERT_EQ(r.requests.size(), 1u);
  EXPECT_DOUBLE_EQ(r.requests[0].firstToken, kStep);
  EXPECT_DOUBLE_EQ(r.requests[0].finish, 5 * kStep);
  EXPECT_DOUBLE_EQ(r.ttft.p50, kStep);
  EXPECT_DOUBLE_EQ(r.tpot.mean, kStep);
  EXPECT_NEAR(r.itl.p50, kStep, kStep * 1e-3); // a histogram bin's middle
  ASSERT_EQ(rec.shapes.size(), 5u);
  EXPECT_EQ(rec.shapes[0].tokens, 100);
  ASSERT_EQ(rec.shapes[0].prefill.size(), 1u);
  EXPECT_EQ(rec.shapes[1].decodeSeqs, 1);
  EXPECT_EQ(rec.shapes[1].decodeKv, 101); // the prompt and the token it computes
  EXPECT_EQ(rec.shapes[4].decodeKv, 104);
}

TEST(Serve, ChunkedPrefillSplitsALongPromptByTheBudget) {
  Recorder rec;
  Result r = run({{0, 0, 5000, 2}}, engine(ServeScheduler::Chunked), rec);
  ASSERT_GE(rec.shapes.size(), 3u);
  EXPECT_EQ(rec.shapes[0].prefill[0].q, 2048);
  EXPECT_EQ(rec.shapes[1].prefill[0].context, 2048);
  EXPECT_EQ(rec.shapes[2].prefill[0].q, 5000 - 4096);
  EXPECT_EQ(rec.shapes[2].sampled, 1);
  EXPECT_EQ(rec.shapes[1].sampled, 0);
  EXPECT_DOUBLE_EQ(r.requests[0].firstToken, 3 * kStep);
}

TEST(Serve, ChunkedStepsMixDecodesWithANewPrefill) {
  Recorder rec;
  run({{0, 0, 10, 4}, {1, 0.015, 3000, 1}}, engine(ServeScheduler::Chunked), rec);
  // Step 2 (t = 0.02) decodes request 0 and prefills 2047 tokens of request 1.
  ASSERT_GE(rec.shapes.size(), 3u);
  EXPECT_EQ(rec.shapes[2].decodeSeqs, 1);
  ASSERT_EQ(rec.shapes[2].prefill.size(), 1u);
  EXPECT_EQ(rec.shapes[2].prefill[0].q, 2047);
  EXPECT_EQ(rec.shapes[2].tokens, 2048);
}

TEST(Serve, ContinuousBatchingRunsAPrefillAloneAndPausesDecodes) {
  Recorder rec;
  Result r = run({{0, 0, 10, 4}, {1, 0.015, 3000, 1}}, engine(ServeScheduler::Continuous), rec);
  ASSERT_GE(rec.shapes.size(), 3u);
  EXPECT_EQ(rec.shapes[2].decodeSeqs, 0); // the whole 3000-token prompt, alone
  EXPECT_EQ(rec.shapes[2].tokens, 3000);
  EXPECT_DOUBLE_EQ(r.requests[1].firstToken, 3 * kStep);
  EXPECT_DOUBLE_EQ(r.requests[0].finish, 5 * kStep); // one step later than alone
}

TEST(Serve, StaticBatchingAdmitsOnlyWhenTheBatchIsDone) {
  Recorder rec;
  Result r = run({{0, 0, 10, 4}, {1, 0.015, 10, 2}}, engine(ServeScheduler::Static), rec);
  EXPECT_DOUBLE_EQ(r.requests[0].finish, 4 * kStep);
  EXPECT_DOUBLE_EQ(r.requests[1].firstToken, 5 * kStep);
  EXPECT_DOUBLE_EQ(r.requests[1].finish, 6 * kStep);
}

TEST(Serve, RequestsArrivingTogetherShareTheirFirstStep) {
  Recorder rec;
  Result r = run({{0, 0, 10, 2}, {1, 0, 20, 2}}, engine(ServeScheduler::Chunked), rec);
  EXPECT_EQ(rec.shapes[0].prefill.size(), 2u);
  EXPECT_EQ(rec.shapes[0].sampled, 2);
  EXPECT_DOUBLE_EQ(r.requests[1].firstToken, kStep);
}

TEST(Serve, AFullCachePreemptsTheLatestRequestWhichRecomputesItsContext) {
  Recorder rec;
  // Blocks of 16 tokens; 4 blocks: both 30-token prompts fit (2 blocks each),
  // but their growth past 32 tokens does not.
  Engine e = engine(ServeScheduler::Chunked, 4);
  Result r = run({{0, 0, 30, 10}, {1, 0, 30, 10}}, e, rec);
  EXPECT_GE(r.preemptions, 1);
  EXPECT_EQ(r.requests[1].preemptions, r.preemptions); // the later one goes
  EXPECT_LT(r.requests[0].finish, r.requests[1].finish);
  bool recomputed = false; // a prefill of the prompt and the tokens it had generated
  for (const StepShape &s : rec.shapes)
    for (const Chunk &c : s.prefill) recomputed |= c.context == 0 && c.q > 30;
  EXPECT_TRUE(recomputed);
  EXPECT_DOUBLE_EQ(r.kvPeak, 1.0);
}

TEST(Serve, AReservingEngineWaitsForRoomForTheWholeOutputAndNeverPreempts) {
  Recorder rec;
  // The same two requests and cache as above: one request's 40 tokens take
  // 3 of the 4 blocks, so the second waits for the first to finish.
  Engine e = engine(ServeScheduler::Chunked, 4);
  e.admission = ServeAdmission::Reserve;
  Result r = run({{0, 0, 30, 10}, {1, 0, 30, 10}}, e, rec);
  EXPECT_EQ(r.preemptions, 0);
  EXPECT_DOUBLE_EQ(r.requests[0].finish, 10 * kStep);
  EXPECT_DOUBLE_EQ(r.requests[1].firstToken, 11 * kStep);
  EXPECT_DOUBLE_EQ(r.requests[1].finish, 20 * kStep);
  for (const StepShape &s : rec.shapes) EXPECT_EQ(s.prefill.size() + size_t(s.decodeSeqs), 1u);
}

TEST(Serve, ASwappedRequestGetsItsCacheBackInsteadOfRecomputingIt) {
  Recorder rec;
  Engine e = engine(ServeScheduler::Chunked, 4);
  e.preemption = ServePreemption::Swap;
  e.swapBlocks = 10;
  Result r = run({{0, 0, 30, 10}, {1, 0, 30, 10}}, e, rec);
  EXPECT_EQ(r.preemptions, 1);
  int64_t moved = 0;
  for (const StepShape &s : rec.shapes) {
    moved += s.swapBlocks;
    for (const Chunk &c : s.prefill) EXPECT_FALSE(c.context == 0 && c.q > 30);
  }
  EXPECT_EQ(moved, 4); // its two blocks out, then back in
  EXPECT_EQ(r.requests[1].output, 10);
  // Without room in host memory, the same preemption recomputes.
  Recorder full;
  e.swapBlocks = 1;
  run({{0, 0, 30, 10}, {1, 0, 30, 10}}, e, full);
  bool recomputed = false;
  for (const StepShape &s : full.shapes)
    for (const Chunk &c : s.prefill) recomputed |= c.context == 0 && c.q > 30;
  EXPECT_TRUE(recomputed);
}

// Block size 16, a 40-token shared prefix: 32 tokens in full blocks. The
// first request computes its 100-token prompt; the second, sent after the
// first step, prefills only 68 tokens attending over the 32 cached, and
// holds two blocks fewer of its own.
TEST(Serve, APrefixCachedByTheFirstRequestIsSkippedByTheNext) {
  Recorder rec;
  Engine e = engine(ServeScheduler::Chunked);
  e.sharedPrefix = 40;
  Result r = run({{0, 0, 100, 3}, {1, 0.015, 100, 3}}, e, rec);
  ASSERT_GE(rec.shapes.size(), 3u);
  EXPECT_EQ(rec.shapes[0].tokens, 100);
  ASSERT_EQ(rec.shapes[2].prefill.size(), 1u); // the second step is the first's decode alone
  EXPECT_EQ(rec.shapes[2].prefill[0].q, 68);
  EXPECT_EQ(rec.shapes[2].prefill[0].context, 32);
  EXPECT_DOUBLE_EQ(r.prefixHitRate, 32.0 / 200.0);
  e.prefixCaching = false; // the same requests compute every prompt token
  Recorder off;
  Result r2 = run({{0, 0, 100, 3}, {1, 0.015, 100, 3}}, e, off);
  EXPECT_EQ(off.shapes[2].prefill[0].q, 100);
  EXPECT_DOUBLE_EQ(r2.prefixHitRate, 0);
}

// Two prefixes: a request hits only the replica's cache of its own. The
// second request begins with the other prefix and computes all of it; the
// third, with the first's, starts from the first's blocks.
TEST(Serve, EachPrefixIsCachedOnItsOwn) {
  Recorder rec;
  Engine e = engine(ServeScheduler::Chunked);
  e.sharedPrefix = 40;
  e.prefixes = 2;
  Request a{0, 0, 100, 3}, b{1, 0.015, 100, 3}, c{2, 0.045, 100, 3};
  b.prefix = 1;
  Result r = run({a, b, c}, e, rec);
  std::vector<std::pair<int64_t, int64_t>> chunks; // (q, context) in order
  for (const StepShape &s : rec.shapes)
    for (const Chunk &ch : s.prefill) chunks.emplace_back(ch.q, ch.context);
  std::vector<std::pair<int64_t, int64_t>> want{{100, 0}, {100, 0}, {68, 32}}; // a, b (uncached), c
  EXPECT_EQ(chunks, want);
  EXPECT_DOUBLE_EQ(r.prefixHitRate, 32.0 / 300.0);
}

// A prompt cached whole still computes its last token: 32 tokens, 2 blocks,
// the hit is one block.
TEST(Serve, AWhollyCachedPromptStillComputesItsLastBlock) {
  Recorder rec;
  Engine e = engine(ServeScheduler::Chunked);
  e.sharedPrefix = 32;
  run({{0, 0, 32, 2}, {1, 0.015, 32, 2}}, e, rec);
  ASSERT_GE(rec.shapes.size(), 3u);
  ASSERT_EQ(rec.shapes[2].prefill.size(), 1u);
  EXPECT_EQ(rec.shapes[2].prefill[0].q, 16);
  EXPECT_EQ(rec.shapes[2].prefill[0].context, 16);
}

TEST(Serve, ARequestLargerThanTheCacheIsAnError) {
  Recorder rec;
  llvm::Expected<Result> r = simulate({{7, 0, 100, 100}}, engine(ServeScheduler::Chunked, 4), rec.cost());
  ASSERT_FALSE(r);
  EXPECT_EQ(llvm::toString(r.takeError()),
            "request 7 needs 13 KV-cache blocks (100 prompt and 100 output tokens, 16 a block) but a replica holds 4");
}

TEST(Serve, ConcurrencyOneSendsTheNextRequestWhenOneFinishes) {
  Recorder rec;
  Engine e = engine(ServeScheduler::Chunked);
  e.concurrency = 1;
  Result r = run({{0, 0, 10, 3}, {1, 0, 10, 3}}, e, rec);
  EXPECT_DOUBLE_EQ(r.requests[1].sent, 3 * kStep);
  EXPECT_DOUBLE_EQ(r.requests[1].finish - r.requests[1].sent, 3 * kStep);
  EXPECT_DOUBLE_EQ(r.ttft.p50, kStep); // measured from when it was sent
}

TEST(Serve, ASharedFrontEndTakesRequestsInTurnAndHoldsTheEngine) {
  std::vector<Request> burst{{0, 0, 10, 2}, {1, 0, 10, 2}, {2, 0, 10, 2}};
  Engine e = engine(ServeScheduler::Chunked);
  e.requestOverhead = 0.001;
  Recorder apart;
  Result separate = run(burst, e, apart); // all three past the front end at 1 ms
  EXPECT_DOUBLE_EQ(separate.requests[2].firstToken, 0.001 + kStep);
  e.frontend = Frontend::Shared;
  Recorder together;
  Result shared = run(burst, e, together); // one at a time; the engine waits for the last
  EXPECT_DOUBLE_EQ(shared.requests[0].firstToken, 0.003 + kStep);
  EXPECT_DOUBLE_EQ(shared.requests[2].firstToken, 0.003 + kStep);
  EXPECT_EQ(together.shapes[0].prefill.size(), 3u);
  EXPECT_DOUBLE_EQ(shared.ttft.p50, 0.003 + kStep); // counted from when the client sent it
}

TEST(Serve, ASerialFrontEndSpreadsABurstWithoutHoldingTheEngine) {
  std::vector<Request> burst{{0, 0, 10, 2}, {1, 0, 10, 2}, {2, 0, 10, 2}};
  Engine e = engine(ServeScheduler::Chunked);
  e.requestOverhead = 0.001;
  e.frontend = Frontend::Serial;
  Recorder rec;
  Result r = run(burst, e, rec); // ready at 1, 2, 3 ms; the first step starts at 1 ms with one prompt
  EXPECT_DOUBLE_EQ(r.requests[0].firstToken, 0.001 + kStep);
  EXPECT_DOUBLE_EQ(r.requests[1].firstToken, 0.001 + 2 * kStep); // joins the next step
  EXPECT_DOUBLE_EQ(r.requests[2].firstToken, 0.001 + 2 * kStep);
  EXPECT_EQ(rec.shapes[0].prefill.size(), 1u);
  EXPECT_EQ(rec.shapes[1].prefill.size(), 2u);
}

TEST(Serve, RoundRobinAlternatesReplicasThatRunInParallel) {
  Recorder rec;
  Engine e = engine(ServeScheduler::Chunked);
  e.replicas = 2;
  Result r = run({{0, 0, 10, 2}, {1, 0, 10, 2}, {2, 0, 10, 2}}, e, rec);
  EXPECT_EQ(r.requests[0].replica, 0);
  EXPECT_EQ(r.requests[1].replica, 1);
  EXPECT_EQ(r.requests[2].replica, 0);
  EXPECT_DOUBLE_EQ(r.requests[1].finish, 2 * kStep);
  EXPECT_DOUBLE_EQ(r.duration, 2 * kStep);
  EXPECT_DOUBLE_EQ(r.requestsPerSecond, 3 / (2 * kStep));
}

TEST(Serve, APipelineRunsAnotherBatchOnceItsFirstStageIsFree) {
  Recorder rec;
  Engine e = engine(ServeScheduler::Chunked);
  e.pipeline = 2; // each stage takes half a step
  Result r = run({{0, 0, 10, 3}, {1, 0.001, 10, 3}}, e, rec);
  EXPECT_DOUBLE_EQ(r.requests[1].firstToken, 0.015); // started at 0.005, beside request 0's step
  EXPECT_DOUBLE_EQ(r.requests[0].finish, 3 * kStep);
  EXPECT_DOUBLE_EQ(r.requests[1].finish, 0.035);
  for (const StepShape &s : rec.shapes) EXPECT_EQ(s.prefill.size() + size_t(s.decodeSeqs), 1u); // one request a batch
}

TEST(Serve, ReplicasInLockStepStartTogetherAndEndWithTheSlowest) {
  Engine e = engine(ServeScheduler::Chunked);
  e.replicas = 2;
  e.lockstep = 2; // one expert-parallel group
  std::vector<StepShape> shapes;
  // A step with a prompt chunk takes two units, a decode or an idle
  // replica's empty batch one.
  StepCost cost = [&](const StepShape &s) -> llvm::Expected<double> {
    shapes.push_back(s);
    return s.prefill.empty() ? kStep : 2 * kStep;
  };
  llvm::Expected<Result> res = simulate({{0, 0, 10, 2}, {1, 0.001, 20, 2}}, e, cost);
  ASSERT_TRUE(bool(res)) << llvm::toString(res.takeError());
  const Result &r = *res;
  EXPECT_EQ(r.requests[1].replica, 1);
  EXPECT_DOUBLE_EQ(r.requests[0].firstToken, 2 * kStep);
  // Request 1 arrived during the group's first step: replica 1 ran an
  // empty batch in it and starts with the next one.
  EXPECT_DOUBLE_EQ(r.requests[1].firstToken, 4 * kStep);
  EXPECT_DOUBLE_EQ(r.requests[0].finish, 4 * kStep); // its decode waited for request 1's prefill
  EXPECT_DOUBLE_EQ(r.requests[1].finish, 5 * kStep);
  EXPECT_EQ(r.steps, 4); // replicas' steps with work: 1 + 2 + 1
  ASSERT_EQ(shapes.size(), 6u); // three group steps of two replicas
  EXPECT_EQ(shapes[1].tokens, 0);
  EXPECT_EQ(shapes[1].groupTokens, 10);
  EXPECT_EQ(shapes[2].tokens, 1); // request 0's decode ...
  EXPECT_EQ(shapes[2].groupTokens, 20); // ... beside request 1's prompt
  EXPECT_EQ(shapes[3].groupTokens, 20);
}

TEST(Serve, APrefillReplicaMovesEachCacheToADecodeReplicaOneAtATime) {
  Recorder rec;
  Engine e = engine(ServeScheduler::Chunked);
  e.replicas = 2;
  e.prefillReplicas = 1;
  // 1 ms fixed, 0.1 ms a token of the prompt holding both ends' links.
  std::vector<std::pair<int64_t, int64_t>> asked;
  e.transfer = [&](int64_t from, int64_t to) -> llvm::Expected<std::pair<double, double>> {
    asked.push_back({from, to});
    return std::pair{0.001, 0.0001};
  };
  Result r = run({{0, 0, 10, 3}, {1, 0, 10, 3}}, e, rec);
  EXPECT_EQ(asked, (std::vector<std::pair<int64_t, int64_t>>{{0, 1}})); // once per pair
  for (const RequestRecord &q : r.requests) {
    EXPECT_EQ(q.replica, 0);
    EXPECT_EQ(q.decodeReplica, 1);
    EXPECT_DOUBLE_EQ(q.firstToken, kStep); // both prompts in one step
  }
  EXPECT_DOUBLE_EQ(r.requests[0].transfer, 0.002);
  EXPECT_DOUBLE_EQ(r.requests[1].transfer, 0.003); // behind the first on the links
  // Request 0 decodes alone from 12 ms; request 1, landed at 13 ms, joins
  // the next step.
  EXPECT_DOUBLE_EQ(r.requests[0].finish, 0.012 + 2 * kStep);
  EXPECT_DOUBLE_EQ(r.requests[1].finish, 0.012 + 3 * kStep);
  ASSERT_EQ(rec.shapes.size(), 4u);
  EXPECT_EQ(rec.shapes[0].prefill.size(), 2u);
  EXPECT_EQ(rec.shapes[1].decodeSeqs, 1);
  EXPECT_EQ(rec.shapes[1].decodeKv, 11); // the moved prompt and its first token
  EXPECT_EQ(rec.shapes[2].decodeSeqs, 2);
  EXPECT_DOUBLE_EQ(r.transfer.p50, 0.0025);
}

TEST(Serve, AReservingPrefillReplicaHoldsOnlyThePromptsItsDecodeReplicaTheWhole) {
  Recorder rec;
  Engine e = engine(ServeScheduler::Chunked, 2); // two 16-token blocks a replica
  e.admission = ServeAdmission::Reserve;
  e.replicas = 2;
  e.prefillReplicas = 1;
  e.transfer = [](int64_t, int64_t) -> llvm::Expected<std::pair<double, double>> { return std::pair{0.0, 0.0}; };
  Result r = run({{0, 0, 10, 20}, {1, 0, 10, 20}}, e, rec); // 30 tokens each: two blocks
  EXPECT_EQ(rec.shapes[0].prefill.size(), 2u);             // a block per prompt on the prefill replica
  EXPECT_EQ(r.preemptions, 0);
  for (const StepShape &s : rec.shapes) EXPECT_LE(s.decodeSeqs, 1); // one whole request at a time decodes
  EXPECT_LT(r.requests[0].finish, r.requests[1].finish);
}

TEST(Serve, SpeculativeDecodingEmitsTheAcceptedDraftsAndTheTargetsToken) {
  Recorder rec;
  Engine e = engine(ServeScheduler::Chunked);
  e.speculative = 3;
  e.acceptance = 1; // every draft accepted: four tokens a step
  Result r = run({{0, 0, 10, 9}}, e, rec);
  EXPECT_DOUBLE_EQ(r.requests[0].firstToken, kStep);
  EXPECT_DOUBLE_EQ(r.requests[0].finish, 3 * kStep); // 1 + 4 + 4 tokens
  ASSERT_EQ(rec.shapes.size(), 3u);
  const StepShape &s = rec.shapes[1];
  EXPECT_EQ(s.tokens, 4); // the last token and three drafts, verified together
  EXPECT_EQ(s.decodeSeqs, 1);
  EXPECT_EQ(s.decodeKv, 14);
  EXPECT_EQ(s.sampled, 4);
  EXPECT_EQ(s.draftSeqs, 1);
  EXPECT_EQ(s.draftPasses, 3);
  EXPECT_NEAR(r.itl.p50, kStep, kStep * 1e-3); // the four arrive as one chunk
  EXPECT_DOUBLE_EQ(r.tpot.mean, 2 * kStep / 8);

  // None accepted: one token a step, each step still verifying its drafts
  // (at most as many as the answer has room for).
  Recorder none;
  e.acceptance = 0;
  r = run({{0, 0, 10, 4}}, e, none);
  EXPECT_DOUBLE_EQ(r.requests[0].finish, 4 * kStep);
  ASSERT_EQ(none.shapes.size(), 4u);
  EXPECT_EQ(none.shapes[1].tokens, 3); // two drafts: three tokens left to generate
  EXPECT_EQ(none.shapes[2].tokens, 2);
  EXPECT_EQ(none.shapes[3].tokens, 1);
}

TEST(Serve, SpeculativeStepsEmitTheExpectedTokensOnAverage) {
  Recorder rec;
  Engine e = engine(ServeScheduler::Chunked, 100000);
  e.speculative = 4;
  e.acceptance = 0.7;
  Result r = run({{0, 0, 10, 20001}}, e, rec);
  // Leviathan et al.: (1 - a^(k+1)) / (1 - a) = 2.7731 tokens a step.
  double perStep = 20000.0 / double(r.steps - 1);
  EXPECT_NEAR(perStep, (1 - std::pow(0.7, 5)) / 0.3, 0.03);
}

TEST(Serve, PercentilesInterpolateAsNumpyDoes) {
  std::vector<double> v{4, 1, 3, 2};
  Summary s = summarize(v);
  EXPECT_DOUBLE_EQ(s.mean, 2.5);
  EXPECT_DOUBLE_EQ(s.p50, 2.5);
  EXPECT_DOUBLE_EQ(s.p90, 3.7);
  EXPECT_DOUBLE_EQ(s.p99, 3.97);
}

std::string writeTemp(const std::string &name, const std::string &text) {
  llvm::SmallString<128> path;
  llvm::sys::fs::createTemporaryFile("serve", name, path);
  std::error_code ec;
  llvm::raw_fd_ostream(path, ec) << text;
  return std::string(path);
}

TEST(Serve, ATraceIsReadInArrivalOrderWithItsColumnsInAnyOrder) {
  std::string csv = writeTemp("csv", "output,arrival_s,extra,prompt\n8,0,x,100\n4,0.5,y,200\n");
  llvm::Expected<std::vector<Request>> r = readTrace(csv, 10);
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[1].prompt, 200);
  EXPECT_EQ((*r)[1].output, 4);
  EXPECT_DOUBLE_EQ((*r)[1].arrival, 0.5);
  std::string late = writeTemp("csv", "arrival_s,prompt,output\n1,10,10\n0.5,10,10\n");
  llvm::Expected<std::vector<Request>> bad = readTrace(late, 10);
  ASSERT_FALSE(bad);
  EXPECT_EQ(llvm::toString(bad.takeError()),
            late + ":3: arrival_s 0.5 is earlier than the line before (1): a trace is in arrival order");
}

TEST(Serve, DrawnRequestsFollowTheSeed) {
  ServingSpec s;
  s.requests = 50;
  s.rate = Hertz(10);
  s.prompt = {Distribution::Kind::Uniform, 100, 200};
  s.output = {Distribution::Kind::Constant, 7, 7};
  s.seed = 3;
  llvm::Expected<std::vector<Request>> a = makeRequests(s), b = makeRequests(s);
  ASSERT_TRUE(a && b);
  double last = 0;
  for (size_t i = 0; i < a->size(); ++i) {
    EXPECT_EQ((*a)[i].prompt, (*b)[i].prompt);
    EXPECT_GE((*a)[i].prompt, 100);
    EXPECT_LE((*a)[i].prompt, 200);
    EXPECT_EQ((*a)[i].output, 7);
    EXPECT_GE((*a)[i].arrival, last);
    last = (*a)[i].arrival;
  }
  EXPECT_GT(last, 2.0); // 49 gaps of 0.1 s on average
  EXPECT_LT(last, 10.0);
}

} // namespace
