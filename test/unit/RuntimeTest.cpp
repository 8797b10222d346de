//===- RuntimeTest.cpp - Unit tests for the runtime simulator -------------===//

#include "rapid/Collectives/GroupGrid.h"
#include "rapid/Collectives/Plan.h"
#include "rapid/Engine/Simulator.h"
#include "rapid/Engine/EventQueue.h"
#include "rapid/Network/Faults.h"
#include "rapid/Network/Network.h"
#include "rapid/Network/Routing.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <thread>

using namespace rapid;
using namespace rapid::net;

namespace {

DimSpec dim(DimKind kind, std::vector<int> shape, double gbps = 1, double latencyNs = 100) {
  DimSpec d;
  d.kind = kind;
  d.shape = std::move(shape);
  d.bandwidth = BytesPerSecond(gbps * 1e9);
  d.latency = Seconds(latencyNs * 1e-9);
  d.leafSize = d.size();
  return d;
}

size_t linkCount(std::vector<DimSpec> dims) { return Topology(NetworkSpec{std::move(dims)}).links().size(); }

std::vector<uint32_t> path(Router &router, const Topology &topo, int src, int dst) {
  auto r = router.route(src, dst);
  EXPECT_TRUE(bool(r));
  std::vector<uint32_t> nodes{uint32_t(src)};
  for (uint32_t hop = 0; hop < r->length; ++hop)
    nodes.push_back(topo.links()[router.link(*r, hop)].dst);
  return nodes;
}

} // namespace

TEST(EventQueue, OrdersByTimeThenInsertion) {
  engine::EventQueue q;
  q.push(50, 0, 1, 0);
  q.push(10, 0, 2, 0);
  q.push(50, 0, 3, 0);
  q.push(10, 0, 4, 0);
  q.push(0, 0, 5, 0);
  std::vector<uint32_t> order;
  while (!q.empty())
    order.push_back(q.pop().a);
  EXPECT_EQ(order, (std::vector<uint32_t>{5, 2, 4, 1, 3}));
  EXPECT_EQ(q.pushed(), 5u);
}

TEST(EventQueue, ManyEqualTimesStayFifo) {
  engine::EventQueue q;
  for (uint32_t i = 0; i < 1000; ++i)
    q.push(7, 0, i, 0);
  for (uint32_t i = 0; i < 1000; ++i)
    EXPECT_EQ(q.pop().a, i);
}

// Against a reference (a sort on time, then insertion), with pops between
// pushes: pushes to the time being drained, to earlier and later times, and
// times that come back after their bucket was recycled.
TEST(EventQueue, MatchesTimeThenInsertionOrderUnderInterleaving) {
  engine::EventQueue q;
  std::vector<std::pair<int64_t, uint32_t>> ref; // (time, id), kept sorted, stable
  uint64_t state = 12345;
  auto next = [&] { return state = state * 6364136223846793005ull + 1442695040888963407ull, uint32_t(state >> 33); };
  int64_t now = 0;
  uint32_t id = 0;
  for (int round = 0; round < 20000; ++round) {
    if (ref.empty() || next() % 3 != 0) {
      int64_t t = now + int64_t(next() % 5); // few distinct times, often `now`
      q.push(t, 0, id, 0);
      auto at = std::upper_bound(ref.begin(), ref.end(), t, [](int64_t v, const auto &e) { return v < e.first; });
      ref.insert(at, {t, id++});
    } else {
      engine::Event e = q.pop();
      ASSERT_EQ(e.time, ref.front().first);
      ASSERT_EQ(e.a, ref.front().second);
      now = e.time;
      ref.erase(ref.begin());
    }
    ASSERT_EQ(q.size(), ref.size());
  }
}

