//===- Table.cpp - A point's result as a table row and a CSV row ----------===//
//
// Numbers in the CSV are spelled as in the JSON line (shortest round trip),
// so a script reading either file sees the same values.
//===----------------------------------------------------------------------===//
#include "rapid/Driver/Results.h"

#include "rapid/Spec/Specs.h"
#include "rapid/Support/Json.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <fmt/format.h>

namespace rapid {
namespace {

std::string seconds(double s) { return formatSeconds(Seconds(s)); }

std::string status(const PointResult &r) {
  if (!r.error.empty()) return "failed: " + r.error;
  return r.reason.empty() ? "ok" : "pruned: " + r.reason;
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
    mfu = fmt::format("{:.1f}%", 100 * t->mfu);
    tps = fmt::format("{:.0f}", t->tokensPerSecond);
  } else if (const auto &i = r.inference) {
    time = seconds(i->ttft) + " / " + seconds(i->itl);
    tps = fmt::format("{:.0f}", i->tokensPerSecond);
  }
  os << llvm::formatv("{0,-20} {1,-30} {2,5} {3,10} {4,21} {5,6} {6,11}  {7}\n", r.experiment, r.label, r.gpus,
                      memory, time, mfu, tps, status(r));
  for (const FaultStudy &f : r.faultStudies) {
    double base = f.baseline;
    os << fmt::format("    faults {}: {} samples, slowdown mean {:.3f}x, p50 {:.3f}x, p90 {:.3f}x, worst {:.3f}x\n",
                      f.name, f.times.size(), f.mean() / base, f.quantile(0.5) / base, f.quantile(0.9) / base,
                      f.quantile(1.0) / base);
  }
}

std::string csvHeader() {
  return "experiment,sweep,point,workload,feasible,reason,gpus,peak_bytes,capacity_bytes,step_time_s,mfu,"
         "tokens_per_s,compute_s,exposed_communication_s,pipeline_bubble_s,idle_s,ttft_s,itl_s,total_s";
}

std::string csvRow(const PointResult &r) {
  // Quoted text with its own quotes turned into apostrophes: no escaping for
  // spreadsheets to get wrong.
  auto text = [](std::string s) {
    std::replace(s.begin(), s.end(), '"', '\'');
    return "\"" + s + "\"";
  };
  // Absent figures are empty cells.
  auto num = [](bool present, double x) { return present ? jsonNumberText(x) : std::string(); };
  bool mem = r.memory.has_value(), train = r.training.has_value(), infer = r.inference.has_value();
  PointResult::Memory m = r.memory.value_or(PointResult::Memory());
  PointResult::Training t = r.training.value_or(PointResult::Training());
  PointResult::Inference i = r.inference.value_or(PointResult::Inference());
  return fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}", text(r.experiment), text(r.sweep),
                     text(r.label), text(std::string(nameOf(r.workload))), r.feasible && r.error.empty(),
                     text(r.error.empty() ? r.reason : "failed: " + r.error),
                     num(true, double(r.gpus)), num(mem, m.peak), num(mem, m.capacity), num(train, t.stepTime),
                     num(train, t.mfu), num(train || infer, train ? t.tokensPerSecond : i.tokensPerSecond),
                     num(train, t.computeTime), num(train, t.exposedComm), num(train, t.bubble), num(train, t.idle),
                     num(infer, i.ttft),
                     num(infer, i.itl), num(infer, i.total));
}

} // namespace rapid
