//===- Schema.h - The field tables as Sema and printers see them -*- C++ -*-===//
//
// The rows of every *.def table, per declaration kind, and `visitFields`,
// which walks a typed spec member by member beside its row: Sema fills the
// structs through it and the printers print them through it, so neither
// spells a field.
//===----------------------------------------------------------------------===//
#pragma once

#include "rapid/Spec/Specs.h"

#include <functional>
#include <tuple>

namespace rapid {

const KindSchema *schemaFor(std::string_view kind);
const KindSchema &dimSchema();
const KindSchema &linkFaultSchema();
const KindSchema &randomFaultSchema();
/// "gpu, stack, model, topology, faults, experiment, sweep"
std::string_view declKindList();

/// The rows of one typed struct, in member order.
template <class S> struct SpecFields;

template <> struct SpecFields<GpuSpec> {
  static std::span<const FieldSpec> rows();
  static constexpr auto members = std::tuple{
#define RAPID_FIELD(member, path, type, deflt, bound, doc) &GpuSpec::member,
#include "rapid/Spec/GpuFields.def"
  };
};
template <> struct SpecFields<StackSpec> {
  static std::span<const FieldSpec> rows();
  static constexpr auto members = std::tuple{
#define RAPID_FIELD(member, path, type, deflt, bound, doc) &StackSpec::member,
#include "rapid/Spec/StackFields.def"
  };
};
template <> struct SpecFields<ModelSpec> {
  static std::span<const FieldSpec> rows();
  static constexpr auto members = std::tuple{
#define RAPID_FIELD(member, path, type, deflt, bound, doc) &ModelSpec::member,
#include "rapid/Spec/ModelFields.def"
  };
};
template <> struct SpecFields<ExperimentRefs> {
  static std::span<const FieldSpec> rows();
  static constexpr auto members = std::tuple{
#define RAPID_FIELD(member, path, type, deflt, bound, doc) &ExperimentRefs::member,
#include "rapid/Spec/ExperimentFields.def"
  };
};
template <> struct SpecFields<TrainingSpec> {
  static std::span<const FieldSpec> rows();
  static constexpr auto members = std::tuple{
#define RAPID_FIELD(member, path, type, deflt, bound, doc) &TrainingSpec::member,
#include "rapid/Spec/TrainingFields.def"
  };
};
template <> struct SpecFields<InferenceSpec> {
  static std::span<const FieldSpec> rows();
  static constexpr auto members = std::tuple{
#define RAPID_FIELD(member, path, type, deflt, bound, doc) &InferenceSpec::member,
#include "rapid/Spec/InferenceFields.def"
  };
};
template <> struct SpecFields<ServingSpec> {
  static std::span<const FieldSpec> rows();
  static constexpr auto members = std::tuple{
#define RAPID_FIELD(member, path, type, deflt, bound, doc) &ServingSpec::member,
#include "rapid/Spec/ServingFields.def"
  };
};
template <> struct SpecFields<ReplaySpec> {
  static std::span<const FieldSpec> rows();
  static constexpr auto members = std::tuple{
#define RAPID_FIELD(member, path, type, deflt, bound, doc) &ReplaySpec::member,
#include "rapid/Spec/ReplayFields.def"
  };
};
template <> struct SpecFields<ParallelSpec> {
  static std::span<const FieldSpec> rows();
  static constexpr auto members = std::tuple{
#define RAPID_FIELD(member, path, type, deflt, bound, doc) &ParallelSpec::member,
#include "rapid/Spec/ParallelFields.def"
  };
};
template <> struct SpecFields<DimensionSpec> {
  static std::span<const FieldSpec> rows();
  static constexpr auto members = std::tuple{
#define RAPID_FIELD(member, path, type, deflt, bound, doc) &DimensionSpec::member,
#include "rapid/Spec/DimFields.def"
  };
};
template <> struct SpecFields<LinkFaultSpec> {
  static std::span<const FieldSpec> rows();
  static constexpr auto members = std::tuple{
#define RAPID_LINK_FAULT_FIELD(member, path, type, deflt, bound, doc) &LinkFaultSpec::member,
#include "rapid/Spec/FaultFields.def"
  };
};
template <> struct SpecFields<RandomFaultSpec> {
  static std::span<const FieldSpec> rows();
  static constexpr auto members = std::tuple{
#define RAPID_RANDOM_FAULT_FIELD(member, path, type, deflt, bound, doc) &RandomFaultSpec::member,
#include "rapid/Spec/FaultFields.def"
  };
};

/// Calls `v(row, member)` for every field of `s` in table order; `s` may be
/// const. `member` has the field's own C++ type.
template <class S, class V> void visitFields(S &s, V &&v) {
  using Fields = SpecFields<std::remove_const_t<S>>;
  std::span<const FieldSpec> rows = Fields::rows();
  size_t i = 0;
  std::apply([&](auto... member) { (v(rows[i++], s.*member), ...); }, Fields::members);
}

} // namespace rapid