TEST(Topology, LinkCountsPerKind) {
  EXPECT_EQ(linkCount({dim(DimKind::Ring, {8})}), 16u);
  EXPECT_EQ(linkCount({dim(DimKind::Ring, {2})}), 2u);
  EXPECT_EQ(linkCount({dim(DimKind::FullyConnected, {4})}), 12u);
  EXPECT_EQ(linkCount({dim(DimKind::Switch, {8})}), 16u);
  EXPECT_EQ(linkCount({dim(DimKind::Mesh, {8})}), 14u);
  EXPECT_EQ(linkCount({dim(DimKind::Torus2D, {4, 4})}), 64u);
  EXPECT_EQ(linkCount({dim(DimKind::Mesh2D, {4, 4})}), 48u);
  EXPECT_EQ(linkCount({dim(DimKind::KingMesh2D, {4, 4})}), 84u);
  EXPECT_EQ(linkCount({dim(DimKind::HyperCube, {8})}), 24u);
  EXPECT_EQ(linkCount({dim(DimKind::Torus3D, {2, 2, 2})}), 24u);
  EXPECT_EQ(linkCount({dim(DimKind::Ring, {4}), dim(DimKind::Ring, {2})}), 24u);
}

TEST(Topology, FatTreeTrunksAreOversubscribed) {
  DimSpec d = dim(DimKind::FatTree, {8}, 100);
  d.leafSize = 4;
  d.oversubscription = 2;
  Topology topo(NetworkSpec{{d}});
  // 8 rank links + 2 leaf trunks, both directions; 8 ranks + 2 leaves + spine.
  EXPECT_EQ(topo.links().size(), 20u);
  EXPECT_EQ(topo.numNodes(), 11);
  uint32_t trunk = topo.linkBetween(8, 10);
  ASSERT_NE(trunk, kNoLink);
  EXPECT_DOUBLE_EQ(topo.links()[trunk].bytesPerNs, 100.0 * 4 / 2);
}

TEST(Topology, CoordinatesDimensionZeroFastest) {
  Topology topo(NetworkSpec{{dim(DimKind::Ring, {4}), dim(DimKind::Switch, {3})}});
  EXPECT_EQ(topo.numRanks(), 12);
  EXPECT_EQ(topo.coord(7, 0), 3);
  EXPECT_EQ(topo.coord(7, 1), 1);
  EXPECT_EQ(topo.withCoord(7, 1, 2), 11);
  EXPECT_EQ(topo.lineOf(7, 0), 1);
  EXPECT_EQ(topo.lineOf(7, 1), 3);
}

TEST(Routing, RingTakesTheShorterWay) {
  Topology topo(NetworkSpec{{dim(DimKind::Ring, {8})}});
  Router router(topo);
  EXPECT_EQ(path(router, topo, 0, 3), (std::vector<uint32_t>{0, 1, 2, 3}));
  EXPECT_EQ(path(router, topo, 0, 6), (std::vector<uint32_t>{0, 7, 6}));
}

TEST(Routing, DimensionOrderOnTorusAndAcrossDimensions) {
  Topology torus(NetworkSpec{{dim(DimKind::Torus2D, {4, 4})}});
  Router r1(torus);
  // (0,0) -> (3,2): x wraps backwards one hop, then y forward two.
  EXPECT_EQ(path(r1, torus, 0, 11), (std::vector<uint32_t>{0, 3, 7, 11}));
  Topology two(NetworkSpec{{dim(DimKind::Ring, {4}), dim(DimKind::Switch, {2})}});
  Router r2(two);
  // Fix dimension 0 first (1 -> 2), then cross the switch (node 8 + line 2).
  EXPECT_EQ(path(r2, two, 1, 6), (std::vector<uint32_t>{1, 2, 10, 6}));
}

TEST(Routing, HypercubeAndKingMesh) {
  Topology cube(NetworkSpec{{dim(DimKind::HyperCube, {8})}});
  Router rc(cube);
  EXPECT_EQ(path(rc, cube, 0, 7), (std::vector<uint32_t>{0, 1, 3, 7}));
  Topology king(NetworkSpec{{dim(DimKind::KingMesh2D, {4, 4})}});
  Router rk(king);
  EXPECT_EQ(path(rk, king, 0, 15), (std::vector<uint32_t>{0, 5, 10, 15}));
}

TEST(Routing, HardFaultReroutesOrDisconnects) {
  Topology ring(NetworkSpec{{dim(DimKind::Ring, {4})}});
  ASSERT_FALSE(bool(applyFaults("f.json", {Fault{0, 1, true}}, ring)));
  Router router(ring);
  EXPECT_EQ(path(router, ring, 0, 1), (std::vector<uint32_t>{0, 3, 2, 1}));
  Topology mesh(NetworkSpec{{dim(DimKind::Mesh, {3})}});
  ASSERT_FALSE(bool(applyFaults("f.json", {Fault{1, 2, true}}, mesh)));
  Router cut(mesh);
  auto r = cut.route(0, 2);
  ASSERT_FALSE(bool(r));
  EXPECT_EQ(llvm::toString(r.takeError()),
            "ranks 0 and 2 must communicate but hard faults disconnect them");
}

