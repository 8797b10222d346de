//===- Checks.cpp - Is an experiment point runnable at all? ---------------===//
//
// Structural feasibility: degrees that divide what they split, a GPU count
// that matches the network, mappings that cover dimensions exactly. (Whether
// it fits in memory is the memory pass's question, not this one.)
//===----------------------------------------------------------------------===//
#include "SemaImpl.h"

#include "rapid/Cost/Attention.h"
#include "rapid/Network/TopologyKinds.h"

#include "llvm/ADT/StringExtras.h"

namespace rapid::sema {
namespace {

/// Layer passes one pipeline stage runs per step: its microbatches
/// (global_batch / (micro_batch * dp)) times the layers it holds. Each is
/// scheduled, costed and simulated as some forty ops, about 13 KiB and 30 us
/// (measured: Llama-2 7B, 2,048 microbatches of 32 layers, 0.86 GB and 2 s),
/// so 2^16 stay within a GiB and a few seconds. Real runs have a few
/// thousand: Llama 3 405B's 2,048 sequences a step over pp = 16 with dp = 1
/// would be 2,048 x 8.
constexpr int64_t kMaxLayerPasses = int64_t(1) << 16;
/// Tokens one microbatch (or one inference batch) carries: 2^28 times a
/// width of 2^22 still counts its activations well inside int64.
constexpr int64_t kMaxTokensInFlight = int64_t(1) << 28;

struct Checker {
  const ExperimentPoint &p;
  const Record &exp;
  std::vector<Sema::Problem> problems;

  llvm::SMRange at(const std::string &path) const {
    auto it = exp.fields.find(path);
    return it != exp.fields.end() ? it->second.expr->getRange() : exp.decl->name.range;
  }
  const ParallelSpec &par = p.parallel;
  const ModelSpec &m = p.model;
  int64_t degree(std::string_view d) const {
    return d == "tp" ? par.tp : d == "cp" ? par.cp : d == "pp" ? par.pp : d == "dp" ? par.dp : 0;
  }
  template <class... A> void fail(const std::string &path, fmt::format_string<A...> f, A &&...args) {
    problems.push_back({fmt::format(f, std::forward<A>(args)...), at(path)});
  }
  void divides(const char *deg, int64_t whole, const std::string &what) {
    int64_t d = degree(deg);
    if (d > 0 && whole > 0 && whole % d != 0)
      fail(std::string("parallel.") + deg, "{} = {} does not divide the {} {}", deg, d, whole, what);
  }

  void run() {
    if (p.workload() == Workload::None) {
      problems.push_back(
          {"an experiment needs exactly one of 'training { ... }', 'inference { ... }', 'serving { ... }' or "
           "'replay { ... }'",
           exp.decl->name.range});
      return;
    }
    if (p.replay) return replay(*p.replay);
    gpus();
    model();
    if (p.training) training(*p.training);
    if (p.inference) inference(*p.inference);
    if (p.serving) serving(*p.serving);
    attention();
    links();
    mapping();
    faults();
  }

  void gpus() {
    int64_t tp = par.tp, cp = par.cp, pp = par.pp, dp = par.dp;
    // Each degree is at most 2^20, so their product is counted in a double
    // before it can overflow int64.
    if (double(tp) * double(cp) * double(pp) * double(dp) > limit::kRanks) {
      const char *largest = "tp";
      for (const char *d : {"cp", "pp", "dp"})
        if (degree(d) > degree(largest)) largest = d;
      fail(std::string("parallel.") + largest, "tp*cp*pp*dp = {}*{}*{}*{} is more than {} GPUs", tp, cp, pp, dp,
           int64_t(limit::kRanks));
      return;
    }
    if (tp * cp * pp * dp != p.network.gpus)
      fail("parallel", "tp*cp*pp*dp = {}*{}*{}*{} = {} but network '{}' has {} GPUs", tp, cp, pp, dp,
           tp * cp * pp * dp, p.network.name, p.network.gpus);
  }

  void model() {
    std::string of = fmt::format("of model '{}'", m.name);
    divides("tp", m.heads, "attention heads " + of);
    int64_t kv = m.kvHeads, tp = par.tp;
    if (kv > 0 && tp > 0 && kv % tp != 0 && tp % kv != 0)
      fail("parallel.tp", "tp = {} neither divides nor is a multiple of the {} key/value heads {}", tp, kv, of);
    divides("tp", m.ffn, "MLP columns " + of);
    stageLayers(of);
    positions(of);
    int64_t experts = m.experts, ep = par.ep;
    if (ep > 1 && experts % ep != 0)
      fail("parallel.ep", "ep = {} does not divide the {} experts {}", ep, experts, of);
    if (ep > 1 && par.dp % ep != 0)
      fail("parallel.ep", "ep = {} must divide dp = {}: experts are spread within the data-parallel group", ep, par.dp);
    if (m.topK > experts)
      problems.push_back({fmt::format("moe.top_k = {} exceeds the {} experts {}", m.topK, experts, of),
                          exp.decl->name.range});
  }

