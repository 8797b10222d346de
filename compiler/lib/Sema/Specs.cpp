//===- Specs.cpp ----------------------------------------------------------===//
#include "rapid/Sema/Specs.h"

namespace rapid {
namespace {

double num(const FieldValues &f, const char *path) {
  auto it = f.find(path);
  return it != f.end() && it->second.isNumber() ? it->second.num() : 0;
}
std::string sym(const FieldValues &f, const char *path) {
  auto it = f.find(path);
  return it != f.end() ? it->second.s : "";
}
bool flag(const FieldValues &f, const char *path) {
  auto it = f.find(path);
  return it != f.end() && it->second.b;
}

} // namespace

FlopsPerSecond GpuSpec::peak(DType t) const {
  switch (t) {
  case DType::FP32: return peakFp32;
  case DType::TF32: return peakTf32;
  case DType::BF16: return peakBf16;
  case DType::FP16: return peakFp16;
  case DType::FP8: return peakFp8;
  }
  return peakBf16;
}

GpuSpec gpuSpecFrom(const std::string &name, const FieldValues &f) {
  GpuSpec g;
  g.name = name;
  g.smCount = (int64_t)num(f, "sm_count");
  g.clock = Hertz(num(f, "clock"));
  g.peakFp32 = FlopsPerSecond(num(f, "peak.fp32"));
  g.peakTf32 = FlopsPerSecond(num(f, "peak.tf32"));
  g.peakBf16 = FlopsPerSecond(num(f, "peak.bf16"));
  g.peakFp16 = FlopsPerSecond(num(f, "peak.fp16"));
  g.peakFp8 = FlopsPerSecond(num(f, "peak.fp8"));
  g.registersPerSm = Bytes(num(f, "registers.per_sm"));
  g.smemPerSm = Bytes(num(f, "smem.per_sm"));
  g.smemBandwidth = BytesPerSecond(num(f, "smem.bandwidth"));
  g.l2Capacity = Bytes(num(f, "l2.capacity"));
  g.l2Bandwidth = BytesPerSecond(num(f, "l2.bandwidth"));
  g.hbmCapacity = Bytes(num(f, "hbm.capacity"));
  g.hbmBandwidth = BytesPerSecond(num(f, "hbm.bandwidth"));
  g.hbmLatency = Seconds(num(f, "hbm.latency"));
  g.launchOverhead = Seconds(num(f, "launch_overhead"));
  g.memoryReserve = Bytes(num(f, "memory_reserve"));
  g.calibration = {num(f, "calibration.compute"), num(f, "calibration.hbm"), num(f, "calibration.l2"),
                   num(f, "calibration.network")};
  return g;
}

ModelSpec modelSpecFrom(const std::string &name, const FieldValues &f) {
  ModelSpec m;
  m.name = name;
  m.layers = (int64_t)num(f, "layers");
  m.hidden = (int64_t)num(f, "hidden");
  m.heads = (int64_t)num(f, "heads");
  m.kvHeads = (int64_t)num(f, "kv_heads");
  m.headDim = (int64_t)num(f, "head_dim");
  m.ffn = (int64_t)num(f, "ffn");
  m.vocab = (int64_t)num(f, "vocab");
  m.maxSeq = (int64_t)num(f, "max_seq");
  m.gated = sym(f, "activation") == "swiglu";
  m.rmsNorm = sym(f, "norm") == "rmsnorm";
  m.rotary = sym(f, "position") == "rotary";
  m.learnedPositions = sym(f, "position") == "learned";
  m.tiedEmbeddings = flag(f, "tied_embeddings");
  m.dropout = flag(f, "dropout");
  m.experts = (int64_t)num(f, "moe.experts");
  m.topK = (int64_t)num(f, "moe.top_k");
  m.expertFfn = (int64_t)num(f, "moe.ffn");
  m.moeEvery = (int64_t)num(f, "moe.every");
  m.capacityFactor = num(f, "moe.capacity_factor");
  return m;
}

} // namespace rapid
