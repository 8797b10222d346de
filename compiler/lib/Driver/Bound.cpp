//===- Bound.cpp - A lower bound on a training step -----------------------===//
#include "Bound.h"

#include <algorithm>

namespace rapid::run {

BlockTimes computeBlockTimes(const ir::Program &prog) {
  BlockTimes times(prog.stages.size());
  for (const ir::Graph &g : prog.stages)
    for (const ir::Op &op : g.ops)
      if (op.micro == 0 && !op.isComm())
        if (std::optional<BlockKey> k = blockOf(op)) times[g.stage][*k] += op.time.value();
  return times;
}

double stepLowerBound(const ir::Program &prog, const BlockTimes &times) {
  const ir::Layout &l = prog.layout;
  double before = 0; // sum over the stages before s of F_j + B_j
  double bound = 0;
  for (size_t s = 0; s < times.size(); ++s) {
    double all = 0, first = 0; // one microbatch: every block; the first model chunk's
    for (const auto &[k, t] : times[s]) {
      all += t;
      bool inFirstChunk = k.part == 0 ? k.layer >= l.layerBegin(0, int64_t(s)) && k.layer < l.layerEnd(0, int64_t(s))
                                      : k.part == 1 && s == 0; // the embedding opens the first chunk
      if (inFirstChunk) first += t;
    }
    bound = std::max(bound, before + double(l.microbatches) * all);
    before += first;
  }
  return bound;
}

} // namespace rapid::run
