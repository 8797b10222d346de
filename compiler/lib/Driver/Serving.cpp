//===- Serving.cpp - A serving point: its engine, its steps' costs --------===//
//
// The engine's memory is what vLLM's start-up profile finds: weights, the
// working set of the largest step and the sampled logits, out of
// `kv_memory` of the GPU; the rest is KV-cache blocks. Each step's time is
// the one the compiler gives it (docs/serving.md):
//   body(tokens)  embedding, layers without attention, stage sends: lowered
//                 and simulated on the replica's ranks and network, once per
//                 token count on a grid (exact to 64 tokens, then 16 points
//                 an octave, linear between them)
//   attention     each request's chunk, or all decodes in one kernel, costed
//                 by the kernel model, times the layers
//   head          the LM head on the sampled sequences
//   + the stack's per-step overhead.
// Decode-only steps are replayed from CUDA graphs where the stack captures
// decode, as an inference program's decode steps are.
//===----------------------------------------------------------------------===//
#include "KvTransfer.h"
#include "Workload.h"

#include "rapid/Cost/Power.h"
#include "rapid/IR/RankLayout.h"
#include "rapid/Lower/Lower.h"
#include "rapid/Passes/Pipeline.h"

#include <cmath>
#include <deque>
#include <fmt/format.h>
#include <map>
#include <memory>
#include <numeric>

namespace rapid::run {
namespace {

class StepCosts {
public:
  StepCosts(const ExperimentPoint &point, const ir::Program &probe)
      : point(point), shard(lower::makeShard(probe.layout, point)) {
    // The replicas of the first expert-parallel group (one without ep):
    // their MoE all-to-alls are part of every replica's step.
    RankLayout layout(probe.layout);
    for (int64_t r = 0; r < layout.ranks(); ++r)
      if (layout.coord(r, ir::Group::DP) < probe.layout.ep) replica.push_back(r);
  }

  llvm::Expected<double> operator()(const serve::StepShape &s) {
    llvm::Expected<double> t = pass(s);
    if (!t) return t.takeError();
    llvm::Expected<double> d = draftPasses(s);
    if (!d) return d.takeError();
    // Swapped blocks cross the host link before the step runs (vLLM V0).
    double swap = double(s.swapBlocks) * blockBytes / point.gpu.hostBandwidth.value();
    double host = point.stack.stepOverhead.value() +
                  double(s.decodeSeqs + int64_t(s.prefill.size())) * point.stack.sequenceOverhead.value() +
                  double(s.admitted) * point.stack.admissionOverhead.value();
    // The draft's tensor-core kernels share the replica's clock with the model's.
    return *t + *d + host + swap + heldClock(s, *t + *d, stepTensor + draftTensor);
  }

  /// The model's forward over the step's tokens: body, attention, head.
  llvm::Expected<double> pass(const serve::StepShape &s) {
    bool decodeOnly = s.prefill.empty();
    // In lock step every replica's layers wait for the group's busiest.
    llvm::Expected<double> b = body(std::max(s.tokens, s.groupTokens), decodeOnly);
    if (!b) return b.takeError();
    std::vector<lower::PrefillChunk> chunks;
    int64_t chunkTokens = 0;
    for (const serve::Chunk &c : s.prefill) {
      chunks.push_back({c.q, c.context});
      chunkTokens += c.q;
    }
    double attention =
        timeOf(lower::serveAttention(shard, chunks, s.decodeSeqs, s.decodeKv, s.tokens - chunkTokens), decodeOnly);
    stepTensor = tensorAt(std::max(s.tokens, s.groupTokens), decodeOnly) + lastTensor * double(point.model.layers);
    auto [it, fresh] = heads.try_emplace({s.sampled, decodeOnly}, 0.0);
    if (fresh) it->second = timeOf(lower::serveHead(shard, s.sampled), decodeOnly);
    return *b + attention * double(point.model.layers) + it->second;
  }

  /// The last pass's tensor-core seconds at the boost clock, over its
  /// stages: the body's, and the attention of every layer.
  double stepTensor = 0;

