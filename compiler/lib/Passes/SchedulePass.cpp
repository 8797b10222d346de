//===- SchedulePass.cpp - Stage programs in pipeline-schedule order -------===//
//
// Each stage runs forward (F) and backward (B) units, one per microbatch and
// model chunk, in the order its schedule gives:
//  - GPipe: every forward, then every backward (Huang et al. 2019).
//  - 1F1B: p-s-1 warm-up forwards, then alternate, then drain (Narayanan et
//    al. 2021, PipeDream-Flush).
//  - Interleaved 1F1B: v chunks per stage, microbatches in groups of p
//    (Narayanan et al. SC'21 Sec. 2.2; Megatron-LM's schedule).
// Units exchange activations and gradients by send/recv; gradients are
// reduced over DP in buckets as the last backward of each chunk produces
// them, and the step ends with the optimizer (and ZeRO's parameter gathers).
//===----------------------------------------------------------------------===//
#include "rapid/Passes/Pipeline.h"

#include "rapid/Lower/Lower.h"

#include <map>
#include <optional>

namespace rapid {
namespace {

using namespace lower;

struct Unit {
  bool forward;
  int64_t micro, chunk;
};

std::vector<Unit> interleavedUnits(int64_t P, int64_t s, int64_t m, int64_t v) {
  auto chunkOf = [&](int64_t k, bool fwd) {
    int64_t c = (k / P) % v;
    return fwd ? c : v - 1 - c;
  };
  auto microOf = [&](int64_t k) { return (k / (P * v)) * P + k % P; };
  int64_t total = m * v;
  int64_t warm = std::min(total, (P - s - 1) * 2 + (v - 1) * P);
  std::vector<Unit> out;
  int64_t f = 0, b = 0;
  for (; f < warm; ++f) out.push_back({true, microOf(f), chunkOf(f, true)});
  while (f < total) {
    out.push_back({true, microOf(f), chunkOf(f, true)}), ++f;
    out.push_back({false, microOf(b), chunkOf(b, false)}), ++b;
  }
  for (; b < total; ++b) out.push_back({false, microOf(b), chunkOf(b, false)});
  return out;
}

std::vector<Unit> scheduleUnits(Schedule schedule, int64_t P, int64_t s, int64_t m, int64_t v) {
  if (schedule == Schedule::Interleaved) return interleavedUnits(P, s, m, v);
  std::vector<Unit> out;
  if (schedule == Schedule::GPipe) {
    for (int64_t i = 0; i < m; ++i) out.push_back({true, i, 0});
    for (int64_t i = m; i-- > 0;) out.push_back({false, i, 0});
    return out;
  }
  int64_t warm = std::min(P - s - 1, m), f = 0, b = 0;
  for (; f < warm; ++f) out.push_back({true, f, 0});
  for (; f < m; ++f, ++b) out.push_back({true, f, 0}), out.push_back({false, b, 0});
  for (; b < m; ++b) out.push_back({false, b, 0});
  return out;
}

class StageBuilder {
public:
  StageBuilder(const Shard &sh, ir::Graph &g, int64_t stage, Schedule schedule, bool layerBlocks)
      : sh(sh), L(sh.layout), c(g), stage(stage), schedule(schedule), layerBlocks(layerBlocks) {
    c.dtype = sh.dtype;
  }

  void build() {
    int64_t m = L.microbatches;
    std::vector<Unit> units = scheduleUnits(schedule, L.pp, stage, m, L.virtualStages);
    std::vector<int64_t> backwardsLeft(L.virtualStages, m);
    if (overlapParamGather()) gatherUpdatedParams();
    for (const Unit &u : units) {
      c.micro = int32_t(u.micro);
      if (u.forward) forward(u);
      else backward(u, --backwardsLeft[u.chunk] == 0 || shardedGrads());
    }
    step();
  }

private:
  bool first(int64_t chunk) const { return stage == 0 && chunk == 0; }
  bool last(int64_t chunk) const { return stage == L.pp - 1 && chunk == L.virtualStages - 1; }
  /// Megatron-LM's scatter/gather: without SP every TP rank holds the whole
  /// activation, so each sends 1/tp of it and the receiver all-gathers.
  bool scatterGather() const { return sh.ppScatterGather && !sh.sp() && sh.t() > 1; }
  double p2pBytes() const { return sh.actElems() * sh.d / (scatterGather() ? double(sh.t()) : 1.0); }
  int32_t tag(int dir, int64_t micro, int64_t recvStage, int64_t recvChunk) const {
    return int32_t((((micro * L.virtualStages + recvChunk) * L.pp + recvStage) * 2) + dir);
  }

