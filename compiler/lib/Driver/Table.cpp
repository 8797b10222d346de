//===- Table.cpp - A point's result as a table row and a CSV row ----------===//
//
// Numbers in the CSV are spelled as in the JSON line (shortest round trip),
// so a script reading either file sees the same values.
//===----------------------------------------------------------------------===//
#include "rapid/Driver/Results.h"

#include "rapid/Spec/Specs.h"
#include "rapid/Support/Json.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <algorithm>
#include <fmt/format.h>

namespace rapid {
namespace {

std::string seconds(double s) { return formatSeconds(Seconds(s)); }

std::string status(const PointResult &r) {
  if (!r.error.empty()) return "failed: " + r.error;
  if (!r.reason.empty()) return "pruned: " + r.reason;
  if (!r.dominatedBy.empty()) return "skipped: " + r.dominatedBy + " ran faster and no heavier";
  return r.serving && !r.serving->sloMissed.empty() ? "misses SLO: " + r.serving->sloMissed : "ok";
}

} // namespace

void printResultHeader(llvm::raw_ostream &os) {
  os << llvm::formatv("{0,-20} {1,-30} {2,5} {3,10} {4,21} {5,6} {6,11}  {7}\n", "experiment", "point", "GPUs",
                      "memory", "step | TTFT / ITL", "MFU", "tokens/s", "status");
}

void printResultRow(const PointResult &r, llvm::raw_ostream &os) {
  std::string memory = "-", time = "-", mfu = "-", tps = "-";
  if (r.memory) memory = formatBytes(Bytes(r.memory->peak));
  if (const auto &t = r.training) {
    time = seconds(t->stepTime);
    if (r.workload != Workload::Replay) { // a profile says no model FLOPs or tokens
      mfu = fmt::format("{:.1f}%", 100 * t->mfu);
      tps = fmt::format("{:.0f}", t->tokensPerSecond);
    }
  } else if (const auto &i = r.inference) {
    time = seconds(i->ttft) + " / " + seconds(i->itl);
    tps = fmt::format("{:.0f}", i->tokensPerSecond);
  } else if (r.bound && !r.dominatedBy.empty()) { // a search did not simulate it: at least this long
    time = ">= " + seconds(*r.bound);
  } else if (const auto &s = r.serving) { // medians; the line below has the tails
    time = seconds(s->ttft.p50) + " / " + seconds(s->itl.p50);
    tps = fmt::format("{:.0f}", s->outputTokensPerSecond);
  }
  os << llvm::formatv("{0,-20} {1,-30} {2,5} {3,10} {4,21} {5,6} {6,11}  {7}\n", r.experiment, r.label, r.gpus,
                      memory, time, mfu, tps, status(r));
  if (const auto &s = r.serving) {
    auto tail = [](const serve::Summary &x) {
      return fmt::format("p50 {}, p90 {}, p99 {}", seconds(x.p50), seconds(x.p90), seconds(x.p99));
    };
    os << fmt::format("    serving: {} requests in {}, {:.2f} req/s ({:.2f} within SLO, {:.0f} %); {} preemptions; "
                      "KV cache peak {:.0f} %, mean {:.0f} % of {} blocks\n",
                      s->requests, seconds(s->duration), s->requestsPerSecond, s->goodput, 100 * s->sloAttainment,
                      s->preemptions, 100 * s->kvPeak, 100 * s->kvMean, s->kvBlocks);
    if (s->prefixHitRate > 0) os << fmt::format("      prefix cache: {:.0f} % of prompt tokens hit\n", 100 * s->prefixHitRate);
    os << "      TTFT " << tail(s->ttft) << "\n      ITL  " << tail(s->itl) << "\n      TPOT " << tail(s->tpot)
       << "\n      E2E  " << tail(s->e2e) << "\n";
    if (s->kvTransfer) os << "      KV cache moved to decode replicas in " << tail(*s->kvTransfer) << "\n";
  }
  for (const FaultStudy &f : r.faultStudies) {
    double base = f.baseline;
    os << fmt::format("    faults {}: {} samples, slowdown mean {:.3f}x, p50 {:.3f}x, p90 {:.3f}x, worst {:.3f}x\n",
                      f.name, f.times.size(), f.mean() / base, f.quantile(0.5) / base, f.quantile(0.9) / base,
                      f.quantile(1.0) / base);
  }
}

void printSearchSummary(const std::vector<PointResult> &results, llvm::raw_ostream &os) {
  std::vector<std::string> searches;
  for (const PointResult &r : results)
    if (r.search && std::find(searches.begin(), searches.end(), r.sweep) == searches.end()) searches.push_back(r.sweep);
  for (const std::string &name : searches) {
    std::vector<const PointResult *> all, front;
    const PointResult *best = nullptr;
    for (const PointResult &r : results) {
      if (!r.search || r.sweep != name) continue;
      all.push_back(&r);
      if (!r.pareto) continue;
      front.push_back(&r);
      if (!best || *r.headline() < *best->headline()) best = &r;
    }
    size_t ran = std::count_if(all.begin(), all.end(), [](const PointResult *r) { return r->feasible && r->error.empty(); });
    size_t skipped = std::count_if(all.begin(), all.end(), [](const PointResult *r) { return !r->dominatedBy.empty(); });
    os << fmt::format("search {}: {} of {} layouts fit", name, ran, all.size());
    if (skipped) os << fmt::format(" ({} simulated, {} bounded out)", ran - skipped, skipped);
    if (!best) {
      os << "\n";
      continue;
    }
    os << fmt::format("; best {} at {}\n", best->label, seconds(*best->headline()));
    std::stable_sort(front.begin(), front.end(),
                     [](const PointResult *a, const PointResult *b) { return *a->headline() < *b->headline(); });
    os << "  Pareto front (time, peak memory per GPU):\n";
    for (size_t i = 0; i < front.size();) { // layouts that tie on both are one line
      const PointResult *r = front[i];
      size_t same = 1;
      while (i + same < front.size() && *front[i + same]->headline() == *r->headline() &&
             front[i + same]->memory->peak == r->memory->peak)
        ++same;
      os << fmt::format("    {:<12} {:>10}  {}{}\n", seconds(*r->headline()), formatBytes(Bytes(r->memory->peak)),
                        r->label, same > 1 ? fmt::format(" (and {} more the same)", same - 1) : "");
      i += same;
    }
  }
}

std::string csvHeader() {
  return "experiment,sweep,point,workload,feasible,reason,gpus,peak_bytes,capacity_bytes,step_time_s,mfu,"
         "tokens_per_s,compute_s,exposed_communication_s,pipeline_bubble_s,idle_s,ttft_s,itl_s,total_s,requests_per_s,"
         "ttft_p50_s,ttft_p99_s,itl_p50_s,itl_p99_s,e2e_p50_s,e2e_p99_s,slo_attainment,goodput_requests_per_s,bound_s,"
         "dominated_by";
}

namespace {
/// Quoted text with its own quotes turned into apostrophes: no escaping for
/// spreadsheets to get wrong.
std::string text(std::string s) {
  std::replace(s.begin(), s.end(), '"', '\'');
  return "\"" + s + "\"";
}
} // namespace

std::string requestsCsv(const std::vector<PointResult> &results) {
  std::string out;
  for (const PointResult &r : results) {
    if (!r.serving || r.serving->records.empty()) continue;
    if (out.empty())
      out = "experiment,point,request,replica,sent_s,prompt,output,ttft_s,tpot_s,e2e_s,preemptions,decode_replica,"
            "kv_transfer_s\n";
    for (const serve::RequestRecord &q : r.serving->records) {
      std::optional<double> tpot = q.tpot();
      bool moved = q.decodeReplica >= 0; // disaggregated: its cache moved to a decode replica
      out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{}\n", text(r.experiment), text(r.label), q.id, q.replica,
                         jsonNumberText(q.sent), q.prompt, q.output, jsonNumberText(q.ttft()),
                         tpot ? jsonNumberText(*tpot) : "", jsonNumberText(q.e2e()), q.preemptions,
                         moved ? std::to_string(q.decodeReplica) : "", moved ? jsonNumberText(q.transfer) : "");
    }
  }
  return out;
}

