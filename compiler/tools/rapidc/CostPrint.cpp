//===- CostPrint.cpp - Text and JSON forms of a cost answer ---------------===//
//
// Text is for people (units chosen per value); JSON is one object per line
// in base units (seconds, bytes, FLOPs) for scripts. Both are stable: fixed
// key order and fixed number formats.
//===----------------------------------------------------------------------===//
#include "CostQuery.h"

#include <fmt/format.h>

using namespace rapid::cost;

namespace rapid::costquery {
namespace {

std::string jsonEscape(const std::string &s) {
  std::string out;
  for (unsigned char c : s) {
    if (c == '"' || c == '\\')
      out += {'\\', char(c)};
    else if (c < 0x20) // control characters, a tab in a query included
      out += fmt::format("\\u{:04x}", c);
    else
      out += char(c);
  }
  return out;
}

void printCommonText(const std::string &q, const GpuSpec &g, const KernelCost &c, llvm::raw_ostream &os) {
  os << fmt::format("query     {}\nhardware  {}\n", q, g.name);
  os << fmt::format("time      {}\nbound     {}\n", formatSeconds(c.time), nameOf(c.bound));
  os << fmt::format("flops     {:.4g}\n", c.flops.value());
  os << fmt::format("traffic   smem {}, l2 {}, hbm {}\n", formatBytes(c.bytes.smem), formatBytes(c.bytes.l2),
                    formatBytes(c.bytes.hbm));
  os << fmt::format("kernels   {}\n", c.kernels);
}

void printTermsText(const Terms &t, llvm::raw_ostream &os) {
  os << fmt::format("terms     compute {}, latency {}, smem {}, l2 {}, hbm {}\n", formatSeconds(t.compute),
                    formatSeconds(t.latency), formatSeconds(t.smem), formatSeconds(t.l2), formatSeconds(t.hbm));
}

std::string commonJson(const std::string &q, const GpuSpec &g, const KernelCost &c) {
  return fmt::format("\"query\":\"{}\",\"hardware\":\"{}\",\"time_s\":{:.6g},\"bound\":\"{}\",\"flops\":{:.6g},"
                     "\"bytes\":{{\"smem\":{:.6g},\"l2\":{:.6g},\"hbm\":{:.6g}}},\"kernels\":{}",
                     jsonEscape(q), jsonEscape(g.name), c.time.value(), nameOf(c.bound), c.flops.value(),
                     c.bytes.smem.value(), c.bytes.l2.value(), c.bytes.hbm.value(), c.kernels);
}

std::string termsJson(const Terms &t) {
  return fmt::format("\"terms_s\":{{\"compute\":{:.6g},\"latency\":{:.6g},\"smem\":{:.6g},\"l2\":{:.6g},"
                     "\"hbm\":{:.6g}}}",
                     t.compute.value(), t.latency.value(), t.smem.value(), t.l2.value(), t.hbm.value());
}

} // namespace

void printGemm(const std::string &q, const GpuSpec &g, const GemmCost &c, bool json, llvm::raw_ostream &os) {
  const WaveSchedule &w = c.schedule;
  if (json) {
    os << "{" << commonJson(q, g, c)
       << fmt::format(",\"tile\":{{\"m\":{},\"n\":{},\"k\":{},\"stages\":{},\"warps\":{}}},\"ctas_per_sm\":{},"
                      "\"tiles\":{},\"waves\":{:.4f},\"full_waves\":{},\"rounds\":{},\"last_round_ctas\":{},",
                      c.tile.m, c.tile.n, c.tile.k, c.tile.stages, c.tile.warps, c.ctasPerSm, c.tiles, w.waves,
                      w.fullWaves, w.rounds, w.lastRoundCtas)
       << termsJson(c.terms) << "}\n";
    return;
  }
  printCommonText(q, g, c, os);
  os << fmt::format("tile      {}x{}x{} (MxNxK), {} stages, {} warps\n", c.tile.m, c.tile.n, c.tile.k,
                    c.tile.stages, c.tile.warps);
  os << fmt::format("ctas/sm   {}\ntiles     {}\n", c.ctasPerSm, c.tiles);
  os << fmt::format("waves     {:.2f} (ceil {}; the busiest SM runs {} CTAs in {} rounds, {} in the last)\n",
                    w.waves, w.fullWaves, w.perSm, w.rounds, w.lastRoundCtas);
  printTermsText(c.terms, os);
}

void printAttention(const std::string &q, const GpuSpec &g, const AttentionQuery &a, const AttentionCost &c,
                    bool json, llvm::raw_ostream &os) {
  if (json) {
    os << "{" << commonJson(q, g, c);
    if (a.flash)
      os << fmt::format(",\"block_q\":{},\"block_kv\":{},\"active_blocks\":{},\"total_blocks\":{},", c.blockQ,
                        c.blockKv, c.activeBlocks, c.totalBlocks)
         << termsJson(c.terms);
    else
      os << fmt::format(",\"parts_s\":{{\"scores\":{:.6g},\"softmax\":{:.6g},\"output\":{:.6g}}}",
                        c.scores.time.value(), c.softmax.time.value(), c.output.time.value());
    os << "}\n";
    return;
  }
  printCommonText(q, g, c, os);
  if (a.flash) {
    os << fmt::format("blocks    {}x{} (query x key), {} of {} per head computed\n", c.blockQ, c.blockKv,
                      c.activeBlocks, c.totalBlocks);
    printTermsText(c.terms, os);
    return;
  }
  auto part = [&](const char *name, const KernelCost &k) {
    os << fmt::format("{:<9} {} ({}), hbm {}\n", name, formatSeconds(k.time), nameOf(k.bound),
                      formatBytes(k.bytes.hbm));
  };
  part("scores", c.scores);
  part("softmax", c.softmax);
  part("output", c.output);
}

void printPointwise(const std::string &q, const GpuSpec &g, const KernelCost &c, bool json,
                    llvm::raw_ostream &os) {
  if (json)
    os << "{" << commonJson(q, g, c) << "}\n";
  else
    printCommonText(q, g, c, os);
}

} // namespace rapid::costquery