  Op p2p(OpKind kind, const char *name, int64_t peer, int32_t tg) {
    return lower::p2p(kind, name, peer, tg, p2pBytes());
  }

  void forward(const Unit &u) {
    c.phase = Phase::Forward;
    if (!first(u.chunk)) {
      int64_t from = stage == 0 ? L.pp - 1 : stage - 1;
      c.after(c.addDetached(p2p(OpKind::Recv, "pp.recv.act", from, tag(0, u.micro, stage, u.chunk)), {}));
      if (scatterGather()) {
        c.layer = -1;
        c.add(collective(OpKind::AllGather, "pp.recv.act.allgather", Group::TP, p2pBytes()));
      }
    }
    bool gathered = u.micro == 0 && overlapParamGather(); // the last step's parameters arrive now
    if (gathered && restGather) c.after(*restGather);
    if (first(u.chunk)) embeddingForward(c, sh);
    for (int64_t l = sh.layerBegin(u.chunk, stage), e = sh.layerEnd(u.chunk, stage); l < e; ++l) {
      if (gathered) c.after(layerGathers.at(l));
      gatherParams(l);
      asBlock(u) ? layerBlock(l) : layerForward(c, sh, l);
      usedGathered();
    }
    if (last(u.chunk)) {
      headForward(c, sh);
    } else {
      c.layer = -1;
      int64_t to = (stage + 1) % L.pp, toChunk = stage + 1 == L.pp ? u.chunk + 1 : u.chunk;
      c.addDetached(p2p(OpKind::Send, "pp.send.act", to, tag(0, u.micro, to, toChunk)), {c.last()});
    }
  }

  /// `reduce`: this unit's gradients are final (its chunk's last microbatch)
  /// or, with sharded gradients, reduced every microbatch.
  void backward(const Unit &u, bool reduce) {
    c.phase = Phase::Backward;
    if (!last(u.chunk)) {
      int64_t from = (stage + 1) % L.pp;
      c.after(c.addDetached(p2p(OpKind::Recv, "pp.recv.grad", from, tag(1, u.micro, stage, u.chunk)), {}));
      if (scatterGather()) {
        c.layer = -1;
        c.add(collective(OpKind::AllGather, "pp.recv.grad.allgather", Group::TP, p2pBytes()));
      }
    }
    if (last(u.chunk)) {
      headBackward(c, sh);
      bool ownHead = !(sh.model.tiedEmbeddings && L.pp == 1); // else its gradient is the embedding's
      if (reduce && ownHead) reduceGrads(double(sh.model.vocab) * sh.model.hidden / sh.t());
    }
    for (int64_t e = sh.layerBegin(u.chunk, stage), l = sh.layerEnd(u.chunk, stage); l-- > e;) {
      gatherParams(l);
      c.phase = Phase::Backward;
      asBlock(u) ? layerBlock(l) : layerBackward(c, sh, l);
      usedGathered();
      if (reduce) reduceGrads(sh.layerParams(l));
    }
    if (first(u.chunk)) {
      embeddingBackward(c, sh);
      if (reduce)
        reduceGrads(double(sh.model.vocab) * sh.model.hidden / sh.t() + sh.embeddingSideParams(), /*flush=*/false);
    } else {
      c.layer = -1;
      int64_t to = stage == 0 ? L.pp - 1 : stage - 1, toChunk = stage == 0 ? u.chunk - 1 : u.chunk;
      c.addDetached(p2p(OpKind::Send, "pp.send.grad", to, tag(1, u.micro, to, toChunk)), {c.last()});
    }
    if (shardedGrads()) flushBucket(); // nothing may wait for the next microbatch: it would need the whole gradient
  }

