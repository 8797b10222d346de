//===- Sweep.cpp - Cartesian products of experiment variants --------------===//
//
// `sweep s over exp { a in [..]; b in [..]; c = expr; where cond; }` gives one
// point per combination of the axes (the first axis varies slowest), with the
// assignments computed and the constraints applied per point. Points that
// cannot run (degrees that do not divide, mappings that do not fit) are kept,
// marked infeasible with the reason, so results can show what was pruned.
//===----------------------------------------------------------------------===//
#include "SemaImpl.h"

#include "llvm/ADT/StringRef.h"

#include <cmath>
#include <functional>
#include <set>

namespace rapid::sema {
namespace {
/// The points of a file's sweeps together, counted before any is expanded
/// (and before `where` drops some): each point is resolved, checked and kept
/// in memory (a few KiB) and then lowered and simulated, so 100,000 already
/// take a few seconds of Sema alone; a sweep that size is a typo or is better
/// split over runs (`--output` and `--resume`).
constexpr size_t kMaxPoints = 100'000;

struct Axis {
  std::string label; ///< as written: "tp"
  std::string path;  ///< resolved: "parallel.tp"
  std::vector<Value> values;
  /// A search's field that follows from the axes before it (dp from the
  /// GPUs left, sp from tp): one value, computed per point.
  std::function<Value(const FieldValues &)> derived;
  bool hidden = false; ///< derived and left out of the point's label
};
/// A computed sweep value that cannot be the field's value (`dp = 8 / 16`)
/// makes the point infeasible rather than the file wrong.
std::string overrideProblem(const KindSchema &schema, const FieldValues &overrides) {
  for (const auto &[path, v] : overrides) {
    const FieldSpec *spec = schema.find(path);
    if (!spec || spec->type != FieldType::Integer || !v.isNumber() || !v.q.dim.isNumber()) continue;
    std::string name = path.substr(path.rfind('.') + 1);
    if (!v.isInteger()) return fmt::format("{} = {} is not a whole number", name, v.str());
    if (spec->bound.low == FieldBound::Low::Positive && v.num() <= 0) return fmt::format("{} = {} is not positive", name, v.str());
    if (v.num() > spec->bound.max) return fmt::format("{} = {} exceeds its limit {}", name, v.str(), formatNumber(spec->bound.max));
  }
  return "";
}

} // namespace

/// Resolves a name written in a sweep to an experiment field path, allowing
/// unique suffixes (`tp`) and fields of referenced declarations (`gpu.l2.capacity`).
static std::string resolveAxisPath(const Record &exp, const ast::Path &p, DiagnosticEngine &diags) {
  std::string name = p.dotted();
  const KindSchema &schema = *exp.schema;
  if (schema.find(name)) return name;
  auto matches = schema.bySuffix(name);
  if (matches.size() == 1) return std::string(matches[0]->path);
  for (auto [head, kind] : {std::pair{"model", "model"}, {"gpu", "gpu"}, {"stack", "stack"}, {"network", "topology"}}) {
    std::string prefix = std::string(head) + ".";
    if (name.rfind(prefix, 0) != 0) continue;
    std::string rest = name.substr(prefix.size());
    if (std::string_view(kind) == "topology" || schemaFor(kind)->find(rest))
      return name; // dimension fields are checked when the topology resolves
  }
  std::vector<std::string> names;
  for (const FieldSpec &f : schema.fields) {
    names.emplace_back(f.path);
    names.emplace_back(f.path.substr(f.path.rfind('.') + 1));
  }
  diags.report(DiagID::SweepAxisUnknown, p.range, name, exp.name(), didYouMean(name, names));
  return "";
}

namespace {

struct SweepPlan {
  const Record *exp = nullptr;
  std::vector<Axis> axes;
  std::vector<std::pair<std::string, const ast::AssignStmt *>> assigns;
  std::vector<const ast::WhereStmt *> wheres;
  size_t total = 1;
  bool search = false;
  /// A search's own constraint: combinations that are no layout of the
  /// network (degrees that do not multiply to its GPUs) are not points.
  std::function<bool(const FieldValues &)> keep;
};

/// A search adds an axis for every layout choice its body leaves open: the
/// parallel degrees over the network's GPUs (tensor parallelism within the
/// first dimension, pipeline stages that split the layers evenly), sequence
/// parallelism with TP, and for training context parallelism, expert
/// parallelism (MoE models), interleaved virtual stages, the micro-batch,
/// recompute and ZeRO stage 1. Combinations whose degrees do not multiply
/// to the GPUs, or that the schedule cannot run, are dropped; the rest are
/// points like a sweep's (docs/language.md).
void addLayoutAxes(Sema &sema, SweepPlan &plan) {
  ExperimentPoint base = sema.resolvePoint(*plan.exp, {});
  int64_t gpus = base.network.gpus, fast = base.network.dims.empty() ? gpus : base.network.dims.front().size;
  std::set<std::string> written;
  for (const Axis &a : plan.axes) written.insert(a.path);
  for (const auto &[path, a] : plan.assigns) written.insert(path);
  auto add = [&](const char *label, const char *path, std::vector<Value> values) {
    if (written.count(path) || values.empty()) return false;
    plan.total = std::min(plan.total * values.size(), kMaxPoints + 1);
    plan.axes.push_back({label, path, std::move(values), {}});
    return true;
  };
  auto num = [](const FieldValues &v, const char *path, double fallback) {
    auto it = v.find(path);
    return it != v.end() && it->second.isNumber() ? it->second.num() : fallback;
  };
  const ParallelSpec par = base.parallel;
  // One value per point, from the axes before it.
  auto derive = [&](const char *label, const char *path, std::function<Value(const FieldValues &)> f,
                    bool hidden = false) {
    if (written.count(path)) return;
    plan.axes.push_back({label, path, {Value::number(0)}, std::move(f), hidden});
  };
  auto divisors = [&](auto fits) {
    std::vector<Value> out;
    for (int64_t d = 1; d <= gpus; ++d)
      if (gpus % d == 0 && fits(d)) out.push_back(Value::number(double(d)));
    return out;
  };
  // Megatron-LM's order of the degrees: tp, cp, pp (and its chunks), dp, ep.
  add("tp", "parallel.tp", divisors([&](int64_t d) { return d <= fast && base.model.heads % d == 0; }));
  if (base.training) {
    // Context parallelism in load-balanced halves (Megatron-LM splits the
    // sequence into 2 x cp chunks) of at least kMinCpTokens tokens a rank:
    // shorter chunks leave attention too little work to hide the K/V
    // exchange, and nobody runs them.
    constexpr int64_t kMinCpTokens = 1024;
    int64_t seq = base.training->seq;
    add("cp", "parallel.cp", divisors([&](int64_t d) { return seq % (2 * d) == 0 && seq / d >= kMinCpTokens; }));
  }
  // Pipeline stages of whole layers: an even share, or (unless the body
  // writes the end stages' layers) Megatron-LM's uneven split with the first
  // and last stage one layer short, which leaves room for the embedding and
  // the head (Llama 3 405B: 126 layers on 16 stages of 8).
  int64_t layers = base.model.layers;
  bool endStages = !written.count("parallel.first_stage_layers") && !written.count("parallel.last_stage_layers");
  auto shortEnds = [=](int64_t pp) {
    return endStages && pp >= 3 && layers % pp != 0 && (layers + 2) % pp == 0 && (layers + 2) / pp >= 2;
  };
  add("pp", "parallel.pp", divisors([&](int64_t d) { return layers % d == 0 || shortEnds(d); }));
  if (endStages)
    for (const char *path : {"parallel.first_stage_layers", "parallel.last_stage_layers"})
      derive(path + 9, path, [=](const FieldValues &v) {
        int64_t pp = int64_t(num(v, "parallel.pp", double(par.pp)));
        return Value::number(shortEnds(pp) ? double((layers + 2) / pp - 1) : 0.0);
      }, /*hidden=*/true);
  bool stagesAxis = false;
  if (base.training && !written.count("training.schedule")) {
    std::vector<Value> chunks;
    for (int64_t v : {1, 2, 4, 8})
      if (base.model.layers % v == 0) chunks.push_back(Value::number(double(v)));
    stagesAxis = add("virtual_stages", "training.virtual_stages", chunks);
  }
  // One chunk a stage is the experiment's own schedule (1F1B for an
  // interleaved one); more are Megatron-LM's interleaved schedule.
  if (stagesAxis) {
    Schedule own = base.training->schedule == Schedule::Interleaved ? Schedule::OneFOneB : base.training->schedule;
    derive("schedule", "training.schedule", [=](const FieldValues &v) {
      return Value::symbol(std::string(nameOf(num(v, "training.virtual_stages", 1) > 1 ? Schedule::Interleaved : own)));
    }, /*hidden=*/true);
  }
  // The GPUs the other degrees leave (a fraction when they do not divide:
  // `keep` drops the point).
  derive("dp", "parallel.dp", [=](const FieldValues &v) {
    double others = num(v, "parallel.tp", double(par.tp)) * num(v, "parallel.cp", double(par.cp)) *
                    num(v, "parallel.pp", double(par.pp));
    return Value::number(double(gpus) / others);
  });
  if ((base.training || base.serving) && base.model.experts > 1)
    add("ep", "parallel.ep", divisors([&](int64_t d) { return base.model.experts % d == 0; }));
  derive("sp", "parallel.sp", [=](const FieldValues &v) { return Value::boolean(num(v, "parallel.tp", double(par.tp)) > 1); });
  // The mapping of the degrees the fast links leave: replicas or pipeline
  // neighbours nearer (one layout where dp or pp is 1).
  const std::string ppFirst(nameOf(RankOrder::PpFirst));
  bool orderAxis = add("rank_order", "parallel.rank_order", {Value::symbol(std::string(nameOf(RankOrder::DpFirst))),
                                                             Value::symbol(ppFirst)});
  if (base.training) {
    std::vector<Value> micro;
    for (int64_t m = 1; m <= std::min<int64_t>(8, base.training->globalBatch); m *= 2) micro.push_back(Value::number(double(m)));
    add("micro_batch", "training.micro_batch", micro);
    // Selective recompute is FlashAttention's own (it recomputes the scores
    // in its backward), so with it on, selective and none are one layout.
    std::vector<Value> recompute{Value::symbol("none"), Value::symbol("full")};
    if (!base.training->flashAttention) recompute.insert(recompute.begin() + 1, Value::symbol("selective"));
    add("recompute", "training.recompute", recompute);
    // Stage 3 (FSDP) too: its layer gathers hide behind the forward where
    // ZeRO 1 and 2 gather after the step, and it is the best layout of the
    // 64-GPU case study (docs/language.md).
    add("zero", "training.zero", {Value::number(0), Value::number(1), Value::number(2), Value::number(3)});
  }
  std::optional<TrainingSpec> training = base.training;
  bool cpWritten = written.count("parallel.cp") > 0, zeroWritten = written.count("training.zero") > 0;
  bool uneven = !endStages && (par.firstStageLayers > 0 || par.lastStageLayers > 0);
  bool serving = base.serving.has_value();
  plan.keep = [=](const FieldValues &v) {
    double tp = num(v, "parallel.tp", double(par.tp)), dp = num(v, "parallel.dp", double(par.dp));
    double pp = num(v, "parallel.pp", double(par.pp)), ep = num(v, "parallel.ep", double(par.ep));
    double cp = num(v, "parallel.cp", double(par.cp));
    if (dp < 1 || dp != std::floor(dp)) return false; // the other degrees do not divide the GPUs
    // TP and CP stay on the fast links (a written cp axis may leave them).
    if (!cpWritten && tp * cp > double(fast)) return false;
    if (orderAxis && (dp == 1 || pp == 1)) {
      auto order = v.find("parallel.rank_order");
      if (order != v.end() && order->second.kind == Value::Kind::Symbol && order->second.s == ppFirst) return false;
    }
    auto sp = v.find("parallel.sp");
    if (sp != v.end() && sp->second.kind == Value::Kind::Bool && sp->second.b != (tp > 1)) return false;
    if (ep > 1 && std::fmod(dp, ep) != 0) return false; // experts spread within the DP group
    if (serving && ep > 1 && pp > 1) return false;       // replicas in lock step run one batch at a time
    if (training) { // whole microbatches per replica
      double micro = num(v, "training.micro_batch", double(training->microBatch));
      double batch = num(v, "training.global_batch", double(training->globalBatch));
      if (std::fmod(batch, micro * dp) != 0) return false;
      // ZeRO shards over the replicas: without any, every stage is stage 0.
      if (!zeroWritten && num(v, "training.zero", 0) > 0 && dp * cp == 1) return false;
      if (stagesAxis) { // chunks of whole layers; interleaving wants pp >= 2 and whole rounds of pp microbatches
        double chunks = num(v, "training.virtual_stages", 1);
        // With short end stages the middle ones hold (layers + 2) / pp layers.
        double stageLayers = shortEnds(int64_t(pp)) ? double((layers + 2) / int64_t(pp)) : double(layers) / pp;
        if (chunks > 1 && (pp < 2 || uneven || std::fmod(stageLayers, chunks) != 0 ||
                           std::fmod(batch / (micro * dp), pp) != 0))
          return false;
      }
    }
    return tp * cp * pp * dp == double(gpus);
  };
}

/// Reads a sweep's statements: axes (with their values), assignments and
/// constraints. Nothing if it has errors (reported).
std::optional<SweepPlan> planSweep(Sema &sema, const ast::Decl &sweep, size_t pointsBefore) {
  DiagnosticEngine &diags = sema.diags;
  const std::string &kind = sweep.kind.name;
  if (!sweep.target) {
    diags.report(DiagID::BaseNotAllowed, sweep.name.range,
                 fmt::format("a {0} names its experiment: '{0} s over exp {{ ... }}'", kind));
    return std::nullopt;
  }
  SweepPlan plan;
  plan.search = kind == "search";
  plan.exp = sema.record(sweep.target->name);
  if (!plan.exp || plan.exp->schema->kind != "experiment") {
    sema.resolveRef(Value::symbol(sweep.target->name, sweep.target->range), "experiment");
    return std::nullopt;
  }
  Evaluator constants(diags, [](const ast::NameExpr &) { return std::nullopt; });
  for (const ast::StmtPtr &s : sweep.body.stmts) {
    if (auto *a = llvm::dyn_cast<ast::AxisStmt>(s.get())) {
      std::string path = resolveAxisPath(*plan.exp, a->path, diags);
      Value v = constants.eval(*a->values);
      if (path.empty() || v.isError()) continue;
      Axis axis{a->path.dotted(), path, v.kind == Value::Kind::List ? v.items : std::vector<Value>{v}, {}};
      // Saturates rather than wraps: ten axes of 100,000 values overflow size_t.
      plan.total = std::min(plan.total * std::max<size_t>(axis.values.size(), 1), kMaxPoints + 1);
      plan.axes.push_back(std::move(axis));
    } else if (auto *a = llvm::dyn_cast<ast::AssignStmt>(s.get())) {
      std::string path = resolveAxisPath(*plan.exp, a->path, diags);
      if (!path.empty()) plan.assigns.emplace_back(path, a);
    } else if (auto *w = llvm::dyn_cast<ast::WhereStmt>(s.get())) {
      plan.wheres.push_back(w);
    } else {
      diags.report(DiagID::BaseNotAllowed, s->getRange(),
                   "a sweep holds axes ('x in [...]'), assignments and 'where' constraints");
    }
  }
  if (diags.hasErrors()) return std::nullopt;
  if (plan.search && plan.exp->sections.count("replay")) {
    diags.report(DiagID::BadOption, sweep.name.range,
                 fmt::format("search '{}' over '{}': a replay's layout is its profile's; sweep its gpu, network, "
                             "faults or replay fields instead",
                             sweep.name.name, plan.exp->name()));
    return std::nullopt;
  }
  if (plan.search) addLayoutAxes(sema, plan);
  if (diags.hasErrors()) return std::nullopt;
  if (pointsBefore + plan.total > kMaxPoints) {
    std::string count = plan.total > kMaxPoints ? fmt::format("more than {}", kMaxPoints) : std::to_string(plan.total);
    std::string before = pointsBefore ? fmt::format(" after {} from the experiments and sweeps before it", pointsBefore) : "";
    diags.report(DiagID::TooManyPoints, sweep.name.range, sweep.name.name, count, before, kMaxPoints);
    return std::nullopt;
  }
  return plan;
}

enum class Outcome { Kept, Dropped, Error };

/// Point `n` of the plan (an odometer over the axes, the last one fastest):
/// its values, assignments, constraints, resolution and feasibility.
Outcome pointAt(Sema &sema, const SweepPlan &plan, size_t n, const std::string &sweepName, ExperimentPoint &out) {
  const Record &exp = *plan.exp;
  FieldValues overrides;
  std::vector<std::pair<std::string, Value>> point;
  for (size_t i = plan.axes.size(), rest = n; i-- > 0;) {
    const Axis &a = plan.axes[i];
    overrides[a.path] = a.values[rest % a.values.size()];
    rest /= a.values.size();
  }
  for (const Axis &a : plan.axes) {
    if (a.derived) overrides[a.path] = a.derived(overrides);
    if (!a.hidden) point.emplace_back(a.label, overrides[a.path]);
  }
  // Assignments see the axes and each other; the scope is rebuilt after each
  // one because it caches what it has evaluated.
  std::optional<RecordScope> scope;
  auto rescope = [&] {
    scope.emplace(sema, *exp.schema, exp.fields, &exp.sections, &overrides, sema.noun(exp), exp.decl->name.range);
  };
  rescope();
  // This point's values as computed, before any type check, so that
  // `where dp >= 1` can drop a point where dp = 0.5.
  auto lookup = [&](const ast::NameExpr &e) -> std::optional<Value> {
    std::string name = e.dotted();
    for (const auto &[path, v] : overrides)
      if (path == name || llvm::StringRef(path).ends_with("." + name)) {
        Value x = v;
        x.range = e.getRange();
        return x;
      }
    return scope->lookup(e);
  };
  bool ok = true;
  for (const auto &[path, a] : plan.assigns) {
    Value v = Evaluator(sema.diags, lookup).eval(*a->values[0]);
    ok &= !v.isError();
    overrides[path] = v;
    point.emplace_back(a->path.dotted(), v);
    rescope();
  }
  if (plan.keep && !plan.keep(overrides)) return Outcome::Dropped;
  for (const ast::WhereStmt *w : plan.wheres) {
    Value c = Evaluator(sema.diags, lookup).eval(*w->cond);
    if (c.isError()) return Outcome::Dropped;
    if (c.kind != Value::Kind::Bool) {
      sema.diags.report(DiagID::ExpectedKind, w->cond->getRange(), "a condition", c.describe());
      return Outcome::Error;
    }
    ok &= c.b;
  }
  if (!ok) return Outcome::Dropped;
  std::string bad = overrideProblem(*exp.schema, overrides);
  if (bad.empty()) out = sema.resolvePoint(exp, overrides);
  out.experiment = exp.name();
  out.sweep = sweepName;
  out.point = std::move(point);
  // A search lays the degrees out in Megatron-LM's order: the experiment's
  // own `map`s were written for its own degrees.
  if (plan.search) out.mapping.clear(), out.search = true;
  std::vector<Sema::Problem> problems = bad.empty() ? sema.check(out, exp) : std::vector<Sema::Problem>{{bad, {}}};
  if (!problems.empty()) {
    out.feasible = false;
    out.reason = problems.front().message;
  }
  return Outcome::Kept;
}

} // namespace

void Sema::expandSweep(const ast::Decl &sweep, std::vector<ExperimentPoint> &out) {
  std::optional<SweepPlan> plan = planSweep(*this, sweep, out.size());
  if (!plan) return;
  size_t kept = 0;
  for (size_t n = 0; n < plan->total; ++n) {
    ExperimentPoint p;
    Outcome o = pointAt(*this, *plan, n, sweep.name.name, p);
    if (o == Outcome::Error) return;
    if (o == Outcome::Kept) {
      p.where = sweep.name.range;
      out.push_back(std::move(p));
      ++kept;
    }
  }
  if (kept == 0)
    diags.report(DiagID::SweepEmpty, sweep.name.range, sweep.name.name);
}

} // namespace rapid::sema
