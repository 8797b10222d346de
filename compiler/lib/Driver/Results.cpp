//===- Results.cpp - A point's result and its JSON line -------------------===//
//
// The JSON line is what `--format=json` prints, what PREFIX.jsonl holds and
// what the journal of a sweep is made of, so the writer and its reader live
// side by side: every key the writer prints, the reader takes back, and
// numbers printed in their shortest round-trip form read back as the same
// doubles, so a resumed point prints the same bytes as before.
//===----------------------------------------------------------------------===//
#include "rapid/Driver/Results.h"

#include "rapid/Sema/PointPrinter.h"
#include "rapid/Spec/Specs.h"
#include "rapid/Support/Json.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/JSON.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace rapid {

std::optional<double> PointResult::headline() const {
  if (training) return training->stepTime;
  if (inference) return inference->total;
  if (serving) return serving->e2e.mean;
  return std::nullopt;
}

std::string PointResult::key() const { return experiment + "\x1f" + sweep + "\x1f" + label; }

namespace {
/// "61 % of requests within TTFT 2 s and TPOT 100 ms; 90 % needed", or ""
/// when the point meets its targets or sets none.
std::string sloMissed(const ServingSpec &s, double attainment) {
  if ((s.sloTtft.value() == 0 && s.sloTpot.value() == 0) || attainment >= s.sloAttainment) return "";
  std::vector<std::string> targets;
  if (s.sloTtft.value() > 0) targets.push_back("TTFT " + formatSeconds(s.sloTtft));
  if (s.sloTpot.value() > 0) targets.push_back("TPOT " + formatSeconds(s.sloTpot));
  return fmt::format("{:.0f} % of requests within {}; {:.0f} % needed", 100 * attainment,
                     llvm::join(targets, " and "), 100 * s.sloAttainment);
}
} // namespace

PointResult makeResult(const ExperimentPoint &p, const RunResult *run) {
  PointResult r;
  r.experiment = p.experiment;
  r.sweep = p.sweep;
  r.point = p.point;
  if (!p.sweep.empty()) r.label = pointLabel(p);
  r.workload = p.workload();
  r.search = p.search;
  r.reason = !p.feasible ? p.reason : run && !run->memory.fits ? run->memory.reason : "";
  r.feasible = r.reason.empty();
  r.gpus = p.network.gpus;
  if (!run) return r;
  // Whole bytes, as printed: the table and the CSV show what the JSON holds.
  if (!run->memory.stages.empty()) { // a replay's memory is the profile's own, not modelled
    const StageMemory &worst = run->memory.worst();
    r.memory = PointResult::Memory{std::nearbyint(worst.peak), std::nearbyint(worst.capacity)};
  }
  if (run->simulated && (r.workload == Workload::Training || r.workload == Workload::Replay))
    r.training = PointResult::Training{run->stepTime,    run->mfu,         run->tokensPerSecond,
                                       run->computeTime, run->exposedComm, run->bubble,
                                       run->idle,        run->layerForward,  run->layerBackward,
                                       run->exposedByGroup,
                                       run->hierarchical ? "hierarchical" : "flattened",
                                       run->simulatedRanks,
                                       run->replayed};
  if (run->simulated && r.workload == Workload::Inference)
    r.inference = PointResult::Inference{run->ttft, run->itl, run->total, run->tokensPerSecond};
  if (run->simulated && run->serving) {
    const serve::Result &s = *run->serving;
    PointResult::Serving &out = r.serving.emplace(PointResult::Serving{});
    out.requests = int64_t(s.requests.size()), out.steps = s.steps, out.preemptions = s.preemptions;
    out.kvBlocks = run->kvBlocks;
    out.duration = s.duration, out.requestsPerSecond = s.requestsPerSecond;
    out.outputTokensPerSecond = s.outputTokensPerSecond, out.kvPeak = s.kvPeak, out.kvMean = s.kvMean;
    out.prefixHitRate = s.prefixHitRate;
    if (p.serving->prefillReplicas > 0) out.kvTransfer = s.transfer;
    out.ttft = s.ttft, out.tpot = s.tpot, out.itl = s.itl, out.e2e = s.e2e;
    out.sloAttainment = s.sloAttainment, out.goodput = s.goodput;
    out.sloMissed = sloMissed(*p.serving, s.sloAttainment);
    out.records = s.requests;
    out.occupancy = s.occupancy;
  }
  r.faultStudies = run->faultStudies;
  r.bound = run->lowerBound;
  return r;
}