  /// ir::Program::layerBlocks: microbatch 0 is lowered whole, the others
  /// as one Block op per layer and direction.
  bool asBlock(const Unit &u) const { return layerBlocks && u.micro > 0; }
  void layerBlock(int64_t layer) {
    c.layer = int32_t(layer);
    Op op;
    op.kind = OpKind::Block;
    op.name = "layer.block";
    c.add(std::move(op));
  }

  /// Ranks that hold the same weights: DP and CP (Megatron-LM reduces
  /// gradients and shards the distributed optimizer over both).
  int64_t replicas() const { return L.dp * L.cp; }
  Group replicaGroup() const { return L.cp > 1 ? Group::DPCP : Group::DP; }
  /// Ranks ZeRO shards over: all replicas, or with hybrid sharding a block
  /// of them (the others hold the same shards).
  bool hybrid() const { return L.shard < L.dp; }
  int64_t shards() const { return L.shard * L.cp; }
  Group shardGroup() const { return hybrid() ? Group::Shard : replicaGroup(); }

  /// ZeRO-2/3 and FSDP keep only the rank's shard of the gradients, so each
  /// microbatch's backward reduce-scatters its own (DeepSpeed: "gradient
  /// reduction is required after every backward because of gradient
  /// partitioning", deepspeedai/DeepSpeed#2252; PyTorch FSDP outside
  /// no_sync); ZeRO-0/1 accumulate whole gradients and reduce once.
  bool shardedGrads() const { return sh.zero >= 2 && shards() > 1; }

  /// ZeRO-1/2: the optimizer updates the rank's shard of the parameters,
  /// which every rank then gathers whole.
  bool gathersUpdatedParams() const { return sh.zero >= 1 && sh.zero < 3 && shards() > 1; }

  /// ZeRO-3 / FSDP: each layer's parameters are gathered before use, at
  /// most two layers ahead: a gather waits until the layer used two
  /// gathers before has run and freed its copy. PyTorch FSDP's rate limiter
  /// (limit_all_gathers, on by default: "at most two consecutive FSDP
  /// instances' all-gathers" in flight) and its one-layer prefetch; DeepSpeed
  /// ZeRO-3 bounds its prefetch by bytes. Unbounded, every gather of the
  /// step would start at once, ahead of the gradients' reduce-scatters on
  /// the same stream, holding every layer gathered.
  bool gathersLayers() const { return sh.zero >= 3 && shards() > 1; }
  void gatherParams(int64_t layer) {
    if (!gathersLayers()) return;
    c.layer = int32_t(layer);
    Op op = collective(OpKind::AllGather, "zero3.param_allgather", shardGroup(),
                       sh.layerParams(layer) * sh.d / double(shards()));
    std::vector<uint32_t> deps;
    if (gatheredUses.size() >= 2) deps.push_back(gatheredUses[gatheredUses.size() - 2]);
    c.after(c.addDetached(std::move(op), std::move(deps)));
  }
  /// The layer just lowered is done with its gathered parameters.
  void usedGathered() {
    if (gathersLayers()) gatheredUses.push_back(c.last());
  }

  /// ZeRO-1/2 with the stack's param_gather_overlap: the last step's
  /// optimizer updated each rank's shard, and the next forward needs whole
  /// parameters; Megatron-core launches their all-gathers bucket by bucket
  /// as the first microbatch's forward reaches them. One step stands for
  /// every step, so they open this one: the stage's embedding or head
  /// first, then its layers in forward order, one after the other on the
  /// stream, each layer's first forward waiting for its own.
  bool overlapParamGather() const { return sh.paramGatherOverlap && gathersUpdatedParams(); }
  void gatherUpdatedParams() {
    c.phase = Phase::Forward;
    c.micro = 0;
    auto gather = [&](int32_t layer, double params, std::vector<uint32_t> deps) {
      c.layer = layer;
      return c.addDetached(
          collective(OpKind::AllGather, "zero.param_allgather", shardGroup(), params * sh.d / double(shards())),
          std::move(deps));
    };
    if (double ends = stageEndParams(sh, stage); ends > 0) restGather = gather(-1, ends, {}); // a middle stage has layers only
    std::vector<uint32_t> after = restGather ? std::vector<uint32_t>{*restGather} : std::vector<uint32_t>{};
    for (int64_t v = 0; v < L.virtualStages; ++v)
      for (int64_t l = sh.layerBegin(v, stage); l < sh.layerEnd(v, stage); ++l) {
        layerGathers[l] = gather(int32_t(l), sh.layerParams(l), after);
        after = {layerGathers[l]};
      }
  }