  /// A learned position table has a row per position up to max_seq.
  void positions(const std::string &of) {
    if (!m.learnedPositions()) return;
    int64_t tokens = p.training ? p.training->seq : p.inference ? p.inference->prefill + p.inference->decode : 0;
    if (tokens > m.maxSeq)
      fail(p.training ? "training.seq" : "inference.prefill",
           "a sequence of {} tokens exceeds the {} positions of the learned position table {} (max_seq)", tokens,
           m.maxSeq, of);
  }

  /// Even stages need pp (times the virtual stages) to divide the layers;
  /// uneven ones (Megatron-LM's first/last stage layer counts) split the rest.
  void stageLayers(const std::string &of) {
    int64_t pp = par.pp, layers = m.layers;
    int64_t first = par.firstStageLayers, last = par.lastStageLayers;
    int64_t v = p.training ? p.training->virtualStages : 1;
    if (first == 0 && last == 0) {
      if (pp * v > 0 && layers % (pp * v) != 0)
        fail("parallel.pp", "{} pipeline chunks (pp = {}) do not divide the {} layers {}", pp * v, pp, layers, of);
      return;
    }
    if (pp < 2) {
      fail("parallel.first_stage_layers", "uneven stages need pp >= 2 (pp = {})", pp);
      return;
    }
    int64_t middle = pp - (first > 0) - (last > 0), rest = layers - first - last;
    if (rest < middle || rest < 0 || (middle == 0 && rest != 0) || (middle > 0 && rest % middle != 0)) {
      fail("parallel.first_stage_layers",
           "first_stage_layers = {} and last_stage_layers = {} leave {} of the {} layers {} for {} other stages, "
           "which does not split evenly", first, last, rest, layers, of, middle);
      return;
    }
    // The end stages' chunks may be short (LayoutPass: the embedding and the
    // head can sit alone in one); the others split evenly into chunks.
    if (v > 1 && middle > 0 && (rest / middle) % v != 0)
      fail("training.virtual_stages", "the {} layers of each middle pipeline stage do not split into {} chunks", rest / middle, v);
  }

  void training(const TrainingSpec &t) {
    int64_t gb = t.globalBatch, mb = t.microBatch;
    int64_t dp = par.dp;
    if (mb > 0 && dp > 0 && gb % (mb * dp) != 0)
      fail("training.global_batch", "global_batch = {} is not a multiple of micro_batch*dp = {}*{}", gb, mb, dp);
    divides("cp", t.seq, "tokens of a sequence");
    if (mb * t.seq > kMaxTokensInFlight)
      fail("training.micro_batch", "micro_batch*seq = {}*{} tokens per microbatch are more than {}", mb, t.seq,
           kMaxTokensInFlight);
    bool interleaved = t.schedule == Schedule::Interleaved;
    int64_t v = t.virtualStages, pp = par.pp;
    if (interleaved && (pp < 2 || v < 2))
      fail("training.schedule", "an interleaved schedule needs pp >= 2 and virtual_stages >= 2 (pp = {}, virtual_stages = {})", pp, v);
    if (!interleaved && v != 1)
      fail("training.virtual_stages", "virtual_stages = {} needs schedule = interleaved", v);
    int64_t micro = mb > 0 && dp > 0 ? gb / (mb * dp) : 0;
    int64_t perStage = pp > 0 ? (m.layers + pp - 1) / pp : 0; // the deepest stage's, about
    if (perStage > 0 && micro > kMaxLayerPasses / perStage)
      fail("training.global_batch",
           "global_batch/(micro_batch*dp) = {}/({}*{}) = {} microbatches per step through {} layers a stage are more "
           "than {} layer passes to simulate; raise micro_batch, dp or pp",
           gb, mb, dp, micro, perStage, kMaxLayerPasses);
    if (interleaved && pp > 0 && micro % pp != 0)
      fail("training.global_batch", "an interleaved schedule needs the {} microbatches to be a multiple of pp = {}", micro, pp);
    if (int64_t g = t.shardGroup; g > 0) {
      if (dp > 0 && dp % g != 0)
        fail("training.shard_group", "shard_group = {} does not divide dp = {}: hybrid sharding splits the data-parallel "
             "ranks into groups of shard_group", g, dp);
      if (t.zero == 0 && !t.fsdp)
        fail("training.shard_group", "shard_group = {} shards ZeRO's state, but training.zero is 0 (set zero = 1 to 3 or "
             "fsdp = on)", g);
    }
  }

