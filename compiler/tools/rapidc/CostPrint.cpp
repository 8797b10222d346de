//===- CostPrint.cpp - Text and JSON forms of a cost answer ---------------===//
//
// Text is for people (units chosen per value); JSON is one object per line
// in base units (seconds, bytes, FLOPs) for scripts. Both are stable: fixed
// key order and fixed number formats.
//===----------------------------------------------------------------------===//
#include "CostQuery.h"

#include "rapid/Support/Json.h"

#include "llvm/Support/JSON.h"

#include <fmt/format.h>

using namespace rapid::cost;

namespace rapid::costquery {
namespace {

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

/// Cost answers are estimates: six significant digits say all they know.
constexpr JsonNumber kSix = JsonNumber::SixDigits;

void commonJson(llvm::json::OStream &j, const std::string &q, const GpuSpec &g, const KernelCost &c) {
  j.attribute("query", q);
  j.attribute("hardware", g.name);
  writeNumber(j, "time_s", c.time.value(), kSix);
  j.attribute("bound", llvm::StringRef(nameOf(c.bound)));
  writeNumber(j, "flops", c.flops.value(), kSix);
  j.attributeObject("bytes", [&] {
    writeNumber(j, "smem", c.bytes.smem.value(), kSix);
    writeNumber(j, "l2", c.bytes.l2.value(), kSix);
    writeNumber(j, "hbm", c.bytes.hbm.value(), kSix);
  });
  j.attribute("kernels", c.kernels);
}

void termsJson(llvm::json::OStream &j, const Terms &t) {
  j.attributeObject("terms_s", [&] {
    writeNumber(j, "compute", t.compute.value(), kSix);
    writeNumber(j, "latency", t.latency.value(), kSix);
    writeNumber(j, "smem", t.smem.value(), kSix);
    writeNumber(j, "l2", t.l2.value(), kSix);
    writeNumber(j, "hbm", t.hbm.value(), kSix);
  });
}

/// One answer as a JSON object on one line; `members` writes its members.
void printJson(llvm::raw_ostream &os, llvm::function_ref<void(llvm::json::OStream &)> members) {
  {
    llvm::json::OStream j(os);
    j.object([&] { members(j); });
  }
  os << "\n";
}

} // namespace

void printGemm(const std::string &q, const GpuSpec &g, const GemmCost &c, bool json, llvm::raw_ostream &os) {
  const WaveSchedule &w = c.schedule;
  if (json) {
    printJson(os, [&](llvm::json::OStream &j) {
      commonJson(j, q, g, c);
      j.attribute("kernel", c.gemv ? "gemv" : "tiled");
      j.attributeObject("tile", [&] {
        j.attribute("m", c.tile.m);
        j.attribute("n", c.tile.n);
        j.attribute("k", c.tile.k);
        j.attribute("stages", c.tile.stages);
        j.attribute("warps", c.tile.warps);
        j.attribute("splits", c.tile.splits);
      });
      j.attribute("ctas_per_sm", c.ctasPerSm);
      j.attribute("tiles", c.tiles);
      writeNumber(j, "waves", w.waves, JsonNumber::FourDecimals);
      j.attribute("full_waves", w.fullWaves);
      j.attribute("rounds", w.rounds);
      j.attribute("last_round_ctas", w.lastRoundCtas);
      j.attribute("stream_k", c.streamK);
      termsJson(j, c.terms);
    });
    return;
  }
  printCommonText(q, g, c, os);
  if (c.gemv)
    os << fmt::format("kernel    gemv: {} rows of the matrix per CTA, {} warps, no tensor cores\n", c.tile.m, c.tile.warps);
  else
    os << fmt::format("tile      {}x{}x{} (MxNxK), {} stages, {} warps{}\n", c.tile.m, c.tile.n, c.tile.k,
                    c.tile.stages, c.tile.warps,
                    c.tile.splits > 1 ? fmt::format(", split-K {} (CTAs per C tile)", c.tile.splits) : "");
  os << fmt::format("ctas/sm   {}\ntiles     {}\n", c.ctasPerSm, c.tiles);
  if (c.streamK)
    os << fmt::format("waves     {:.2f} (stream-K: every SM runs {:.2f} CTAs' worth of k-steps)\n", w.waves,
                      double(c.tiles) / double(g.smCount));
  else
    os << fmt::format("waves     {:.2f} (ceil {}; the busiest SM runs {} CTAs in {} rounds, {} in the last)\n",
                      w.waves, w.fullWaves, w.perSm, w.rounds, w.lastRoundCtas);
  printTermsText(c.terms, os);
}

void printAttention(const std::string &q, const GpuSpec &g, const AttentionQuery &a, const AttentionCost &c,
                    bool json, llvm::raw_ostream &os) {
  if (json) {
    printJson(os, [&](llvm::json::OStream &j) {
      commonJson(j, q, g, c);
      if (a.flash) {
        j.attribute("block_q", c.blockQ);
        j.attribute("block_kv", c.blockKv);
        j.attribute("active_blocks", c.activeBlocks);
        j.attribute("total_blocks", c.totalBlocks);
        j.attribute("ctas_per_sm", c.ctasPerSm);
        writeNumber(j, "grid_imbalance", c.imbalance, kSix);
        termsJson(j, c.terms);
        return;
      }
      j.attributeObject("parts_s", [&] {
        writeNumber(j, "scores", c.scores.time.value(), kSix);
        writeNumber(j, "softmax", c.softmax.time.value(), kSix);
        writeNumber(j, "output", c.output.time.value(), kSix);
      });
    });
    return;
  }
  printCommonText(q, g, c, os);
  if (a.flash) {
    os << fmt::format("blocks    {}x{} (query x key), {} of {} per head computed\n", c.blockQ, c.blockKv,
                      c.activeBlocks, c.totalBlocks);
    os << fmt::format("grid      {} CTA{} an SM, {:.3f}x an even spread of the blocks\n", c.ctasPerSm,
                      c.ctasPerSm == 1 ? "" : "s", c.imbalance);
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
    printJson(os, [&](llvm::json::OStream &j) { commonJson(j, q, g, c); });
  else
    printCommonText(q, g, c, os);
}

} // namespace rapid::costquery