  double blockBytes = 0; ///< one KV block on the GPU that holds the most layers
  /// Speculative decoding: the draft's costs (serving.draft, or a one-layer
  /// head of the model's shape), on the same ranks.
  std::unique_ptr<StepCosts> draft;

private:
  /// Under a power limit (Cost/Power.h) the step's tensor-core kernels
  /// (`tensor` seconds of them, in a step of `boost` seconds at the boost clock) run
  /// at the clock the replica's GPUs hold: the one its tensor-core duty
  /// over the window before the step and the step itself allows. After
  /// idle a burst runs at the boost clock; a long prefill settles lower,
  /// as the measured GPUs do within about 100 ms (power_h100.csv). The
  /// seconds it adds.
  double heldClock(const serve::StepShape &s, double boost, double tensor) {
    const GpuSpec &g = point.gpu;
    if (g.powerTensor <= 0) return 0;
    double window = g.powerWindow.value(), perGpu = tensor / double(point.parallel.pp);
    std::deque<std::pair<double, double>> &ran = recent[s.replica]; // (start, tensor seconds a GPU)
    while (!ran.empty() && ran.front().first < s.start - window) ran.pop_front();
    double duty = perGpu;
    for (const auto &r : ran) duty += r.second;
    double f = cost::powerSlowdown(g, duty / (window + boost));
    ran.emplace_back(s.start, perGpu);
    return (f - 1) * tensor;
  }
  std::map<int64_t, std::deque<std::pair<double, double>>> recent;
  double draftTensor = 0; ///< the last step's draft passes' tensor-core seconds at the boost clock

  /// The draft's part of a speculative step: a first pass over the step's
  /// prompt chunks (the draft keeps its own cache of them) and one token of
  /// each speculating decode, then one pass per further draft, one after
  /// another; each samples the speculating decodes.
  llvm::Expected<double> draftPasses(const serve::StepShape &s) {
    draftTensor = 0;
    if (!draft || (s.draftSeqs == 0 && s.prefill.empty())) return 0.0;
    serve::StepShape first;
    first.prefill = s.prefill;
    for (const serve::Chunk &c : s.prefill) first.tokens += c.q;
    first.tokens += s.draftSeqs;
    first.decodeSeqs = first.sampled = s.draftSeqs;
    if (s.draftSeqs > 0) first.decodeKv = s.decodeKv / s.decodeSeqs * s.draftSeqs; // the decodes' mean cache
    first.groupTokens = s.groupTokens;
    llvm::Expected<double> t = draft->pass(first);
    if (t) draftTensor = draft->stepTensor;
    if (!t || s.draftPasses <= 1) return t;
    serve::StepShape next = first;
    next.prefill.clear();
    next.tokens = s.draftSeqs;
    llvm::Expected<double> more = draft->pass(next);
    if (!more) return more.takeError();
    draftTensor += double(s.draftPasses - 1) * draft->stepTensor;
    return *t + double(s.draftPasses - 1) * *more;
  }

  /// The grid point at or below `tokens` and the distance to the next: every
  /// count up to 64, then 16 points an octave.
  static std::pair<int64_t, int64_t> gridAround(int64_t tokens) {
    int64_t step = tokens <= 64 ? 1 : int64_t(1) << (63 - __builtin_clzll(uint64_t(tokens)) - 4);
    return {tokens / step * step, step};
  }

  /// The body at `tokens`, linear between the grid points around it.
  llvm::Expected<double> body(int64_t tokens, bool decodeOnly) {
    auto [lo, step] = gridAround(tokens);
    llvm::Expected<double> a = gridBody(lo, decodeOnly);
    if (!a || lo == tokens) return a;
    llvm::Expected<double> b = gridBody(lo + step, decodeOnly);
    if (!b) return b.takeError();
    return *a + (*b - *a) * double(tokens - lo) / double(step);
  }

  llvm::Expected<double> gridBody(int64_t tokens, bool decodeOnly) {
    auto it = bodies.find({tokens, decodeOnly});
    if (it != bodies.end()) return it->second;
    PipelineOptions po;
    po.serveStep = ir::ServeStep{tokens, 1, decodeOnly};
    ir::Program prog = compilePoint(point, po);
    llvm::Expected<double> t = finishSeconds(prog, point, replica);
    if (!t) return t.takeError();
    bodies[{tokens, decodeOnly}] = *t;
    double tensor = 0; // over the stages, which the step runs one after another
    for (const ir::Graph &g : prog.stages)
      for (const ir::Op &op : g.ops)
        if (onTensorCores(op)) tensor += op.time.value();
    tensors[{tokens, decodeOnly}] = tensor;
    return *t;
  }