  void inference(const InferenceSpec &i) {
    divides("cp", i.prefill, "prompt tokens");
    if (i.batch * (i.prefill + i.decode) > kMaxTokensInFlight)
      fail("inference.batch", "batch*(prefill + decode) = {}*({} + {}) tokens in flight are more than {}", i.batch,
           i.prefill, i.decode, kMaxTokensInFlight);
  }

  /// A serving run's replicas are engines of their own: each request runs
  /// on one, so a split sequence (cp) is not an engine the scheduler models.
  /// Experts spread over replicas (ep) make ep replicas step together, one
  /// batch at a time: not with a pipeline's several batches in flight.
  void serving(const ServingSpec &s) {
    if (par.cp > 1) fail("parallel.cp", "serving runs whole sequences on each replica (cp = {}); use tp or pp", par.cp);
    if (par.ep > 1 && par.pp > 1)
      fail("parallel.ep", "serving with experts over replicas (ep = {}) runs their steps in lock step, one batch at a "
           "time; a pipeline (pp = {}) keeps several in flight: use pp = 1", par.ep, par.pp);
    if (p.faults && !p.faults->random.empty())
      fail("faults", "fault set '{}' draws random faults, which serving does not sample; give its faults as soft or hard "
           "links", p.faults->name);
    if (s.prefillReplicas > 0 && s.prefillReplicas >= par.dp)
      fail("serving.prefill_replicas", "prefill_replicas = {} leaves no decode replica of dp = {}", s.prefillReplicas,
           par.dp);
    if (s.prefillReplicas > 0 && par.ep > 1)
      fail("serving.prefill_replicas", "disaggregated serving with experts over replicas (ep = {}) is not modelled: "
           "its lock-step groups would mix prefill and decode replicas", par.ep);
    if (s.speculativeTokens > 0 && par.pp > 1)
      fail("serving.speculative_tokens", "speculative decoding with a pipeline (pp = {}) is not modelled: the draft "
           "and the model's check run in one step on each replica; use pp = 1", par.pp);
    if (const std::optional<ModelSpec> &d = p.draftModel) {
      if (d->vocab != m.vocab)
        fail("serving.draft", "draft model '{}' has a vocabulary of {} tokens and '{}' {}: its drafts must be the "
             "model's tokens", d->name, d->vocab, m.name, m.vocab);
      if (d->heads % par.tp != 0 || (d->kvHeads % par.tp != 0 && par.tp % d->kvHeads != 0))
        fail("serving.draft", "draft model '{}' runs with the model's tp = {}, which must divide its {} heads and "
             "divide or be a multiple of its {} key/value heads", d->name, par.tp, d->heads, d->kvHeads);
    }
    if (s.tokenBudget < s.maxBatch && s.scheduler == ServeScheduler::Chunked)
      fail("serving.token_budget", "token_budget = {} is less than max_batch = {}: a step could not decode every sequence",
           s.tokenBudget, s.maxBatch);
  }

  void mapping() {
    if (p.mapping.empty()) return;
    std::map<std::string, int64_t> sizes;
    for (const DimensionSpec &d : p.network.dims) sizes[d.name] = d.size;
    std::set<std::string> usedDegrees, usedDims;
    for (size_t i = 0; i < p.mapping.size(); ++i) {
      const DegreeMapping &m = p.mapping[i];
      llvm::SMRange r = exp.maps[i]->getRange();
      int64_t degrees = 1, ranks = 1;
      for (const std::string &d : m.degrees) {
        if (d != "tp" && d != "cp" && d != "pp" && d != "dp") {
          problems.push_back({fmt::format("'{}' is not a parallel degree to map; expected tp, cp, pp or dp", d), r});
          return;
        }
        if (!usedDegrees.insert(d).second)
          problems.push_back({fmt::format("'{}' is mapped twice", d), r});
        degrees *= degree(d);
      }
      for (const std::string &d : m.dims) {
        if (!sizes.count(d)) {
          problems.push_back({fmt::format("network '{}' has no dimension '{}'{}", p.network.name, d,
                                          didYouMean(d, llvm::make_first_range(sizes))), r});
          return;
        }
        if (!usedDims.insert(d).second)
          problems.push_back({fmt::format("dimension '{}' is mapped twice", d), r});
        ranks *= sizes[d];
      }
      if (degrees != ranks)
        problems.push_back({fmt::format("{} = {} but {} {} {}", llvm::join(m.degrees, "*"), degrees,
                                        llvm::join(m.dims, ", "), m.dims.size() > 1 ? "hold" : "holds",
                                        ranks == 1 ? "1 GPU" : fmt::format("{} GPUs", ranks)), r});
    }
    for (const char *d : {"tp", "cp", "pp", "dp"})
      if (degree(d) > 1 && !usedDegrees.count(d))
        fail("parallel", "{} = {} is not mapped onto any dimension", d, degree(d));
  }

