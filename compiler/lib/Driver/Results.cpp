//===- Results.cpp - What `rapidc exp.rapid` prints -----------------------===//
//
// A point's result is one JSON object; the text table and the CSV file are
// views of it, so resumed results (read back from JSON) print the same way.
//===----------------------------------------------------------------------===//
#include "rapid/Driver/Run.h"

#include "rapid/Sema/PointPrinter.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <fmt/format.h>

namespace rapid {
namespace {

std::string seconds(double s) { return formatSeconds(Seconds(s)); }

double num(const llvm::json::Object &o, llvm::StringRef key) { return o.getNumber(key).value_or(0); }

std::string jsonQuote(const std::string &s) {
  std::string out;
  llvm::raw_string_ostream os(out);
  llvm::json::OStream(os).value(s);
  return out;
}

std::string valueJson(const Value &v) {
  std::string out;
  llvm::raw_string_ostream os(out);
  llvm::json::OStream j(os);
  v.writeJson(j);
  return out;
}

} // namespace

std::string resultJson(const ExperimentPoint &p, const RunResult *r) {
  std::string point;
  for (const auto &[name, v] : p.point) point += (point.empty() ? "" : ",") + jsonQuote(name) + ":" + valueJson(v);
  std::string why = !p.feasible ? p.reason : r && !r->memory.fits ? r->memory.reason : "";
  std::string out = fmt::format("{{\"experiment\":{},\"sweep\":{},\"point\":{{{}}},\"label\":{},\"workload\":{},"
                                "\"feasible\":{},\"reason\":{},\"gpus\":{}",
                                jsonQuote(p.experiment), jsonQuote(p.sweep), point,
                                jsonQuote(p.sweep.empty() ? "-" : pointLabel(p)), jsonQuote(std::string(nameOf(p.workload()))), why.empty(),
                                jsonQuote(why), p.network.gpus);
  if (r)
    out += fmt::format(",\"memory\":{{\"peak_bytes\":{:.0f},\"capacity_bytes\":{:.0f}}}", r->memory.worst().peak,
                       r->memory.worst().capacity);
  if (r && r->simulated && p.workload() == Workload::Training)
    out += fmt::format(",\"step_time_s\":{},\"mfu\":{},\"tokens_per_s\":{},\"breakdown\":{{\"compute_s\":{},"
                       "\"exposed_communication_s\":{},\"pipeline_bubble_s\":{}}}",
                       r->stepTime, r->mfu, r->tokensPerSecond, r->computeTime, r->exposedComm, r->bubble);
  if (r && r->simulated && p.workload() == Workload::Inference)
    out += fmt::format(",\"ttft_s\":{},\"itl_s\":{},\"total_s\":{},\"tokens_per_s\":{}", r->ttft, r->itl, r->total,
                       r->tokensPerSecond);
  if (r && !r->faultStudies.empty()) {
    std::string studies;
    for (const FaultStudy &f : r->faultStudies) {
      std::string times;
      for (double t : f.times) times += fmt::format("{}{}", times.empty() ? "" : ",", t);
      studies += fmt::format("{}{{\"name\":{},\"samples\":{},\"baseline_s\":{},\"mean_s\":{},\"p50_s\":{},"
                             "\"p90_s\":{},\"max_s\":{},\"mean_slowdown\":{},\"times_s\":[{}]}}",
                             studies.empty() ? "" : ",", jsonQuote(f.name), f.times.size(), f.baseline, f.mean(),
                             f.quantile(0.5), f.quantile(0.9), f.quantile(1.0), f.mean() / f.baseline, times);
    }
    out += ",\"fault_studies\":[" + studies + "]";
  }
  return out + "}";
}

void printResultHeader(llvm::raw_ostream &os) {
  os << llvm::formatv("{0,-20} {1,-30} {2,5} {3,10} {4,21} {5,6} {6,11}  {7}\n", "experiment", "point", "GPUs",
                      "memory", "step | TTFT / ITL", "MFU", "tokens/s", "status");
}

void printResultRow(const std::string &json, llvm::raw_ostream &os) {
  llvm::Expected<llvm::json::Value> v = llvm::json::parse(json);
  const llvm::json::Object *o = v ? v->getAsObject() : nullptr;
  if (!o) { // our own output always parses; say so loudly if it does not
    llvm::consumeError(v.takeError());
    os << "<unreadable result>\n";
    return;
  }
  std::string memory = "-", time = "-", mfu = "-", tps = "-";
  if (const llvm::json::Object *m = o->getObject("memory")) memory = formatBytes(Bytes(num(*m, "peak_bytes")));
  if (o->get("step_time_s")) {
    time = seconds(num(*o, "step_time_s"));
    mfu = fmt::format("{:.1f}%", 100 * num(*o, "mfu"));
  } else if (o->get("ttft_s")) {
    time = seconds(num(*o, "ttft_s")) + " / " + seconds(num(*o, "itl_s"));
  }
  if (o->get("tokens_per_s")) tps = fmt::format("{:.0f}", num(*o, "tokens_per_s"));
  std::string why = o->getString("reason").value_or("").str();
  os << llvm::formatv("{0,-20} {1,-30} {2,5} {3,10} {4,21} {5,6} {6,11}  {7}\n",
                      o->getString("experiment").value_or("").str(), o->getString("label").value_or("-").str(),
                      int64_t(num(*o, "gpus")), memory,
                      time, mfu, tps, why.empty() ? std::string("ok") : "pruned: " + why);
  if (const llvm::json::Array *studies = o->getArray("fault_studies"))
    for (const llvm::json::Value &v : *studies) {
      const llvm::json::Object *f = v.getAsObject();
      double base = num(*f, "baseline_s");
      os << fmt::format("    faults {}: {} samples, slowdown mean {:.3f}x, p50 {:.3f}x, p90 {:.3f}x, worst {:.3f}x\n",
                        f->getString("name").value_or("").str(), int64_t(num(*f, "samples")),
                        num(*f, "mean_s") / base, num(*f, "p50_s") / base, num(*f, "p90_s") / base,
                        num(*f, "max_s") / base);
    }
}

} // namespace rapid
