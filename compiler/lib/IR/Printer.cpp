//===- Printer.cpp --------------------------------------------------------===//
#include "rapid/IR/Printer.h"

#include <fmt/format.h>

namespace rapid::ir {
namespace {

std::string opLine(const Op &op, size_t idx) {
  std::string s = fmt::format("%{} = {} \"{}\" {}", idx, kindName(op.kind), op.name, phaseName(op.phase));
  if (op.layer >= 0) s += fmt::format(" L{}", op.layer);
  if (op.micro >= 0) s += fmt::format(" mb{}", op.micro);
  if (op.kind == OpKind::Gemm || op.kind == OpKind::FlashAttention || op.kind == OpKind::DecodeAttention) {
    s += fmt::format(" [m={} n={} k={}", op.shape.m, op.shape.n, op.shape.k);
    if (op.shape.batch != 1) s += fmt::format(" batch={}", op.shape.batch);
    s += op.causal ? " causal" : "";
    s += op.dropout ? " dropout]" : "]";
  }
  if (op.isComm()) {
    s += fmt::format(" group={} bytes={}", groupName(op.group), op.commBytes);
    if (op.peer >= 0) s += fmt::format(" peer={} tag={}", op.peer, op.tag);
  } else {
    if (op.strided) s += fmt::format(" [strided elements={:.4g}]", double(op.shape.m));
    s += fmt::format(" {} flops={:.4g}", nameOf(op.dtype), op.flops);
    if (op.bytes > 0) s += fmt::format(" bytes={:.4g}", op.bytes);
    if (op.l2Bytes > 0) s += fmt::format(" l2={:.4g}", op.l2Bytes);
    if (op.smemBytes > 0) s += fmt::format(" smem={:.4g}", op.smemBytes);
  }
  if (!op.isComm() && op.kernels > 1) s += fmt::format(" kernels={}", op.kernels);
  if (op.bound != Bound::None)
    s += fmt::format(" time={:.4g}us bound={}", op.time.value() * 1e6, boundName(op.bound));
  if (!op.deps.empty()) {
    s += " deps=(";
    for (size_t i = 0; i < op.deps.size(); ++i) s += fmt::format("{}%{}", i ? ", " : "", op.deps[i]);
    s += ")";
  }
  return s;
}

/// The layout pass's decisions: which layers each stage runs and how the
/// degrees lie over the ranks.
void printLayout(const Layout &l, llvm::raw_ostream &os) {
  std::string order, dims;
  for (Group g : l.rankOrder) order += fmt::format("{}{}", order.empty() ? "" : ", ", groupName(g));
  for (int64_t d : l.dimSizes) dims += fmt::format("{}{}", dims.empty() ? "" : " x ", d);
  os << fmt::format("// ranks: {} over the network's {} (fastest first)\n", order, dims);
  for (int64_t s = 0; s < l.pp && !l.chunkStart.empty(); ++s) {
    std::string chunks;
    for (int64_t c = 0; c < l.virtualStages; ++c)
      chunks += fmt::format("{}{}", c ? ", " : "",
                            l.layerEnd(c, s) > l.layerBegin(c, s)
                                ? fmt::format("{}-{}", l.layerBegin(c, s), l.layerEnd(c, s) - 1)
                                : std::string("none"));
    os << fmt::format("// stage {}: layers {}\n", s, l.stageLayers(s) > 0 ? chunks : "none");
  }
}

void printMemory(const MemoryReport &r, llvm::raw_ostream &os) {
  auto b = [](double x) { return formatBytes(Bytes(x)); };
  for (const StageMemory &s : r.stages)
    os << fmt::format("// memory of stage {} (rank {}): {} of {} (weights {}, gradients {}, optimizer {}, "
                      "activations {}, kv cache {}, reserve {}, comm buffers {})\n",
                      s.stage, s.rank, b(s.peak), b(s.capacity), b(s.weights), b(s.gradients), b(s.optimizer),
                      b(s.activations), b(s.kvCache), b(s.reserve), b(s.commBuffers));
  if (!r.fits) os << "// does not fit: " << r.reason << "\n";
}

} // namespace

void printProgram(const Program &p, llvm::raw_ostream &os) {
  const Layout &l = p.layout;
  os << fmt::format("program \"{}\" tp={} cp={} pp={} dp={} ep={} sp={} vstages={} microbatches={}\n", p.experiment,
                    l.tp, l.cp, l.pp, l.dp, l.ep, l.sp ? "on" : "off", l.virtualStages, l.microbatches);
  printLayout(l, os);
  for (size_t i = 0; i < p.decode.size(); ++i)
    os << fmt::format("decode sample {} (mb{}): step {}, {} cached tokens, stands for {} steps\n", i, i + 1,
                      p.decode[i].step, p.decode[i].kvLength, p.decode[i].weight);
  for (const Graph &g : p.stages) {
    os << fmt::format("stage {} {{\n", g.stage);
    for (size_t i = 0; i < g.ops.size(); ++i) os << "  " << opLine(g.ops[i], i) << "\n";
    os << "}\n";
  }
  if (p.memoryReport) printMemory(*p.memoryReport, os);
}

const char *opsCsvHeader() { return "point,stage,index,kind,name,phase,layer,micro,group,bytes,flops,time_s,bound,deps"; }

void printOps(const Program &p, const OpFilter &filter, bool csv, llvm::StringRef point, llvm::raw_ostream &os) {
  for (const Graph &g : p.stages) {
    bool opened = false;
    for (size_t i = 0; i < g.ops.size(); ++i) {
      const Op &op = g.ops[i];
      if (!filter.keeps(g, op)) continue;
      if (!csv) {
        if (!opened) os << fmt::format("stage {} {{\n", g.stage);
        opened = true;
        os << "  " << opLine(op, i) << "\n";
        continue;
      }
      std::string deps;
      for (uint32_t d : op.deps) deps += fmt::format("{}{}", deps.empty() ? "" : " ", d);
      // Names are dotted identifiers: no commas or quotes to escape.
      os << fmt::format("{},{},{},{},{},{},{},{},{},{},{:.6g},{:.6g},{},{}\n", point.str(), g.stage, i,
                        kindName(op.kind), op.name,
                        phaseName(op.phase), op.layer, op.micro, op.isComm() ? groupName(op.group) : "",
                        op.isComm() ? op.commBytes : op.bytes, op.flops, op.time.value(),
                        op.bound != Bound::None ? boundName(op.bound) : "", deps);
    }
    if (opened) os << "}\n";
  }
}

double totalFlops(const Program &p, bool withRecompute, bool fullCausal) {
  auto flopsOf = [&](const Op &op) {
    if (op.kind != OpKind::Gemm && op.kind != OpKind::FlashAttention && op.kind != OpKind::DecodeAttention) return 0.0;
    if (!withRecompute && op.phase == Phase::Recompute) return 0.0;
    return fullCausal && op.kind == OpKind::FlashAttention && op.causal ? 2 * op.flops : op.flops;
  };
  double total = 0;
  for (const Graph &g : p.stages) total = sumExpanded(g, flopsOf, total);
  return total * double(p.layout.ranksPerStage());
}

void printSummary(const Program &p, llvm::raw_ostream &os) {
  for (const Graph &g : p.stages) {
    size_t comm = 0;
    double flops = 0, time = 0;
    for (const Op &op : g.ops) {
      comm += op.isComm();
      flops += op.isComm() ? 0 : op.flops;
      time += op.isComm() ? 0 : op.time.value();
    }
    os << fmt::format("// stage {}: {} ops ({} communication), {:.6g} FLOPs per rank, {:.6g} s of compute\n", g.stage,
                      g.ops.size(), comm, flops, time);
  }
  os << fmt::format("// matmul FLOPs per step, all ranks, without recompute: {:.6g}\n", totalFlops(p, false));
  os << fmt::format("// matmul FLOPs per step, all ranks, with recompute: {:.6g}\n", totalFlops(p, true));
}

} // namespace rapid::ir