void markPareto(std::vector<PointResult> &results) {
  auto ran = [](const PointResult &r) { return r.search && r.feasible && r.error.empty() && r.memory && r.headline(); };
  for (PointResult &a : results) {
    a.pareto = false;
    if (!ran(a)) continue;
    double t = *a.headline(), m = a.memory->peak;
    a.pareto = std::none_of(results.begin(), results.end(), [&](const PointResult &b) {
      if (&b == &a || !ran(b) || b.experiment != a.experiment || b.sweep != a.sweep) return false;
      double bt = *b.headline(), bm = b.memory->peak;
      return bt <= t && bm <= m && (bt < t || bm < m);
    });
  }
}

PointResult failedResult(const ExperimentPoint &p, std::string error) {
  PointResult r = makeResult(p, nullptr);
  r.error = std::move(error);
  return r;
}

std::string resultJson(const PointResult &r, llvm::StringRef fingerprint) {
  std::string out;
  llvm::raw_string_ostream os(out);
  llvm::json::OStream j(os);
  j.object([&] {
    if (!fingerprint.empty()) j.attribute("fingerprint", fingerprint);
    j.attribute("experiment", r.experiment);
    j.attribute("sweep", r.sweep);
    writeSweptValues(j, r.point);
    j.attribute("label", r.label);
    j.attribute("workload", llvm::StringRef(nameOf(r.workload)));
    j.attribute("feasible", r.feasible);
    j.attribute("reason", r.reason);
    if (!r.error.empty()) j.attribute("error", r.error);
    if (r.search) j.attribute("pareto", r.pareto);
    j.attribute("gpus", r.gpus);
    if (r.memory)
      j.attributeObject("memory", [&] {
        writeNumber(j, "peak_bytes", r.memory->peak, JsonNumber::Whole);
        writeNumber(j, "capacity_bytes", r.memory->capacity, JsonNumber::Whole);
      });
    if (r.bound) writeNumber(j, "bound_s", *r.bound);
    if (!r.dominatedBy.empty()) j.attribute("dominated_by", r.dominatedBy);
    if (const auto &t = r.training) {
      writeNumber(j, "step_time_s", t->stepTime);
      if (r.workload != Workload::Replay) { // a profile says no model FLOPs or tokens
        writeNumber(j, "mfu", t->mfu);
        writeNumber(j, "tokens_per_s", t->tokensPerSecond);
      }
      j.attributeObject("breakdown", [&] {
        writeNumber(j, "compute_s", t->computeTime);
        writeNumber(j, "exposed_communication_s", t->exposedComm);
        writeNumber(j, "pipeline_bubble_s", t->bubble);
        writeNumber(j, "idle_s", t->idle);
        j.attributeObject("exposed_by_group_s", [&] {
          const ExposedByGroup &e = t->exposedByGroup;
          for (auto [name, s] : {std::pair{"tp", e.tp}, {"cp", e.cp}, {"pp", e.pp}, {"dp", e.dp}, {"ep", e.ep}})
            writeNumber(j, name, s);
        });
        writeNumber(j, "layer_forward_s", t->layerForward);
        writeNumber(j, "layer_backward_s", t->layerBackward);
      });
      j.attributeObject("simulation", [&] {
        j.attribute("mode", t->mode);
        j.attribute("ranks", t->simulatedRanks);
        j.attribute("replayed", t->replayed);
      });
    }
    if (const auto &i = r.inference) {
      writeNumber(j, "ttft_s", i->ttft);
      writeNumber(j, "itl_s", i->itl);
      writeNumber(j, "total_s", i->total);
      writeNumber(j, "tokens_per_s", i->tokensPerSecond);
    }
    if (const auto &s = r.serving)
      j.attributeObject("serving", [&] {
        j.attribute("requests", s->requests);
        writeNumber(j, "duration_s", s->duration);
        writeNumber(j, "requests_per_s", s->requestsPerSecond);
        writeNumber(j, "output_tokens_per_s", s->outputTokensPerSecond);
        std::vector<std::pair<const char *, const serve::Summary *>> sums{
            {"ttft_s", &s->ttft}, {"tpot_s", &s->tpot}, {"itl_s", &s->itl}, {"e2e_s", &s->e2e}};
        if (s->kvTransfer) sums.push_back({"kv_transfer_s", &*s->kvTransfer});
        for (auto [name, sum] : sums)
          j.attributeObject(name, [&] {
            writeNumber(j, "mean", sum->mean);
            writeNumber(j, "p50", sum->p50);
            writeNumber(j, "p90", sum->p90);
            writeNumber(j, "p99", sum->p99);
          });
        j.attribute("steps", s->steps);
        j.attribute("preemptions", s->preemptions);
        j.attribute("kv_blocks", s->kvBlocks);
        writeNumber(j, "kv_peak", s->kvPeak);
        writeNumber(j, "kv_mean", s->kvMean);
        writeNumber(j, "prefix_hit_rate", s->prefixHitRate);
        writeNumber(j, "slo_attainment", s->sloAttainment);
        writeNumber(j, "goodput_requests_per_s", s->goodput);
        j.attribute("slo_missed", s->sloMissed);
      });
    if (r.faultStudies.empty()) return;
    j.attributeArray("fault_studies", [&] {
      for (const FaultStudy &f : r.faultStudies)
        j.object([&] {
          j.attribute("name", f.name);
          j.attribute("samples", int64_t(f.times.size()));
          writeNumber(j, "baseline_s", f.baseline);
          writeNumber(j, "mean_s", f.mean());
          writeNumber(j, "p50_s", f.quantile(0.5));
          writeNumber(j, "p90_s", f.quantile(0.9));
          writeNumber(j, "max_s", f.quantile(1.0));
          writeNumber(j, "mean_slowdown", f.mean() / f.baseline);
          j.attributeArray("times_s", [&] {
            for (double t : f.times) writeNumber(j, t);
          });
        });
    });
  });
  return out;
}