std::string requestsJsonl(const std::vector<PointResult> &results) {
  std::string out;
  for (const PointResult &r : results) {
    if (!r.serving) continue;
    for (const serve::RequestRecord &q : r.serving->records) {
      llvm::raw_string_ostream os(out);
      llvm::json::OStream j(os);
      j.object([&] {
        j.attribute("experiment", r.experiment);
        j.attribute("point", r.label);
        j.attribute("request", q.id);
        j.attribute("replica", q.replica);
        writeNumber(j, "sent_s", q.sent);
        j.attribute("prompt", q.prompt);
        j.attribute("output", q.output);
        writeNumber(j, "ttft_s", q.ttft());
        if (std::optional<double> tpot = q.tpot()) writeNumber(j, "tpot_s", *tpot);
        writeNumber(j, "e2e_s", q.e2e());
        j.attribute("preemptions", q.preemptions);
        if (q.decodeReplica >= 0) {
          j.attribute("decode_replica", q.decodeReplica);
          writeNumber(j, "kv_transfer_s", q.transfer);
        }
      });
      os << "\n";
    }
  }
  return out;
}

std::string kvCsv(const std::vector<PointResult> &results) {
  std::string out;
  for (const PointResult &r : results) {
    if (!r.serving || r.serving->occupancy.empty()) continue;
    if (out.empty()) out = "experiment,point,time_s,replica,blocks,share\n";
    for (const serve::Occupancy &o : r.serving->occupancy)
      out += fmt::format("{},{},{},{},{},{}\n", text(r.experiment), text(r.label), jsonNumberText(o.time), o.replica,
                         o.blocks, jsonNumberText(double(o.blocks) / double(r.serving->kvBlocks)));
  }
  return out;
}

