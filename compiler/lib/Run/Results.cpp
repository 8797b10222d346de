//===- Results.cpp - What `rapidc exp.rapid` prints -----------------------===//
#include "rapid/Run/Run.h"

#include "rapid/Sema/PointPrinter.h"

#include "llvm/Support/FormatVariadic.h"

#include <fmt/format.h>

namespace rapid {
namespace {

/// Why a point does not run, or "" if it does.
std::string prunedBecause(const ExperimentPoint &p, const RunResult *r) {
  if (!p.feasible) return p.reason;
  if (r && !r->memory.fits) return r->memory.reason;
  return "";
}

std::string seconds(double s) { return formatSeconds(Seconds(s)); }

} // namespace

void printResultHeader(llvm::raw_ostream &os) {
  os << llvm::formatv("{0,-20} {1,-30} {2,5} {3,10} {4,21} {5,6} {6,11}  {7}\n", "experiment", "point", "GPUs",
                      "memory", "step | TTFT / ITL", "MFU", "tokens/s", "status");
}

void printResultRow(const ExperimentPoint &p, const RunResult *r, llvm::raw_ostream &os) {
  std::string label = p.sweep.empty() ? "-" : pointLabel(p), memory = "-", time = "-", mfu = "-", tps = "-";
  std::string why = prunedBecause(p, r);
  if (r) memory = formatBytes(Bytes(r->memory.worst().peak));
  if (r && r->simulated) {
    bool training = p.workload == "training";
    time = training ? seconds(r->stepTime) : seconds(r->ttft) + " / " + seconds(r->itl);
    mfu = training ? fmt::format("{:.1f}%", 100 * r->mfu) : "-";
    tps = fmt::format("{:.0f}", r->tokensPerSecond);
  }
  os << llvm::formatv("{0,-20} {1,-30} {2,5} {3,10} {4,21} {5,6} {6,11}  {7}\n", p.experiment, label, p.network.gpus,
                      memory, time, mfu, tps, why.empty() ? std::string("ok") : "pruned: " + why);
}

void printResultJson(const ExperimentPoint &p, const RunResult *r, llvm::raw_ostream &os) {
  std::string point;
  for (const auto &[name, v] : p.point) point += (point.empty() ? "" : ",") + jsonQuote(name) + ":" + v.json();
  std::string why = prunedBecause(p, r);
  std::string out = fmt::format("{{\"experiment\":{},\"sweep\":{},\"point\":{{{}}},\"workload\":{},\"feasible\":{},"
                                "\"reason\":{},\"gpus\":{}",
                                jsonQuote(p.experiment), jsonQuote(p.sweep), point, jsonQuote(p.workload), why.empty(),
                                jsonQuote(why), p.network.gpus);
  if (r)
    out += fmt::format(",\"memory\":{{\"peak_bytes\":{:.0f},\"capacity_bytes\":{:.0f}}}", r->memory.worst().peak,
                       r->memory.worst().capacity);
  if (r && r->simulated && p.workload == "training")
    out += fmt::format(",\"step_time_s\":{},\"mfu\":{},\"tokens_per_s\":{},\"breakdown\":{{\"compute_s\":{},"
                       "\"exposed_communication_s\":{},\"pipeline_bubble_s\":{}}}",
                       r->stepTime, r->mfu, r->tokensPerSecond, r->computeTime, r->exposedComm, r->bubble);
  if (r && r->simulated && p.workload == "inference")
    out += fmt::format(",\"ttft_s\":{},\"itl_s\":{},\"total_s\":{},\"tokens_per_s\":{}", r->ttft, r->itl, r->total,
                       r->tokensPerSecond);
  os << out << "}\n";
}

} // namespace rapid
