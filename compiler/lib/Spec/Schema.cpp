//===- Schema.cpp - The field tables, row by row --------------------------===//
//
// Each array below is one *.def table read through `fieldRow<Type>`, which
// derives the row's check (quantity and unit, whole number, choice, ...)
// from the member's C++ type.
//===----------------------------------------------------------------------===//
#include "rapid/Spec/Schema.h"

#include <algorithm>
#include <array>

namespace rapid {
namespace {

constexpr FieldSpec kGpu[] = {
#define RAPID_FIELD(member, path, type, deflt, bound, doc) fieldRow<type>(path, deflt, FieldBound::bound, doc, {}, false),
#include "rapid/Spec/GpuFields.def"
};

constexpr FieldSpec kStack[] = {
#define RAPID_FIELD(member, path, type, deflt, bound, doc) fieldRow<type>(path, deflt, FieldBound::bound, doc, {}, false),
#include "rapid/Spec/StackFields.def"
};

constexpr FieldSpec kModel[] = {
#define RAPID_FIELD(member, path, type, deflt, bound, doc) fieldRow<type>(path, deflt, FieldBound::bound, doc, {}, false),
#include "rapid/Spec/ModelFields.def"
};

constexpr FieldSpec kRefs[] = {
#define RAPID_FIELD(member, path, type, deflt, bound, doc) fieldRow<type>(path, deflt, FieldBound::bound, doc, {}, false),
#define RAPID_OPTIONAL_FIELD(member, path, type, doc) fieldRow<type>(path, "", FieldBound::Any, doc, {}, true),
#include "rapid/Spec/ExperimentFields.def"
};

constexpr FieldSpec kTraining[] = {
#define RAPID_FIELD(member, path, type, deflt, bound, doc)                                                        \
  fieldRow<type>(path, deflt, FieldBound::bound, doc, "training", false),
#include "rapid/Spec/TrainingFields.def"
};

constexpr FieldSpec kInference[] = {
#define RAPID_FIELD(member, path, type, deflt, bound, doc)                                                        \
  fieldRow<type>(path, deflt, FieldBound::bound, doc, "inference", false),
#include "rapid/Spec/InferenceFields.def"
};

constexpr FieldSpec kServing[] = {
#define RAPID_FIELD(member, path, type, deflt, bound, doc)                                                        \
  fieldRow<type>(path, deflt, FieldBound::bound, doc, "serving", false),
#include "rapid/Spec/ServingFields.def"
};

constexpr FieldSpec kReplay[] = {
#define RAPID_FIELD(member, path, type, deflt, bound, doc)                                                        \
  fieldRow<type>(path, deflt, FieldBound::bound, doc, "replay", false),
#include "rapid/Spec/ReplayFields.def"
};

constexpr FieldSpec kParallel[] = {
#define RAPID_FIELD(member, path, type, deflt, bound, doc) fieldRow<type>(path, deflt, FieldBound::bound, doc, {}, false),
#include "rapid/Spec/ParallelFields.def"
};

constexpr FieldSpec kDim[] = {
#define RAPID_FIELD(member, path, type, deflt, bound, doc) fieldRow<type>(path, deflt, FieldBound::bound, doc, {}, false),
#include "rapid/Spec/DimFields.def"
};

constexpr FieldSpec kLinkFault[] = {
#define RAPID_LINK_FAULT_FIELD(member, path, type, deflt, bound, doc)                                             \
  fieldRow<type>(path, deflt, FieldBound::bound, doc, {}, false),
#include "rapid/Spec/FaultFields.def"
};

constexpr FieldSpec kRandomFault[] = {
#define RAPID_RANDOM_FAULT_FIELD(member, path, type, deflt, bound, doc)                                           \
  fieldRow<type>(path, deflt, FieldBound::bound, doc, {}, false),
#include "rapid/Spec/FaultFields.def"
};

/// An experiment holds its references and its four sections in one table.
template <size_t... N> constexpr auto concat(const FieldSpec (&...parts)[N]) {
  std::array<FieldSpec, (N + ...)> out{};
  size_t at = 0;
  ((std::copy(parts, parts + N, out.begin() + at), at += N), ...);
  return out;
}
constexpr auto kExperiment = concat(kRefs, kTraining, kInference, kServing, kReplay, kParallel);

template <size_t N> constexpr size_t size(const FieldSpec (&)[N]) { return N; }
std::span<const FieldSpec> slice(size_t from, size_t count) { return std::span(kExperiment).subspan(from, count); }

constexpr std::array<KindSchema, 8> kKinds{{
    {"gpu", "GPU", kGpu},
    {"stack", "software stack", kStack},
    {"model", "model", kModel},
    {"topology", "topology", {}},
    {"faults", "fault set", {}},
    {"experiment", "experiment", kExperiment},
    {"sweep", "sweep", {}},
    {"search", "layout search", {}},
}};

constexpr KindSchema kDimSchema{"dim", "dimension", kDim};
constexpr KindSchema kLinkFaultSchema{"link fault", "link fault", kLinkFault};
constexpr KindSchema kRandomFaultSchema{"random", "random fault", kRandomFault};

} // namespace

std::span<const FieldSpec> SpecFields<GpuSpec>::rows() { return kGpu; }
std::span<const FieldSpec> SpecFields<StackSpec>::rows() { return kStack; }
std::span<const FieldSpec> SpecFields<ModelSpec>::rows() { return kModel; }
std::span<const FieldSpec> SpecFields<ExperimentRefs>::rows() { return slice(0, size(kRefs)); }
std::span<const FieldSpec> SpecFields<TrainingSpec>::rows() { return slice(size(kRefs), size(kTraining)); }
std::span<const FieldSpec> SpecFields<InferenceSpec>::rows() {
  return slice(size(kRefs) + size(kTraining), size(kInference));
}
std::span<const FieldSpec> SpecFields<ServingSpec>::rows() {
  return slice(size(kRefs) + size(kTraining) + size(kInference), size(kServing));
}
std::span<const FieldSpec> SpecFields<ReplaySpec>::rows() {
  return slice(size(kRefs) + size(kTraining) + size(kInference) + size(kServing), size(kReplay));
}
std::span<const FieldSpec> SpecFields<ParallelSpec>::rows() {
  return slice(size(kRefs) + size(kTraining) + size(kInference) + size(kServing) + size(kReplay), size(kParallel));
}
std::span<const FieldSpec> SpecFields<DimensionSpec>::rows() { return kDim; }
std::span<const FieldSpec> SpecFields<LinkFaultSpec>::rows() { return kLinkFault; }
std::span<const FieldSpec> SpecFields<RandomFaultSpec>::rows() { return kRandomFault; }

bool FieldSpec::isChoice(std::string_view name) const {
  return std::find(choices.begin(), choices.end(), name) != choices.end();
}

const FieldSpec *KindSchema::find(std::string_view path) const {
  for (const FieldSpec &f : fields)
    if (f.path == path)
      return &f;
  return nullptr;
}

std::vector<const FieldSpec *> KindSchema::bySuffix(std::string_view name) const {
  std::vector<const FieldSpec *> out;
  for (const FieldSpec &f : fields) {
    std::string_view p = f.path;
    if (p == name || (p.size() > name.size() && p.ends_with(name) && p[p.size() - name.size() - 1] == '.'))
      out.push_back(&f);
  }
  return out;
}

bool KindSchema::hasSection(std::string_view prefix) const {
  for (const FieldSpec &f : fields)
    if (f.path.size() > prefix.size() && f.path.starts_with(prefix) && f.path[prefix.size()] == '.')
      return true;
  return false;
}

const KindSchema *schemaFor(std::string_view kind) {
  for (const KindSchema &k : kKinds)
    if (k.kind == kind)
      return &k;
  return nullptr;
}

const KindSchema &dimSchema() { return kDimSchema; }
const KindSchema &linkFaultSchema() { return kLinkFaultSchema; }
const KindSchema &randomFaultSchema() { return kRandomFaultSchema; }
std::string_view declKindList() { return "gpu, stack, model, topology, faults, experiment, sweep, search"; }

std::string_view nameOf(Distribution::Kind k) {
  switch (k) {
  case Distribution::Kind::Constant: return "constant";
  case Distribution::Kind::Normal: return "normal";
  case Distribution::Kind::Uniform: return "uniform";
  }
  return "constant";
}

std::string_view nameOf(Workload w) {
  switch (w) {
  case Workload::Training: return "training";
  case Workload::Inference: return "inference";
  case Workload::Serving: return "serving";
  case Workload::Replay: return "replay";
  case Workload::None: break;
  }
  return "";
}

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

} // namespace rapid