std::string csvRow(const PointResult &r) {
  // Absent figures are empty cells.
  auto num = [](bool present, double x) { return present ? jsonNumberText(x) : std::string(); };
  bool mem = r.memory.has_value(), train = r.training.has_value(), infer = r.inference.has_value();
  PointResult::Memory m = r.memory.value_or(PointResult::Memory());
  PointResult::Training t = r.training.value_or(PointResult::Training());
  PointResult::Inference i = r.inference.value_or(PointResult::Inference());
  bool serving = r.serving.has_value();
  static const PointResult::Serving none;
  const PointResult::Serving &s = serving ? *r.serving : none; // not a copy: it holds every request
  // The tokens/s column: output tokens for serving, as vLLM's benchmark reports.
  double tps = train ? t.tokensPerSecond : infer ? i.tokensPerSecond : s.outputTokensPerSecond;
  bool rates = r.workload != Workload::Replay; // a profile says no model FLOPs or tokens
  return fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
                     text(r.experiment),
                     text(r.sweep),
                     text(r.label), text(std::string(nameOf(r.workload))), r.feasible && r.error.empty(),
                     text(r.error.empty() ? r.reason : "failed: " + r.error),
                     num(true, double(r.gpus)), num(mem, m.peak), num(mem, m.capacity), num(train, t.stepTime),
                     num(train && rates, t.mfu), num((train || infer || serving) && rates, tps),
                     num(train, t.computeTime), num(train, t.exposedComm), num(train, t.bubble), num(train, t.idle),
                     num(infer, i.ttft),
                     num(infer, i.itl), num(infer, i.total), num(serving, s.requestsPerSecond),
                     num(serving, s.ttft.p50), num(serving, s.ttft.p99), num(serving, s.itl.p50),
                     num(serving, s.itl.p99), num(serving, s.e2e.p50), num(serving, s.e2e.p99),
                     num(serving, s.sloAttainment), num(serving, s.goodput), num(r.bound.has_value(), r.bound.value_or(0)),
                     r.dominatedBy.empty() ? "" : text(r.dominatedBy));
}

} // namespace rapid