TEST(Routing, SoftFaultDeratesBothDirections) {
  Topology ring(NetworkSpec{{dim(DimKind::Ring, {4}, 2)}});
  Fault f{0, 1, false, false, 0.25, 50000};
  ASSERT_FALSE(bool(applyFaults("f.json", {f}, ring)));
  for (auto [a, b] : {std::pair{0u, 1u}, std::pair{1u, 0u}}) {
    const Link &l = ring.links()[ring.linkBetween(a, b)];
    EXPECT_DOUBLE_EQ(l.bytesPerNs, 0.5);
    EXPECT_EQ(l.latencyPs, 150000);
  }
}

TEST(Plan, StepCountsAndBytes) {
  coll::AlgorithmTable ring;
  auto ar = coll::planCollective(trace::CollKind::AllReduce, 800, {{8}}, ~0u, 0, ring);
  EXPECT_EQ(ar.steps.size(), 14u);
  EXPECT_DOUBLE_EQ(ar.steps[0].bytes, 100);
  coll::AlgorithmTable hd;
  hd.perKind[0] = {coll::Algorithm::HalvingDoubling};
  auto h = coll::planCollective(trace::CollKind::AllReduce, 800, {{8}}, ~0u, 0, hd);
  ASSERT_EQ(h.steps.size(), 6u);
  EXPECT_DOUBLE_EQ(h.steps[0].bytes, 400);
  EXPECT_EQ(h.steps[0].mask, 4u);
  EXPECT_DOUBLE_EQ(h.steps[5].bytes, 400);
  // Two dimensions, the second left out by involved_dim.
  auto d0 = coll::planCollective(trace::CollKind::AllGather, 10, {{4}, {2}}, 0b01, 0, ring);
  EXPECT_EQ(d0.phases.size(), 1u);
  EXPECT_EQ(d0.steps.size(), 3u);
  // A 2-D torus dimension: one phase per axis, rings of 4 then 4.
  auto torus = coll::planCollective(trace::CollKind::ReduceScatter, 16, {{4, 4}}, ~0u, 0, ring);
  ASSERT_EQ(torus.phases.size(), 2u);
  EXPECT_EQ(torus.phases[1].axisStride, 4);
  EXPECT_EQ(torus.steps.size(), 6u);
  EXPECT_DOUBLE_EQ(torus.steps[3].bytes, 1);
  // A group of one needs no steps.
  EXPECT_TRUE(coll::planCollective(trace::CollKind::AllReduce, 8, {{4}}, ~0u, 1, ring).steps.empty());
}

TEST(Plan, NvlsIsOneStepOfBufferAndShareThroughTheSwitch) {
  // Each member's link carries B(1 + 1/p) each way: (p - 1) messages of
  // B(1 + 1/p)/(p - 1), reduced as they arrive, in one all-reduce phase.
  coll::AlgorithmTable nvls;
  nvls.perKind[0] = {coll::Algorithm::Nvls};
  auto ar = coll::planCollective(trace::CollKind::AllReduce, 800, {{8}}, ~0u, 0, nvls);
  ASSERT_EQ(ar.phases.size(), 1u);
  EXPECT_EQ(ar.phases[0].op, coll::PhaseOp::AllReduce);
  ASSERT_EQ(ar.steps.size(), 1u);
  EXPECT_EQ(ar.steps[0].pattern, coll::Pattern::All);
  EXPECT_EQ(ar.steps[0].expected, 7u);
  EXPECT_DOUBLE_EQ(ar.steps[0].bytes * 7, 900);
  EXPECT_TRUE(coll::reducesInput(ar, 0));
  EXPECT_STREQ(coll::algorithmName(coll::Algorithm::Nvls), "nvls");
  // Not a name a system file's implementation lists take: it needs the rate.
  coll::Algorithm a;
  EXPECT_FALSE(coll::parseAlgorithm("nvls", a));
}