//===----------------------------------------------------------------------===//
// Reading a line back. LLVM's ObjectMapper finds these by argument-dependent
// lookup, so they live in namespace rapid.
//===----------------------------------------------------------------------===//

static bool fromJSON(const llvm::json::Value &v, PointResult::Memory &m, llvm::json::Path p) {
  llvm::json::ObjectMapper o(v, p);
  return o && o.map("peak_bytes", m.peak) && o.map("capacity_bytes", m.capacity);
}

/// Only what a study is drawn from: the summary statistics follow from it.
static bool fromJSON(const llvm::json::Value &v, FaultStudy &f, llvm::json::Path p) {
  llvm::json::ObjectMapper o(v, p);
  return o && o.map("name", f.name) && o.map("baseline_s", f.baseline) && o.map("times_s", f.times);
}

/// A swept value: numbers, switches, names (a name and a string print the
/// same), lists, and distributions as {"dist":..,"args":[..]}.
static bool fromJSON(const llvm::json::Value &v, Value &out, llvm::json::Path p) {
  out = Value::error();
  switch (v.kind()) {
  case llvm::json::Value::Null: return true;
  case llvm::json::Value::Boolean: out = Value::boolean(*v.getAsBoolean()); return true;
  case llvm::json::Value::Number: out = Value::number(*v.getAsNumber()); return true;
  case llvm::json::Value::String: out = Value::symbol(v.getAsString()->str()); return true;
  case llvm::json::Value::Array: out.kind = Value::Kind::List; return fromJSON(v, out.items, p);
  case llvm::json::Value::Object: break;
  }
  llvm::json::ObjectMapper o(v, p);
  out.kind = Value::Kind::Call;
  return o.map("dist", out.s) && o.map("args", out.items);
}

static bool fromJSON(const llvm::json::Value &v, ExposedByGroup &e, llvm::json::Path p) {
  llvm::json::ObjectMapper o(v, p);
  return o && o.map("tp", e.tp) && o.map("cp", e.cp) && o.map("pp", e.pp) && o.map("dp", e.dp) && o.map("ep", e.ep);
}

/// Reads the figures of a simulated training point: at the top level, and
/// rank 0's breakdown in an object of its own.
static bool readTraining(const llvm::json::Value &v, PointResult::Training &t, llvm::json::Path p) {
  llvm::json::ObjectMapper top(v, p);
  const llvm::json::Value *breakdown = v.getAsObject()->get("breakdown");
  if (!breakdown) {
    p.field("breakdown").report("missing value");
    return false;
  }
  llvm::json::ObjectMapper b(*breakdown, p.field("breakdown"));
  const llvm::json::Value *simulation = v.getAsObject()->get("simulation");
  if (!simulation) {
    p.field("simulation").report("missing value");
    return false;
  }
  llvm::json::ObjectMapper s(*simulation, p.field("simulation"));
  return top.map("step_time_s", t.stepTime) && top.mapOptional("mfu", t.mfu) &&
         top.mapOptional("tokens_per_s", t.tokensPerSecond) &&
         b && b.map("compute_s", t.computeTime) && b.map("exposed_communication_s", t.exposedComm) &&
         b.map("pipeline_bubble_s", t.bubble) && b.map("idle_s", t.idle) && b.map("layer_forward_s", t.layerForward) &&
         b.map("layer_backward_s", t.layerBackward) && b.map("exposed_by_group_s", t.exposedByGroup) && s &&
         s.map("mode", t.mode) && s.map("ranks", t.simulatedRanks) &&
         s.map("replayed", t.replayed);
}