  /// The body's tensor-core seconds at `tokens`, as body() interpolates.
  double tensorAt(int64_t tokens, bool decodeOnly) const {
    auto [lo, step] = gridAround(tokens);
    double a = tensors.at({lo, decodeOnly});
    if (lo == tokens) return a;
    return a + (tensors.at({lo + step, decodeOnly}) - a) * double(tokens - lo) / double(step);
  }

  /// The ops' time; their tensor-core kernels' in lastTensor.
  double timeOf(std::vector<ir::Op> ops, bool decodeOnly) {
    double t = 0;
    lastTensor = 0;
    for (ir::Op &op : ops) {
      op.micro = decodeOnly ? 1 : 0; // what decides the launch cost, as in the body
      costOp(op, point, memo);
      t += op.time.value();
      if (onTensorCores(op)) lastTensor += op.time.value();
    }
    return t;
  }

  const ExperimentPoint &point;
  lower::Shard shard;
  std::vector<int64_t> replica; ///< the ranks of data-parallel replicas 0 to ep - 1
  std::map<std::pair<int64_t, bool>, double> bodies, heads, tensors;
  double lastTensor = 0;
  CostMemo memo;
};

/// The most tokens one step can carry: the budget (chunked), a whole context
/// where a prompt longer than it runs alone or is recomputed after
/// preemption (continuous), the max_batch longest prompts (static).
int64_t largestStep(const ServingSpec &s, const std::vector<serve::Request> &reqs) {
  if (s.scheduler == ServeScheduler::Static) {
    std::vector<int64_t> prompts;
    for (const serve::Request &r : reqs) prompts.push_back(r.prompt);
    size_t n = std::min(prompts.size(), size_t(s.maxBatch));
    std::partial_sort(prompts.begin(), prompts.begin() + ptrdiff_t(n), prompts.end(), std::greater<>());
    return std::accumulate(prompts.begin(), prompts.begin() + ptrdiff_t(n), int64_t(0));
  }
  int64_t most = s.tokenBudget;
  if (s.scheduler == ServeScheduler::Continuous)
    for (const serve::Request &r : reqs) most = std::max(most, r.prompt + r.output);
  return most;
}

/// Sizes the KV cache as vLLM does: what `kv_memory` of the GPU leaves after
/// the weights, the largest step's working set and logits, and the reserve,
/// on the stage with the least room, in whole blocks. Fills each stage's
/// kvCache and peak with the blocks' bytes; 0 blocks when none fits.
struct KvCache {
  int64_t blocks = 0;
  double blockBytes = 0; ///< on the stage with the most layers
};
/// A speculative draft beside the model: its weights and its KV cache per
/// token, on every GPU of the replica (it runs with the model's tp, pp = 1).
struct DraftMemory {
  double weights = 0, perToken = 0;
};
KvCache kvCache(MemoryReport &mem, const ir::Program &probe, const ExperimentPoint &p, const DraftMemory &draft) {
  const ServingSpec &s = *p.serving;
  lower::Shard sh = lower::makeShard(probe.layout, p);
  double perToken = sh.kvBytesPerToken(); // in one layer
  auto blockBytes = [&](const StageMemory &m) {
    return (perToken * double(probe.memory.stageLayers[size_t(m.stage)]) + draft.perToken) * double(s.blockSize);
  };
  for (StageMemory &m : mem.stages) {
    m.weights += draft.weights;
    m.peak += draft.weights;
  }
  int64_t blocks = std::numeric_limits<int64_t>::max();
  for (const StageMemory &m : mem.stages) {
    double room = s.kvMemory * m.capacity - m.peak;
    blocks = std::min(blocks, room > 0 ? int64_t(room / blockBytes(m)) : 0);
  }
  double largest = 0;
  for (StageMemory &m : mem.stages) {
    largest = std::max(largest, blockBytes(m));
    m.kvCache = double(blocks) * blockBytes(m);
    m.peak += m.kvCache;
  }
  if (blocks == 0) {
    const StageMemory &w = mem.worst();
    mem.fits = false;
    mem.reason = fmt::format("weights and the largest step's working set need {} on rank {} (stage {}) but "
                             "kv_memory = {} % of '{}' is {}: no KV-cache block fits",
                             formatBytes(Bytes(w.peak)), w.rank, w.stage, formatNumber(s.kvMemory * 100), p.gpu.name,
                             formatBytes(Bytes(s.kvMemory * w.capacity)));
  }
  return {blocks, largest};
}

} // namespace

llvm::Expected<RunResult> runServing(const ExperimentPoint &point) {
  const ServingSpec &s = *point.serving;
  llvm::Expected<std::vector<serve::Request>> reqs = serve::makeRequests(s);
  if (!reqs) return reqs.takeError();
  // An engine refuses what its model cannot hold (vLLM's max_model_len).
  for (const serve::Request &q : *reqs)
    if (q.prompt + q.output > point.model.maxSeq)
      return llvm::createStringError(fmt::format("request {} has {} prompt and {} output tokens, more than model '{}' "
                                                 "holds (max_seq = {})",
                                                 q.id, q.prompt, q.output, point.model.name, point.model.maxSeq));
  PipelineOptions po;
  po.serveStep = ir::ServeStep{largestStep(s, *reqs), s.maxBatch, false};
  ir::Program probe = compilePoint(point, po);
  RunResult r;
  r.memory = *probe.memoryReport;
  if (!r.memory.fits) return r;
  // Speculative decoding: the draft, a model of its own or a one-layer head
  // of the model's shape that shares its embedding and LM head (EAGLE, MTP).
  ExperimentPoint draftPoint;
  ir::Program draftProbe;
  DraftMemory draftMemory;
  if (s.speculativeTokens > 0) {
    draftPoint = point;
    if (point.draftModel) {
      draftPoint.model = *point.draftModel;
    } else {
      draftPoint.model.layers = 1;
      draftPoint.parallel.firstStageLayers = draftPoint.parallel.lastStageLayers = 0;
    }
    draftProbe = compilePoint(draftPoint, po);
    lower::Shard dsh = lower::makeShard(draftProbe.layout, draftPoint);
    draftMemory.perToken = dsh.kvBytesPerToken() * double(draftPoint.model.layers);
    draftMemory.weights = point.draftModel ? draftProbe.memoryReport->stages.front().weights
                                           : dsh.layerParams(0) * dsh.d; // its layer alone
  }
  KvCache kv = kvCache(r.memory, probe, point, draftMemory);
  r.kvBlocks = kv.blocks;
  if (!r.memory.fits) return r;
  serve::Engine e;
  e.scheduler = s.scheduler;
  e.router = s.router;
  e.replicas = point.parallel.dp;
  e.pipeline = point.parallel.pp;
  e.lockstep = point.parallel.ep;
  e.maxBatch = s.maxBatch;
  e.tokenBudget = s.tokenBudget;
  e.blockSize = s.blockSize;
  e.kvBlocks = r.kvBlocks;
  e.admission = s.admission;
  e.preemption = s.preemption;
  e.swapBlocks = int64_t(s.swapSpace.value() / kv.blockBytes);
  e.concurrency = s.concurrency;
  e.sharedPrefix = s.sharedPrefix;
  e.prefixes = s.prefixes;
  e.prefixCaching = s.prefixCaching;
  e.requestOverhead = point.stack.requestOverhead.value();
  e.frontend = point.stack.frontend;
  e.sloTtft = s.sloTtft.value();
  e.sloTpot = s.sloTpot.value();
  std::optional<TransferCosts> moves;
  if (s.prefillReplicas > 0) {
    llvm::Expected<net::Topology> topo = faultedTopology(point, {});
    if (!topo) return topo.takeError();
    moves.emplace(point, probe, std::move(*topo));
    e.prefillReplicas = s.prefillReplicas;
    e.transfer = [&](int64_t from, int64_t to) { return (*moves)(from, to); };
  }
  StepCosts costs(point, probe);
  costs.blockBytes = kv.blockBytes;
  if (s.speculativeTokens > 0) {
    e.speculative = s.speculativeTokens;
    e.acceptance = s.acceptance;
    e.seed = uint64_t(s.seed);
    costs.draft = std::make_unique<StepCosts>(draftPoint, draftProbe);
  }
  llvm::Expected<serve::Result> res = serve::simulate(*reqs, e, [&](const serve::StepShape &shape) {
    return costs(shape);
  });
  if (!res) return res.takeError();
  r.simulated = true;
  r.serving = std::move(*res);
  return r;
}

} // namespace rapid::run
