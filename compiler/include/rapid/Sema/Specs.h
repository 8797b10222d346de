//===- Specs.h - Typed views of resolved declarations ----------*- C++ -*-===//
//
// Sema resolves declarations into FieldValues (dotted path -> Value, base
// units). Later stages read them through these structs, with units in the
// types, so the cost model never sees a raw double of unknown meaning.
//===----------------------------------------------------------------------===//
#pragma once

#include "rapid/Sema/Sema.h"
#include "rapid/Support/DType.h"
#include "rapid/Support/Units.h"

namespace rapid {

struct GpuSpec {
  std::string name;
  int64_t smCount = 0;
  Hertz clock;
  FlopsPerSecond peakFp32, peakTf32, peakBf16, peakFp16, peakFp8;
  Bytes registersPerSm, smemPerSm;
  BytesPerSecond smemBandwidth;
  Bytes l2Capacity;
  BytesPerSecond l2Bandwidth;
  Bytes hbmCapacity;
  BytesPerSecond hbmBandwidth;
  Seconds hbmLatency;
  Seconds launchOverhead;
  Bytes memoryReserve;
  /// Achieved / peak, from the GPU's declaration (docs/language.md).
  struct Calibration {
    double compute = 1, hbm = 1, l2 = 1, network = 1;
  } calibration;

  /// Dense peak for math in `t` (tensor cores for all but FP32).
  FlopsPerSecond peak(DType t) const;
};

struct ModelSpec {
  std::string name;
  int64_t layers = 0, hidden = 0, heads = 0, kvHeads = 0, headDim = 0, ffn = 0, vocab = 0, maxSeq = 0;
  bool gated = false;      ///< SwiGLU: three MLP matrices
  bool rmsNorm = false;
  bool rotary = false, learnedPositions = false;
  bool tiedEmbeddings = false;
  bool dropout = false;
  int64_t experts = 1, topK = 1, expertFfn = 0, moeEvery = 1;
  double capacityFactor = 1;
};

GpuSpec gpuSpecFrom(const std::string &name, const FieldValues &f);
ModelSpec modelSpecFrom(const std::string &name, const FieldValues &f);

/// Resolves one declaration of `kind` by name, from the standard library file
/// `std.<stdlibModule>` and any extra files: for queries such as
/// `rapidc --cost ... --hardware a100_sxm_80gb`. Reports problems to `diags`.
std::optional<FieldValues> resolveDeclaration(const std::string &kind, const std::string &name,
                                              const std::vector<std::string> &imports,
                                              const SemaOptions &opts, DiagnosticEngine &diags);

} // namespace rapid