TEST(Plan, PhasesKnowTheirQueueAndWhereTheEndpointWorks) {
  coll::AlgorithmTable ring;
  // Ring(4) x Ring(2): RS d0 (3 steps), RS d1 (1), AG d1 (1), AG d0 (3).
  auto ar = coll::planCollective(trace::CollKind::AllReduce, 800, {{4}, {2}}, ~0u, 0, ring);
  ASSERT_EQ(ar.steps.size(), 8u);
  std::vector<int> queues;
  for (const coll::Step &st : ar.steps)
    queues.push_back(ar.phases[st.phase].queue);
  EXPECT_EQ(queues, (std::vector<int>{0, 0, 0, 1, 1, 0, 0, 0}));
  // The turn from RS to AG in dimension 1 is one Astra-Sim all-reduce phase.
  std::vector<bool> opens, reduces;
  for (uint32_t s = 0; s < ar.steps.size(); ++s) {
    opens.push_back(coll::opensPhase(ar, s));
    reduces.push_back(coll::reducesInput(ar, s));
  }
  EXPECT_EQ(opens, (std::vector<bool>{true, false, false, true, false, true, false, false}));
  EXPECT_EQ(reduces, (std::vector<bool>{true, true, true, true, false, false, false, false}));
  // A group's rank list runs in dimension 0's queue, whichever it spans.
  auto group = coll::planCollective(trace::CollKind::AllGather, 800, {{4}, {2}}, 0b10, 2, ring);
  ASSERT_EQ(group.phases.size(), 1u);
  EXPECT_EQ(group.phases[0].queue, 0);
  // A tree reduces what its children send, not what its parent sends back.
  coll::AlgorithmTable dbt;
  dbt.perKind[0] = {coll::Algorithm::DoubleBinaryTree};
  auto tree = coll::planCollective(trace::CollKind::AllReduce, 800, {{4}}, ~0u, 0, dbt);
  ASSERT_EQ(tree.steps.size(), 3u);
  EXPECT_TRUE(coll::reducesInput(tree, 0));
  EXPECT_FALSE(coll::reducesInput(tree, 1));
}

TEST(Plan, DoubleBinaryTreesAreComplementary) {
  // For even p every position is internal in exactly one of the two trees.
  for (int p : {2, 4, 8, 16}) {
    for (int pos = 0; pos < p; ++pos) {
      int internal = 0;
      for (int tree = 0; tree < 2; ++tree)
        internal += coll::treeLinks(p, tree, pos).children[0] >= 0;
      EXPECT_EQ(internal, 1) << "p=" << p << " pos=" << pos;
    }
  }
  coll::TreeLinks root = coll::treeLinks(8, 1, 7);
  EXPECT_EQ(root.parent, -1);
  EXPECT_EQ(root.children[0], 6);
  EXPECT_EQ(root.children[1], 5);
}

namespace {

/// One all-reduce per rank, built in memory.
trace::Workload allReduceWorkload(int ranks, int64_t bytes) {
  trace::Workload w;
  for (int r = 0; r < ranks; ++r) {
    trace::RankGraph g;
    g.rank = r;
    trace::TraceNode n;
    n.kind = trace::NodeKind::Coll;
    n.commType = int64_t(trace::CollKind::AllReduce);
    n.commSize = bytes;
    g.own().nodes.push_back(n);
    w.ranks.push_back(std::move(g));
  }
  return w;
}

int64_t simulateRing(int ranks) {
  Topology topo(NetworkSpec{{dim(DimKind::Ring, {ranks})}});
  Network net(topo, NetMode::Congestion);
  trace::Workload w = allReduceWorkload(ranks, 4000);
  coll::CommGroups groups;
  engine::SimOptions opts;
  opts.system.splits = 1;
  auto res = engine::Simulator(w, net, groups, opts).run();
  return res ? res->totalNs : -1;
}

} // namespace