  /// Adds `params` to the open gradient bucket; reduces it over DP when full.
  /// Without overlap the bucket only fills: step() reduces it all at once.
  void reduceGrads(double params, bool flush = false) {
    if (replicas() == 1) return;
    bucket += params * sh.gradBytes;
    if (sh.gradReduceOverlap && (bucket >= sh.gradBucket || flush)) flushBucket();
  }

  /// With hybrid sharding the bucket is reduce-scattered within the shard
  /// group, then each shard all-reduced across the groups that hold it.
  void flushBucket() {
    if (bucket == 0) return;
    OpKind k = sh.zero >= 1 ? OpKind::ReduceScatter : OpKind::AllReduce;
    uint32_t reduce = c.addDetached(collective(k, k == OpKind::AllReduce ? "dp.grad.allreduce" : "dp.grad.reducescatter",
                                               shardGroup(), bucket), {c.last()});
    if (hybrid() && sh.zero >= 1)
      reduce = c.addDetached(collective(OpKind::AllReduce, "dp.grad.replica_allreduce", Group::Replica,
                                        bucket / double(shards())), {reduce});
    gradComms.push_back(reduce);
    bucket = 0;
  }

  void step() {
    flushBucket();
    for (uint32_t idx : gradComms) c.after(idx);
    c.phase = Phase::Update;
    c.micro = -1;
    c.layer = -1;
    double params = stageParams(sh, stage) / (sh.zero >= 1 ? double(shards()) : 1.0);
    c.add(optimizerStep(sh, params));
    if (gathersUpdatedParams() && !overlapParamGather())
      c.add(collective(OpKind::AllGather, "zero.param_allgather", shardGroup(), params * sh.d));
  }

  const Shard &sh;
  const ir::Layout &L;
  Chain c;
  int64_t stage;
  Schedule schedule;
  bool layerBlocks;
  double bucket = 0; ///< gradient bytes waiting for their DP reduction
  /// With overlapped parameter gathers: the embedding's or head's, and
  /// each of the stage's layers'.
  std::optional<uint32_t> restGather;
  std::map<int64_t, uint32_t> layerGathers;
  std::vector<uint32_t> gradComms;
  std::vector<uint32_t> gatheredUses; ///< ZeRO-3: each layer use's last op, in program order
};

} // namespace

void schedulePass(ir::Program &prog, const ExperimentPoint &p) {
  lower::Shard sh = lower::makeShard(prog.layout, p);
  if (prog.serveStep) { // one step of T new tokens
    sh.b = 1;
    sh.seq = 0; // no cache of its own: the driver sizes the engine's KV blocks
    sh.s = sh.tokens = prog.serveStep->tokens;
  } else if (!sh.training)
    prog.decode = lower::decodeSamples(sh.seq, sh.decodeTokens, sh.decodeSamples);
  size_t room = 0; // stages are alike: each reserves a quarter more than the last took
  for (int64_t s = 0; s < sh.layout.pp; ++s) {
    ir::Graph g;
    g.stage = int32_t(s);
    // Growth by doubling would touch about twice the final bytes, each in
    // fresh pages; pages reserved and never written cost nothing.
    g.ops.reserve(room);
    if (sh.training)
      StageBuilder(sh, g, s, p.training->schedule, prog.layerBlocks).build();
    else if (prog.serveStep)
      lower::buildServeBody(sh, g, s, *prog.serveStep);
    else
      lower::buildInferenceStage(sh, g, s, prog.decode);
    room = g.ops.size() + g.ops.size() / 4;
    prog.stages.push_back(std::move(g));
    prog.memory.stageParams.push_back(lower::stageParams(sh, s));
    prog.memory.stageLayers.push_back(sh.stageLayerCount(s));
  }
  lower::memoryFacts(sh, prog);
  if (prog.serveStep) // the engine samples up to a step's sequences; its KV cache is sized by the driver
    prog.memory.logits = 4.0 * double(prog.serveStep->maxSampled) * double(sh.model.vocab);
}

} // namespace rapid
