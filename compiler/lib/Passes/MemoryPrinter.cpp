//===- MemoryPrinter.cpp - `--emit=memory` --------------------------------===//
#include "rapid/Passes/Memory.h"

#include "rapid/Sema/PointPrinter.h"
#include "rapid/Support/Json.h"

#include "llvm/Support/JSON.h"

#include <fmt/format.h>

namespace rapid {

void printMemoryText(const MemoryReport &r, const ir::MemoryFacts &mf, const ExperimentPoint &p,
                     llvm::raw_ostream &os) {
  os << "memory of " << p.experiment;
  if (!p.sweep.empty()) os << " (sweep " << p.sweep << ": " << pointLabel(p) << ")";
  os << (r.fits ? ": fits\n" : ": does not fit: " + r.reason + "\n");
  auto b = [](double x) { return formatBytes(Bytes(x)); };
  if (mf.training && !mf.stored.empty())
    os << fmt::format("  per layer and microbatch: {} kept for backward ({:.0f} B), {} recomputed ({:.0f} B)\n",
                      b(mf.stored[0]), mf.stored[0], b(mf.recompute[0]), mf.recompute[0]);
  for (const StageMemory &s : r.stages) {
    os << fmt::format("  stage {} (rank {}): weights {}, gradients {}, optimizer {}, activations {}, kv cache {}, "
                      "reserve {}, comm buffers {}; peak {} of {}, headroom {}\n",
                      s.stage, s.rank, b(s.weights), b(s.gradients), b(s.optimizer), b(s.activations), b(s.kvCache),
                      b(s.reserve), b(s.commBuffers), b(s.peak), b(s.capacity), b(s.headroom()));
  }
}

void printMemoryJson(const MemoryReport &r, const ExperimentPoint &p, llvm::raw_ostream &os) {
  {
    llvm::json::OStream j(os);
    j.object([&] {
      j.attribute("experiment", p.experiment);
      j.attribute("sweep", p.sweep);
      j.attribute("feasible", r.fits);
      j.attribute("reason", r.reason);
      j.attributeArray("stages", [&] {
        for (const StageMemory &s : r.stages)
          j.object([&] {
            j.attribute("stage", s.stage);
            j.attribute("rank", s.rank);
            writeNumber(j, "weights_bytes", s.weights, JsonNumber::Whole);
            writeNumber(j, "gradients_bytes", s.gradients, JsonNumber::Whole);
            writeNumber(j, "optimizer_bytes", s.optimizer, JsonNumber::Whole);
            writeNumber(j, "activations_bytes", s.activations, JsonNumber::Whole);
            writeNumber(j, "kv_cache_bytes", s.kvCache, JsonNumber::Whole);
            writeNumber(j, "reserve_bytes", s.reserve, JsonNumber::Whole);
            writeNumber(j, "comm_buffers_bytes", s.commBuffers, JsonNumber::Whole);
            writeNumber(j, "peak_bytes", s.peak, JsonNumber::Whole);
            writeNumber(j, "capacity_bytes", s.capacity, JsonNumber::Whole);
          });
      });
    });
  }
  os << "\n";
}

} // namespace rapid
