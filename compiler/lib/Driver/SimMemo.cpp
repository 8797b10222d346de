//===- SimMemo.cpp - Points that simulate alike, simulated once -----------===//
#include "SimMemo.h"

#include "Hierarchical.h"

#include "llvm/Support/BLAKE3.h"

namespace rapid::run {

SimKey simKey(const ir::Program &prog, const std::string &network, const std::string &system, bool hierarchical,
              bool reduce) {
  llvm::BLAKE3 h;
  std::string buf;
  auto put = [&](const auto &v) { buf.append(reinterpret_cast<const char *>(&v), sizeof v); };
  auto putString = [&](std::string_view s) { put(s.size()), buf.append(s); };
  auto flush = [&] {
    h.update(llvm::StringRef(buf));
    buf.clear();
  };
  put(hierarchical), put(reduce), put(prog.layerBlocks);
  putString(network), putString(system);
  const ir::Layout &l = prog.layout;
  put(l.tp), put(l.cp), put(l.pp), put(l.dp), put(l.ep), put(l.shard), put(l.sp), put(l.virtualStages),
      put(l.microbatches);
  for (int64_t s : l.chunkStart) put(s);
  for (ir::Group g : l.rankOrder) put(g);
  for (int64_t d : l.dimSizes) put(d);
  for (const ir::Graph &g : prog.stages) {
    put(g.stage), put(g.ops.size());
    for (const ir::Op &op : g.ops) {
      appendSignature(buf, op); // kind, phase, group, time, bytes, shape
      putString(op.name);
      put(op.micro), put(op.layer), put(op.peer), put(op.tag), put(op.flops), put(op.bytes), put(op.kernels);
      put(op.deps.size());
      for (uint32_t d : op.deps) put(d);
      if (buf.size() > (1 << 16)) flush();
    }
  }
  flush();
  return h.final();
}

SimKey collectiveKey(const ir::Op &op, const std::vector<int64_t> &members, const std::string &network,
                     const std::string &system) {
  llvm::BLAKE3 h;
  std::string buf;
  auto put = [&](const auto &v) { buf.append(reinterpret_cast<const char *>(&v), sizeof v); };
  put(op.kind), put(op.group), put(op.commBytes), put(members.size());
  for (int64_t m : members) put(m);
  put(network.size()), buf += network;
  put(system.size()), buf += system;
  h.update(llvm::StringRef(buf));
  return h.final();
}

} // namespace rapid::run