TEST(Simulator, ThousandsOfChunksWaitingForOneSlotHandOverInTurn) {
  // Ring(2) at 1 B/ns and 100 ns; 4096 chunks of 2 B, one at a time: each
  // is a 1 B reduce-scatter step and a 1 B all-gather step of 101 ns.
  Topology topo(NetworkSpec{{dim(DimKind::Ring, {2})}});
  Network net(topo, NetMode::Congestion);
  trace::Workload w = allReduceWorkload(2, 2 * 4096);
  coll::CommGroups groups;
  engine::SimOptions opts;
  opts.system.splits = 4096;
  opts.system.activeChunks = 1;
  auto res = engine::Simulator(w, net, groups, opts).run();
  ASSERT_TRUE(bool(res)) << llvm::toString(res.takeError());
  EXPECT_EQ(res->totalNs, 4096 * 2 * 101);
}

TEST(Simulator, AChunkFarBehindItsNeighbourCountsWhatArrivedEarly) {
  // Ring(16): rank 5 joins its all-reduce 1 ms late. Until then rank 4
  // runs ahead to step 14 of 30, sending rank 5 steps it will take long
  // after: messages beyond the per-chunk window of counters. Counters per
  // step gave the same: the closed form 2(p-1)/p S/B + 2(p-1) L after 1 ms.
  int ranks = 16;
  Topology topo(NetworkSpec{{dim(DimKind::Ring, {ranks})}});
  Network net(topo, NetMode::Congestion);
  trace::Workload w = allReduceWorkload(ranks, 16000);
  trace::GraphBuilder b("late.et", 5);
  trace::TraceNode late;
  late.kind = trace::NodeKind::Comp;
  late.id = 0, late.rapidTimeNs = 1000000;
  b.add(late, "late", {});
  trace::TraceNode ar = w.ranks[5].nodes()[0];
  ar.id = 1;
  b.add(ar, "allreduce", {0});
  llvm::Expected<trace::RankGraph> g = b.finish();
  ASSERT_TRUE(bool(g)) << llvm::toString(g.takeError());
  w.ranks[5] = std::move(*g);
  coll::CommGroups groups;
  engine::SimOptions opts;
  opts.system.splits = 1;
  auto res = engine::Simulator(w, net, groups, opts).run();
  ASSERT_TRUE(bool(res)) << llvm::toString(res.takeError());
  EXPECT_EQ(res->totalNs, 1000000 + 30000 + 3000); // the closed form of an idle ring, 1 ms on
}

TEST(Simulator, IndependentContextsRunInParallelThreads) {
  // Closed form on an idle ring: 2(p-1)/p * S/B + 2(p-1) L.
  int64_t expected4 = 6000 + 600, expected8 = 7000 + 1400;
  int64_t got[4] = {};
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&got, i] { got[i] = simulateRing(i % 2 ? 8 : 4); });
  for (auto &t : threads)
    t.join();
  EXPECT_EQ(got[0], expected4);
  EXPECT_EQ(got[1], expected8);
  EXPECT_EQ(got[2], expected4);
  EXPECT_EQ(got[3], expected8);
}

