//===- SymmetryTest.cpp - Which pipeline units a fault sample simulates ---===//
#include "SimMemo.h"
#include "Symmetry.h"
#include "Workload.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace rapid;
using namespace rapid::run;

namespace {

/// TP 2 x PP 2 x DP 2 in that rank order over a switch of 4 (TP, PP) and a
/// ring of 2 (DP): each stage sends to the next and reduces its gradients
/// over DP, outside any block, so the pipeline level splits into one unit
/// per TP position: {0, 2, 4, 6} and {1, 3, 5, 7}. Other degrees alike.
ir::Program pipeline(int64_t tp = 2, int64_t dp = 2, int32_t pp = 2) {
  ir::Program p;
  p.layout.tp = tp, p.layout.pp = pp, p.layout.dp = dp;
  p.layout.rankOrder = {ir::Group::TP, ir::Group::PP, ir::Group::DP};
  for (int32_t s = 0; s <= pp; ++s) p.layout.chunkStart.push_back(s);
  for (int32_t s = 0; s < pp; ++s) {
    ir::Graph g;
    g.stage = s;
    ir::Op block;
    block.kind = ir::OpKind::Block;
    block.layer = s, block.micro = 1;
    g.add(block);
    for (int32_t peer : {s - 1, s + 1}) {
      if (peer < 0 || peer >= pp) continue;
      ir::Op p2p;
      p2p.kind = peer > s ? ir::OpKind::Send : ir::OpKind::Recv;
      p2p.peer = peer, p2p.micro = 1;
      g.add(p2p);
    }
    ir::Op grads;
    grads.kind = ir::OpKind::AllReduce;
    grads.group = ir::Group::DP;
    g.add(grads);
    p.stages.push_back(g);
  }
  return p;
}

/// A switch of `a` ranks (or a ring, with `ringFirst`) then a ring of `b`.
net::Topology network(int a = 4, int b = 2, bool ringFirst = false) {
  net::NetworkSpec n;
  net::DimSpec first;
  first.kind = ringFirst ? net::DimKind::Ring : net::DimKind::Switch, first.shape = {a};
  net::DimSpec ring;
  ring.kind = net::DimKind::Ring, ring.shape = {b};
  first.bandwidth = ring.bandwidth = BytesPerSecond(100e9);
  n.dims = {first, ring};
  return net::Topology(n);
}

/// The id of `rank`'s first link out in dimension `dim`.
uint32_t linkOut(const net::Topology &topo, uint32_t rank, int dim) {
  for (const uint32_t *l = topo.outBegin(rank); l != topo.outEnd(rank); ++l)
    if (topo.links()[*l].dim == dim) return *l;
  return net::kNoLink;
}

using Sets = std::vector<std::vector<int64_t>>;

Sets unitsOf(const ir::Program &p, const net::Topology &topo, const std::vector<uint32_t> &faulted,
             const RankBlockTimes &own) {
  std::optional<PipelineClasses> c = pipelineClasses(p, topo, faulted, own);
  return c ? c->units : Sets{{-1}};
}

/// PP 4 then DP 4 over a switch of 2 and a second dimension of 8 (a switch,
/// or a ring): stage 1 sits on a node's second port and stage 2 on the next
/// node's first, so their sends cross both dimensions; each DP group holds
/// one port of every other node.
ir::Program crossingPipeline() { return pipeline(/*tp=*/1, /*dp=*/4, /*pp=*/4); }

TEST(Reduce, SendsAcrossTwoDimensionsRunEveryRankReplayingDataParallel) {
  auto spec = [](net::DimKind second) {
    net::NetworkSpec n;
    net::DimSpec a, b;
    a.kind = net::DimKind::Switch, a.shape = {2};
    b.kind = second, b.shape = {8};
    n.dims = {a, b};
    return n;
  };
  Reduction r = reduce(crossingPipeline(), spec(net::DimKind::Switch), false);
  EXPECT_EQ(r.pipeline.size(), 16u); // neither one rank a stage nor one replica is exact
  EXPECT_EQ(r.replay, run::Reduction::Replay::DataParallel);          // the DP collectives alone are replayed
  // On a ring of nodes a DP group is not alone (its lines carry the sends):
  // every rank runs every collective.
  EXPECT_TRUE(reduce(crossingPipeline(), spec(net::DimKind::Ring), false).pipeline.empty());
}

/// TP 2 x PP 2 on a 2 x 2 grid (TP along its first axis, PP its second), DP 2
/// on a switch: the pipeline's sends vary the grid's second axis only.
net::NetworkSpec gridThenSwitch(net::DimKind grid) {
  net::NetworkSpec n;
  net::DimSpec a, b;
  a.kind = grid, a.shape = {2, 2};
  b.kind = net::DimKind::Switch, b.shape = {2};
  n.dims = {a, b};
  return n;
}

TEST(Reduce, PipelineSlabCutsAGridAlongAnAxis) {
  // A torus routes axis by axis: the ranks at TP position 0 use links the
  // others never take, and simulate every collective.
  Reduction r = reduce(pipeline(), gridThenSwitch(net::DimKind::Torus2D), false);
  EXPECT_EQ(r.pipeline, (std::vector<int64_t>{0, 2, 4, 6}));
  EXPECT_EQ(r.replay, Reduction::Replay::None);
  // A king mesh also routes diagonally: no slab cuts it, and the first
  // replica runs instead, its DP reductions replayed on the switch.
  Reduction king = reduce(pipeline(), gridThenSwitch(net::DimKind::KingMesh2D), false);
  EXPECT_EQ(king.pipeline, (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(king.replay, Reduction::Replay::DataParallel);
}

TEST(PipelineClasses, UnitsAlikeRunOnce) {
  EXPECT_EQ(unitsOf(pipeline(), network(), {}, {}), (Sets{{0, 2, 4, 6}}));
}

TEST(PipelineClasses, OwnBlockTimesMakeAUnitOfItsOwn) {
  RankBlockTimes own{{3, {{BlockKey{1, false, 0}, 2e-3}}}};
  EXPECT_EQ(unitsOf(pipeline(), network(), {}, own), (Sets{{0, 2, 4, 6}, {1, 3, 5, 7}}));
  // The same times in the same places of both units: one kind again.
  own[2] = own[3];
  EXPECT_EQ(unitsOf(pipeline(), network(), {}, own), (Sets{{0, 2, 4, 6}}));
}

TEST(PipelineClasses, AUnitWithAFaultedLinkRuns) {
  net::Topology topo = network();
  EXPECT_EQ(unitsOf(pipeline(), topo, {linkOut(topo, 5, 1)}, {}), (Sets{{0, 2, 4, 6}, {1, 3, 5, 7}}));
  EXPECT_EQ(unitsOf(pipeline(), topo, {linkOut(topo, 0, 1)}, {}), (Sets{{0, 2, 4, 6}, {1, 3, 5, 7}}));
  // A link only the other unit's traffic takes does not reach this one.
  EXPECT_EQ(unitsOf(pipeline(), topo, {linkOut(topo, 0, 0)}, {}), (Sets{{0, 2, 4, 6}, {1, 3, 5, 7}}));
}

TEST(PipelineClasses, GroupsAcrossDimensionsOnPrivatePorts) {
  // DP 4 after TP 2 and PP 2 over a switch of 8 and a ring of 2: a DP group
  // takes both dimensions, but each TP position's traffic its own links.
  EXPECT_EQ(unitsOf(pipeline(2, 4), network(8, 2), {}, {}), (Sets{{0, 2, 4, 6, 8, 10, 12, 14}}));
}

TEST(PipelineClasses, NoSplitWhereUnitsShareLinks) {
  // On a ring of 4 the DP pair {0, 2} passes 1's links, which {1, 3} takes.
  ir::Program p = pipeline();
  p.layout.rankOrder = {ir::Group::TP, ir::Group::DP, ir::Group::PP};
  EXPECT_EQ(unitsOf(p, network(4, 2, /*ringFirst=*/true), {}, {}), (Sets{{-1}}));
  // One unit only (TP 1): nothing to split.
  EXPECT_EQ(unitsOf(pipeline(1, 2), network(2, 2), {}, {}), (Sets{{-1}}));
}

/// The layer blocks of pipeline(): one TP all-reduce in each stage's layer.
ir::Program withBlocks() {
  ir::Program p = pipeline();
  for (ir::Graph &g : p.stages) {
    ir::Op ar;
    ar.kind = ir::OpKind::AllReduce;
    ar.group = ir::Group::TP;
    ar.layer = g.stage, ar.micro = 0;
    g.add(ar);
  }
  return p;
}

TEST(FaultedProbe, OnlyTheUnitsAFaultReaches) {
  net::Topology topo = network();
  // Rank 1's switch port: TP group {0, 1}'s traffic takes it, {2, 3}'s not.
  EXPECT_EQ(faultedProbe(withBlocks(), topo, {linkOut(topo, 1, 0)}), (std::vector<int64_t>{0, 1}));
  // No block talks over the ring.
  EXPECT_EQ(faultedProbe(withBlocks(), topo, {linkOut(topo, 5, 1)}), std::vector<int64_t>{});
  // TP pairs on a ring of 4 in TP, DP, PP order: {0, 1} and {2, 3} ring apart.
  ir::Program p = withBlocks();
  p.layout.rankOrder = {ir::Group::TP, ir::Group::DP, ir::Group::PP};
  net::Topology ring = network(4, 2, /*ringFirst=*/true);
  EXPECT_EQ(faultedProbe(p, ring, {linkOut(ring, 0, 0)}), (std::vector<int64_t>{0, 1}));
  // With TP 4 every block of a stage shares the ring: units of one stage each.
  p = withBlocks();
  p.layout.tp = 4, p.layout.dp = 1;
  EXPECT_EQ(faultedProbe(p, ring, {linkOut(ring, 0, 0)}), (std::vector<int64_t>{0, 1, 2, 3}));
}


/// One stage, TP 2 x DP 2 in that order over `net`: microbatch 0's backward
/// of layers 1 and 0 lowered whole (a GEMM and a TP all-reduce each), the
/// tail microbatch 1 as blocks, each followed by its DP gradient bucket.
/// An op's dependencies as a vector, to compare with a list.
std::vector<uint32_t> depsOf(const ir::Op &op) { return {op.deps.begin(), op.deps.end()}; }

ir::Program tailed() {
  ir::Program p;
  p.layout.tp = 2, p.layout.dp = 2;
  p.layout.rankOrder = {ir::Group::TP, ir::Group::DP, ir::Group::PP};
  p.layout.chunkStart = {0, 2};
  ir::Graph g;
  auto op = [&](ir::OpKind kind, int32_t layer, int32_t micro, ir::Group group, std::vector<uint32_t> deps) {
    ir::Op o;
    o.kind = kind, o.layer = layer, o.micro = micro, o.group = group, o.phase = ir::Phase::Backward;
    o.deps.assign(deps.begin(), deps.end());
    return g.add(o);
  };
  uint32_t last = UINT32_MAX;
  for (int32_t layer : {1, 0}) {
    std::vector<uint32_t> after;
    if (last != UINT32_MAX) after.push_back(last);
    uint32_t gemm = op(ir::OpKind::Gemm, layer, 0, ir::Group::None, after);
    last = op(ir::OpKind::AllReduce, layer, 0, ir::Group::TP, {gemm});
  }
  uint32_t block = last;
  for (int32_t layer : {1, 0}) {
    block = op(ir::OpKind::Block, layer, 1, ir::Group::None, {block});
    op(ir::OpKind::ReduceScatter, layer, 1, ir::Group::DP, {block});
  }
  p.stages.push_back(g);
  return p;
}

/// ZeRO-3 over the CP group (dp 1): layers 0 and 1, forward for
/// microbatches 0 and 1, then microbatch 0's backward; each layer's gather
/// waits for the use two gathers back (SchedulePass), so microbatch 0's
/// backward gathers wait on microbatch 1's forward.
ir::Program gathered() {
  ir::Program p;
  p.layout.cp = 2;
  p.memory.zero = 3;
  p.layout.chunkStart = {0, 2};
  ir::Graph g;
  std::vector<uint32_t> uses;
  uint32_t last = UINT32_MAX;
  auto layer = [&](int32_t l, int32_t micro, ir::Phase phase) {
    ir::Op gather;
    gather.kind = ir::OpKind::AllGather, gather.group = ir::Group::DPCP;
    gather.layer = l, gather.micro = micro, gather.phase = phase;
    if (uses.size() >= 2) gather.deps = {uses[uses.size() - 2]};
    uint32_t gi = g.add(gather);
    ir::Op use;
    use.kind = ir::OpKind::Gemm, use.layer = l, use.micro = micro, use.phase = phase;
    use.deps = {gi};
    if (last != UINT32_MAX) use.deps.push_back(last);
    last = g.add(use);
    uses.push_back(last);
  };
  for (int32_t micro : {0, 1})
    for (int32_t l : {0, 1}) layer(l, micro, ir::Phase::Forward);
  for (int32_t l : {1, 0}) layer(l, 0, ir::Phase::Backward);
  p.stages.push_back(g);
  return p;
}

TEST(Probe, GathersWaitTwoUsesBackInTheProbesOrder) {
  ir::Program probe = probeProgram(gathered());
  const std::vector<ir::Op> &ops = probe.stages[0].ops;
  ASSERT_EQ(ops.size(), 8u); // microbatch 0: four gathers, four uses
  EXPECT_TRUE(ops[0].deps.empty());
  EXPECT_TRUE(ops[2].deps.empty());
  // The backward's gathers wait on the forward's uses of layers 0 and 1
  // (probe ops 1 and 3), not on microbatch 1's, which the probe lacks.
  EXPECT_EQ(ops[4].kind, ir::OpKind::AllGather);
  EXPECT_EQ(depsOf(ops[4]), std::vector<uint32_t>{1});
  EXPECT_EQ(depsOf(ops[6]), std::vector<uint32_t>{3});
  // The tail probe runs the backward's gathers beside its blocks.
  ir::Program tailProbe = tailProbeProgram(gathered());
  const std::vector<ir::Op> &tail = tailProbe.stages[0].ops;
  EXPECT_EQ(std::count_if(tail.begin(), tail.end(), [](const ir::Op &o) { return o.kind == ir::OpKind::AllGather; }),
            2);
}

TEST(TailProbe, BucketsFollowMicrobatchZerosBlocks) {
  ir::Program probe = tailProbeProgram(tailed());
  const std::vector<ir::Op> &ops = probe.stages[0].ops;
  ASSERT_EQ(ops.size(), 6u); // four ops of microbatch 0, two buckets
  EXPECT_EQ(ops[4].kind, ir::OpKind::ReduceScatter);
  EXPECT_EQ(depsOf(ops[4]), std::vector<uint32_t>{1}); // layer 1's last op
  EXPECT_EQ(depsOf(ops[5]), std::vector<uint32_t>{3}); // layer 0's
  EXPECT_EQ(tailMicros(tailed()), (std::vector<std::set<int32_t>>{{1}}));
}

TEST(TailProbe, OnlyWhereABucketPrecedesABlock) {
  EXPECT_TRUE(bucketsOverlapBlocks(tailProbeProgram(tailed())));
  // Without overlap the one bucket follows the whole backward: nothing to slow.
  ir::Program once = tailed();
  ir::Op &first = once.stages[0].ops[5]; // layer 1's bucket: no longer one
  first.kind = ir::OpKind::Gemm, first.group = ir::Group::None;
  EXPECT_FALSE(bucketsOverlapBlocks(tailProbeProgram(once)));
}

TEST(TailProbe, OnlyWhereBucketsShareADimension) {
  auto net = [](net::DimKind first) {
    net::NetworkSpec n;
    net::DimSpec a, b;
    a.kind = first, a.shape = {2};
    b.kind = net::DimKind::Ring, b.shape = {2};
    n.dims = {a, b};
    return n;
  };
  ir::Program probe = tailProbeProgram(tailed());
  // TP over the first dimension, DP over the second: no link in common.
  EXPECT_FALSE(bucketsMeetBlocks(probe, net(net::DimKind::Switch)));
  // TP and DP over one ring of 4.
  net::NetworkSpec one;
  net::DimSpec ring;
  ring.kind = net::DimKind::Ring, ring.shape = {4};
  one.dims = {ring};
  EXPECT_TRUE(bucketsMeetBlocks(probe, one));
}

} // namespace

namespace {

TEST(TailProbe, SettledDelaysFillTheLayersLeftOut) {
  // Layers 3, 2, 1, 0 of one kind; a probe of the first three (3, 2, 1).
  ir::Program probe;
  ir::Graph g;
  for (int32_t layer : {3, 2, 1}) {
    ir::Op op;
    op.layer = layer, op.micro = 0, op.phase = ir::Phase::Backward;
    g.add(op);
  }
  probe.stages.push_back(g);
  LayerCopies copies{{{0, 0}, {1, 0}, {2, 0}, {3, 0}}};
  BlockTimes times{{{BlockKey{0, true, 0}, 1.0}}};
  BlockTimes delays{{{BlockKey{3, true, 0}, 0.0}, {BlockKey{2, true, 0}, 0.2}, {BlockKey{1, true, 0}, 0.2}}};
  EXPECT_TRUE(settleTail(delays, probe, copies, times));
  EXPECT_EQ(delays[0].at(BlockKey{0, true, 0}), 0.2);
  // The last two apart by more than 1e-4 of the block: not settled.
  delays = BlockTimes{{{BlockKey{3, true, 0}, 0.0}, {BlockKey{2, true, 0}, 0.1}, {BlockKey{1, true, 0}, 0.2}}};
  EXPECT_FALSE(settleTail(delays, probe, copies, times));
}

} // namespace

namespace {

TEST(SimMemo, KeysSeeWhatASimulationReads) {
  ir::Program p = tailed();
  SimKey k = simKey(p, "net", "sys", true, true);
  EXPECT_EQ(k, simKey(tailed(), "net", "sys", true, true));
  EXPECT_NE(k, simKey(p, "net2", "sys", true, true));
  EXPECT_NE(k, simKey(p, "net", "sys2", true, true));
  EXPECT_NE(k, simKey(p, "net", "sys", false, true));
  ir::Program slower = tailed();
  slower.stages[0].ops[0].time = Seconds(1e-3);
  EXPECT_NE(k, simKey(slower, "net", "sys", true, true));
  ir::Program rewired = tailed();
  rewired.stages[0].ops[3].deps = {0};
  EXPECT_NE(k, simKey(rewired, "net", "sys", true, true));
  ir::Program reordered = tailed();
  reordered.layout.rankOrder = {ir::Group::DP, ir::Group::TP, ir::Group::PP};
  EXPECT_NE(k, simKey(reordered, "net", "sys", true, true));
  SimMemo<int> memo;
  memo.insert(k, 7);
  EXPECT_EQ(memo.find(k), 7);
  EXPECT_EQ(memo.find(simKey(slower, "net", "sys", true, true)), std::nullopt);
}

} // namespace

namespace {

// Every rank of a stage shares the stage's program; its groups and pipeline
// peers come from its own tables, and a rank with block times of its own
// gets a copy of the program with them.
TEST(BuildSimulation, RanksOfAStageShareTheirProgram) {
  ExperimentPoint point;
  point.experiment = "e";
  ir::Program prog = pipeline(); // rank = tp + 2 pp + 4 dp
  llvm::Expected<Simulation> sim = buildSimulation(prog, point);
  ASSERT_TRUE(bool(sim)) << llvm::toString(sim.takeError());
  const std::vector<trace::RankGraph> &w = sim->workload.ranks;
  EXPECT_EQ(w[0].body, w[5].body); // stage 0
  EXPECT_EQ(w[2].body, w[7].body); // stage 1
  EXPECT_NE(w[0].body, w[2].body);
  const trace::TraceNode &send = w[5].nodes()[1], &recv = w[7].nodes()[1];
  EXPECT_EQ(w[5].src(send), 5);
  EXPECT_EQ(w[5].dst(send), 7);
  EXPECT_EQ(w[7].src(recv), 5);
  EXPECT_EQ(w[7].dst(recv), 7);
  auto dpGroup = [&](int r) { return w[size_t(r)].group(w[size_t(r)].nodes()[2]); };
  EXPECT_EQ(dpGroup(0), dpGroup(4));
  EXPECT_NE(dpGroup(0), dpGroup(1));
  EXPECT_NE(dpGroup(0), dpGroup(2));

  RankBlockTimes own{{4, {{BlockKey{0, false, 0}, 1e-3}}}};
  llvm::Expected<Simulation> faulted = buildSimulation(prog, point, nullptr, &own);
  ASSERT_TRUE(bool(faulted)) << llvm::toString(faulted.takeError());
  const std::vector<trace::RankGraph> &f = faulted->workload.ranks;
  EXPECT_NE(f[4].body, f[0].body);
  EXPECT_EQ(f[0].body, f[1].body);
  EXPECT_EQ(f[4].nodes()[0].rapidTimeNs, 1000000);
  EXPECT_EQ(f[0].nodes()[0].rapidTimeNs, 1);
}

} // namespace
