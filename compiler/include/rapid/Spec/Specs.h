//===- Specs.h - Typed, resolved declarations ------------------*- C++ -*-===//
//
// What Sema hands every later stage: one struct per declaration kind and
// section, with units in the member types. The members come from the field
// tables (*.def in this folder), so adding a field is one row there; nothing
// after Sema reads a field by its name.
//===----------------------------------------------------------------------===//
#pragma once

#include "rapid/Network/TopologyKinds.h"
#include "rapid/Spec/Field.h"

#include <optional>
#include <string>
#include <vector>

namespace rapid {

struct GpuSpec {
  std::string name;
#define RAPID_FIELD(member, path, type, deflt, bound, doc) type member{};
#include "rapid/Spec/GpuFields.def"

  /// Dense peak for math in `t` (tensor cores for all but FP32).
  FlopsPerSecond peak(DType t) const;
  friend bool operator==(const GpuSpec &, const GpuSpec &) = default;
};

struct StackSpec {
  std::string name; ///< "" for the defaults of an experiment that names none
#define RAPID_FIELD(member, path, type, deflt, bound, doc) type member{};
#include "rapid/Spec/StackFields.def"
  friend bool operator==(const StackSpec &, const StackSpec &) = default;
};

struct ModelSpec {
  std::string name;
#define RAPID_FIELD(member, path, type, deflt, bound, doc) type member{};
#include "rapid/Spec/ModelFields.def"

  bool gated() const { return activation == Activation::SwiGlu; } ///< three MLP matrices
  bool rotary() const { return position == Position::Rotary; }
  bool learnedPositions() const { return position == Position::Learned; }
  bool alibi() const { return position == Position::Alibi; }
};

struct TrainingSpec {
#define RAPID_FIELD(member, path, type, deflt, bound, doc) type member{};
#include "rapid/Spec/TrainingFields.def"
};

struct InferenceSpec {
#define RAPID_FIELD(member, path, type, deflt, bound, doc) type member{};
#include "rapid/Spec/InferenceFields.def"
};

struct ServingSpec {
#define RAPID_FIELD(member, path, type, deflt, bound, doc) type member{};
#include "rapid/Spec/ServingFields.def"
};

struct ReplaySpec {
#define RAPID_FIELD(member, path, type, deflt, bound, doc) type member{};
#include "rapid/Spec/ReplayFields.def"
};

struct ParallelSpec {
#define RAPID_FIELD(member, path, type, deflt, bound, doc) type member{};
#include "rapid/Spec/ParallelFields.def"
};

/// The declarations an experiment refers to, by name.
struct ExperimentRefs {
#define RAPID_FIELD(member, path, type, deflt, bound, doc) type member{};
#include "rapid/Spec/ExperimentFields.def"
};

/// One `dim name : Kind(extents) { ... }` of a topology.
struct DimensionSpec {
  std::string name;
  net::DimKind kind = net::DimKind::Ring; ///< a building block of the runtime's registry
  std::vector<int64_t> extents; ///< as written: Torus2D(4 x 4) has {4, 4}
  int64_t size = 1;             ///< ranks along the dimension: the extents' product
#define RAPID_FIELD(member, path, type, deflt, bound, doc) type member{};
#include "rapid/Spec/DimFields.def"
};

struct TopologySpec {
  std::string name;
  std::vector<DimensionSpec> dims; ///< dimension 0 varies fastest over ranks
  int64_t gpus = 1;
};

/// `soft dim(a, b) { ... }` or `hard dim(a, b);`
struct LinkFaultSpec {
  bool hard = false;
  std::string dim;
  int64_t a = 0, b = 0; ///< endpoints, as indices within the dimension
#define RAPID_LINK_FAULT_FIELD(member, path, type, deflt, bound, doc) type member{};
#include "rapid/Spec/FaultFields.def"
};

/// `random NAME { ... }`: a Monte Carlo fault distribution.
struct RandomFaultSpec {
  std::string name;
#define RAPID_RANDOM_FAULT_FIELD(member, path, type, deflt, bound, doc) type member{};
#include "rapid/Spec/FaultFields.def"
};

struct FaultsSpec {
  std::string name;
  std::vector<LinkFaultSpec> links;
  std::vector<RandomFaultSpec> random;
};

enum class Workload : uint8_t { None, Training, Inference, Serving, Replay };
std::string_view nameOf(Workload w); ///< "", "training", "inference", "serving", "replay"

} // namespace rapid