  /// The network must be small enough to build: the runtime's own limit.
  void links() {
    double ranks = double(p.network.gpus), links = 0;
    for (const DimensionSpec &d : p.network.dims) links += net::estimatedLinks(d.kind, double(d.size), ranks);
    if (links > net::kMaxLinks)
      fail("network", "network '{}' has about {} links (a FullyConnected dimension of n has n^2); at most {} are built",
           p.network.name, formatNumber(links), formatNumber(net::kMaxLinks));
  }

  /// The fused attention kernel must be able to run the model's heads.
  void attention() {
    // Serving engines always run fused (paged) attention kernels.
    bool flash = p.training ? p.training->flashAttention : p.inference ? p.inference->flashAttention : true;
    if (!flash) return;
    std::string problem = cost::flashAttentionProblem(p.gpu, m.headDim, p.precision(), p.stack.attention);
    if (!problem.empty())
      problems.push_back({problem, at(exp.fields.count("stack") ? "stack"
                                      : p.training                 ? "training.flash_attention"
                                      : p.inference                ? "inference.flash_attention"
                                                                   : "stack")});
  }

  /// A replay's model, layout and memory are the profile's own: only what
  /// it runs on is checked here (its ranks against the network's when the
  /// traces are read).
  void replay(const ReplaySpec &r) {
    if (r.trace.empty()) fail("replay.trace", "a replay needs its trace folder: trace = \"DIR\" (per-rank Kineto traces)");
    faults();
    if (r.weakScaling && r.collectives == ReplayCollectives::Measured)
      fail("replay.weak_scaling", "a weak-scaled replay runs collectives over more ranks than were profiled, which "
           "have no measured time; set replay.collectives = network");
    if (!r.dataParallel.empty() && !r.weakScaling && !r.tensorParallel)
      fail("replay.data_parallel", "data-parallel groups grow with a weak-scaled world or sit beside the "
           "tensor-parallel groups of a re-sharded one; set replay.weak_scaling = on or replay.tensor_parallel, or "
           "leave data_parallel empty");
    if (r.tensorParallel && r.collectives == ReplayCollectives::Measured)
      fail("replay.tensor_parallel", "a re-sharded replay runs collectives over other ranks than were profiled, "
           "which have no measured time; set replay.collectives = network");
    if (r.tensorParallel && !p.profiledGpu)
      fail("replay.tensor_parallel", "a re-sharded replay re-costs the sharded kernels on the GPU the profile ran "
           "on; name it: replay.profiled_gpu = \"GPU\"");
    if (r.tensorParallel && r.weakScaling && r.dataParallel.empty())
      fail("replay.tensor_parallel", "a re-sharded replay grows only the data-parallel groups it is told of; name "
           "them (replay.data_parallel = \"GROUP\") or set replay.weak_scaling = off");
    if (p.faults && r.collectives == ReplayCollectives::Measured)
      fail("faults", "fault set '{}' acts on the network, but this replay keeps every collective's profiled time; set "
           "replay.collectives = network", p.faults->name);
  }

  void faults() {
    if (!p.faults) return;
    std::map<std::string, int64_t> sizes;
    for (const DimensionSpec &d : p.network.dims) sizes[d.name] = d.size;
    for (const LinkFaultSpec &lf : p.faults->links) {
      auto it = sizes.find(lf.dim);
      if (it == sizes.end())
        fail("faults", "fault set '{}' names dimension '{}' that network '{}' does not have", p.faults->name, lf.dim, p.network.name);
      else if (lf.a >= it->second || lf.b >= it->second || lf.a == lf.b)
        fail("faults", "fault set '{}' names link {}({}, {}) but '{}' has ranks 0 to {}", p.faults->name, lf.dim, lf.a,
             lf.b, lf.dim, it->second - 1);
    }
    int64_t samples = 0;
    for (const RandomFaultSpec &rf : p.faults->random) {
      if (rf.links.name != "all" && !sizes.count(rf.links.name))
        fail("faults", "random fault '{}' draws links from '{}', which network '{}' does not have", rf.name,
             rf.links.name, p.network.name);
      samples += rf.samples; // at most 2^14 each, and fewer faults than a file has tokens
    }
    // Each sample is a simulation of the whole point: however many random
    // faults a set has, they share the limit one of them has.
    if (samples > limit::kSamples)
      fail("faults", "fault set '{}' draws {} samples in all; a fault set draws at most {}", p.faults->name, samples,
           int64_t(limit::kSamples));
  }
};

} // namespace

std::vector<Sema::Problem> Sema::check(const ExperimentPoint &p, const Record &exp) {
  Checker c{p, exp, {}};
  c.run();
  return std::move(c.problems);
}

} // namespace rapid::sema
