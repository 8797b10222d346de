//===- Schema.h - Fields each declaration kind accepts ---------*- C++ -*-===//
//
// The grammar lets any declaration hold any field; this table decides which
// fields exist, what type and unit each takes, its default (as .rapid source,
// evaluated in the declaration's own scope, so defaults can follow other
// fields: `kv_heads = heads`), and its bounds. docs/language.md lists them.
//===----------------------------------------------------------------------===//
#pragma once

#include "rapid/Support/Units.h"

#include <span>
#include <string_view>
#include <vector>

namespace rapid {

enum class FieldType {
  Quantity, ///< a number with the dimension `dim`
  Integer,  ///< a whole plain number
  Bool,     ///< on/off, true/false
  Choice,   ///< one of `choices` ("a|b|c")
  Ref,      ///< a declaration of kind `choices`
  Distribution, ///< normal(m, sd), uniform(lo, hi), constant(v)
  Name,     ///< a name checked elsewhere (a dimension of the network)
};

enum class Bound { Any, Positive, NonNegative, Fraction, AtLeastOne };

struct FieldSpec {
  std::string_view path;
  FieldType type;
  Dim dim;                 ///< for Quantity
  std::string_view deflt;  ///< default expression; "" means required
  std::string_view choices;
  Bound bound;
  std::string_view doc;
  /// Only present when this top-level section is written (training/inference).
  std::string_view group = {};
  bool optional = false;   ///< may stay unset (no default, not required)
};

/// One declaration kind (`gpu`, `model`, ...) or a nested entity (`dim`).
struct KindSchema {
  std::string_view kind;
  std::string_view noun; ///< for messages: "GPU", "model"
  std::span<const FieldSpec> fields;

  const FieldSpec *find(std::string_view path) const;
  /// Paths whose last components equal `name` ("tp" -> "parallel.tp").
  std::vector<const FieldSpec *> bySuffix(std::string_view name) const;
  bool hasSection(std::string_view prefix) const;
};

const KindSchema *schemaFor(std::string_view kind);
const KindSchema &dimSchema();
const KindSchema &linkFaultSchema();
const KindSchema &randomFaultSchema();
/// "gpu, model, topology, faults, experiment, sweep"
std::string_view declKindList();
/// Network building blocks usable in `dim x : Kind(...)`.
std::span<const std::string_view> topologyKinds();

} // namespace rapid