TEST(Network, CutThroughWaitsForTheTailOfASlowerUpstreamLink) {
  // Mesh 0 - 1 - 2 where 0->1 is derated to 0.5 B/ns: 1000 B take 2000 ns
  // there and cannot leave 1 before they have all arrived.
  Topology topo(NetworkSpec{{dim(DimKind::Mesh, {3})}});
  ASSERT_FALSE(bool(applyFaults("f.json", {Fault{0, 1, false, true, 0.5, 0}}, topo)));
  Network cut(topo, NetMode::Congestion, Switching::CutThrough);
  HopTimes a = cut.sendHop(0, topo.linkBetween(0, 1), 1000, 0);
  EXPECT_EQ(a.headPs, 100'000);
  EXPECT_EQ(a.tailPs, 2'100'000);
  HopTimes b = cut.sendHop(a.headPs, topo.linkBetween(1, 2), 1000, a.tailPs);
  EXPECT_EQ(b.headPs, 200'000);
  EXPECT_EQ(b.tailPs, 2'200'000);
  // The second link is busy for its own 1000 ns only: the tail is late, but
  // the link is free for other messages meanwhile.
  EXPECT_EQ(cut.stats()[topo.linkBetween(1, 2)].busyPs, 1'000'000);
  EXPECT_EQ(cut.stats()[topo.linkBetween(1, 2)].freeAtPs, 1'100'000);
  Network saf(topo, NetMode::Congestion, Switching::StoreAndForward);
  HopTimes c = saf.sendHop(0, topo.linkBetween(0, 1), 1000, 0);
  EXPECT_EQ(c.headPs, 2'100'000);
  EXPECT_EQ(saf.sendHop(c.headPs, topo.linkBetween(1, 2), 1000, c.tailPs).tailPs, 3'200'000);
}

TEST(Network, CutThroughPacketsDelayTheHeadAndTheLastPacketPerHop) {
  // The same mesh with 100 B packets: a hop passes the head on one packet
  // later (200 ns on the derated link, 100 ns on the next), and the last
  // packet, once at 1, still takes 100 ns to leave.
  DimSpec d = dim(DimKind::Mesh, {3});
  d.packet = Bytes(100);
  Topology topo(NetworkSpec{{d}});
  ASSERT_FALSE(bool(applyFaults("f.json", {Fault{0, 1, false, true, 0.5, 0}}, topo)));
  Network cut(topo, NetMode::Congestion, Switching::CutThrough);
  HopTimes a = cut.sendHop(0, topo.linkBetween(0, 1), 1000, 0);
  EXPECT_EQ(a.headPs, 300'000);
  EXPECT_EQ(a.tailPs, 2'100'000);
  HopTimes b = cut.sendHop(a.headPs, topo.linkBetween(1, 2), 1000, a.tailPs);
  EXPECT_EQ(b.headPs, 500'000);
  EXPECT_EQ(b.tailPs, 2'300'000);
  // Analytical mode times the idle route the same way.
  Network alphaBeta(topo, NetMode::Analytical, Switching::CutThrough);
  auto route = alphaBeta.router().route(0, 2);
  ASSERT_TRUE(bool(route));
  EXPECT_EQ(alphaBeta.sendAlphaBeta(0, *route, 1000), 2'300'000);
}

TEST(SystemConfig, WrittenJsonReadsBack) {
  engine::SystemConfig c;
  c.splits = 8;
  c.activeChunks = 2;
  c.algorithms.perKind[0] = {coll::Algorithm::Ring, coll::Algorithm::DoubleBinaryTree};
  c.algorithms.perKind[3] = {coll::Algorithm::Direct};
  c.endpointDelayNs = 10;
  c.sharedBus = true;
  c.reductionNsPer100B = 3;
  c.reduceMemBytesPerNs = 50;
  c.customAllReduce = {8e6, 16e6, 1e6, 5e5, 1500, 250, 60};
  auto back = engine::parseSystemConfig("<test>", engine::writeSystemConfigJson(c));
  ASSERT_TRUE(bool(back)) << llvm::toString(back.takeError());
  EXPECT_EQ(back->splits, 8);
  EXPECT_EQ(back->activeChunks, 2);
  EXPECT_EQ(back->algorithms.perKind[0], c.algorithms.perKind[0]);
  EXPECT_TRUE(back->algorithms.perKind[1].empty());
  EXPECT_EQ(back->algorithms.perKind[3], c.algorithms.perKind[3]);
  EXPECT_FALSE(back->roofline);
  EXPECT_EQ(back->endpointDelayNs, 10);
  EXPECT_TRUE(back->sharedBus);
  EXPECT_EQ(back->reductionNsPer100B, 3);
  EXPECT_DOUBLE_EQ(back->reduceMemBytesPerNs, 50);
  EXPECT_DOUBLE_EQ(back->customAllReduce.max, 8e6);
  EXPECT_DOUBLE_EQ(back->customAllReduce.maxTwoRanks, 16e6);
  EXPECT_DOUBLE_EQ(back->customAllReduce.oneShotFourRanks, 1e6);
  EXPECT_DOUBLE_EQ(back->customAllReduce.oneShot, 5e5);
  EXPECT_DOUBLE_EQ(back->customAllReduce.startNs, 1500);
  EXPECT_DOUBLE_EQ(back->customAllReduce.startPerPeerNs, 250);
  EXPECT_DOUBLE_EQ(back->customAllReduce.bytesPerNs, 60);
  // No limit goes out as the most chunks there can be (Astra-Sim starts none for 0).
  auto unlimited = engine::parseSystemConfig("<test>", engine::writeSystemConfigJson(engine::SystemConfig{}));
  ASSERT_TRUE(bool(unlimited)) << llvm::toString(unlimited.takeError());
  EXPECT_NE(engine::writeSystemConfigJson(engine::SystemConfig{}).find("\"active-chunks-per-dimension\": 4096"),
            std::string::npos);
  EXPECT_EQ(unlimited->activeChunks, 0);
}

// TensorRT-LLM's AUTO strategy as std.stacks' nim_trtllm states it: one
// shot at two ranks up to 16 MB, below 1 MB at four, below 500 KB at eight,
// two shot up to 8 MB, NCCL beyond; nothing where the engine has none.
TEST(Plan, CustomAllReducePicksByRanksAndBytes) {
  coll::CustomAllReduce trt{8e6, 16e6, 1e6, 5e5};
  auto pick = [&](double bytes, int ranks) { return coll::customAllReduce(trt, bytes, ranks); };
  EXPECT_EQ(pick(12e6, 2), coll::Algorithm::OneShot);
  EXPECT_EQ(pick(20e6, 2), std::nullopt);
  EXPECT_EQ(pick(999e3, 4), coll::Algorithm::OneShot);
  EXPECT_EQ(pick(1e6, 4), coll::Algorithm::Direct);
  EXPECT_EQ(pick(499e3, 8), coll::Algorithm::OneShot);
  EXPECT_EQ(pick(4e6, 8), coll::Algorithm::Direct);
  EXPECT_EQ(pick(8e6, 8), coll::Algorithm::Direct);
  EXPECT_EQ(pick(9e6, 8), std::nullopt);
  EXPECT_EQ(coll::customAllReduce(coll::CustomAllReduce{}, 1024, 8), std::nullopt);
  // Without a two-rank limit, two ranks take `max`.
  EXPECT_EQ(coll::customAllReduce(coll::CustomAllReduce{8e6, 0, 0, 0}, 12e6, 2), std::nullopt);
}

TEST(Plan, GroupCollectiveUsesItsDimensionsAlgorithm) {
  coll::AlgorithmTable algos;
  algos.perKind[0] = {coll::Algorithm::Ring, coll::Algorithm::Direct};
  // A group of 4 spanning dimension 1 only: one direct step, not 3 ring steps.
  coll::Plan inner = coll::planCollective(trace::CollKind::AllReduce, 1024, {{2}, {4}}, 0b10, 4, algos);
  ASSERT_EQ(inner.phases.size(), 2u);
  EXPECT_EQ(inner.phases[0].algo, coll::Algorithm::Direct);
  coll::Plan outer = coll::planCollective(trace::CollKind::AllReduce, 1024, {{4}, {2}}, 0b01, 4, algos);
  EXPECT_EQ(outer.phases[0].algo, coll::Algorithm::Ring);
}

// Ranks that run one program share its nodes: a collective's group slot and
// a send's or receive's peer stage are read through each rank's tables, and
// a rank that changes its nodes gets a copy first.
TEST(RankGraph, SharedProgramReadsPlaceholdersThroughEachRanksTables) {
  auto body = std::make_shared<trace::GraphBody>();
  trace::TraceNode coll, send, recv;
  coll.kind = trace::NodeKind::Coll, coll.pgName = 2, coll.involvedDims = 7;
  send.kind = trace::NodeKind::Send, send.commSrc = 0, send.commDst = 1;
  recv.kind = trace::NodeKind::Recv, recv.commSrc = 1, recv.commDst = 0;
  body->nodes = {coll, send, recv};
  trace::RankGraph a, b;
  for (auto [g, rank] : {std::pair{&a, 3}, std::pair{&b, 7}}) {
    g->body = body, g->rank = rank, g->shared = true;
    g->groupOfSlot = {10 + uint32_t(rank), 20 + uint32_t(rank)};
    g->involvedOfSlot = {1, uint32_t(rank)};
    g->rankOfStage = {rank, rank + 100};
  }
  EXPECT_EQ(a.group(a.nodes()[0]), 23u);
  EXPECT_EQ(b.group(b.nodes()[0]), 27u);
  EXPECT_EQ(b.involved(b.nodes()[0]), 7u); // slot 2's entry, not the node's field
  EXPECT_EQ(a.src(a.nodes()[1]), 3);       // a send is from this rank
  EXPECT_EQ(a.dst(a.nodes()[1]), 103);     // to the rank of stage 1
  EXPECT_EQ(b.src(b.nodes()[2]), 107);
  EXPECT_EQ(b.dst(b.nodes()[2]), 7);
  EXPECT_EQ(&a.nodes(), &b.nodes());
  a.own().nodes[0].commSize = 5;
  EXPECT_NE(&a.nodes(), &b.nodes());
  EXPECT_EQ(b.nodes()[0].commSize, trace::kAbsent);
  trace::RankGraph own; // a graph of its own holds the values
  own.own().nodes = {coll};
  EXPECT_EQ(own.group(own.nodes()[0]), 2u);
  EXPECT_EQ(own.involved(own.nodes()[0]), 7u);
}

/// Dimensions lie in one node when each after the first says same_node; the
/// two axes of one dimension (a torus) are that dimension's own phases.
TEST(GroupGrid, WithinOneNode) {
  net::NetworkSpec spec;
  spec.dims.resize(3);
  spec.dims[1].sameNode = true;
  EXPECT_TRUE(coll::withinOneNode(spec, {0, 1}));
  EXPECT_TRUE(coll::withinOneNode(spec, {1, 0, 1}));
  EXPECT_FALSE(coll::withinOneNode(spec, {0, 2})); // dimension 2 starts a node of its own
  EXPECT_FALSE(coll::withinOneNode(spec, {1, 2}));
  EXPECT_FALSE(coll::withinOneNode(spec, {0, 0})); // one dimension's axes
  EXPECT_FALSE(coll::withinOneNode(spec, {}));
  spec.dims[2].sameNode = true;
  EXPECT_TRUE(coll::withinOneNode(spec, {0, 2}));
}

namespace {

/// Nodes 0..5 with one later-numbered dependency (3 on 5), added in `order`.
trace::RankGraph buildSix(const std::vector<uint64_t> &order) {
  const std::vector<std::vector<uint32_t>> deps = {{}, {0}, {0, 1}, {5}, {2, 3}, {1}};
  trace::GraphBuilder b("six.et", 0);
  for (uint64_t id : order) {
    trace::TraceNode n;
    n.kind = trace::NodeKind::Comp;
    n.id = id;
    n.rapidTimeNs = int64_t(id + 1);
    b.add(n, fmt::format("n{}", id), deps[id]);
  }
  llvm::Expected<trace::RankGraph> g = b.finish();
  EXPECT_TRUE(bool(g)) << llvm::toString(g.takeError());
  return g ? std::move(*g) : trace::RankGraph{};
}

} // namespace

TEST(GraphBuilder, InOrderAndShuffledNodesResolveAlike) {
  // rapidc's graphs come in id order (no sort, ids found by index); a
  // trace's may not, and may depend on later ids (the cycle check runs).
  trace::RankGraph a = buildSix({0, 1, 2, 3, 4, 5}), b = buildSix({4, 0, 5, 2, 1, 3});
  ASSERT_EQ(a.nodes().size(), 6u);
  ASSERT_EQ(b.nodes().size(), 6u);
  for (size_t i = 0; i < 6; ++i) {
    const trace::TraceNode &x = a.nodes()[i], &y = b.nodes()[i];
    EXPECT_EQ(x.id, y.id);
    EXPECT_EQ(x.rapidTimeNs, y.rapidTimeNs);
    auto depsOf = [](const trace::RankGraph &g, const trace::TraceNode &n) {
      return std::vector<uint32_t>(g.body->deps.begin() + n.depBegin, g.body->deps.begin() + n.depBegin + n.depCount);
    };
    EXPECT_EQ(depsOf(a, x), depsOf(b, y)) << "node " << i;
    EXPECT_EQ(x.childCount, y.childCount) << "node " << i;
  }
}

TEST(GraphBuilder, ACycleThroughALaterIdIsStillFound) {
  trace::GraphBuilder b("cycle.et", 0);
  trace::TraceNode n;
  n.kind = trace::NodeKind::Comp;
  n.id = 0;
  b.add(n, "a", {1});
  n.id = 1;
  b.add(n, "b", {0});
  llvm::Expected<trace::RankGraph> g = b.finish();
  ASSERT_FALSE(bool(g));
  EXPECT_NE(llvm::toString(g.takeError()).find("cycle"), std::string::npos);
}