static bool readInference(const llvm::json::Value &v, PointResult::Inference &i, llvm::json::Path p) {
  llvm::json::ObjectMapper m(v, p);
  return m.map("ttft_s", i.ttft) && m.map("itl_s", i.itl) && m.map("total_s", i.total) &&
         m.map("tokens_per_s", i.tokensPerSecond);
}

namespace serve {
static bool fromJSON(const llvm::json::Value &v, Summary &s, llvm::json::Path p) {
  llvm::json::ObjectMapper o(v, p);
  return o && o.map("mean", s.mean) && o.map("p50", s.p50) && o.map("p90", s.p90) && o.map("p99", s.p99);
}
} // namespace serve

static bool fromJSON(const llvm::json::Value &v, PointResult::Serving &s, llvm::json::Path p) {
  llvm::json::ObjectMapper o(v, p);
  return o && o.map("requests", s.requests) && o.map("duration_s", s.duration) &&
         o.map("requests_per_s", s.requestsPerSecond) && o.map("output_tokens_per_s", s.outputTokensPerSecond) &&
         o.map("ttft_s", s.ttft) && o.map("tpot_s", s.tpot) && o.map("itl_s", s.itl) && o.map("e2e_s", s.e2e) &&
         o.map("steps", s.steps) && o.map("preemptions", s.preemptions) && o.map("kv_blocks", s.kvBlocks) &&
         o.map("kv_peak", s.kvPeak) && o.map("kv_mean", s.kvMean) && o.map("slo_attainment", s.sloAttainment) &&
         o.map("goodput_requests_per_s", s.goodput) && o.map("slo_missed", s.sloMissed) &&
         o.mapOptional("prefix_hit_rate", s.prefixHitRate) && o.mapOptional("kv_transfer_s", s.kvTransfer);
}

static bool fromJSON(const llvm::json::Value &v, PointResult &r, llvm::json::Path p) {
  llvm::json::ObjectMapper o(v, p);
  std::string workload;
  if (!o || !o.map("experiment", r.experiment) || !o.map("sweep", r.sweep) || !o.map("label", r.label) ||
      !o.map("workload", workload) || !o.map("feasible", r.feasible) || !o.map("reason", r.reason) ||
      !o.map("gpus", r.gpus) || !o.map("memory", r.memory) || !o.mapOptional("fault_studies", r.faultStudies) ||
      !o.mapOptional("error", r.error) || !o.mapOptional("bound_s", r.bound) ||
      !o.mapOptional("dominated_by", r.dominatedBy))
    return false;
  if (const llvm::json::Value *pareto = v.getAsObject()->get("pareto")) {
    r.search = true;
    r.pareto = pareto->getAsBoolean().value_or(false);
  }
  for (Workload w : {Workload::None, Workload::Training, Workload::Inference, Workload::Serving, Workload::Replay})
    if (nameOf(w) == workload) r.workload = w;
  if (nameOf(r.workload) != workload) {
    p.field("workload").report("expected training, inference, serving or replay");
    return false;
  }
  const llvm::json::Object &obj = *v.getAsObject();
  const llvm::json::Object *point = obj.getObject("point");
  if (!point) {
    p.field("point").report("expected object");
    return false;
  }
  for (const auto &[name, x] : *point) {
    r.point.emplace_back(name.str(), Value());
    if (!fromJSON(x, r.point.back().second, p.field("point").field(name))) return false;
  }
  std::sort(r.point.begin(), r.point.end(), [](const auto &a, const auto &b) { return a.first < b.first; });
  // emplace(T{}), not emplace(): clang does not see the nested structs'
  // default member initializers when std::optional checks is_constructible.
  if (obj.get("step_time_s") && !readTraining(v, r.training.emplace(PointResult::Training{}), p)) return false;
  if (obj.get("ttft_s") && !readInference(v, r.inference.emplace(PointResult::Inference{}), p)) return false;
  if (const llvm::json::Value *s = obj.get("serving"))
    if (!fromJSON(*s, r.serving.emplace(PointResult::Serving{}), p.field("serving"))) return false;
  return true;
}

llvm::Expected<PointResult> readResult(llvm::StringRef line, std::string *fingerprint) {
  llvm::Expected<llvm::json::Value> v = llvm::json::parse(line);
  if (!v) return v.takeError();
  if (fingerprint && v->getAsObject())
    *fingerprint = v->getAsObject()->getString("fingerprint").value_or("").str();
  PointResult r;
  llvm::json::Path::Root root("result");
  if (!fromJSON(*v, r, root)) return root.getError();
  return r;
}

} // namespace rapid
